//! Live streams (`docs/streams.md`): a market's events and the caller's own changes as
//! Server-Sent Events, both over one WebSocket, and the AsyncAPI document describing them.
//! Each open stream is one task reading its hub channel and writing to the connection; it
//! batches whatever is waiting into one write, and ends on a lag, a disconnect or shutdown.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::extract::ws::{close_code, CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use bytes::{Bytes, BytesMut};
use http_body::Frame;
use serde::{Deserialize, Serialize};
use tokio::sync::{broadcast, mpsc, watch};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::extract::{ApiPath, ApiQuery, UserAuth};
use super::openapi::{E401, E404, E422};
use super::request_meta::ClientIp;
use super::state::AppState;
use crate::domain::event::Published;
use crate::domain::ids::{MarketId, SessionId, WalletId};
use crate::domain::position::Holding;
use crate::domain::tenant::Balance;
use crate::domain::views::MarketDetail;
use crate::error::{Error, Result};
use crate::events::{joined_frames, sse_frame, First, Hub, Live, MarketSubscription, Start, StreamPermit};
use crate::store::history;
use crate::store::tenants;

pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(market_events)).routes(routes!(user_events)).routes(routes!(websocket)).routes(routes!(asyncapi))
}

/// Chunks waiting for a slow connection before its stream stops reading its channel.
pub(crate) const CONNECTION_BUFFER: usize = 8;

/// A response body fed by the stream's task.
struct ChannelBody(mpsc::Receiver<Bytes>);

impl http_body::Body for ChannelBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<std::result::Result<Frame<Bytes>, Infallible>>> {
        self.0.poll_recv(cx).map(|chunk| chunk.map(|bytes| Ok(Frame::data(bytes))))
    }
}

pub(crate) fn event_stream(body: mpsc::Receiver<Bytes>) -> Response {
    sse_response(axum::body::Body::new(ChannelBody(body)))
}

/// A `text/event-stream` response of `body`.
pub(crate) fn sse_response(body: axum::body::Body) -> Response {
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    // Proxies that buffer responses (nginx) would hold events back.
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

pub(crate) fn ping_timer(every: Duration) -> tokio::time::Interval {
    let mut timer = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    timer
}

/// One event of a stream as a Server-Sent Events parser reads it: the `schema` of a
/// `text/event-stream` response describes each event (as OpenAPI 3.2's `itemSchema` does).
#[derive(ToSchema)]
#[allow(dead_code)]
pub(crate) struct ServerSentEvent {
    /// `snapshot`, then the event's type, e.g. `trade.created`.
    event: String,
    /// The market's seq (market streams only).
    #[schema(nullable = false, pattern = "^[0-9]+$")]
    id: Option<String>,
    /// The snapshot or the event's envelope, as JSON.
    #[schema(content_media_type = "application/json")]
    data: String,
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct ResumeQuery {
    /// Resume after this seq (as `Last-Event-ID`; the header wins when both are sent).
    #[param(value_type = Option<i64>, minimum = 0, maximum = 9223372036854775807i64)]
    pub(crate) after_seq: Option<String>,
}

/// The resume point: `Last-Event-ID`, else `after_seq`; each, when sent, a non-negative
/// integer (both are checked, as documented, even though the header wins).
pub(crate) fn resume_point(headers: &HeaderMap, query: &ResumeQuery) -> Result<Start> {
    let seq = |field: &str, text: Option<&str>| -> Result<Option<i64>> {
        let Some(text) = text else { return Ok(None) };
        match text.parse::<i64>() {
            Ok(n) if n >= 0 && text.bytes().all(|b| b.is_ascii_digit()) => Ok(Some(n)),
            _ => Err(Error::invalid(field, "must be a non-negative integer (a seq of this market)")),
        }
    };
    let header = headers.get("last-event-id").map(|value| value.to_str().unwrap_or("-").trim());
    let header = seq("Last-Event-ID", header)?;
    let query = seq("after_seq", query.after_seq.as_deref())?;
    Ok(header.or(query).map_or(Start::Snapshot, Start::After))
}

#[derive(Serialize, ToSchema)]
struct MarketSnapshot<'a> {
    seq: i64,
    market: &'a MarketDetail,
}

/// A market's events, live (Server-Sent Events).
///
/// First `event: snapshot` (`id` = the market's current seq, data `{seq, market}`), then every
/// market event after it as `event: <type>`, `id: <seq>`, `data: <envelope>`. With
/// `Last-Event-ID` or `after_seq`: the events after that seq instead of the snapshot (a
/// snapshot when they are no longer kept). `: ping` comments keep the connection alive. The
/// stream ends after `market.cancelled`, `market.finalized`, or a `market.resolved` without a
/// dispute window, and for a subscriber more than
/// 10,000 events behind (it resumes with `Last-Event-ID`).
#[utoipa::path(get, path = "/v1/markets/{market_id}/events", tag = "Streams",
    params(("market_id" = String, Path), ResumeQuery, ("Last-Event-ID" = Option<i64>, Header, description = "Resume after this seq", nullable = false, minimum = 0, maximum = 9223372036854775807i64)),
    responses(
        (status = 200, description = "The event stream", content_type = "text/event-stream", body = ServerSentEvent),
        E404, E422,
    ))]
