//! Price points and candles as trades write them: one point per outcome per trade, folded
//! into a candle per width.

use crate::domain::candle::{bucket_start, Candle, CANDLE_WIDTHS};
use crate::domain::time::Micros;
use crate::error::{Error, Result};
use crate::store::sql::{value_rows, Conn, Dialect, Param};

/// One outcome's new price point, as a trade writes it.
pub struct NewPricePoint<'a> {
    pub outcome_id: &'a str,
    pub price: u128,
    pub volume: u128,
    /// The outcome's running volume total before this point.
    pub total_before: u128,
}

/// Writes a trade's price points and folds them into the candles, in the trade's transaction.
pub fn record_prices(c: &mut dyn Conn, market_id: &str, points: &[NewPricePoint<'_>], at: Micros) -> Result<()> {
    let candles = insert_price_points(c, market_id, points, at)?;
    upsert_candles(c, market_id, &candles)
}

/// Inserts a trade's price points; returns the candle rows they make, to upsert.
pub(crate) fn insert_price_points(c: &mut dyn Conn, market_id: &str, points: &[NewPricePoint<'_>], at: Micros) -> Result<Vec<Candle>> {
    let totals_after = points
        .iter()
        .map(|p| p.total_before.checked_add(p.volume).ok_or_else(|| Error::internal("volume total overflow")))
        .collect::<Result<Vec<_>>>()?;
    let mut params: Vec<Param<'_>> = Vec::with_capacity(points.len() * 6);
    for (p, after) in points.iter().zip(&totals_after) {
        params.extend([
            Param::Text(market_id),
            Param::Text(p.outcome_id),
            Param::Money(p.price),
            Param::Money(p.volume),
            Param::Money(*after),
            Param::Int(at),
        ]);
    }
    let sql =
        format!("INSERT INTO price_points (market_id, outcome_id, price, volume, cum_volume, at) VALUES {}", value_rows(points.len(), 6));
    c.exec_later(&sql, &params)?;
    let mut candles = Vec::with_capacity(points.len() * CANDLE_WIDTHS.len());
    for width in CANDLE_WIDTHS {
        for (p, after) in points.iter().zip(&totals_after) {
            candles.push(Candle {
                width,
                start: bucket_start(at, width),
                outcome_id: p.outcome_id.to_string(),
                price: p.price,
                cum_after: *after,
                cum_before: p.total_before,
                points: 1,
                high: p.price,
                low: p.price,
                trades: i64::from(p.volume > 0),
            });
        }
    }
    Ok(candles)
}

/// Points of one market arrive in time order (trades lock the market and never move its
/// clock backwards), so the newest rows are the candles' last.
pub(crate) fn upsert_candles(c: &mut dyn Conn, market_id: &str, candles: &[Candle]) -> Result<()> {
    upsert_candles_of(c, &[(market_id, candles)])
}

/// [`upsert_candles`] for several markets in one statement (no two rows of one candle).
pub(crate) fn upsert_candles_of(c: &mut dyn Conn, markets: &[(&str, &[Candle])]) -> Result<()> {
    let count: usize = markets.iter().map(|(_, candles)| candles.len()).sum();
    if count == 0 {
        return Ok(());
    }
    let mut params: Vec<Param<'_>> = Vec::with_capacity(count * 11);
    for (market_id, candle) in markets.iter().flat_map(|(m, candles)| candles.iter().map(move |candle| (*m, candle))) {
        params.extend([
            Param::Text(market_id),
            Param::Int(candle.width),
            Param::Int(candle.start),
            Param::Text(&candle.outcome_id),
            Param::Money(candle.price),
            Param::Money(candle.cum_before),
            Param::Money(candle.cum_after),
            Param::Int(candle.points),
            Param::Money(candle.high),
            Param::Money(candle.low),
            Param::Int(candle.trades),
        ]);
    }
    let (high, low) = match c.dialect() {
        Dialect::Postgres => {
            ("GREATEST(price_candles.high, excluded.high)".to_string(), "LEAST(price_candles.low, excluded.low)".to_string())
        }
        // SQLite keeps prices as TEXT: the longer digit string is the larger number.
        Dialect::Sqlite => (text_extreme("high", ">"), text_extreme("low", "<")),
    };
    let sql = format!(
        "INSERT INTO price_candles (market_id, width, start, outcome_id, price, cum_before, cum_after, points, high, low, trades) VALUES {} \
         ON CONFLICT (market_id, width, start, outcome_id) DO UPDATE \
         SET price = excluded.price, cum_after = excluded.cum_after, points = price_candles.points + excluded.points, \
         high = {high}, low = {low}, trades = price_candles.trades + excluded.trades",
        value_rows(count, 11)
    );
    c.exec_later(&sql, &params)?;
    Ok(())
}

/// The larger (`op` ">") or smaller ("<") of a candle's stored and new `column`, both
/// canonical digit strings.
fn text_extreme(column: &str, op: &str) -> String {
    format!(
        "CASE WHEN length(excluded.{column}) {op} length(price_candles.{column}) OR \
         (length(excluded.{column}) = length(price_candles.{column}) AND excluded.{column} {op} price_candles.{column}) \
         THEN excluded.{column} ELSE price_candles.{column} END"
    )
}

/// Writes every outcome's price at `at` as a mark: at a market's creation and after an
/// outcome is added, the changes of price that are not trades.
pub(crate) fn record_marks(c: &mut dyn Conn, market_id: &str, prices: &[(&str, u128)], at: Micros) -> Result<()> {
    if prices.is_empty() {
        return Ok(());
    }
    let mut params: Vec<Param<'_>> = Vec::with_capacity(prices.len() * 4);
    for (outcome_id, price) in prices {
        params.extend([Param::Text(market_id), Param::Text(outcome_id), Param::Money(*price), Param::Int(at)]);
    }
    let sql = format!("INSERT INTO price_marks (market_id, outcome_id, price, at) VALUES {}", value_rows(prices.len(), 4));
    c.exec(&sql, &params)?;
    Ok(())
}

/// Rebuilds every candle from the raw points (after a bulk load of price points).
pub fn rebuild_price_candles(c: &mut dyn Conn) -> Result<()> {
    if c.dialect() == Dialect::Postgres {
        // A rebuild reads every point; the per-statement limit is meant for requests.
        c.exec("SET LOCAL statement_timeout = 0", &[])?;
    }
    c.exec("DELETE FROM price_candles", &[])?;
    c.exec(include_str!("../../../migrations/price_candles_backfill.sql"), &[])?;
    Ok(())
}
