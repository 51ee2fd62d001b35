//! Property tests of the market-safety invariants over wide ranges of b, q and amounts.
use lmsr::*;
use proptest::prelude::*;

const E36: u128 = PRICE_SCALE;

/// Log-uniform value in [1, 10^max_exp].
fn magnitude(max_exp: u32) -> impl Strategy<Value = u128> {
    (0u32..=max_exp, 1u128..=1000).prop_map(|(e, m)| (10u128.pow(e) / 1000).max(1) * m)
}

/// (b, q, outcome): b in [10^3, 10^36], q_j spread up to ~80 b apart (prices down to e^-80).
fn market() -> impl Strategy<Value = (u128, Vec<u128>, usize)> {
    (3u32..=36, 1u128..=1000, 2usize..=64).prop_flat_map(|(e, m, n)| {
        let b = 10u128.pow(e) / 1000 * m + 1;
        let q = prop::collection::vec(prop_oneof![Just(0u128), 0u128..=80 * b, 0u128..=3 * b], n);
        (Just(b), q, 0..n)
    })
}

fn cfg(cases: u32) -> ProptestConfig {
    ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() }
}

fn shares_or_zero(r: Result<Buy, LmsrError>) -> u128 {
    match r {
        Ok(b) => b.shares,
        Err(LmsrError::TradeTooSmall) => 0,
        Err(e) => panic!("{e:?}"),
    }
}

proptest! {
    #![proptest_config(cfg(2000))]

    #[test]
    fn prices_in_unit_interval_and_sum_to_one((b, q, _) in market()) {
        let p = prices(b, &q).unwrap();
        let sum: u128 = p.iter().map(|x| x.raw()).sum();
        prop_assert!(sum.abs_diff(E36) <= q.len() as u128); // within 6.4e-35 << 1e-30
        let m = *q.iter().max().unwrap();
        for (x, &qj) in p.iter().zip(&q) {
            prop_assert!(x.raw() <= E36);
            // price >= e^-80 / 64 >> 1e-36: must be strictly inside (0, 1)
            prop_assert!(x.raw() > 0 && x.raw() < E36, "{} {}", m - qj, b);
            let shown = x.to_string();
            prop_assert!(shown.starts_with("0.") && shown.len() == 20 && shown != "0.000000000000000000");
        }
    }

    #[test]
    fn cost_strictly_increasing((b, q, i) in market(), s1 in magnitude(36), extra in magnitude(36)) {
        let s2 = s1 + extra;
        let c1 = cost_interval(b, &q, i, s1).unwrap();
        let c2 = cost_interval(b, &q, i, s2).unwrap();
        let p = prices(b, &q).unwrap()[i].raw();
        // the true gap is >= extra * p_i; when that clearly exceeds the ~2^-100 wei error, the
        // intervals must be disjoint and ordered
        if p >= 1_000_000_000_000_000_000 {
            prop_assert!(c1.proven_lt(&c2));
        } else {
            prop_assert!(c1.floor_lo() <= c2.ceil_hi());
        }
        prop_assert!(buy_cost(b, &q, i, s1).unwrap() <= buy_cost(b, &q, i, s2).unwrap());
    }

    #[test]
    fn buy_exact_edges_and_monotone((b, q, i) in market(), a1 in magnitude(36), a2 in magnitude(36)) {
        let (lo, hi) = (a1.min(a2), a1.max(a2));
        let s_lo = shares_or_zero(buy(b, &q, i, lo));
        let s_hi = shares_or_zero(buy(b, &q, i, hi));
        prop_assert!(s_lo <= s_hi);
        for (a, s) in [(lo, s_lo), (hi, s_hi)] {
            prop_assert!(buy_cost(b, &q, i, s).unwrap() <= a);
            prop_assert!(buy_cost(b, &q, i, s + 1).unwrap() > a);
        }
    }

    #[test]
    fn split_buy_never_beats_single_buy((b, q, i) in market(), a1 in magnitude(34), a2 in magnitude(34)) {
        let whole = shares_or_zero(buy(b, &q, i, a1 + a2));
        let first = shares_or_zero(buy(b, &q, i, a1));
        let mut q2 = q.clone();
        q2[i] += first;
        let second = shares_or_zero(buy(b, &q2, i, a2));
        prop_assert!(first + second <= whole, "{first} + {second} > {whole}");
    }

    #[test]
    fn round_trips_never_profit((b, q, i) in market(), a in magnitude(36), frac in 1u128..=1000) {
        if let Ok(r) = buy(b, &q, i, a) {
            let mut q2 = q.clone();
            q2[i] += r.shares;
            let back = sell(b, &q2, i, r.shares).map_or(0, |s| s.proceeds);
            prop_assert!(back <= r.cost);
        }
        if q[i] > 0 {
            let s = (q[i] / 1000 * frac).clamp(1, q[i]);
            if let Ok(sold) = sell(b, &q, i, s) {
                let mut q2 = q.clone();
                q2[i] -= s;
                prop_assert!(buy_cost(b, &q2, i, s).unwrap() >= sold.proceeds);
            }
        }
    }

    #[test]
    fn sell_for_proceeds_exact_edges((b, q, i) in market(), target in magnitude(36), cap in magnitude(38)) {
        match sell_for_proceeds(b, &q, i, target, cap) {
            Ok(s) => {
                prop_assert!(s.proceeds >= target && s.shares <= cap.min(q[i]));
                prop_assert_eq!(sell(b, &q, i, s.shares).unwrap(), s);
                if s.shares > 1 {
                    prop_assert!(sell(b, &q, i, s.shares - 1).map_or(0, |x| x.proceeds) < target);
                }
            }
            Err(LmsrError::Unreachable) => {
                let most = cap.min(q[i]);
                prop_assert!(most == 0 || sell(b, &q, i, most).map_or(0, |x| x.proceeds) < target);
            }
            Err(e) => prop_assert!(false, "{e:?}"),
        }
    }

    #[test]
    fn liquidity_parameter_is_tight(liq in magnitude(37), n in 2usize..=64) {
        match liquidity_parameter(liq, n) {
            Ok(b) => {
                prop_assert!(cost_function(b, &vec![0; n]).unwrap().proven_le(liq));
                prop_assert!(cost_function(b + 1, &vec![0; n]).unwrap().proven_gt(liq));
            }
            Err(LmsrError::ZeroLiquidity) => {
                prop_assert!(cost_function(1, &vec![0; n]).unwrap().proven_gt(liq));
            }
            Err(e) => prop_assert!(false, "{e:?}"),
        }
    }
}