async fn market_events(
    State(app): State<AppState>,
    ApiPath(market_id): ApiPath<String>,
    ApiQuery(query): ApiQuery<ResumeQuery>,
    client: Option<Extension<ClientIp>>,
    headers: HeaderMap,
) -> Result<Response> {
    let start = resume_point(&headers, &query)?;
    let permit = app.hub.admit(client_ip(client))?;
    let subscription = app.hub.subscribe_market(MarketId(market_id), start).await?;
    let (tx, rx) = mpsc::channel(CONNECTION_BUFFER);
    let (hub, closing) = (app.hub.clone(), app.hub.closing());
    tokio::spawn(async move {
        let _permit = permit;
        pump_market_sse(&hub, subscription, tx, closing).await;
    });
    Ok(event_stream(rx))
}

pub(crate) fn client_ip(client: Option<Extension<ClientIp>>) -> std::net::IpAddr {
    client.map_or(std::net::IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED), |Extension(ClientIp(ip))| ip)
}

fn snapshot_json(seq: i64, market: &MarketDetail) -> String {
    serde_json::to_string(&MarketSnapshot { seq, market }).unwrap_or_default()
}

async fn pump_market_sse(hub: &Hub, mut sub: MarketSubscription, tx: mpsc::Sender<Bytes>, mut closing: watch::Receiver<bool>) {
    let mut settled = false;
    let opening = match std::mem::replace(&mut sub.first, First::Replay(Vec::new())) {
        First::Snapshot { seq, market } => sse_frame("snapshot", Some(seq), &snapshot_json(seq, &market)),
        First::Replay(events) => {
            let mut chunk = BytesMut::new();
            for e in &events {
                settled |= crate::domain::event::ends_market_stream(&e.kind, &e.envelope);
                chunk.extend_from_slice(&sse_frame(&e.kind, e.seq, &e.envelope));
            }
            chunk.freeze()
        }
    };
    if (!opening.is_empty() && tx.send(opening).await.is_err()) || settled {
        return;
    }
    let mut pings = ping_timer(hub.settings().ping_interval);
    loop {
        let chunk = tokio::select! {
            biased;
            _ = closing.changed() => return,
            next = sub.next() => match next {
                // The batch's frames as joined once for every subscriber.
                Live::Batch(batch) => {
                    settled = batch.deliveries.iter().any(|d| d.settles());
                    batch.sse.clone()
                }
                Live::Events(events) if events.is_empty() => continue,
                Live::Events(events) => {
                    settled = events.iter().any(|d| d.settles());
                    joined_frames(&events)
                }
                Live::TooFarBehind | Live::Closed => return,
            },
            _ = pings.tick() => Bytes::from_static(b": ping\n\n"),
        };
        if tx.send(chunk).await.is_err() || settled {
            return;
        }
    }
}

