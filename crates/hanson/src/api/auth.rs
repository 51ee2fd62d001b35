//! Wallet login (spec 4.4, part 5): nonce, EVM and alt-network login, refresh with rotation,
//! profile, logout; and the provider-filled alt-network key registry.

use axum::extract::{Path, State};
use axum::routing::{get, post, put};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use sha2::{Digest, Sha256};

use super::extract::{ApiJson, ProviderAuth, UserAuth};
use super::views::Message;
use super::AppState;
use crate::auth::jwt::{Claims, ISSUER};
use crate::auth::{hex, random_bytes};
use crate::domain::address::{parse_wallet_address, WalletType};
use crate::domain::tenant::Balance;
use crate::domain::time::{now_micros, Timestamp};
use crate::error::{Error, Result, Validator};
use crate::domain::session::AltKey;
use crate::store::auth::{self as auth_store, LoginGrant, Refreshed};
use crate::store::tenants;

/// Nonces are valid for five minutes.
const NONCE_TTL_MICROS: i64 = 5 * 60 * 1_000_000;

pub fn login_message(nonce: &str) -> String {
    format!("Sign this message to authenticate with nonce: {nonce}")
}

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v1/auth/nonce", post(nonce))
        .route("/v1/auth/login", post(login))
        .route("/v1/auth/refresh", post(refresh))
        .route("/v1/auth/profile", get(profile))
        .route("/v1/auth/logout", post(logout))
        .route("/v1/providers/alt-keys/{wallet_address}/{key_id}", put(put_alt_key))
}

fn provider_id_field(value: Option<&str>, v: &mut Validator) -> String {
    match value.map(uuid::Uuid::parse_str) {
        Some(Ok(id)) => id.to_string(),
        Some(Err(_)) => {
            v.push("provider_id", "must be a UUID");
            String::new()
        }
        None => {
            v.push("provider_id", "is required");
            String::new()
        }
    }
}

fn address_field(value: Option<&str>, field: &str, v: &mut Validator) -> Option<(String, WalletType)> {
    match value.map(parse_wallet_address) {
        Some(Ok(parsed)) => Some(parsed),
        Some(Err(message)) => {
            v.push(field, message);
            None
        }
        None => {
            v.push(field, "is required");
            None
        }
    }
}

#[derive(Deserialize)]
struct NonceInput {
    wallet_address: Option<String>,
    provider_id: Option<String>,
}

async fn nonce(State(app): State<AppState>, ApiJson(input): ApiJson<NonceInput>) -> Result<Json<NonceGrant>> {
    let mut v = Validator::default();
    let provider_id = provider_id_field(input.provider_id.as_deref(), &mut v);
    let address = address_field(input.wallet_address.as_deref(), "wallet_address", &mut v);
    v.finish()?;
    let (address, _) = address.ok_or_else(|| Error::internal("validated address missing"))?;
    let nonce = hex(&random_bytes::<16>());
    let expires_at = now_micros() + NONCE_TTL_MICROS;
    let stored = nonce.clone();
    app.store.write(move |c| auth_store::issue_nonce(c, &stored, &provider_id, &address, expires_at)).await?;
    Ok(Json(NonceGrant { message: login_message(&nonce), nonce, expires_at: Timestamp(expires_at) }))
}

#[derive(Deserialize)]
struct LoginInput {
    provider_id: Option<String>,
    wallet_address: Option<String>,
    signature: Option<String>,
    nonce: Option<String>,
    wallet_type: Option<String>,
    alt_evm_address: Option<String>,
    key_id: Option<i64>,
}

fn invalid_signature() -> Error {
    Error::AuthFailed { code: "invalid_signature", detail: "the signature does not prove control of this wallet" }
}

/// Parses a signature's hex; malformed input is a 422, never a 401.
fn signature_bytes(text: &str, with_prefix: bool, expected_len: usize, v: &mut Validator) -> Vec<u8> {
    match wallet_auth::parse_hex(text, with_prefix) {
        Ok(bytes) if bytes.len() == expected_len => bytes,
        _ => {
            let form = if with_prefix { "0x followed by 130 hex digits" } else { "128 hex digits without 0x" };
            v.push("signature", format!("must be {form}"));
            Vec::new()
        }
    }
}

struct Tokens {
    access_token: String,
    refresh_token: String,
}

fn hash_token(token: &str) -> Vec<u8> {
    Sha256::digest(token.as_bytes()).to_vec()
}

fn issue_access_token(app: &AppState, wallet_id: &str, session_id: &str, provider_id: &str) -> String {
    let now = now_micros() / 1_000_000;
    app.auth.jwt.encode(&Claims {
        sub: wallet_id.to_string(),
        sid: session_id.to_string(),
        aud: provider_id.to_string(),
        iss: ISSUER.to_string(),
        iat: now,
        exp: now + app.auth.access_token_ttl_secs,
        jti: uuid::Uuid::new_v4().to_string(),
    })
}