#[derive(Debug, Clone)]
enum Op {
    Buy(usize, u128),
    Sell(usize, u128),
    SellFor(usize, u128),
    AddOutcome,
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(
        prop_oneof![
            4 => (0usize..64, magnitude(24)).prop_map(|(i, a)| Op::Buy(i, a)),
            3 => (0usize..64, 1u128..=1000).prop_map(|(i, f)| Op::Sell(i, f)),
            2 => (0usize..64, magnitude(22)).prop_map(|(i, a)| Op::SellFor(i, a)),
            1 => Just(Op::AddOutcome),
        ],
        1..25,
    )
}

proptest! {
    #![proptest_config(cfg(1000))]

    /// pool = liquidity + charged - paid stays >= C(q) >= max_i q_i after any sequence.
    #[test]
    fn solvency_after_random_trades(liq in magnitude(24), n in 2usize..=8, seq in ops()) {
        let Ok(b) = liquidity_parameter(liq, n) else { return Ok(()) };
        let mut q = vec![0u128; n];
        let mut pool = liq as i128;
        for op in seq {
            match op {
                Op::Buy(i, a) => {
                    let i = i % q.len();
                    if let Ok(r) = buy(b, &q, i, a) {
                        q[i] += r.shares;
                        pool += r.cost as i128;
                    }
                }
                Op::Sell(i, f) => {
                    let i = i % q.len();
                    let s = (q[i] / 1000 * f).min(q[i]);
                    if let Ok(r) = sell(b, &q, i, s) {
                        q[i] -= s;
                        pool -= r.proceeds as i128;
                    }
                }
                Op::SellFor(i, t) => {
                    let i = i % q.len();
                    if let Ok(r) = sell_for_proceeds(b, &q, i, t, u128::MAX) {
                        q[i] -= r.shares;
                        pool -= r.proceeds as i128;
                    }
                }
                Op::AddOutcome => if let Ok(c) = add_outcome_cost(b, &q) {
                    q.push(0);
                    pool += c as i128;
                },
            }
            let c = cost_function(b, &q).unwrap();
            prop_assert!(pool >= 0 && c.proven_le(pool as u128), "pool {pool} below C(q)");
            prop_assert!(pool as u128 >= *q.iter().max().unwrap());
        }
    }
}
