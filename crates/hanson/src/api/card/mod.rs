//! Sharing a market: `GET /markets/{market_id}/card.png` (the image of its Open Graph and
//! Twitter tags) and `GET /oembed?url=<market page URL>` (oEmbed `rich`: an iframe of
//! `/embed/markets/{id}`).
//!
//! A card is rendered once per (market, what it shows): the question, status and prices are
//! its fingerprint, so a price change renders a new one at the next request and an unchanged
//! market is served from memory. The cache holds at most [`CACHED_CARDS`] cards.

mod png;
mod render;

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock, PoisonError};

use axum::extract::{Query, State};
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE, ETAG, IF_NONE_MATCH};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use bytes::Bytes;
use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::extract::ApiPath;
use super::AppState;
use crate::domain::market::MarketStatus;
use crate::domain::time::now_micros;
use crate::domain::views::{self, MarketDetail};
use crate::error::{Error, Result};
use crate::store::markets;

/// Cards kept in memory; past it the cache starts over.
const CACHED_CARDS: usize = 2_048;
/// The embed's size in an oEmbed answer.
const EMBED_WIDTH: u32 = 400;
const EMBED_HEIGHT: u32 = 300;

struct Cached {
    fingerprint: String,
    png: Bytes,
    etag: String,
}

fn cache() -> &'static Mutex<HashMap<String, Cached>> {
    static CACHE: OnceLock<Mutex<HashMap<String, Cached>>> = OnceLock::new();
    CACHE.get_or_init(Mutex::default)
}

pub(crate) fn router() -> Router<AppState> {
    Router::new()
        .route("/markets/{market_id}", get(market_page))
        .route("/markets/{market_id}/card.png", get(card))
        .route("/oembed", get(oembed))
}

/// Where this server is, as the client reached it: the Host header, https when a proxy says
/// so (`X-Forwarded-Proto`).
fn origin(headers: &HeaderMap) -> String {
    let host = headers.get(axum::http::header::HOST).and_then(|v| v.to_str().ok()).unwrap_or("localhost");
    let https = headers.get("x-forwarded-proto").and_then(|v| v.to_str().ok()) == Some("https");
    format!("{}://{host}", if https { "https" } else { "http" })
}

/// The market page, with Open Graph and Twitter card tags whose image is the market's card,
/// and its oEmbed link. An unknown market gets the page without them (the page says so).
async fn market_page(
    State(app): State<AppState>,
    axum::extract::Path(market_id): axum::extract::Path<String>,
    headers: HeaderMap,
) -> Response {
    let found = match market(&app, market_id.clone()).await {
        Ok(market) => Some(market),
        Err(Error::NotFound) => None,
        Err(e) => return e.into_response(),
    };
    let head = found.map(|market| share_tags(&market, &origin(&headers), &market_id)).unwrap_or_default();
    app.web.market_page(&headers, &head)
}

