//! Candles against a brute-force fold of a scripted series: trades on both outcomes, a sale,
//! an outcome added after trades, with hours between the steps. Time passes by moving the
//! market's rows back by whole hours (candles included, whose buckets stay aligned), so the
//! live candles the trades upserted are the ones read; then the same answers must come from
//! candles rebuilt from the raw points.

use reqwest::StatusCode;
use serde_json::{json, Value};

use super::super::support::library::{format_micros, now_micros, Arg, Db, Micros};
use super::super::support::{assert_field_error, assert_problem, trades_in_order, wei, Arena};

const MINUTE: Micros = 60_000_000;
const HOUR: Micros = 60 * MINUTE;
const ONE: u128 = 1_000_000_000_000_000_000;

fn micros(text: &str) -> Micros {
    let t = time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).unwrap();
    (t.unix_timestamp_nanos() / 1_000) as Micros
}

fn iso(at: Micros) -> String {
    format_micros(at)
}

/// Moves every row of the market that candles read `hours` back in time.
async fn age(db: &Db, market_id: &str, hours: i64) {
    let d = hours * HOUR;
    let m = || Arg::from(market_id);
    let statements = vec![
        ("UPDATE markets SET created_at = created_at - $1 WHERE id = $2".to_string(), vec![Arg::Int(d), m()]),
        ("UPDATE price_marks SET at = at - $1 WHERE market_id = $2".to_string(), vec![Arg::Int(d), m()]),
        ("UPDATE price_points SET at = at - $1 WHERE market_id = $2".to_string(), vec![Arg::Int(d), m()]),
        ("UPDATE trades SET created_at = created_at - $1 WHERE market_id = $2".to_string(), vec![Arg::Int(d), m()]),
        // Through negative starts: a row moved onto a key not yet moved would clash.
        ("UPDATE price_candles SET start = -(start - $1) WHERE market_id = $2".to_string(), vec![Arg::Int(d), m()]),
        ("UPDATE price_candles SET start = -start WHERE market_id = $1".to_string(), vec![m()]),
    ];
    db.exec_all(statements).await.unwrap();
}

/// One change of the market's prices: when, every outcome's price after it (outcome id,
/// price string) and the traded outcome with the trade's amount.
struct Change {
    at: Micros,
    prices: Vec<(String, String)>,
    traded: Option<(String, u128)>,
}

fn prices_of(detail: &Value) -> Vec<(String, String)> {
    detail["outcomes"].as_array().unwrap().iter().map(|o| (o["id"].as_str().unwrap().to_string(), o["current_price"].as_str().unwrap().to_string())).collect()
}

/// Prices as exact integers for comparison: decimal strings of at most 18 digits.
fn scaled(price: &str) -> u128 {
    let (int, frac) = price.split_once('.').unwrap_or((price, ""));
    format!("{int}{frac:0<18}").parse().unwrap()
}

/// The candles of `outcome` the contract defines, from `changes` (apply order).
fn expected(changes: &[Change], outcome: &str, interval: Micros, start: Micros, end: Micros, created_at: Micros) -> Vec<Value> {
    let (lo, hi) = (start.max(created_at), end);
    let (first, last) = (lo.div_euclid(interval) * interval, hi.div_euclid(interval) * interval);
    let series: Vec<(Micros, String, u128, bool)> = changes
        .iter()
        .filter_map(|c| {
            let price = c.prices.iter().find(|(o, _)| o == outcome)?.1.clone();
            let own = c.traded.as_ref().filter(|(o, _)| o == outcome).map(|(_, a)| *a);
            Some((c.at, price, own.unwrap_or(0), own.is_some()))
        })
        .collect();
    let mut out = Vec::new();
    let mut bucket = first;
    while bucket <= last {
        let end = bucket + interval;
        let before = series.iter().rev().find(|s| s.0 < bucket).map(|s| s.1.clone());
        let inside: Vec<_> = series.iter().filter(|s| s.0 >= bucket && s.0 < end).collect();
        let Some(open) = before.or_else(|| inside.first().map(|s| s.1.clone())) else {
            bucket = end;
            continue;
        };
        let mut all = vec![open.clone()];
        all.extend(inside.iter().map(|s| s.1.clone()));
        let high = all.iter().max_by_key(|p| scaled(p)).unwrap().clone();
        let low = all.iter().min_by_key(|p| scaled(p)).unwrap().clone();
        let close = all.last().unwrap().clone();
        let volume: u128 = inside.iter().map(|s| s.2).sum();
        let trades = inside.iter().filter(|s| s.3).count();
        out.push(json!({ "start": iso(bucket), "open": open, "high": high, "low": low, "close": close, "volume": volume.to_string(), "trades": trades }));
        bucket = end;
    }
    out
}