#[derive(Serialize, ToSchema)]
struct UserSnapshot {
    balances: Vec<Balance>,
    positions: Vec<Holding>,
}

/// The caller's wallet: balances and positions now, then their changes.
async fn user_snapshot(app: &AppState, wallet_id: &WalletId) -> Result<UserSnapshot> {
    let wallet_id = wallet_id.to_string();
    app.store
        .read(move |c| {
            let balances = tenants::balances(c, "wallet", &wallet_id)?;
            Ok(UserSnapshot { balances, positions: history::holdings::wallet_holdings(c, &wallet_id)? })
        })
        .await
}

/// What a user stream sends for a wallet event: None to skip it, Err to end the stream.
fn user_message(event: &Published, session_id: &SessionId) -> std::result::Result<Option<String>, ()> {
    match &*event.kind {
        "session.ended" => {
            let ended: serde_json::Value = serde_json::from_str(&event.envelope).unwrap_or_default();
            if ended["data"]["session_id"].as_str() == Some(session_id.as_str()) {
                Err(())
            } else {
                Ok(None)
            }
        }
        // The user stream has no sequence of its own: seq is null there.
        "trade.created" => {
            let mut envelope: serde_json::Value = serde_json::from_str(&event.envelope).map_err(|_| ())?;
            envelope["seq"] = serde_json::Value::Null;
            Ok(Some(envelope.to_string()))
        }
        _ => Ok(Some(event.envelope.to_string())),
    }
}

/// The caller's own changes, live (Server-Sent Events).
///
/// First `event: snapshot` with `{balances, positions}` (as the profile and holdings search
/// show them), then `balance.updated`, `position.updated`, and the caller's own
/// `trade.created` and `claim.completed`, as envelopes with `seq` null. No resume: a
/// reconnection gets a new snapshot. Logout or a revoked session ends the stream.
#[utoipa::path(get, path = "/v1/auth/events", tag = "Streams", security(("userToken" = [])),
    responses(
        (status = 200, description = "The event stream", content_type = "text/event-stream", body = ServerSentEvent),
        E401,
    ))]
async fn user_events(State(app): State<AppState>, user: UserAuth, client: Option<Extension<ClientIp>>) -> Result<Response> {
    let permit = app.hub.admit(client_ip(client))?;
    let live = app.hub.subscribe_wallet(&user.wallet_id);
    let snapshot = user_snapshot(&app, &user.wallet_id).await?;
    let (tx, rx) = mpsc::channel(CONNECTION_BUFFER);
    let (hub, closing) = (app.hub.clone(), app.hub.closing());
    tokio::spawn(async move {
        let _permit = permit;
        let opening = sse_frame("snapshot", None, &serde_json::to_string(&snapshot).unwrap_or_default());
        if tx.send(opening).await.is_ok() {
            pump_user(&hub, live, &user.session_id, closing, |text, kind| {
                let tx = tx.clone();
                let frame = if kind == "ping" { Bytes::from_static(b": ping\n\n") } else { sse_frame(kind, None, &text) };
                async move { tx.send(frame).await.is_ok() }
            })
            .await;
        }
    });
    Ok(event_stream(rx))
}

/// Sends a wallet's events through `send` (and `"ping"` kinds to ping) until the session
/// ends (returns true), the subscriber lags, the connection goes or the server shuts down.
async fn pump_user<F, Fut>(
    hub: &Hub,
    mut live: broadcast::Receiver<Arc<Published>>,
    session_id: &SessionId,
    mut closing: watch::Receiver<bool>,
    mut send: F,
) -> bool
where
    F: FnMut(String, &str) -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let mut pings = ping_timer(hub.settings().ping_interval);
    loop {
        tokio::select! {
            biased;
            _ = closing.changed() => return false,
            received = live.recv() => match received {
                Ok(event) => match user_message(&event, session_id) {
                    Err(()) => return true,
                    Ok(None) => {}
                    Ok(Some(text)) => {
                        if !send(text, &event.kind).await {
                            return false;
                        }
                    }
                },
                Err(_) => return false,
            },
            _ = pings.tick() => {
                if !send(String::new(), "ping").await {
                    return false;
                }
            }
        }
    }
}

