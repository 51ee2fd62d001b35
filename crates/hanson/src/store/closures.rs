//! `market.closed`: announced once for each market whose closing time has passed.

use crate::domain::event::Event;
use crate::domain::ids::MarketId;
use crate::domain::time::Micros;
use crate::error::Result;
use crate::store::sql::{Conn, Param};
use crate::store::tx::Tx;

/// Markets announced per write: a crowd of markets closing at once is announced over several
/// short writes instead of one long one that would hold the writer.
pub(crate) const CLOSURES_PER_WRITE: usize = 500;

/// Emits `market.closed` for open markets whose closing time has passed and that were not
/// announced, the earliest first, at most [`CLOSURES_PER_WRITE`]; the rows' locks make one
/// node do it once. Returns how many.
pub(crate) fn announce_closures(c: &mut Tx<'_>, now: Micros) -> Result<usize> {
    let closed = c.query(
        &format!(
            "UPDATE markets SET close_announced = 1 WHERE id IN (SELECT id FROM markets \
             WHERE close_announced = 0 AND ends_at <= $1 AND status = 'active' ORDER BY ends_at LIMIT {CLOSURES_PER_WRITE}) \
             AND close_announced = 0 RETURNING id, ends_at"
        ),
        &[Param::Int(now)],
    )?;
    let count = closed.len();
    for row in closed {
        c.emit(Event::MarketClosed { market_id: MarketId(row.text(0)?), closes_at: row.int(1)? });
    }
    Ok(count)
}

/// Whether some market is due a `market.closed` (a cheap read before a write).
pub(crate) fn closures_due(c: &mut dyn Conn, now: Micros) -> Result<bool> {
    let row = c.query_opt(
        "SELECT 1 FROM markets WHERE close_announced = 0 AND status = 'active' AND ends_at <= $1 ORDER BY ends_at LIMIT 1",
        &[Param::Int(now)],
    )?;
    Ok(row.is_some())
}
