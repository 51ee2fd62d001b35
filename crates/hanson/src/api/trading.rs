//! Trading and settlement routes: bet, sell, claim and holdings for users; trade records and
//! price history for everyone; resolve and cancel for providers.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::Json;
use serde::Deserialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::extract::{ApiJson, ApiPath, HashedJson, ProviderAuth, UserAuth, UserToken};
use super::forward::{forward_trade, TradeRoute};
use super::idempotent;
use super::openapi::{IdempotencyKey, E401, E403, E404, E409, E422};
use super::public::SellInput;
use super::state::AppState;
use crate::domain::candle::PricePoint;
use crate::domain::ids::{MarketId, OutcomeId};
use crate::domain::market_input::wei_field;
use crate::domain::money::InputAmount;
use crate::domain::page::{Page, SearchRequest, Searchable};
use crate::domain::position::{Holding, PositionStatus, PositionType};
use crate::domain::settlement::{CancelRequest, ResolveRequest, MAX_DISPUTE_WINDOW_SECONDS};
use crate::domain::settlement::{Cancellation, ClaimReceipt, Resolution};
use crate::domain::time::{now_micros, parse_timestamp, Micros, Timestamp};
use crate::domain::trade::bounds::{bet_bounds, PriceBound};
use crate::domain::trade::{BetReceipt, BetRequest, SaleReceipt, SellRequest, Trader};
use crate::domain::trade_record::{TradeKind, TradeRecord};
use crate::error::{Error, Result, Validator};
use crate::store::batch::TradeKeys;
use crate::store::history::holdings::{self, HoldingsQuery};
use crate::store::history::trades::{self, TradeQuery};
use crate::store::history::{self, PriceQuery};
use crate::store::{settlement, trading};

/// The trading routes; bets and sells pass through the forwarding layer when `forward` is
/// given (`api::forward`).
pub(crate) fn router(forward: Option<Arc<TradeRoute>>) -> OpenApiRouter<AppState> {
    let trades = OpenApiRouter::new().routes(routes!(place_bet)).routes(routes!(sell));
    let trades = match forward {
        Some(route) => trades.route_layer(axum::middleware::from_fn_with_state(route, forward_trade)),
        None => trades,
    };
    trades
        .routes(routes!(claim))
        .routes(routes!(holdings))
        .routes(routes!(trade_records))
        .routes(routes!(price_history))
        .routes(routes!(resolve))
        .routes(routes!(cancel))
}

/// `session_id` in the body must be the token's own session.
fn trader(user: &UserAuth, session_id: Option<&str>, v: &mut Validator) -> Result<Trader> {
    match session_id {
        None | Some("") => {
            v.push("session_id", "is required");
        }
        Some(s) if user.session_id != s => {
            return Err(Error::forbidden("session_mismatch", "session_id is not the session of this access token"));
        }
        Some(_) => {}
    }
    Ok(Trader { wallet_id: user.wallet_id.clone(), session_id: user.session_id.clone(), provider_id: user.provider_id.clone() })
}

fn wallet_principal(user: &UserAuth) -> String {
    format!("wallet:{}", user.wallet_id)
}

#[derive(Deserialize, Clone, ToSchema)]
struct BetInput {
    /// The access token's session.
    #[schema(required = true, nullable = false, min_length = 1)]
    session_id: Option<String>,
    #[schema(required = true, nullable = false, min_length = 1)]
    outcome_id: Option<String>,
    /// Gross amount paid, fee included.
    #[schema(value_type = InputAmount, required = true)]
    amount: Option<Value>,
    /// The fewest shares accepted: fewer is 409 price_moved and nothing changes ("0" bounds nothing).
    #[schema(value_type = Option<InputAmount>)]
    min_shares: Option<Value>,
    /// A limit: the outcome's price after the bet may not exceed it. The bet fills the largest
    /// part of amount that keeps within it (unfilled_amount says what is left).
    #[schema(value_type = Option<PriceBound>)]
    max_price: Option<Value>,
}

/// Place a bet: the wallet pays amount (fee + net_amount); net_amount buys shares.
#[utoipa::path(post, path = "/v1/markets/{market_id}/bet", tag = "Trading", security(("userToken" = [])),
    params(("market_id" = String, Path), IdempotencyKey), request_body = BetInput,
    responses((status = 200, description = "The bet, durable", body = BetReceipt), E401, E403, E404, E409, E422))]
