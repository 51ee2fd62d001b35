//! Nonces, sessions, refresh tokens, alt-network keys and the shared JWT secret.

use super::sql::{query_opt_as, Conn, FromRow, Param, Row};
use super::tenants;
use super::tx::Tx;
use crate::domain::event::Event;
use crate::domain::session::{AltKey, Session};
use crate::domain::tenant::Wallet;
use crate::domain::time::Micros;
use crate::error::{Error, Result};

const JWT_SECRET_SETTING: &str = "jwt_secret";

/// The JWT secret shared by every node: generated once and stored, unless configured.
pub(crate) fn jwt_secret(c: &mut dyn Conn, generated: &str) -> Result<String> {
    if let Some(row) = c.query_opt("SELECT value FROM settings WHERE name = $1", &[Param::Text(JWT_SECRET_SETTING)])? {
        return row.text(0);
    }
    c.exec(
        "INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
        &[Param::Text(JWT_SECRET_SETTING), Param::Text(generated)],
    )?;
    c.query_one("SELECT value FROM settings WHERE name = $1", &[Param::Text(JWT_SECRET_SETTING)])?.text(0)
}

/// Stores a nonce, with its Sign-In with Ethereum message if it was issued with one.
pub(crate) fn issue_nonce(
    c: &mut dyn Conn,
    nonce: &str,
    provider_id: &str,
    address: &str,
    expires_at: Micros,
    message: Option<&str>,
) -> Result<()> {
    if tenants::provider(c, provider_id)?.is_none() {
        return Err(Error::NotFound);
    }
    c.exec(
        "INSERT INTO nonces (nonce, provider_id, address, expires_at, message) VALUES ($1, $2, $3, $4, $5)",
        &[Param::Text(nonce), Param::Text(provider_id), Param::Text(address), Param::Int(expires_at), message.into()],
    )?;
    Ok(())
}

fn invalid_nonce() -> Error {
    Error::AuthFailed { code: "invalid_nonce", detail: "the nonce is unknown, expired, used, or issued for another wallet or provider" }
}

/// Checks a nonce without consuming it (a failed login must not burn it); gives its Sign-In
/// with Ethereum message, if it was issued with one.
pub(crate) fn check_nonce(c: &mut dyn Conn, nonce: &str, provider_id: &str, address: &str, now: Micros) -> Result<Option<String>> {
    let row =
        c.query_opt("SELECT provider_id, address, expires_at, consumed_at, message FROM nonces WHERE nonce = $1", &[Param::Text(nonce)])?;
    match row {
        Some(r) if r.text(0)? == provider_id && r.text(1)? == address && r.int(2)? > now && r.opt_int(3)?.is_none() => r.opt_text(4),
        _ => Err(invalid_nonce()),
    }
}

#[derive(Clone)]
pub(crate) struct LoginGrant {
    pub(crate) nonce: String,
    pub(crate) provider_id: String,
    pub(crate) address: String,
    pub(crate) wallet_type: &'static str,
    pub(crate) alt_evm_address: Option<String>,
    pub(crate) session_id: String,
    pub(crate) refresh_hash: Vec<u8>,
    pub(crate) session_expires_at: Micros,
}

/// Consumes the nonce and opens a session in one transaction; the wallet is created on first login.
pub(crate) fn login(c: &mut dyn Conn, g: LoginGrant, now: Micros) -> Result<Wallet> {
    let consumed = c.exec(
        "UPDATE nonces SET consumed_at = $1 WHERE nonce = $2 AND provider_id = $3 AND address = $4 \
         AND consumed_at IS NULL AND expires_at > $1",
        &[Param::Int(now), Param::Text(&g.nonce), Param::Text(&g.provider_id), Param::Text(&g.address)],
    )?;
    if consumed != 1 {
        return Err(invalid_nonce());
    }
    let wallet = tenants::ensure_wallet(c, &g.provider_id, &g.address, g.wallet_type, g.alt_evm_address.as_deref(), now)?;
    if wallet.wallet_type != g.wallet_type {
        return Err(Error::Unauthenticated("this address belongs to a wallet of another type"));
    }
    if g.alt_evm_address.is_some() && wallet.alt_evm_address != g.alt_evm_address {
        c.exec("UPDATE wallets SET alt_evm_address = $1 WHERE id = $2", &[(&g.alt_evm_address).into(), Param::Text(&wallet.wallet_id)])?;
    }
    c.exec(
        "INSERT INTO sessions (id, provider_id, wallet_id, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)",
        &[
            Param::Text(&g.session_id),
            Param::Text(&g.provider_id),
            Param::Text(&wallet.wallet_id),
            Param::Int(now),
            Param::Int(g.session_expires_at),
        ],
    )?;
    c.exec(
        "INSERT INTO refresh_tokens (token_hash, session_id, created_at) VALUES ($1, $2, $3)",
        &[Param::Blob(&g.refresh_hash), Param::Text(&g.session_id), Param::Int(now)],
    )?;
    Ok(tenants::wallet_by_id(c, &wallet.wallet_id)?.unwrap_or(wallet))
}