/// One client message on the WebSocket.
#[derive(Deserialize)]
#[serde(tag = "op", rename_all = "lowercase", deny_unknown_fields)]
enum ClientMessage {
    Subscribe { market_id: Option<String>, after_seq: Option<i64>, channel: Option<String> },
    Unsubscribe { market_id: Option<String>, channel: Option<String> },
    Auth { access_token: String },
}

#[derive(Serialize)]
struct ServerError<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    code: &'static str,
    detail: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    market_id: Option<&'a str>,
}

pub(crate) fn ws_error(code: &'static str, detail: &str, market_id: Option<&str>) -> String {
    serde_json::to_string(&ServerError { kind: "error", code, detail, market_id }).unwrap_or_default()
}

fn ws_ack(kind: &'static str, market_id: Option<&str>) -> String {
    match market_id {
        Some(id) => serde_json::json!({"type": kind, "market_id": id}).to_string(),
        None => serde_json::json!({"type": kind, "channel": "user"}).to_string(),
    }
}

/// Many subscriptions on one connection (WebSocket).
///
/// Client messages: `{"op":"subscribe","market_id":ID,"after_seq":N?}`,
/// `{"op":"unsubscribe","market_id":ID}`, `{"op":"auth","access_token":T}`, then
/// `{"op":"subscribe","channel":"user"}`; `{"op":"subscribe","market_id":ID,"channel":"ticker"}`
/// follows a market's ticker (`ticker` messages). The server sends the SSE streams' envelopes and
/// snapshots as JSON messages, acknowledgements, `{"type":"error","code","detail"}` for a bad
/// message (the connection stays open) and `{"type":"ping"}`. See `/v1/asyncapi.json`.
#[utoipa::path(get, path = "/v1/ws", tag = "Streams",
    responses(
        (status = 101, description = "Switching to the WebSocket protocol"),
        (status = 426, description = "Not a WebSocket upgrade request (code upgrade_required, with Upgrade: websocket)", body = super::openapi::Problem, content_type = "application/problem+json"),
    ))]
async fn websocket(
    State(app): State<AppState>,
    client: Option<Extension<ClientIp>>,
    upgrade: std::result::Result<WebSocketUpgrade, axum::extract::ws::rejection::WebSocketUpgradeRejection>,
) -> Result<Response> {
    let upgrade = upgrade.map_err(|_| Error::UpgradeRequired)?;
    let permit = app.hub.admit(client_ip(client))?;
    Ok(upgrade.on_upgrade(move |socket| run_websocket(app, socket, permit)))
}

/// What one WebSocket connection is subscribed to.
#[derive(Default)]
struct Subscriptions {
    markets: std::collections::HashMap<MarketId, tokio::task::AbortHandle>,
    user: Option<UserAuth>,
    user_channel: Option<tokio::task::AbortHandle>,
    tickers: std::collections::HashMap<MarketId, tokio::task::AbortHandle>,
}

impl Drop for Subscriptions {
    fn drop(&mut self) {
        self.markets.values().for_each(tokio::task::AbortHandle::abort);
        self.tickers.values().for_each(tokio::task::AbortHandle::abort);
        if let Some(task) = &self.user_channel {
            task.abort();
        }
    }
}

async fn run_websocket(app: AppState, mut socket: WebSocket, _permit: StreamPermit) {
    let (out, mut outgoing) = mpsc::channel::<String>(256);
    let mut subscriptions = Subscriptions::default();
    let mut closing = app.hub.closing();
    let mut pings = ping_timer(app.hub.settings().ping_interval);
    loop {
        let text = tokio::select! {
            biased;
            _ = closing.changed() => {
                let going_away = CloseFrame { code: close_code::AWAY, reason: "server shutting down".into() };
                let _ = socket.send(Message::Close(Some(going_away))).await;
                return;
            }
            message = socket.recv() => match message {
                Some(Ok(Message::Text(text))) => {
                    on_client_message(&app, text.as_str(), &out, &mut subscriptions).await;
                    continue;
                }
                Some(Ok(Message::Binary(_))) => ws_error("bad_message", "messages are JSON text", None),
                Some(Ok(Message::Close(_))) | Some(Err(_)) | None => return,
                // Pings are answered by the protocol layer.
                Some(Ok(_)) => continue,
            },
            Some(text) = outgoing.recv() => text,
            _ = pings.tick() => r#"{"type":"ping"}"#.to_string(),
        };
        if socket.send(Message::Text(text.into())).await.is_err() {
            return;
        }
    }
}