async fn place_bet(
    State(app): State<AppState>,
    UserToken(user): UserToken,
    ApiPath(market_id): ApiPath<String>,
    headers: HeaderMap,
    body: HashedJson<BetInput>,
) -> Result<Response> {
    let input = body.value;
    let mut v = Validator::default();
    let trader = trader(&user, input.session_id.as_deref(), &mut v)?;
    let amount = wei_field(input.amount.as_ref(), "amount", &mut v)?;
    if input.amount.is_none() {
        v.push("amount", "is required");
    }
    let bounds = bet_bounds(input.min_shares.as_ref(), input.max_price.as_ref(), &mut v)?;
    let outcome_id = input.outcome_id.unwrap_or_default();
    if outcome_id.is_empty() {
        v.push("outcome_id", "is required");
    }
    v.finish()?;
    let request = BetRequest { market_id: MarketId(market_id), outcome_id: OutcomeId(outcome_id), amount: amount.unwrap_or(0), bounds };
    let session = trader.clone();
    let keys = TradeKeys::of(&trader, &request.market_id, &request.outcome_id);
    idempotent::run(
        &app,
        &headers,
        wallet_principal(&user),
        body.fingerprint,
        Some(keys),
        move |c| trading::live_session(c, &session),
        move |c, address| Ok((StatusCode::OK, trading::place_bet(c, &trader, &address, &request)?)),
    )
    .await
}

#[derive(Deserialize, Clone, ToSchema)]
struct SellBody {
    /// The access token's session.
    #[schema(required = true, nullable = false, min_length = 1)]
    session_id: Option<String>,
    #[serde(flatten)]
    sell: SellInput,
}

/// Sell shares by shares_amount, or the fewest shares whose net proceeds reach target_proceeds.
#[utoipa::path(post, path = "/v1/markets/{market_id}/sell", tag = "Trading", security(("userToken" = [])),
    params(("market_id" = String, Path), IdempotencyKey), request_body = SellBody,
    responses((status = 200, description = "The sale, durable", body = SaleReceipt), E401, E403, E404, E409, E422))]
async fn sell(
    State(app): State<AppState>,
    UserToken(user): UserToken,
    ApiPath(market_id): ApiPath<String>,
    headers: HeaderMap,
    body: HashedJson<SellBody>,
) -> Result<Response> {
    let input = body.value;
    let mut v = Validator::default();
    let trader = trader(&user, input.session_id.as_deref(), &mut v)?;
    let by = input.sell.sell_by(&mut v)?;
    let bounds = input.sell.bounds(by, &mut v)?;
    let outcome_id = input.sell.outcome_id.clone().unwrap_or_default();
    if outcome_id.is_empty() {
        v.push("outcome_id", "is required");
    }
    v.finish()?;
    let by = by.ok_or_else(|| Error::internal("validated sell form missing"))?;
    let request = SellRequest { market_id: MarketId(market_id), outcome_id: OutcomeId(outcome_id), by, bounds };
    let session = trader.clone();
    let keys = TradeKeys::of(&trader, &request.market_id, &request.outcome_id);
    idempotent::run(
        &app,
        &headers,
        wallet_principal(&user),
        body.fingerprint,
        Some(keys),
        move |c| trading::live_session(c, &session),
        move |c, address| Ok((StatusCode::OK, trading::sell(c, &trader, &address, &request)?)),
    )
    .await
}

#[derive(Deserialize, ToSchema)]
struct ClaimInput {
    /// The access token's session.
    #[schema(required = true, nullable = false, min_length = 1)]
    session_id: Option<String>,
}

/// Claim a won position: its payout at the market's payout ratio per winning share unit.
#[utoipa::path(post, path = "/v1/markets/positions/{position_id}/claim", tag = "Trading", security(("userToken" = [])),
    params(("position_id" = String, Path), IdempotencyKey), request_body = ClaimInput,
    responses((status = 200, description = "The claim, durable", body = ClaimReceipt), E401, E403, E404, E409, E422))]
