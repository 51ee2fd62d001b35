//! Live streams over real HTTP (CONTRACT "Events" and "Live streams"): the market stream
//! (Server-Sent Events) with its snapshot, every event type with its exact data, a gapless
//! `seq` under concurrent trades, resume, refusals that publish nothing; the user stream; the
//! WebSocket; pings, stream limits and shutdown of a real `hanson serve`; the AsyncAPI document.
//!
//! SSE bodies are read with `reqwest::Response::chunk()` and split into frames here; the
//! WebSocket client is tokio-tungstenite over a plain `TcpStream`.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use reqwest::StatusCode;
use serde_json::{json, Value};
use tokio::net::TcpStream;
use tokio::time::{timeout, timeout_at, Instant};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

use crate::concurrency::{replay, trades_in_order};
use crate::helpers::*;
use crate::trading::{bet_on, Trader};
use crate::users::login;

/// How long any single expected event may take (generous: the suite runs tests in parallel
/// on two cores).
const EVENT_WAIT: Duration = Duration::from_secs(10);

// ---------------------------------------------------------------------------------------------
// An SSE client
// ---------------------------------------------------------------------------------------------

/// One SSE frame: its fields, and its comment lines (`: ping`).
#[derive(Debug, Clone, Default)]
pub struct Frame {
    pub event: Option<String>,
    pub id: Option<String>,
    pub data: Option<String>,
    pub comments: Vec<String>,
}

impl Frame {
    pub fn is_comment(&self) -> bool {
        self.event.is_none() && self.id.is_none() && self.data.is_none()
    }

    pub fn json(&self) -> Value {
        let data = self.data.as_deref().unwrap_or_else(|| panic!("a frame without data: {self:?}"));
        serde_json::from_str(data).unwrap_or_else(|e| panic!("data is not JSON ({e}): {data}"))
    }
}

