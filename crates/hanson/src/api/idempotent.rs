//! Runs a state-changing store call under the request's `Idempotency-Key`, if it has one.

use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;
use serde_json::Value;

use super::state::AppState;
use crate::domain::time::now_micros;
use crate::error::{Error, Result};
use crate::store::idempotency::{self, Prior};
use crate::store::sql::Conn;
use crate::store::trading::TradeKeys;
use crate::store::Undo;

static REPLAYED: HeaderName = HeaderName::from_static("idempotent-replayed");

fn idempotency_key(headers: &HeaderMap) -> Result<Option<String>> {
    let Some(value) = headers.get("idempotency-key") else { return Ok(None) };
    let key = value.to_str().ok().filter(|k| !k.is_empty() && k.len() <= 255 && k.bytes().all(|b| b.is_ascii_graphic()));
    key.map(|k| Some(k.to_string()))
        .ok_or_else(|| Error::invalid("Idempotency-Key", "must be 1 to 255 visible ASCII characters"))
}

enum Outcome {
    Fresh(StatusCode, Value),
    Replay(u16, Value),
}

/// No check beyond the extractor's: provider keys are verified before the handler runs.
pub fn no_check(_: &mut dyn Conn) -> Result<()> {
    Ok(())
}

/// `authorize` runs first in the transaction (a replay is served only to a caller still
/// allowed to make the request) and hands what it found to `op`; `op` builds the whole
/// response (status and body) inside the transaction, so the stored replay is exactly
/// what the first request answered. `fingerprint` identifies the request.
pub async fn run<A, T, B, F>(app: &AppState, headers: &HeaderMap, principal: String, fingerprint: Vec<u8>, authorize: A, op: F) -> Result<Response>
where
    A: FnOnce(&mut dyn Conn) -> Result<T> + Clone + Send + 'static,
    B: Serialize + Send + 'static,
    F: FnOnce(&mut dyn Conn, T) -> Result<(StatusCode, B)> + Clone + Send + 'static,
{
    run_with(app, headers, principal, fingerprint, None, authorize, op).await
}

/// [`run`], for a trade when `trade` names the rows it reads first (`Store::write_trade`):
/// without an Idempotency-Key without a savepoint (`Undo::WholeBatch`). With one, the
/// idempotency record is looked up before `op` and written after it; as that write may fail
/// after `op` wrote, it takes a savepoint on SQLite.
pub async fn run_with<A, T, B, F>(app: &AppState, headers: &HeaderMap, principal: String, fingerprint: Vec<u8>, trade: Option<TradeKeys>, authorize: A, op: F) -> Result<Response>
where
    A: FnOnce(&mut dyn Conn) -> Result<T> + Clone + Send + 'static,
    B: Serialize + Send + 'static,
    F: FnOnce(&mut dyn Conn, T) -> Result<(StatusCode, B)> + Clone + Send + 'static,
{
    let Some(key) = idempotency_key(headers)? else {
        let op = move |c: &mut dyn Conn| {
            let granted = authorize(c)?;
            op(c, granted)
        };
        let (status, body) = match trade {
            Some(keys) => app.store.write_trade(keys, Undo::WholeBatch, op).await?,
            None => app.store.write(op).await?,
        };
        return Ok((status, Json(body)).into_response());
    };
    let now = now_micros();
    let keyed = move |c: &mut dyn Conn| {
        let granted = authorize(c)?;
        match idempotency::lookup(c, &principal, &key, &fingerprint, now)? {
            Prior::Replay { status, body } => Ok(Outcome::Replay(status, body)),
            Prior::None => {
                let (status, body) = op(c, granted)?;
                let body = serde_json::to_value(body).map_err(Error::internal)?;
                idempotency::save(c, &principal, &key, &fingerprint, status.as_u16(), &body, now)?;
                Ok(Outcome::Fresh(status, body))
            }
        }
    };
    let outcome = match trade {
        Some(keys) => app.store.write_trade(keys, Undo::Savepoint, keyed).await?,
        None => app.store.write(keyed).await?,
    };
    Ok(match outcome {
        Outcome::Fresh(status, body) => (status, Json(body)).into_response(),
        Outcome::Replay(status, body) => {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
            let mut response = (status, Json(body)).into_response();
            response.headers_mut().insert(REPLAYED.clone(), HeaderValue::from_static("true"));
            response
        }
    })
}
