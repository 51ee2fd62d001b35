//! `Idempotency-Key`: the response to a keyed request is stored in the same transaction as
//! the operation, so a retry either replays it or finds nothing and runs the operation once.

use serde_json::Value;

use super::sql::{Conn, Param};
use crate::domain::time::Micros;
use crate::error::{Error, Result};

/// Stored responses are honoured for 24 hours.
pub(crate) const RETENTION_MICROS: Micros = 24 * 3600 * 1_000_000;

/// A request's `Idempotency-Key`, with who sent it and a fingerprint of what it asked.
#[derive(Debug, Clone)]
pub(crate) struct IdempotencyKey {
    /// The provider for an API key, the wallet for an access token.
    pub(crate) principal: String,
    pub(crate) key: String,
    pub(crate) fingerprint: Vec<u8>,
}

pub(crate) enum Prior {
    None,
    Replay { status: u16, body: Value },
}

pub(crate) fn lookup(c: &mut dyn Conn, k: &IdempotencyKey, now: Micros) -> Result<Prior> {
    let row = c.query_opt(
        "SELECT request_hash, status, response, created_at FROM idempotency_keys WHERE principal = $1 AND key = $2",
        &[Param::Text(&k.principal), Param::Text(&k.key)],
    )?;
    let Some(row) = row else { return Ok(Prior::None) };
    // An expired record is replaced by `save`; the lookup itself writes nothing.
    if row.int(3)? + RETENTION_MICROS <= now {
        return Ok(Prior::None);
    }
    if row.blob(0)? != k.fingerprint {
        return Err(Error::rule("idempotency_key_reused", "this Idempotency-Key was used with a different request"));
    }
    let body = serde_json::from_str(&row.text(2)?).map_err(Error::internal)?;
    Ok(Prior::Replay { status: row.int(1)? as u16, body })
}

/// Records the response, replacing an expired record of the same key; if another request
/// with the same key committed first, this one is refused (and its operation rolled back
/// with it).
pub(crate) fn save(c: &mut dyn Conn, k: &IdempotencyKey, status: u16, body: &Value, now: Micros) -> Result<()> {
    let inserted = c.exec(
        "INSERT INTO idempotency_keys (principal, key, request_hash, status, response, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (principal, key) DO UPDATE \
         SET request_hash = excluded.request_hash, status = excluded.status, response = excluded.response, \
         created_at = excluded.created_at WHERE idempotency_keys.created_at <= $7",
        &[
            Param::Text(&k.principal),
            Param::Text(&k.key),
            Param::Blob(&k.fingerprint),
            Param::Int(i64::from(status)),
            Param::Text(&body.to_string()),
            Param::Int(now),
            Param::Int(now - RETENTION_MICROS),
        ],
    )?;
    if inserted == 0 {
        return Err(Error::conflict("idempotency_in_progress", "a request with this Idempotency-Key is still being processed"));
    }
    Ok(())
}
