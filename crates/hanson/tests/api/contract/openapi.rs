//! The response contract: every response the `TestApp` helpers receive is checked against the
//! OpenAPI document the server publishes at `/v1/openapi.json`.
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
use serde_json::Value;
use tokio::sync::OnceCell;

/// An (operation, status) pair that was checked: (METHOD, path template, status).
pub(crate) type Checked = (String, String, u16);

static DOCUMENT: OnceCell<Value> = OnceCell::const_new();

/// Fetches the document from the server at `base`, the first time only.
pub(crate) async fn load(base: &str) {
    DOCUMENT.get_or_init(|| super::fetch(base, "/v1/openapi.json")).await;
}

/// The document, as the first server the tests started served it.
pub(crate) fn document() -> &'static Value {
    DOCUMENT.get().expect("the OpenAPI document is not loaded: start servers through the support code, or call contract::load")
}

/// The documented operation for `method` on `path` (query ignored), with its path template.
/// Like the router, the path is matched first (the template with the most literal segments
/// wins, so `/v1/markets/search` is not `/v1/markets/{market_id}`), then the method: a method
/// the path does not document (a 405) has no operation.
pub(crate) fn operation(method: &Method, path: &str) -> Option<(&'static str, &'static Value)> {
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
    [status.to_string(), format!("{}XX", status / 100), "default".to_string()].iter().find_map(|key| responses.get(key)).map(deref)
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
    let what = format!("{} {} {} ({})", key.0, key.1, key.2, key.3);
    let compiled = Arc::new(super::compile(document(), schema, &what));
    cache.lock().unwrap().entry(key).or_insert(compiled).clone()
}

/// Whether the documented request body schema of `method` `template` accepts `body`.
pub(crate) fn request_schema_accepts(method: &Method, template: &str, body: &Value) -> bool {
    let op = &document()["paths"][template][method.as_str().to_ascii_lowercase()];
    let schema = &op["requestBody"]["content"]["application/json"]["schema"];
    assert!(schema.is_object(), "{method} {template} documents no JSON request body");
    validator((method.to_string(), template.to_string(), 0, "request".to_string()), schema).is_valid(body)
}

/// The errors of a webhook delivery's body against the document's `webhooks` entry for its
/// `type`; `None` when the document has no such entry.
pub(crate) fn webhook_errors(kind: &str, body: &Value) -> Option<Vec<String>> {
    let schema = document().get("webhooks")?.get(kind)?.pointer("/post/requestBody/content/application~1json/schema")?;
    let v = validator(("WEBHOOK".to_string(), kind.to_string(), 0, "application/json".to_string()), schema);
    Some(super::errors(&v, body))
}

/// Checks one response against the document; panics on a mismatch. Returns the
/// (operation, status) checked, or `None` when no documented operation matches the request.
pub(crate) fn check(method: &Method, path: &str, status: StatusCode, content_type: Option<&str>, body: &Value) -> Option<Checked> {
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
                let errors = super::errors(&v, body);
                if !errors.is_empty() {
                    fail(format!("the body does not validate against the {media} schema of {code}:\n{}", errors.join("\n")));
                }
            }
        }
    }
    Some((method.to_string(), template.to_string(), code))
}
