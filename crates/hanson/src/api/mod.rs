//! The HTTP API: one router per area, our problem+json everywhere, a request id on every
//! response, rate limits, OpenAPI and its viewer.

pub(crate) mod auth;
pub(crate) mod card;
pub(crate) mod examples;
pub(crate) mod exports;
pub(crate) mod extract;
pub(crate) mod field_docs;
pub(crate) mod forward;
pub(crate) mod idempotent;
pub(crate) mod market_data;
pub(crate) mod middleware;
pub(crate) mod openapi;
pub(crate) mod problem;
pub(crate) mod provider;
pub(crate) mod public;
pub mod ratelimit;
pub(crate) mod rendered;
pub(crate) mod request_meta;
pub(crate) mod state;
pub(crate) mod streams;
pub(crate) mod strict;
pub(crate) mod ticker;
pub(crate) mod trading;
pub(crate) mod web;
pub(crate) mod webhooks;
pub(crate) use crate::domain::views;

use std::sync::{Arc, OnceLock};

use axum::extract::{DefaultBodyLimit, State};
use axum::middleware::{from_fn, from_fn_with_state};
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use serde_json::Value;
use tower_http::trace::TraceLayer;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::Error;
use forward::TradeRoute;
pub use request_meta::{MAX_BODY_BYTES, MAX_HEAD_BYTES};
pub(crate) use state::AppState;
pub use state::{Limits, Settings};
use views::Health;

/// Every route with its OpenAPI description, each declared once with its handler.
pub(crate) fn routes() -> OpenApiRouter<AppState> {
    routes_forwarding(None)
}

/// [`routes`], the bets and sells forwarded along `forward` when this node takes part in a
/// trade lead (several nodes on one PostgreSQL database); without one they have no layer to
/// pass through.
fn routes_forwarding(forward: Option<Arc<TradeRoute>>) -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(openapi::base())
        .merge(public::router())
        .merge(market_data::router())
        .merge(exports::router())
        .merge(provider::router())
        .merge(auth::router())
        .merge(trading::router(forward))
        .merge(streams::router())
        .merge(ticker::router())
        .merge(webhooks::router())
        .routes(routes!(healthz))
        .routes(routes!(readyz))
        .routes(routes!(openapi_document))
        .routes(routes!(metrics))
        .routes(routes!(openapi::viewer))
}

pub(crate) fn router(state: AppState, forward: Option<Arc<TradeRoute>>) -> Router {
    let (router, _) = routes_forwarding(forward).split_for_parts();
    router
        .merge(web::router(state.web.clone()))
        .route(openapi::VIEWER_SCRIPT_PATH, axum::routing::get(openapi::viewer_script))
        .merge(card::router())
        .fallback(
            |State(app): State<AppState>, method: axum::http::Method, uri: axum::http::Uri, headers: axum::http::HeaderMap| async move {
                if web::wants_html_404(&method, uri.path(), &headers) {
                    app.web.not_found(&headers)
                } else {
                    Error::NoRoute.into_response()
                }
            },
        )
        .method_not_allowed_fallback(|| async { Error::MethodNotAllowed })
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(from_fn_with_state(state.clone(), middleware::rate_limit))
        .layer(from_fn(middleware::observe))
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(middleware::request_span)
                .on_request(())
                .on_response(middleware::record_response)
                .on_failure(()),
        )
        .layer(from_fn(middleware::request_id))
        .with_state(state)
}

/// The process is up.
#[utoipa::path(get, path = "/healthz", tag = "Operations", responses((status = 200, body = Health)))]
async fn healthz() -> Json<Health> {
    Json(Health { status: "ok" })
}

/// Operational metrics in the Prometheus text format (404 here when the server has
/// `--no-public-metrics`: then only its `--metrics-listen` address serves them).
#[utoipa::path(get, path = "/metrics", tag = "Operations", responses((status = 200, description = "Prometheus text exposition", content_type = "text/plain", body = String)))]
async fn metrics(State(app): State<AppState>) -> Response {
    if !app.public_metrics {
        return Error::NoRoute.into_response();
    }
    metrics_text()
}

/// The metrics as `/metrics` answers them.
pub(crate) fn metrics_text() -> Response {
    let body = crate::metrics::metrics().render();
    ([(axum::http::header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")], body).into_response()
}

/// The router of a `--metrics-listen` address: `/metrics` only, for a scraper on a private
/// network; anything else is 404.
pub(crate) fn metrics_router() -> Router {
    Router::new()
        .route("/metrics", axum::routing::get(|| async { metrics_text() }))
        .fallback(|| async { Error::NoRoute })
        .method_not_allowed_fallback(|| async { Error::MethodNotAllowed })
}

/// The database is reachable.
#[utoipa::path(get, path = "/readyz", tag = "Operations", responses((status = 200, body = Health)))]
async fn readyz(State(app): State<AppState>) -> Response {
    match app.store.ping().await {
        Ok(()) => Json(Health { status: "ready" }).into_response(),
        Err(e) => {
            tracing::warn!(error = %e, "readiness check failed");
            Error::Unavailable(format!("database unreachable: {e}")).into_response()
        }
    }
}

static OPENAPI: OnceLock<Value> = OnceLock::new();

/// The OpenAPI document as JSON, built once from [`routes`].
pub(crate) fn openapi_json() -> &'static Value {
    OPENAPI.get_or_init(|| {
        let mut doc = routes().into_openapi();
        openapi::finish(&mut doc);
        let mut doc = serde_json::to_value(doc).expect("the OpenAPI document serializes");
        openapi::refine_request_schemas(&mut doc);
        openapi::add_webhooks(&mut doc);
        field_docs::describe_fields(&mut doc);
        examples::add_request_examples(&mut doc);
        doc
    })
}

/// This document.
#[utoipa::path(get, path = "/v1/openapi.json", tag = "Operations", responses((status = 200, description = "This document", body = Object)))]
async fn openapi_document() -> Json<Value> {
    Json(openapi_json().clone())
}
