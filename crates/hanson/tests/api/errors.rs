use reqwest::StatusCode;
use serde_json::json;

use super::support::*;

async fn raw(app: &TestApp, method: reqwest::Method, path: &str, content_type: Option<&str>, body: Vec<u8>) -> Response {
    let mut req = app.client.request(method, format!("{}{}", app.base, path)).body(body);
    if let Some(ct) = content_type {
        req = req.header("content-type", ct);
    }
    let res = req.send().await.unwrap();
    let status = res.status();
    let headers = res.headers().clone();
    let body = serde_json::from_slice(&res.bytes().await.unwrap()).unwrap_or(serde_json::Value::Null);
    Response { status, body, headers }
}

#[tokio::test]
async fn framework_rejections_are_problem_json() {
    let app = TestApp::spawn().await;
    let post = reqwest::Method::POST;
    let malformed = raw(&app, post.clone(), "/v1/markets/search", Some("application/json"), b"{\"filters\":".to_vec()).await;
    assert_problem(&malformed, 400, "malformed_json");
    let not_json = raw(&app, post.clone(), "/v1/markets/search", Some("text/plain"), b"{}".to_vec()).await;
    assert_problem(&not_json, 415, "unsupported_media_type");
    let no_type = raw(&app, post.clone(), "/v1/markets/search", None, b"{}".to_vec()).await;
    assert_problem(&no_type, 415, "unsupported_media_type");
    let array = raw(&app, post.clone(), "/v1/markets/search", Some("application/json"), b"[]".to_vec()).await;
    assert_problem(&array, 422, "validation_failed");
    let unknown = app.get("/v1/nothing-here", None).await;
    assert_problem(&unknown, 404, "not_found");
    let wrong_method = app.get("/v1/markets/search", None).await;
    assert_problem(&wrong_method, 405, "method_not_allowed");
}

#[tokio::test]
async fn unknown_pages_are_an_html_404_for_browsers_and_problem_json_otherwise() {
    let app = TestApp::spawn().await;
    let get = |path: &str, accept: &str| app.client.get(format!("{}{path}", app.base)).header("accept", accept).send();
    let browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
    let page = get("/no/such/page", browser).await.unwrap();
    assert_eq!(page.status(), StatusCode::NOT_FOUND);
    assert_eq!(page.headers()["content-type"], "text/html; charset=utf-8");
    assert!(page.headers()["content-security-policy"].to_str().unwrap().contains("frame-ancestors 'none'"));
    assert!(page.headers().contains_key("x-request-id"));
    let html = page.text().await.unwrap();
    assert!(html.contains("<h1>Page not found</h1>") && html.contains(r#"<a href="/">Browse markets</a>"#), "{html}");
    // The API and the assets answer problem+json even to a browser; anything else does when
    // it does not ask for HTML.
    for (path, accept) in [("/v1/nothing-here", browser), ("/assets/0/none.js", browser), ("/no/such/page", "application/json"), ("/no/such/page", "*/*")] {
        let r = get(path, accept).await.unwrap();
        assert_eq!(r.status(), StatusCode::NOT_FOUND, "{path} {accept}");
        assert_eq!(r.headers()["content-type"], "application/problem+json", "{path} {accept}");
    }
    let post = app.client.post(format!("{}/no/such/page", app.base)).header("accept", browser).send().await.unwrap();
    assert_eq!(post.headers()["content-type"], "application/problem+json");
}

#[tokio::test]
async fn only_the_embeddable_card_may_be_framed() {
    let app = TestApp::spawn().await;
    let get = |path: &str| app.client.get(format!("{}{path}", app.base)).header("accept", "text/html").send();
    let embed = get("/embed/markets/01a2344a-0000-7000-8000-000000000000").await.unwrap();
    assert_eq!(embed.status(), StatusCode::OK);
    assert_eq!(embed.headers()["content-type"], "text/html; charset=utf-8");
    let csp = embed.headers()["content-security-policy"].to_str().unwrap().to_string();
    assert!(csp.contains("frame-ancestors *;") && csp.contains("script-src 'self'"), "{csp}");
    assert!(!embed.headers().contains_key("x-frame-options"));
    let html = embed.text().await.unwrap();
    assert!(html.contains("embed.js") && !html.contains("topbar"), "{html}");
    for path in ["/", "/markets/01a2344a-0000-7000-8000-000000000000", "/portfolio", "/console", "/no/such/page"] {
        let page = get(path).await.unwrap();
        assert_eq!(page.headers()["x-frame-options"], "DENY", "{path}");
        assert!(page.headers()["content-security-policy"].to_str().unwrap().contains("frame-ancestors 'none'"), "{path}");
    }
}

#[tokio::test]
async fn stream_refusals_are_problem_json() {
    let f = Fixture::new().await;
    let market = f.market(2).await;
    let events = format!("/v1/markets/{}/events", market["id"].as_str().unwrap());
    // A query that does not read (here a repeated parameter) is 422, not axum's text/plain 400.
    let r = f.app.get(&format!("{events}?after_seq=1&after_seq=2"), None).await;
    assert_problem(&r, 422, "validation_failed");
    assert_field_error(&r, "query");
    // Both resume points are checked when sent, though the header wins.
    let r = f.app.client.get(format!("{}{events}?after_seq=-1", f.app.base)).header("last-event-id", "0").send().await.unwrap();
    assert_eq!(r.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["errors"][0]["field"], "after_seq");
    // A plain GET of the WebSocket route: 426, naming the protocol to upgrade to.
    let r = f.app.client.get(format!("{}/v1/ws", f.app.base)).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::UPGRADE_REQUIRED);
    assert_eq!(r.headers()["upgrade"], "websocket");
    assert_eq!(r.headers()["content-type"], "application/problem+json");
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["code"], "upgrade_required");
}

