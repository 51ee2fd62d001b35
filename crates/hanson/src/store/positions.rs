//! Position rows: reading, locking and saving what a wallet holds of an outcome.

use super::sql::{query_as, query_opt_as, value_rows, Conn, FromRow, Param, Row};
use crate::domain::position::{Position, PositionStatus};
use crate::error::{Error, Result};

fn position_status(r: &Row, i: usize) -> Result<PositionStatus> {
    let text = r.text(i)?;
    PositionStatus::parse(&text).ok_or_else(|| Error::internal(format!("unknown position status {text:?}")))
}

pub(crate) const POSITION_COLUMNS: &str =
    "id, market_id, outcome_id, wallet_id, shares, total_invested, status, claimed_amount, created_at, updated_at";

impl FromRow for Position {
    fn from_row(r: &Row) -> Result<Position> {
        Ok(Position {
            id: r.text(0)?.into(),
            market_id: r.text(1)?.into(),
            outcome_id: r.text(2)?.into(),
            wallet_id: r.text(3)?.into(),
            shares: r.money(4)?,
            total_invested: r.money(5)?,
            status: position_status(r, 6)?,
            claimed_amount: r.opt_money(7)?,
            created_at: r.int(8)?,
            updated_at: r.int(9)?,
        })
    }
}

/// What a wallet holds of an outcome, locked.
pub(crate) fn position_of(c: &mut dyn Conn, wallet_id: &str, outcome_id: &str) -> Result<Option<Position>> {
    let sql = format!("SELECT {POSITION_COLUMNS} FROM positions WHERE wallet_id = $1 AND outcome_id = $2{}", c.lock_clause());
    query_opt_as(c, &sql, &[Param::Text(wallet_id), Param::Text(outcome_id)])
}

const INSERT_POSITIONS: &str =
    "INSERT INTO positions (id, market_id, outcome_id, wallet_id, shares, total_invested, status, created_at, updated_at) VALUES";

/// A position's values for the columns of [`INSERT_POSITIONS`].
fn new_row(p: &Position) -> [Param<'_>; 9] {
    [
        Param::Text(&p.id),
        Param::Text(&p.market_id),
        Param::Text(&p.outcome_id),
        Param::Text(&p.wallet_id),
        Param::Money(p.shares),
        Param::Money(p.total_invested),
        Param::Text(p.status.as_str()),
        Param::Int(p.created_at),
        Param::Int(p.updated_at),
    ]
}

/// Stores a position: inserted when `stored_status` is None (it was never stored), else
/// updated from that status.
pub(crate) fn save_position(c: &mut dyn Conn, p: &Position, stored_status: Option<PositionStatus>) -> Result<()> {
    match stored_status {
        None => c.exec(&format!("{INSERT_POSITIONS} {}", value_rows(1, 9)), &new_row(p))?,
        // Leaving an unchanged status out keeps SQLite from rewriting the position's entry in
        // the (market_id, status) index on every trade.
        Some(status) if status == p.status => c.exec(
            "UPDATE positions SET shares = $1, total_invested = $2, updated_at = $3 WHERE id = $4",
            &[Param::Money(p.shares), Param::Money(p.total_invested), Param::Int(p.updated_at), Param::Text(&p.id)],
        )?,
        Some(_) => c.exec(
            "UPDATE positions SET shares = $1, total_invested = $2, status = $3, updated_at = $4 WHERE id = $5",
            &[
                Param::Money(p.shares),
                Param::Money(p.total_invested),
                Param::Text(p.status.as_str()),
                Param::Int(p.updated_at),
                Param::Text(&p.id),
            ],
        )?,
    };
    Ok(())
}

/// Stores positions a trade batch kept (see `batch`), new or changed, in one statement.
pub(crate) fn upsert_positions(c: &mut dyn Conn, positions: &[Position]) -> Result<()> {
    if positions.is_empty() {
        return Ok(());
    }
    let params: Vec<Param<'_>> = positions.iter().flat_map(new_row).collect();
    let sql = format!(
        "{INSERT_POSITIONS} {} ON CONFLICT (id) DO UPDATE SET shares = excluded.shares, total_invested = excluded.total_invested, \
         status = excluded.status, updated_at = excluded.updated_at",
        value_rows(positions.len(), 9)
    );
    c.exec_later(&sql, &params)
}

/// The statement reading, locked, the positions a PostgreSQL trade batch does not keep copies
/// of, for the batch to send with its other reads in one round trip; its rows are
/// [`Position`]s. `pairs` (not empty): each (wallet, outcome, market) with the revision of the
/// market at which the batch thread's copy of the position was taken, or -1 where it has
/// none. Only the pairs whose market is now stored at another revision are read: a position
/// changes only with its market's row (a trade, a settlement, a claim), so the others'
/// copies are what is stored.
pub fn changed_positions_read<'a>(pairs: &'a [(&'a str, &'a str, &'a str, i64)]) -> (String, Vec<Param<'a>>) {
    let padded = pairs.len().next_power_of_two();
    let last = pairs.last().into_iter().cycle().take(padded - pairs.len());
    let params: Vec<Param<'_>> = pairs
        .iter()
        .chain(last)
        .flat_map(|(wallet, outcome, market, revision)| {
            [Param::Text(wallet), Param::Text(outcome), Param::Text(market), Param::Int(*revision)]
        })
        .collect();
    // A lookup per pair can only be planned as a probe of the pair's index: an IN list was
    // planned as a scan of every position whenever the statistics were older than the table
    // (a large part of a many_markets batch), and two IN lists probed every wallet with
    // every outcome. Padded to a power of two with the last pair, as `id_list` pads, so the
    // statement stays prepared. The rows are locked in the pairs' order, and trade batches,
    // the only statements that lock several positions, run one at a time.
    let sql = format!(
        "SELECT p.* FROM (SELECT DISTINCT column1, column2, column3, column4 FROM (VALUES {}) AS v) AS k \
         JOIN markets m ON m.id = k.column3 AND m.revision <> k.column4 CROSS JOIN LATERAL \
         (SELECT {POSITION_COLUMNS} FROM positions WHERE wallet_id = k.column1 AND outcome_id = k.column2 FOR UPDATE) AS p",
        value_rows(padded, 4)
    );
    (sql, params)
}

/// The market's active positions, oldest first.
pub(crate) fn active_positions(c: &mut dyn Conn, market_id: &str) -> Result<Vec<Position>> {
    let sql = format!("SELECT {POSITION_COLUMNS} FROM positions WHERE market_id = $1 AND status = 'active' ORDER BY created_at, id");
    query_as(c, &sql, &[Param::Text(market_id)])
}

/// A resolved market's won and lost positions (those its resolution settled).
pub(crate) fn resolved_positions(c: &mut dyn Conn, market_id: &str) -> Result<Vec<Position>> {
    let sql =
        format!("SELECT {POSITION_COLUMNS} FROM positions WHERE market_id = $1 AND status IN ('won', 'lost') ORDER BY created_at, id");
    query_as(c, &sql, &[Param::Text(market_id)])
}

/// One position by id, locked for this transaction.
pub(crate) fn locked_position(c: &mut dyn Conn, position_id: &str) -> Result<Option<Position>> {
    let sql = format!("SELECT {POSITION_COLUMNS} FROM positions WHERE id = $1{}", c.lock_clause());
    query_opt_as(c, &sql, &[Param::Text(position_id)])
}
