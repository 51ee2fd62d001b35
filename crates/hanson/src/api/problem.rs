//! RFC 9457 problem+json for every non-2xx response. 500s log their cause with the request
//! id and send only the id.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::error::Error;

tokio::task_local! {
    /// The current request's id, set by the request-id middleware for the whole request.
    pub static REQUEST_ID: String;
}

pub fn current_request_id() -> String {
    REQUEST_ID.try_with(|id| id.clone()).unwrap_or_default()
}

pub const PROBLEM_JSON: &str = "application/problem+json";

impl Error {
    pub fn status(&self) -> StatusCode {
        match self {
            Error::MalformedJson(_) => StatusCode::BAD_REQUEST,
            Error::Unauthenticated(_) | Error::AuthFailed { .. } => StatusCode::UNAUTHORIZED,
            Error::Forbidden { .. } => StatusCode::FORBIDDEN,
            Error::NotFound | Error::NoRoute => StatusCode::NOT_FOUND,
            Error::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Error::Conflict { .. } => StatusCode::CONFLICT,
            Error::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Error::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Error::Validation(_) | Error::Rule { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            Error::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            Error::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    pub fn code(&self) -> &'static str {
        match self {
            Error::MalformedJson(_) => "malformed_json",
            Error::Unauthenticated(_) => "unauthenticated",
            Error::Forbidden { code, .. } | Error::Conflict { code, .. } | Error::Rule { code, .. } => code,
            Error::AuthFailed { code, .. } => code,
            Error::NotFound | Error::NoRoute => "not_found",
            Error::MethodNotAllowed => "method_not_allowed",
            Error::PayloadTooLarge => "payload_too_large",
            Error::UnsupportedMediaType => "unsupported_media_type",
            Error::Validation(_) => "validation_failed",
            Error::RateLimited { .. } => "rate_limited",
            Error::Internal(_) => "internal",
        }
    }

    fn detail(&self) -> String {
        match self {
            Error::MalformedJson(d) => format!("the request body is not valid JSON: {d}"),
            Error::Unauthenticated(d) | Error::AuthFailed { detail: d, .. } => (*d).to_string(),
            Error::Forbidden { detail, .. } | Error::Conflict { detail, .. } | Error::Rule { detail, .. } => detail.clone(),
            Error::NotFound => "no such resource".into(),
            Error::NoRoute => "no route matches this path".into(),
            Error::MethodNotAllowed => "this route does not accept that method".into(),
            Error::PayloadTooLarge => "the request body exceeds 65536 bytes".into(),
            Error::UnsupportedMediaType => "the request body must be application/json".into(),
            Error::Validation(_) => "one or more fields are invalid".into(),
            Error::RateLimited { retry_after_secs } => format!("too many requests; retry after {retry_after_secs} s"),
            Error::Internal(_) => format!("internal error; request id {}", current_request_id()),
        }
    }
}

impl IntoResponse for Error {
    fn into_response(self) -> Response {
        let status = self.status();
        if let Error::Internal(cause) = &self {
            tracing::error!(request_id = %current_request_id(), %cause, "internal error");
        }
        let mut body = json!({
            "type": format!("https://hanson.dev/problems/{}", self.code().replace('_', "-")),
            "title": status.canonical_reason().unwrap_or("Error"),
            "status": status.as_u16(),
            "detail": self.detail(),
            "code": self.code(),
        });
        match &self {
            Error::Validation(errors) => body["errors"] = json!(errors),
            Error::Rule { field: Some(field), detail, .. } => {
                body["errors"] = json!([{ "field": field, "message": detail }]);
            }
            Error::Internal(_) => body["request_id"] = json!(current_request_id()),
            _ => {}
        }
        let mut response = (status, body.to_string()).into_response();
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON));
        if let Error::RateLimited { retry_after_secs } = self {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(retry_after_secs));
        }
        response
    }
}
