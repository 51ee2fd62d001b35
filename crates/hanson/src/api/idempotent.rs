//! A state-changing request under its `Idempotency-Key`, if it has one: the key is read from
//! the headers here, and the store runs the request once per key (`Store::write_once`).

use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;

use super::state::AppState;
use crate::error::{Error, Result};
use crate::store::batch::TradeKeys;
use crate::store::idempotency::IdempotencyKey;
use crate::store::tx::Tx;
use crate::store::Answer;

static REPLAYED: HeaderName = HeaderName::from_static("idempotent-replayed");

fn idempotency_key(headers: &HeaderMap, principal: String, fingerprint: Vec<u8>) -> Result<Option<IdempotencyKey>> {
    let Some(value) = headers.get("idempotency-key") else { return Ok(None) };
    let key = value.to_str().ok().filter(|k| !k.is_empty() && k.len() <= 255 && k.bytes().all(|b| b.is_ascii_graphic()));
    let key = key.ok_or_else(|| Error::invalid("Idempotency-Key", "must be 1 to 255 visible ASCII characters"))?;
    Ok(Some(IdempotencyKey { principal, key: key.to_string(), fingerprint }))
}

/// No check beyond the extractor's: provider keys are verified before the handler runs.
pub(crate) fn no_check(_: &mut Tx<'_>) -> Result<()> {
    Ok(())
}

/// Runs `op` once per `Idempotency-Key` of `principal` (the request's `fingerprint` names
/// what it asked): `authorize` runs first in the transaction and hands what it found to
/// `op`, which returns the whole answer. A bet or sale names the rows it reads first
/// (`trade`).
pub(crate) async fn run<A, G, B, F>(
    app: &AppState,
    headers: &HeaderMap,
    principal: String,
    fingerprint: Vec<u8>,
    trade: Option<TradeKeys>,
    authorize: A,
    op: F,
) -> Result<Response>
where
    A: FnOnce(&mut Tx<'_>) -> Result<G> + Clone + Send + 'static,
    B: Serialize + Send + 'static,
    F: FnOnce(&mut Tx<'_>, G) -> Result<(StatusCode, B)> + Clone + Send + 'static,
{
    let key = idempotency_key(headers, principal, fingerprint)?;
    let op = move |tx: &mut Tx<'_>, granted: G| op(tx, granted).map(|(status, body)| (status.as_u16(), body));
    let answer = app.store.write_once(key, trade, authorize, op).await?;
    Ok(match answer {
        Answer::Fresh(status, body) => (StatusCode::from_u16(status).unwrap_or(StatusCode::OK), Json(body)).into_response(),
        Answer::Replay(status, body) => {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
            let mut response = (status, Json(body)).into_response();
            response.headers_mut().insert(REPLAYED.clone(), HeaderValue::from_static("true"));
            response
        }
    })
}
