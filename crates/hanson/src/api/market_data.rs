//! Market data for charts and crowds (public): candles.

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
use crate::domain::money::Wei;
use crate::domain::time::{now_micros, Timestamp};
use crate::error::{Error, Result, Validator};
use crate::store::history::candles::{self, CandleQuery};

/// The most buckets one candles request covers.
const MAX_BUCKETS: i64 = 1_000;
/// Buckets before `end` when `start` is not given.
const DEFAULT_BUCKETS: i64 = 100;

pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(market_candles))
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct CandlesQuery {
    /// Bucket width (required).
    #[param(pattern = "^(1m|5m|15m|1h|4h|1d)$")]
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