async fn claim(
    State(app): State<AppState>,
    UserToken(user): UserToken,
    ApiPath(position_id): ApiPath<String>,
    headers: HeaderMap,
    body: HashedJson<ClaimInput>,
) -> Result<Response> {
    let mut v = Validator::default();
    let trader = trader(&user, body.value.session_id.as_deref(), &mut v)?;
    v.finish()?;
    let session = trader.clone();
    idempotent::run(
        &app,
        &headers,
        wallet_principal(&user),
        body.fingerprint,
        None,
        move |c| trading::live_session(c, &session),
        move |c, _address| Ok((StatusCode::OK, settlement::claim(c, &trader, &position_id, now_micros())?)),
    )
    .await
}

pub(crate) fn date_filter(value: Option<&str>, field: &str, v: &mut Validator) -> Option<Micros> {
    let text = value?;
    let parsed = parse_timestamp(text);
    if parsed.is_none() {
        v.push(field, "must be an RFC 3339 timestamp");
    }
    parsed
}

#[derive(Deserialize, Default, ToSchema)]
struct HoldingsFilters {
    market_id: Option<String>,
    outcome_id: Option<String>,
    #[schema(value_type = Option<PositionStatus>)]
    status: Option<String>,
    #[schema(value_type = Option<PositionType>)]
    position_type: Option<String>,
}

impl Searchable for HoldingsFilters {
    const SORT_FIELDS: &'static [&'static str] = &["created_at", "updated_at", "current_value", "shares", "total_invested"];
}

/// The caller's positions, valued at current prices.
#[utoipa::path(post, path = "/v1/markets/holdings/search", tag = "Trading", security(("userToken" = [])),
    request_body = SearchRequest<HoldingsFilters>,
    responses((status = 200, description = "One page of positions", body = Page<Holding>), E401, E422))]
async fn holdings(
    State(app): State<AppState>,
    user: UserAuth,
    ApiJson(request): ApiJson<SearchRequest<HoldingsFilters>>,
) -> Result<Json<Page<Holding>>> {
    let mut v = Validator::default();
    let (page, sort) = request.paging(&mut v);
    let f = request.filters.unwrap_or_default();
    if f.status.as_deref().is_some_and(|s| PositionStatus::parse(s).is_none()) {
        v.push("filters.status", "must be one of: active, closed, won, lost, claimed, refunded");
    }
    if f.position_type.as_deref().is_some_and(|t| t != "long") {
        v.push("filters.position_type", "must be long");
    }
    v.finish()?;
    let query = HoldingsQuery {
        wallet_id: user.wallet_id.to_string(),
        market_id: f.market_id,
        outcome_id: f.outcome_id,
        status: f.status,
        page,
        sort,
    };
    let page = app.store.read(move |c| holdings::holdings(c, &query)).await?;
    Ok(Json(page))
}

#[derive(Deserialize, Default, ToSchema)]
struct TradeFilters {
    market_id: Option<String>,
    outcome_id: Option<String>,
    wallet_address: Option<String>,
    #[schema(value_type = Option<TradeKind>)]
    transaction_type: Option<String>,
    #[schema(value_type = Option<Timestamp>)]
    from_date: Option<String>,
    #[schema(value_type = Option<Timestamp>)]
    to_date: Option<String>,
}

impl Searchable for TradeFilters {
    const SORT_FIELDS: &'static [&'static str] = &["created_at", "amount", "shares"];
}

/// Search trade records (every trade, public).
#[utoipa::path(post, path = "/v1/markets/positions/search", tag = "Public",
    request_body = SearchRequest<TradeFilters>,
    responses((status = 200, description = "One page of trades", body = Page<TradeRecord>), E422))]
async fn trade_records(
    State(app): State<AppState>,
    ApiJson(request): ApiJson<SearchRequest<TradeFilters>>,
) -> Result<Json<Page<TradeRecord>>> {
    let mut v = Validator::default();
    let (page, sort) = request.paging(&mut v);
    let f = request.filters.unwrap_or_default();
    if f.transaction_type.as_deref().is_some_and(|t| TradeKind::parse(t).is_none()) {
        v.push("filters.transaction_type", "must be buy or sell");
    }
    let from = date_filter(f.from_date.as_deref(), "filters.from_date", &mut v);
    let to = date_filter(f.to_date.as_deref(), "filters.to_date", &mut v);
    v.finish()?;
    let query = TradeQuery {
        market_id: f.market_id,
        outcome_id: f.outcome_id,
        wallet_address: f.wallet_address.map(|a| a.to_ascii_lowercase()),
        transaction_type: f.transaction_type,
        from,
        to,
        page,
        sort,
    };
    let page = app.store.read(move |c| trades::trades(c, &query)).await?;
    Ok(Json(page))
}

