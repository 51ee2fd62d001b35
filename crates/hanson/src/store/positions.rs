//! Position rows: reading, locking and saving what a wallet holds of an outcome.

use super::sql::{query_as, query_opt_as, value_rows, Conn, Dialect, FromRow, Param, Row};
use crate::domain::position::{Position, PositionStatus};
use crate::error::{Error, Result};

fn position_status(r: &Row, i: usize) -> Result<PositionStatus> {
    let text = r.text(i)?;
    PositionStatus::parse(&text).ok_or_else(|| Error::internal(format!("unknown position status {text:?}")))
}

pub const POSITION_COLUMNS: &str =
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

/// What a wallet holds of an outcome (as a trade batch keeps it, see `hot`).
pub fn position_of(c: &mut dyn Conn, wallet_id: &str, outcome_id: &str) -> Result<Option<Position>> {
    if let Some(kept) = c.hot().and_then(|hot| hot.position(wallet_id, outcome_id).map(|p| p.cloned())) {
        return Ok(kept);
    }
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
pub fn save_position(c: &mut dyn Conn, p: &Position, stored_status: Option<PositionStatus>) -> Result<()> {
    if c.hot().and_then(|hot| hot.set_position(p)).is_some() {
        return Ok(());
    }
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
            &[Param::Money(p.shares), Param::Money(p.total_invested), Param::Text(p.status.as_str()), Param::Int(p.updated_at), Param::Text(&p.id)],
        )?,
    };
    Ok(())
}

/// Stores positions a trade batch kept (see `hot`), new or changed, in one statement.
pub fn upsert_positions(c: &mut dyn Conn, positions: &[Position]) -> Result<()> {
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

/// The statement reading the positions of these (wallet, outcome) pairs that exist, locked
/// (`pairs` not empty), for a trade batch that sends it with its other reads in one round
/// trip; its rows are [`Position`]s.
pub fn positions_of_read<'a>(c: &dyn Conn, pairs: &'a [(&'a str, &'a str)]) -> (String, Vec<Param<'a>>) {
    // Exact (wallet, outcome) pairs: two IN lists made the index probe every wallet with
    // every outcome, 2,000 probes and 6 ms a batch in many_markets. Padded to a power of two
    // with the last pair, as `id_list` pads, so the statement stays prepared.
    let padded = pairs.len().next_power_of_two();
    let last = pairs.last().into_iter().cycle().take(padded - pairs.len());
    let params: Vec<Param<'_>> =
        pairs.iter().chain(last).flat_map(|(wallet, outcome)| [Param::Text(wallet), Param::Text(outcome)]).collect();
    let rows = value_rows(padded, 2);
    let sql = match c.dialect() {
        Dialect::Sqlite => format!("SELECT {POSITION_COLUMNS} FROM positions WHERE (wallet_id, outcome_id) IN (VALUES {rows})"),
        // PostgreSQL planned the IN as a scan of every position whenever its statistics were
        // older than the table (12 ms of a 28 ms batch in many_markets, growing with the
        // table); a lookup per pair can only be planned as a probe of the pair's index. The
        // rows are locked in the pairs' order, and trade batches, the only statements that
        // lock several positions, run one at a time.
        Dialect::Postgres => format!(
            "SELECT p.* FROM (SELECT DISTINCT column1, column2 FROM (VALUES {rows}) AS v) AS k, \
             LATERAL (SELECT {POSITION_COLUMNS} FROM positions WHERE wallet_id = k.column1 AND outcome_id = k.column2{}) AS p",
            c.lock_clause()
        ),
    };
    (sql, params)
}

/// The market's active positions, oldest first.
pub fn active_positions(c: &mut dyn Conn, market_id: &str) -> Result<Vec<Position>> {
    let sql = format!("SELECT {POSITION_COLUMNS} FROM positions WHERE market_id = $1 AND status = 'active' ORDER BY created_at, id");
    query_as(c, &sql, &[Param::Text(market_id)])
}

/// One position by id, locked for this transaction.
pub fn locked_position(c: &mut dyn Conn, position_id: &str) -> Result<Option<Position>> {
    let sql = format!("SELECT {POSITION_COLUMNS} FROM positions WHERE id = $1{}", c.lock_clause());
    query_opt_as(c, &sql, &[Param::Text(position_id)])
}
