//! The one error type of the service. Store calls and handlers both return it; the HTTP
//! layer turns it into RFC 9457 problem+json (`api::problem`).

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

impl FieldError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        FieldError { field: field.into(), message: message.into() }
    }
}

#[derive(Debug)]
pub enum Error {
    /// 400: the body is not JSON.
    MalformedJson(String),
    /// 401 `unauthenticated`
    Unauthenticated(&'static str),
    /// 401 with a more specific code (`invalid_signature`, `invalid_nonce`).
    AuthFailed { code: &'static str, detail: &'static str },
    /// 403 with a stable code.
    Forbidden { code: &'static str, detail: String },
    /// 404: unknown or not visible to the caller.
    NotFound,
    /// 404: no route matches the path.
    NoRoute,
    /// 409 with a stable code.
    Conflict { code: &'static str, detail: String },
    /// 422 `validation_failed` with one entry per bad field.
    Validation(Vec<FieldError>),
    /// 422 with a stable code other than `validation_failed`.
    Rule { code: &'static str, detail: String, field: Option<String> },
    /// 405
    MethodNotAllowed,
    /// 413: body over the limit.
    PayloadTooLarge,
    /// 415: body is not declared as JSON.
    UnsupportedMediaType,
    /// 429
    RateLimited { retry_after_secs: u64 },
    /// 500: the cause is logged, never sent.
    Internal(String),
}

impl Error {
    pub fn rule(code: &'static str, detail: impl Into<String>) -> Self {
        Error::Rule { code, detail: detail.into(), field: None }
    }

    pub fn rule_on(code: &'static str, field: &str, detail: impl Into<String>) -> Self {
        Error::Rule { code, detail: detail.into(), field: Some(field.to_string()) }
    }

    pub fn conflict(code: &'static str, detail: impl Into<String>) -> Self {
        Error::Conflict { code, detail: detail.into() }
    }

    pub fn forbidden(code: &'static str, detail: impl Into<String>) -> Self {
        Error::Forbidden { code, detail: detail.into() }
    }

    pub fn invalid(field: &str, message: impl Into<String>) -> Self {
        Error::Validation(vec![FieldError::new(field, message)])
    }

    pub fn internal(cause: impl fmt::Display) -> Self {
        Error::Internal(cause.to_string())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::MalformedJson(d) => write!(f, "malformed JSON: {d}"),
            Error::Unauthenticated(d) => write!(f, "unauthenticated: {d}"),
            Error::AuthFailed { code, detail } => write!(f, "{code}: {detail}"),
            Error::Forbidden { code, detail } | Error::Conflict { code, detail } => {
                write!(f, "{code}: {detail}")
            }
            Error::Rule { code, detail, .. } => write!(f, "{code}: {detail}"),
            Error::NotFound | Error::NoRoute => f.write_str("not found"),
            Error::Validation(errors) => write!(f, "validation failed: {errors:?}"),
            Error::RateLimited { .. } => f.write_str("rate limited"),
            Error::MethodNotAllowed => f.write_str("method not allowed"),
            Error::PayloadTooLarge => f.write_str("payload too large"),
            Error::UnsupportedMediaType => f.write_str("unsupported media type"),
            Error::Internal(cause) => write!(f, "internal: {cause}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Self {
        Error::Internal(format!("sqlite: {e}"))
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Collects field errors during validation so a request reports all of them at once.
#[derive(Default)]
pub struct Validator {
    errors: Vec<FieldError>,
}

impl Validator {
    pub fn push(&mut self, field: &str, message: impl Into<String>) {
        self.errors.push(FieldError::new(field, message));
    }

    pub fn check(&mut self, ok: bool, field: &str, message: &str) {
        if !ok {
            self.push(field, message);
        }
    }

    pub fn finish(self) -> Result<()> {
        if self.errors.is_empty() {
            Ok(())
        } else {
            Err(Error::Validation(self.errors))
        }
    }
}