#[tokio::test]
async fn candles_fold_every_change_of_the_series_into_contiguous_aligned_buckets() {
    let a = Arena::new(2, 10_000 * ONE).await;
    let db = Db::open(&a.f.app.database_url);
    let market_id = a.market_id().to_string();
    let detail = a.detail().await;
    let mut changes = vec![Change { at: micros(detail["created_at"].as_str().unwrap()), prices: prices_of(&detail), traded: None }];
    let mut trade_count = 0;
    let trade = |changes: &mut Vec<Change>, detail: Value, outcome: String| {
        changes.push(Change { at: 0, prices: prices_of(&detail), traded: Some((outcome, 0)) });
    };

    // Three hours ago: created. Two hours ago: a bet on each outcome, then a sale in the same minute.
    age(&db, &market_id, 3).await;
    for (t, outcome, amount) in [(0usize, 0usize, 40 * ONE), (1, 1, 25 * ONE)] {
        assert_eq!(a.bet(&a.traders[t], outcome, amount).await.status, StatusCode::OK);
        trade(&mut changes, a.detail().await, a.outcome(outcome).to_string());
        trade_count += 1;
    }
    let r = a.sell_shares(&a.traders[0], 0, 10 * ONE).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    trade(&mut changes, a.detail().await, a.outcome(0).to_string());
    trade_count += 1;
    age(&db, &market_id, 2).await;

    // An outcome added after trades moves every price.
    let r = a.f.app.post(&format!("/v1/providers/markets/{market_id}/outcomes"), Some(&a.f.provider.key), json!({ "title": "Draw", "outcome_index": 2 })).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let detail = a.detail().await;
    changes.push(Change { at: 0, prices: prices_of(&detail), traded: None });
    let added = changes.len() - 1;
    let draw = detail["outcomes"][2]["id"].as_str().unwrap().to_string();
    // A trade in the same bucket as the mark: that bucket is folded from its raw points.
    assert_eq!(a.bet(&a.traders[1], 1, 7 * ONE).await.status, StatusCode::OK);
    trade(&mut changes, a.detail().await, a.outcome(1).to_string());
    trade_count += 1;
    age(&db, &market_id, 1).await;

    // Now: a bet on the new outcome, one on the first.
    let bet = |outcome: &str, t: usize, amount: u128| {
        let (app, market_id, outcome, trader) = (&a.f.app, market_id.clone(), outcome.to_string(), &a.traders[t]);
        async move { super::super::support::bet_on(app, &market_id, &outcome, trader, amount).await }
    };
    assert_eq!(bet(&draw, 1, 30 * ONE).await.status, StatusCode::OK);
    trade(&mut changes, a.detail().await, draw.clone());
    assert_eq!(bet(a.outcome(0), 0, 5 * ONE).await.status, StatusCode::OK);
    trade(&mut changes, a.detail().await, a.outcome(0).to_string());
    trade_count += 2;

    // The trades' times and amounts from their records, in apply order.
    let records = trades_in_order(&a.f.app, &market_id).await;
    assert_eq!(records.len(), trade_count);
    for (change, record) in changes.iter_mut().filter(|c| c.traded.is_some()).zip(&records) {
        change.at = micros(record["created_at"].as_str().unwrap());
        change.traded = Some((record["outcome_id"].as_str().unwrap().to_string(), wei(&record["amount"])));
    }
    // The creation's and the addition's times, as aged.
    changes[0].at = micros(a.detail().await["created_at"].as_str().unwrap());
    changes[added].at = db.int("SELECT MAX(at) FROM price_marks WHERE market_id = $1", &[Arg::from(market_id.as_str())]).await;
    changes.sort_by_key(|c| c.at);
    let created_at = changes[0].at;
    let outcomes: Vec<String> = detail["outcomes"].as_array().unwrap().iter().map(|o| o["id"].as_str().unwrap().to_string()).collect();

    let end = now_micros();
    let check = |body: &Value, interval_name: &str, interval: Micros, start: Micros, only: Option<&str>| {
        assert_eq!(body["market_id"], market_id.as_str());
        assert_eq!(body["interval"], interval_name);
        let listed: Vec<&str> = body["outcomes"].as_array().unwrap().iter().map(|o| o["outcome_id"].as_str().unwrap()).collect();
        let wanted: Vec<&str> = outcomes.iter().map(String::as_str).filter(|o| only.is_none_or(|x| x == *o)).collect();
        assert_eq!(listed, wanted);
        for o in body["outcomes"].as_array().unwrap() {
            let id = o["outcome_id"].as_str().unwrap();
            let want = expected(&changes, id, interval, start, end, created_at);
            assert_eq!(o["candles"].as_array().unwrap(), &want, "{interval_name} candles of {id}");
        }
    };
    for pass in ["live", "rebuilt"] {
        if pass == "rebuilt" {
            db.rebuild_price_candles().await;
        }
        for (name, interval) in [("1m", MINUTE), ("5m", 5 * MINUTE), ("15m", 15 * MINUTE), ("1h", HOUR), ("4h", 4 * HOUR), ("1d", 24 * HOUR)] {
            let start = end - 100 * interval;
            let r = a.f.app.get(&format!("/v1/markets/{market_id}/candles?interval={name}&end={}", iso(end).replace('+', "%2B")), None).await;
            assert_eq!(r.status, StatusCode::OK, "{}", r.body);
            check(&r.body, name, interval, start, None);
            let buckets: Vec<Micros> = r.body["outcomes"][0]["candles"].as_array().unwrap().iter().map(|c| micros(c["start"].as_str().unwrap())).collect();
            assert!(buckets.windows(2).all(|w| w[1] - w[0] == interval) && buckets.iter().all(|b| b % interval == 0), "{name}: {buckets:?}");
        }
        // A window inside the series, one outcome: it opens at the price before the window.
        let start = created_at + 4 * HOUR;
        let path = format!("/v1/markets/{market_id}/candles?interval=5m&start={}&end={}&outcome_id={}", iso(start), iso(end), outcomes[1]);
        let r = a.f.app.get(&path, None).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        check(&r.body, "5m", 5 * MINUTE, start, Some(&outcomes[1]));
    }
    // The series really moved: the added outcome changed the first one's close.
    let closes: Vec<u128> = changes.iter().map(|c| scaled(&c.prices[0].1)).collect();
    assert!(closes.windows(2).all(|w| w[0] != w[1]), "{closes:?}");
}

