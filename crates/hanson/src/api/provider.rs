//! Provider routes (`docs/api.md`, "Markets" and "Money flows and the ledger"): API key required; a provider sees
//! only its own markets (another provider's market is 404).

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::Json;
use serde::Deserialize;
use serde_json::Value as Json_;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::extract::{ApiJson, ApiPath, HashedJson, ProviderAuth};
use super::idempotent;
use super::openapi::{IdempotencyKey, E401, E404, E409, E422};
use super::state::AppState;
use super::views::{self, MarketCreated, MarketDetail, MarketHeader, MarketUpdated, OutcomeChanged, OutcomeView, Treasury, WalletView};
use crate::domain::address::parse_wallet_address;
use crate::domain::ids::ProviderId;
use crate::domain::market_input::{wei_field, CreateMarketInput, OutcomeInput, OutcomeUpdateInput, UpdateMarketInput};
use crate::domain::money::PositiveAmount;
use crate::domain::tenant::{TransferReceipt, TreasuryDeposit, WalletTransfer};
use crate::domain::time::{now_micros, Timestamp};
use crate::error::{Error, Result, Validator};
use crate::store::market_edits;
use crate::store::tenants::{self, ExternalKind, ExternalTransfer, Recorded};

pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create_market))
        .routes(routes!(update_market))
        .routes(routes!(create_outcome))
        .routes(routes!(update_outcome))
        .routes(routes!(pause_market))
        .routes(routes!(resume_market))
        .routes(routes!(treasury))
        .routes(routes!(treasury_deposit))
        .routes(routes!(wallet_deposit))
        .routes(routes!(wallet_withdrawal))
        .routes(routes!(wallet))
}

/// Create a market; liquidity moves from the treasury into the market pool.
#[utoipa::path(post, path = "/v1/providers/markets", tag = "Provider", security(("providerKey" = [])),
    params(IdempotencyKey), request_body = CreateMarketInput,
    responses((status = 201, description = "The market, open for trading from starts_at", body = MarketCreated), E401, E422))]
async fn create_market(
    State(app): State<AppState>,
    ProviderAuth(provider): ProviderAuth,
    headers: HeaderMap,
    body: HashedJson<CreateMarketInput>,
) -> Result<Response> {
    let new_market = body.value.validate(&provider.id)?;
    let principal = format!("provider:{}", provider.id);
    idempotent::run(&app, &headers, principal, body.fingerprint, None, idempotent::no_check, move |c, ()| {
        let now = now_micros();
        let market = market_edits::create_market(c, new_market, now)?;
        let prices = market.prices()?;
        let created = MarketCreated {
            market: MarketHeader {
                id: market.id.clone(),
                question: market.question.clone(),
                description: market.description.clone(),
                status: market.status(now),
                created_at: Some(Timestamp(market.created_at)),
                starts_at: Some(Timestamp(market.starts_at)),
                ends_at: Some(Timestamp(market.ends_at)),
                updated_at: None,
            },
            outcomes: market.outcomes.iter().zip(prices).map(|(o, p)| OutcomeView::new(o, p)).collect(),
            message: "Market created",
        };
        Ok((StatusCode::CREATED, created))
    })
    .await
}

/// Update a market (partial: only fields present change).
#[utoipa::path(put, path = "/v1/providers/markets/{market_id}", tag = "Provider", security(("providerKey" = [])),
    params(("market_id" = String, Path)), request_body = UpdateMarketInput,
    responses((status = 200, description = "The market after the change", body = MarketUpdated), E401, E404, E409, E422))]
async fn update_market(
    State(app): State<AppState>,
    ProviderAuth(provider): ProviderAuth,
    ApiPath(market_id): ApiPath<String>,
    ApiJson(input): ApiJson<UpdateMarketInput>,
) -> Result<Json<MarketUpdated>> {
    let patch = input.validate()?;
    let now = now_micros();
    let market = app.store.write(move |c| market_edits::update_market(c, &provider.id, &market_id, patch, now)).await?;
    Ok(Json(MarketUpdated {
        market: MarketHeader {
            id: market.id.clone(),
            question: market.question.clone(),
            description: market.description.clone(),
            status: market.status(now),
            created_at: None,
            starts_at: None,
            ends_at: None,
            updated_at: Some(Timestamp(market.updated_at)),
        },
        message: "Market updated",
    }))
}

