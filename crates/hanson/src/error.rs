//! The one error type of the service. Store calls and handlers both return it; the HTTP
//! layer turns it into RFC 9457 problem+json (`api::problem`).

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

impl FieldError {
    pub(crate) fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        FieldError { field: field.into(), message: message.into() }
    }

    /// "`a`: must be positive; `b`: is required", for logs and the command line.
    fn sentence(errors: &[FieldError]) -> String {
        errors.iter().map(|e| format!("{}: {}", e.field, e.message)).collect::<Vec<_>>().join("; ")
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// 400: the body is not JSON.
    #[error("malformed JSON: {0}")]
    MalformedJson(String),
    /// 401 `unauthenticated`
    #[error("unauthenticated: {0}")]
    Unauthenticated(&'static str),
    /// 401 with a more specific code (`invalid_signature`, `invalid_nonce`).
    #[error("{code}: {detail}")]
    AuthFailed { code: &'static str, detail: &'static str },
    /// 403 with a stable code.
    #[error("{code}: {detail}")]
    Forbidden { code: &'static str, detail: String },
    /// 404: unknown or not visible to the caller.
    #[error("not found")]
    NotFound,
    /// 404: no route matches the path.
    #[error("not found")]
    NoRoute,
    /// 409 with a stable code.
    #[error("{code}: {detail}")]
    Conflict { code: &'static str, detail: String },
    /// 409 `price_moved`: a trade's price bound cannot be met; carries the outcome's price now.
    #[error("price_moved: {detail}")]
    PriceMoved { detail: String, current_price: String },
    /// 422 `validation_failed` with one entry per bad field.
    #[error("{}", FieldError::sentence(.0))]
    Validation(Vec<FieldError>),
    /// 422 with a stable code other than `validation_failed`.
    #[error("{code}: {detail}")]
    Rule { code: &'static str, detail: String, field: Option<String> },
    /// 405
    #[error("method not allowed")]
    MethodNotAllowed,
    /// 408: the request body did not arrive within this many seconds.
    #[error("request timeout after {0} s")]
    RequestTimeout(f64),
    /// 413: body over the limit.
    #[error("payload too large")]
    PayloadTooLarge,
    /// 415: body is not declared as JSON.
    #[error("unsupported media type")]
    UnsupportedMediaType,
    /// 400: hyper could not parse the request as HTTP/1.1 (its request line or a header).
    #[error("malformed request")]
    MalformedRequest,
    /// 414: hyper's limit on the request target.
    #[error("URI too long")]
    UriTooLong,
    /// 431: hyper's limits on the request's headers.
    #[error("request headers too large")]
    HeadersTooLarge,
    /// 426: a plain request to a WebSocket route.
    #[error("upgrade required")]
    UpgradeRequired,
    /// 429
    #[error("rate limited")]
    RateLimited { retry_after_secs: u64 },
    /// 503: the database cannot be reached; the cause is logged, never sent.
    #[error("unavailable: {0}")]
    Unavailable(String),
    /// 503: a forwarded trade reached the node running the trades, which did not answer;
    /// it may have been made. The cause is logged, never sent.
    #[error("outcome unknown: {0}")]
    OutcomeUnknown(String),
    /// 500: the cause is logged, never sent.
    #[error("internal: {0}")]
    Internal(String),
}

impl Error {
    pub fn rule(code: &'static str, detail: impl Into<String>) -> Self {
        Error::Rule { code, detail: detail.into(), field: None }
    }

    pub(crate) fn rule_on(code: &'static str, field: &str, detail: impl Into<String>) -> Self {
        Error::Rule { code, detail: detail.into(), field: Some(field.to_string()) }
    }

    pub(crate) fn conflict(code: &'static str, detail: impl Into<String>) -> Self {
        Error::Conflict { code, detail: detail.into() }
    }

    pub(crate) fn forbidden(code: &'static str, detail: impl Into<String>) -> Self {
        Error::Forbidden { code, detail: detail.into() }
    }

    pub fn invalid(field: &str, message: impl Into<String>) -> Self {
        Error::Validation(vec![FieldError::new(field, message)])
    }

    pub fn internal(cause: impl fmt::Display) -> Self {
        Error::Internal(cause.to_string())
    }
}

impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Self {
        Error::Internal(format!("sqlite: {e}"))
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Collects field errors during validation so a request reports all of them at once.
#[derive(Default)]
pub(crate) struct Validator {
    errors: Vec<FieldError>,
}

impl Validator {
    pub(crate) fn push(&mut self, field: &str, message: impl Into<String>) {
        self.errors.push(FieldError::new(field, message));
    }

    pub(crate) fn check(&mut self, ok: bool, field: &str, message: &str) {
        if !ok {
            self.push(field, message);
        }
    }

    pub(crate) fn finish(self) -> Result<()> {
        if self.errors.is_empty() {
            Ok(())
        } else {
            Err(Error::Validation(self.errors))
        }
    }
}
