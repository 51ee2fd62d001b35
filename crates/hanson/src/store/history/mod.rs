//! Read models and the history a trade leaves: a wallet's holdings, the public trade
//! records, price points and their candles, and price history pages over them.

mod buckets;
pub mod candle_keys;
pub(crate) mod candles;
pub(crate) mod holdings;
pub mod points;
mod raw;
pub(crate) mod trades;

use crate::domain::candle::{bucket_start, PricePoint};
use crate::domain::money::Wei;
use crate::domain::page::{Direction, Page, PageRequest};
use crate::domain::time::{Micros, Timestamp};
use crate::error::{Error, Result};
use crate::store::sql::{Conn, Param};
use candle_keys::CandleKeys;

/// A price point's running volume total (written with every point since migration 5).
fn running_total(r: &super::sql::Row, i: usize) -> Result<u128> {
    r.opt_money(i)?.ok_or_else(|| Error::internal("price point without a running volume total"))
}

fn price_point(market_id: &str, outcome_id: &str, price: u128, volume: u128, at: Micros) -> PricePoint {
    PricePoint {
        market_id: market_id.to_string(),
        outcome_id: outcome_id.to_string(),
        price: lmsr::Price::from_raw(price).to_string(),
        volume: Wei(volume),
        timestamp: Timestamp(at),
    }
}

#[derive(Debug, Clone)]
pub struct PriceQuery {
    pub market_id: Option<String>,
    pub outcome_id: Option<String>,
    pub from: Option<Micros>,
    pub to: Option<Micros>,
    /// Bucket width in microseconds (a multiple of a minute); None for raw points.
    pub interval: Option<Micros>,
    pub page: PageRequest,
    pub direction: Direction,
}

/// The market a history query covers, and the outcome when the query names one.
struct Scope {
    market_id: String,
    outcome_id: Option<String>,
}

fn scope(c: &mut dyn Conn, q: &PriceQuery, keys: Option<&CandleKeys>) -> Result<Option<Scope>> {
    if let Some(outcome) = &q.outcome_id {
        let market_id = match keys.and_then(|k| k.market_of(outcome)) {
            Some(market_id) => market_id,
            None => {
                let Some(row) = c.query_opt("SELECT market_id FROM outcomes WHERE id = $1", &[Param::Text(outcome)])? else {
                    return Ok(None);
                };
                let market_id = row.text(0)?;
                if let Some(k) = keys {
                    k.keep_market_of(outcome, &market_id);
                }
                market_id
            }
        };
        if q.market_id.as_ref().is_some_and(|m| *m != market_id) {
            return Ok(None);
        }
        return Ok(Some(Scope { market_id, outcome_id: Some(outcome.clone()) }));
    }
    // A market that does not exist has no candles and no points: its pages are empty.
    Ok(q.market_id.clone().map(|market_id| Scope { market_id, outcome_id: None }))
}

/// A time filter cut at `width` boundaries: whole buckets in `[whole.0, whole.1)` (read from
/// candles) and up to two partial buckets at the ends (inclusive ranges, read from raw points).
struct Split {
    partial_lo: Option<(Micros, Micros)>,
    whole: Option<(Micros, Micros)>,
    partial_hi: Option<(Micros, Micros)>,
}

fn split(from: Option<Micros>, to: Option<Micros>, width: Micros) -> Split {
    let lo = from.unwrap_or(Micros::MIN);
    let hi = to.unwrap_or(Micros::MAX);
    if lo > hi {
        return Split { partial_lo: None, whole: None, partial_hi: None };
    }
    let whole_from = match from {
        Some(f) if f.rem_euclid(width) != 0 => bucket_start(f, width).saturating_add(width),
        _ => lo,
    };
    let whole_to = match to.and_then(|t| t.checked_add(1)) {
        Some(end) => bucket_start(end, width),
        None => Micros::MAX,
    };
    if whole_from > whole_to {
        // Both ends fall in one bucket.
        return Split { partial_lo: Some((lo, hi)), whole: None, partial_hi: None };
    }
    Split {
        partial_lo: (lo < whole_from).then(|| (lo, whole_from - 1)),
        whole: (whole_from < whole_to).then_some((whole_from, whole_to)),
        partial_hi: (to.is_some() && whole_to <= hi).then_some((whole_to, hi)),
    }
}

/// Where clause over the candles of a scope of `width` in `range`, its parameters numbered
/// from `$first`, and those parameters: market, the range's bounds, and the outcome when the
/// scope names one. An open end (`Micros::MIN` or `Micros::MAX`) is left out: it matches
/// every candle, yet PostgreSQL still checked it on every index entry it walked. The width,
/// one of two, is written into the statement: planned without its values (`price_history`), a
/// width parameter was taken to match half the candles, and their count read the whole
/// table.
fn candles_where<'a>(scope: &'a Scope, width: Micros, range: (Micros, Micros), first: usize) -> (String, Vec<Param<'a>>) {
    let mut params = vec![Param::Text(&scope.market_id)];
    let mut terms = vec![format!("market_id = ${first}"), format!("width = {width}")];
    for (bound, op, open) in [(range.0, ">=", Micros::MIN), (range.1, "<", Micros::MAX)] {
        if bound != open {
            params.push(Param::Int(bound));
            terms.push(format!("start {op} ${}", first + params.len() - 1));
        }
    }
    if let Some(outcome) = &scope.outcome_id {
        params.push(Param::Text(outcome));
        terms.push(format!("outcome_id = ${}", first + params.len() - 1));
    }
    (terms.join(" AND "), params)
}

struct Bucket {
    outcome_id: String,
    start: Micros,
    price: u128,
    volume: u128,
}

fn volume_between(before: u128, after: u128) -> Result<u128> {
    after.checked_sub(before).ok_or_else(|| Error::internal("running volume total decreased"))
}

/// Whether pages seek to their offset (by key, or through the candles' point counts) rather
/// than walk to it. Only PostgreSQL does: SQLite walks an index in process, and on the bench's
/// million points its walks were the faster by far (through the candles, SQLite computes the
/// windowed sums for every hour and sorts them).
fn seeks_to_offset(c: &dyn Conn) -> bool {
    c.dialect() == super::sql::Dialect::Postgres
}

/// A page of price history; `keys` are the hourly candle keys kept between pages, if any.
/// Its statements are planned once per connection: each is an index walk whatever its values
/// (`tests/api_postgres/plans.rs`), and PostgreSQL spent a quarter of its time in this mix
/// planning them afresh for each page.
pub fn price_history(c: &mut dyn Conn, q: &PriceQuery, keys: Option<&CandleKeys>) -> Result<Page<PricePoint>> {
    c.plan_once()?;
    let Some(scope) = scope(c, q, keys)? else { return Ok(Page::new(Vec::new(), q.page, 0)) };
    match q.interval {
        Some(width) => buckets::bucketed(c, &scope, q, width, keys),
        None => raw::raw(c, &scope, q, keys),
    }
}
