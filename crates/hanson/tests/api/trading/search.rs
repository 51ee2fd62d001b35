//! Trade records, price history, holdings and market search, each against the details.

use reqwest::StatusCode;
use serde_json::{json, Value};

use super::support::*;

#[tokio::test]
async fn trade_records_and_price_history_are_searchable() {
    let a = Arena::new(2, 100 * ONE_TOKEN).await;
    let (t0, t1) = (&a.traders[0], &a.traders[1]);
    for (t, outcome, amount) in [(t0, 0, 3), (t1, 1, 4), (t0, 0, 5)] {
        assert_eq!(a.bet(t, outcome, amount * ONE_TOKEN).await.status, StatusCode::OK);
    }
    let shares = wei(&a.holdings(t0).await["data"][0]["shares"]);
    assert_eq!(a.sell_shares(t0, 0, shares / 2).await.status, StatusCode::OK);

    let all = a.f.app.post("/v1/markets/positions/search", None, json!({ "filters": { "market_id": a.market_id() } })).await;
    assert_eq!(all.status, StatusCode::OK);
    assert_eq!(all.body["pagination"], json!({ "page": 1, "per_page": 20, "total": 4, "total_pages": 1 }));
    let first = &all.body["data"][0];
    assert_eq!(first["transaction_type"], "sell", "newest first");
    for field in ["id", "market_id", "outcome_id", "wallet_id", "wallet_address", "transaction_type", "amount", "shares", "price", "created_at"] {
        assert!(!first[field].is_null(), "{field}");
    }
    assert_eq!(first["wallet_address"], t0.wallet.address);
    let buys = a.f.app.post("/v1/markets/positions/search", None, json!({ "filters": { "market_id": a.market_id(), "transaction_type": "buy" }, "sort": { "field": "amount", "direction": "asc" } })).await.body;
    let amounts: Vec<&str> = buys["data"].as_array().unwrap().iter().map(|t| t["amount"].as_str().unwrap()).collect();
    assert_eq!(amounts, ["3000000000000000000", "4000000000000000000", "5000000000000000000"]);
    let mine = a.f.app.post("/v1/markets/positions/search", None, json!({ "filters": { "wallet_address": t1.wallet.address.to_uppercase().replace("0X", "0x") } })).await.body;
    assert_eq!(mine["pagination"]["total"], 1);
    let future = a.f.app.post("/v1/markets/positions/search", None, json!({ "filters": { "from_date": iso(3600) } })).await.body;
    assert_eq!(future["pagination"]["total"], 0);
    let past = a.f.app.post("/v1/markets/positions/search", None, json!({ "filters": { "from_date": iso(-3600), "to_date": iso(3600) } })).await.body;
    assert_eq!(past["pagination"]["total"], 4);
    let paged = a.f.app.post("/v1/markets/positions/search", None, json!({ "pagination": { "page": 2, "per_page": 3 } })).await.body;
    assert_eq!(paged["data"].as_array().unwrap().len(), 1);
    assert_eq!(paged["pagination"]["total_pages"], 2);
    assert_field_error(&a.f.app.post("/v1/markets/positions/search", None, json!({ "filters": { "transaction_type": "swap" } })).await, "filters.transaction_type");
    assert_field_error(&a.f.app.post("/v1/markets/positions/search", None, json!({ "filters": { "from_date": "yesterday" } })).await, "filters.from_date");

    // Raw price history: one point per outcome per trade.
    let raw = a.f.app.post("/v1/markets/price-history/search", None, json!({ "filters": { "market_id": a.market_id() }, "pagination": { "per_page": 100 } })).await;
    assert_eq!(raw.status, StatusCode::OK, "{}", raw.body);
    assert_eq!(raw.body["pagination"]["total"], 8);
    let newest = &raw.body["data"][0];
    for field in ["market_id", "outcome_id", "price", "volume", "timestamp"] {
        assert!(!newest[field].is_null(), "{field}");
    }
    let detail = a.detail().await;
    let latest_prices: Vec<&Value> = raw.body["data"].as_array().unwrap()[..2].iter().collect();
    for p in latest_prices {
        let outcome = detail["outcomes"].as_array().unwrap().iter().find(|o| o["id"] == p["outcome_id"]).unwrap();
        assert_eq!(p["price"], outcome["current_price"]);
    }
    // Hourly buckets: every trade happened within this hour or two, so at most 2 buckets per outcome,
    // each carrying the last price and summed volume.
    let hourly = a.f.app.post("/v1/markets/price-history/search", None, json!({ "filters": { "market_id": a.market_id(), "interval": "1h" }, "sort": { "field": "timestamp", "direction": "asc" } })).await.body;
    let buckets = hourly["data"].as_array().unwrap();
    assert!(buckets.len() == 2 || buckets.len() == 4, "{hourly}");
    let volume: u128 = buckets.iter().map(|b| wei(&b["volume"])).sum();
    assert_eq!(volume, wei(&detail["total_volume"]));
    for b in buckets {
        let ts = b["timestamp"].as_str().unwrap();
        assert!(ts.ends_with(":00:00.000000Z"), "bucket starts on the hour: {ts}");
    }
    // Buckets agree with the raw points aggregated here: last price and summed volume per
    // (outcome, minute), for the whole range and for a range starting at the second point.
    let mut raw_points = raw.body["data"].as_array().unwrap().clone();
    raw_points.reverse();
    for from in [None, Some(raw_points[2]["timestamp"].clone())] {
        let mut filters = json!({ "market_id": a.market_id(), "interval": "1m" });
        let mut points: Vec<&Value> = raw_points.iter().collect();
        if let Some(from) = &from {
            filters["from_date"] = from.clone();
            points.retain(|p| p["timestamp"].as_str().unwrap() >= from.as_str().unwrap());
        }
        let mut expected: Vec<(String, String, String, u128)> = Vec::new();
        for p in points {
            let ts = p["timestamp"].as_str().unwrap();
            let minute = format!("{}:00.000000Z", &ts[..16]);
            let outcome = p["outcome_id"].as_str().unwrap().to_string();
            match expected.iter_mut().find(|e| e.0 == minute && e.1 == outcome) {
                Some(e) => {
                    e.2 = p["price"].as_str().unwrap().to_string();
                    e.3 += wei(&p["volume"]);
                }
                None => expected.push((minute, outcome, p["price"].as_str().unwrap().to_string(), wei(&p["volume"]))),
            }
        }
        let got = a.f.app.post("/v1/markets/price-history/search", None, json!({ "filters": filters, "pagination": { "per_page": 100 } })).await.body;
        let got: Vec<(String, String, String, u128)> = got["data"].as_array().unwrap().iter().map(|b| (
            b["timestamp"].as_str().unwrap().to_string(), b["outcome_id"].as_str().unwrap().to_string(), b["price"].as_str().unwrap().to_string(), wei(&b["volume"]),
        )).collect();
        for e in &expected {
            assert!(got.contains(e), "missing bucket {e:?} in {got:?}");
        }
        assert_eq!(got.len(), expected.len());
    }
    assert_field_error(&a.f.app.post("/v1/markets/price-history/search", None, json!({ "filters": { "market_id": a.market_id(), "interval": "2h" } })).await, "filters.interval");
    assert_field_error(&a.f.app.post("/v1/markets/price-history/search", None, json!({})).await, "filters.market_id");
}

