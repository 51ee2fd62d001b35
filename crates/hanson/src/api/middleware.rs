//! Middleware on every route: the request id, one tracing span per request, rate limits.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use axum::extract::{ConnectInfo, MatchedPath, Request, State};
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tracing::Span;

use super::forward::forwarded_client;
use super::problem;
use super::request_meta::{ClientIp, RequestId, MAX_BODY_BYTES, REQUEST_ID_HEADER};
use super::state::AppState;
use crate::error::Error;

/// Echoes a sane client request id or makes one; makes it available to error rendering.
/// A path whose segments decode to a NUL names nothing: it is answered 404 here, before any
/// handler (PostgreSQL refuses NUL in text, so an id holding one must never reach a query).
// Kept rather than tower-http's request-id layers: those pass any client value through,
// while this keeps only short printable ids and scopes the id for error rendering.
pub(crate) async fn request_id(mut request: Request, next: Next) -> Response {
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
    let refused = request.uri().path().contains("%00");
    let mut response = problem::REQUEST_ID
        .scope(id, async move {
            if refused {
                Error::NotFound.into_response()
            } else {
                next.run(request).await
            }
        })
        .await;
    if let Some(value) = value {
        response.headers_mut().insert(REQUEST_ID_HEADER.clone(), value);
    }
    response
}

/// One span per request, at INFO: request id, method and route (the matched pattern, not
/// the raw path); status and latency are recorded when the response is ready.
pub(crate) fn request_span(request: &Request) -> Span {
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
pub(crate) fn record_response(response: &Response, latency: Duration, span: &Span) {
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

pub(crate) async fn rate_limit(State(app): State<AppState>, mut request: Request, next: Next) -> Response {
    // Without a peer address (never in `serve`) every request shares one bucket.
    let peer =
        request.extensions().get::<ConnectInfo<SocketAddr>>().map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |ConnectInfo(addr)| addr.ip());
    // Another node forwarded this trade and has applied the limits to its client: it runs here.
    if let Some(ip) = forwarded_client(&app.trade_route, request.headers()) {
        request.extensions_mut().insert(ClientIp(ip));
        return next.run(request).await;
    }
    let ip = client_ip(peer, request.headers(), &app.trusted_proxies);
    request.extensions_mut().insert(ClientIp(ip));
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

/// The client a request comes from: the peer, unless the peer is a trusted proxy; then the
/// nearest address its forwarding headers name that is not itself a trusted proxy (walking
/// from the last hop back, so a client cannot choose its own address by sending the header).
pub(crate) fn client_ip(peer: IpAddr, headers: &axum::http::HeaderMap, trusted: &[ipnet::IpNet]) -> IpAddr {
    let is_trusted = |ip: &IpAddr| trusted.iter().any(|net| net.contains(ip));
    if !is_trusted(&peer) {
        return peer;
    }
    let hops = forwarded_for(headers);
    hops.iter().rev().find(|ip| !is_trusted(ip)).or(hops.first()).copied().unwrap_or(peer)
}

/// The addresses of `Forwarded: for=...` (RFC 7239), else of `X-Forwarded-For`, in order,
/// across every instance of the header; entries that are not addresses are skipped.
fn forwarded_for(headers: &axum::http::HeaderMap) -> Vec<IpAddr> {
    let forwarded: Vec<IpAddr> = headers
        .get_all(axum::http::header::FORWARDED)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .flat_map(|element| element.split(';'))
        .filter_map(|pair| pair.trim().strip_prefix("for=").or_else(|| pair.trim().strip_prefix("For=")))
        .filter_map(|node| parse_node(node.trim_matches('"')))
        .collect();
    if !forwarded.is_empty() {
        return forwarded;
    }
    headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|node| parse_node(node.trim()))
        .collect()
}

/// `1.2.3.4`, `1.2.3.4:80`, `2001:db8::1` or `[2001:db8::1]:80`.
fn parse_node(node: &str) -> Option<IpAddr> {
    if let Ok(ip) = node.parse() {
        return Some(ip);
    }
    if let Some(rest) = node.strip_prefix('[') {
        return rest.split(']').next()?.parse().ok();
    }
    node.parse::<SocketAddr>().ok().map(|a| a.ip())
}

/// Keys buckets by a digest so credentials are not kept in memory verbatim.
fn auth_key_digest(credential: &[u8]) -> [u8; 16] {
    use sha2::{Digest, Sha256};
    let mut key = [0u8; 16];
    key.copy_from_slice(&Sha256::digest(credential)[..16]);
    key
}

/// Reads the whole request body (up to the 65,536-byte limit) before any check may refuse
/// the request. A response sent while a body is still unread makes hyper close the
/// connection, so a client's next request on it (keep-alive) failed after a 401, 415 or 429.
async fn read_body_first(request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    match axum::body::to_bytes(body, MAX_BODY_BYTES).await {
        Ok(bytes) => next.run(Request::from_parts(parts, axum::body::Body::from(bytes))).await,
        Err(e) if std::error::Error::source(&e).is_some_and(|s| s.is::<http_body_util::LengthLimitError>()) => {
            Error::PayloadTooLarge.into_response()
        }
        Err(e) => Error::MalformedJson(format!("the request body could not be read: {e}")).into_response(),
    }
}

/// Times each request and counts its response by route pattern, method and status (one
/// middleware for both jobs: each layer costs every request a boxed future).
pub(crate) async fn observe(request: Request, next: Next) -> Response {
    let started = std::time::Instant::now();
    let metrics = crate::metrics::metrics();
    let route = request.extensions().get::<MatchedPath>().map_or("unmatched", |path| metrics.intern(path.as_str()));
    let method = crate::metrics::method_label(request.method());
    let response = read_body_first(request, next).await;
    metrics.requests.get_or_create(&[("route", route), ("method", method), ("status", metrics.intern(response.status().as_str()))]).inc();
    metrics.request_seconds.get_or_create(&[("route", route), ("method", method)]).observe(started.elapsed().as_secs_f64());
    response
}