/// `market_id` or `outcome_id` is required.
#[derive(Deserialize, Default, ToSchema)]
struct PriceFilters {
    market_id: Option<String>,
    outcome_id: Option<String>,
    #[schema(value_type = Option<Timestamp>)]
    from_date: Option<String>,
    #[schema(value_type = Option<Timestamp>)]
    to_date: Option<String>,
    #[schema(pattern = "^(1m|5m|15m|1h|4h|1d)$")]
    interval: Option<String>,
}

impl Searchable for PriceFilters {
    const SORT_FIELDS: &'static [&'static str] = &["timestamp"];
}

/// Bucket widths of the `interval` filter, in microseconds.
pub(crate) fn interval_micros(interval: &str) -> Option<Micros> {
    let seconds = match interval {
        "1m" => 60,
        "5m" => 300,
        "15m" => 900,
        "1h" => 3_600,
        "4h" => 14_400,
        "1d" => 86_400,
        _ => return None,
    };
    Some(seconds * 1_000_000)
}

/// Search price history, raw or bucketed by interval (last price, summed volume; empty buckets omitted).
#[utoipa::path(post, path = "/v1/markets/price-history/search", tag = "Public",
    request_body = SearchRequest<PriceFilters>,
    responses((status = 200, description = "One page of price points", body = Page<PricePoint>), E422))]
async fn price_history(
    State(app): State<AppState>,
    ApiJson(request): ApiJson<SearchRequest<PriceFilters>>,
) -> Result<Json<Page<PricePoint>>> {
    let mut v = Validator::default();
    let (page, sort) = request.paging(&mut v);
    let f = request.filters.unwrap_or_default();
    if f.market_id.is_none() && f.outcome_id.is_none() {
        v.push("filters.market_id", "market_id or outcome_id is required");
    }
    let interval = match f.interval.as_deref() {
        None => None,
        Some(i) => {
            let width = interval_micros(i);
            if width.is_none() {
                v.push("filters.interval", "must be one of: 1m, 5m, 15m, 1h, 4h, 1d");
            }
            width
        }
    };
    let from = date_filter(f.from_date.as_deref(), "filters.from_date", &mut v);
    let to = date_filter(f.to_date.as_deref(), "filters.to_date", &mut v);
    v.finish()?;
    let query = PriceQuery { market_id: f.market_id, outcome_id: f.outcome_id, from, to, interval, page, direction: sort.direction };
    let keys = app.store.candle_keys();
    let page = app.store.read(move |c| history::price_history(c, &query, Some(&keys))).await?;
    Ok(Json(page))
}

fn string_map(value: Option<Value>, field: &str, v: &mut Validator) -> Value {
    match value {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(Value::Object(map)) if map.values().all(Value::is_string) => Value::Object(map),
        Some(_) => {
            v.push(field, "must be an object of string entries");
            Value::Object(Map::new())
        }
    }
}

fn text(value: Option<String>, field: &str, required: bool, v: &mut Validator) -> String {
    let value = value.unwrap_or_default();
    if required && value.trim().is_empty() {
        v.push(field, "is required");
    } else if value.chars().count() > 1_000 {
        v.push(field, "must be at most 1000 characters");
    }
    value
}

#[derive(Deserialize, ToSchema)]
struct ResolveInput {
    /// Not blank.
    #[schema(required = true, nullable = false, min_length = 1, max_length = 1000)]
    winning_outcome_id: Option<String>,
    /// Not blank.
    #[schema(required = true, nullable = false, min_length = 1, max_length = 1000)]
    resolver_wallet_id: Option<String>,
    resolution_source: Option<String>,
    /// String values by name.
    #[schema(value_type = Option<crate::domain::json_maps::StringMap>)]
    resolution_data: Option<Value>,
    /// Seconds (0 to 604800, default 0) during which the resolution may still be replaced or
    /// cancelled: claims wait until final_at and the surplus stays in the pool until then.
    #[schema(value_type = Option<u32>, minimum = 0, maximum = 604800)]
    dispute_window_seconds: Option<Value>,
}

