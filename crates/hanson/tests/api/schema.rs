//! The response contract: every response the `TestApp` helpers receive is checked against the
//! OpenAPI document the server publishes (`hanson::api::openapi_json()`, the same value served
//! at `/v1/openapi.json`).
//!
//! The operation is found by method and by matching the concrete path against the documented
//! path templates (`{param}` matches one segment; the template with the most literal segments
//! wins). A path no template matches, or a method the path does not document, is skipped: tests
//! probe unknown routes on purpose. Otherwise the status must be documented for the operation,
//! the response's media type must be documented for that status, and a JSON body
//! (`application/json`, `application/problem+json`) must validate against its schema, with
//! `format` asserted. Any mismatch panics with the method, path, status, errors and body.
//!
//! Schemas are compiled with the `jsonschema` crate (draft 2020-12, as OpenAPI 3.1 uses) under a
//! root that embeds the document's `components`, so `#/components/...` references resolve;
//! one validator per (operation, status, media type), compiled on first use and cached.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

/// An (operation, status) pair that was checked: (METHOD, path template, status).
pub type Checked = (String, String, u16);

fn document() -> &'static Value {
    hanson::api::openapi_json()
}

/// The documented operation for `method` on `path` (query ignored), with its path template.
/// Like the router, the path is matched first (the template with the most literal segments
/// wins, so `/v1/markets/search` is not `/v1/markets/{market_id}`), then the method: a method
/// the path does not document (a 405) has no operation.
pub fn operation(method: &Method, path: &str) -> Option<(&'static str, &'static Value)> {
    let path = path.split(['?', '#']).next().unwrap_or_default();
    let segments: Vec<&str> = path.split('/').collect();
    let mut best: Option<(usize, &'static str, &'static Value)> = None;
    for (template, item) in document()["paths"].as_object()? {
        let parts: Vec<&str> = template.split('/').collect();
        if parts.len() != segments.len() {
            continue;
        }
        let mut literals = 0;
        let matches = parts.iter().zip(&segments).all(|(part, segment)| {
            if part.starts_with('{') && part.ends_with('}') {
                !segment.is_empty()
            } else {
                literals += 1;
                part == segment
            }
        });
        if matches && best.is_none_or(|(most, _, _)| literals > most) {
            best = Some((literals, template.as_str(), item));
        }
    }
    let (_, template, item) = best?;
    item.get(method.as_str().to_ascii_lowercase()).map(|op| (template, op))
}

/// Follows a local `$ref` (`#/components/responses/E404`) to its target.
fn deref(value: &'static Value) -> &'static Value {
    match value.get("$ref").and_then(Value::as_str) {
        Some(reference) => {
            let pointer = reference.strip_prefix('#').unwrap_or_else(|| panic!("non-local $ref {reference} in the document"));
            deref(document().pointer(pointer).unwrap_or_else(|| panic!("unresolved $ref {reference} in the document")))
        }
        None => value,
    }
}

/// The documented response for `status`: exact code, then `4XX`-style range, then `default`.
fn documented_response(op: &'static Value, status: u16) -> Option<&'static Value> {
    let responses = op.get("responses")?;
    [status.to_string(), format!("{}XX", status / 100), "default".to_string()]
        .iter()
        .find_map(|key| responses.get(key))
        .map(deref)
}

fn is_json(media_type: &str) -> bool {
    media_type == "application/json" || media_type.ends_with("+json")
}

type Cache = Mutex<HashMap<(String, String, u16, String), Arc<jsonschema::Validator>>>;

fn validator(key: (String, String, u16, String), schema: &Value) -> Arc<jsonschema::Validator> {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(v) = cache.lock().unwrap().get(&key) {
        return v.clone();
    }
    let root = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "components": document()["components"],
        "allOf": [schema],
    });
    let compiled = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .build(&root)
        .unwrap_or_else(|e| panic!("the schema of {} {} {} ({}) does not compile: {e}\n{schema}", key.0, key.1, key.2, key.3));
    let compiled = Arc::new(compiled);
    cache.lock().unwrap().entry(key).or_insert(compiled).clone()
}

/// Whether the documented request body schema of `method` `template` accepts `body`.
pub fn request_schema_accepts(method: &Method, template: &str, body: &Value) -> bool {
    let op = &document()["paths"][template][method.as_str().to_ascii_lowercase()];
    let schema = &op["requestBody"]["content"]["application/json"]["schema"];
    assert!(schema.is_object(), "{method} {template} documents no JSON request body");
    validator((method.to_string(), template.to_string(), 0, "request".to_string()), schema).is_valid(body)
}

/// Checks one response against the document; panics on a mismatch. Returns the
/// (operation, status) checked, or `None` when no documented operation matches the request.
pub fn check(method: &Method, path: &str, status: StatusCode, content_type: Option<&str>, body: &Value) -> Option<Checked> {
    let (template, op) = operation(method, path)?;
    let code = status.as_u16();
    let fail = |what: String| -> ! {
        panic!("response does not match the OpenAPI document: {what}\n  request: {method} {path} (documented as {method} {template})\n  status: {code}\n  content-type: {}\n  body: {body}", content_type.unwrap_or("none"))
    };
    let Some(response) = documented_response(op, code) else {
        fail(format!("undocumented status {code} for {method} {template}"));
    };
    let media_type = content_type.map(|t| t.split(';').next().unwrap_or_default().trim().to_ascii_lowercase());
    let content = response.get("content").and_then(Value::as_object);
    match (&media_type, content) {
        (None, None) => {}
        (None, Some(_)) if body.is_null() => fail("documented with content, but the response has no body".into()),
        (None, Some(_)) => fail("no content-type on a documented body".into()),
        (Some(media), content) => {
            let Some(entry) = content.and_then(|c| c.get(media.as_str())) else {
                let documented: Vec<&String> = content.map(|c| c.keys().collect()).unwrap_or_default();
                fail(format!("undocumented content type {media} for status {code} (documented: {documented:?})"));
            };
            if is_json(media) {
                let Some(schema) = entry.get("schema") else {
                    fail(format!("no schema documented for {media}"));
                };
                let v = validator((method.to_string(), template.to_string(), code, media.clone()), schema);
                let errors: Vec<String> = v
                    .iter_errors(body)
                    .map(|e| format!("    at {:?} (schema {}): {e}", e.instance_path().as_str(), e.schema_path().as_str()))
                    .collect();
                if !errors.is_empty() {
                    fail(format!("the body does not validate against the {media} schema of {code}:\n{}", errors.join("\n")));
                }
            }
        }
    }
    Some((method.to_string(), template.to_string(), code))
}

/// A short, realistic flow through the whole API: every answer it gets is checked against the
/// document (by the `TestApp` helpers), and enough distinct (operation, status) pairs must have
/// been checked to show that the check ran.
#[tokio::test]
async fn a_full_flow_answers_as_documented() {
    use crate::helpers::*;
    use crate::trading::*;
    use crate::users::*;

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
