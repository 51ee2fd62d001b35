//! The HTTP API: one router per area, our problem+json everywhere, a request id on every
//! response, rate limits, OpenAPI and its viewer.

pub mod auth;
pub mod extract;
pub mod idempotent;
pub mod openapi;
pub mod problem;
pub mod provider;
pub mod public;
pub mod ratelimit;
pub mod rendered;
pub mod trading;
pub mod views;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{ConnectInfo, DefaultBodyLimit, MatchedPath, Request, State};
use axum::http::{HeaderName, HeaderValue};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use tower_http::trace::TraceLayer;
use tracing::Span;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::Error;
use views::Health;
use crate::store::Store;
use ratelimit::{Limiter, Rule};

/// Bodies up to 65,536 bytes are accepted; one more byte is a 413.
pub const MAX_BODY_BYTES: usize = 65_536;

#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Nonce, login and refresh, per client IP.
    pub auth_per_ip: Rule,
    /// Every route, per client IP.
    pub general_per_ip: Rule,
    /// Every authenticated route, per credential.
    pub per_principal: Rule,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            auth_per_ip: Rule { per_second: 5.0, burst: 30.0 },
            general_per_ip: Rule::OFF,
            per_principal: Rule::OFF,
        }
    }
}

/// Everything the HTTP layer is configured with.
#[derive(Debug, Clone)]
pub struct Settings {
    pub limits: Limits,
    /// HS256 secret; when absent one is generated once and stored in the database.
    pub jwt_secret: Option<String>,
    pub access_token_ttl_secs: i64,
    pub refresh_token_ttl_secs: i64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            limits: Limits::default(),
            jwt_secret: None,
            access_token_ttl_secs: 604_800,
            refresh_token_ttl_secs: 30 * 86_400,
        }
    }
}

impl From<Limits> for Settings {
    fn from(limits: Limits) -> Self {
        Settings { limits, ..Settings::default() }
    }
}

/// Token settings, with the signing key set up once per process.
pub struct AuthState {
    pub jwt: crate::auth::jwt::JwtKey,
    pub access_token_ttl_secs: i64,
    pub refresh_token_ttl_secs: i64,
}

struct Limiters {
    auth_per_ip: Limiter<IpAddr>,
    general_per_ip: Limiter<IpAddr>,
    /// Keyed by a digest of the credential.
    per_principal: Limiter<[u8; 16]>,
}

#[derive(Clone)]
pub struct AppState {
    pub store: Store,
    pub auth: Arc<AuthState>,
    limiters: Arc<Limiters>,
    search_cache: Arc<crate::store::markets::SearchCache>,
    rendered_markets: Arc<rendered::RenderedMarkets>,
}

impl AppState {
    /// Sets up the JWT key (from the settings, or the secret stored in the database).
    pub async fn new(store: Store, settings: Settings) -> crate::error::Result<Self> {
        let secret = match settings.jwt_secret {
            Some(secret) => secret,
            None => {
                let generated = crate::auth::hex(&crate::auth::random_bytes::<32>());
                store.write(move |c| crate::store::auth::jwt_secret(c, &generated)).await?
            }
        };
        let limits = settings.limits;
        Ok(AppState {
            store,
            search_cache: Arc::default(),
            rendered_markets: Arc::default(),
            auth: Arc::new(AuthState {
                jwt: crate::auth::jwt::JwtKey::new(secret.as_bytes()),
                access_token_ttl_secs: settings.access_token_ttl_secs,
                refresh_token_ttl_secs: settings.refresh_token_ttl_secs,
            }),
            limiters: Arc::new(Limiters {
                auth_per_ip: Limiter::new(limits.auth_per_ip),
                general_per_ip: Limiter::new(limits.general_per_ip),
                per_principal: Limiter::new(limits.per_principal),
            }),
        })
    }
}

/// Every route with its OpenAPI description, each declared once with its handler.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(openapi::base())
        .merge(public::router())
        .merge(provider::router())
        .merge(auth::router())
        .merge(trading::router())
        .routes(routes!(healthz))
        .routes(routes!(readyz))
        .routes(routes!(openapi::document))
        .routes(routes!(openapi::viewer))
}

pub fn router(state: AppState) -> Router {
    let (router, _) = routes().split_for_parts();
    router
        .fallback(|| async { Error::NoRoute })
        .method_not_allowed_fallback(|| async { Error::MethodNotAllowed })
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(middleware::from_fn_with_state(state.clone(), rate_limit))
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(request_span)
                .on_request(())
                .on_response(record_response)
                .on_failure(()),
        )
        .layer(middleware::from_fn(request_id))
        .with_state(state)
}

