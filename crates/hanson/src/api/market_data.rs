//! Market data for charts and crowds (public): candles and leaderboards.

use axum::extract::State;
use axum::Json;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::extract::{ApiPath, ApiQuery};
use super::openapi::{E404, E422};
use super::state::AppState;
use super::trading::{date_filter, interval_micros};
use crate::domain::candle::Bar;
use crate::domain::leaderboard::{LeaderboardRow, RankBy};
use crate::domain::money::Wei;
use crate::domain::page::{Page, PageRequest, DEFAULT_PER_PAGE, MAX_PAGE, MAX_PER_PAGE};
use crate::domain::time::{now_micros, Timestamp};
use crate::error::{Error, Result, Validator};
use crate::store::history::candles::{self, CandleQuery};
use crate::store::leaderboard::Scope;
use crate::store::tenants;

/// The most buckets one candles request covers.
const MAX_BUCKETS: i64 = 1_000;
/// Buckets before `end` when `start` is not given.
const DEFAULT_BUCKETS: i64 = 100;

pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(market_candles)).routes(routes!(market_leaderboard)).routes(routes!(provider_leaderboard))
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct CandlesQuery {
    /// Bucket width.
    #[param(required = true, pattern = "^(1m|5m|15m|1h|4h|1d)$")]
    interval: Option<String>,
    /// RFC 3339; default `end` minus 100 intervals.
    #[param(value_type = Option<Timestamp>)]
    start: Option<String>,
    /// RFC 3339; default now.
    #[param(value_type = Option<Timestamp>)]
    end: Option<String>,
    /// Only this outcome's candles.
    outcome_id: Option<String>,
}

/// One bucket of an outcome's prices.
#[derive(Serialize, ToSchema)]
struct Candle {
    /// The bucket's start: a UTC multiple of the interval since the epoch.
    start: Timestamp,
    /// The last price before the bucket (in the bucket where the series starts, its first price).
    open: String,
    /// The highest of `open` and every price in the bucket.
    high: String,
    /// The lowest of `open` and every price in the bucket.
    low: String,
    /// The last price at or before the bucket's end.
    close: String,
    /// The `amount` of the outcome's own trades in the bucket, summed.
    volume: Wei,
    /// How many of the outcome's own trades the bucket holds.
    trades: i64,
}

#[derive(Serialize, ToSchema)]
struct OutcomeCandles {
    outcome_id: String,
    /// Every bucket from the first (the one holding `start`, or the outcome's first price if
    /// later) to the one holding `end` (or now), ascending, none skipped.
    candles: Vec<Candle>,
}

#[derive(Serialize, ToSchema)]
struct Candles {
    market_id: String,
    /// The interval asked for.
    interval: String,
    /// Every outcome of the market in outcome order, or the one named.
    outcomes: Vec<OutcomeCandles>,
}

fn price(raw: u128) -> String {
    lmsr::Price::from_raw(raw).to_string()
}

fn candle(b: Bar) -> Candle {
    Candle {
        start: Timestamp(b.start),
        open: price(b.open),
        high: price(b.high),
        low: price(b.low),
        close: price(b.close),
        volume: Wei(b.volume),
        trades: b.trades,
    }
}

/// Candles: open, high, low, close, volume and trade count per outcome per bucket, empty buckets filled.
#[utoipa::path(get, path = "/v1/markets/{market_id}/candles", tag = "Public",
    params(("market_id" = String, Path), CandlesQuery),
    responses((status = 200, description = "Each outcome's candles", body = Candles), E404, E422))]