pub(crate) fn session(c: &mut dyn Conn, id: &str) -> Result<Option<Session>> {
    query_opt_as(c, "SELECT id, provider_id, wallet_id, expires_at, revoked_at FROM sessions WHERE id = $1", &[Param::Text(id)])
}

/// Revokes a live session; its user streams end (`SessionEnded`).
pub(crate) fn revoke_session(c: &mut Tx<'_>, id: &str, now: Micros) -> Result<()> {
    let revoked = c.query(
        "UPDATE sessions SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL RETURNING wallet_id",
        &[Param::Int(now), Param::Text(id)],
    )?;
    for row in revoked {
        c.emit(Event::SessionEnded { wallet_id: row.text(0)?.into(), session_id: id.into() });
    }
    Ok(())
}

pub(crate) enum Refreshed {
    /// The old token is spent and `new_hash` is live.
    Rotated(Session),
    /// A spent token came back: the session is now revoked.
    ReuseDetected,
    Rejected,
}

/// Rotates a refresh token. Reuse of a spent token revokes the whole session (and commits).
pub(crate) fn refresh(c: &mut Tx<'_>, token_hash: &[u8], provider_id: &str, new_hash: &[u8], now: Micros) -> Result<Refreshed> {
    let Some(row) = c.query_opt("SELECT session_id, spent_at FROM refresh_tokens WHERE token_hash = $1", &[Param::Blob(token_hash)])?
    else {
        return Ok(Refreshed::Rejected);
    };
    let session_id = row.text(0)?;
    let Some(s) = session(c, &session_id)? else { return Ok(Refreshed::Rejected) };
    if row.opt_int(1)?.is_some() {
        revoke_session(c, &session_id, now)?;
        return Ok(Refreshed::ReuseDetected);
    }
    if s.revoked || s.expires_at <= now || s.provider_id != provider_id {
        return Ok(Refreshed::Rejected);
    }
    let spent = c.exec(
        "UPDATE refresh_tokens SET spent_at = $1 WHERE token_hash = $2 AND spent_at IS NULL",
        &[Param::Int(now), Param::Blob(token_hash)],
    )?;
    if spent != 1 {
        revoke_session(c, &session_id, now)?;
        return Ok(Refreshed::ReuseDetected);
    }
    c.exec(
        "INSERT INTO refresh_tokens (token_hash, session_id, created_at) VALUES ($1, $2, $3)",
        &[Param::Blob(new_hash), Param::Text(&session_id), Param::Int(now)],
    )?;
    Ok(Refreshed::Rotated(s))
}

pub(crate) fn alt_key(c: &mut dyn Conn, provider_id: &str, address: &str, key_id: i64) -> Result<Option<AltKey>> {
    query_opt_as(
        c,
        "SELECT address, key_id, public_key, sign_algo, hash_algo, revoked FROM alt_keys \
         WHERE provider_id = $1 AND address = $2 AND key_id = $3",
        &[Param::Text(provider_id), Param::Text(address), Param::Int(key_id)],
    )
}

/// Creates or replaces a key record.
pub(crate) fn put_alt_key(c: &mut dyn Conn, provider_id: &str, key: &AltKey, now: Micros) -> Result<()> {
    c.exec(
        "INSERT INTO alt_keys (provider_id, address, key_id, public_key, sign_algo, hash_algo, revoked, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
         ON CONFLICT (provider_id, address, key_id) DO UPDATE SET public_key = excluded.public_key, \
         sign_algo = excluded.sign_algo, hash_algo = excluded.hash_algo, revoked = excluded.revoked, updated_at = excluded.updated_at",
        &[
            Param::Text(provider_id),
            Param::Text(&key.wallet_address),
            Param::Int(key.key_id),
            Param::Text(&key.public_key),
            Param::Text(&key.sign_algo),
            Param::Text(&key.hash_algo),
            Param::Int(i64::from(key.revoked)),
            Param::Int(now),
        ],
    )?;
    Ok(())
}

impl FromRow for Session {
    fn from_row(r: &Row) -> Result<Session> {
        Ok(Session {
            id: r.text(0)?.into(),
            provider_id: r.text(1)?.into(),
            wallet_id: r.text(2)?.into(),
            expires_at: r.int(3)?,
            revoked: r.opt_int(4)?.is_some(),
        })
    }
}

impl FromRow for AltKey {
    fn from_row(r: &Row) -> Result<AltKey> {
        Ok(AltKey {
            wallet_address: r.text(0)?,
            key_id: r.int(1)?,
            public_key: r.text(2)?,
            sign_algo: r.text(3)?,
            hash_algo: r.text(4)?,
            revoked: r.int(5)? != 0,
        })
    }
}
