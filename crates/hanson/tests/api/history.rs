//! Price history buckets against a brute-force aggregation of the raw points: every interval,
//! date windows that cut buckets, both directions, paged. The points are written at chosen
//! past instants through the same store function trades use, then the candles are rebuilt
//! from the raw points (as after a bulk load) and must answer the same.

use reqwest::StatusCode;
use serde_json::{json, Value};

use super::support::library::{format_micros, now_micros, Db, Micros};
use super::support::Fixture;

const MINUTE: Micros = 60_000_000;
const HOUR: Micros = 60 * MINUTE;
const DAY: Micros = 24 * HOUR;
const INTERVALS: [(&str, Micros); 6] = [("1m", MINUTE), ("5m", 5 * MINUTE), ("15m", 15 * MINUTE), ("1h", HOUR), ("4h", 4 * HOUR), ("1d", DAY)];

#[derive(Clone)]
struct Point {
    outcome: String,
    price: u128,
    volume: u128,
    at: Micros,
}

/// A deterministic scatter of points over three days: bursts within a minute, gaps of hours.
fn synthetic_points(outcomes: &[String], start: Micros) -> Vec<Point> {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move |below: u64| {
        state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) % below
    };
    let mut points = Vec::new();
    let mut at = start;
    for i in 0..240u128 {
        at += match next(4) {
            0 => next(2 * MINUTE as u64) as i64,
            1 => next(3 * HOUR as u64) as i64,
            _ => next(20 * MINUTE as u64) as i64,
        } + 1;
        let traded = next(outcomes.len() as u64) as usize;
        for (k, outcome) in outcomes.iter().enumerate() {
            let volume = if k == traded { 1_000_000_000_000_000_000 + i * 7_919 } else { 0 };
            points.push(Point { outcome: outcome.clone(), price: 10u128.pow(35) + i * 1_000 + k as u128, volume, at });
        }
    }
    points
}

/// Writes `points` after `earlier`, written before, whose volumes start the running totals.
async fn write_points(db: &Db, market_id: &str, earlier: &[Point], points: &[Point]) {
    let mut totals = std::collections::HashMap::<String, u128>::new();
    for p in earlier {
        *totals.entry(p.outcome.clone()).or_default() += p.volume;
    }
    for instant in points.chunks(2) {
        let batch: Vec<(String, u128, u128, u128)> = instant
            .iter()
            .map(|p| {
                let total = totals.entry(p.outcome.clone()).or_default();
                let before = *total;
                *total += p.volume;
                (p.outcome.clone(), p.price, p.volume, before)
            })
            .collect();
        db.record_prices(market_id, instant[0].at, batch).await;
    }
}

/// Last price and summed volume per (bucket, outcome) in [from, to], in the page order.
fn expected_buckets(points: &[Point], width: Micros, from: Option<Micros>, to: Option<Micros>, desc: bool) -> Vec<Value> {
    let mut buckets: Vec<(Micros, String, u128, u128)> = Vec::new();
    for p in points.iter().filter(|p| from.is_none_or(|f| p.at >= f) && to.is_none_or(|t| p.at <= t)) {
        let start = p.at.div_euclid(width) * width;
        match buckets.iter_mut().find(|b| b.0 == start && b.1 == p.outcome) {
            Some(b) => {
                b.2 = p.price;
                b.3 += p.volume;
            }
            None => buckets.push((start, p.outcome.clone(), p.price, p.volume)),
        }
    }
    buckets.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    if desc {
        buckets.reverse();
    }
    buckets
        .into_iter()
        .map(|(start, outcome, price, volume)| {
            json!({ "outcome_id": outcome, "price": lmsr::Price::from_raw(price).to_string(), "volume": volume.to_string(), "timestamp": format_micros(start) })
        })
        .collect()
}

/// Every page of a query, concatenated, checking the envelope on the way.
async fn all_pages(f: &Fixture, mut filters: Value, desc: bool, from: Option<Micros>, to: Option<Micros>) -> (i64, Vec<Value>) {
    if let Some(from) = from {
        filters["from_date"] = json!(format_micros(from));
    }
    if let Some(to) = to {
        filters["to_date"] = json!(format_micros(to));
    }
    let direction = if desc { "desc" } else { "asc" };
    let mut out = Vec::new();
    let mut page = 1;
    loop {
        let body = json!({ "filters": filters, "sort": { "field": "timestamp", "direction": direction }, "pagination": { "page": page, "per_page": 7 } });
        let r = f.app.post("/v1/markets/price-history/search", None, body).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        let data = r.body["data"].as_array().unwrap();
        let total = r.body["pagination"]["total"].as_i64().unwrap();
        for item in data {
            out.push(json!({ "outcome_id": item["outcome_id"], "price": item["price"], "volume": item["volume"], "timestamp": item["timestamp"] }));
        }
        if data.len() < 7 {
            assert_eq!(out.len() as i64, total, "{filters} {direction}: total matches the items");
            return (total, out);
        }
        page += 1;
    }
}

