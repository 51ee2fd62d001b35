//! Differential test against the mpmath (80-digit) reference in tests/reference/cases.json.
//! Every answer must be within one share unit / one wei of the exact one and always on the
//! market's side; the number of exact matches is reported.
use lmsr::*;
use serde_json::Value;

fn u(v: &Value) -> u128 {
    v.as_str().expect("integer string").parse().expect("u128")
}

fn qv(c: &Value) -> Vec<u128> {
    c["q"].as_array().unwrap().iter().map(u).collect()
}

#[test]
fn matches_mpmath_reference() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/reference/cases.json")).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    let cases = doc["cases"].as_array().unwrap();
    assert!(cases.len() >= 500);
    let (mut exact, mut off_by_one) = (0usize, 0usize);
    let mut tally = |is_exact: bool| {
        if is_exact {
            exact += 1
        } else {
            off_by_one += 1;
            if std::env::var("LMSR_SHOW").is_ok() {
                eprintln!("off by one");
            }
        }
    };
    for (k, c) in cases.iter().enumerate() {
        let ctx = format!("case {k}: {c}");
        match c["kind"].as_str().unwrap() {
            "buy" => {
                let (b, q, i, a) = (u(&c["b"]), qv(c), c["outcome"].as_u64().unwrap() as usize, u(&c["amount"]));
                let (want_s, want_c) = (u(&c["shares"]), u(&c["cost"]));
                let got = buy(b, &q, i, a);
                let got_s = match got {
                    Ok(r) => r.shares,
                    Err(LmsrError::TradeTooSmall) => 0,
                    Err(e) => panic!("{e:?} {ctx}"),
                };
                assert!(got_s <= want_s && want_s - got_s <= 1, "shares {got_s} vs {want_s} {ctx}");
                if let (Ok(r), true) = (got, got_s == want_s) {
                    assert!(r.cost >= want_c && r.cost - want_c <= 1, "cost {} vs {want_c} {ctx}", r.cost);
                    tally(r.cost == want_c);
                } else {
                    tally(got_s == want_s);
                }
            }
            "sell" => {
                let (b, q, i, s) = (u(&c["b"]), qv(c), c["outcome"].as_u64().unwrap() as usize, u(&c["shares"]));
                let want = u(&c["proceeds"]);
                let got = match sell(b, &q, i, s) {
                    Ok(r) => r.proceeds,
                    Err(LmsrError::TradeTooSmall) => 0,
                    Err(e) => panic!("{e:?} {ctx}"),
                };
                assert!(got <= want && want - got <= 1, "proceeds {got} vs {want} {ctx}");
                tally(got == want);
            }
            "sell_for" => {
                let (b, q, i, r) = (u(&c["b"]), qv(c), c["outcome"].as_u64().unwrap() as usize, u(&c["target"]));
                let got = sell_for_proceeds(b, &q, i, r, u128::MAX);
                if c.get("unreachable").is_some() {
                    assert_eq!(got, Err(LmsrError::Unreachable), "{ctx}");
                    tally(true);
                } else {
                    let want = u(&c["shares"]);
                    match got {
                        Ok(s) => {
                            assert!(s.shares >= want && s.shares - want <= 1, "shares {} vs {want} {ctx}", s.shares);
                            assert!(s.proceeds >= r);
                            tally(s.shares == want);
                        }
                        // the market may refuse when the exact answer sells everything
                        Err(LmsrError::Unreachable) if want == q[i] => tally(false),
                        Err(e) => panic!("{e:?} {ctx}"),
                    }
                }
            }
            "prices" => {
                let (b, q) = (u(&c["b"]), qv(c));
                let got = prices(b, &q).unwrap();
                for (p, w) in got.iter().zip(c["prices_e36"].as_array().unwrap()) {
                    let w = w.as_str().unwrap();
                    // compare against the decimal expansion: |raw - p * 10^36| <= 1
                    let (int_part, frac) = w.split_once('.').unwrap_or((w, "0"));
                    let int_part: u128 = int_part.parse().unwrap();
                    let frac_val: f64 = format!("0.{frac}").parse().unwrap();
                    let diff = p.raw() as f64 - int_part as f64 - frac_val;
                    assert!(
                        p.raw().abs_diff(int_part) <= 2
                            && (p.raw() as i128 - int_part as i128) as f64 - frac_val <= 1.0
                            && (p.raw() as i128 - int_part as i128) as f64 - frac_val >= -1.0,
                        "price {} vs {w} ({diff}) {ctx}",
                        p.raw()
                    );
                }
                tally(true);
            }
            "liquidity" => {
                let (liq, n) = (u(&c["liquidity"]), c["n"].as_u64().unwrap() as usize);
                let want = u(&c["b"]);
                match liquidity_parameter(liq, n) {
                    Ok(b) => {
                        assert!(b <= want && want - b <= 1, "{b} vs {want} {ctx}");
                        tally(b == want);
                    }
                    Err(LmsrError::ZeroLiquidity) => assert_eq!(want, 0, "{ctx}"),
                    Err(e) => panic!("{e:?} {ctx}"),
                }
            }
            "add" => {
                let (b, q) = (u(&c["b"]), qv(c));
                let want = u(&c["cost"]);
                let got = add_outcome_cost(b, &q).unwrap();
                assert!(got >= want && got - want <= 1, "add {got} vs {want} {ctx}");
                tally(got == want);
            }
            other => panic!("unknown kind {other}"),
        }
        if std::env::var("LMSR_SHOW").is_ok() {
            eprintln!("{}", &ctx[..ctx.len().min(300)]);
        }
    }
    println!("differential: {exact} exact, {off_by_one} off by one (market side), of {} cases", cases.len());
    assert!(exact * 10 >= cases.len() * 9, "too few exact matches: {exact}");
}

/// The price limits against the mpmath reference in tests/reference/limits.json: a buy's most
/// shares within a limit and a sale's, never above the exact answer and at most one below it
/// (where the limit lies within the interval's width of a price), and the largest amount a
/// limited buy may spend.
#[test]
fn limits_match_mpmath_reference() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/reference/limits.json")).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    let cases = doc["cases"].as_array().unwrap();
    assert!(cases.len() >= 200);
    let mut exact = 0usize;
    for (k, c) in cases.iter().enumerate() {
        let ctx = format!("case {k}: {c}");
        let (b, q, i) = (u(&c["b"]), qv(c), c["outcome"].as_u64().unwrap() as usize);
        let limit = Price::from_raw(u(&c["limit_e36"]));
        let want = u(&c["shares"]);
        let got = match c["kind"].as_str().unwrap() {
            "buy_limit" => {
                let fill = buy_limit(b, &q, i, limit).unwrap_or_else(|e| panic!("{e:?} {ctx}"));
                if fill.shares == want {
                    let want_cost = u(&c["max_cost"]);
                    assert!(
                        fill.max_cost >= want_cost && fill.max_cost - want_cost <= 1,
                        "max_cost {} vs {want_cost} {ctx}",
                        fill.max_cost
                    );
                }
                fill.shares
            }
            "sell_limit" => sell_limit(b, &q, i, limit).unwrap_or_else(|e| panic!("{e:?} {ctx}")),
            other => panic!("unknown kind {other}"),
        };
        assert!(got <= want && want - got <= 1, "shares {got} vs {want} {ctx}");
        exact += usize::from(got == want);
    }
    println!("limits: {exact} exact of {} cases", cases.len());
    assert!(exact * 100 >= cases.len() * 99, "too few exact limit answers: {exact}");
}
