//! `GET /v1/openapi.json` and the `/docs` viewer.

use axum::response::{Html, IntoResponse};
use axum::Json;

pub async fn document() -> impl IntoResponse {
    Json(serde_json::json!({"openapi": "3.1.0"}))
}

pub async fn viewer() -> Html<&'static str> {
    Html("")
}
