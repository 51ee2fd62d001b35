//! Rows the SQLite writer keeps in memory for one group commit: the markets its bets and
//! sells trade on, and the balances they change. In a busy market every trade of a batch used
//! to load the same market and rewrite its row (and the row's volume index entries), its
//! outcome rows, its candles and the pool, creator and platform balances. Now a batch's
//! trades read and update the copies here, and each row is written once: before the batch
//! commits, and before any other kind of write in the batch runs (it may read those rows; it
//! runs without copies). Elsewhere (PostgreSQL, where trades run concurrently, and SQLite
//! readers) there are none and trades write straight through.

use super::history::{self, CandleRow};
use super::ledger;
use super::markets::{MarketRecord, OutcomeRecord};
use super::sql::{Conn, Param};
use crate::error::Result;

#[derive(Default)]
pub struct HotRows {
    markets: Vec<HotMarket>,
    /// Balances changed by this batch's trades and not stored yet: (account id, balance).
    balances: Vec<(String, u128)>,
    /// Counts every change to the copies: a trade that fails after changing them spoils its
    /// batch, as one that changed rows does.
    changes: u64,
}

struct HotMarket {
    record: MarketRecord,
    /// Trades applied to `record` that the stored row does not count yet.
    trades: i64,
    candles: Vec<CandleRow>,
}

/// What one trade changes in its market, applied once every check and write of the trade
/// has succeeded (so a failed trade leaves the copy as it was).
pub struct TradeTotals {
    pub outcome: usize,
    pub total_shares: u128,
    pub outcome_volume: u128,
    pub market_volume: u128,
    pub pool: u128,
    pub at: i64,
}

impl TradeTotals {
    /// The market as the trade leaves it.
    pub fn apply_to(&self, m: &mut MarketRecord) {
        let outcome = &mut m.outcomes[self.outcome];
        outcome.total_shares = self.total_shares;
        outcome.total_volume = self.outcome_volume;
        m.total_volume = self.market_volume;
        m.trade_count += 1;
        m.updated_at = self.at;
        m.pool = self.pool;
    }
}

impl HotRows {
    pub fn changes(&self) -> u64 {
        self.changes
    }

    pub fn balance(&self, account_id: &str) -> Option<u128> {
        self.balances.iter().find(|(id, _)| id == account_id).map(|(_, balance)| *balance)
    }

    pub fn set_balance(&mut self, account_id: &str, balance: u128) {
        self.changes += 1;
        match self.balances.iter_mut().find(|(id, _)| id == account_id) {
            Some(kept) => kept.1 = balance,
            None => self.balances.push((account_id.to_string(), balance)),
        }
    }

    pub fn get(&self, market_id: &str) -> Option<&MarketRecord> {
        self.markets.iter().find(|m| m.record.id == market_id).map(|m| &m.record)
    }

    /// Keeps a market just read from the store.
    pub fn keep(&mut self, record: MarketRecord) {
        if self.get(&record.id).is_none() {
            self.markets.push(HotMarket { record, trades: 0, candles: Vec::new() });
        }
    }

    /// Records a trade on a market kept here: its totals and its candle rows. Returns the
    /// candle rows back if the market is not kept.
    pub fn record_trade(&mut self, market_id: &str, totals: &TradeTotals, candles: Vec<CandleRow>) -> Option<Vec<CandleRow>> {
        let Some(m) = self.markets.iter_mut().find(|m| m.record.id == market_id) else {
            return Some(candles);
        };
        self.changes += 1;
        totals.apply_to(&mut m.record);
        m.trades += 1;
        for candle in candles {
            if !m.candles.iter_mut().any(|kept| kept.absorb(&candle)) {
                m.candles.push(candle);
            }
        }
        None
    }
}

/// Writes every row changed in memory and forgets them all; the next read loads them again.
/// Called before COMMIT and before a write that is not a trade.
pub fn flush(c: &mut dyn Conn) -> Result<()> {
    let Some(hot) = c.hot() else {
        return Ok(());
    };
    let (markets, balances) = (std::mem::take(&mut hot.markets), std::mem::take(&mut hot.balances));
    for (account_id, balance) in &balances {
        ledger::set_balance(c, account_id, *balance)?;
    }
    for m in markets.into_iter().filter(|m| m.trades > 0) {
        write_totals(c, &m.record, &m.record.outcomes, m.trades)?;
        history::upsert_candles(c, &m.record.id, &m.candles)?;
    }
    Ok(())
}

/// Stores a market's totals after `trades` more trades, and those of `outcomes` (of it).
pub fn write_totals(c: &mut dyn Conn, m: &MarketRecord, outcomes: &[OutcomeRecord], trades: i64) -> Result<()> {
    for o in outcomes {
        c.exec(
            "UPDATE outcomes SET total_shares = $1, total_volume = $2 WHERE id = $3",
            &[Param::Money(o.total_shares), Param::Money(o.total_volume), Param::Text(&o.id)],
        )?;
    }
    // Bumping the revision here spares the trigger a second write of the row.
    c.exec(
        "UPDATE markets SET total_volume = $1, trade_count = trade_count + $2, updated_at = $3, revision = revision + 1 WHERE id = $4",
        &[Param::Money(m.total_volume), Param::Int(trades), Param::Int(m.updated_at), Param::Text(&m.id)],
    )?;
    Ok(())
}