#[derive(Deserialize, ToSchema)]
struct PauseInput {
    /// Why trading stops, shown on the market while it is paused. Not blank.
    #[schema(required = true, nullable = false, min_length = 1, max_length = 1000)]
    reason: Option<String>,
}

/// Pause trading on a market.
///
/// Bets, sells and their previews answer 409 market_paused until it resumes; reads, streams,
/// edits, resolve and cancel go on (resolve and cancel end the pause). Pausing a paused market
/// changes nothing: its first pause, reason and time stand. A resolved or cancelled market is
/// 409 market_settled. Each change is a market.updated event.
#[utoipa::path(post, path = "/v1/providers/markets/{market_id}/pause", tag = "Provider", security(("providerKey" = [])),
    operation_id = "pause_market", params(("market_id" = String, Path), IdempotencyKey), request_body = PauseInput,
    responses((status = 200, description = "The market detail, paused", body = MarketDetail), E401, E404, E409, E422))]
async fn pause_market(
    State(app): State<AppState>,
    ProviderAuth(provider): ProviderAuth,
    ApiPath(market_id): ApiPath<String>,
    headers: HeaderMap,
    body: HashedJson<PauseInput>,
) -> Result<Response> {
    let reason = body.value.reason.clone().unwrap_or_default();
    let mut v = Validator::default();
    if reason.trim().is_empty() {
        v.push("reason", "is required");
    } else if reason.chars().count() > 1_000 {
        v.push("reason", "must be at most 1000 characters");
    }
    v.finish()?;
    let principal = format!("provider:{}", provider.id);
    idempotent::run(&app, &headers, principal, body.fingerprint, None, idempotent::no_check, move |c, ()| {
        let now = now_micros();
        let market = market_edits::pause(c, &provider.id, &market_id, &reason, now)?;
        Ok((StatusCode::OK, views::market_detail(&market, now)?))
    })
    .await
}

/// Resume trading on a paused market.
///
/// Resuming a market that is not paused changes nothing. A resolved or cancelled market is 409
/// market_settled. Each change is a market.updated event.
#[utoipa::path(post, path = "/v1/providers/markets/{market_id}/resume", tag = "Provider", security(("providerKey" = [])),
    operation_id = "resume_market", params(("market_id" = String, Path), IdempotencyKey),
    responses((status = 200, description = "The market detail, trading", body = MarketDetail), E401, E404, E409, E422))]
async fn resume_market(
    State(app): State<AppState>,
    ProviderAuth(provider): ProviderAuth,
    ApiPath(market_id): ApiPath<String>,
    headers: HeaderMap,
) -> Result<Response> {
    let principal = format!("provider:{}", provider.id);
    let fingerprint = format!("resume {market_id}").into_bytes();
    idempotent::run(&app, &headers, principal, fingerprint, None, idempotent::no_check, move |c, ()| {
        let now = now_micros();
        let market = market_edits::resume(c, &provider.id, &market_id, now)?;
        Ok((StatusCode::OK, views::market_detail(&market, now)?))
    })
    .await
}

/// Add an outcome (before trades: b is recomputed; after trades: the treasury funds the extra worst-case loss).
#[utoipa::path(post, path = "/v1/providers/markets/{market_id}/outcomes", tag = "Provider", security(("providerKey" = [])),
    params(("market_id" = String, Path)), request_body = OutcomeInput,
    responses((status = 201, description = "The new outcome", body = OutcomeChanged), E401, E404, E409, E422))]
async fn create_outcome(
    State(app): State<AppState>,
    ProviderAuth(provider): ProviderAuth,
    ApiPath(market_id): ApiPath<String>,
    ApiJson(input): ApiJson<OutcomeInput>,
) -> Result<(StatusCode, Json<OutcomeChanged>)> {
    let new_outcome = input.into_new_outcome()?;
    let now = now_micros();
    let (market, outcome_id) =
        app.store.write(move |c| market_edits::create_outcome(c, &provider.id, &market_id, new_outcome, now)).await?;
    Ok((StatusCode::CREATED, Json(OutcomeChanged { outcome: OutcomeView::of(&market, &outcome_id)?, message: "Outcome created" })))
}

/// Update an outcome (partial).
#[utoipa::path(put, path = "/v1/providers/markets/{market_id}/outcomes/{outcome_id}", tag = "Provider", security(("providerKey" = [])),
    params(("market_id" = String, Path), ("outcome_id" = String, Path)), request_body = OutcomeUpdateInput,
    responses((status = 200, description = "The outcome after the change", body = OutcomeChanged), E401, E404, E409, E422))]