/// The process is up.
#[utoipa::path(get, path = "/healthz", tag = "Operations", responses((status = 200, body = Health)))]
async fn healthz() -> Json<Health> {
    Json(Health { status: "ok" })
}

/// The database is reachable.
#[utoipa::path(get, path = "/readyz", tag = "Operations", responses((status = 200, body = Health)))]
async fn readyz(State(app): State<AppState>) -> Response {
    match app.store.ping().await {
        Ok(()) => Json(Health { status: "ready" }).into_response(),
        Err(e) => {
            tracing::warn!(error = %e, "readiness check failed");
            Error::Internal(format!("database unreachable: {e}")).into_response()
        }
    }
}

static REQUEST_ID_HEADER: HeaderName = HeaderName::from_static("x-request-id");

/// The request id `request_id` settled on, for the request's span.
#[derive(Clone)]
struct RequestId(HeaderValue);

/// Echoes a sane client request id or makes one; makes it available to error rendering.
// Kept rather than tower-http's request-id layers: those pass any client value through,
// while this keeps only short printable ids and scopes the id for error rendering.
async fn request_id(mut request: Request, next: Next) -> Response {
    let id = request
        .headers()
        .get(&REQUEST_ID_HEADER)
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty() && v.len() <= 128 && v.bytes().all(|b| b.is_ascii_graphic()))
        .map(str::to_string)
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    let value = HeaderValue::from_str(&id).ok();
    if let Some(value) = &value {
        request.extensions_mut().insert(RequestId(value.clone()));
    }
    let mut response = problem::REQUEST_ID.scope(id, next.run(request)).await;
    if let Some(value) = value {
        response.headers_mut().insert(REQUEST_ID_HEADER.clone(), value);
    }
    response
}

/// One span per request, at INFO: request id, method and route (the matched pattern, not
/// the raw path); status and latency are recorded when the response is ready.
fn request_span(request: &Request) -> Span {
    let request_id = request.extensions().get::<RequestId>().and_then(|id| id.0.to_str().ok()).unwrap_or("");
    let route = request.extensions().get::<MatchedPath>().map_or("unmatched", MatchedPath::as_str);
    tracing::info_span!(
        "request",
        request_id,
        method = %request.method(),
        route,
        status = tracing::field::Empty,
        latency_ms = tracing::field::Empty,
    )
}

/// Records status and latency on the request's span; the event is DEBUG (free at the default
/// filter) except for a 5xx, which is an ERROR.
fn record_response(response: &Response, latency: Duration, span: &Span) {
    let status = response.status().as_u16();
    let latency_ms = latency.as_micros() as f64 / 1e3;
    span.record("status", status);
    span.record("latency_ms", latency_ms);
    if response.status().is_server_error() {
        tracing::error!(status, latency_ms, "request failed");
    } else {
        tracing::debug!(status, latency_ms, "request finished");
    }
}

fn is_auth_route(path: &str) -> bool {
    matches!(path, "/v1/auth/nonce" | "/v1/auth/login" | "/v1/auth/refresh")
}

async fn rate_limit(State(app): State<AppState>, request: Request, next: Next) -> Response {
    // Without a peer address (never in `serve`) every request shares one bucket.
    let ip = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |ConnectInfo(addr)| addr.ip());
    let limiters = &app.limiters;
    let mut verdict = limiters.general_per_ip.check(ip);
    if verdict.is_ok() && is_auth_route(request.uri().path()) {
        verdict = limiters.auth_per_ip.check(ip);
    }
    if verdict.is_ok() {
        if let Some(credential) = request.headers().get(axum::http::header::AUTHORIZATION) {
            verdict = limiters.per_principal.check(auth_key_digest(credential.as_bytes()));
        }
    }
    match verdict {
        Ok(()) => next.run(request).await,
        Err(retry_after_secs) => Error::RateLimited { retry_after_secs }.into_response(),
    }
}

/// Keys buckets by a digest so credentials are not kept in memory verbatim.
fn auth_key_digest(credential: &[u8]) -> [u8; 16] {
    use sha2::{Digest, Sha256};
    let mut key = [0u8; 16];
    key.copy_from_slice(&Sha256::digest(credential)[..16]);
    key
}
