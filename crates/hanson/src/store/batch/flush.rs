//! Writing the batch's copies back: every changed row once, a statement per table where
//! that is cheaper.

use super::{BatchRows, ChangedMarket};
use crate::domain::market::{Market, Outcome};
use crate::domain::time::now_micros;
use crate::error::Result;
use crate::store::history::points;
use crate::store::sql::{Conn, Dialect};
use crate::store::{accounts, event_log, markets, positions};

/// Writes every row the batch changed in memory and forgets them; the next read loads them
/// again. Called before COMMIT and, on SQLite, before a write that is not a trade.
pub(crate) fn flush(c: &mut dyn Conn, rows: &mut BatchRows) -> Result<()> {
    let events = rows.events.take();
    let changes = rows.take();
    positions::upsert_positions(c, &changes.positions)?;
    match c.dialect() {
        // One statement per table: each statement of a PostgreSQL batch costs a parse and a
        // plan. SQLite's cached statements cost neither, and its planner may scan a whole
        // table to update from a list of values.
        Dialect::Postgres => {
            accounts::set_balances(c, &changes.balances)?;
            let outcomes: Vec<&Outcome> = changes.markets.iter().flat_map(ChangedMarket::traded_outcomes).collect();
            let totals: Vec<(&Market, i64)> = changes.markets.iter().map(|m| (&m.record, m.trades)).collect();
            markets::write_totals_of(c, &outcomes, &totals)?;
        }
        Dialect::Sqlite => {
            for (account_id, balance) in &changes.balances {
                accounts::set_balance(c, account_id, *balance)?;
            }
            for m in &changes.markets {
                let outcomes: Vec<&Outcome> = m.traded_outcomes().collect();
                markets::write_totals(c, &m.record, &outcomes, m.trades)?;
            }
        }
    }
    let candles: Vec<(&str, &[crate::domain::candle::Candle])> =
        changes.markets.iter().map(|m| (m.record.id.as_str(), m.candles.as_slice())).collect();
    points::upsert_candles_of(c, &candles)?;
    if let Some((node, events)) = events {
        event_log::write(c, &events, &node, now_micros())?;
    }
    // As stored: `write_totals` bumped each revision.
    rows.commit_markets(changes.markets.into_iter().map(|m| Market { revision: m.record.revision + 1, ..m.record }));
    Ok(())
}
