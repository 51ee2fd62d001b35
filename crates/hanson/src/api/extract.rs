//! Extractors whose rejections are our problem+json: JSON bodies, provider API keys.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::{header, request::Parts, StatusCode};
use serde::de::DeserializeOwned;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::state::AppState;
use crate::domain::ids::{ProviderId, SessionId, WalletId};
use crate::domain::tenant::Provider;
use crate::error::{Error, FieldError};
use crate::store::tenants;

/// A JSON body: 415 unless declared JSON, 413 over the limit, 400 if not JSON, 422 (naming
/// the field) if JSON of the wrong shape.
pub(crate) struct ApiJson<T>(pub T);

/// An [`ApiJson`] body plus a fingerprint of its content (SHA-256 of the path and the
/// canonical JSON, keys sorted) for idempotency checks; computed only when the request
/// carries an `Idempotency-Key`.
pub(crate) struct HashedJson<T> {
    pub(crate) value: T,
    pub(crate) fingerprint: Vec<u8>,
}

fn is_json(content_type: &str) -> bool {
    let mime = content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    mime == "application/json" || (mime.starts_with("application/") && mime.ends_with("+json"))
}

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = Error;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = json_body(req, state).await?;
        parse_json(&bytes).map(ApiJson)
    }
}

async fn json_body<S: Send + Sync>(req: Request, state: &S) -> Result<Bytes, Error> {
    let declared_json = req.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(is_json);
    if !declared_json {
        return Err(Error::UnsupportedMediaType);
    }
    Bytes::from_request(req, state).await.map_err(|rejection| {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            Error::PayloadTooLarge
        } else {
            Error::MalformedJson(rejection.body_text())
        }
    })
}

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for HashedJson<T> {
    type Rejection = Error;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let path = req.uri().path().to_string();
        let keyed = req.headers().contains_key("idempotency-key");
        let bytes = json_body(req, state).await?;
        let value: T = parse_json(&bytes)?;
        if !keyed {
            return Ok(HashedJson { value, fingerprint: Vec::new() });
        }
        // serde_json maps keep keys sorted, so this text is canonical for equal bodies.
        let canonical: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| Error::MalformedJson(e.to_string()))?;
        let mut hasher = Sha256::new();
        hasher.update(path.as_bytes());
        hasher.update(b"\n");
        hasher.update(canonical.to_string().as_bytes());
        Ok(HashedJson { value, fingerprint: hasher.finalize().to_vec() })
    }
}

pub(crate) fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, Error> {
    let value: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| Error::MalformedJson(e.to_string()))?;
    if !value.is_object() {
        return Err(Error::invalid("body", "must be a JSON object"));
    }
    // No text the service stores may hold a NUL: PostgreSQL refuses it in text columns and
    // SQLite's full-text query parser fails on it.
    let mut errors = Vec::new();
    find_nul(&value, &mut String::new(), &mut errors);
    if !errors.is_empty() {
        return Err(Error::Validation(errors));
    }
    serde_path_to_error::deserialize(super::strict::Strict(&value)).map_err(|e| {
        let field = e.path().to_string();
        let message = e.inner().to_string();
        let field = if field == "." { missing_field(&message).unwrap_or("body").to_string() } else { field };
        Error::Validation(vec![FieldError::new(field, message)])
    })
}

/// Every string (or object key) under `value` holding a NUL character, by field path.
fn find_nul(value: &serde_json::Value, path: &mut String, errors: &mut Vec<FieldError>) {
    let field = |path: &str| if path.is_empty() { "body".to_string() } else { path.to_string() };
    match value {
        serde_json::Value::String(s) if s.contains('\0') => errors.push(FieldError::new(field(path), "must not contain NUL characters")),
        serde_json::Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                find_nul(item, path, errors);
                path.truncate(len);
            }
        }
        serde_json::Value::Object(map) => {
            for (key, item) in map {
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
                if key.contains('\0') {
                    errors.push(FieldError::new(field(path), "must not contain NUL characters"));
                } else {
                    find_nul(item, path, errors);
                }
                path.truncate(len);
            }
        }
        _ => {}
    }
}

/// serde reports a missing field at the parent's path; name the field itself.
fn missing_field(message: &str) -> Option<&str> {
    message.strip_prefix("missing field `")?.split('`').next()
}