#[tokio::test]
async fn candles_refuse_bad_windows_and_unknown_markets() {
    let a = Arena::new(0, 0).await;
    let path = |q: &str| format!("/v1/markets/{}/candles?{q}", a.market_id());
    assert_field_error(&a.f.app.get(&path(""), None).await, "interval");
    assert_field_error(&a.f.app.get(&path("interval=2m"), None).await, "interval");
    assert_field_error(&a.f.app.get(&path("interval=1m&start=yesterday"), None).await, "start");
    assert_field_error(&a.f.app.get(&path("interval=1m&start=2026-01-01T00:00:00Z&end=2025-01-01T00:00:00Z"), None).await, "start");
    // 1,001 one-minute buckets; 1,000 are fine.
    assert_field_error(&a.f.app.get(&path("interval=1m&start=2026-01-01T00:00:00Z&end=2026-01-01T16:40:00Z"), None).await, "start");
    assert_eq!(a.f.app.get(&path("interval=1m&start=2026-01-01T00:00:00Z&end=2026-01-01T16:39:59Z"), None).await.status, StatusCode::OK);
    assert_problem(&a.f.app.get(&path("interval=1m&outcome_id=nope"), None).await, 422, "unknown_outcome");
    assert_problem(&a.f.app.get("/v1/markets/nope/candles?interval=1m", None).await, 404, "not_found");
    // Before any trade: one flat candle at the creation price, in every bucket since creation.
    let r = a.f.app.get(&path("interval=1d"), None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let candles = r.body["outcomes"][1]["candles"].as_array().unwrap();
    assert_eq!(candles.len(), 1);
    let price = a.market["outcomes"][1]["current_price"].as_str().unwrap();
    for field in ["open", "high", "low", "close"] {
        assert_eq!(candles[0][field], price);
    }
    assert_eq!((candles[0]["volume"].as_str(), candles[0]["trades"].as_i64()), (Some("0"), Some(0)));
}
