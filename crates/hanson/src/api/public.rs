//! Public routes: no authentication.

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::Json;
use bytes::Bytes;
use serde::Deserialize;
use serde_json::Value as Json_;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::extract::{ApiJson, ApiPath};
use super::openapi::{E404, E409, E422};
use super::state::AppState;
use super::views::{self, BetPreview, List, MarketDetail, PreviewToken, SellPreview};
use crate::domain::market::Market;
use crate::domain::market_input::{wei_field, MarketFilters};
use crate::domain::money::{InputAmount, Wei};
use crate::domain::page::{Page, SearchRequest};
use crate::domain::tenant::Token;
use crate::domain::time::now_micros;
use crate::domain::trade::bounds::{bet_bounds, sell_bounds, PriceBound, SellBounds};
use crate::domain::trade::quote::{quote_bet, quote_bounded_sell};
use crate::domain::trade::SellBy;
use crate::error::{Error, Result, Validator};
use crate::store::markets;
use crate::store::markets::search::{self, SearchHit, SearchPage};
use crate::store::tenants;

pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(search_markets))
        .routes(routes!(bet_preview))
        .routes(routes!(sell_preview))
        .routes(routes!(market_detail))
        .routes(routes!(list_tokens))
}

/// Search markets.
#[utoipa::path(post, path = "/v1/markets/search", tag = "Public", request_body = SearchRequest<MarketFilters>,
    responses((status = 200, description = "One page of markets", body = Page<views::MarketSummary>), E422))]
async fn search_markets(State(app): State<AppState>, ApiJson(request): ApiJson<SearchRequest<MarketFilters>>) -> Result<Response> {
    let query = request.validate_markets()?;
    let now = now_micros();
    let SearchPage { page, data_version } =
        search::search(&app.store, app.search_cache.clone(), query, now, app.rendered_markets.clone()).await?;
    // The body is assembled from each market's JSON, serialized once per revision and status.
    let items = page
        .data
        .into_iter()
        .map(|hit| match hit {
            SearchHit::Cached(json) => Ok(json),
            SearchHit::Loaded(m) => app.rendered_markets.render(&m, now, data_version),
        })
        .collect::<Result<Vec<Bytes>>>()?;
    let mut body = Vec::with_capacity(128 + items.iter().map(|json| json.len() + 1).sum::<usize>());
    body.extend_from_slice(b"{\"data\":[");
    for (i, json) in items.iter().enumerate() {
        if i > 0 {
            body.push(b',');
        }
        body.extend_from_slice(json);
    }
    body.extend_from_slice(b"],\"pagination\":");
    serde_json::to_writer(&mut body, &page.pagination).map_err(Error::internal)?;
    body.push(b'}');
    Ok(([(header::CONTENT_TYPE, "application/json")], body).into_response())
}

/// Get market details.
#[utoipa::path(get, path = "/v1/markets/{market_id}", tag = "Public", params(("market_id" = String, Path)),
    responses((status = 200, description = "The market", body = MarketDetail), E404))]
async fn market_detail(State(app): State<AppState>, ApiPath(market_id): ApiPath<String>) -> Result<Json<MarketDetail>> {
    let market = app.store.read(move |c| markets::market(c, &market_id, false)).await?.ok_or(Error::NotFound)?;
    Ok(Json(views::market_detail(&market, now_micros())?))
}

/// List tokens.
#[utoipa::path(get, path = "/v1/tokens", tag = "Public", responses((status = 200, description = "Every token", body = List<Token>)))]
async fn list_tokens(State(app): State<AppState>) -> Result<Json<List<Token>>> {
    let tokens = app.store.read(tenants::tokens).await?;
    Ok(Json(List { data: tokens }))
}

/// Loads the market an outcome belongs to; an unknown outcome is 422 `unknown_outcome`.
pub(crate) async fn market_of_outcome(app: &AppState, outcome_id: String) -> Result<(Market, usize)> {
    app.store
        .read(move |c| markets::market_of_outcome(c, &outcome_id))
        .await?
        .ok_or_else(|| Error::rule_on("unknown_outcome", "outcome_id", "no such outcome"))
}

#[derive(Deserialize, ToSchema)]
struct BetPreviewInput {
    #[schema(required = true, nullable = false, min_length = 1)]
    outcome_id: Option<String>,
    /// Gross amount, fee included.
    #[schema(value_type = InputAmount, required = true)]
    amount: Option<Json_>,
    /// As on a bet: the fewest shares accepted (409 price_moved if fewer).
    #[schema(value_type = Option<InputAmount>)]
    min_shares: Option<Json_>,
    /// As on a bet: the highest price after the bet; the preview shows the part that fills.
    #[schema(value_type = Option<PriceBound>)]
    max_price: Option<Json_>,
}

fn required_text(value: Option<String>, field: &str, v: &mut Validator) -> String {
    match value {
        Some(s) if !s.is_empty() => s,
        _ => {
            v.push(field, "is required");
            String::new()
        }
    }
}

/// Preview a bet (same code as a trade; changes nothing).
#[utoipa::path(post, path = "/v1/markets/bet-preview", tag = "Public", request_body = BetPreviewInput,
    responses((status = 200, description = "What the bet would buy now", body = BetPreview), E409, E422))]
