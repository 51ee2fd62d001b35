//! Provider routes (spec 4.3 and CONTRACT "Money flows"): API key required; a provider sees
//! only its own markets (another provider's market is 404).

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{get, post, put};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value as Json_};

use super::extract::{ApiJson, HashedJson, ProviderAuth};
use super::{idempotent, views, AppState};
use crate::domain::address::parse_wallet_address;
use crate::domain::market::{wei_field, CreateMarketInput, OutcomeInput, UpdateMarketInput};
use crate::domain::time::{format_micros, now_micros};
use crate::error::{Error, Result, Validator};
use crate::store::markets;
use crate::store::tenants::{self, ExternalKind, ExternalTransfer, Recorded};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v1/providers/markets", post(create_market))
        .route("/v1/providers/markets/{market_id}", put(update_market))
        .route("/v1/providers/markets/{market_id}/outcomes", post(create_outcome))
        .route("/v1/providers/markets/{market_id}/outcomes/{outcome_id}", put(update_outcome))
        .route("/v1/providers/treasury", get(treasury))
        .route("/v1/providers/treasury/deposits", post(treasury_deposit))
        .route("/v1/providers/wallets/deposits", post(wallet_deposit))
        .route("/v1/providers/wallets/withdrawals", post(wallet_withdrawal))
        .route("/v1/providers/wallets/{wallet_address}", get(wallet))
}

async fn create_market(
    State(app): State<AppState>,
    ProviderAuth(provider): ProviderAuth,
    headers: HeaderMap,
    body: HashedJson<CreateMarketInput>,
) -> Result<Response> {
    let new_market = body.value.validate(&provider.id)?;
    let principal = format!("provider:{}", provider.id);
    idempotent::run(&app, &headers, principal, body.fingerprint, idempotent::no_check, move |c, ()| {
        let now = now_micros();
        let market = markets::create_market(c, new_market, now)?;
        let prices = market.prices()?;
        Ok((
            StatusCode::CREATED,
            json!({
                "market": {
                    "id": market.id,
                    "question": market.question,
                    "description": market.description,
                    "status": market.status(now),
                    "created_at": format_micros(market.created_at),
                    "starts_at": format_micros(market.starts_at),
                    "ends_at": format_micros(market.ends_at),
                },
                "outcomes": market.outcomes.iter().zip(prices).map(|(o, p)| views::outcome_json(o, p, false)).collect::<Vec<_>>(),
                "message": "Market created",
            }),
        ))
    })
    .await
}

async fn update_market(
    State(app): State<AppState>,
    ProviderAuth(provider): ProviderAuth,
    Path(market_id): Path<String>,
    ApiJson(input): ApiJson<UpdateMarketInput>,
) -> Result<Json<Json_>> {
    let patch = input.validate()?;
    let now = now_micros();
    let market = app.store.write(move |c| markets::update_market(c, &provider.id, &market_id, patch, now)).await?;
    Ok(Json(json!({
        "market": {
            "id": market.id,
            "question": market.question,
            "description": market.description,
            "status": market.status(now),
            "updated_at": format_micros(market.updated_at),
        },
        "message": "Market updated",
    })))
}

async fn create_outcome(
    State(app): State<AppState>,
    ProviderAuth(provider): ProviderAuth,
    Path(market_id): Path<String>,
    ApiJson(input): ApiJson<OutcomeInput>,
) -> Result<(StatusCode, Json<Json_>)> {
    let new_outcome = input.into_new_outcome()?;
    let now = now_micros();
    let (market, outcome_id) =
        app.store.write(move |c| markets::create_outcome(c, &provider.id, &market_id, new_outcome, now)).await?;
    Ok((StatusCode::CREATED, Json(json!({ "outcome": views::outcome(&market, &outcome_id)?, "message": "Outcome created" }))))
}

