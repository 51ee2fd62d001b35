//! A Server-Sent Events client for the market and user streams: bodies are read with
//! `reqwest::Response::chunk()` and split into frames here. Every frame that is not a comment
//! is checked against the AsyncAPI document (`contract::asyncapi`) as it is read, whatever
//! the test then does with it. Also the envelope checks the stream tests share.

use std::collections::BTreeSet;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{json, Value};
use tokio::time::{timeout, timeout_at, Instant};

use crate::contract::asyncapi::{self, Stream};

/// How long any single expected event may take (generous: the suite runs tests in parallel
/// on two cores).
pub(crate) const EVENT_WAIT: Duration = Duration::from_secs(10);

/// One SSE frame: its fields, and its comment lines (`: ping`).
#[derive(Debug, Clone, Default)]
pub(crate) struct Frame {
    pub event: Option<String>,
    pub id: Option<String>,
    pub data: Option<String>,
    pub comments: Vec<String>,
}

impl Frame {
    pub(crate) fn is_comment(&self) -> bool {
        self.event.is_none() && self.id.is_none() && self.data.is_none()
    }

    pub(crate) fn json(&self) -> Value {
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
pub(crate) struct Sse {
    response: reqwest::Response,
    buffer: Vec<u8>,
    /// Set once the body has ended: `Ok` for a clean end, `Err` for a broken one.
    ended: Option<Result<(), String>>,
    what: String,
    /// Which stream of the AsyncAPI document its events are checked as.
    stream: Stream,
}

impl Sse {
    /// GETs `url` as an event stream of `stream`; it must answer 200 `text/event-stream`.
    async fn open(stream: Stream, client: &reqwest::Client, base: &str, path: &str, bearer: Option<&str>, headers: &[(&str, &str)]) -> Sse {
        asyncapi::load(base).await;
        let url = &format!("{base}{path}");
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
        Sse { response, buffer: Vec::new(), ended: None, what: url.to_string(), stream }
    }

    /// A market's stream; `query` is appended to the path (`?after_seq=3` or "").
    pub(crate) async fn market(client: &reqwest::Client, base: &str, market_id: &str, query: &str, headers: &[(&str, &str)]) -> Sse {
        Sse::open(Stream::Market, client, base, &format!("/v1/markets/{market_id}/events{query}"), None, headers).await
    }

    /// A market's ticker.
    pub(crate) async fn ticker(client: &reqwest::Client, base: &str, market_id: &str) -> Sse {
        Sse::open(Stream::Ticker, client, base, &format!("/v1/markets/{market_id}/ticker"), None, &[]).await
    }

    /// The user stream of the wallet that `token` belongs to.
    pub(crate) async fn user(client: &reqwest::Client, base: &str, token: &str) -> Sse {
        Sse::open(Stream::User, client, base, "/v1/auth/events", Some(token), &[]).await
    }

    /// Holds an event (a frame that is not a comment) against the AsyncAPI document: the
    /// message of its stream named by its `event:` line, with its `data:` as the payload.
    fn check(&self, frame: &Frame) {
        if frame.is_comment() {
            return;
        }
        let name = frame.event.as_deref().unwrap_or_else(|| panic!("{}: an event without an event line: {frame:?}", self.what));
        let data = frame.data.as_deref().unwrap_or_else(|| panic!("{}: an event without data: {frame:?}", self.what));
        let payload: Value = serde_json::from_str(data).unwrap_or_else(|e| panic!("{}: data is not JSON ({e}): {data}", self.what));
        asyncapi::get().check(self.stream, name, &payload);
    }

    async fn try_next_frame(&mut self, deadline: Instant) -> Next {
        loop {
            if let Some(end) = self.buffer.windows(2).position(|w| w == b"\n\n") {
                let bytes: Vec<u8> = self.buffer.drain(..end + 2).collect();
                let text = String::from_utf8(bytes[..end].to_vec()).expect("frames are UTF-8");
                let frame = parse_frame(&text);
                self.check(&frame);
                return Next::Frame(frame);
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
    pub(crate) async fn next_frame(&mut self, within: Duration) -> Option<Frame> {
        match self.try_next_frame(Instant::now() + within).await {
            Next::Frame(frame) => Some(frame),
            Next::Ended => None,
            Next::TimedOut => panic!("{}: no frame within {within:?}", self.what),
        }
    }

    /// The next frame that is not a comment, within `within`.
    pub(crate) async fn next_event_within(&mut self, within: Duration) -> Frame {
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

    pub(crate) async fn next_event(&mut self) -> Frame {
        self.next_event_within(EVENT_WAIT).await
    }

    /// No event (comments aside) for `quiet`, and the stream still open.
    pub(crate) async fn assert_quiet(&mut self, quiet: Duration) {
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
    pub(crate) async fn skip_to_end(&mut self, within: Duration) {
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
    pub(crate) async fn expect_end(&mut self, within: Duration) {
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

// Envelopes and the values they must equal

fn seq_value(seq: Option<u64>) -> Value {
    seq.map_or(Value::Null, |s| json!(s))
}

/// `{id, type, timestamp, market_id, seq, data}`, with a v7 UUID and a UTC timestamp.
pub(crate) fn check_envelope(envelope: &Value, kind: &str, market_id: Option<&str>, seq: Option<u64>) {
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
pub(crate) fn market_event(frame: &Frame, kind: &str, market_id: &str, seq: u64) -> Value {
    assert_eq!(frame.event.as_deref(), Some(kind), "{frame:?}");
    assert_eq!(frame.id.as_deref(), Some(seq.to_string().as_str()), "the id line is the seq: {frame:?}");
    let envelope = frame.json();
    check_envelope(&envelope, kind, Some(market_id), Some(seq));
    envelope
}

/// A user stream frame: no `id` line, `seq` null.
pub(crate) fn user_event(frame: &Frame, kind: &str, market_id: Option<&str>) -> Value {
    assert_eq!(frame.event.as_deref(), Some(kind), "{frame:?}");
    assert_eq!(frame.id, None, "user stream frames have no id line: {frame:?}");
    let envelope = frame.json();
    check_envelope(&envelope, kind, market_id, None);
    envelope
}

/// The market stream's first frame: `snapshot`, `id` = seq, data `{seq, market}`.
pub(crate) async fn expect_snapshot(sse: &mut Sse, seq: u64, market: &Value) {
    let frame = sse.next_event().await;
    assert_eq!(frame.event.as_deref(), Some("snapshot"), "{frame:?}");
    assert_eq!(frame.id.as_deref(), Some(seq.to_string().as_str()), "{frame:?}");
    assert_eq!(frame.json(), json!({ "seq": seq, "market": market }));
}

/// `[{outcome_id, price}]` of a market detail, in its outcome order.
pub(crate) fn prices_of(detail: &Value) -> Value {
    detail["outcomes"].as_array().unwrap().iter().map(|o| json!({ "outcome_id": o["id"], "price": o["current_price"] })).collect()
}