/// A login nonce and the message to sign with it.
#[derive(Serialize, ToSchema)]
pub struct NonceGrant {
    nonce: String,
    message: String,
    expires_at: Timestamp,
}

/// What login and refresh answer.
#[derive(Serialize, ToSchema)]
pub struct TokenGrant {
    access_token: String,
    refresh_token: String,
    /// Always `Bearer`.
    token_type: &'static str,
    /// Seconds until the access token expires.
    expires_in: i64,
    session_id: String,
}

fn token_response(app: &AppState, tokens: Tokens, session_id: &str) -> Json<TokenGrant> {
    Json(TokenGrant {
        access_token: tokens.access_token,
        refresh_token: tokens.refresh_token,
        token_type: "Bearer",
        expires_in: app.auth.access_token_ttl_secs,
        session_id: session_id.to_string(),
    })
}

/// The logged-in wallet, its session and balances.
#[derive(Serialize, ToSchema)]
pub struct Profile {
    wallet_id: String,
    wallet_address: String,
    wallet_type: String,
    alt_evm_address: Option<String>,
    provider_id: String,
    session_id: String,
    balances: Vec<Balance>,
    created_at: Timestamp,
}

async fn login(State(app): State<AppState>, ApiJson(input): ApiJson<LoginInput>) -> Result<Json<TokenGrant>> {
    let mut v = Validator::default();
    let provider_id = provider_id_field(input.provider_id.as_deref(), &mut v);
    let address = address_field(input.wallet_address.as_deref(), "wallet_address", &mut v);
    let nonce = input.nonce.clone().unwrap_or_default();
    if nonce.is_empty() || nonce.len() > 128 {
        v.push("nonce", "is required");
    }
    let is_alt = match input.wallet_type.as_deref() {
        None | Some("evm") => false,
        Some("alt") => true,
        Some(_) => {
            v.push("wallet_type", "must be evm or alt");
            false
        }
    };
    let signature_text = input.signature.clone().unwrap_or_default();
    let signature = if is_alt {
        signature_bytes(&signature_text, false, 64, &mut v)
    } else {
        signature_bytes(&signature_text, true, 65, &mut v)
    };
    let mut alt_evm_address = None;
    if is_alt {
        match input.alt_evm_address.as_deref().map(parse_wallet_address) {
            Some(Ok((a, WalletType::Evm))) => alt_evm_address = Some(a),
            Some(_) => v.push("alt_evm_address", "must be 0x followed by 40 hex digits"),
            None => v.push("alt_evm_address", "is required for alt wallets"),
        }
        if !input.key_id.is_some_and(|k| k >= 0) {
            v.push("key_id", "is required for alt wallets and must be a non-negative integer");
        }
    }
    if let Some((_, kind)) = &address {
        if (*kind == WalletType::Alt) != is_alt {
            v.push("wallet_address", if is_alt { "alt wallets have 0x + 16 hex digit addresses" } else { "EVM wallets have 0x + 40 hex digit addresses" });
        }
    }
    v.finish()?;
    let (address, wallet_type) = address.ok_or_else(|| Error::internal("validated address missing"))?;

    // Read the nonce and any alt key, then verify outside the writer: a bad signature costs
    // no write and does not burn the nonce.
    let now = now_micros();
    let (pid, addr, n) = (provider_id.clone(), address.clone(), nonce.clone());
    let key_id = input.key_id.unwrap_or(0);
    let alt_key = app
        .store
        .read(move |c| {
            auth_store::check_nonce(c, &n, &pid, &addr, now)?;
            if is_alt { auth_store::alt_key(c, &pid, &addr, key_id) } else { Ok(None) }
        })
        .await?;
    let message = login_message(&nonce);
    if is_alt {
        let key = alt_key.filter(|k| !k.revoked).ok_or(Error::AuthFailed {
            code: "invalid_signature",
            detail: "the account key is unknown or revoked",
        })?;
        let public_key = wallet_auth::parse_hex(&key.public_key, false).map_err(|_| invalid_signature())?;
        let sign_algo = key.sign_algo.parse().map_err(|_| invalid_signature())?;
        let hash_algo = key.hash_algo.parse().map_err(|_| invalid_signature())?;
        wallet_auth::verify_alt_signature(&public_key, sign_algo, hash_algo, message.as_bytes(), &signature)
            .map_err(|_| invalid_signature())?;
    } else {
        let recovered = wallet_auth::recover_personal_sign(message.as_bytes(), &signature).map_err(|_| invalid_signature())?;
        if hex(&recovered) != address[2..] {
            return Err(invalid_signature());
        }
    }

    let refresh_token = hex(&random_bytes::<32>());
    let session_id = uuid::Uuid::new_v4().to_string();
    let grant = LoginGrant {
        nonce,
        provider_id: provider_id.clone(),
        address,
        wallet_type: wallet_type.as_str(),
        alt_evm_address,
        session_id: session_id.clone(),
        refresh_hash: hash_token(&refresh_token),
        session_expires_at: now + app.auth.refresh_token_ttl_secs * 1_000_000,
    };
    let wallet = app.store.write(move |c| auth_store::login(c, grant, now)).await?;
    let access_token = issue_access_token(&app, &wallet.wallet_id, &session_id, &provider_id);
    Ok(token_response(&app, Tokens { access_token, refresh_token }, &session_id))
}

