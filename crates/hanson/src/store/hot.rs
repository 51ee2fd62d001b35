//! Rows the SQLite writer keeps in memory for one group commit: the markets its bets and
//! sells trade on, and the balances they change. In a busy market every trade of a batch used
//! to load the same market and rewrite its row (and the row's volume index entries), its
//! outcome rows, its candles and the pool, creator and platform balances. Now a batch's
//! trades read and update the copies here, and each row is written once: before the batch
//! commits, and before any other kind of write in the batch runs (it may read those rows; it
//! runs without copies). Elsewhere (PostgreSQL, where trades run concurrently, and SQLite
//! readers) there are none and trades write straight through.

use crate::domain::candle::Candle;
use crate::domain::market::Market;

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
    record: Market,
    /// Trades applied to `record` that the stored row does not count yet.
    trades: i64,
    candles: Vec<Candle>,
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
    pub fn apply_to(&self, m: &mut Market) {
        let outcome = &mut m.outcomes[self.outcome];
        outcome.total_shares = self.total_shares;
        outcome.total_volume = self.outcome_volume;
        m.total_volume = self.market_volume;
        m.trade_count += 1;
        m.updated_at = self.at;
        m.pool = self.pool;
    }
}

/// A market kept for a batch, as [`HotRows::take`] hands it over to be written.
pub struct KeptMarket {
    pub record: Market,
    pub trades: i64,
    pub candles: Vec<Candle>,
}

impl HotRows {
    /// Takes every kept market that trades changed, and every changed balance, leaving none.
    pub fn take(&mut self) -> (Vec<KeptMarket>, Vec<(String, u128)>) {
        let markets = std::mem::take(&mut self.markets)
            .into_iter()
            .filter(|m| m.trades > 0)
            .map(|m| KeptMarket { record: m.record, trades: m.trades, candles: m.candles })
            .collect();
        (markets, std::mem::take(&mut self.balances))
    }

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

    pub fn get(&self, market_id: &str) -> Option<&Market> {
        self.markets.iter().find(|m| m.record.id == market_id).map(|m| &m.record)
    }

    /// Keeps a market just read from the store.
    pub fn keep(&mut self, record: Market) {
        if self.get(&record.id).is_none() {
            self.markets.push(HotMarket { record, trades: 0, candles: Vec::new() });
        }
    }

    /// Records a trade on a market kept here: its totals and its candle rows. Returns the
    /// candle rows back if the market is not kept.
    pub fn record_trade(&mut self, market_id: &str, totals: &TradeTotals, candles: Vec<Candle>) -> Option<Vec<Candle>> {
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