/// Path parameters. Every one names a resource, so one that does not decode (invalid
/// UTF-8 after percent-decoding) names nothing: 404 problem+json, not axum's plain text.
pub(crate) struct ApiPath<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for ApiPath<T> {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match axum::extract::Path::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Path(value)) => Ok(ApiPath(value)),
            Err(_) => Err(Error::NotFound),
        }
    }
}

/// Query parameters. One that does not read (a duplicate, a wrong type) is 422 problem+json
/// naming the query, not axum's text/plain 400.
pub(crate) struct ApiQuery<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match axum::extract::Query::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Query(value)) => Ok(ApiQuery(value)),
            Err(rejection) => Err(Error::invalid("query", rejection.body_text())),
        }
    }
}

/// The bearer credential of a request, if any.
pub(crate) fn bearer(parts: &Parts) -> Option<&str> {
    let value = parts.headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim()).filter(|t| !t.is_empty())
}

pub(crate) fn hash_api_key(key: &str) -> Vec<u8> {
    Sha256::digest(key.as_bytes()).to_vec()
}

/// The provider behind `Authorization: Bearer <API_KEY>`.
pub(crate) struct ProviderAuth(pub Provider);

impl FromRequestParts<AppState> for ProviderAuth {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let key = bearer(parts).ok_or(Error::Unauthenticated("an API key is required"))?;
        if !key.starts_with(crate::auth::API_KEY_PREFIX) {
            return Err(Error::Unauthenticated("provider routes take a provider API key"));
        }
        let hash = hash_api_key(key);
        let lookup = hash.clone();
        let found = state.store.read(move |c| tenants::provider_by_key_hash(c, &lookup)).await?;
        match found {
            Some((provider, stored)) if bool::from(stored.as_slice().ct_eq(hash.as_slice())) => Ok(ProviderAuth(provider)),
            _ => Err(Error::Unauthenticated("invalid API key")),
        }
    }
}

/// The wallet session behind `Authorization: Bearer <ACCESS_TOKEN>`: a valid JWT whose
/// session is live (checked in the database on every request, so logout on any node
/// takes effect at once).
#[derive(Debug, Clone)]
pub(crate) struct UserAuth {
    pub(crate) wallet_id: WalletId,
    pub(crate) session_id: SessionId,
    pub(crate) provider_id: ProviderId,
}

/// A verified access token (signature, algorithm, issuer, expiry), before any session check.
fn verify_access_token(token: &str, state: &AppState) -> Result<crate::auth::jwt::Claims, Error> {
    if token.starts_with(crate::auth::API_KEY_PREFIX) {
        return Err(Error::Unauthenticated("user routes take an access token, not an API key"));
    }
    let now_secs = crate::domain::time::now_micros() / 1_000_000;
    state.auth.jwt.decode(token, now_secs).map_err(|_| Error::Unauthenticated("invalid or expired access token"))
}

impl UserAuth {
    /// The caller an access token names, if its session is live.
    pub(crate) async fn of_token(token: &str, state: &AppState) -> Result<UserAuth, Error> {
        let claims = verify_access_token(token, state)?;
        let sid = claims.sid.clone();
        let session = state.store.read(move |c| crate::store::auth::session(c, &sid)).await?;
        match session {
            Some(s) if s.is_live_for(&claims.sub, &claims.aud) => {
                Ok(UserAuth { wallet_id: s.wallet_id, session_id: s.id, provider_id: s.provider_id })
            }
            _ => Err(Error::Unauthenticated("the session has ended")),
        }
    }
}

impl FromRequestParts<AppState> for UserAuth {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let token = bearer(parts).ok_or(Error::Unauthenticated("an access token is required"))?;
        UserAuth::of_token(token, state).await
    }
}

/// A verified access token whose session the route checks itself, inside its own write
/// transaction (trades do, saving a separate read per request).
#[derive(Debug, Clone)]
pub(crate) struct UserToken(pub UserAuth);

impl FromRequestParts<AppState> for UserToken {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let token = bearer(parts).ok_or(Error::Unauthenticated("an access token is required"))?;
        let claims = verify_access_token(token, state)?;
        Ok(UserToken(UserAuth { wallet_id: claims.sub.into(), session_id: claims.sid.into(), provider_id: claims.aud.into() }))
    }
}