/// Raw points in the page order: written order (time, then the order within an instant),
/// reversed for a descending page.
fn expected_raw(points: &[&Point], desc: bool) -> Vec<Value> {
    let mut out: Vec<Value> = points
        .iter()
        .map(|p| json!({ "outcome_id": p.outcome, "price": lmsr::Price::from_raw(p.price).to_string(), "volume": p.volume.to_string(), "timestamp": format_micros(p.at) }))
        .collect();
    if desc {
        out.reverse();
    }
    out
}

fn windows(points: &[Point]) -> Vec<(Option<Micros>, Option<Micros>)> {
    let (first, last) = (points[0].at, points[points.len() - 1].at);
    let middle = points[points.len() / 2].at;
    let aligned = (middle.div_euclid(HOUR) + 1) * HOUR;
    vec![
        (None, None),
        (Some(middle), None),
        (None, Some(middle)),
        (Some(first + 7 * MINUTE + 13), Some(last - 5 * HOUR - 17)),
        (Some(aligned), Some(aligned + DAY - 1)),
        (Some(aligned - DAY), Some(aligned)),
        (Some(middle), Some(middle + 30_000_000)),
        (Some(middle), Some(middle)),
        (Some(last + 1), None),
        (Some(middle), Some(middle - 1)),
    ]
}

async fn check_history(f: &Fixture, market_id: &str, outcome: &str, points: &[Point]) {
    for (from, to) in windows(points) {
        for desc in [false, true] {
            for (name, width) in INTERVALS {
                let expected = expected_buckets(points, width, from, to, desc);
                let (_, got) = all_pages(f, json!({ "market_id": market_id, "interval": name }), desc, from, to).await;
                assert_eq!(got, expected, "interval {name}, window {from:?}..{to:?}, desc {desc}");
                let one: Vec<Point> = points.iter().filter(|p| p.outcome == outcome).cloned().collect();
                let expected = expected_buckets(&one, width, from, to, desc);
                let (_, got) = all_pages(f, json!({ "outcome_id": outcome, "interval": name }), desc, from, to).await;
                assert_eq!(got, expected, "one outcome, interval {name}, window {from:?}..{to:?}, desc {desc}");
            }
            let raw: Vec<&Point> = points.iter().filter(|p| from.is_none_or(|f| p.at >= f) && to.is_none_or(|t| p.at <= t)).collect();
            let (total, got) = all_pages(f, json!({ "market_id": market_id }), desc, from, to).await;
            assert_eq!(total as usize, raw.len(), "raw total, window {from:?}..{to:?}");
            let volume: u128 = got.iter().map(|p| p["volume"].as_str().unwrap().parse::<u128>().unwrap()).sum();
            assert_eq!(volume, raw.iter().map(|p| p.volume).sum::<u128>());
            assert_eq!(got, expected_raw(&raw, desc), "raw points, window {from:?}..{to:?}, desc {desc}");
            let one: Vec<&Point> = raw.iter().copied().filter(|p| p.outcome == outcome).collect();
            let (total, got) = all_pages(f, json!({ "outcome_id": outcome }), desc, from, to).await;
            assert_eq!(total as usize, one.len(), "raw total of one outcome, window {from:?}..{to:?}");
            assert_eq!(got, expected_raw(&one, desc), "raw points of one outcome, window {from:?}..{to:?}, desc {desc}");
        }
    }
}

/// A new market of two outcomes: its id and its outcomes' ids, in order.
async fn market_of_two(f: &Fixture) -> (String, Vec<String>) {
    let market = f.market(2).await;
    let mut outcomes: Vec<String> = market["outcomes"].as_array().unwrap().iter().map(|o| o["id"].as_str().unwrap().to_string()).collect();
    outcomes.sort();
    (market["id"].as_str().unwrap().to_string(), outcomes)
}