/// The `<head>` tags that make a shared link to the market show its card.
fn share_tags(market: &MarketDetail, origin: &str, market_id: &str) -> String {
    let page = format!("{origin}/markets/{market_id}");
    let image = format!("{page}/card.png");
    let prices: Vec<String> = market
        .outcomes
        .iter()
        .map(|o| {
            let tenths = render::per_mille(&o.outcome.current_price);
            format!("{} {}.{}%", o.outcome.title, tenths / 10, tenths % 10)
        })
        .collect();
    let description = format!("{} · {}", status_line(market), prices.join(" · "));
    let oembed = format!("{origin}/oembed?url={}", url::form_urlencoded::byte_serialize(page.as_bytes()).collect::<String>());
    let (title, description) = (escape_attribute(&market.common.question), escape_attribute(&description));
    let (page, image, oembed) = (escape_attribute(&page), escape_attribute(&image), escape_attribute(&oembed));
    [
        r#"<meta property="og:type" content="website">"#.to_string(),
        r#"<meta property="og:site_name" content="Hanson">"#.to_string(),
        format!(r#"<meta property="og:title" content="{title}">"#),
        format!(r#"<meta property="og:description" content="{description}">"#),
        format!(r#"<meta property="og:url" content="{page}">"#),
        format!(r#"<meta property="og:image" content="{image}">"#),
        format!(r#"<meta property="og:image:width" content="{}">"#, render::WIDTH),
        format!(r#"<meta property="og:image:height" content="{}">"#, render::HEIGHT),
        r#"<meta name="twitter:card" content="summary_large_image">"#.to_string(),
        format!(r#"<meta name="twitter:title" content="{title}">"#),
        format!(r#"<meta name="twitter:description" content="{description}">"#),
        format!(r#"<meta name="twitter:image" content="{image}">"#),
        format!(r#"<link rel="alternate" type="application/json+oembed" href="{oembed}" title="{title}">"#),
    ]
    .join("\n")
}

async fn market(app: &AppState, market_id: String) -> Result<MarketDetail> {
    let market = app.store.read(move |c| markets::market(c, &market_id, false)).await?.ok_or(Error::NotFound)?;
    views::market_detail(&market, now_micros())
}

/// The line in the card's top band.
fn status_line(market: &MarketDetail) -> String {
    match market.common.status {
        MarketStatus::Resolved => {
            let winner = market.outcomes.iter().find(|o| Some(&o.outcome.id) == market.winning_outcome_id.as_ref());
            format!("Resolved: {}", winner.map(|o| o.outcome.title.as_str()).unwrap_or("?"))
        }
        MarketStatus::Cancelled => "Cancelled".into(),
        MarketStatus::Closed => "Closed".into(),
        MarketStatus::Active if market.common.trading_paused => "Paused".into(),
        MarketStatus::Active => "Open".into(),
    }
}

async fn card(State(app): State<AppState>, ApiPath(market_id): ApiPath<String>, headers: HeaderMap) -> Result<Response> {
    let market = market(&app, market_id.clone()).await?;
    let status = status_line(&market);
    let outcomes: Vec<(String, String)> =
        market.outcomes.iter().map(|o| (o.outcome.title.clone(), o.outcome.current_price.clone())).collect();
    let fingerprint = format!("{}\u{0}{status}\u{0}{outcomes:?}", market.common.question);
    let hit = {
        let cards = cache().lock().unwrap_or_else(PoisonError::into_inner);
        cards.get(&market_id).filter(|c| c.fingerprint == fingerprint).map(|c| (c.png.clone(), c.etag.clone()))
    };
    let (png, etag) = match hit {
        Some(hit) => hit,
        None => {
            let question = market.common.question.clone();
            let rendered = tokio::task::spawn_blocking(move || {
                let card = render::Card {
                    question: &question,
                    status: &status,
                    outcomes: outcomes.iter().map(|(t, p)| (t.as_str(), p.as_str())).collect(),
                };
                png::encode(&render::pixels(&card), render::WIDTH, render::HEIGHT)
            })
            .await
            .map_err(Error::internal)?;
            let png = Bytes::from(rendered);
            let digest = Sha256::digest(fingerprint.as_bytes());
            let etag = format!("\"{}\"", digest.iter().take(8).map(|b| format!("{b:02x}")).collect::<String>());
            let mut cards = cache().lock().unwrap_or_else(PoisonError::into_inner);
            if cards.len() >= CACHED_CARDS {
                cards.clear();
            }
            cards.insert(market_id, Cached { fingerprint, png: png.clone(), etag: etag.clone() });
            (png, etag)
        }
    };
    let common = [(CACHE_CONTROL, "public, max-age=60".to_string()), (ETAG, etag.clone())];
    if headers.get(IF_NONE_MATCH).and_then(|v| v.to_str().ok()) == Some(etag.as_str()) {
        return Ok((StatusCode::NOT_MODIFIED, common).into_response());
    }
    Ok((common, [(CONTENT_TYPE, "image/png")], png).into_response())
}

#[derive(Deserialize)]
struct OembedQuery {
    url: Option<String>,
    format: Option<String>,
}

/// oEmbed for a market page URL (`https://HOST/markets/{id}`): a `rich` embed whose iframe
/// shows `/embed/markets/{id}` from the same origin.
async fn oembed(State(app): State<AppState>, Query(query): Query<OembedQuery>) -> Result<Json<serde_json::Value>> {
    if query.format.as_deref().is_some_and(|f| f != "json") {
        return Err(Error::invalid("format", "only json is offered"));
    }
    let Some(text) = query.url.filter(|u| !u.is_empty()) else { return Err(Error::invalid("url", "is required")) };
    let parsed = url::Url::parse(&text).map_err(|_| Error::invalid("url", "must be an http(s) URL of a market page"))?;
    let market_id = match (parsed.scheme(), parsed.path().strip_prefix("/markets/")) {
        ("http" | "https", Some(id)) if !id.is_empty() && !id.contains('/') => id.to_string(),
        _ => return Err(Error::invalid("url", "must be an http(s) URL of a market page (/markets/{market_id})")),
    };
    let market = market(&app, market_id.clone()).await?;
    let origin = parsed.origin().ascii_serialization();
    let src = format!("{origin}/embed/markets/{market_id}");
    let title = market.common.question.clone();
    let html = format!(
        r#"<iframe src="{src}" width="{EMBED_WIDTH}" height="{EMBED_HEIGHT}" style="border:0" loading="lazy" title="{}"></iframe>"#,
        escape_attribute(&title)
    );
    Ok(Json(serde_json::json!({
        "version": "1.0",
        "type": "rich",
        "provider_name": "Hanson",
        "provider_url": origin,
        "title": title,
        "html": html,
        "width": EMBED_WIDTH,
        "height": EMBED_HEIGHT,
        "thumbnail_url": format!("{origin}/markets/{market_id}/card.png"),
        "thumbnail_width": render::WIDTH,
        "thumbnail_height": render::HEIGHT,
    })))
}

/// Text for an HTML attribute value in double quotes.
pub(crate) fn escape_attribute(text: &str) -> String {
    text.replace('&', "&amp;").replace('"', "&quot;").replace('<', "&lt;").replace('>', "&gt;")
}