#[tokio::test]
async fn bodies_over_64_kib_are_413_and_64_kib_itself_is_accepted() {
    let app = TestApp::spawn().await;
    // A JSON object padded with spaces to exactly the limit, then one byte more.
    let mut body = b"{\"filters\":{}}".to_vec();
    body.resize(65_536, b' ');
    let at_limit = raw(&app, reqwest::Method::POST, "/v1/markets/search", Some("application/json"), body.clone()).await;
    assert_eq!(at_limit.status, StatusCode::OK, "{}", at_limit.body);
    body.push(b' ');
    let over = raw(&app, reqwest::Method::POST, "/v1/markets/search", Some("application/json"), body).await;
    assert_problem(&over, 413, "payload_too_large");
}

#[tokio::test]
async fn every_response_carries_a_request_id() {
    let app = TestApp::spawn().await;
    let a = app.get("/healthz", None).await;
    let b = app.get("/v1/nothing", None).await;
    let id_a = a.headers.get("x-request-id").unwrap().to_str().unwrap().to_string();
    let id_b = b.headers.get("x-request-id").unwrap().to_str().unwrap().to_string();
    assert_ne!(id_a, id_b);
    assert_eq!(id_a.len(), 36);
    let echoed = app.client.get(format!("{}/healthz", app.base)).header("x-request-id", "client-chosen-1").send().await.unwrap();
    assert_eq!(echoed.headers()["x-request-id"], "client-chosen-1");
}

#[tokio::test]
async fn health_and_readiness() {
    let app = TestApp::spawn().await;
    let h = app.get("/healthz", None).await;
    assert_eq!((h.status, h.body), (StatusCode::OK, json!({ "status": "ok" })));
    let r = app.get("/readyz", None).await;
    assert_eq!((r.status, r.body), (StatusCode::OK, json!({ "status": "ready" })));
}

#[tokio::test]
async fn auth_routes_are_rate_limited_per_ip() {
    let limits = Limits { auth_per_ip: Rule { per_second: 0.01, burst: 2.0 }, ..Default::default() };
    let app = TestApp::spawn_with(limits).await;
    let body = json!({ "wallet_address": "0x0000000000000000000000000000000000000001", "provider_id": uuid() });
    for _ in 0..2 {
        let r = app.post("/v1/auth/nonce", None, body.clone()).await;
        assert_ne!(r.status, StatusCode::TOO_MANY_REQUESTS);
    }
    let limited = app.post("/v1/auth/nonce", None, body).await;
    assert_problem(&limited, 429, "rate_limited");
    let retry_after: u64 = limited.headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=100).contains(&retry_after), "{retry_after}");
    // Other routes are not limited by the auth rule.
    assert_eq!(app.get("/healthz", None).await.status, StatusCode::OK);
}

#[tokio::test]
async fn general_limits_apply_per_ip_and_per_credential() {
    let limits = Limits {
        general_per_ip: Rule { per_second: 0.01, burst: 3.0 },
        ..Default::default()
    };
    let app = TestApp::spawn_with(limits).await;
    for _ in 0..3 {
        assert_eq!(app.get("/healthz", None).await.status, StatusCode::OK);
    }
    assert_problem(&app.get("/healthz", None).await, 429, "rate_limited");

    let limits = Limits { per_principal: Rule { per_second: 0.01, burst: 1.0 }, ..Default::default() };
    let app = TestApp::spawn_with(limits).await;
    assert_ne!(app.get("/v1/providers/treasury", Some("hk_a")).await.status, StatusCode::TOO_MANY_REQUESTS);
    assert_problem(&app.get("/v1/providers/treasury", Some("hk_a")).await, 429, "rate_limited");
    assert_ne!(app.get("/v1/providers/treasury", Some("hk_b")).await.status, StatusCode::TOO_MANY_REQUESTS);
}
