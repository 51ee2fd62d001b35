//! The web app: five HTML pages, a 404 page, the embeddable market card and their assets
//! (`crates/hanson/web/`), built into the binary.
//!
//! Assets live under `/assets/<hash>/`, where the hash covers every asset, so they are cached
//! for a year; pages are revalidated on every load and carry a strict Content-Security-Policy.
//! Text is gzipped once at startup. `--web-dir` serves the files from disk instead, read on
//! every request, for working on the app without rebuilding.

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;

use axum::extract::{Path, State};
use axum::http::header::{CACHE_CONTROL, CONTENT_ENCODING, CONTENT_TYPE, VARY};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use bytes::Bytes;
use sha2::{Digest, Sha256};

use crate::error::Error;

include!(concat!(env!("OUT_DIR"), "/web_files.rs"));

const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
    img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; \
    frame-ancestors 'none'; form-action 'self'";
/// The embeddable card's policy: the pages' own, but any site may frame it.
const EMBED_CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
    img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; \
    frame-ancestors *; form-action 'self'";
const IMMUTABLE: &str = "public, max-age=31536000, immutable";
/// Where `--web-dir` serves from: never cached, since the files change under it.
const DEV_BASE: &str = "/assets/dev";

/// What a response is, for its security headers.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Asset,
    /// A page: never framed.
    Page,
    /// The market card: framed by any site (the only response that may be).
    Embed,
}

struct File {
    content_type: &'static str,
    raw: Bytes,
    gzip: Option<Bytes>,
}

impl File {
    fn new(name: &str, raw: Bytes) -> File {
        let content_type = content_type(name);
        let gzip = content_type.contains("text")
            || content_type.contains("javascript")
            || content_type.contains("json")
            || content_type.contains("svg");
        File { content_type, gzip: gzip.then(|| gzipped(&raw)), raw }
    }

    fn respond(&self, headers: &HeaderMap, cache: &'static str, kind: Kind) -> Response {
        let accepts_gzip =
            headers.get_all(axum::http::header::ACCEPT_ENCODING).iter().filter_map(|v| v.to_str().ok()).flat_map(|v| v.split(',')).any(
                |coding| {
                    let mut parts = coding.split(';').map(str::trim);
                    parts.next() == Some("gzip") && !parts.any(|p| p.replace(' ', "") == "q=0")
                },
            );
        let mut response = match (&self.gzip, accepts_gzip) {
            (Some(gzip), true) => ([(CONTENT_ENCODING, "gzip")], gzip.clone()).into_response(),
            _ => self.raw.clone().into_response(),
        };
        let headers = response.headers_mut();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static(self.content_type));
        headers.insert(CACHE_CONTROL, HeaderValue::from_static(cache));
        headers.insert(VARY, HeaderValue::from_static("accept-encoding"));
        headers.insert("x-content-type-options", HeaderValue::from_static("nosniff"));
        match kind {
            Kind::Asset => {}
            Kind::Page => {
                headers.insert("content-security-policy", HeaderValue::from_static(CONTENT_SECURITY_POLICY));
                headers.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
                headers.insert("x-frame-options", HeaderValue::from_static("DENY"));
            }
            Kind::Embed => {
                headers.insert("content-security-policy", HeaderValue::from_static(EMBED_CONTENT_SECURITY_POLICY));
                headers.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
            }
        }
        response
    }
}

pub(crate) fn gzipped(raw: &[u8]) -> Bytes {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(raw).expect("writing to a Vec cannot fail");
    Bytes::from(encoder.finish().expect("writing to a Vec cannot fail"))
}

fn content_type(name: &str) -> &'static str {
    match name.rsplit('.').next().unwrap_or_default() {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "json" => "application/json",
        "txt" | "md" => "text/plain; charset=utf-8",
        "woff2" => "font/woff2",
        _ => "application/octet-stream",
    }
}

/// The pages and the routes that serve them.
#[derive(Clone, Copy)]
enum Page {
    Markets,
    Market,
    Portfolio,
    Console,
    Leaderboard,
    /// What a browser gets for an address that is neither a page nor the API.
    NotFound,
    /// A market's compact live card, for other sites to frame.
    Embed,
}

impl Page {
    const ALL: [Page; 7] = [Page::Markets, Page::Market, Page::Portfolio, Page::Console, Page::Leaderboard, Page::NotFound, Page::Embed];