async fn on_client_message(app: &AppState, text: &str, out: &mpsc::Sender<String>, subs: &mut Subscriptions) {
    let reply = |message: String| {
        let out = out.clone();
        async move {
            let _ = out.send(message).await;
        }
    };
    let message: ClientMessage = match serde_json::from_str(text) {
        Ok(m) => m,
        Err(e) => return reply(ws_error("bad_message", &format!("not a client message: {e}"), None)).await,
    };
    match message {
        ClientMessage::Auth { access_token } => match UserAuth::of_token(&access_token, app).await {
            Ok(user) => {
                let wallet_id = user.wallet_id.to_string();
                subs.user = Some(user);
                reply(serde_json::json!({"type": "authenticated", "wallet_id": wallet_id}).to_string()).await;
            }
            Err(_) => reply(ws_error("unauthenticated", "invalid or expired access token, or the session has ended", None)).await,
        },
        ClientMessage::Subscribe { market_id: Some(market_id), channel: None, after_seq } => {
            if after_seq.is_some_and(|n| n < 0) {
                return reply(ws_error("bad_message", "after_seq must be a non-negative integer", Some(&market_id))).await;
            }
            let start = after_seq.map_or(Start::Snapshot, Start::After);
            let market_id = MarketId(market_id);
            if let Some(previous) = subs.markets.remove(&market_id) {
                previous.abort();
            }
            let task = tokio::spawn(forward_market(app.hub.clone(), market_id.clone(), start, out.clone()));
            subs.markets.insert(market_id, task.abort_handle());
        }
        ClientMessage::Subscribe { market_id: None, channel: Some(channel), after_seq: None } if channel == "user" => {
            let Some(user) = subs.user.clone() else {
                return reply(ws_error("unauthenticated", "send {\"op\":\"auth\",\"access_token\":...} first", None)).await;
            };
            if let Some(previous) = subs.user_channel.take() {
                previous.abort();
            }
            let task = tokio::spawn(forward_user(app.clone(), user, out.clone()));
            subs.user_channel = Some(task.abort_handle());
        }
        ClientMessage::Unsubscribe { market_id: Some(market_id), channel: None } => {
            let known = subs.markets.remove(market_id.as_str());
            match known {
                Some(task) => {
                    task.abort();
                    reply(ws_ack("unsubscribed", Some(&market_id))).await;
                }
                None => reply(ws_error("not_subscribed", "no subscription to this market", Some(&market_id))).await,
            }
        }
        ClientMessage::Subscribe { market_id: Some(market_id), channel: Some(channel), after_seq: None } if channel == "ticker" => {
            let market_id = MarketId(market_id);
            if let Some(previous) = subs.tickers.remove(&market_id) {
                previous.abort();
            }
            let task = tokio::spawn(super::ticker::forward_ticker(app.tickers.clone(), market_id.clone(), out.clone()));
            subs.tickers.insert(market_id, task.abort_handle());
        }
        ClientMessage::Unsubscribe { market_id: Some(market_id), channel: Some(channel) } if channel == "ticker" => {
            match subs.tickers.remove(market_id.as_str()) {
                Some(task) => {
                    task.abort();
                    let ack = serde_json::json!({"type": "unsubscribed", "market_id": market_id, "channel": "ticker"});
                    reply(ack.to_string()).await;
                }
                None => reply(ws_error("not_subscribed", "no ticker subscription to this market", Some(&market_id))).await,
            }
        }
        ClientMessage::Unsubscribe { market_id: None, channel: Some(channel) } if channel == "user" => match subs.user_channel.take() {
            Some(task) => {
                task.abort();
                reply(ws_ack("unsubscribed", None)).await;
            }
            None => reply(ws_error("not_subscribed", "no subscription to the user channel", None)).await,
        },
        _ => {
            reply(ws_error(
                "bad_message",
                "subscribe and unsubscribe take market_id (with channel \"ticker\" for its ticker), or channel \"user\"",
                None,
            ))
            .await
        }
    }
}

