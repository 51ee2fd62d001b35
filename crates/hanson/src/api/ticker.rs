//! The ticker (`docs/streams.md`): a market's conflated state at most every ticker interval,
//! as Server-Sent Events and as the WebSocket's `ticker` channel. Every watcher reads the
//! market's one tick (`events::ticker`): nothing is serialised per watcher.

use std::sync::Arc;

use std::convert::Infallible;

use axum::body::Body;
use axum::extract::State;
use axum::response::Response;
use axum::Extension;
use bytes::Bytes;
use tokio::sync::{mpsc, watch};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::extract::ApiPath;
use super::openapi::E404;
use super::request_meta::ClientIp;
use super::state::AppState;
use super::streams::{client_ip, ping_timer, sse_response, ServerSentEvent};
use crate::domain::ids::MarketId;
use crate::error::{Error, Result};
use crate::events::ticker::{Tick, Tickers};
use crate::events::StreamPermit;

pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(market_ticker))
}

/// A market's ticker, live (Server-Sent Events).
///
/// `event: ticker`, `id: <seq>`, data `{market_id, seq, status, trading_paused, prices,
/// total_volume, total_pool, trades, trades_omitted}`: the state now first, then at most one
/// every ticker interval (250 ms by default), only after a change, never skipping the last
/// state. `trades` lists up to the 10 latest trades since the previous tick (oldest first);
/// `trades_omitted` counts the older ones. A watcher that reads slowly skips to the latest
/// tick. `: ping` comments keep the connection alive.
#[utoipa::path(get, path = "/v1/markets/{market_id}/ticker", tag = "Streams",
    params(("market_id" = String, Path)),
    responses(
        (status = 200, description = "The ticker", content_type = "text/event-stream", body = ServerSentEvent),
        E404,
    ))]
async fn market_ticker(
    State(app): State<AppState>,
    ApiPath(market_id): ApiPath<String>,
    client: Option<Extension<ClientIp>>,
) -> Result<Response> {
    let permit = app.hub.admit(client_ip(client))?;
    let ticks = app.tickers.watch(MarketId(market_id)).await?;
    let watcher =
        Watcher { _permit: permit, ticks, first: true, pings: ping_timer(app.hub.settings().ping_interval), closing: app.hub.closing() };
    Ok(sse_response(Body::from_stream(futures_util::stream::unfold(watcher, Watcher::next))))
}

/// One SSE watcher, read by its connection as the body: no task or channel of its own, so a
/// tick costs each watcher one wake-up and one write (stream_watchers in docs/performance.md).
struct Watcher {
    _permit: StreamPermit,
    ticks: watch::Receiver<Arc<Tick>>,
    first: bool,
    pings: tokio::time::Interval,
    closing: watch::Receiver<bool>,
}

impl Watcher {
    /// The next chunk: the current tick first, then each newer one (a slow reader skips to
    /// the latest), or a ping; the end on a settled market's feed closing or on shutdown.
    async fn next(mut self) -> Option<(std::result::Result<Bytes, Infallible>, Watcher)> {
        if std::mem::take(&mut self.first) {
            let tick = self.ticks.borrow_and_update().sse.clone();
            return Some((Ok(tick), self));
        }
        let chunk = tokio::select! {
            biased;
            _ = self.closing.changed() => return None,
            changed = self.ticks.changed() => match changed {
                Ok(()) => self.ticks.borrow_and_update().sse.clone(),
                Err(_) => return None,
            },
            _ = self.pings.tick() => Bytes::from_static(b": ping\n\n"),
        };
        Some((Ok(chunk), self))
    }
}

/// The WebSocket's `ticker` channel of one market: acknowledged, then its ticks as messages
/// `{"type":"ticker", ...the SSE event's data}`.
pub(crate) async fn forward_ticker(tickers: Arc<Tickers>, market_id: MarketId, out: mpsc::Sender<String>) {
    let ticks = match tickers.watch(market_id.clone()).await {
        Ok(ticks) => ticks,
        Err(Error::NotFound) => {
            let _ = out.send(super::streams::ws_error("not_found", "no such market", Some(&market_id))).await;
            return;
        }
        Err(e) => {
            tracing::warn!(error = %e, "a WebSocket ticker subscription failed");
            let _ =
                out.send(super::streams::ws_error("unavailable", "the subscription could not start; try again", Some(&market_id))).await;
            return;
        }
    };
    let ack = serde_json::json!({"type": "subscribed", "market_id": market_id, "channel": "ticker"}).to_string();
    if out.send(ack).await.is_err() {
        return;
    }
    pump_ws(ticks, out).await;
}

async fn pump_ws(mut ticks: watch::Receiver<Arc<Tick>>, out: mpsc::Sender<String>) {
    let mut message = ticks.borrow_and_update().ws.to_string();
    loop {
        if out.send(message).await.is_err() {
            return;
        }
        if ticks.changed().await.is_err() {
            return;
        }
        message = ticks.borrow_and_update().ws.to_string();
    }
}
