//! The response contract at work: a short flow through the whole API whose every answer is
//! checked against the OpenAPI document (by the `TestApp` helpers, see `contract::openapi`),
//! and the check itself shown to reject spoiled bodies.

use reqwest::{Method, StatusCode};
use serde_json::json;

use super::support::contract::openapi::check;
use super::support::*;

/// A short, realistic flow through the whole API: every answer it gets is checked against the
/// document (by the `TestApp` helpers), and enough distinct (operation, status) pairs must have
/// been checked to show that the check ran.
#[tokio::test]
async fn a_full_flow_answers_as_documented() {
    // Provider, token, treasury and wallet deposits, a market, two logged-in traders.
    let a = Arena::new(2, 100 * ONE_TOKEN).await;
    let app = &a.f.app;
    let (t0, t1) = (&a.traders[0], &a.traders[1]);
    let key = Some(a.f.provider.key.as_str());
    let ok = |r: &Response| assert!(r.status.is_success(), "{} {}", r.status, r.body);

    ok(&app.post("/v1/markets/bet-preview", None, json!({ "outcome_id": a.outcome(0), "amount": (2 * ONE_TOKEN).to_string() })).await);
    ok(&a.bet(t0, 0, 2 * ONE_TOKEN).await);
    ok(&a.bet(t1, 1, 3 * ONE_TOKEN).await);
    let shares: u128 = a.holdings(t0).await["data"][0]["shares"].as_str().unwrap().parse().unwrap();
    ok(&app.post("/v1/markets/sell-preview", None, json!({ "outcome_id": a.outcome(0), "shares_amount": (shares / 2).to_string() })).await);
    ok(&a.sell_shares(t0, 0, shares / 2).await);

    ok(&app.post("/v1/markets/search", None, json!({ "filters": { "status": "active" } })).await);
    ok(&app.post("/v1/markets/search", None, json!({ "filters": { "search_query": "home team" }, "sort": { "field": "total_volume", "direction": "asc" } })).await);
    ok(&app.post("/v1/markets/positions/search", None, json!({ "filters": { "market_id": a.market_id() } })).await);
    ok(&app.post("/v1/markets/holdings/search", Some(&t1.session.access_token), json!({})).await);
    ok(&app.post("/v1/markets/price-history/search", None, json!({ "filters": { "market_id": a.market_id() } })).await);
    ok(&app.post("/v1/markets/price-history/search", None, json!({ "filters": { "market_id": a.market_id(), "interval": "1h" } })).await);
    ok(&app.get(&format!("/v1/markets/{}", a.market_id()), None).await);
    ok(&app.get("/v1/tokens", None).await);
    ok(&app.get("/v1/auth/profile", Some(&t0.session.access_token)).await);
    ok(&app.get("/v1/providers/treasury", key).await);
    ok(&app.get(&format!("/v1/providers/wallets/{}", t0.wallet.address), key).await);
    ok(&app.get("/healthz", None).await);
    ok(&app.get("/readyz", None).await);
    ok(&app.get("/v1/openapi.json", None).await);
    ok(&app.get("/docs", None).await);

    // Errors are problems, documented too.
    assert_problem(&app.get(&format!("/v1/markets/{}", uuid()), None).await, 404, "not_found");
    assert_problem(&app.post("/v1/markets/holdings/search", None, json!({})).await, 401, "unauthenticated");
    assert_field_error(&app.post("/v1/markets/search", None, json!({ "filters": { "status": "open" } })).await, "filters.status");

    ok(&a.resolve(0).await);
    assert_eq!(a.resolve(0).await.status.as_u16(), 409, "resolving twice conflicts");
    let position = a.holdings(t0).await["data"][0]["id"].as_str().unwrap().to_string();
    ok(&app.post(&format!("/v1/markets/positions/{position}/claim"), Some(&t0.session.access_token), json!({ "session_id": t0.session.session_id })).await);
    let lost = a.holdings(t1).await["data"][0]["id"].as_str().unwrap().to_string();
    assert_problem(&app.post(&format!("/v1/markets/positions/{lost}/claim"), Some(&t1.session.access_token), json!({ "session_id": t1.session.session_id })).await, 409, "not_claimable");

    let refreshed = app.post("/v1/auth/refresh", None, json!({ "refresh_token": t1.session.refresh_token, "provider_id": a.f.provider.id })).await;
    ok(&refreshed);
    let session = Session::from_body(&refreshed.body);
    ok(&app.post("/v1/auth/logout", Some(&session.access_token), json!({})).await);

    // Unknown routes and undocumented methods are skipped, not failed.
    assert_eq!(app.get("/v1/no-such-route", None).await.status, StatusCode::NOT_FOUND);
    assert_eq!(app.get("/v1/markets/search", None).await.status, StatusCode::METHOD_NOT_ALLOWED);

    // The check itself rejects a real body spoiled in each way the schemas can tell.
    let path = format!("/v1/markets/{}", a.market_id());
    let detail = app.get(&path, None).await.body;
    let json_type = Some("application/json");
    let mut spoiled = Vec::new();
    for (pointer, bad) in [
        ("/created_at", json!("yesterday")),
        ("/total_pool", json!("01")),
        ("/status", json!("open")),
        ("/creator_fee_percentage", json!(-1)),
        ("/category", json!(7)),
        ("/outcomes/0/total_shares", json!("-5")),
    ] {
        let mut body = detail.clone();
        *body.pointer_mut(pointer).unwrap() = bad;
        spoiled.push(body);
    }
    let mut missing = detail.clone();
    missing.as_object_mut().unwrap().remove("question");
    spoiled.push(missing);
    for body in &spoiled {
        let rejected = std::panic::catch_unwind(|| check(&Method::GET, &path, StatusCode::OK, json_type, body)).is_err();
        assert!(rejected, "a spoiled body passed: {body}");
    }
    let conflict = json!({ "type": "about:blank", "title": "Conflict", "status": 409, "detail": "x", "code": "x" });
    assert!(std::panic::catch_unwind(|| check(&Method::GET, &path, StatusCode::CONFLICT, Some("application/problem+json"), &conflict)).is_err(), "an undocumented status passed");
    assert!(std::panic::catch_unwind(|| check(&Method::GET, &path, StatusCode::OK, Some("text/plain"), &detail)).is_err(), "an undocumented media type passed");
    assert_eq!(check(&Method::GET, &path, StatusCode::OK, json_type, &detail), Some(("GET".into(), "/v1/markets/{market_id}".into(), 200)));

    let checked = app.checked.lock().unwrap();
    let statuses: Vec<String> = checked.iter().map(|(m, p, s)| format!("{s} {m} {p}")).collect();
    assert!(checked.len() >= 30, "only {} (operation, status) pairs checked: {statuses:#?}", checked.len());
    for (method, path, status) in [
        ("POST", "/v1/markets/{market_id}/bet", 200),
        ("POST", "/v1/markets/{market_id}/sell", 200),
        ("POST", "/v1/markets/holdings/search", 401),
        ("POST", "/v1/markets/positions/{position_id}/claim", 409),
        ("POST", "/v1/providers/markets", 201),
        ("GET", "/docs", 200),
    ] {
        assert!(checked.contains(&(method.to_string(), path.to_string(), status)), "{status} {method} {path} not checked: {statuses:#?}");
    }
    assert!(!checked.iter().any(|(_, p, _)| p.contains("no-such-route")));
}
