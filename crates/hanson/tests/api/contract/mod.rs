//! The documents the server publishes, held against what it actually sends.
//!
//! - [`openapi`]: every HTTP answer the test helpers receive, against `GET /v1/openapi.json`.
//! - [`asyncapi`]: every stream event and WebSocket message the shared clients receive, and
//!   every webhook body the test receiver gets, against `GET /v1/asyncapi.json`.
//!
//! Both documents are fetched from the first server a test starts ([`load`], which the
//! support code calls whenever it starts or spawns one) and compiled once per process; they
//! do not depend on the backend, so this module is declared once, at the crate root.

pub(crate) mod asyncapi;
pub(crate) mod openapi;

use serde_json::{json, Value};

/// Fetches and compiles both documents from the server at `base`, the first time only.
pub(crate) async fn load(base: &str) {
    openapi::load(base).await;
    asyncapi::load(base).await;
}

/// `GET {base}{path}` as JSON, on a client of its own (the caller's runtime may be gone by
/// the time another test reads the document).
async fn fetch(base: &str, path: &str) -> Value {
    let url = format!("{base}{path}");
    let response = reqwest::Client::new().get(&url).send().await.unwrap_or_else(|e| panic!("GET {url}: {e}"));
    assert!(response.status().is_success(), "GET {url}: {}", response.status());
    let text = response.text().await.unwrap_or_else(|e| panic!("GET {url}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("GET {url} is not JSON: {e}"))
}

/// Compiles `schema` (draft 2020-12, `format` asserted) under a root holding the document's
/// `components`, so that its `#/components/...` references resolve within the document.
fn compile(document: &Value, schema: &Value, what: &str) -> jsonschema::Validator {
    let root = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "components": document["components"],
        "allOf": [schema],
    });
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .build(&root)
        .unwrap_or_else(|e| panic!("the schema of {what} does not compile: {e}\n{schema}"))
}

/// Every error of `instance` against `validator`, one line each.
fn errors(validator: &jsonschema::Validator, instance: &Value) -> Vec<String> {
    validator
        .iter_errors(instance)
        .map(|e| format!("    at {:?} (schema {}): {e}", e.instance_path().as_str(), e.schema_path().as_str()))
        .collect()
}
