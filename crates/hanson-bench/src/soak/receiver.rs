//! The soak's webhook receiver: endpoints `/e0`..`/eN` in this process. The last one fails
//! half the time: each attempt is answered 500 with probability 1/2, but never more than
//! [`MAX_FAILURES`] times for one event, so a retry schedule of that length delivers
//! everything and the run can check that every event arrived.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use serde_json::Value;

use crate::env::Result;
use crate::rng::Rng;

/// Refusals in a row one event may get from the failing endpoint.
pub(crate) const MAX_FAILURES: u8 = 3;

#[derive(Default)]
pub(crate) struct Endpoint {
    /// Event ids answered 2xx.
    pub(crate) delivered: HashSet<String>,
    /// `trade.created` events among them.
    pub(crate) trades: u64,
    /// 2xx receipts of an id already delivered.
    pub(crate) duplicates: u64,
    /// Attempts answered 500.
    pub(crate) refused: u64,
    refusals: HashMap<String, u8>,
}

#[derive(Default)]
pub(crate) struct Received {
    pub(crate) endpoints: Vec<Endpoint>,
    /// 2xx receipts and refusals since the last sample.
    pub(crate) delivered_since: u64,
    pub(crate) refused_since: u64,
}

struct Inner {
    received: Mutex<Received>,
    rng: Mutex<Rng>,
    failing: usize,
}

#[derive(Clone)]
pub(crate) struct Receiver {
    inner: Arc<Inner>,
    pub(crate) base: String,
}

async fn receive(State(inner): State<Arc<Inner>>, uri: axum::http::Uri, headers: HeaderMap, body: axum::body::Bytes) -> StatusCode {
    let Some(index) = uri.path().strip_prefix("/e").and_then(|i| i.parse::<usize>().ok()) else {
        return StatusCode::NOT_FOUND;
    };
    let id = headers.get("webhook-id").and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
    let refuse = index == inner.failing && inner.rng.lock().unwrap().unit() < 0.5;
    let mut r = inner.received.lock().unwrap();
    let Some(endpoint) = r.endpoints.get_mut(index) else {
        return StatusCode::NOT_FOUND;
    };
    if refuse {
        let refusals = endpoint.refusals.entry(id.clone()).or_default();
        if *refusals < MAX_FAILURES {
            *refusals += 1;
            endpoint.refused += 1;
            r.refused_since += 1;
            return StatusCode::INTERNAL_SERVER_ERROR;
        }
    }
    endpoint.refusals.remove(&id);
    if endpoint.delivered.insert(id) {
        let kind = serde_json::from_slice::<Value>(&body).ok().and_then(|v| v["type"].as_str().map(str::to_string));
        if kind.as_deref() == Some("trade.created") {
            endpoint.trades += 1;
        }
    } else {
        endpoint.duplicates += 1;
    }
    r.delivered_since += 1;
    StatusCode::NO_CONTENT
}

impl Receiver {
    /// Listens on a free loopback port with `endpoints` endpoints, the last one failing.
    pub(crate) async fn start(endpoints: usize) -> Result<Receiver> {
        let received = Received { endpoints: (0..endpoints).map(|_| Endpoint::default()).collect(), ..Default::default() };
        let inner = Arc::new(Inner { received: Mutex::new(received), rng: Mutex::new(Rng::new()), failing: endpoints.saturating_sub(1) });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let base = format!("http://{}", listener.local_addr()?);
        let app = axum::Router::new().fallback(axum::routing::post(receive)).with_state(inner.clone());
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Receiver { inner, base })
    }

    pub(crate) fn url(&self, index: usize) -> String {
        format!("{}/e{index}", self.base)
    }

    pub(crate) fn with<T>(&self, f: impl FnOnce(&mut Received) -> T) -> T {
        f(&mut self.inner.received.lock().unwrap())
    }

    /// Whether every endpoint has the same events and `trades` trade events among them.
    pub(crate) fn complete(&self, trades: u64) -> bool {
        self.with(|r| {
            let first = &r.endpoints[0].delivered;
            r.endpoints.iter().all(|e| e.trades == trades && e.delivered == *first)
        })
    }
}