async fn market_candles(
    State(app): State<AppState>,
    ApiPath(market_id): ApiPath<String>,
    ApiQuery(query): ApiQuery<CandlesQuery>,
) -> Result<Json<Candles>> {
    let mut v = Validator::default();
    let interval_name = query.interval.unwrap_or_default();
    let interval = interval_micros(&interval_name);
    if interval.is_none() {
        v.push("interval", "is required, one of: 1m, 5m, 15m, 1h, 4h, 1d");
    }
    let start = date_filter(query.start.as_deref(), "start", &mut v);
    let end = date_filter(query.end.as_deref(), "end", &mut v);
    v.finish()?;
    let interval = interval.ok_or_else(|| Error::internal("validated interval missing"))?;
    let now = now_micros();
    let end = end.unwrap_or(now);
    let start = start.unwrap_or_else(|| end.saturating_sub(interval.saturating_mul(DEFAULT_BUCKETS)));
    if start > end {
        return Err(Error::invalid("start", "must not be after end"));
    }
    let buckets = end.div_euclid(interval) - start.div_euclid(interval) + 1;
    if buckets > MAX_BUCKETS {
        return Err(Error::invalid("start", format!("covers {buckets} buckets; at most {MAX_BUCKETS} per request")));
    }
    let q = CandleQuery { market_id: market_id.clone(), outcome_id: query.outcome_id, interval, start, end, now };
    let series = app.store.read(move |c| candles::candles(c, &q)).await?.ok_or(Error::NotFound)?;
    Ok(Json(Candles {
        market_id,
        interval: interval_name,
        outcomes: series
            .into_iter()
            .map(|(outcome_id, bars)| OutcomeCandles { outcome_id, candles: bars.into_iter().map(candle).collect() })
            .collect(),
    }))
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct BoardQuery {
    /// What to rank by (default profit).
    #[param(pattern = "^(profit|volume)$")]
    by: Option<String>,
    #[param(minimum = 1, maximum = 92233720368547758i64)]
    page: Option<i64>,
    #[param(minimum = 1, maximum = 100)]
    per_page: Option<i64>,
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct ProviderBoardQuery {
    /// The token whose markets count.
    #[param(required = true, min_length = 1)]
    token_id: Option<String>,
    /// What to rank by (default profit).
    #[param(pattern = "^(profit|volume)$")]
    by: Option<String>,
    #[param(minimum = 1, maximum = 92233720368547758i64)]
    page: Option<i64>,
    #[param(minimum = 1, maximum = 100)]
    per_page: Option<i64>,
}

impl BoardQuery {
    fn parse(&self, v: &mut Validator) -> (RankBy, PageRequest) {
        let by = match self.by.as_deref() {
            None => RankBy::Profit,
            Some(text) => RankBy::parse(text).unwrap_or_else(|| {
                v.push("by", "must be profit or volume");
                RankBy::Profit
            }),
        };
        let page = self.page.unwrap_or(1);
        let per_page = self.per_page.unwrap_or(DEFAULT_PER_PAGE);
        v.check((1..=MAX_PAGE).contains(&page), "page", "must be between 1 and 92233720368547758");
        v.check((1..=MAX_PER_PAGE).contains(&per_page), "per_page", "must be between 1 and 100");
        (by, PageRequest { page: page.clamp(1, MAX_PAGE), per_page: per_page.clamp(1, MAX_PER_PAGE) })
    }
}

fn page_of(board: &[LeaderboardRow], page: PageRequest) -> Page<LeaderboardRow> {
    let start = usize::try_from((page.page - 1).saturating_mul(page.per_page)).unwrap_or(usize::MAX);
    let data = board.iter().skip(start).take(page.per_page as usize).cloned().collect();
    Page::new(data, page, board.len() as i64)
}

/// A market's leaderboard by profit or volume (may lag the trades by up to 5 s).
#[utoipa::path(get, path = "/v1/markets/{market_id}/leaderboard", tag = "Public",
    params(("market_id" = String, Path), BoardQuery),
    responses((status = 200, description = "One page of the board, best first", body = Page<LeaderboardRow>), E404, E422))]
async fn market_leaderboard(
    State(app): State<AppState>,
    ApiPath(market_id): ApiPath<String>,
    ApiQuery(query): ApiQuery<BoardQuery>,
) -> Result<Json<Page<LeaderboardRow>>> {
    let mut v = Validator::default();
    let (by, page) = query.parse(&mut v);
    v.finish()?;
    let key = format!("market:{market_id}");
    let board = app.leaderboards.board(&app.store, key, Scope::Market(market_id), by).await?;
    Ok(Json(page_of(&board, page)))
}

/// A provider's leaderboard over its markets in one token, by profit or volume (may lag up to 5 s).
#[utoipa::path(get, path = "/v1/providers/{provider_id}/leaderboard", tag = "Public",
    params(("provider_id" = String, Path), ProviderBoardQuery),
    responses((status = 200, description = "One page of the board, best first", body = Page<LeaderboardRow>), E404, E422))]
async fn provider_leaderboard(
    State(app): State<AppState>,
    ApiPath(provider_id): ApiPath<String>,
    ApiQuery(query): ApiQuery<ProviderBoardQuery>,
) -> Result<Json<Page<LeaderboardRow>>> {
    let mut v = Validator::default();
    let (by, page) = BoardQuery { by: query.by, page: query.page, per_page: query.per_page }.parse(&mut v);
    let token_id = query.token_id.filter(|t| !t.is_empty());
    if token_id.is_none() {
        v.push("token_id", "is required");
    }
    v.finish()?;
    let token_id = token_id.unwrap_or_default();
    let known = {
        let id = provider_id.clone();
        app.store.read(move |c| tenants::provider(c, &id)).await?.is_some()
    };
    if !known {
        return Err(Error::NotFound);
    }
    let key = format!("provider:{provider_id}:{token_id}");
    let board = app.leaderboards.board(&app.store, key, Scope::Provider { provider_id, token_id }, by).await?;
    Ok(Json(page_of(&board, page)))
}