#[tokio::test]
async fn buckets_match_the_raw_points_before_and_after_a_rebuild() {
    let f = Fixture::new().await;
    let (market_id, outcomes) = market_of_two(&f).await;
    let points = synthetic_points(&outcomes, now_micros() - 4 * DAY);
    let db = Db::open(&f.app.database_url);
    write_points(&db, &market_id, &[], &points).await;

    check_history(&f, &market_id, &outcomes[1], &points).await;
    db.rebuild_price_candles().await;
    check_history(&f, &market_id, &outcomes[0], &points).await;

    // An outcome of another market, or of none, has no history.
    let other = f.market(2).await;
    let body = json!({ "filters": { "market_id": other["id"], "outcome_id": outcomes[0], "interval": "1h" } });
    let r = f.app.post("/v1/markets/price-history/search", None, body).await;
    assert_eq!(r.body["pagination"]["total"], 0);
}

/// Hourly and raw pages follow points written after an earlier page read the market's
/// candles (the server keeps their keys and point counts between pages): a price change
/// within the last hour, then a new hour.
#[tokio::test]
async fn pages_follow_points_written_after_earlier_pages() {
    let f = Fixture::new().await;
    let (market_id, outcomes) = market_of_two(&f).await;
    let start = (now_micros() - 3 * DAY).div_euclid(HOUR) * HOUR;
    // As trades write them: every outcome at each instant.
    let at_instant = |i: u128, at: Micros| -> Vec<Point> {
        outcomes
            .iter()
            .enumerate()
            .map(|(k, o)| Point { outcome: o.clone(), price: 10u128.pow(35) + i * 1_000 + k as u128, volume: if k == (i % 2) as usize { 1_000_000_000_000_000_000 + i } else { 0 }, at })
            .collect()
    };
    let mut points: Vec<Point> = (0..30u128).flat_map(|i| at_instant(i, start + i as i64 * HOUR + 17 * MINUTE)).collect();
    let db = Db::open(&f.app.database_url);
    write_points(&db, &market_id, &[], &points).await;
    let windows = [(None, None), (Some(start + 5 * HOUR + 1), Some(start + 40 * HOUR)), (Some(start + 29 * HOUR), None)];
    let check = |points: Vec<Point>| {
        let (f, market_id, outcome) = (&f, market_id.clone(), outcomes[1].clone());
        async move {
            for (from, to) in windows {
                for desc in [true, false] {
                    let (_, got) = all_pages(f, json!({ "market_id": market_id, "interval": "1h" }), desc, from, to).await;
                    assert_eq!(got, expected_buckets(&points, HOUR, from, to, desc), "window {from:?}..{to:?}, desc {desc}");
                    let one: Vec<Point> = points.iter().filter(|p| p.outcome == outcome).cloned().collect();
                    let (_, got) = all_pages(f, json!({ "outcome_id": outcome, "interval": "1h" }), desc, from, to).await;
                    assert_eq!(got, expected_buckets(&one, HOUR, from, to, desc), "one outcome, window {from:?}..{to:?}, desc {desc}");
                    // Raw pages count their points through the same keys.
                    let raw: Vec<&Point> = points.iter().filter(|p| from.is_none_or(|f| p.at >= f) && to.is_none_or(|t| p.at <= t)).collect();
                    let (total, got) = all_pages(f, json!({ "market_id": market_id }), desc, from, to).await;
                    assert_eq!((total as usize, got), (raw.len(), expected_raw(&raw, desc)), "raw, window {from:?}..{to:?}, desc {desc}");
                    let raw: Vec<&Point> = raw.into_iter().filter(|p| p.outcome == outcome).collect();
                    let (total, got) = all_pages(f, json!({ "outcome_id": outcome }), desc, from, to).await;
                    assert_eq!((total as usize, got), (raw.len(), expected_raw(&raw, desc)), "raw of one outcome, window {from:?}..{to:?}, desc {desc}");
                }
            }
        }
    };
    check(points.clone()).await;

    let later = at_instant(30, start + 29 * HOUR + 41 * MINUTE);
    write_points(&db, &market_id, &points, &later).await;
    points.extend(later);
    check(points.clone()).await;

    let later = at_instant(31, start + 31 * HOUR + 2 * MINUTE);
    write_points(&db, &market_id, &points, &later).await;
    points.extend(later);
    check(points.clone()).await;
}