async fn bet_preview(State(app): State<AppState>, ApiJson(input): ApiJson<BetPreviewInput>) -> Result<Json<BetPreview>> {
    let mut v = Validator::default();
    let outcome_id = required_text(input.outcome_id, "outcome_id", &mut v);
    let amount = wei_field(input.amount.as_ref(), "amount", &mut v)?;
    if input.amount.is_none() {
        v.push("amount", "is required");
    }
    let bounds = bet_bounds(input.min_shares.as_ref(), input.max_price.as_ref(), &mut v)?;
    v.finish()?;
    let amount = amount.unwrap_or(0);
    let (market, index) = market_of_outcome(&app, outcome_id.clone()).await?;
    let quote = quote_bet(&market, index, amount, &bounds, now_micros())?;
    Ok(Json(BetPreview {
        outcome_id,
        amount: Wei(quote.amount),
        unfilled_amount: Wei(quote.unfilled),
        estimated_shares: Wei(quote.shares),
        new_outcome_price: quote.new_prices[index].to_string(),
        current_price: quote.current_price.to_string(),
        average_price: quote.average_price,
        price_impact: quote.price_impact,
        estimated_fee: Wei(quote.fee.total),
        net_amount: Wei(quote.net_amount),
        token: PreviewToken::of(&market),
        market_id: market.id,
    }))
}

/// Exactly one of `shares_amount` and `target_proceeds`.
#[derive(Deserialize, Clone, ToSchema)]
pub(crate) struct SellInput {
    #[schema(required = true, nullable = false, min_length = 1)]
    pub(crate) outcome_id: Option<String>,
    /// Shares to sell.
    #[schema(value_type = Option<InputAmount>)]
    pub(crate) shares_amount: Option<Json_>,
    /// Net proceeds to reach, after fees: the fewest shares that reach it are sold.
    #[schema(value_type = Option<InputAmount>)]
    pub(crate) target_proceeds: Option<Json_>,
    /// With shares_amount: the least net proceeds accepted (409 price_moved if less; "0" bounds nothing).
    #[schema(value_type = Option<InputAmount>)]
    pub(crate) min_proceeds: Option<Json_>,
    /// With shares_amount, a limit: the outcome's price after the sale may not fall below it.
    /// The sale sells the most of shares_amount that keeps within it (unfilled_shares says what is left).
    #[schema(value_type = Option<PriceBound>)]
    pub(crate) min_price: Option<Json_>,
    /// With target_proceeds: the most shares the sale may take (409 price_moved if it needs more).
    #[schema(value_type = Option<InputAmount>)]
    pub(crate) max_shares: Option<Json_>,
}

impl SellInput {
    /// Exactly one of `shares_amount` and `target_proceeds`.
    pub(crate) fn sell_by(&self, v: &mut Validator) -> Result<Option<SellBy>> {
        let shares = wei_field(self.shares_amount.as_ref(), "shares_amount", v)?;
        let target = wei_field(self.target_proceeds.as_ref(), "target_proceeds", v)?;
        let present = |x: &Option<Json_>| x.as_ref().is_some_and(|x| !x.is_null());
        match (present(&self.shares_amount), present(&self.target_proceeds)) {
            (true, true) => {
                v.push("shares_amount", "give either shares_amount or target_proceeds, not both");
                Ok(None)
            }
            (false, false) => {
                v.push("shares_amount", "give either shares_amount or target_proceeds");
                Ok(None)
            }
            _ => Ok(shares.map(SellBy::Shares).or(target.map(SellBy::TargetProceeds))),
        }
    }

    /// The bounds named, each checked against the way of selling (`by`, if valid).
    pub(crate) fn bounds(&self, by: Option<SellBy>, v: &mut Validator) -> Result<SellBounds> {
        sell_bounds(by, self.min_proceeds.as_ref(), self.min_price.as_ref(), self.max_shares.as_ref(), v)
    }
}

/// Preview a sale by shares_amount or by target_proceeds (exactly one).
#[utoipa::path(post, path = "/v1/markets/sell-preview", tag = "Public", request_body = SellInput,
    responses((status = 200, description = "What the sale would pay now", body = SellPreview), E409, E422))]
async fn sell_preview(State(app): State<AppState>, ApiJson(input): ApiJson<SellInput>) -> Result<Json<SellPreview>> {
    let mut v = Validator::default();
    let by = input.sell_by(&mut v)?;
    let bounds = input.bounds(by, &mut v)?;
    let outcome_id = required_text(input.outcome_id, "outcome_id", &mut v);
    v.finish()?;
    let by = by.ok_or_else(|| Error::internal("validated sell form missing"))?;
    let (market, index) = market_of_outcome(&app, outcome_id.clone()).await?;
    let outstanding = market.outcomes[index].total_shares;
    let quote = quote_bounded_sell(&market, index, by, &bounds, outstanding, now_micros())?;
    Ok(Json(SellPreview {
        outcome_id,
        estimated_shares: Wei(quote.shares),
        unfilled_shares: Wei(quote.unfilled),
        estimated_proceeds: Wei(quote.proceeds),
        estimated_fee: Wei(quote.fee.total),
        estimated_net_proceeds: Wei(quote.net_proceeds),
        new_outcome_price: quote.new_prices[index].to_string(),
        current_price: quote.current_price.to_string(),
        average_price: quote.average_price,
        price_impact: quote.price_impact,
        token: PreviewToken::of(&market),
        market_id: market.id,
    }))
}