#[tokio::test]
async fn holdings_show_only_the_callers_positions() {
    let a = Arena::new(2, 100 * ONE_TOKEN).await;
    let (t0, t1) = (&a.traders[0], &a.traders[1]);
    assert_eq!(a.bet(t0, 0, ONE_TOKEN).await.status, StatusCode::OK);
    assert_eq!(a.bet(t0, 1, 3 * ONE_TOKEN).await.status, StatusCode::OK);
    assert_eq!(a.bet(t1, 1, 2 * ONE_TOKEN).await.status, StatusCode::OK);
    let h0 = a.f.app.post("/v1/markets/holdings/search", Some(&t0.session.access_token), json!({ "sort": { "field": "current_value", "direction": "desc" } })).await.body;
    assert_eq!(h0["pagination"]["total"], 2);
    let values: Vec<u128> = h0["data"].as_array().unwrap().iter().map(|p| wei(&p["current_value"])).collect();
    assert!(values[0] >= values[1]);
    assert!(h0["data"].as_array().unwrap().iter().all(|p| p["wallet_id"] == t0.wallet_id.as_str()));
    let h1 = a.holdings(t1).await;
    assert_eq!(h1["pagination"]["total"], 1);
    let filtered = a.f.app.post("/v1/markets/holdings/search", Some(&t0.session.access_token), json!({ "filters": { "outcome_id": a.outcome(1), "status": "active", "position_type": "long" } })).await.body;
    assert_eq!(filtered["pagination"]["total"], 1);
    assert_problem(&a.f.app.post("/v1/markets/holdings/search", None, json!({})).await, 401, "unauthenticated");
    assert_field_error(&a.f.app.post("/v1/markets/holdings/search", Some(&t0.session.access_token), json!({ "filters": { "position_type": "short" } })).await, "filters.position_type");
}

/// Every field of a search item equals the (uncached) detail view's.
fn assert_summary_of(item: &Value, detail: &Value) {
    for (key, value) in item.as_object().unwrap() {
        match key.as_str() {
            "outcomes" | "token" | "provider" => {
                let nested: Vec<(&Value, &Value)> = match value {
                    Value::Array(outcomes) => outcomes.iter().zip(detail[key].as_array().unwrap()).collect(),
                    one => vec![(one, &detail[key])],
                };
                assert_eq!(value.as_array().map_or(1, Vec::len), detail[key].as_array().map_or(1, Vec::len), "{key} of {}", item["id"]);
                for (part, whole) in nested {
                    for (k, v) in part.as_object().unwrap() {
                        assert_eq!(v, &whole[k], "{key}.{k} of {}", item["id"]);
                    }
                }
            }
            _ => assert_eq!(value, &detail[key], "{key} of {}", item["id"]),
        }
    }
}