fn parse_frame(text: &str) -> Frame {
    let mut frame = Frame::default();
    for line in text.split('\n').filter(|l| !l.is_empty()) {
        if let Some(comment) = line.strip_prefix(':') {
            frame.comments.push(comment.trim_start().to_string());
            continue;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        let slot = match field {
            "event" => &mut frame.event,
            "id" => &mut frame.id,
            "data" => &mut frame.data,
            "retry" => continue,
            other => panic!("unknown SSE field {other:?} in frame {text:?}"),
        };
        assert!(slot.is_none(), "field {field} twice in one frame (the envelope is one data line): {text:?}");
        *slot = Some(value.to_string());
    }
    frame
}

enum Next {
    Frame(Frame),
    Ended,
    TimedOut,
}

/// An open `text/event-stream` response, read frame by frame.
pub struct Sse {
    response: reqwest::Response,
    buffer: Vec<u8>,
    /// Set once the body has ended: `Ok` for a clean end, `Err` for a broken one.
    ended: Option<Result<(), String>>,
    what: String,
}

impl Sse {
    /// GETs `url` as an event stream; it must answer 200 `text/event-stream`.
    pub async fn open(client: &reqwest::Client, url: &str, bearer: Option<&str>, headers: &[(&str, &str)]) -> Sse {
        let mut request = client.get(url).header("accept", "text/event-stream");
        if let Some(token) = bearer {
            request = request.bearer_auth(token);
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = timeout(EVENT_WAIT, request.send()).await.unwrap_or_else(|_| panic!("GET {url}: no headers within {EVENT_WAIT:?}")).expect("request");
        let status = response.status();
        if status != StatusCode::OK {
            let body = response.text().await.unwrap_or_default();
            panic!("GET {url} {headers:?}: {status} {body}");
        }
        let content_type = response.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
        assert!(content_type.starts_with("text/event-stream"), "GET {url}: content-type {content_type:?}");
        Sse { response, buffer: Vec::new(), ended: None, what: url.to_string() }
    }

    /// A market's stream; `query` is appended to the path (`?after_seq=3` or "").
    pub async fn market(client: &reqwest::Client, base: &str, market_id: &str, query: &str, headers: &[(&str, &str)]) -> Sse {
        Sse::open(client, &format!("{base}/v1/markets/{market_id}/events{query}"), None, headers).await
    }

    /// The user stream of the wallet that `token` belongs to.
    pub async fn user(client: &reqwest::Client, base: &str, token: &str) -> Sse {
        Sse::open(client, &format!("{base}/v1/auth/events"), Some(token), &[]).await
    }

    async fn try_next_frame(&mut self, deadline: Instant) -> Next {
        loop {
            if let Some(end) = self.buffer.windows(2).position(|w| w == b"\n\n") {
                let bytes: Vec<u8> = self.buffer.drain(..end + 2).collect();
                let text = String::from_utf8(bytes[..end].to_vec()).expect("frames are UTF-8");
                return Next::Frame(parse_frame(&text));
            }
            if self.ended.is_some() {
                let rest = String::from_utf8_lossy(&self.buffer);
                assert!(rest.trim().is_empty(), "{}: the body ended inside a frame: {rest:?} ({:?})", self.what, self.ended);
                return Next::Ended;
            }
            match timeout_at(deadline, self.response.chunk()).await {
                Err(_) => return Next::TimedOut,
                Ok(Ok(Some(bytes))) => self.buffer.extend(bytes.iter().filter(|b| **b != b'\r')),
                Ok(Ok(None)) => self.ended = Some(Ok(())),
                Ok(Err(e)) => self.ended = Some(Err(format!("{e:?}"))),
            }
        }
    }

    /// The next frame, comments included; `None` once the body has ended.
    pub async fn next_frame(&mut self, within: Duration) -> Option<Frame> {
        match self.try_next_frame(Instant::now() + within).await {
            Next::Frame(frame) => Some(frame),
            Next::Ended => None,
            Next::TimedOut => panic!("{}: no frame within {within:?}", self.what),
        }
    }

    /// The next frame that is not a comment, within `within`.
    pub async fn next_event_within(&mut self, within: Duration) -> Frame {
        let deadline = Instant::now() + within;
        loop {
            match self.try_next_frame(deadline).await {
                Next::Frame(frame) if frame.is_comment() => continue,
                Next::Frame(frame) => return frame,
                Next::Ended => panic!("{}: the stream ended ({:?}) where an event was expected", self.what, self.ended),
                Next::TimedOut => panic!("{}: no event within {within:?}", self.what),
            }
        }
    }

    pub async fn next_event(&mut self) -> Frame {
        self.next_event_within(EVENT_WAIT).await
    }

    /// No event (comments aside) for `quiet`, and the stream still open.
    pub async fn assert_quiet(&mut self, quiet: Duration) {
        let deadline = Instant::now() + quiet;
        loop {
            match self.try_next_frame(deadline).await {
                Next::Frame(frame) if frame.is_comment() => continue,
                Next::Frame(frame) => panic!("{}: an unexpected event: {frame:?}", self.what),
                Next::Ended => panic!("{}: the stream ended ({:?}) where it should stay open", self.what, self.ended),
                Next::TimedOut => return,
            }
        }
    }

    /// Skips whatever is still buffered, and the body ends cleanly within `within`.
    #[allow(dead_code)]
    pub async fn skip_to_end(&mut self, within: Duration) {
        let deadline = Instant::now() + within;
        loop {
            match self.try_next_frame(deadline).await {
                Next::Frame(_) => continue,
                Next::Ended => {
                    assert_eq!(self.ended, Some(Ok(())), "{}: the body did not end cleanly", self.what);
                    return;
                }
                Next::TimedOut => panic!("{}: still open {within:?} after it should have ended", self.what),
            }
        }
    }

    /// The body ends cleanly within `within`, with no further event before the end.
    pub async fn expect_end(&mut self, within: Duration) {
        let deadline = Instant::now() + within;
        loop {
            match self.try_next_frame(deadline).await {
                Next::Frame(frame) if frame.is_comment() => continue,
                Next::Frame(frame) => panic!("{}: an event where the end was expected: {frame:?}", self.what),
                Next::Ended => {
                    assert_eq!(self.ended, Some(Ok(())), "{}: the body did not end cleanly", self.what);
                    return;
                }
                Next::TimedOut => panic!("{}: still open {within:?} after it should have ended", self.what),
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Envelopes and the values they must equal
// ---------------------------------------------------------------------------------------------

fn wei(v: &Value) -> u128 {
    v.as_str().unwrap_or_else(|| panic!("not a wei string: {v}")).parse().unwrap()
}

fn seq_value(seq: Option<u64>) -> Value {
    seq.map_or(Value::Null, |s| json!(s))
}

/// `{id, type, timestamp, market_id, seq, data}`, with a v7 UUID and a UTC timestamp.
pub fn check_envelope(envelope: &Value, kind: &str, market_id: Option<&str>, seq: Option<u64>) {
    let keys: BTreeSet<&str> = envelope.as_object().unwrap_or_else(|| panic!("not an object: {envelope}")).keys().map(String::as_str).collect();
    assert_eq!(keys, BTreeSet::from(["data", "id", "market_id", "seq", "timestamp", "type"]), "{envelope}");
    assert_eq!(envelope["type"], kind, "{envelope}");
    assert_eq!(envelope["market_id"], market_id.map_or(Value::Null, |m| json!(m)), "{envelope}");
    assert_eq!(envelope["seq"], seq_value(seq), "{envelope}");
    let id = envelope["id"].as_str().unwrap_or_else(|| panic!("id: {envelope}"));
    let parsed = uuid::Uuid::parse_str(id).unwrap_or_else(|e| panic!("id {id}: {e}"));
    assert_eq!(parsed.get_version_num(), 7, "the id is a UUID v7: {envelope}");
    assert_eq!(parsed.hyphenated().to_string(), id, "the id is a lower-case hyphenated UUID");
    let timestamp = envelope["timestamp"].as_str().unwrap_or_else(|| panic!("timestamp: {envelope}"));
    assert!(timestamp.ends_with('Z'), "UTC timestamp: {timestamp}");
    time::OffsetDateTime::parse(timestamp, &time::format_description::well_known::Rfc3339).unwrap_or_else(|e| panic!("timestamp {timestamp}: {e}"));
    assert!(envelope["data"].is_object(), "{envelope}");
}

/// A market stream frame: `event` is the type, `id` the seq, `data` the envelope. Returns it.
pub fn market_event(frame: &Frame, kind: &str, market_id: &str, seq: u64) -> Value {
    assert_eq!(frame.event.as_deref(), Some(kind), "{frame:?}");
    assert_eq!(frame.id.as_deref(), Some(seq.to_string().as_str()), "the id line is the seq: {frame:?}");
    let envelope = frame.json();
    check_envelope(&envelope, kind, Some(market_id), Some(seq));
    envelope
}

/// A user stream frame: no `id` line, `seq` null.
pub fn user_event(frame: &Frame, kind: &str, market_id: Option<&str>) -> Value {
    assert_eq!(frame.event.as_deref(), Some(kind), "{frame:?}");
    assert_eq!(frame.id, None, "user stream frames have no id line: {frame:?}");
    let envelope = frame.json();
    check_envelope(&envelope, kind, market_id, None);
    envelope
}

/// The market stream's first frame: `snapshot`, `id` = seq, data `{seq, market}`.
pub async fn expect_snapshot(sse: &mut Sse, seq: u64, market: &Value) {
    let frame = sse.next_event().await;
    assert_eq!(frame.event.as_deref(), Some("snapshot"), "{frame:?}");
    assert_eq!(frame.id.as_deref(), Some(seq.to_string().as_str()), "{frame:?}");
    assert_eq!(frame.json(), json!({ "seq": seq, "market": market }));
}

async fn detail(app: &TestApp, market_id: &str) -> Value {
    let r = app.get(&format!("/v1/markets/{market_id}"), None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    r.body
}

/// `[{outcome_id, price}]` of a market detail, in its outcome order.
pub fn prices_of(detail: &Value) -> Value {
    detail["outcomes"].as_array().unwrap().iter().map(|o| json!({ "outcome_id": o["id"], "price": o["current_price"] })).collect()
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

fn outcome(market: &Value, i: usize) -> &str {
    market["outcomes"][i]["id"].as_str().unwrap()
}

fn id_of(market: &Value) -> String {
    market["id"].as_str().unwrap().to_string()
}

async fn bet_ok(app: &TestApp, market: &Value, i: usize, t: &Trader, amount: u128) -> Value {
    let r = bet_on(app, market["id"].as_str().unwrap(), outcome(market, i), t, amount).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    r.body
}

async fn sell(app: &TestApp, market: &Value, i: usize, t: &Trader, shares: u128) -> Response {
    let body = json!({ "session_id": t.session.session_id, "outcome_id": outcome(market, i), "shares_amount": shares.to_string() });
    app.post(&format!("/v1/markets/{}/sell", market["id"].as_str().unwrap()), Some(&t.session.access_token), body).await
}

async fn resolve(f: &Fixture, market: &Value, winner: usize) -> Value {
    let body = json!({ "winning_outcome_id": outcome(market, winner), "resolver_wallet_id": "resolver-1", "resolution_source": "official feed", "resolution_data": { "score": "2-1" } });
    let r = f.app.post(&format!("/v1/providers/markets/{}/resolve", market["id"].as_str().unwrap()), Some(&f.provider.key), body).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    r.body
}

async fn cancel(f: &Fixture, market: &Value) -> Value {
    let body = json!({ "canceller_wallet_id": "ops-1", "cancellation_source": "ops", "reason": "venue flooded", "cancellation_data": { "ticket": "42" } });
    let r = f.app.post(&format!("/v1/providers/markets/{}/cancel", market["id"].as_str().unwrap()), Some(&f.provider.key), body).await;
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
    crate::schema::check(&reqwest::Method::GET, path, status, content_type, &body);
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
    let r = f
        .app
        .post("/v1/providers/wallets/deposits", Some(&f.provider.key), json!({ "wallet_address": address, "token_id": f.token_id, "amount": amount.to_string(), "reference": uuid() }))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let mut events = user_events(sse, 2).await;
    let deposit = events.remove("deposit.completed").unwrap_or_else(|| panic!("no deposit.completed: {events:?}"));
    assert_eq!(deposit[0]["data"], r.body);
    let balance = events.remove("balance.updated").unwrap_or_else(|| panic!("no balance.updated: {events:?}"));
    assert_eq!(balance[0]["data"], json!({ "token_id": f.token_id, "balance": r.body["balance_after"] }));
}

// ---------------------------------------------------------------------------------------------
// The market stream
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn market_stream_sends_a_snapshot_then_every_event_with_its_exact_data() {
    let f = Fixture::new().await;
    let market = f.market(2).await;
    let id = id_of(&market);
    let key = Some(f.provider.key.as_str());
    let t = f.trader(100 * ONE_TOKEN).await;
    let mut sse = Sse::market(&f.app.client, &f.app.base, &id, "", &[]).await;
    // market.created is seq 1 and nothing happened since.
    expect_snapshot(&mut sse, 1, &market).await;

    let put = f.app.put(&format!("/v1/providers/markets/{id}"), key, json!({ "question": "Will the away team win?", "tags": ["football"] })).await;
    assert_eq!(put.status, StatusCode::OK, "{}", put.body);
    let d = detail(&f.app, &id).await;
    let updated = market_event(&sse.next_event().await, "market.updated", &id, 2);
    assert_eq!(updated["data"], d, "market.updated carries the detail after the change");
    assert_eq!(updated["data"]["question"], "Will the away team win?");
    assert_eq!(updated["data"]["tags"], json!(["football"]));

    let created = f
        .app
        .post(&format!("/v1/providers/markets/{id}/outcomes"), key, json!({ "title": "Draw", "description": "Level at full time", "outcome_index": 2 }))
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let d = detail(&f.app, &id).await;
    let e = market_event(&sse.next_event().await, "outcome.created", &id, 3);
    assert_eq!(e["data"], json!({ "outcome": created.body["outcome"], "prices": prices_of(&d) }));
    assert_eq!(e["data"]["prices"].as_array().unwrap().len(), 3);
    for p in e["data"]["prices"].as_array().unwrap() {
        assert_eq!(p["price"], "0.333333333333333333", "a new outcome before trades: every price 1/3");
    }
    let draw = created.body["outcome"]["id"].as_str().unwrap().to_string();

    let renamed = f.app.put(&format!("/v1/providers/markets/{id}/outcomes/{draw}"), key, json!({ "title": "Tie" })).await;
    assert_eq!(renamed.status, StatusCode::OK, "{}", renamed.body);
    let d = detail(&f.app, &id).await;
    let e = market_event(&sse.next_event().await, "outcome.updated", &id, 4);
    assert_eq!(e["data"], json!({ "outcome": renamed.body["outcome"], "prices": prices_of(&d) }));
    assert_eq!(e["data"]["outcome"]["title"], "Tie");

    let bet = bet_ok(&f.app, &d, 0, &t, 10 * ONE_TOKEN).await;
    let bet_id = bet["bet_id"].as_str().unwrap();
    let e = market_event(&sse.next_event().await, "trade.created", &id, 5);
    assert_eq!(e["data"], trade_created_data(&f.app, &id, bet_id).await);
    assert_eq!(e["data"]["trade"]["id"], bet_id);
    assert_eq!(e["data"]["trade"]["transaction_type"], "buy");
    assert_eq!(e["data"]["trade"]["amount"], "10000000000000000000");
    assert_eq!(e["data"]["trade"]["shares"], bet["shares_purchased"]);
    assert_eq!(e["data"]["trade"]["wallet_id"], t.wallet_id);
    assert!(e["data"].get("balance_after").is_none() && e["data"]["trade"].get("balance_after").is_none(), "never a balance");

    let shares = wei(&bet["shares_purchased"]) / 2;
    let sold = sell(&f.app, &d, 0, &t, shares).await;
    assert_eq!(sold.status, StatusCode::OK, "{}", sold.body);
    let sale_id = sold.body["transaction_id"].as_str().unwrap();
    let e = market_event(&sse.next_event().await, "trade.created", &id, 6);
    assert_eq!(e["data"], trade_created_data(&f.app, &id, sale_id).await);
    assert_eq!(e["data"]["trade"]["transaction_type"], "sell");
    assert_eq!(e["data"]["trade"]["amount"], sold.body["proceeds"]);
    assert_eq!(e["data"]["trade"]["shares"], shares.to_string());

    let resolution = resolve(&f, &d, 0).await;
    let e = market_event(&sse.next_event().await, "market.resolved", &id, 7);
    assert_eq!(e["data"], resolution);
    // A settled market's stream ends after its last event.
    sse.expect_end(Duration::from_secs(3)).await;

    // The log from the start: the same envelopes, market.created first with the detail as
    // it was at creation.
    let mut replayed = Sse::market(&f.app.client, &f.app.base, &id, "?after_seq=0", &[]).await;
    let first = market_event(&replayed.next_event().await, "market.created", &id, 1);
    assert_eq!(first["data"], market);
    let kinds = ["market.updated", "outcome.created", "outcome.updated", "trade.created", "trade.created", "market.resolved"];
    for (i, kind) in kinds.iter().enumerate() {
        market_event(&replayed.next_event().await, kind, &id, i as u64 + 2);
    }
    replayed.expect_end(Duration::from_secs(3)).await;
}

#[tokio::test]
async fn market_cancelled_carries_the_cancel_response_and_ends_the_stream() {
    let f = Fixture::new().await;
    let market = f.market(2).await;
    let id = id_of(&market);
    let t = f.trader(10 * ONE_TOKEN).await;
    bet_ok(&f.app, &market, 1, &t, ONE_TOKEN).await;
    let mut sse = Sse::market(&f.app.client, &f.app.base, &id, "", &[]).await;
    expect_snapshot(&mut sse, 2, &detail(&f.app, &id).await).await;
    let cancellation = cancel(&f, &market).await;
    let e = market_event(&sse.next_event().await, "market.cancelled", &id, 3);
    assert_eq!(e["data"], cancellation);
    sse.expect_end(Duration::from_secs(3)).await;
}

#[tokio::test]
async fn market_closed_is_sent_once_within_five_seconds_of_ends_at() {
    let f = Fixture::new().await;
    let mut body = f.market_body(2);
    body["starts_at"] = json!(iso(-60));
    body["ends_at"] = json!(iso(2));
    let r = f.create_market(body).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let id = r.body["market"]["id"].as_str().unwrap().to_string();
    let market = detail(&f.app, &id).await;
    assert_eq!(market["status"], "active");
    let ends_at = time::OffsetDateTime::parse(market["ends_at"].as_str().unwrap(), &time::format_description::well_known::Rfc3339).unwrap();

    let mut sse = Sse::market(&f.app.client, &f.app.base, &id, "", &[]).await;
    expect_snapshot(&mut sse, 1, &market).await;
    let e = market_event(&sse.next_event_within(Duration::from_secs(12)).await, "market.closed", &id, 2);
    let arrived = time::OffsetDateTime::now_utc();
    assert_eq!(e["data"], json!({ "closes_at": market["closes_at"] }));
    assert!(arrived >= ends_at, "market.closed before ends_at ({arrived} < {ends_at})");
    assert!(arrived - ends_at < time::Duration::milliseconds(5_500), "market.closed {} after ends_at", arrived - ends_at);
    assert_eq!(detail(&f.app, &id).await["status"], "closed");

    // Once: nothing more while the closer keeps running, and the log holds it once.
    sse.assert_quiet(Duration::from_millis(5_500)).await;
    let mut replayed = Sse::market(&f.app.client, &f.app.base, &id, "?after_seq=0", &[]).await;
    assert_eq!(market_event(&replayed.next_event().await, "market.created", &id, 1)["data"], market);
    assert_eq!(replayed.next_event().await.json(), e);
    replayed.assert_quiet(Duration::from_millis(300)).await;
}

#[tokio::test]
async fn an_update_moving_ends_at_into_the_past_closes_the_market_at_once() {
    let f = Fixture::new().await;
    let market = f.market(2).await;
    let id = id_of(&market);
    let mut sse = Sse::market(&f.app.client, &f.app.base, &id, "", &[]).await;
    expect_snapshot(&mut sse, 1, &market).await;
    let put = f.app.put(&format!("/v1/providers/markets/{id}"), Some(&f.provider.key), json!({ "ends_at": iso(-5) })).await;
    assert_eq!(put.status, StatusCode::OK, "{}", put.body);
    let answered = Instant::now();
    let d = detail(&f.app, &id).await;
    assert_eq!(d["status"], "closed");
    let updated = market_event(&sse.next_event().await, "market.updated", &id, 2);
    assert_eq!(updated["data"], d, "the detail after the change, status computed at the event's time");
    let closed = market_event(&sse.next_event().await, "market.closed", &id, 3);
    assert!(answered.elapsed() < Duration::from_secs(1), "market.closed took {:?}", answered.elapsed());
    assert_eq!(closed["data"], json!({ "closes_at": d["closes_at"] }));
    // The closer does not announce it again.
    sse.assert_quiet(Duration::from_millis(5_500)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn seq_is_gapless_under_concurrent_trades_and_the_events_are_the_trade_records() {
    let limits = hanson::api::Limits { auth_per_ip: hanson::api::ratelimit::Rule::OFF, ..Default::default() };
    let f = Arc::new(Fixture::new_with(limits).await);
    let market = f.market(2).await;
    let id = id_of(&market);
    let mut traders = Vec::new();
    for _ in 0..20 {
        traders.push(Arc::new(f.trader(1_000 * ONE_TOKEN).await));
    }
    let mut sse = Sse::market(&f.app.client, &f.app.base, &id, "", &[]).await;
    expect_snapshot(&mut sse, 1, &market).await;
    // The subscriber reads throughout, from before the first trade.
    let reader = tokio::spawn(async move {
        let mut frames = Vec::with_capacity(420);
        while frames.len() < 420 {
            frames.push(sse.next_event_within(Duration::from_secs(60)).await);
        }
        sse.assert_quiet(Duration::from_millis(500)).await;
        frames
    });

    // Everyone opens a position, so sells have shares.
    let mut acknowledged = HashSet::new();
    for (i, t) in traders.iter().enumerate() {
        let bet = bet_ok(&f.app, &market, i % 2, t, 2 * ONE_TOKEN).await;
        acknowledged.insert(bet["bet_id"].as_str().unwrap().to_string());
    }
    let mut tasks = tokio::task::JoinSet::new();
    for n in 0..400usize {
        let (f, t, market) = (f.clone(), traders[n % 20].clone(), market.clone());
        tasks.spawn(async move {
            if n % 7 == 3 {
                let r = sell(&f.app, &market, (n % 20) % 2, &t, ONE_TOKEN / 10 + n as u128).await;
                (r.status, r.body)
            } else {
                let r = bet_on(&f.app, market["id"].as_str().unwrap(), outcome(&market, (n / 20) % 2), &t, ONE_TOKEN / 3 + n as u128 * 12_345_678_901_234).await;
                (r.status, r.body)
            }
        });
    }
    while let Some(joined) = tasks.join_next().await {
        let (status, body) = joined.unwrap();
        assert_eq!(status, StatusCode::OK, "{body}");
        let trade_id = body["bet_id"].as_str().or(body["transaction_id"].as_str()).unwrap();
        acknowledged.insert(trade_id.to_string());
    }
    assert_eq!(acknowledged.len(), 420);

    let frames = timeout(Duration::from_secs(90), reader).await.expect("the subscriber got every event").unwrap();
    let d = detail(&f.app, &id).await;
    let records = trades_in_order(&f.app, &id).await;
    assert_eq!(records.len(), 420);
    let by_id: HashMap<String, Value> = records.iter().map(|r| (r["id"].as_str().unwrap().to_string(), r.clone())).collect();

    // In seq order, each event is the next trade applied: its record exactly, and the prices,
    // volume and pool right after it.
    let b = wei(&d["b"]);
    let outcomes: Vec<&str> = d["outcomes"].as_array().unwrap().iter().map(|o| o["id"].as_str().unwrap()).collect();
    let mut q = vec![0u128; outcomes.len()];
    let (mut volume, mut pool) = (0u128, wei(&d["liquidity"]));
    let mut seen = HashSet::new();
    let mut in_seq_order = Vec::new();
    for (k, frame) in frames.iter().enumerate() {
        let seq = k as u64 + 2;
        let e = market_event(frame, "trade.created", &id, seq);
        let trade = &e["data"]["trade"];
        let trade_id = trade["id"].as_str().unwrap();
        assert!(seen.insert(trade_id.to_string()), "trade {trade_id} published twice (seq {seq})");
        assert!(acknowledged.contains(trade_id), "seq {seq} is no acknowledged trade: {trade}");
        assert_eq!(trade, &by_id[trade_id], "seq {seq}: the event's trade is the record");
        let i = outcomes.iter().position(|o| *o == trade["outcome_id"].as_str().unwrap()).unwrap();
        let (amount, shares) = (wei(&trade["amount"]), wei(&trade["shares"]));
        match trade["transaction_type"].as_str().unwrap() {
            "buy" => {
                q[i] += shares;
                pool += wei(&trade["net_amount"]);
            }
            "sell" => {
                q[i] -= shares;
                pool -= amount;
            }
            other => panic!("transaction_type {other}"),
        }
        volume += amount;
        let prices = lmsr::prices(b, &q).unwrap();
        let expected: Value = outcomes.iter().zip(&prices).map(|(o, p)| json!({ "outcome_id": o, "price": p.to_string() })).collect();
        assert_eq!(e["data"]["prices"], expected, "seq {seq}: prices after the trade");
        assert_eq!(e["data"]["total_volume"], volume.to_string(), "seq {seq}");
        assert_eq!(e["data"]["total_pool"], pool.to_string(), "seq {seq}");
        in_seq_order.push(trade.clone());
    }
    assert_eq!(seen, acknowledged, "the events are exactly the acknowledged trades");
    // seq order is the order the engine applied them.
    replay(&d, &in_seq_order);
    let last = frames.last().unwrap().json();
    assert_eq!(last["data"]["prices"], prices_of(&d));
    assert_eq!(last["data"]["total_volume"], d["total_volume"]);
    assert_eq!(last["data"]["total_pool"], d["total_pool"]);
}

#[tokio::test]
async fn resume_replays_exactly_the_missed_events() {
    let f = Fixture::new().await;
    let market = f.market(2).await;
    let id = id_of(&market);
    let t = f.trader(100 * ONE_TOKEN).await;
    let client = &f.app.client;
    let base = f.app.base.as_str();

    let mut live = Sse::market(client, base, &id, "", &[]).await;
    expect_snapshot(&mut live, 1, &market).await;
    for k in 0..3u128 {
        bet_ok(&f.app, &market, (k % 2) as usize, &t, ONE_TOKEN + k).await;
    }
    let mut seen = Vec::new();
    for seq in 2..=4 {
        seen.push(market_event(&live.next_event().await, "trade.created", &id, seq));
    }
    drop(live);
    for k in 3..6u128 {
        bet_ok(&f.app, &market, (k % 2) as usize, &t, ONE_TOKEN + k).await;
    }

    // The whole log, for reference: a replay sends the very envelopes that went out live.
    let mut all = Sse::market(client, base, &id, "?after_seq=0", &[]).await;
    let mut log = vec![market_event(&all.next_event().await, "market.created", &id, 1)];
    assert_eq!(log[0]["data"], market);
    for seq in 2..=7 {
        log.push(market_event(&all.next_event().await, "trade.created", &id, seq));
    }
    all.assert_quiet(Duration::from_millis(300)).await;
    assert_eq!(&log[1..4], &seen[..]);

    // Last-Event-ID and after_seq: exactly the events after it, in order, no snapshot, then live.
    let mut by_header = Sse::market(client, base, &id, "", &[("Last-Event-ID", "4")]).await;
    let mut by_query = Sse::market(client, base, &id, "?after_seq=4", &[]).await;
    // Both sent: the header wins.
    let mut both = Sse::market(client, base, &id, "?after_seq=6", &[("Last-Event-ID", "4")]).await;
    for sse in [&mut by_header, &mut by_query, &mut both] {
        for seq in 5..=7u64 {
            let frame = sse.next_event().await;
            market_event(&frame, "trade.created", &id, seq);
            assert_eq!(frame.json(), log[seq as usize - 1]);
        }
        sse.assert_quiet(Duration::from_millis(200)).await;
    }
    let bet = bet_ok(&f.app, &market, 0, &t, 2 * ONE_TOKEN).await;
    let mut eighth = Vec::new();
    for sse in [&mut by_header, &mut by_query, &mut all] {
        let e = market_event(&sse.next_event().await, "trade.created", &id, 8);
        assert_eq!(e["data"]["trade"]["id"], bet["bet_id"]);
        eighth.push(e);
    }
    assert!(eighth.iter().all(|e| *e == eighth[0]), "every subscriber gets the same envelope");

    // Resuming at the current seq: nothing to replay, no snapshot, then live.
    let mut current = Sse::market(client, base, &id, "?after_seq=8", &[]).await;
    current.assert_quiet(Duration::from_millis(300)).await;
    // Beyond the current seq: a snapshot of now instead.
    let d = detail(&f.app, &id).await;
    let mut beyond = Sse::market(client, base, &id, "?after_seq=9", &[]).await;
    expect_snapshot(&mut beyond, 8, &d).await;
    let mut far = Sse::market(client, base, &id, "", &[("Last-Event-ID", "1000000")]).await;
    expect_snapshot(&mut far, 8, &d).await;
    let bet = bet_ok(&f.app, &market, 1, &t, ONE_TOKEN).await;
    for sse in [&mut current, &mut beyond, &mut far] {
        let e = market_event(&sse.next_event().await, "trade.created", &id, 9);
        assert_eq!(e["data"]["trade"]["id"], bet["bet_id"]);
    }

    // The log pruned down to the last 3 events (seqs 7 to 9): a resume point whose
    // successors are gone gets a snapshot; one whose successors are all kept, a replay.
    let retention = hanson::store::events::Retention { keep_for: 0, keep_last: 3 };
    let pruner = hanson::store::Store::open(&f.app.database_url).expect("open the store");
    let long = pruner.read(move |c| hanson::store::events::long_logs(c, &retention)).await.expect("long logs");
    let now = hanson::domain::time::now_micros();
    let pruned = pruner.write(move |c| hanson::store::events::prune(c, now, &retention, &long)).await.expect("prune");
    assert!(pruned >= 6, "seqs 1 to 6 and the wallet events are pruned: {pruned}");
    let d = detail(&f.app, &id).await;
    for resume in ["0", "2", "5"] {
        let mut gone = Sse::market(client, base, &id, "", &[("Last-Event-ID", resume)]).await;
        expect_snapshot(&mut gone, 9, &d).await;
    }
    let mut kept = Sse::market(client, base, &id, "?after_seq=6", &[]).await;
    for seq in 7..=9u64 {
        market_event(&kept.next_event().await, "trade.created", &id, seq);
    }
    kept.assert_quiet(Duration::from_millis(200)).await;

    // Resume points that are not non-negative integers, and unknown markets.
    for bad in ["-1", "abc", "1.5", "0x10", "1e3"] {
        let r = f.app.get(&format!("/v1/markets/{id}/events?after_seq={bad}"), None).await;
        assert_field_error(&r, "after_seq");
        let r = get_with(&f.app, &format!("/v1/markets/{id}/events"), &[("Last-Event-ID", bad)]).await;
        assert_field_error(&r, "Last-Event-ID");
    }
    assert_problem(&f.app.get(&format!("/v1/markets/{}/events", uuid()), None).await, 404, "not_found");
    assert_problem(&f.app.get("/v1/markets/not-a-market/events", None).await, 404, "not_found");
    assert_problem(&get_with(&f.app, &format!("/v1/markets/{}/events", uuid()), &[("Last-Event-ID", "3")]).await, 404, "not_found");
}

#[tokio::test]
async fn refused_trades_publish_nothing() {
    let f = Fixture::new().await;
    let market = f.market(2).await;
    let other_market = f.market(2).await;
    let id = id_of(&market);
    let t = f.trader(50 * ONE_TOKEN).await;
    let poor = f.trader(2_000).await;
    let mut sse = Sse::market(&f.app.client, &f.app.base, &id, "", &[]).await;
    expect_snapshot(&mut sse, 1, &market).await;
    let first = bet_ok(&f.app, &market, 0, &t, 5 * ONE_TOKEN).await;
    assert_eq!(market_event(&sse.next_event().await, "trade.created", &id, 2)["data"]["trade"]["id"], first["bet_id"]);

    let bet_path = format!("/v1/markets/{id}/bet");
    let token = Some(t.session.access_token.as_str());
    let body = |outcome_id: &str, amount: &str| json!({ "session_id": t.session.session_id, "outcome_id": outcome_id, "amount": amount });
    assert_problem(&bet_on(&f.app, &id, outcome(&market, 0), &t, 46 * ONE_TOKEN).await, 422, "insufficient_balance");
    assert_problem(&bet_on(&f.app, &id, outcome(&market, 0), &poor, 5_000).await, 422, "insufficient_balance");
    assert_problem(&bet_on(&f.app, &id, outcome(&market, 1), &t, 999).await, 422, "bet_below_minimum");
    assert_problem(&f.app.post(&bet_path, token, body(&uuid(), "5000")).await, 422, "unknown_outcome");
    assert_problem(&f.app.post(&bet_path, token, body(outcome(&other_market, 0), "5000")).await, 422, "unknown_outcome");
    assert_field_error(&f.app.post(&bet_path, token, body(outcome(&market, 0), "1.5")).await, "amount");
    let mismatch = json!({ "session_id": poor.session.session_id, "outcome_id": outcome(&market, 0), "amount": "5000" });
    assert_problem(&f.app.post(&bet_path, token, mismatch).await, 403, "session_mismatch");
    assert_problem(&sell(&f.app, &market, 1, &t, 1_000).await, 422, "insufficient_shares");
    assert_problem(&sell(&f.app, &market, 0, &t, 100 * ONE_TOKEN).await, 422, "insufficient_shares");

    // An idempotent replay answers again without trading again, and publishes nothing.
    let keyed = || {
        f.app
            .client
            .post(format!("{}{bet_path}", f.app.base))
            .bearer_auth(&t.session.access_token)
            .header("Idempotency-Key", "stream-replay-1")
            .json(&body(outcome(&market, 1), "3000000000000000000"))
    };
    let original = keyed().send().await.unwrap();
    assert_eq!(original.status(), StatusCode::OK);
    let original: Value = original.json().await.unwrap();
    let e = market_event(&sse.next_event().await, "trade.created", &id, 3);
    assert_eq!(e["data"]["trade"]["id"], original["bet_id"]);
    let again = keyed().send().await.unwrap();
    assert_eq!(again.status(), StatusCode::OK);
    assert_eq!(again.headers().get("idempotent-replayed").and_then(|v| v.to_str().ok()), Some("true"));

    // The next event after all that is the next trade, at the next seq.
    let next = bet_ok(&f.app, &market, 0, &t, ONE_TOKEN).await;
    let e = market_event(&sse.next_event().await, "trade.created", &id, 4);
    assert_eq!(e["data"], trade_created_data(&f.app, &id, next["bet_id"].as_str().unwrap()).await);
    sse.assert_quiet(Duration::from_millis(300)).await;
}

/// Refusals in flight together with trades (on SQLite, in the same group commits): only the
/// trades are published, gapless. (A whole group commit rolled back cannot be caused through
/// the API: an operation that fails after writing is a server fault, not a client request.)
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn refusals_amid_concurrent_trades_publish_nothing() {
    let f = Arc::new(Fixture::new().await);
    let market = f.market(2).await;
    let id = id_of(&market);
    let mut traders = Vec::new();
    for _ in 0..4 {
        traders.push(Arc::new(f.trader(100 * ONE_TOKEN).await));
    }
    let poor = Arc::new(f.trader(2_000).await);
    let mut sse = Sse::market(&f.app.client, &f.app.base, &id, "", &[]).await;
    expect_snapshot(&mut sse, 1, &market).await;

    let mut tasks = tokio::task::JoinSet::new();
    for n in 0..60usize {
        let (f, market) = (f.clone(), market.clone());
        let t = if n % 2 == 0 { traders[n % 4].clone() } else { poor.clone() };
        tasks.spawn(async move {
            let market_id = market["id"].as_str().unwrap();
            let r = match n % 6 {
                1 | 3 => bet_on(&f.app, market_id, outcome(&market, n % 2), &t, 5_000).await,
                5 => bet_on(&f.app, market_id, &uuid(), &t, 1_500).await,
                _ => bet_on(&f.app, market_id, outcome(&market, (n / 2) % 2), &t, ONE_TOKEN + n as u128).await,
            };
            (n, r.status, r.body)
        });
    }
    let mut placed = HashSet::new();
    while let Some(joined) = tasks.join_next().await {
        let (n, status, body) = joined.unwrap();
        match n % 6 {
            1 | 3 => assert_eq!((status.as_u16(), body["code"].as_str()), (422, Some("insufficient_balance")), "{body}"),
            5 => assert_eq!((status.as_u16(), body["code"].as_str()), (422, Some("unknown_outcome")), "{body}"),
            _ => {
                assert_eq!(status, StatusCode::OK, "{body}");
                placed.insert(body["bet_id"].as_str().unwrap().to_string());
            }
        }
    }
    assert_eq!(placed.len(), 30);
    let mut published = HashSet::new();
    for seq in 2..=31 {
        let e = market_event(&sse.next_event().await, "trade.created", &id, seq);
        published.insert(e["data"]["trade"]["id"].as_str().unwrap().to_string());
    }
    assert_eq!(published, placed);
    let last = bet_ok(&f.app, &market, 1, &traders[0], ONE_TOKEN).await;
    let e = market_event(&sse.next_event().await, "trade.created", &id, 32);
    assert_eq!(e["data"]["trade"]["id"], last["bet_id"]);
}

// ---------------------------------------------------------------------------------------------
// The user stream
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn user_stream_shows_the_callers_own_changes_exactly_and_ends_on_logout() {
    let f = Fixture::new().await;
    let market = f.market(2).await;
    let id = id_of(&market);
    let t = f.trader(100 * ONE_TOKEN).await;
    let other = f.trader(100 * ONE_TOKEN).await;

    assert_problem(&f.app.get("/v1/auth/events", None).await, 401, "unauthenticated");
    assert_problem(&f.app.get("/v1/auth/events", Some(&f.provider.key)).await, 401, "unauthenticated");
    assert_problem(&f.app.get("/v1/auth/events", Some("not.a.token")).await, 401, "unauthenticated");

    bet_ok(&f.app, &market, 0, &t, 5 * ONE_TOKEN).await;
    bet_ok(&f.app, &market, 1, &t, 3 * ONE_TOKEN).await;
    // A second session of the same wallet: its logout must not end this one's stream.
    let second = login(&f.app, &f.provider.id, &t.wallet).await;

    let token = t.session.access_token.as_str();
    let mut stream = Sse::user(&f.app.client, &f.app.base, token).await;
    let snapshot = stream.next_event().await;
    assert_eq!(snapshot.event.as_deref(), Some("snapshot"), "{snapshot:?}");
    assert_eq!(snapshot.id, None, "{snapshot:?}");
    let positions = holdings_oldest_first(&f.app, token).await;
    assert_eq!(positions.len(), 2);
    assert_eq!(positions[0]["outcome_id"], outcome(&market, 0));
    assert_eq!(snapshot.json(), json!({ "balances": balances(&f.app, token).await, "positions": positions }));

    let mut market_sse = Sse::market(&f.app.client, &f.app.base, &id, "", &[]).await;
    expect_snapshot(&mut market_sse, 3, &detail(&f.app, &id).await).await;

    // Own bet: trade.created (the market stream's envelope with seq null), balance.updated
    // with the bet's balance_after, position.updated as holdings search shows it.
    let bet = bet_ok(&f.app, &market, 0, &t, 2 * ONE_TOKEN).await;
    let in_market = market_event(&market_sse.next_event().await, "trade.created", &id, 4);
    let mut events = user_events(&mut stream, 3).await;
    let trade = events.remove("trade.created").expect("trade.created").remove(0);
    let mut expected = in_market.clone();
    expected["seq"] = Value::Null;
    assert_eq!(trade, expected);
    assert_eq!(trade["data"]["trade"]["id"], bet["bet_id"]);
    let balance = events.remove("balance.updated").expect("balance.updated").remove(0);
    assert_eq!(balance["data"], json!({ "token_id": f.token_id, "balance": bet["balance_after"] }));
    assert_eq!(bet["balance_after"], (90 * ONE_TOKEN).to_string());
    let position = events.remove("position.updated").expect("position.updated").remove(0);
    assert_eq!(position["data"], json!({ "position": holding(&f.app, token, outcome(&market, 0)).await }));
    assert!(events.is_empty(), "{events:?}");

    // Another wallet's trade does not show; the next event is this wallet's deposit.
    bet_ok(&f.app, &market, 1, &other, 4 * ONE_TOKEN).await;
    market_event(&market_sse.next_event().await, "trade.created", &id, 5);
    marker(&f, &mut stream, &t.wallet.address, 7).await;

    // A sell: the same three.
    let shares = wei(&holding(&f.app, token, outcome(&market, 1)).await["shares"]) / 3;
    let sold = sell(&f.app, &market, 1, &t, shares).await;
    assert_eq!(sold.status, StatusCode::OK, "{}", sold.body);
    let mut events = user_events(&mut stream, 3).await;
    assert_eq!(events["trade.created"][0]["data"]["trade"]["id"], sold.body["transaction_id"]);
    assert_eq!(events["balance.updated"][0]["data"]["balance"], sold.body["balance_after"]);
    let position = events.remove("position.updated").expect("position.updated").remove(0);
    assert_eq!(position["data"], json!({ "position": holding(&f.app, token, outcome(&market, 1)).await }));

    // A withdrawal: withdrawal.completed (the withdrawal response) and balance.updated.
    let withdrawal = f
        .app
        .post("/v1/providers/wallets/withdrawals", Some(&f.provider.key), json!({ "wallet_address": t.wallet.address, "token_id": f.token_id, "amount": ONE_TOKEN.to_string(), "reference": uuid() }))
        .await;
    assert_eq!(withdrawal.status, StatusCode::CREATED, "{}", withdrawal.body);
    let events = user_events(&mut stream, 2).await;
    assert_eq!(events["withdrawal.completed"][0]["data"], withdrawal.body);
    assert_eq!(events["balance.updated"][0]["data"], json!({ "token_id": f.token_id, "balance": withdrawal.body["balance_after"] }));

    // Resolution changes both positions' status; a claim adds claim.completed.
    resolve(&f, &market, 0).await;
    let changed = user_events(&mut stream, 2).await;
    let changed = &changed["position.updated"];
    let now = holdings_oldest_first(&f.app, token).await;
    let mut statuses: Vec<&str> = changed.iter().map(|e| e["data"]["position"]["status"].as_str().unwrap()).collect();
    statuses.sort();
    assert_eq!(statuses, ["lost", "won"]);
    for e in changed {
        let shown = now.iter().find(|h| h["id"] == e["data"]["position"]["id"]).expect("a holding");
        assert_eq!(e["data"], json!({ "position": shown }));
    }
    let won = now.iter().find(|h| h["status"] == "won").unwrap();
    let claim = f
        .app
        .post(&format!("/v1/markets/positions/{}/claim", won["id"].as_str().unwrap()), Some(token), json!({ "session_id": t.session.session_id }))
        .await;
    assert_eq!(claim.status, StatusCode::OK, "{}", claim.body);
    let mut events = user_events(&mut stream, 3).await;
    assert_eq!(events.remove("claim.completed").expect("claim.completed")[0]["data"], claim.body);
    assert_eq!(events.remove("balance.updated").expect("balance.updated")[0]["data"], json!({ "token_id": f.token_id, "balance": claim.body["balance_after"] }));
    let position = events.remove("position.updated").expect("position.updated").remove(0);
    assert_eq!(position["data"]["position"]["status"], "claimed");
    assert_eq!(position["data"], json!({ "position": holding(&f.app, token, outcome(&market, 0)).await }));
    marker(&f, &mut stream, &t.wallet.address, 11).await;

    // Logging out another session of the wallet leaves this stream open.
    assert_eq!(f.app.post("/v1/auth/logout", Some(&second.access_token), json!({})).await.status, StatusCode::OK);
    marker(&f, &mut stream, &t.wallet.address, 13).await;
    // Logging out its own session ends it within a second.
    let out = f.app.post("/v1/auth/logout", Some(token), json!({})).await;
    assert_eq!(out.status, StatusCode::OK, "{}", out.body);
    stream.expect_end(Duration::from_secs(1)).await;
    assert_problem(&f.app.get("/v1/auth/events", Some(token)).await, 401, "unauthenticated");
}

// ---------------------------------------------------------------------------------------------
// The WebSocket
// ---------------------------------------------------------------------------------------------

pub type Ws = WebSocketStream<TcpStream>;

/// Opens `GET /v1/ws` on `base` (`http://host:port`).
pub async fn ws_connect(base: &str) -> Ws {
    let address = base.strip_prefix("http://").expect("an http:// base");
    let tcp = TcpStream::connect(address).await.expect("connect");
    let (ws, response) = timeout(EVENT_WAIT, tokio_tungstenite::client_async(format!("ws://{address}/v1/ws"), tcp))
        .await
        .expect("handshake within 10 s")
        .unwrap_or_else(|e| panic!("WebSocket handshake with {base}: {e:?}"));
    assert_eq!(response.status().as_u16(), 101);
    ws
}

pub async fn ws_send(ws: &mut Ws, message: impl ToString) {
    ws.send(Message::text(message.to_string())).await.expect("send");
}

/// The next text message, pings included.
async fn ws_next_raw(ws: &mut Ws, within: Duration) -> Value {
    let deadline = Instant::now() + within;
    loop {
        match timeout_at(deadline, ws.next()).await {
            Err(_) => panic!("no WebSocket message within {within:?}"),
            Ok(Some(Ok(Message::Text(text)))) => {
                return serde_json::from_str(text.as_str()).unwrap_or_else(|e| panic!("not JSON ({e}): {}", text.as_str()));
            }
            Ok(Some(Ok(Message::Ping(_) | Message::Pong(_)))) => continue,
            other => panic!("expected a text message, got {other:?}"),
        }
    }
}

/// The next text message that is not `{"type":"ping"}`.
pub async fn ws_next(ws: &mut Ws) -> Value {
    loop {
        let message = ws_next_raw(ws, EVENT_WAIT).await;
        if message != json!({ "type": "ping" }) {
            return message;
        }
    }
}

/// No message but pings for `quiet`.
async fn ws_quiet(ws: &mut Ws, quiet: Duration) {
    let deadline = Instant::now() + quiet;
    loop {
        match timeout_at(deadline, ws.next()).await {
            Err(_) => return,
            Ok(Some(Ok(Message::Text(text)))) if serde_json::from_str::<Value>(text.as_str()).ok() == Some(json!({ "type": "ping" })) => continue,
            Ok(Some(Ok(Message::Ping(_) | Message::Pong(_)))) => continue,
            other => panic!("expected silence, got {other:?}"),
        }
    }
}

/// Subscribes to a market: the ack, then exactly `then` (its snapshot, or its replay).
pub async fn ws_subscribe(ws: &mut Ws, request: Value, then: &[Value]) {
    ws_send(ws, &request).await;
    assert_eq!(ws_next(ws).await, json!({ "type": "subscribed", "market_id": request["market_id"] }), "{request}");
    for expected in then {
        assert_eq!(&ws_next(ws).await, expected, "{request}");
    }
}

/// A bad message is answered `{"type":"error","code":code,"detail":...}`.
async fn ws_expect_error(ws: &mut Ws, message: impl ToString, code: &str) {
    let message = message.to_string();
    ws_send(ws, &message).await;
    let answer = ws_next(ws).await;
    assert_eq!(answer["type"], "error", "{message} -> {answer}");
    assert_eq!(answer["code"], code, "{message} -> {answer}");
    assert!(answer["detail"].as_str().is_some_and(|d| !d.is_empty()), "{message} -> {answer}");
}

/// The envelope of a market's event `seq` as its SSE log has it.
async fn logged(app: &TestApp, market_id: &str, seq: u64) -> Value {
    let mut sse = Sse::market(&app.client, &app.base, market_id, &format!("?after_seq={}", seq - 1), &[]).await;
    sse.next_event().await.json()
}

#[tokio::test]
async fn websocket_carries_many_market_subscriptions_and_survives_bad_messages() {
    let f = Fixture::new().await;
    let a = f.market(2).await;
    let b = f.market(3).await;
    let (a_id, b_id) = (id_of(&a), id_of(&b));
    let t = f.trader(100 * ONE_TOKEN).await;
    let mut ws = ws_connect(&f.app.base).await;

    ws_subscribe(&mut ws, json!({ "op": "subscribe", "market_id": a_id }), &[json!({ "type": "snapshot", "market_id": a_id, "seq": 1, "market": a })]).await;
    ws_subscribe(&mut ws, json!({ "op": "subscribe", "market_id": b_id }), &[json!({ "type": "snapshot", "market_id": b_id, "seq": 1, "market": b })]).await;

    // Events of both markets, each exactly the SSE stream's envelope.
    let on_a = bet_ok(&f.app, &a, 0, &t, ONE_TOKEN).await;
    let on_b = bet_ok(&f.app, &b, 2, &t, 2 * ONE_TOKEN).await;
    let mut got = vec![ws_next(&mut ws).await, ws_next(&mut ws).await];
    got.sort_by_key(|m| (m["market_id"] != a_id.as_str()) as u8);
    check_envelope(&got[0], "trade.created", Some(&a_id), Some(2));
    check_envelope(&got[1], "trade.created", Some(&b_id), Some(2));
    assert_eq!(got[0]["data"]["trade"]["id"], on_a["bet_id"]);
    assert_eq!(got[1]["data"]["trade"]["id"], on_b["bet_id"]);
    assert_eq!(got[0], logged(&f.app, &a_id, 2).await);
    assert_eq!(got[1], logged(&f.app, &b_id, 2).await);

    // Unsubscribed, a market's events stop.
    ws_send(&mut ws, json!({ "op": "unsubscribe", "market_id": b_id })).await;
    assert_eq!(ws_next(&mut ws).await, json!({ "type": "unsubscribed", "market_id": b_id }));
    bet_ok(&f.app, &b, 0, &t, ONE_TOKEN).await;
    let on_a = bet_ok(&f.app, &a, 1, &t, ONE_TOKEN).await;
    let next = ws_next(&mut ws).await;
    assert_eq!(next, logged(&f.app, &a_id, 3).await);
    assert_eq!(next["data"]["trade"]["id"], on_a["bet_id"]);
    ws_quiet(&mut ws, Duration::from_millis(300)).await;

    // Bad messages get an error frame and the connection stays.
    ws_expect_error(&mut ws, "not json", "bad_message").await;
    ws_expect_error(&mut ws, json!({ "op": "dance" }), "bad_message").await;
    ws_expect_error(&mut ws, json!({ "op": "subscribe" }), "bad_message").await;
    ws_expect_error(&mut ws, json!({ "op": "subscribe", "market_id": 42 }), "bad_message").await;
    ws_expect_error(&mut ws, json!({ "op": "subscribe", "market_id": a_id, "after_seq": -1 }), "bad_message").await;
    ws_expect_error(&mut ws, json!([1, 2]), "bad_message").await;
    ws_expect_error(&mut ws, json!({ "op": "subscribe", "market_id": uuid() }), "not_found").await;
    ws_expect_error(&mut ws, json!({ "op": "subscribe", "channel": "user" }), "unauthenticated").await;
    ws_expect_error(&mut ws, json!({ "op": "subscribe", "market_id": a_id, "extra": true }), "bad_message").await;
    ws_expect_error(&mut ws, json!({ "op": "unsubscribe", "market_id": b_id }), "not_subscribed").await;
    ws.send(Message::binary(vec![1u8, 2, 3])).await.unwrap();
    let answer = ws_next(&mut ws).await;
    assert_eq!((answer["type"].as_str(), answer["code"].as_str()), (Some("error"), Some("bad_message")), "{answer}");

    // Still subscribed to a, and a resubscription to b resumes after a seq without a snapshot.
    let on_a = bet_ok(&f.app, &a, 0, &t, ONE_TOKEN).await;
    let next = ws_next(&mut ws).await;
    check_envelope(&next, "trade.created", Some(&a_id), Some(4));
    assert_eq!(next["data"]["trade"]["id"], on_a["bet_id"]);
    ws_subscribe(&mut ws, json!({ "op": "subscribe", "market_id": b_id, "after_seq": 2 }), &[logged(&f.app, &b_id, 3).await]).await;
    let on_b = bet_ok(&f.app, &b, 1, &t, ONE_TOKEN).await;
    let next = ws_next(&mut ws).await;
    check_envelope(&next, "trade.created", Some(&b_id), Some(4));
    assert_eq!(next["data"]["trade"]["id"], on_b["bet_id"]);
    ws_quiet(&mut ws, Duration::from_millis(300)).await;
    ws.close(None).await.unwrap();
}

#[tokio::test]
async fn websocket_user_channel_needs_auth_then_carries_the_callers_events() {
    let f = Fixture::new().await;
    let market = f.market(2).await;
    let t = f.trader(100 * ONE_TOKEN).await;
    let other = f.trader(100 * ONE_TOKEN).await;
    bet_ok(&f.app, &market, 1, &t, ONE_TOKEN).await;
    let token = t.session.access_token.as_str();
    let mut ws = ws_connect(&f.app.base).await;
    ws_expect_error(&mut ws, json!({ "op": "subscribe", "channel": "user" }), "unauthenticated").await;
    ws_expect_error(&mut ws, json!({ "op": "auth", "access_token": "not.a.token" }), "unauthenticated").await;
    ws_expect_error(&mut ws, json!({ "op": "auth", "access_token": f.provider.key }), "unauthenticated").await;

    ws_send(&mut ws, json!({ "op": "auth", "access_token": token })).await;
    assert_eq!(ws_next(&mut ws).await, json!({ "type": "authenticated", "wallet_id": t.wallet_id }));
    ws_send(&mut ws, json!({ "op": "subscribe", "channel": "user" })).await;
    assert_eq!(ws_next(&mut ws).await, json!({ "type": "subscribed", "channel": "user" }));
    let expected = json!({ "type": "snapshot", "channel": "user", "balances": balances(&f.app, token).await, "positions": holdings_oldest_first(&f.app, token).await });
    assert_eq!(ws_next(&mut ws).await, expected);

    bet_ok(&f.app, &market, 0, &other, ONE_TOKEN).await;
    let bet = bet_ok(&f.app, &market, 0, &t, 2 * ONE_TOKEN).await;
    let mut got = HashMap::new();
    for _ in 0..3 {
        let message = ws_next(&mut ws).await;
        got.insert(message["type"].as_str().unwrap_or_default().to_string(), message);
    }
    let mut trade = logged(&f.app, &id_of(&market), 4).await;
    trade["seq"] = Value::Null;
    assert_eq!(got["trade.created"], trade, "the caller's own trade only, seq null");
    assert_eq!(got["trade.created"]["data"]["trade"]["id"], bet["bet_id"]);
    check_envelope(&got["balance.updated"], "balance.updated", None, None);
    assert_eq!(got["balance.updated"]["data"], json!({ "token_id": f.token_id, "balance": bet["balance_after"] }));
    check_envelope(&got["position.updated"], "position.updated", Some(&id_of(&market)), None);
    assert_eq!(got["position.updated"]["data"], json!({ "position": holding(&f.app, token, outcome(&market, 0)).await }));
    ws_quiet(&mut ws, Duration::from_millis(300)).await;

    // Unsubscribed from the user channel, its events stop; logout ends nothing on a socket
    // without the user channel.
    ws_send(&mut ws, json!({ "op": "unsubscribe", "channel": "user" })).await;
    assert_eq!(ws_next(&mut ws).await, json!({ "type": "unsubscribed", "channel": "user" }));
    bet_ok(&f.app, &market, 1, &t, ONE_TOKEN).await;
    ws_quiet(&mut ws, Duration::from_millis(300)).await;

    // Subscribed again, a logout ends the user channel with `session_ended`; the socket stays.
    ws_send(&mut ws, json!({ "op": "subscribe", "channel": "user" })).await;
    assert_eq!(ws_next(&mut ws).await, json!({ "type": "subscribed", "channel": "user" }));
    assert_eq!(ws_next(&mut ws).await["type"], "snapshot");
    let started = Instant::now();
    assert_eq!(f.app.post("/v1/auth/logout", Some(token), json!({})).await.status, StatusCode::OK);
    let ended = ws_next(&mut ws).await;
    assert!(started.elapsed() < Duration::from_millis(1500), "session_ended after {:?}", started.elapsed());
    assert_eq!((ended["type"].as_str(), ended["code"].as_str()), (Some("error"), Some("session_ended")), "{ended}");
    ws_send(&mut ws, json!({ "op": "subscribe", "market_id": id_of(&market) })).await;
    assert_eq!(ws_next(&mut ws).await, json!({ "type": "subscribed", "market_id": id_of(&market) }));
    assert_eq!(ws_next(&mut ws).await["type"], "snapshot");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_creator_sees_every_fee_credited_with_the_balance_after_it() {
    const MARKETS: usize = 4;
    const TRADERS: usize = 8;
    let f = Fixture::new().await;
    let creator = f.trader(5 * ONE_TOKEN).await;
    let mut body = f.market_body(2);
    body["creator_wallet_id"] = json!(creator.wallet_id);
    let mut markets = Vec::new();
    for _ in 0..MARKETS {
        let r = f.create_market(body.clone()).await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
        markets.push(f.app.get(&format!("/v1/markets/{}", r.body["market"]["id"].as_str().unwrap()), None).await.body);
    }
    let client = reqwest::Client::new();
    let mut stream = Sse::user(&client, &f.app.base, &creator.session.access_token).await;
    assert_eq!(stream.next_event().await.event.as_deref(), Some("snapshot"));
    let mut traders = Vec::new();
    for _ in 0..TRADERS {
        traders.push(f.trader(10 * ONE_TOKEN).await);
    }
    // Every trader on every market at once: the trades share group commits (SQLite) and
    // batches (PostgreSQL), each crediting the creator's wallet.
    let bets = traders.iter().flat_map(|t| markets.iter().map(move |m| (t, m))).map(|(t, m)| {
        bet_on(&f.app, m["id"].as_str().unwrap(), m["outcomes"][0]["id"].as_str().unwrap(), t, ONE_TOKEN)
    });
    for r in futures_util::future::join_all(bets).await {
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    }
    let units = |field: &str| hanson::domain::fees::parse_percentage(&markets[0][field].to_string()).unwrap();
    let fee = hanson::domain::fees::split_fee(ONE_TOKEN, units("creator_fee_percentage"), units("platform_fee_percentage")).creator;
    assert!(fee > 0);
    let mut balances = Vec::new();
    for _ in 0..MARKETS * TRADERS {
        let frame = stream.next_event().await;
        assert_eq!(frame.event.as_deref(), Some("balance.updated"), "{frame:?}");
        let envelope = frame.json();
        assert_eq!(envelope["data"]["token_id"], json!(f.token_id));
        balances.push(envelope["data"]["balance"].as_str().unwrap().parse::<u128>().unwrap());
    }
    stream.assert_quiet(Duration::from_millis(300)).await;
    // One event per trade, each with the balance right after its fee; the trades of one
    // commit are published by their own requests, in any order.
    balances.sort_unstable();
    let expected: Vec<u128> = (1..=(MARKETS * TRADERS) as u128).map(|k| 5 * ONE_TOKEN + k * fee).collect();
    assert_eq!(balances, expected);
    let (passed, report) = crate::trading::audit(&f.app);
    assert!(passed, "{report}");
}

// ---------------------------------------------------------------------------------------------
// A real `hanson serve`: pings, limits, shutdown
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn streams_get_pings_at_the_configured_interval() {
    let f = Fixture::new().await;
    let market = f.market(2).await;
    let t = f.trader(ONE_TOKEN).await;
    let serve = ServeProcess::start_flags(&f.app.database_url, &["--stream-ping-secs", "1"]).await;
    let client = reqwest::Client::new();
    let mut sse = Sse::market(&client, &serve.base, &id_of(&market), "", &[]).await;
    expect_snapshot(&mut sse, 1, &market).await;
    let mut user = Sse::user(&client, &serve.base, &t.session.access_token).await;
    assert_eq!(user.next_event().await.event.as_deref(), Some("snapshot"));
    // Connected now, so that its pings are waiting once the SSE ones have been read.
    let mut ws = ws_connect(&serve.base).await;
    for stream in [&mut sse, &mut user] {
        for _ in 0..2 {
            let started = Instant::now();
            let frame = stream.next_frame(Duration::from_millis(2500)).await.expect("open");
            assert!(frame.is_comment(), "only pings on an idle stream: {frame:?}");
            assert_eq!(frame.comments, ["ping"]);
            // Every second, give or take a loaded test machine.
            assert!(started.elapsed() <= Duration::from_millis(2000), "a ping after {:?}", started.elapsed());
        }
    }
    for _ in 0..2 {
        assert_eq!(ws_next_raw(&mut ws, Duration::from_millis(2500)).await, json!({ "type": "ping" }));
    }
}

#[tokio::test]
async fn streams_beyond_the_limits_get_429() {
    let f = Fixture::new().await;
    let market = f.market(2).await;
    let id = id_of(&market);
    let client = reqwest::Client::new();
    let refused = |base: String| {
        let (client, id) = (client.clone(), id.clone());
        async move {
            let r = client.get(format!("{base}/v1/markets/{id}/events")).send().await.unwrap();
            assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
            assert_eq!(r.headers().get("content-type").and_then(|v| v.to_str().ok()), Some("application/problem+json"));
            let retry: u64 = r.headers().get("retry-after").expect("Retry-After").to_str().unwrap().parse().expect("Retry-After in seconds");
            assert!(retry >= 1, "Retry-After {retry}");
            let body: Value = r.json().await.unwrap();
            assert_eq!(body["status"], 429, "{body}");
            assert_eq!(body["code"], "rate_limited", "{body}");
        }
    };
    for flags in [["--max-streams-per-ip", "2"], ["--max-streams", "2"]] {
        let serve = ServeProcess::start_flags(&f.app.database_url, &[flags[0], flags[1], "--stream-ping-secs", "1"]).await;
        let mut first = Sse::market(&client, &serve.base, &id, "", &[]).await;
        expect_snapshot(&mut first, 1, &market).await;
        // A WebSocket counts as a stream too.
        let mut ws = ws_connect(&serve.base).await;
        ws_subscribe(&mut ws, json!({ "op": "subscribe", "market_id": id }), &[json!({ "type": "snapshot", "market_id": id, "seq": 1, "market": market })]).await;
        refused(serve.base.clone()).await;
        let address = serve.base.strip_prefix("http://").unwrap();
        let tcp = TcpStream::connect(address).await.unwrap();
        match tokio_tungstenite::client_async(format!("ws://{address}/v1/ws"), tcp).await {
            Err(tokio_tungstenite::tungstenite::Error::Http(response)) => assert_eq!(response.status().as_u16(), 429, "{flags:?}"),
            other => panic!("{flags:?}: a WebSocket beyond the limit: {:?}", other.map(|(_, r)| r.status())),
        }
        // Other requests are not limited.
        assert_eq!(client.get(format!("{}/v1/markets/{id}", serve.base)).send().await.unwrap().status(), StatusCode::OK);
        // Once a stream closes, its slot is free again.
        drop(first);
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let r = client.get(format!("{}/v1/markets/{id}/events", serve.base)).send().await.unwrap();
            if r.status() == StatusCode::OK {
                break;
            }
            assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
            assert!(Instant::now() < deadline, "{flags:?}: the slot of a closed stream was not freed within 5 s");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscriber_too_far_behind_is_disconnected_and_resumes_where_it_stopped() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    // Each update's event carries 60 KB of metadata: together far more than what is on its
    // way to one connection (the kernel's few MB, and a WebSocket's queue of 256 messages),
    // so the subscribers fall behind.
    const UPDATES: u64 = 420;
    let f = Fixture::new().await;
    let market = f.market(2).await;
    let id = id_of(&market);
    let serve = ServeProcess::start_flags(&f.app.database_url, &["--stream-lag-limit", "10"]).await;

    // An SSE subscriber that stops reading after its snapshot.
    let address = serve.base.strip_prefix("http://").unwrap();
    let mut tcp = TcpStream::connect(address).await.unwrap();
    tcp.write_all(format!("GET /v1/markets/{id}/events HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n").as_bytes()).await.unwrap();
    let mut received = Vec::new();
    timeout(EVENT_WAIT, async {
        while !String::from_utf8_lossy(&received).contains("event: snapshot") {
            let mut buf = [0u8; 4096];
            let n = tcp.read(&mut buf).await.unwrap();
            assert!(n > 0, "the stream ended before its snapshot");
            received.extend_from_slice(&buf[..n]);
        }
    })
    .await
    .expect("a snapshot");
    // And a WebSocket subscription that stops reading after its snapshot.
    let mut ws = ws_connect(&serve.base).await;
    ws_send(&mut ws, json!({ "op": "subscribe", "market_id": id })).await;
    assert_eq!(ws_next(&mut ws).await["type"], "subscribed");
    assert_eq!(ws_next(&mut ws).await["type"], "snapshot");

    // Writes go on while they do not read: they are never waited for.
    let client = reqwest::Client::new();
    let padding = "x".repeat(60_000);
    for n in 0..UPDATES {
        let body = json!({ "metadata": { "note": padding, "n": n } });
        let r = client.put(format!("{}/v1/providers/markets/{id}", serve.base)).bearer_auth(&f.provider.key).json(&body).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::OK);
    }
    let last_seq = UPDATES + 1;

    // Reading again, it gets what was already on its way; then the server ends the stream.
    let ended = timeout(Duration::from_secs(30), tcp.read_to_end(&mut received)).await;
    let text = String::from_utf8_lossy(&received);
    let seqs: Vec<u64> = text.lines().filter_map(|l| l.strip_prefix("id: ")).map(|v| v.trim().parse().unwrap()).collect();
    assert!(matches!(ended, Ok(Ok(_))), "the server did not end the stream: {ended:?}; it got through {:?} of {last_seq}", seqs.last());
    assert_eq!(seqs.first(), Some(&1), "the snapshot's id first");
    assert!(seqs.windows(2).all(|w| w[1] == w[0] + 1), "what it got has no gap: {seqs:?}");
    let got = *seqs.last().unwrap();
    assert!(got + 10 < last_seq, "ended more than 10 events behind: it got through {got} of {last_seq}");

    // It resumes with Last-Event-ID and gets exactly the events it missed.
    let mut resumed = Sse::market(&client, &serve.base, &id, "", &[("last-event-id", &got.to_string())]).await;
    for seq in got + 1..=last_seq {
        let e = market_event(&resumed.next_event().await, "market.updated", &id, seq);
        assert_eq!(e["data"]["metadata"]["n"], seq - 2);
    }
    resumed.assert_quiet(Duration::from_millis(300)).await;

    // The WebSocket subscription ends with `lagged` after what was on its way; the connection
    // stays, and subscribing again with after_seq replays exactly what it missed.
    let mut got = 1;
    let lagged = loop {
        let message = ws_next(&mut ws).await;
        if message["type"] == "error" {
            break message;
        }
        check_envelope(&message, "market.updated", Some(&id), Some(got + 1));
        got += 1;
    };
    assert_eq!((lagged["code"].as_str(), lagged["market_id"].as_str()), (Some("lagged"), Some(id.as_str())), "{lagged}");
    assert!(got + 10 < last_seq, "ended more than 10 events behind: it got through {got} of {last_seq}");
    ws_send(&mut ws, json!({ "op": "subscribe", "market_id": id, "after_seq": got })).await;
    assert_eq!(ws_next(&mut ws).await, json!({ "type": "subscribed", "market_id": id }));
    for seq in got + 1..=last_seq {
        check_envelope(&ws_next(&mut ws).await, "market.updated", Some(&id), Some(seq));
    }
    ws_quiet(&mut ws, Duration::from_millis(300)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_ends_every_stream_cleanly_and_the_server_exits() {
    let f = Fixture::new().await;
    let market = f.market(2).await;
    let id = id_of(&market);
    let t = f.trader(10 * ONE_TOKEN).await;
    let mut serve = ServeProcess::start_flags(&f.app.database_url, &[]).await;
    let client = reqwest::Client::new();
    let mut sse = Sse::market(&client, &serve.base, &id, "", &[]).await;
    expect_snapshot(&mut sse, 1, &market).await;
    let mut user = Sse::user(&client, &serve.base, &t.session.access_token).await;
    assert_eq!(user.next_event().await.event.as_deref(), Some("snapshot"));
    let mut ws = ws_connect(&serve.base).await;
    ws_subscribe(&mut ws, json!({ "op": "subscribe", "market_id": id }), &[json!({ "type": "snapshot", "market_id": id, "seq": 1, "market": market })]).await;

    // A trade through this server reaches all three first.
    let r = client
        .post(format!("{}/v1/markets/{id}/bet", serve.base))
        .bearer_auth(&t.session.access_token)
        .json(&json!({ "session_id": t.session.session_id, "outcome_id": outcome(&market, 0), "amount": ONE_TOKEN.to_string() }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let envelope = market_event(&sse.next_event().await, "trade.created", &id, 2);
    assert_eq!(ws_next(&mut ws).await, envelope);
    user_events(&mut user, 3).await;

    serve.terminate();
    sse.expect_end(Duration::from_secs(5)).await;
    user.expect_end(Duration::from_secs(5)).await;
    let closed = timeout(Duration::from_secs(5), async {
        loop {
            match ws.next().await {
                Some(Ok(Message::Close(frame))) => return frame,
                Some(Ok(Message::Text(text))) if serde_json::from_str::<Value>(text.as_str()).ok() == Some(json!({ "type": "ping" })) => continue,
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
                other => panic!("expected a close frame, got {other:?}"),
            }
        }
    })
    .await
    .expect("the WebSocket is closed within 5 s");
    let frame = closed.expect("the close frame carries a code");
    assert_eq!((u16::from(frame.code), frame.reason.as_str()), (1001, "server shutting down"));
    let status = serve.exited_within(Duration::from_secs(10)).await;
    assert!(status.success(), "hanson serve exited with {status:?}");
}

#[tokio::test]
async fn a_stream_opened_once_shutdown_has_begun_ends_at_once() {
    let app = TestApp::spawn().await;
    let hub = hanson::events::Hub::new(hanson::store::Store::open(&app.database_url).unwrap(), Default::default());
    let mut before = hub.closing();
    hub.close();
    let mut after = hub.closing();
    for closing in [&mut before, &mut after] {
        timeout(Duration::from_secs(1), closing.changed()).await.expect("sees the shutdown at once").expect("the hub is alive");
        assert!(*closing.borrow());
    }
}

// ---------------------------------------------------------------------------------------------
// Documents
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn the_streams_are_documented() {
    let app = TestApp::spawn().await;
    let r = app.get("/v1/asyncapi.json", None).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.headers.get("content-type").and_then(|v| v.to_str().ok()), Some("application/json"));
    let doc = &r.body;
    assert!(doc["asyncapi"].as_str().is_some_and(|v| v.starts_with("3.0")), "{}", doc["asyncapi"]);
    assert!(doc["channels"].as_object().is_some_and(|c| !c.is_empty()));
    let text = doc.to_string();
    for name in [
        "/v1/markets/{market_id}/events",
        "/v1/auth/events",
        "/v1/ws",
        "snapshot",
        "market.created",
        "market.updated",
        "outcome.created",
        "outcome.updated",
        "trade.created",
        "market.closed",
        "market.resolved",
        "market.cancelled",
        "claim.completed",
        "balance.updated",
        "position.updated",
        "subscribed",
        "unsubscribed",
        "bad_message",
    ] {
        assert!(text.contains(name), "the AsyncAPI document does not mention {name}");
    }
    let openapi = app.get("/v1/openapi.json", None).await.body;
    for path in ["/v1/markets/{market_id}/events", "/v1/auth/events"] {
        let content = &openapi["paths"][path]["get"]["responses"]["200"]["content"];
        assert!(content.get("text/event-stream").is_some(), "{path} is not documented as an event stream: {content}");
    }
}