/// Resolve a market, at once or after a dispute window.
///
/// Without a window winners become claimable and the surplus returns to the treasury at once.
/// With one, the resolution is final at final_at: until then claims answer 409
/// resolution_pending and the market may be resolved again or cancelled; then the service
/// returns the surplus and emits market.finalized.
#[utoipa::path(post, path = "/v1/providers/markets/{market_id}/resolve", tag = "Provider", security(("providerKey" = [])),
    params(("market_id" = String, Path), IdempotencyKey), request_body = ResolveInput,
    responses((status = 200, description = "The resolution", body = Resolution), E401, E404, E409, E422))]
async fn resolve(
    State(app): State<AppState>,
    ProviderAuth(provider): ProviderAuth,
    ApiPath(market_id): ApiPath<String>,
    headers: HeaderMap,
    body: HashedJson<ResolveInput>,
) -> Result<Response> {
    let input = body.value;
    let mut v = Validator::default();
    let winning_outcome_id = text(input.winning_outcome_id, "winning_outcome_id", true, &mut v);
    let resolver_wallet_id = text(input.resolver_wallet_id, "resolver_wallet_id", true, &mut v);
    let resolution_source = input.resolution_source.filter(|s| !s.is_empty());
    let resolution_data = string_map(input.resolution_data, "resolution_data", &mut v);
    let dispute_window_seconds = match input.dispute_window_seconds {
        None | Some(Value::Null) => 0,
        // JSON Schema's integer: any number without a fraction (60, 60.0, 6e1).
        Some(value) => match value
            .as_u64()
            .or_else(|| value.as_f64().filter(|w| w.fract() == 0.0 && *w >= 0.0).map(|w| w as u64))
            .filter(|&w| w <= u64::from(MAX_DISPUTE_WINDOW_SECONDS))
        {
            Some(w) => w as u32,
            None => {
                v.push("dispute_window_seconds", "must be an integer from 0 to 604800");
                0
            }
        },
    };
    v.finish()?;
    let request = ResolveRequest {
        dispute_window_seconds,
        market_id: MarketId(market_id),
        winning_outcome_id: OutcomeId(winning_outcome_id),
        resolver_wallet_id,
        resolution_source,
        resolution_data,
    };
    let principal = format!("provider:{}", provider.id);
    idempotent::run(&app, &headers, principal, body.fingerprint, None, idempotent::no_check, move |c, ()| {
        Ok((StatusCode::OK, settlement::resolve(c, &provider.id, &request, now_micros())?))
    })
    .await
}

#[derive(Deserialize, ToSchema)]
struct CancelInput {
    /// Not blank.
    #[schema(required = true, nullable = false, min_length = 1, max_length = 1000)]
    canceller_wallet_id: Option<String>,
    #[schema(max_length = 1000)]
    cancellation_source: Option<String>,
    /// Not blank.
    #[schema(required = true, nullable = false, min_length = 1, max_length = 1000)]
    reason: Option<String>,
    /// String values by name.
    #[schema(value_type = Option<crate::domain::json_maps::StringMap>)]
    cancellation_data: Option<Value>,
}

/// Cancel: open positions are refunded their cost basis (pro rata if the pool is short).
#[utoipa::path(post, path = "/v1/providers/markets/{market_id}/cancel", tag = "Provider", security(("providerKey" = [])),
    params(("market_id" = String, Path), IdempotencyKey), request_body = CancelInput,
    responses((status = 200, description = "The cancellation", body = Cancellation), E401, E404, E409, E422))]
async fn cancel(
    State(app): State<AppState>,
    ProviderAuth(provider): ProviderAuth,
    ApiPath(market_id): ApiPath<String>,
    headers: HeaderMap,
    body: HashedJson<CancelInput>,
) -> Result<Response> {
    let input = body.value;
    let mut v = Validator::default();
    let canceller_wallet_id = text(input.canceller_wallet_id, "canceller_wallet_id", true, &mut v);
    let cancellation_source = text(input.cancellation_source, "cancellation_source", false, &mut v);
    let reason = text(input.reason, "reason", true, &mut v);
    let cancellation_data = string_map(input.cancellation_data, "cancellation_data", &mut v);
    v.finish()?;
    let request = CancelRequest { market_id: MarketId(market_id), canceller_wallet_id, cancellation_source, reason, cancellation_data };
    let principal = format!("provider:{}", provider.id);
    idempotent::run(&app, &headers, principal, body.fingerprint, None, idempotent::no_check, move |c, ()| {
        Ok((StatusCode::OK, settlement::cancel(c, &provider.id, &request, now_micros())?))
    })
    .await
}
