//! RFC 9457 problem+json for every non-2xx response. 500s log their cause with the request
//! id and send only the id.

use super::openapi::Problem;
use crate::error::{Error, FieldError};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

/// The `Retry-After` of a 503: how soon a client may try again.
pub(crate) const UNAVAILABLE_RETRY_AFTER_SECS: u64 = 1;

tokio::task_local! {
    /// The current request's id, set by the request-id middleware for the whole request.
    pub(crate) static REQUEST_ID: String;
}

pub(crate) fn current_request_id() -> String {
    REQUEST_ID.try_with(|id| id.clone()).unwrap_or_default()
}

pub(crate) const PROBLEM_JSON: &str = "application/problem+json";

impl Error {
    pub(crate) fn status(&self) -> StatusCode {
        match self {
            Error::MalformedJson(_) | Error::MalformedRequest => StatusCode::BAD_REQUEST,
            Error::UriTooLong => StatusCode::URI_TOO_LONG,
            Error::HeadersTooLarge => StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            Error::UpgradeRequired => StatusCode::UPGRADE_REQUIRED,
            Error::Unauthenticated(_) | Error::AuthFailed { .. } => StatusCode::UNAUTHORIZED,
            Error::Forbidden { .. } => StatusCode::FORBIDDEN,
            Error::NotFound | Error::NoRoute => StatusCode::NOT_FOUND,
            Error::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Error::Conflict { .. } | Error::PriceMoved { .. } => StatusCode::CONFLICT,
            Error::RequestTimeout(_) => StatusCode::REQUEST_TIMEOUT,
            Error::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Error::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Error::Validation(_) | Error::Rule { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            Error::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            Error::Unavailable(_) | Error::OutcomeUnknown(_) => StatusCode::SERVICE_UNAVAILABLE,
            Error::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    pub(crate) fn code(&self) -> &'static str {
        match self {
            Error::MalformedJson(_) => "malformed_json",
            Error::MalformedRequest => "malformed_request",
            Error::UriTooLong => "uri_too_long",
            Error::HeadersTooLarge => "headers_too_large",
            Error::UpgradeRequired => "upgrade_required",
            Error::Unauthenticated(_) => "unauthenticated",
            Error::Forbidden { code, .. } | Error::Conflict { code, .. } | Error::Rule { code, .. } => code,
            Error::AuthFailed { code, .. } => code,
            Error::NotFound | Error::NoRoute => "not_found",
            Error::PriceMoved { .. } => "price_moved",
            Error::MethodNotAllowed => "method_not_allowed",
            Error::RequestTimeout(_) => "request_timeout",
            Error::PayloadTooLarge => "payload_too_large",
            Error::UnsupportedMediaType => "unsupported_media_type",
            Error::Validation(_) => "validation_failed",
            Error::RateLimited { .. } => "rate_limited",
            Error::Unavailable(_) => "service_unavailable",
            Error::OutcomeUnknown(_) => "outcome_unknown",
            Error::Internal(_) => "internal",
        }
    }

    fn detail(&self) -> String {
        match self {
            Error::MalformedJson(d) => format!("the request body is not valid JSON: {d}"),
            Error::MalformedRequest => "the request is not valid HTTP/1.1".into(),
            Error::UriTooLong => "the request target exceeds 65534 bytes".into(),
            Error::HeadersTooLarge => format!("the request has more than 100 headers, or its head exceeds {} bytes", super::MAX_HEAD_BYTES),
            Error::UpgradeRequired => "this route speaks only WebSocket: send an upgrade request (Connection: Upgrade, Upgrade: websocket)".into(),
            Error::Unauthenticated(d) | Error::AuthFailed { detail: d, .. } => (*d).to_string(),
            Error::Forbidden { detail, .. }
            | Error::Conflict { detail, .. }
            | Error::Rule { detail, .. }
            | Error::PriceMoved { detail, .. } => detail.clone(),
            Error::NotFound => "no such resource".into(),
            Error::NoRoute => "no route matches this path".into(),
            Error::MethodNotAllowed => "this route does not accept that method".into(),
            Error::RequestTimeout(secs) => format!("the request body was not received within {secs} s"),
            Error::PayloadTooLarge => "the request body exceeds 65536 bytes".into(),
            Error::UnsupportedMediaType => "the request body must be application/json".into(),
            Error::Validation(_) => "one or more fields are invalid".into(),
            Error::RateLimited { retry_after_secs } => format!("too many requests; retry after {retry_after_secs} s"),
            Error::Unavailable(_) => "the database is unavailable; nothing was changed, retry shortly".into(),
            Error::OutcomeUnknown(_) => {
                "the node running the trades did not answer; the trade may have been made: retry with the same Idempotency-Key to learn its outcome".into()
            }
            Error::Internal(_) => format!("internal error; request id {}", current_request_id()),
        }
    }
}

impl Error {
    /// The problem+json body of this error.
    pub(crate) fn problem(&self) -> Problem {
        let status = self.status();
        Problem {
            r#type: format!("https://hanson.dev/problems/{}", self.code().replace('_', "-")),
            title: status.canonical_reason().unwrap_or("Error").to_string(),
            status: status.as_u16(),
            detail: self.detail(),
            code: self.code().to_string(),
            errors: match self {
                Error::Validation(errors) => Some(errors.clone()),
                Error::Rule { field: Some(field), detail, .. } => Some(vec![FieldError::new(field.as_str(), detail.as_str())]),
                _ => None,
            },
            request_id: matches!(self, Error::Internal(_)).then(current_request_id),
            current_price: match self {
                Error::PriceMoved { current_price, .. } => Some(current_price.clone()),
                _ => None,
            },
        }
    }
}

impl IntoResponse for Error {
    fn into_response(self) -> Response {
        let status = self.status();
        match &self {
            Error::Internal(cause) => tracing::error!(request_id = %current_request_id(), %cause, "internal error"),
            Error::Unavailable(cause) => tracing::warn!(request_id = %current_request_id(), %cause, "database unavailable"),
            Error::OutcomeUnknown(cause) => tracing::warn!(request_id = %current_request_id(), %cause, "forwarded trade unanswered"),
            _ => {}
        }
        let body = serde_json::to_vec(&self.problem()).unwrap_or_default();
        let mut response = (status, body).into_response();
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON));
        let retry_after = match self {
            Error::RateLimited { retry_after_secs } => Some(retry_after_secs),
            // A restarting database is typically back within a second or two.
            Error::Unavailable(_) | Error::OutcomeUnknown(_) => Some(UNAVAILABLE_RETRY_AFTER_SECS),
            _ => None,
        };
        if matches!(self, Error::UpgradeRequired) {
            headers.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
        }
        if let Some(secs) = retry_after {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        response
    }
}
