use std::collections::BTreeSet;

use reqwest::StatusCode;
use serde_json::{json, Value};

use super::support::*;

/// Every route the service answers, as (method, path template).
const ROUTES: &[(&str, &str)] = &[
    ("post", "/v1/markets/search"),
    ("get", "/v1/markets/{market_id}"),
    ("post", "/v1/markets/bet-preview"),
    ("post", "/v1/markets/sell-preview"),
    ("get", "/v1/tokens"),
    ("post", "/v1/markets/positions/search"),
    ("post", "/v1/markets/price-history/search"),
    ("post", "/v1/markets/{market_id}/bet"),
    ("post", "/v1/markets/{market_id}/sell"),
    ("post", "/v1/markets/holdings/search"),
    ("post", "/v1/markets/positions/{position_id}/claim"),
    ("post", "/v1/providers/markets/{market_id}/resolve"),
    ("post", "/v1/providers/markets/{market_id}/cancel"),
    ("post", "/v1/providers/markets/{market_id}/pause"),
    ("post", "/v1/providers/markets/{market_id}/resume"),
    ("post", "/v1/providers/markets"),
    ("put", "/v1/providers/markets/{market_id}"),
    ("post", "/v1/providers/markets/{market_id}/outcomes"),
    ("put", "/v1/providers/markets/{market_id}/outcomes/{outcome_id}"),
    ("get", "/v1/providers/treasury"),
    ("post", "/v1/providers/treasury/deposits"),
    ("post", "/v1/providers/wallets/deposits"),
    ("post", "/v1/providers/wallets/withdrawals"),
    ("get", "/v1/providers/wallets/{wallet_address}"),
    ("post", "/v1/auth/nonce"),
    ("post", "/v1/auth/login"),
    ("post", "/v1/auth/refresh"),
    ("get", "/v1/auth/profile"),
    ("post", "/v1/auth/logout"),
    ("put", "/v1/providers/alt-keys/{wallet_address}/{key_id}"),
    ("get", "/healthz"),
    ("get", "/readyz"),
    ("get", "/v1/openapi.json"),
    ("get", "/metrics"),
    ("get", "/docs"),
    ("get", "/v1/markets/{market_id}/events"),
    ("get", "/v1/markets/{market_id}/candles"),
    ("get", "/v1/markets/{market_id}/ticker"),
    ("get", "/v1/markets/{market_id}/leaderboard"),
    ("get", "/v1/providers/{provider_id}/leaderboard"),
    ("get", "/v1/providers/exports/trades"),
    ("get", "/v1/providers/exports/ledger"),
    ("get", "/v1/auth/events"),
    ("get", "/v1/ws"),
    ("get", "/v1/asyncapi.json"),
    ("post", "/v1/providers/webhooks"),
    ("get", "/v1/providers/webhooks"),
    ("get", "/v1/providers/webhooks/{webhook_id}"),
    ("put", "/v1/providers/webhooks/{webhook_id}"),
    ("delete", "/v1/providers/webhooks/{webhook_id}"),
    ("post", "/v1/providers/webhooks/{webhook_id}/rotate-secret"),
    ("get", "/v1/providers/webhooks/{webhook_id}/deliveries"),
    ("post", "/v1/providers/webhooks/{webhook_id}/deliveries/{delivery_id}/retry"),
    ("post", "/v1/providers/webhooks/{webhook_id}/test"),
];

fn resolve<'a>(doc: &'a Value, reference: &str) -> &'a Value {
    let pointer = reference.strip_prefix('#').expect("local reference");
    doc.pointer(pointer).unwrap_or_else(|| panic!("unresolved $ref {reference}"))
}

fn check_refs(doc: &Value, node: &Value) {
    match node {
        Value::Object(map) => {
            if let Some(Value::String(r)) = map.get("$ref") {
                resolve(doc, r);
            }
            map.values().for_each(|v| check_refs(doc, v));
        }
        Value::Array(items) => items.iter().for_each(|v| check_refs(doc, v)),
        _ => {}
    }
}

