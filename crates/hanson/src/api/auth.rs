//! Wallet login (`docs/api.md`, "Identity and authentication"): nonce, EVM and alt-network login, refresh with rotation,
//! profile, logout; and the provider-filled alt-network key registry.

use axum::extract::State;
use axum::Json;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::extract::{ApiJson, ApiPath, ProviderAuth, UserAuth};
use super::openapi::{E401, E404, E422};
use super::state::AppState;
use super::views::Message;
use crate::auth::jwt::{Claims, ISSUER};
use crate::auth::random_bytes;
use crate::domain::address::{parse_wallet_address, WalletType};
use crate::domain::ids::{ProviderId, SessionId, WalletId};
use crate::domain::session::{address_field, login_message, provider_id_field, AltKey, Login, LoginInput, MessageFormat, NONCE_TTL_MICROS};
use crate::domain::siwe::SiweMessage;
use crate::domain::tenant::Balance;
use crate::domain::time::{now_micros, Timestamp};
use crate::error::{Error, Result, Validator};
use crate::store::auth::{self as auth_store, LoginGrant, Refreshed};
use crate::store::tenants;
use wallet_auth::to_hex as hex;

pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(nonce))
        .routes(routes!(login))
        .routes(routes!(refresh))
        .routes(routes!(profile))
        .routes(routes!(logout))
        .routes(routes!(put_alt_key))
}

#[derive(Deserialize, ToSchema)]
struct NonceInput {
    /// EVM address (0x + 40 hex, EIP-55 checked when mixed-case) or alt account address (0x + 16 hex).
    #[schema(required = true, nullable = false, pattern = "^0x([0-9a-fA-F]{40}|[0-9a-fA-F]{16})$")]
    wallet_address: Option<String>,
    #[schema(required = true, nullable = false, pattern = "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")]
    provider_id: Option<String>,
    /// `spec` (default): the spec's one-line message. `siwe`: an EIP-4361 Sign-In with
    /// Ethereum message naming this service's domain and URI (its `--public-url`), the chain
    /// id, the nonce, and when it was issued and expires; EVM wallets only, and only when the
    /// server has a public URL.
    #[schema(pattern = "^(spec|siwe)$")]
    message_format: Option<String>,
    /// `siwe` only: the EIP-155 chain id the wallet is on (default 1).
    #[schema(minimum = 1)]
    chain_id: Option<i64>,
}

/// Issue a login nonce (single use, 5 minutes, bound to provider and address).
#[utoipa::path(post, path = "/v1/auth/nonce", tag = "Auth", request_body = NonceInput,
    responses((status = 200, description = "The nonce and the message to sign", body = NonceGrant), E404, E422))]
async fn nonce(State(app): State<AppState>, ApiJson(input): ApiJson<NonceInput>) -> Result<Json<NonceGrant>> {
    let mut v = Validator::default();
    let provider_id = provider_id_field(input.provider_id.as_deref(), &mut v);
    let address = address_field(input.wallet_address.as_deref(), "wallet_address", &mut v);
    let public_url = app.auth.public_url.as_ref();
    let format =
        MessageFormat::from_fields(input.message_format.as_deref(), input.chain_id, address.as_ref().map(|a| a.1), public_url, &mut v);
    v.finish()?;
    let (address, _) = address.ok_or_else(|| Error::internal("validated address missing"))?;
    let nonce = hex(&random_bytes::<16>());
    let issued_at = now_micros();
    let (message, siwe) = match (format, public_url) {
        (MessageFormat::Siwe { chain_id }, Some(url)) => {
            let checksummed = wallet_auth::parse_evm_address(&address)
                .map(|a| wallet_auth::to_checksum_address(&a))
                .map_err(|_| Error::internal("validated EVM address does not parse"))?;
            let text = SiweMessage::new(url, &checksummed, chain_id, &nonce, issued_at, issued_at + NONCE_TTL_MICROS).render();
            (text.clone(), Some(text))
        }
        _ => (login_message(&nonce), None),
    };
    // A SIWE message's expiration is written to the second: the nonce ends with it.
    let expires_at = match siwe {
        Some(_) => (issued_at + NONCE_TTL_MICROS).div_euclid(1_000_000) * 1_000_000,
        None => issued_at + NONCE_TTL_MICROS,
    };
    let stored = nonce.clone();
    app.store.write(move |c| auth_store::issue_nonce(c, &stored, &provider_id, &address, expires_at, siwe.as_deref())).await?;
    Ok(Json(NonceGrant { message, nonce, expires_at: Timestamp(expires_at) }))
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
pub(crate) struct NonceGrant {
    nonce: String,
    message: String,
    expires_at: Timestamp,
}

/// What login and refresh answer.
#[derive(Serialize, ToSchema)]
pub(crate) struct TokenGrant {
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
pub(crate) struct Profile {
    wallet_id: WalletId,
    wallet_address: String,
    wallet_type: String,
    alt_evm_address: Option<String>,
    provider_id: ProviderId,
    session_id: SessionId,
    balances: Vec<Balance>,
    created_at: Timestamp,
}

/// Log in with an EIP-191 signature (of the spec's message or of a Sign-In with Ethereum one), or an alt-network account key (wallet_type alt).
#[utoipa::path(post, path = "/v1/auth/login", tag = "Auth", request_body = LoginInput,
    responses((status = 200, description = "Tokens of a new session", body = TokenGrant), E401, E422))]
