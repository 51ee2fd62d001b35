//! Bets and sells forwarded to the node that runs the trades, when several nodes share one
//! PostgreSQL database (`store::postgres::leader`). Each node's trade batches lock the
//! database in turns, and a batch after another node's must read again what that one wrote;
//! with every trade run on one node, its batches stay whole and its kept copies stay good
//! (`docs/architecture.md`, "Forwarding trades to one node").
//!
//! The request goes on as the client sent it (the leader authenticates it, keeps its
//! idempotency key, and so on), with the client's address and the leader's key in two
//! headers of our own: with the key, the leader takes the address as the client's and skips
//! the rate limits this node has already applied. A request that cannot reach the leader
//! (no connection) runs here, as every node can run any trade; one that reached it and got
//! no answer fails with 503, as its trade may have been made (retry it with the same
//! `Idempotency-Key`).
//!
//! One trade to a request: gathering a follower's trades into one request to the leader
//! saved CPU only by making them wait for it, and lost more than it saved.

use std::net::IpAddr;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;
use tokio::sync::watch;

use super::request_meta::{ClientIp, RequestId, MAX_BODY_BYTES, REQUEST_ID_HEADER};
use crate::error::Error;
use crate::store::postgres::leader::{Leader, Leadership};
use crate::store::Backend;

/// The leader's key, on a request another node forwards.
pub(crate) static FORWARD_KEY_HEADER: HeaderName = HeaderName::from_static("hanson-forward-key");
/// The client's address, on a request another node forwards.
pub(crate) static CLIENT_IP_HEADER: HeaderName = HeaderName::from_static("hanson-client-ip");
/// A forwarded trade waits at most this long for the leader's answer (a trade takes
/// milliseconds; the leader's own requests time out before this).
const FORWARD_TIMEOUT: Duration = Duration::from_secs(30);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);
/// A kept-alive connection to the leader unused this long is not used again, and is closed.
/// That is below the least idle timeout a node allows (`--idle-timeout-secs`, 1 s), so this
/// node always drops an idle connection first: a trade is never sent on one the leader is
/// closing, where it would be lost unread and come back `outcome_unknown`.
const POOL_IDLE_TIMEOUT: Duration = Duration::from_millis(500);

/// Where this node's trades run.
pub(crate) struct TradeRoute {
    lead: RwLock<Leadership>,
    /// This node's key while it leads.
    own_key: String,
    client: reqwest::Client,
}

impl Default for TradeRoute {
    fn default() -> Self {
        let client = reqwest::Client::builder()
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(CONNECT_TIMEOUT)
            .pool_idle_timeout(POOL_IDLE_TIMEOUT)
            .timeout(FORWARD_TIMEOUT)
            .build()
            .unwrap_or_default();
        TradeRoute { lead: RwLock::new(Leadership::Unknown), own_key: wallet_auth::to_hex(&crate::auth::random_bytes::<32>()), client }
    }
}

impl TradeRoute {
    fn lead(&self) -> Leadership {
        self.lead.read().map(|lead| lead.clone()).unwrap_or(Leadership::Unknown)
    }

    fn set(&self, lead: Leadership) {
        crate::metrics::metrics().trade_leader.set(i64::from(lead == Leadership::Leading));
        if let Ok(mut current) = self.lead.write() {
            *current = lead;
        }
    }

    /// Whether `headers` carry this node's key while it leads: another node forwarded them.
    pub(crate) fn forwarded_here(&self, headers: &HeaderMap) -> bool {
        let Some(key) = headers.get(&FORWARD_KEY_HEADER) else { return false };
        matches!(*self.lead.read().unwrap_or_else(std::sync::PoisonError::into_inner), Leadership::Leading)
            && bool::from(key.as_bytes().ct_eq(self.own_key.as_bytes()))
    }
}

