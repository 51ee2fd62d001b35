//! A webhook receiver on a random local port, and the settings and calls the webhook tests
//! share. Every body it receives is checked against the documents (`contract::asyncapi`):
//! a mismatch is recorded as it arrives and fails the test when it next reads what arrived.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode as AxumStatus};
use axum::response::IntoResponse;
use reqwest::StatusCode;
use serde_json::{json, Value};

use super::app::TestApp;
use super::library::{SenderSettings, Settings};
use crate::contract::asyncapi;

/// One request the receiver got.
#[derive(Debug, Clone)]
pub(crate) struct Received {
    pub path: String,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
    pub at: Instant,
}

impl Received {
    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("a JSON body")
    }

    pub(crate) fn header(&self, name: &str) -> &str {
        self.headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default()
    }
}

/// How the receiver answers a path: a list of statuses (with Retry-After seconds) used in
/// turn, the last one for ever after.
pub(crate) type Script = Vec<(u16, Option<u64>)>;

#[derive(Default)]
struct ReceiverState {
    received: Vec<Received>,
    /// Bodies that do not match the documents, with why.
    mismatches: Vec<String>,
    scripts: std::collections::HashMap<String, Script>,
    answered: std::collections::HashMap<String, usize>,
}

/// A webhook receiver on a random local port: records every request and answers 200 unless
/// a script for the path says otherwise.
#[derive(Clone)]
pub(crate) struct Receiver {
    pub base: String,
    state: Arc<Mutex<ReceiverState>>,
}

async fn receive(State(state): State<Arc<Mutex<ReceiverState>>>, uri: axum::http::Uri, headers: HeaderMap, body: axum::body::Bytes) -> axum::response::Response {
    let path = uri.path().to_string();
    let mut s = state.lock().unwrap();
    let checked = match (serde_json::from_slice::<Value>(&body), asyncapi::try_get()) {
        (Ok(json), Some(document)) => document.webhook_errors(&json),
        (Ok(_), None) => Err("the AsyncAPI document is not loaded".to_string()),
        (Err(e), _) => Err(format!("a webhook body that is not JSON ({e}): {}", String::from_utf8_lossy(&body))),
    };
    if let Err(mismatch) = checked {
        s.mismatches.push(format!("{path}: {mismatch}"));
    }
    s.received.push(Received { path: path.clone(), headers, body: body.to_vec(), at: Instant::now() });
    let n = *s.answered.entry(path.clone()).or_default();
    *s.answered.get_mut(&path).unwrap() += 1;
    let (status, retry_after) = s.scripts.get(&path).and_then(|script| script.get(n).or(script.last()).copied()).unwrap_or((200, None));
    let status = AxumStatus::from_u16(status).unwrap();
    match retry_after {
        Some(secs) => (status, [("retry-after", secs.to_string())]).into_response(),
        None => status.into_response(),
    }
}

impl Receiver {
    pub(crate) async fn start() -> Receiver {
        Self::on(tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap()).await
    }

    pub(crate) async fn on(listener: tokio::net::TcpListener) -> Receiver {
        let state = Arc::new(Mutex::new(ReceiverState::default()));
        let base = format!("http://{}", listener.local_addr().unwrap());
        let app = axum::Router::new().fallback(axum::routing::post(receive)).with_state(state.clone());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Receiver { base, state }
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub(crate) fn script(&self, path: &str, script: Script) {
        self.state.lock().unwrap().scripts.insert(path.to_string(), script);
    }

    /// What `path` received so far; fails the test if any body did not match the documents.
    pub(crate) fn received(&self, path: &str) -> Vec<Received> {
        let s = self.state.lock().unwrap();
        assert!(s.mismatches.is_empty(), "{}", s.mismatches.join("\n"));
        s.received.iter().filter(|r| r.path == path).cloned().collect()
    }

    /// Waits until `path` has received `count` requests (at most `within`).
    pub(crate) async fn wait_for(&self, path: &str, count: usize, within: Duration) -> Vec<Received> {
        let deadline = Instant::now() + within;
        loop {
            let got = self.received(path);
            if got.len() >= count {
                return got;
            }
            assert!(Instant::now() < deadline, "{path}: {} of {count} requests within {within:?}: {got:?}", got.len());
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

pub(crate) fn webhook_settings(schedule: &str) -> Settings {
    Settings {
        webhooks: SenderSettings { schedule: schedule.parse().unwrap(), allow_private: true },
        ..Settings::default()
    }
}

pub(crate) async fn create_endpoint(app: &TestApp, key: &str, url: &str, types: &[&str]) -> Value {
    let r = app.post("/v1/providers/webhooks", Some(key), json!({ "url": url, "event_types": types })).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    r.body
}