#[derive(Deserialize)]
struct RefreshInput {
    refresh_token: Option<String>,
    provider_id: Option<String>,
}

async fn refresh(State(app): State<AppState>, ApiJson(input): ApiJson<RefreshInput>) -> Result<Json<TokenGrant>> {
    let mut v = Validator::default();
    let provider_id = provider_id_field(input.provider_id.as_deref(), &mut v);
    let presented = input.refresh_token.unwrap_or_default();
    if presented.is_empty() {
        v.push("refresh_token", "is required");
    }
    v.finish()?;
    let refresh_token = hex(&random_bytes::<32>());
    let (old_hash, new_hash) = (hash_token(&presented), hash_token(&refresh_token));
    let now = now_micros();
    let pid = provider_id.clone();
    let outcome = app.store.write(move |c| auth_store::refresh(c, &old_hash, &pid, &new_hash, now)).await?;
    match outcome {
        Refreshed::Rotated(session) => {
            let access_token = issue_access_token(&app, &session.wallet_id, &session.id, &provider_id);
            Ok(token_response(&app, Tokens { access_token, refresh_token }, &session.id))
        }
        Refreshed::ReuseDetected => Err(Error::Unauthenticated("this refresh token was already used; the session is revoked")),
        Refreshed::Rejected => Err(Error::Unauthenticated("invalid refresh token")),
    }
}

async fn profile(State(app): State<AppState>, user: UserAuth) -> Result<Json<Profile>> {
    let wallet_id = user.wallet_id.clone();
    let (wallet, balances) = app
        .store
        .read(move |c| {
            let wallet = tenants::wallet_by_id(c, &wallet_id)?.ok_or(Error::Unauthenticated("the wallet no longer exists"))?;
            let balances = tenants::balances(c, "wallet", &wallet_id)?;
            Ok((wallet, balances))
        })
        .await?;
    Ok(Json(Profile {
        wallet_id: wallet.wallet_id,
        wallet_address: wallet.wallet_address,
        wallet_type: wallet.wallet_type,
        alt_evm_address: wallet.alt_evm_address,
        provider_id: wallet.provider_id,
        session_id: user.session_id,
        balances,
        created_at: Timestamp(wallet.created_at),
    }))
}

async fn logout(State(app): State<AppState>, user: UserAuth) -> Result<Json<Message>> {
    let now = now_micros();
    app.store.write(move |c| auth_store::revoke_session(c, &user.session_id, now)).await?;
    Ok(Json(Message { message: "Logged out" }))
}

#[derive(Deserialize)]
struct AltKeyInput {
    public_key: Option<String>,
    sign_algo: Option<String>,
    hash_algo: Option<String>,
    revoked: Option<bool>,
}

async fn put_alt_key(
    State(app): State<AppState>,
    ProviderAuth(provider): ProviderAuth,
    Path((wallet_address, key_id)): Path<(String, String)>,
    ApiJson(input): ApiJson<AltKeyInput>,
) -> Result<Json<AltKey>> {
    let mut v = Validator::default();
    let address = match parse_wallet_address(&wallet_address) {
        Ok((a, WalletType::Alt)) => a,
        _ => {
            v.push("wallet_address", "must be an alt-network address: 0x followed by 16 hex digits");
            String::new()
        }
    };
    let key_id: i64 = match key_id.parse() {
        Ok(k) if k >= 0 => k,
        _ => {
            v.push("key_id", "must be a non-negative integer");
            0
        }
    };
    let public_key = input.public_key.unwrap_or_default().to_ascii_lowercase();
    if wallet_auth::parse_hex(&public_key, false).map(|b| b.len()) != Ok(64) {
        v.push("public_key", "must be 128 hex digits (X||Y) without 0x");
    }
    let sign_algo = input.sign_algo.unwrap_or_default();
    if sign_algo.parse::<wallet_auth::SignAlgo>().is_err() {
        v.push("sign_algo", "must be ECDSA_P256 or ECDSA_secp256k1");
    }
    let hash_algo = input.hash_algo.unwrap_or_default();
    if hash_algo.parse::<wallet_auth::HashAlgo>().is_err() {
        v.push("hash_algo", "must be SHA2_256 or SHA3_256");
    }
    v.finish()?;
    let key = AltKey { wallet_address: address, key_id, public_key, sign_algo, hash_algo, revoked: input.revoked.unwrap_or(false) };
    let stored = key.clone();
    let now = now_micros();
    app.store.write(move |c| auth_store::put_alt_key(c, &provider.id, &stored, now)).await?;
    Ok(Json(key))
}