#[tokio::test]
async fn the_document_lists_every_route_and_every_route_answers() {
    let app = TestApp::spawn().await;
    let r = app.get("/v1/openapi.json", None).await;
    assert_eq!(r.status, StatusCode::OK);
    let doc = r.body;
    assert_eq!(doc["openapi"], "3.1.0");
    check_refs(&doc, &doc);
    let documented: BTreeSet<(String, String)> = doc["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(path, item)| item.as_object().unwrap().keys().map(move |m| (m.clone(), path.clone())))
        .collect();
    let expected: BTreeSet<(String, String)> = ROUTES.iter().map(|(m, p)| (m.to_string(), p.to_string())).collect();
    assert_eq!(documented, expected);
    for (method, path) in ROUTES {
        let op = &doc["paths"][path][method];
        assert!(op["summary"].is_string() && op["operationId"].is_string(), "{method} {path}");
        let responses = op["responses"].as_object().unwrap();
        assert!(responses.keys().any(|k| k.starts_with('2') || k == "101"), "{method} {path} has a success response");
        assert!(responses.contains_key("500"), "{method} {path} documents 500");
        // The route exists: it does not fall through to 404 for an unknown route or to 405.
        let concrete = path.replace("{market_id}", &uuid()).replace("{outcome_id}", &uuid()).replace("{wallet_address}", "0x0000000000000000000000000000000000000001").replace("{key_id}", "0").replace("{position_id}", &uuid()).replace("{webhook_id}", &uuid()).replace("{delivery_id}", &uuid());
        let method = reqwest::Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
        let res = app.client.request(method.clone(), format!("{}{}", app.base, concrete)).header("content-type", "application/json").body("{}").send().await.unwrap();
        assert_ne!(res.status(), StatusCode::METHOD_NOT_ALLOWED, "{method} {path}");
        if res.status() == StatusCode::NOT_FOUND {
            let body: Value = res.json().await.unwrap();
            assert_ne!(body["detail"], "no route matches this path", "{method} {path}");
        }
    }
}

#[tokio::test]
async fn the_viewer_is_served_without_a_cdn() {
    let app = TestApp::spawn().await;
    let res = app.client.get(format!("{}/docs", app.base)).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert!(res.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
    let html = res.text().await.unwrap();
    assert!(html.contains(r#"spec-url="/v1/openapi.json""#));
    assert!(html.contains(r#"load-fonts="false""#), "no fonts from elsewhere");
    assert!(!html.contains("https://"), "no external assets");
    // The vendored RapiDoc bundle, from the binary, gzipped, cached for good.
    assert!(html.contains(r#"<script type="module" src="/docs/rapidoc-9.3.8.min.js"></script>"#));
    let script = app.client.get(format!("{}/docs/rapidoc-9.3.8.min.js", app.base)).header("accept-encoding", "gzip").send().await.unwrap();
    assert_eq!(script.status(), StatusCode::OK);
    assert_eq!(script.headers()["content-type"], "text/javascript; charset=utf-8");
    assert_eq!(script.headers()["content-encoding"], "gzip");
    assert_eq!(script.headers()["cache-control"], "public, max-age=31536000, immutable");
    let plain = app.client.get(format!("{}/docs/rapidoc-9.3.8.min.js", app.base)).send().await.unwrap();
    assert!(plain.headers().get("content-encoding").is_none());
    let body = plain.bytes().await.unwrap();
    let vendored = include_bytes!("../../src/api/docs_viewer/rapidoc-9.3.8.min.js");
    assert_eq!(body.len(), vendored.len());
    assert!(body[..] == vendored[..]);
}

/// The request schemas and the server agree at the edges of the rules the document states
/// beyond the derive (`api::openapi::refine_request_schemas`) and of the documented bounds: a
/// body the schema accepts is answered 200 (or refused by a rule of the market's state), one
/// it refuses is 422.
#[tokio::test]
async fn request_schemas_and_the_server_agree_at_the_edges() {
    let f = Fixture::new().await;
    let market = f.market(2).await;
    let (market_id, outcome_id) = (market["id"].as_str().unwrap(), market["outcomes"][0]["id"].as_str().unwrap());
    let last_page = i64::MAX / 100;
    let cases = [
        ("/v1/markets/sell-preview", json!({ "outcome_id": outcome_id, "shares_amount": "1000", "target_proceeds": null }), true),
        ("/v1/markets/sell-preview", json!({ "outcome_id": outcome_id, "target_proceeds": "1000" }), true),
        ("/v1/markets/sell-preview", json!({ "outcome_id": outcome_id, "shares_amount": "1000", "target_proceeds": "1000" }), false),
        ("/v1/markets/sell-preview", json!({ "outcome_id": outcome_id, "shares_amount": null }), false),
        ("/v1/markets/sell-preview", json!({ "outcome_id": null, "shares_amount": "1000" }), false),
        ("/v1/markets/bet-preview", json!({ "outcome_id": outcome_id, "amount": "1000000000000000000000000000000000001" }), false),
        ("/v1/markets/bet-preview", json!({ "outcome_id": "", "amount": "1000" }), false),
        ("/v1/markets/price-history/search", json!({ "filters": { "outcome_id": outcome_id } }), true),
        ("/v1/markets/price-history/search", json!({ "filters": { "market_id": market_id, "outcome_id": null } }), true),
        ("/v1/markets/price-history/search", json!({ "filters": { "market_id": null, "outcome_id": null } }), false),
        ("/v1/markets/price-history/search", json!({ "filters": null }), false),
        ("/v1/markets/price-history/search", json!({}), false),
        ("/v1/markets/search", json!({ "filters": null, "pagination": null, "sort": null }), true),
        ("/v1/markets/search", json!({ "pagination": { "page": 1.0, "per_page": 2e1 } }), true),
        ("/v1/markets/search", json!({ "pagination": { "page": 1.5 } }), false),
        ("/v1/markets/search", json!({ "pagination": { "page": last_page, "per_page": 100 } }), true),
        ("/v1/markets/search", json!({ "pagination": { "page": last_page + 1, "per_page": 1 } }), false),
        ("/v1/markets/positions/search", json!({ "filters": null }), true),
    ];
    for (path, body, valid) in cases {
        let accepted = contract::openapi::request_schema_accepts(&reqwest::Method::POST, path, &body);
        assert_eq!(accepted, valid, "the schema of POST {path} on {body}");
        let r = f.app.post(path, None, body.clone()).await;
        if valid {
            // A rule of the market's state may still refuse it (no shares to sell yet).
            assert!(r.status == StatusCode::OK || r.body["code"] == "insufficient_shares", "POST {path} {body}: {}", r.body);
        } else {
            assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "POST {path} {body}: {}", r.body);
        }
    }
}

/// What code generators need of the document (`clients/generate.sh` runs two and fails on any
/// warning): unique snake_case operationIds, and no combinator over fragments of an object
/// (each member of a oneOf or anyOf has a type of its own or is a `$ref`; each `$ref` in an
/// allOf names an object schema), which generators take for a union of fragments or drop.
#[tokio::test]
async fn the_document_is_one_code_generators_read_whole() {
    let app = TestApp::spawn().await;
    let doc = app.get("/v1/openapi.json", None).await.body;
    let mut ids = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let id = op["operationId"].as_str().unwrap_or_default();
            assert!(!id.is_empty() && id.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'), "{method} {path}: operationId {id:?}");
            assert!(ids.insert(id.to_string()), "operationId {id} is used twice");
        }
    }
    fn check(doc: &Value, node: &Value, at: &str) {
        match node {
            Value::Object(map) => {
                for combinator in ["oneOf", "anyOf"] {
                    for member in map.get(combinator).and_then(Value::as_array).into_iter().flatten() {
                        assert!(member.get("$ref").is_some() || member.get("type").is_some(), "{at}: a {combinator} member without a type: {member}");
                    }
                }
                for member in map.get("allOf").and_then(Value::as_array).into_iter().flatten() {
                    if let Some(Value::String(r)) = member.get("$ref") {
                        assert_eq!(resolve(doc, r)["type"], "object", "{at}: allOf of {r}, which is not an object schema");
                    }
                }
                map.iter().for_each(|(k, v)| check(doc, v, &format!("{at}/{k}")));
            }
            Value::Array(items) => items.iter().enumerate().for_each(|(i, v)| check(doc, v, &format!("{at}/{i}"))),
            _ => {}
        }
    }
    check(&doc, &doc, "");
}

/// The served document as a product: every operation has a readable operationId and a
/// summary, every JSON request body an example its schema accepts, and every field of every
/// schema (components, and the webhooks' bodies) a description.
#[tokio::test]
async fn every_operation_and_field_is_described_and_every_body_has_an_example() {
    let app = TestApp::spawn().await;
    let doc = app.get("/v1/openapi.json", None).await.body;
    let mut problems = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let id = op["operationId"].as_str().unwrap_or_default();
            if id.is_empty() || !id.chars().all(|c| c.is_ascii_lowercase() || c == '_') {
                problems.push(format!("{method} {path}: operationId {id:?} is not snake_case"));
            }
            if op["summary"].as_str().is_none_or(str::is_empty) {
                problems.push(format!("{method} {path}: no summary"));
            }
            if let Some(media) = op.pointer("/requestBody/content/application~1json") {
                match media.get("example") {
                    None => problems.push(format!("{method} {path}: no example body")),
                    Some(example) => {
                        let method = reqwest::Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
                        if !contract::openapi::request_schema_accepts(&method, path, example) {
                            problems.push(format!("{method} {path}: its schema refuses its example {example}"));
                        }
                    }
                }
            }
        }
    }
    let mut undescribed = Vec::new();
    walk_properties(&doc["components"], "components", &mut undescribed);
    walk_properties(&doc["webhooks"], "webhooks", &mut undescribed);
    problems.extend(undescribed.into_iter().map(|path| format!("{path}: no description")));
    assert!(problems.is_empty(), "{problems:#?}");
}

/// The paths of the properties under `value` that have no description.
fn walk_properties(value: &Value, path: &str, undescribed: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                if key == "properties" {
                    for (field, property) in inner.as_object().unwrap() {
                        let here = format!("{path}.{field}");
                        if property["description"].as_str().is_none_or(str::is_empty) {
                            undescribed.push(here.clone());
                        }
                        walk_properties(property, &here, undescribed);
                    }
                } else {
                    walk_properties(inner, &format!("{path}/{key}"), undescribed);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|inner| walk_properties(inner, path, undescribed)),
        _ => {}
    }
}