    /// Its link in the top bar, marked as the current page there.
    fn nav_link(self) -> Option<&'static str> {
        match self {
            Page::Markets => Some(r#"<a href="/">"#),
            Page::Portfolio => Some(r#"<a href="/portfolio">"#),
            Page::Console => Some(r#"<a href="/console">"#),
            Page::Leaderboard => Some(r#"<a href="/leaderboard">"#),
            Page::Market | Page::NotFound | Page::Embed => None,
        }
    }

    /// The page's HTML with the parts every page shares (`pages/_head.html` for `%HEAD%`,
    /// `pages/_topbar.html` for `%TOPBAR%`) and the asset path filled in. `read` gives a file
    /// under `web/` as text.
    fn compose(self, read: impl Fn(&str) -> Option<String>, assets: &str) -> Option<String> {
        let mut topbar = read("pages/_topbar.html").unwrap_or_default();
        if let Some(link) = self.nav_link() {
            topbar = topbar.replacen(link, &link.replace('>', r#" aria-current="page">"#), 1);
        }
        let html = read(self.file())?
            .replace("%HEAD%", read("pages/_head.html").unwrap_or_default().trim_end())
            .replace("%TOPBAR%", topbar.trim_end());
        Some(html.replace("%ASSETS%", assets))
    }

    fn file(self) -> &'static str {
        match self {
            Page::Markets => "pages/markets.html",
            Page::Market => "pages/market.html",
            Page::Portfolio => "pages/portfolio.html",
            Page::Console => "pages/console.html",
            Page::Leaderboard => "pages/leaderboard.html",
            Page::NotFound => "pages/404.html",
            Page::Embed => "pages/embed.html",
        }
    }

    fn kind(self) -> Kind {
        if matches!(self, Page::Embed) {
            Kind::Embed
        } else {
            Kind::Page
        }
    }
}

pub(crate) struct WebApp {
    source: Source,
}

enum Source {
    Embedded { base: String, pages: HashMap<&'static str, File>, assets: HashMap<String, File> },
    Dir(PathBuf),
}

/// The API client's route table, generated from the OpenAPI document so the app calls every
/// operation by its `operationId` and cannot drift from the server.
fn api_module() -> Bytes {
    let mut operations = serde_json::Map::new();
    if let Some(paths) = super::openapi_json().get("paths").and_then(|p| p.as_object()) {
        for (path, item) in paths {
            for (method, operation) in item.as_object().into_iter().flatten() {
                if let Some(id) = operation.get("operationId").and_then(|id| id.as_str()) {
                    operations.insert(id.to_string(), serde_json::json!([method.to_uppercase(), path]));
                }
            }
        }
    }
    let table = serde_json::to_string(&operations).expect("a JSON map serializes");
    Bytes::from(format!(
        "// Generated by hanson serve from GET /v1/openapi.json: operationId -> [method, path].\nexport const operations = {table};\n"
    ))
}

impl WebApp {
    pub(crate) fn new(dir: Option<PathBuf>) -> WebApp {
        if let Some(dir) = dir {
            return WebApp { source: Source::Dir(dir) };
        }
        let mut assets: HashMap<String, Bytes> = WEB_FILES
            .iter()
            .filter_map(|(name, bytes)| name.strip_prefix("assets/").map(|n| (n.to_string(), Bytes::from_static(bytes))))
            .collect();
        assets.insert("api.js".into(), api_module());
        let mut names: Vec<&String> = assets.keys().collect();
        names.sort();
        let mut hasher = Sha256::new();
        for name in names {
            hasher.update(name.as_bytes());
            hasher.update([0]);
            hasher.update(&assets[name]);
        }
        let hash: String = hasher.finalize().iter().take(6).map(|b| format!("{b:02x}")).collect();
        let base = format!("/assets/{hash}");
        let pages = Page::ALL
            .into_iter()
            .filter_map(|page| {
                let read = |name: &str| WEB_FILES.iter().find(|(n, _)| *n == name).map(|(_, b)| String::from_utf8_lossy(b).into_owned());
                let html = page.compose(read, &base)?;
                Some((page.file(), File::new(page.file(), Bytes::from(html))))
            })
            .collect();
        let assets: HashMap<String, File> = assets
            .into_iter()
            .map(|(name, raw)| {
                let file = File::new(&name, raw);
                (name, file)
            })
            .collect();
        WebApp { source: Source::Embedded { base, pages, assets } }
    }

    fn page(&self, page: Page, headers: &HeaderMap) -> Response {
        match &self.source {
            Source::Embedded { pages, .. } => match pages.get(page.file()) {
                Some(file) => file.respond(headers, "no-cache", page.kind()),
                None => Error::NoRoute.into_response(),
            },
            Source::Dir(dir) => match page.compose(|name| std::fs::read_to_string(dir.join(name)).ok(), DEV_BASE) {
                Some(html) => File::new(page.file(), Bytes::from(html)).respond(headers, "no-store", page.kind()),
                None => Error::NoRoute.into_response(),
            },
        }
    }

    /// The 404 page, for a browser that asked for an address nothing serves.
    pub(crate) fn not_found(&self, headers: &HeaderMap) -> Response {
        let mut response = self.page(Page::NotFound, headers);
        *response.status_mut() = StatusCode::NOT_FOUND;
        response
    }

    /// The market page with `head` (its Open Graph and Twitter tags, escaped by the caller)
    /// added at the end of its `<head>`.
    pub(crate) fn market_page(&self, headers: &HeaderMap, head: &str) -> Response {
        let (html, cache) = match &self.source {
            Source::Embedded { pages, .. } => (pages.get(Page::Market.file()).map(|f| f.raw.clone()), "no-cache"),
            Source::Dir(dir) => {
                (Page::Market.compose(|name| std::fs::read_to_string(dir.join(name)).ok(), DEV_BASE).map(Bytes::from), "no-store")
            }
        };
        let Some(html) = html else { return Error::NoRoute.into_response() };
        let html = String::from_utf8_lossy(&html).replacen("</head>", &format!("{head}\n</head>"), 1);
        File::new(Page::Market.file(), Bytes::from(html)).respond(headers, cache, Kind::Page)
    }

    fn asset(&self, hash: &str, name: &str, headers: &HeaderMap) -> Response {
        match &self.source {
            Source::Embedded { base, assets, .. } => match assets.get(name) {
                Some(file) if base.strip_prefix("/assets/") == Some(hash) => file.respond(headers, IMMUTABLE, Kind::Asset),
                _ => Error::NoRoute.into_response(),
            },
            Source::Dir(dir) => {
                if hash != "dev" || name.split('/').any(|part| part.is_empty() || part.starts_with('.')) {
                    return Error::NoRoute.into_response();
                }
                let raw = if name == "api.js" { Ok(api_module()) } else { std::fs::read(dir.join("assets").join(name)).map(Bytes::from) };
                match raw {
                    Ok(raw) => File::new(name, raw).respond(headers, "no-store", Kind::Asset),
                    Err(_) => Error::NoRoute.into_response(),
                }
            }
        }
    }

    /// The favicon at the address browsers ask for without being told.
    fn favicon(&self, headers: &HeaderMap) -> Response {
        match &self.source {
            Source::Embedded { base, .. } => {
                let hash = base.trim_start_matches("/assets/").to_string();
                self.asset(&hash, "favicon.svg", headers)
            }
            Source::Dir(_) => self.asset("dev", "favicon.svg", headers),
        }
    }
}

/// Whether a request nothing serves gets the HTML 404 page rather than problem+json: a
/// browser's GET (it accepts HTML) of an address outside the API and the assets.
pub(crate) fn wants_html_404(method: &Method, path: &str, headers: &HeaderMap) -> bool {
    let api = ["/v1/", "/assets/"].iter().any(|prefix| path.starts_with(prefix)) || path == "/v1";
    let html = headers.get_all(axum::http::header::ACCEPT).iter().filter_map(|v| v.to_str().ok()).any(|v| v.contains("text/html"));
    (method == Method::GET || method == Method::HEAD) && !api && html
}

/// The pages but the market page (`api::card` serves it, with its share tags), and the assets.
pub(crate) fn router<S: Clone + Send + Sync + 'static>(web: std::sync::Arc<WebApp>) -> Router<S> {
    let page = |page: Page| move |State(web): State<std::sync::Arc<WebApp>>, headers: HeaderMap| async move { web.page(page, &headers) };
    Router::new()
        .route("/", get(page(Page::Markets)))
        .route("/portfolio", get(page(Page::Portfolio)))
        .route("/console", get(page(Page::Console)))
        .route("/embed/markets/{market_id}", get(page(Page::Embed)))
        .route("/leaderboard", get(page(Page::Leaderboard)))
        .route("/favicon.ico", get(|State(web): State<std::sync::Arc<WebApp>>, headers: HeaderMap| async move { web.favicon(&headers) }))
        .route(
            "/assets/{hash}/{*name}",
            get(|State(web): State<std::sync::Arc<WebApp>>, Path((hash, name)): Path<(String, String)>, headers: HeaderMap| async move {
                web.asset(&hash, &name, &headers)
            }),
        )
        .with_state(web)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_page_is_composed_whole_with_its_own_link_marked_current() {
        let read = |name: &str| WEB_FILES.iter().find(|(n, _)| *n == name).map(|(_, b)| String::from_utf8_lossy(b).into_owned());
        for page in Page::ALL {
            let html = page.compose(read, "/assets/x").expect("the page exists");
            assert!(!html.contains('%'), "{}: a placeholder is left", page.file());
            // The embeddable card is its own small page: no top bar, its own style sheet.
            let (css, topbar) = if matches!(page, Page::Embed) { ("embed.css", false) } else { ("app.css", true) };
            assert!(html.contains(&format!(r#"<link rel="stylesheet" href="/assets/x/{css}">"#)), "{}", page.file());
            assert_eq!(html.contains(r#"<header class="topbar">"#), topbar, "{}", page.file());
            let current = html.matches(r#"aria-current="page""#).count();
            assert_eq!(current, usize::from(page.nav_link().is_some()), "{}", page.file());
        }
        let markets = Page::Markets.compose(read, "/a").unwrap();
        assert!(markets.contains(r#"<a href="/" aria-current="page">Markets</a>"#));
    }
}