/// Searches under each sort, checks each item against its detail view and the order against
/// the details; returns the items by market id.
async fn search_matches_details(app: &TestApp, context: &str) -> std::collections::HashMap<String, Value> {
    let mut items = std::collections::HashMap::new();
    for (field, direction) in [("created_at", "desc"), ("total_volume", "desc"), ("total_volume", "asc"), ("closes_at", "asc")] {
        let body = json!({ "sort": { "field": field, "direction": direction }, "pagination": { "per_page": 100 } });
        let r = app.post("/v1/markets/search", None, body).await;
        assert_eq!(r.status, StatusCode::OK, "{context}: {}", r.body);
        let data = r.body["data"].as_array().unwrap().clone();
        assert_eq!(r.body["pagination"]["total"], data.len(), "{context}");
        let mut keys = Vec::new();
        for item in &data {
            let id = item["id"].as_str().unwrap();
            let detail = app.get(&format!("/v1/markets/{id}"), None).await.body;
            assert_summary_of(item, &detail);
            let key = match field {
                "total_volume" => format!("{:0>40}", wei(&detail["total_volume"])),
                "closes_at" => detail["closes_at"].as_str().unwrap().to_string(),
                _ => detail["created_at"].as_str().unwrap().to_string(),
            };
            keys.push((key, id.to_string()));
            items.insert(id.to_string(), item.clone());
        }
        let mut sorted = keys.clone();
        sorted.sort();
        if direction == "desc" {
            sorted.reverse();
        }
        assert_eq!(keys, sorted, "{context}: order by {field} {direction}");
    }
    items
}

#[tokio::test]
async fn search_pages_show_every_change_to_their_markets() {
    let a = Arena::new(1, 1_000 * ONE_TOKEN).await;
    let other = a.f.market(3).await;
    let other_id = other["id"].as_str().unwrap();
    let (app, t) = (&a.f.app, &a.traders[0]);
    let first = search_matches_details(app, "fresh").await;
    assert_eq!(first.len(), 2);

    assert_eq!(a.bet(t, 0, 10 * ONE_TOKEN).await.status, StatusCode::OK);
    let after_bet = search_matches_details(app, "after a bet").await;
    assert_ne!(after_bet[a.market_id()]["total_volume"], first[a.market_id()]["total_volume"]);
    assert_ne!(after_bet[a.market_id()]["outcomes"][0]["current_price"], first[a.market_id()]["outcomes"][0]["current_price"]);

    let outcome = other["outcomes"][2]["id"].as_str().unwrap();
    let r = bet_on(app, other_id, outcome, t, 20 * ONE_TOKEN).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    search_matches_details(app, "after a bet moving the volume order").await;

    let position = |h: Value| h["data"].as_array().unwrap().iter().find(|p| p["market_id"] == a.market_id()).unwrap().clone();
    let held = wei(&position(a.holdings(t).await)["shares"]);
    let r = a.sell_shares(t, 0, held / 2).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    search_matches_details(app, "after a sell").await;

    let path = format!("/v1/providers/markets/{}/outcomes/{}", a.market_id(), a.outcome(1));
    let r = app.put(&path, Some(&a.f.provider.key), json!({ "title": "Away side" })).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(search_matches_details(app, "after an outcome edit").await[a.market_id()]["outcomes"][1]["title"], "Away side");

    // A claim drains the pool without touching the market row.
    assert_eq!(a.resolve(0).await.status, StatusCode::OK);
    let resolved = search_matches_details(app, "after resolution").await;
    assert_eq!(resolved[a.market_id()]["status"], "resolved");
    let position_id = position(a.holdings(t).await)["id"].clone();
    let claim = app.post(&format!("/v1/markets/positions/{}/claim", position_id.as_str().unwrap()), Some(&t.session.access_token), json!({ "session_id": t.session.session_id })).await;
    assert_eq!(claim.status, StatusCode::OK, "{}", claim.body);
    let claimed = search_matches_details(app, "after a claim").await;
    assert_ne!(claimed[a.market_id()]["total_pool"], resolved[a.market_id()]["total_pool"]);

    // The end passing turns the status to closed with no write at all.
    let soon = (time::OffsetDateTime::now_utc() + time::Duration::milliseconds(1500)).format(&time::format_description::well_known::Rfc3339).unwrap();
    let r = app.put(&format!("/v1/providers/markets/{other_id}"), Some(&a.f.provider.key), json!({ "ends_at": soon })).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(search_matches_details(app, "before the end").await[other_id]["status"], "active");
    tokio::time::sleep(std::time::Duration::from_millis(1700)).await;
    assert_eq!(search_matches_details(app, "after the end").await[other_id]["status"], "closed");
}