async fn update_outcome(
    State(app): State<AppState>,
    ProviderAuth(provider): ProviderAuth,
    Path((market_id, outcome_id)): Path<(String, String)>,
    ApiJson(input): ApiJson<OutcomeInput>,
) -> Result<Json<Json_>> {
    let patch = input.into_patch()?;
    let now = now_micros();
    let id = outcome_id.clone();
    let market =
        app.store.write(move |c| markets::update_outcome(c, &provider.id, &market_id, &id, patch, now)).await?;
    Ok(Json(json!({ "outcome": views::outcome(&market, &outcome_id)?, "message": "Outcome updated" })))
}

#[derive(Deserialize)]
struct DepositInput {
    token_id: Option<String>,
    amount: Option<Json_>,
    reference: Option<String>,
    wallet_address: Option<String>,
}

fn recorded_response(r: Recorded) -> (StatusCode, Json_) {
    let status = if r.replayed { StatusCode::OK } else { StatusCode::CREATED };
    (status, r.response)
}

/// Validates a deposit or withdrawal body into a store request.
fn external_transfer(provider_id: String, kind: ExternalKind, input: DepositInput) -> Result<ExternalTransfer> {
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
    if reference.is_empty() || reference.len() > 200 {
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
        provider_id,
        kind,
        token_id,
        amount: amount.unwrap_or(0),
        reference,
        wallet_address,
        wallet_type,
    })
}

async fn run_external(app: &AppState, headers: &HeaderMap, provider_id: String, kind: ExternalKind, body: HashedJson<DepositInput>) -> Result<Response> {
    let principal = format!("provider:{provider_id}");
    let request = external_transfer(provider_id, kind, body.value)?;
    idempotent::run(app, headers, principal, body.fingerprint, idempotent::no_check, move |c, ()| {
        tenants::external_transfer(c, request, now_micros()).map(recorded_response)
    })
    .await
}

async fn treasury_deposit(
    State(app): State<AppState>,
    ProviderAuth(provider): ProviderAuth,
    headers: HeaderMap,
    body: HashedJson<DepositInput>,
) -> Result<Response> {
    run_external(&app, &headers, provider.id, ExternalKind::TreasuryDeposit, body).await
}

async fn wallet_deposit(
    State(app): State<AppState>,
    ProviderAuth(provider): ProviderAuth,
    headers: HeaderMap,
    body: HashedJson<DepositInput>,
) -> Result<Response> {
    run_external(&app, &headers, provider.id, ExternalKind::WalletDeposit, body).await
}

async fn wallet_withdrawal(
    State(app): State<AppState>,
    ProviderAuth(provider): ProviderAuth,
    headers: HeaderMap,
    body: HashedJson<DepositInput>,
) -> Result<Response> {
    run_external(&app, &headers, provider.id, ExternalKind::WalletWithdrawal, body).await
}

async fn treasury(State(app): State<AppState>, ProviderAuth(provider): ProviderAuth) -> Result<Json<Json_>> {
    let id = provider.id.clone();
    let balances = app.store.read(move |c| tenants::balances(c, "treasury", &id)).await?;
    Ok(Json(json!({ "provider_id": provider.id, "balances": balances })))
}

async fn wallet(
    State(app): State<AppState>,
    ProviderAuth(provider): ProviderAuth,
    Path(address): Path<String>,
) -> Result<Json<Json_>> {
    let address = address.to_ascii_lowercase();
    let (wallet, balances) = app
        .store
        .read(move |c| {
            let wallet = tenants::wallet_by_address(c, &provider.id, &address)?.ok_or(Error::NotFound)?;
            let balances = tenants::balances(c, "wallet", &wallet.wallet_id)?;
            Ok((wallet, balances))
        })
        .await?;
    Ok(Json(json!({
        "wallet_id": wallet.wallet_id,
        "wallet_address": wallet.wallet_address,
        "wallet_type": wallet.wallet_type,
        "balances": balances,
    })))
}