/// Starts taking or following the trade lead on PostgreSQL, for a node answering at
/// `advertised` (no forwarding without one, and none on SQLite, which has one node). Ends
/// when `closing` turns true (the hub closes) or `route` is dropped.
pub(crate) fn start(backend: &Backend, route: &Arc<TradeRoute>, closing: watch::Receiver<bool>, advertised: Option<String>) {
    let (Backend::Postgres(pg), Some(url)) = (backend.clone(), advertised) else { return };
    let own = Leader { url, key: route.own_key.clone() };
    let weak = Arc::downgrade(route);
    let stopped = move || *closing.borrow() || closing.has_changed().is_err() || weak.strong_count() == 0;
    let route = Arc::downgrade(route);
    let spawned = std::thread::Builder::new().name("hanson-leader".into()).spawn(move || {
        pg.lead_trades(&own, stopped, |lead| {
            if let Some(route) = route.upgrade() {
                route.set(lead);
            }
        })
    });
    if let Err(e) = spawned {
        tracing::error!(error = %e, "cannot start the trade leadership thread");
    }
}

/// A layer on the bet and sell routes: sends the trade on to the trade leader, unless this
/// node leads or none is known; then runs it here. Runs after the rate limits.
pub(crate) async fn forward_trade(State(route): State<Arc<TradeRoute>>, request: Request, next: Next) -> Response {
    // A request that already carries a key is never sent on again, whatever its key: an
    // advertised URL that leads back to a follower (a load balancer's) cannot make a loop.
    if request.method() != Method::POST || request.headers().contains_key(&FORWARD_KEY_HEADER) {
        return next.run(request).await;
    }
    let Leadership::Following(leader) = route.lead() else { return next.run(request).await };
    let (parts, body) = request.into_parts();
    // `observe` has read the whole body already: this takes the bytes it holds.
    let Ok(body) = axum::body::to_bytes(body, MAX_BODY_BYTES).await else { return Error::PayloadTooLarge.into_response() };
    let metrics = crate::metrics::metrics();
    let sent = send(&route, &leader, &parts, body.clone()).await;
    match sent {
        Ok(response) => {
            metrics.trades_forwarded.get_or_create(&[("outcome", "forwarded")]).inc();
            response
        }
        Err(e) if e.is_connect() => {
            metrics.trades_forwarded.get_or_create(&[("outcome", "run_here")]).inc();
            tracing::debug!(error = %e, url = %leader.url, "trade leader unreachable; running the trade here");
            next.run(Request::from_parts(parts, Body::from(body))).await
        }
        Err(e) => {
            metrics.trades_forwarded.get_or_create(&[("outcome", "failed")]).inc();
            Error::OutcomeUnknown(format!("the trade leader at {} did not answer: {e}", leader.url)).into_response()
        }
    }
}

async fn send(route: &TradeRoute, leader: &Leader, parts: &axum::http::request::Parts, body: bytes::Bytes) -> reqwest::Result<Response> {
    let target = format!("{}{}", leader.url, parts.uri.path_and_query().map_or("/", |p| p.as_str()));
    let mut headers = parts.headers.clone();
    strip_hop_by_hop(&mut headers);
    headers.remove(header::HOST);
    headers.remove(&CLIENT_IP_HEADER);
    if let Ok(key) = HeaderValue::from_str(&leader.key) {
        headers.insert(FORWARD_KEY_HEADER.clone(), key);
    }
    if let Some(ClientIp(ip)) = parts.extensions.get::<ClientIp>() {
        if let Ok(ip) = HeaderValue::from_str(&ip.to_string()) {
            headers.insert(CLIENT_IP_HEADER.clone(), ip);
        }
    }
    if let Some(RequestId(id)) = parts.extensions.get::<RequestId>() {
        headers.insert(REQUEST_ID_HEADER.clone(), id.clone());
    }
    let mut answer = route.client.post(target).headers(headers).body(body).send().await?;
    let status = answer.status();
    let mut answer_headers = std::mem::take(answer.headers_mut());
    strip_hop_by_hop(&mut answer_headers);
    let bytes = answer.bytes().await?;
    let mut response = Response::new(Body::from(bytes));
    *response.status_mut() = status;
    *response.headers_mut() = answer_headers;
    Ok(response)
}

/// Headers that belong to one connection, not to the request or response passed on.
fn strip_hop_by_hop(headers: &mut HeaderMap) {
    for name in [
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "content-length",
    ] {
        headers.remove(name);
    }
}

/// The client's address of a request another node forwarded here with this node's key.
pub(crate) fn forwarded_client(route: &TradeRoute, headers: &HeaderMap) -> Option<IpAddr> {
    if !route.forwarded_here(headers) {
        return None;
    }
    headers.get(&CLIENT_IP_HEADER).and_then(|v| v.to_str().ok()).and_then(|v| v.parse().ok())
}