async fn update_outcome(
    State(app): State<AppState>,
    ProviderAuth(provider): ProviderAuth,
    ApiPath((market_id, outcome_id)): ApiPath<(String, String)>,
    ApiJson(input): ApiJson<OutcomeUpdateInput>,
) -> Result<Json<OutcomeChanged>> {
    let patch = input.into_patch()?;
    let now = now_micros();
    let id = outcome_id.clone();
    let market = app.store.write(move |c| market_edits::update_outcome(c, &provider.id, &market_id, &id, patch, now)).await?;
    Ok(Json(OutcomeChanged { outcome: OutcomeView::of(&market, &outcome_id)?, message: "Outcome updated" }))
}

/// A deposit into the provider's treasury.
#[derive(Deserialize, ToSchema)]
struct TreasuryDepositInput {
    #[schema(required = true, nullable = false, min_length = 1)]
    token_id: Option<String>,
    #[schema(value_type = PositiveAmount, required = true)]
    amount: Option<Json_>,
    /// The external transfer's id: a repeat with the same reference answers the first result.
    #[schema(required = true, nullable = false, min_length = 1, max_length = 200)]
    reference: Option<String>,
}

/// A deposit into, or a withdrawal from, a wallet.
#[derive(Deserialize, ToSchema)]
struct WalletTransferInput {
    #[schema(required = true, nullable = false, min_length = 1)]
    token_id: Option<String>,
    #[schema(value_type = PositiveAmount, required = true)]
    amount: Option<Json_>,
    /// The external transfer's id: a repeat with the same reference answers the first result.
    #[schema(required = true, nullable = false, min_length = 1, max_length = 200)]
    reference: Option<String>,
    /// EVM address (0x + 40 hex, EIP-55 checked when mixed-case) or alt account address (0x + 16 hex).
    #[schema(required = true, nullable = false, pattern = "^0x([0-9a-fA-F]{40}|[0-9a-fA-F]{16})$")]
    wallet_address: Option<String>,
}

impl From<TreasuryDepositInput> for WalletTransferInput {
    fn from(input: TreasuryDepositInput) -> Self {
        WalletTransferInput { token_id: input.token_id, amount: input.amount, reference: input.reference, wallet_address: None }
    }
}

fn recorded_response(r: Recorded) -> (StatusCode, TransferReceipt) {
    let status = if r.replayed { StatusCode::OK } else { StatusCode::CREATED };
    (status, r.response)
}

/// Validates a deposit or withdrawal body into a store request.
fn external_transfer(provider_id: ProviderId, kind: ExternalKind, input: WalletTransferInput) -> Result<ExternalTransfer> {
    let mut v = Validator::default();
    let amount = wei_field(input.amount.as_ref(), "amount", &mut v)?;
    if input.amount.is_none() {
        v.push("amount", "is required");
    }
    if amount == Some(0) {
        v.push("amount", "must be greater than 0");
    }
    let token_id = input.token_id.unwrap_or_default();
    if token_id.is_empty() {
        v.push("token_id", "is required");
    }
    let reference = input.reference.unwrap_or_default();
    if reference.is_empty() || reference.chars().count() > 200 {
        v.push("reference", "is required (the external transfer id, at most 200 characters)");
    }
    let mut wallet = None;
    if kind != ExternalKind::TreasuryDeposit {
        match input.wallet_address.as_deref().map(parse_wallet_address) {
            Some(Ok(parsed)) => wallet = Some(parsed),
            Some(Err(message)) => v.push("wallet_address", message),
            None => v.push("wallet_address", "is required"),
        }
    }
    v.finish()?;
    let (wallet_address, wallet_type) = match wallet {
        Some((address, kind)) => (Some(address), kind.as_str()),
        None => (None, "evm"),
    };
    Ok(ExternalTransfer {
        provider_id: provider_id.into(),
        kind,
        token_id,
        amount: amount.unwrap_or(0),
        reference,
        wallet_address,
        wallet_type,
    })
}