async fn login(State(app): State<AppState>, ApiJson(input): ApiJson<LoginInput>) -> Result<Json<TokenGrant>> {
    let login = input.validate()?;
    // Read the nonce and any alt key, then verify outside the writer: a bad signature costs
    // no write and does not burn the nonce.
    let now = now_micros();
    let (pid, addr, n, alt_key_id) =
        (login.provider_id.clone(), login.address.clone(), login.nonce.clone(), login.alt.as_ref().map(|a| a.key_id));
    let (issued, alt_key) = app
        .store
        .read(move |c| {
            let issued = auth_store::check_nonce(c, &n, &pid, &addr, now)?;
            let alt_key = match alt_key_id {
                Some(key_id) => auth_store::alt_key(c, &pid, &addr, key_id)?,
                None => None,
            };
            Ok((issued, alt_key))
        })
        .await?;
    login.verify(alt_key.as_ref(), issued.as_deref(), now)?;
    let Login { provider_id, address, wallet_type, nonce, alt, .. } = login;
    let refresh_token = hex(&random_bytes::<32>());
    let session_id = uuid::Uuid::new_v4().to_string();
    let grant = LoginGrant {
        nonce,
        provider_id: provider_id.clone(),
        address,
        wallet_type: wallet_type.as_str(),
        alt_evm_address: alt.map(|a| a.evm_address),
        session_id: session_id.clone(),
        refresh_hash: hash_token(&refresh_token),
        session_expires_at: now + app.auth.refresh_token_ttl_secs * 1_000_000,
    };
    let wallet = app.store.write(move |c| auth_store::login(c, grant, now)).await?;
    let access_token = issue_access_token(&app, &wallet.wallet_id, &session_id, &provider_id);
    Ok(token_response(&app, Tokens { access_token, refresh_token }, &session_id))
}

#[derive(Deserialize, ToSchema)]
struct RefreshInput {
    #[schema(required = true, nullable = false, min_length = 1)]
    refresh_token: Option<String>,
    #[schema(required = true, nullable = false, pattern = "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")]
    provider_id: Option<String>,
}

/// Rotate the refresh token and get a new access token (reusing a spent token revokes the session).
#[utoipa::path(post, path = "/v1/auth/refresh", tag = "Auth", request_body = RefreshInput,
    responses((status = 200, description = "New tokens of the same session", body = TokenGrant), E401, E422))]
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

/// The logged-in wallet, its session and balances.
#[utoipa::path(get, path = "/v1/auth/profile", tag = "Auth", security(("userToken" = [])),
    responses((status = 200, description = "The caller's wallet", body = Profile), E401))]
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

/// Revoke the session: its access and refresh tokens stop working at once.
#[utoipa::path(post, path = "/v1/auth/logout", tag = "Auth", security(("userToken" = [])),
    responses((status = 200, description = "Logged out", body = Message), E401))]
async fn logout(State(app): State<AppState>, user: UserAuth) -> Result<Json<Message>> {
    let now = now_micros();
    app.store.write(move |c| auth_store::revoke_session(c, &user.session_id, now)).await?;
    Ok(Json(Message { message: "Logged out" }))
}

#[derive(Deserialize, ToSchema)]
struct AltKeyInput {
    /// 64 bytes X||Y hex without 0x.
    #[schema(required = true, nullable = false, pattern = "^[0-9a-fA-F]{128}$")]
    public_key: Option<String>,
    #[schema(required = true, nullable = false, pattern = "^(ECDSA_P256|ECDSA_secp256k1)$")]
    sign_algo: Option<String>,
    #[schema(required = true, nullable = false, pattern = "^(SHA2_256|SHA3_256)$")]
    hash_algo: Option<String>,
    #[schema(default = false)]
    revoked: Option<bool>,
}

/// Create or replace an alt-network account key in the provider's registry.
#[utoipa::path(put, path = "/v1/providers/alt-keys/{wallet_address}/{key_id}", tag = "Auth", security(("providerKey" = [])),
    params(
        ("wallet_address" = String, Path, description = "The alt-network account address: 0x + 16 hex digits", pattern = "^0x[0-9a-fA-F]{16}$"),
        ("key_id" = i64, Path, description = "The account key's index", minimum = 0),
    ),
    request_body = AltKeyInput,
    responses((status = 200, description = "The key as stored", body = AltKey), E401, E404, E422))]
async fn put_alt_key(
    State(app): State<AppState>,
    ProviderAuth(provider): ProviderAuth,
    ApiPath((wallet_address, key_id)): ApiPath<(String, String)>,
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
    // Digits only, as documented (`parse` alone would also take a leading `+`).
    let key_id: i64 = match key_id.parse() {
        Ok(k) if key_id.bytes().all(|b| b.is_ascii_digit()) => k,
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
