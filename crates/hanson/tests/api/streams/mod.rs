//! Live streams over real HTTP (`docs/streams.md`): the market stream
//! (Server-Sent Events) with its snapshot, every event type with its exact data, a gapless
//! `seq` under concurrent trades, resume, refusals that publish nothing; the user stream; the
//! WebSocket; pings, stream limits and shutdown of a real `hanson serve`; the AsyncAPI document.
//!
//! The SSE and WebSocket clients, which check every event against the AsyncAPI document, are
//! in `support/sse.rs` and `support/ws.rs`; here are the helpers the stream tests share.

use std::collections::HashMap;

use reqwest::StatusCode;
use serde_json::{json, Value};
use tokio::time::timeout;

use super::support;
use support::*;

mod market;
mod resume;
mod serve;
mod user;
mod websocket;

async fn detail(app: &TestApp, market_id: &str) -> Value {
    let r = app.get(&format!("/v1/markets/{market_id}"), None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    r.body
}

/// What `trade.created` must carry for `trade_id`, when it was the market's last change.
async fn trade_created_data(app: &TestApp, market_id: &str, trade_id: &str) -> Value {
    let record = trades_in_order(app, market_id).await.into_iter().find(|t| t["id"] == trade_id).unwrap_or_else(|| panic!("trade {trade_id} is not recorded"));
    let d = detail(app, market_id).await;
    json!({ "trade": record, "prices": prices_of(&d), "total_volume": d["total_volume"], "total_pool": d["total_pool"] })
}

/// The caller's positions as holdings search shows them, oldest first.
async fn holdings_oldest_first(app: &TestApp, token: &str) -> Vec<Value> {
    let r = app.post("/v1/markets/holdings/search", Some(token), json!({ "sort": { "field": "created_at", "direction": "asc" }, "pagination": { "per_page": 100 } })).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    r.body["data"].as_array().unwrap().clone()
}

async fn holding(app: &TestApp, token: &str, outcome_id: &str) -> Value {
    let r = app.post("/v1/markets/holdings/search", Some(token), json!({ "filters": { "outcome_id": outcome_id } })).await;
    assert_eq!(r.body["pagination"]["total"], 1, "{}", r.body);
    r.body["data"][0].clone()
}

async fn balances(app: &TestApp, token: &str) -> Value {
    app.get("/v1/auth/profile", Some(token)).await.body["balances"].clone()
}

async fn bet_ok(app: &TestApp, market: &Value, i: usize, t: &Trader, amount: u128) -> Value {
    let r = bet_on(app, market["id"].as_str().unwrap(), outcome(market, i), t, amount).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    r.body
}

async fn sell(app: &TestApp, market: &Value, i: usize, t: &Trader, shares: u128) -> Response {
    sell_on(app, market, i, t, shares).await
}

async fn resolve(f: &Fixture, market: &Value, winner: usize) -> Value {
    let r = resolve_on(f, market, winner).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    r.body
}

async fn cancel(f: &Fixture, market: &Value) -> Value {
    let r = cancel_on(f, market).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    r.body
}

/// A GET with extra headers, its answer checked against the OpenAPI document like the
/// `TestApp` helpers' answers (for error answers: a 200 here would be a stream).
async fn get_with(app: &TestApp, path: &str, headers: &[(&str, &str)]) -> Response {
    let mut request = app.client.get(format!("{}{path}", app.base));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let res = timeout(EVENT_WAIT, request.send()).await.expect("answered").expect("request");
    let status = res.status();
    assert_ne!(status, StatusCode::OK, "GET {path} {headers:?} opened a stream");
    let headers = res.headers().clone();
    let text = res.text().await.unwrap();
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    let content_type = headers.get("content-type").and_then(|v| v.to_str().ok());
    contract::openapi::check(&reqwest::Method::GET, path, status, content_type, &body);
    Response { status, body, headers }
}

/// The next `n` user stream events, grouped by type (arrival order within a type); each is
/// checked as a user stream frame belonging to the market its data names.
async fn user_events(sse: &mut Sse, n: usize) -> HashMap<String, Vec<Value>> {
    let mut out: HashMap<String, Vec<Value>> = HashMap::new();
    for _ in 0..n {
        let frame = sse.next_event().await;
        let kind = frame.event.clone().unwrap_or_else(|| panic!("no event line: {frame:?}"));
        let envelope = frame.json();
        let market_id = match kind.as_str() {
            "trade.created" => envelope["data"]["trade"]["market_id"].as_str().map(str::to_string),
            "position.updated" => envelope["data"]["position"]["market_id"].as_str().map(str::to_string),
            "claim.completed" => envelope["data"]["market_id"].as_str().map(str::to_string),
            "balance.updated" | "deposit.completed" | "withdrawal.completed" => None,
            other => panic!("the user stream carries no {other}: {envelope}"),
        };
        user_event(&frame, &kind, market_id.as_deref());
        out.entry(kind).or_default().push(envelope);
    }
    out
}

/// Deposits `amount` into the wallet and checks that the user stream's next two events are
/// exactly what it causes, `deposit.completed` (the deposit response; docs/API.md puts the
/// wallet's own transfers on its user stream) and `balance.updated`: whatever should not have
/// appeared before them did not.
async fn marker(f: &Fixture, sse: &mut Sse, address: &str, amount: u128) {
    let deposit_answer = f.app.wallet_deposit(&f.provider, &f.token_id, address, amount).await;
    let mut events = user_events(sse, 2).await;
    let deposit = events.remove("deposit.completed").unwrap_or_else(|| panic!("no deposit.completed: {events:?}"));
    assert_eq!(deposit[0]["data"], deposit_answer);
    let balance = events.remove("balance.updated").unwrap_or_else(|| panic!("no balance.updated: {events:?}"));
    assert_eq!(balance[0]["data"], json!({ "token_id": f.token_id, "balance": deposit_answer["balance_after"] }));
}

/// The envelope of a market's event `seq` as its SSE log has it.
async fn logged(app: &TestApp, market_id: &str, seq: u64) -> Value {
    let mut sse = Sse::market(&app.client, &app.base, market_id, &format!("?after_seq={}", seq - 1), &[]).await;
    sse.next_event().await.json()
}