async fn run_external<T: Into<WalletTransferInput>>(
    app: &AppState,
    headers: &HeaderMap,
    provider_id: ProviderId,
    kind: ExternalKind,
    body: HashedJson<T>,
) -> Result<Response> {
    let principal = format!("provider:{provider_id}");
    let request = external_transfer(provider_id, kind, body.value.into())?;
    idempotent::run(app, headers, principal, body.fingerprint, None, idempotent::no_check, move |c, ()| {
        tenants::external_transfer(c, request, now_micros()).map(recorded_response)
    })
    .await
}

/// Deposit into the treasury (idempotent by reference: a replay answers 200 with the original body).
#[utoipa::path(post, path = "/v1/providers/treasury/deposits", tag = "Money", security(("providerKey" = [])),
    params(IdempotencyKey), request_body = TreasuryDepositInput,
    responses(
        (status = 201, description = "The deposit", body = TreasuryDeposit),
        (status = 200, description = "Replay of an earlier identical request (same reference)", body = TreasuryDeposit),
        E401, E409, E422))]
async fn treasury_deposit(
    State(app): State<AppState>,
    ProviderAuth(provider): ProviderAuth,
    headers: HeaderMap,
    body: HashedJson<TreasuryDepositInput>,
) -> Result<Response> {
    run_external(&app, &headers, provider.id, ExternalKind::TreasuryDeposit, body).await
}

/// Deposit into a wallet, creating it in the provider's tenant (idempotent by reference).
#[utoipa::path(post, path = "/v1/providers/wallets/deposits", tag = "Money", security(("providerKey" = [])),
    params(IdempotencyKey), request_body = WalletTransferInput,
    responses(
        (status = 201, description = "The deposit", body = WalletTransfer),
        (status = 200, description = "Replay of an earlier identical request (same reference)", body = WalletTransfer),
        E401, E409, E422))]
async fn wallet_deposit(
    State(app): State<AppState>,
    ProviderAuth(provider): ProviderAuth,
    headers: HeaderMap,
    body: HashedJson<WalletTransferInput>,
) -> Result<Response> {
    run_external(&app, &headers, provider.id, ExternalKind::WalletDeposit, body).await
}

/// Withdraw from a wallet (idempotent by reference).
#[utoipa::path(post, path = "/v1/providers/wallets/withdrawals", tag = "Money", security(("providerKey" = [])),
    params(IdempotencyKey), request_body = WalletTransferInput,
    responses(
        (status = 201, description = "The withdrawal", body = WalletTransfer),
        (status = 200, description = "Replay of an earlier identical request (same reference)", body = WalletTransfer),
        E401, E409, E422))]
async fn wallet_withdrawal(
    State(app): State<AppState>,
    ProviderAuth(provider): ProviderAuth,
    headers: HeaderMap,
    body: HashedJson<WalletTransferInput>,
) -> Result<Response> {
    run_external(&app, &headers, provider.id, ExternalKind::WalletWithdrawal, body).await
}

/// Treasury balances.
#[utoipa::path(get, path = "/v1/providers/treasury", tag = "Money", security(("providerKey" = [])),
    responses((status = 200, description = "The provider's treasury", body = Treasury), E401))]
async fn treasury(State(app): State<AppState>, ProviderAuth(provider): ProviderAuth) -> Result<Json<Treasury>> {
    let id = provider.id.clone();
    let balances = app.store.read(move |c| tenants::balances(c, "treasury", &id)).await?;
    Ok(Json(Treasury { provider_id: provider.id, balances }))
}

/// Look up a wallet and its balances (address case-insensitive).
#[utoipa::path(get, path = "/v1/providers/wallets/{wallet_address}", tag = "Money", security(("providerKey" = [])),
    params(("wallet_address" = String, Path)),
    responses((status = 200, description = "The wallet", body = WalletView), E401, E404))]
async fn wallet(
    State(app): State<AppState>,
    ProviderAuth(provider): ProviderAuth,
    ApiPath(address): ApiPath<String>,
) -> Result<Json<WalletView>> {
    let address = address.to_ascii_lowercase();
    let (wallet, balances) = app
        .store
        .read(move |c| {
            let wallet = tenants::wallet_by_address(c, &provider.id, &address)?.ok_or(Error::NotFound)?;
            let balances = tenants::balances(c, "wallet", &wallet.wallet_id)?;
            Ok((wallet, balances))
        })
        .await?;
    Ok(Json(WalletView { wallet_id: wallet.wallet_id, wallet_address: wallet.wallet_address, wallet_type: wallet.wallet_type, balances }))
}
