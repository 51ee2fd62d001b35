//! Reads and writes of a trade's rows through the batch's copies, when the write runs in a
//! batch (`rows` is Some), else straight to the store.

use super::BatchRows;
use crate::domain::candle::Candle;
use crate::domain::ledger::{pool_account, Balances};
use crate::domain::market::Market;
use crate::domain::position::{Position, PositionStatus};
use crate::domain::trade::plan::TradeTotals;
use crate::error::{Error, Result};
use crate::store::history::points;
use crate::store::sessions::{self, KeptSession};
use crate::store::sql::Conn;
use crate::store::{accounts, markets, positions};

/// The market to trade on: as this batch left it, else as an earlier batch committed it,
/// else read and locked.
pub(crate) fn market(c: &mut dyn Conn, rows: Option<&mut BatchRows>, market_id: &str) -> Result<Market> {
    let Some(rows) = rows else {
        return markets::market(c, market_id, true)?.ok_or(Error::NotFound);
    };
    if let Some(m) = rows.market(market_id) {
        return Ok(m.clone());
    }
    let mut m = match rows.take_committed(market_id) {
        Some(m) => m,
        None => markets::market(c, market_id, true)?.ok_or(Error::NotFound)?,
    };
    if let Some(pool) = rows.balance(&pool_account(&m.id)) {
        m.pool = pool;
    }
    rows.keep_market(m.clone());
    Ok(m)
}

/// What a wallet holds of an outcome.
pub(crate) fn position(c: &mut dyn Conn, rows: Option<&mut BatchRows>, wallet_id: &str, outcome_id: &str) -> Result<Option<Position>> {
    if let Some(kept) = rows.and_then(|rows| rows.position(wallet_id, outcome_id).map(|p| p.cloned())) {
        return Ok(kept);
    }
    positions::position_of(c, wallet_id, outcome_id)
}

/// The balances of the accounts among `ids` that exist, those the batch keeps from its
/// copies and the others read and locked.
pub(crate) fn balances(c: &mut dyn Conn, rows: Option<&mut BatchRows>, ids: &[&str]) -> Result<Vec<(String, u128)>> {
    let kept: Vec<(String, u128)> = match &rows {
        Some(rows) => ids.iter().filter_map(|id| rows.balance(id).map(|balance| (id.to_string(), balance))).collect(),
        None => Vec::new(),
    };
    let unkept: Vec<&str> = ids.iter().copied().filter(|id| !kept.iter().any(|(k, _)| k == id)).collect();
    let mut stored = accounts::stored_balances(c, &unkept)?;
    stored.extend(kept);
    Ok(stored)
}

/// A session with its wallet's address.
pub(crate) fn session(c: &mut dyn Conn, rows: Option<&mut BatchRows>, session_id: &str) -> Result<Option<KeptSession>> {
    if let Some(kept) = rows.as_ref().and_then(|rows| rows.session(session_id).cloned()) {
        return Ok(Some(kept));
    }
    let ids = [session_id];
    let (sql, params) = sessions::sessions_read(&ids);
    let read = sessions::sessions_from(&c.query(&sql, &params)?)?.pop();
    if let (Some(rows), Some(read)) = (rows, &read) {
        rows.keep_session(read.clone());
    }
    Ok(read)
}

/// Stores what transfers left: new accounts at once, changed balances in the batch's copies
/// (written by `flush`) or at once.
pub(crate) fn set_balance(c: &mut dyn Conn, mut rows: Option<&mut BatchRows>, balances: &Balances) -> Result<()> {
    for created in balances.created() {
        accounts::create_account(c, &created.account, created.token_id, created.after)?;
    }
    for changed in balances.changed() {
        match rows.as_deref_mut() {
            Some(rows) => rows.set_balance(changed.account.id, changed.after),
            None => accounts::set_balance(c, changed.account.id, changed.after)?,
        }
    }
    Ok(())
}

/// Stores a position: in the batch's copy where it keeps one, else inserted when
/// `stored_status` is None or updated from that status.
pub(crate) fn save_position(
    c: &mut dyn Conn,
    rows: Option<&mut BatchRows>,
    p: &Position,
    stored_status: Option<PositionStatus>,
) -> Result<()> {
    if rows.and_then(|rows| rows.set_position(p)).is_some() {
        return Ok(());
    }
    positions::save_position(c, p, stored_status)
}

/// Stores a trade's totals and candle rows: in the batch's copy of the market where it keeps
/// one, else at once. Last, and infallible where the market is kept: a trade that failed
/// before it left the copy untouched.
pub(crate) fn record_trade(
    c: &mut dyn Conn,
    rows: Option<&mut BatchRows>,
    before: &Market,
    totals: &TradeTotals,
    candles: Vec<Candle>,
) -> Result<()> {
    let unkept = match rows {
        Some(rows) => rows.record_trade(&before.id, totals, candles),
        None => Some(candles),
    };
    if let Some(candles) = unkept {
        let mut after = before.clone();
        totals.apply_to(&mut after);
        markets::write_totals(c, &after, &[&after.outcomes[totals.outcome]], 1)?;
        points::upsert_candles(c, &before.id, &candles)?;
    }
    Ok(())
}

/// The market's last event number, 0 before its first event.
pub(crate) fn seq(c: &mut dyn Conn, rows: Option<&BatchRows>, market_id: &str) -> Result<i64> {
    if let Some(seq) = rows.and_then(|rows| rows.seq(market_id)) {
        return Ok(seq);
    }
    crate::store::event_log::current_seq(c, market_id)
}
