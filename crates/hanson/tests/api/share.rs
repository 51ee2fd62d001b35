//! Sharing a market: its card (`/markets/{id}/card.png`, 1200x630, cached until its prices
//! change), oEmbed (`/oembed`), and the Open Graph and Twitter tags of its page.

use reqwest::StatusCode;
use serde_json::json;

use super::support::*;

/// (width, height) from a PNG's IHDR.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(&bytes[12..16], b"IHDR");
    (u32::from_be_bytes(bytes[16..20].try_into().unwrap()), u32::from_be_bytes(bytes[20..24].try_into().unwrap()))
}

async fn card(app: &TestApp, market_id: &str, if_none_match: Option<&str>) -> (StatusCode, String, Vec<u8>) {
    let mut request = app.client.get(format!("{}/markets/{market_id}/card.png", app.base));
    if let Some(etag) = if_none_match {
        request = request.header("if-none-match", etag);
    }
    let response = request.send().await.unwrap();
    let status = response.status();
    let etag = response.headers().get("etag").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
    if status == StatusCode::OK {
        assert_eq!(response.headers()["content-type"], "image/png");
        assert_eq!(response.headers()["cache-control"], "public, max-age=60");
    }
    (status, etag, response.bytes().await.unwrap().to_vec())
}

#[tokio::test]
async fn a_card_is_a_1200x630_png_cached_until_the_prices_change() {
    let arena = Arena::new(1, 100 * ONE_TOKEN).await;
    let app = &arena.f.app;
    let (status, etag, first) = card(app, arena.market_id(), None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(png_size(&first), (1200, 630));
    // The same card again, and nothing at all for a client that has it.
    let (_, same_etag, again) = card(app, arena.market_id(), None).await;
    assert_eq!((same_etag.as_str(), again.len()), (etag.as_str(), first.len()));
    assert!(again == first);
    let (status, _, body) = card(app, arena.market_id(), Some(&etag)).await;
    assert_eq!((status, body.len()), (StatusCode::NOT_MODIFIED, 0));
    // A bet moves the prices: a new card.
    let bet = arena.bet(&arena.traders[0], 0, 10 * ONE_TOKEN).await;
    assert_eq!(bet.status, StatusCode::OK, "{}", bet.body);
    let (status, moved_etag, moved) = card(app, arena.market_id(), Some(&etag)).await;
    assert_eq!(status, StatusCode::OK);
    assert_ne!(moved_etag, etag);
    assert!(moved != first);
    assert_eq!(png_size(&moved), (1200, 630));
    // An unknown market: 404 problem+json.
    let unknown = app.get(&format!("/markets/{}/card.png", uuid()), None).await;
    assert_problem(&unknown, 404, "not_found");
}

#[tokio::test]
async fn oembed_answers_a_rich_iframe_of_the_embed() {
    let f = Fixture::new().await;
    let market = f.market(2).await;
    let id = market["id"].as_str().unwrap();
    let page = format!("{}/markets/{id}", f.app.base);
    let query = |url: &str| format!("/oembed?url={}", url::form_urlencoded::byte_serialize(url.as_bytes()).collect::<String>());
    let answer = f.app.get(&query(&page), None).await;
    assert_eq!(answer.status, StatusCode::OK);
    let base = &f.app.base;
    assert_eq!(
        answer.body,
        json!({
            "version": "1.0",
            "type": "rich",
            "provider_name": "Hanson",
            "provider_url": base,
            "title": "Will the home team win?",
            "html": format!(r#"<iframe src="{base}/embed/markets/{id}" width="400" height="300" style="border:0" loading="lazy" title="Will the home team win?"></iframe>"#),
            "width": 400,
            "height": 300,
            "thumbnail_url": format!("{base}/markets/{id}/card.png"),
            "thumbnail_width": 1200,
            "thumbnail_height": 630,
        })
    );
    assert_field_error(&f.app.get("/oembed", None).await, "url");
    assert_field_error(&f.app.get(&query("not a url"), None).await, "url");
    assert_field_error(&f.app.get(&query(&format!("{base}/portfolio")), None).await, "url");
    assert_field_error(&f.app.get(&format!("{}&format=xml", query(&page)), None).await, "format");
    assert_problem(&f.app.get(&query(&format!("{base}/markets/{}", uuid())), None).await, 404, "not_found");
}

#[tokio::test]
async fn the_market_page_carries_open_graph_and_twitter_tags() {
    let f = Fixture::new().await;
    let mut body = f.market_body(2);
    body["question"] = json!(r#"Will "quotes" & <tags> be escaped?"#);
    let created = f.create_market(body).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let id = created.body["market"]["id"].as_str().unwrap().to_string();
    let html = f.app.client.get(format!("{}/markets/{id}", f.app.base)).send().await.unwrap().text().await.unwrap();
    let origin = &f.app.base;
    let title = "Will &quot;quotes&quot; &amp; &lt;tags&gt; be escaped?";
    let page = format!("{origin}/markets/{id}");
    let encoded: String = url::form_urlencoded::byte_serialize(page.as_bytes()).collect();
    let description = "Open · Outcome 0 50.0% · Outcome 1 50.0%";
    let tags = [
        r#"<meta property="og:type" content="website">"#.to_string(),
        r#"<meta property="og:site_name" content="Hanson">"#.to_string(),
        format!(r#"<meta property="og:title" content="{title}">"#),
        format!(r#"<meta property="og:description" content="{description}">"#),
        format!(r#"<meta property="og:url" content="{page}">"#),
        format!(r#"<meta property="og:image" content="{page}/card.png">"#),
        r#"<meta property="og:image:width" content="1200">"#.to_string(),
        r#"<meta property="og:image:height" content="630">"#.to_string(),
        r#"<meta name="twitter:card" content="summary_large_image">"#.to_string(),
        format!(r#"<meta name="twitter:title" content="{title}">"#),
        format!(r#"<meta name="twitter:description" content="{description}">"#),
        format!(r#"<meta name="twitter:image" content="{page}/card.png">"#),
        format!(r#"<link rel="alternate" type="application/json+oembed" href="{origin}/oembed?url={encoded}" title="{title}">"#),
    ]
    .join("\n");
    assert!(html.contains(&format!("{tags}\n</head>")), "{html}");
    // An unknown market's page is the page alone (it says the market is not found).
    let unknown = f.app.client.get(format!("{}/markets/{}", f.app.base, uuid())).send().await.unwrap();
    assert_eq!(unknown.status(), StatusCode::OK);
    assert!(!unknown.text().await.unwrap().contains("og:"));
}
