//! The ticker (`docs/streams.md`): a market's conflated state at most every ticker interval,
//! as Server-Sent Events and as the WebSocket's `ticker` channel. Every watcher reads the
//! market's one tick (`events::ticker`): nothing is serialised per watcher.

use std::sync::Arc;

use axum::extract::State;
use axum::response::Response;
use axum::Extension;
use tokio::sync::{mpsc, watch};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::extract::ApiPath;
use super::openapi::E404;
use super::request_meta::ClientIp;
use super::state::AppState;
use super::streams::{client_ip, event_stream, ping_timer, ServerSentEvent, CONNECTION_BUFFER};
use crate::domain::ids::MarketId;
use crate::error::{Error, Result};
use crate::events::ticker::{Tick, Tickers};

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
    let (tx, rx) = mpsc::channel(CONNECTION_BUFFER);
    let (mut closing, every) = (app.hub.closing(), app.hub.settings().ping_interval);
    tokio::spawn(async move {
        let _permit = permit;
        let mut pings = ping_timer(every);
        let mut ticks = ticks;
        let first = ticks.borrow_and_update().sse.clone();
        if tx.send(first).await.is_err() {
            return;
        }
        loop {
            let chunk = tokio::select! {
                biased;
                _ = closing.changed() => return,
                changed = ticks.changed() => match changed {
                    Ok(()) => ticks.borrow_and_update().sse.clone(),
                    Err(_) => return,
                },
                _ = pings.tick() => bytes::Bytes::from_static(b": ping\n\n"),
            };
            if tx.send(chunk).await.is_err() {
                return;
            }
        }
    });
    Ok(event_stream(rx))
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