#[derive(Serialize)]
struct WsMarketSnapshot<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    market_id: &'a MarketId,
    seq: i64,
    market: &'a MarketDetail,
}

async fn forward_market(hub: Arc<Hub>, market_id: MarketId, start: Start, out: mpsc::Sender<String>) {
    let sub = match hub.subscribe_market(market_id.clone(), start).await {
        Ok(sub) => sub,
        Err(Error::NotFound) => {
            let _ = out.send(ws_error("not_found", "no such market", Some(&market_id))).await;
            return;
        }
        Err(e) => {
            tracing::warn!(error = %e, "a WebSocket market subscription failed");
            let _ = out.send(ws_error("unavailable", "the subscription could not start; try again", Some(&market_id))).await;
            return;
        }
    };
    let mut sub = sub;
    if out.send(ws_ack("subscribed", Some(&market_id))).await.is_err() {
        return;
    }
    let opening = match std::mem::replace(&mut sub.first, First::Replay(Vec::new())) {
        First::Snapshot { seq, market } => {
            vec![serde_json::to_string(&WsMarketSnapshot { kind: "snapshot", market_id: &market_id, seq, market: &market })
                .unwrap_or_default()]
        }
        First::Replay(events) => events.iter().map(|e| e.envelope.to_string()).collect(),
    };
    for message in opening {
        if out.send(message).await.is_err() {
            return;
        }
    }
    loop {
        let deliveries = match sub.next().await {
            Live::Batch(batch) => batch.deliveries.clone(),
            Live::Events(events) => events,
            Live::TooFarBehind => {
                let detail = format!("more than {} events behind: subscribe again with after_seq", hub.settings().lag_limit);
                let _ = out.send(ws_error("lagged", &detail, Some(&market_id))).await;
                return;
            }
            Live::Closed => return,
        };
        for d in deliveries {
            if out.send(d.event.envelope.to_string()).await.is_err() {
                return;
            }
        }
    }
}

#[derive(Serialize)]
struct WsUserSnapshot<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    channel: &'static str,
    #[serde(flatten)]
    snapshot: &'a UserSnapshot,
}

async fn forward_user(app: AppState, user: UserAuth, out: mpsc::Sender<String>) {
    let live = app.hub.subscribe_wallet(&user.wallet_id);
    let snapshot = match user_snapshot(&app, &user.wallet_id).await {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!(error = %e, "a WebSocket user subscription failed");
            let _ = out.send(ws_error("unavailable", "the subscription could not start; try again", None)).await;
            return;
        }
    };
    if out.send(ws_ack("subscribed", None)).await.is_err() {
        return;
    }
    let opening = serde_json::to_string(&WsUserSnapshot { kind: "snapshot", channel: "user", snapshot: &snapshot }).unwrap_or_default();
    if out.send(opening).await.is_err() {
        return;
    }
    let ended = pump_user(&app.hub, live, &user.session_id, app.hub.closing(), |text, kind| {
        let (out, ping) = (out.clone(), kind == "ping");
        async move { ping || out.send(text).await.is_ok() }
    })
    .await;
    if ended {
        let _ = out.send(ws_error("session_ended", "the session ended; authenticate again", None)).await;
    }
}

/// The AsyncAPI 3.0 document of the streams.
#[utoipa::path(get, path = "/v1/asyncapi.json", tag = "Operations", responses((status = 200, description = "The AsyncAPI 3.0 document of the event streams", body = Object)))]
async fn asyncapi() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], include_str!("asyncapi.json")).into_response()
}
