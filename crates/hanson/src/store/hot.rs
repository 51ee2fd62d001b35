//! Rows a batch of trades keeps in memory for its one transaction (SQLite's group commit,
//! PostgreSQL's trade batch): the markets its bets and sells trade on, and the balances they
//! change. In a busy market every trade of a batch used
//! to load the same market and rewrite its row (and the row's volume index entries), its
//! outcome rows, its candles and the pool, creator and platform balances. Now a batch's
//! trades read and update the copies here, and each row is written once: before the batch
//! commits, and before any other kind of write in the batch runs (it may read those rows; it
//! runs without copies). Elsewhere (a write outside a batch, a reader) there are none and
//! trades write straight through.
//!
//! SQLite's writer also carries the copies from one group commit to the next ([`Carried`]):
//! with trades spread over many markets, loading each market afresh in every commit took a
//! tenth of the writer's time (`docs/performance.md`).

use std::collections::HashMap;

use super::events::Written;
use super::sql::{Conn, Dialect};
use crate::domain::candle::Candle;
use crate::domain::market::{Market, Outcome};
use crate::domain::position::Position;
use crate::domain::session::Session;
use crate::error::Result;

#[derive(Default)]
pub struct HotRows {
    markets: Vec<HotMarket>,
    /// Balances read ahead for this batch (`trading::preload`) or changed by its trades.
    balances: Vec<KeptBalance>,
    /// Sessions read ahead for this batch's trades, by id.
    sessions: Vec<(String, KeptSession)>,
    /// Positions read ahead for this batch's trades, by (wallet, outcome): None where the
    /// wallet holds none yet.
    positions: Vec<KeptPosition>,
    /// Counts every change to the copies: a trade that fails after changing them spoils its
    /// batch, as one that changed rows does.
    changes: u64,
    /// The last event sequence number of each of this batch's markets: read ahead, then
    /// advanced by its trades' events (whose rows may not be written yet).
    seqs: Vec<(String, i64)>,
    /// The batch's events, written together by `flush`; with the node that recorded them.
    events: Option<(String, Vec<Written>)>,
    /// Copies as earlier batches of this writer committed them, read before the store;
    /// None where batches carry nothing. PostgreSQL's batches start with none (other nodes
    /// change rows between them) and only collect what `flush` stored.
    carried: Option<Carried>,
}

/// Copies of rows as a writer's earlier batches committed them: markets, balances, sessions
/// and the markets' last event numbers. Right as long as every change to those rows since
/// went through the copies, so the writer forgets them whenever another write may have
/// changed them (a write that is not a trade, another connection's commit, a rollback).
/// `flush` adds what it wrote.
#[derive(Default)]
pub struct Carried {
    markets: HashMap<String, Market>,
    balances: HashMap<String, u128>,
    sessions: HashMap<String, KeptSession>,
    seqs: HashMap<String, i64>,
}

impl Carried {
    /// The markets and their last event numbers, without the rest (PostgreSQL's batches
    /// check them against the stored revision, see `trading::KnownMarkets`).
    pub fn into_markets_and_seqs(self) -> (HashMap<String, Market>, HashMap<String, i64>) {
        (self.markets, self.seqs)
    }
}

/// The most rows of each kind carried between batches (a market is some 2 KiB, the rest a
/// few hundred bytes): past it, new ones are not carried.
const CARRIED_ROWS: usize = 4096;

fn carry<V>(into: &mut HashMap<String, V>, key: String, value: V) {
    if into.len() < CARRIED_ROWS || into.contains_key(&key) {
        into.insert(key, value);
    }
}

struct KeptBalance {
    account_id: String,
    balance: u128,
    /// Not stored yet.
    changed: bool,
}

/// A session as a trade checks it, with its wallet's address.
#[derive(Clone)]
pub struct KeptSession {
    pub session: Session,
    pub address: String,
}

struct KeptPosition {
    wallet_id: String,
    outcome_id: String,
    position: Option<Position>,
    /// Not stored yet.
    changed: bool,
}

struct HotMarket {
    record: Market,
    /// Trades applied to `record` that the stored row does not count yet.
    trades: i64,
    /// Indexes of the outcomes those trades changed: only their rows are written.
    traded: Vec<usize>,
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
    /// Indexes of the outcomes the trades changed (a trade changes only its own outcome).
    pub traded: Vec<usize>,
    pub candles: Vec<Candle>,
}

impl KeptMarket {
    /// The outcomes whose rows the trades changed.
    pub fn traded_outcomes(&self) -> impl Iterator<Item = &Outcome> + '_ {
        self.traded.iter().map(|&i| &self.record.outcomes[i])
    }
}

impl HotRows {
    /// Copies for a batch that starts from what earlier batches committed.
    pub fn carrying(carried: Carried) -> HotRows {
        HotRows { carried: Some(carried), ..HotRows::default() }
    }

    /// A carried market, taken out to be kept for this batch.
    pub fn take_carried(&mut self, market_id: &str) -> Option<Market> {
        self.carried.as_mut()?.markets.remove(market_id)
    }

    /// Forgets the carried copies: a write without copies may have changed any of them.
    pub fn forget_carried(&mut self) {
        if let Some(carried) = &mut self.carried {
            *carried = Carried::default();
        }
    }

    /// The copies to carry to the next batch, once this one has committed.
    pub fn into_carried(self) -> Carried {
        self.carried.unwrap_or_default()
    }

    /// Carries markets as `flush` stored them.
    fn carry_markets(&mut self, markets: impl IntoIterator<Item = Market>) {
        let Some(carried) = &mut self.carried else { return };
        for m in markets {
            carry(&mut carried.markets, m.id.as_str().to_string(), m);
        }
    }

    /// Takes every kept market that trades changed, every changed balance and every changed
    /// position, leaving none: what `flush` writes. The markets, balances, sessions and
    /// sequence numbers go on as carried copies (a write without copies forgets them).
    pub fn take(&mut self) -> (Vec<KeptMarket>, Vec<(String, u128)>, Vec<Position>) {
        let seqs = std::mem::take(&mut self.seqs);
        let sessions = std::mem::take(&mut self.sessions);
        if let Some(carried) = &mut self.carried {
            seqs.into_iter().for_each(|(market_id, seq)| carry(&mut carried.seqs, market_id, seq));
            sessions.into_iter().for_each(|(session_id, session)| carry(&mut carried.sessions, session_id, session));
        }
        let (changed, unchanged): (Vec<HotMarket>, Vec<HotMarket>) = std::mem::take(&mut self.markets).into_iter().partition(|m| m.trades > 0);
        self.carry_markets(unchanged.into_iter().map(|m| m.record));
        let markets = changed.into_iter().map(|m| KeptMarket { record: m.record, trades: m.trades, traded: m.traded, candles: m.candles }).collect();
        let mut balances = Vec::new();
        for b in std::mem::take(&mut self.balances) {
            if let Some(carried) = &mut self.carried {
                carry(&mut carried.balances, b.account_id.clone(), b.balance);
            }
            if b.changed {
                balances.push((b.account_id, b.balance));
            }
        }
        let positions =
            std::mem::take(&mut self.positions).into_iter().filter(|p| p.changed).filter_map(|p| p.position).collect();
        (markets, balances, positions)
    }

    /// Keeps balances just read from the store, unchanged.
    pub fn keep_balances(&mut self, stored: Vec<(String, u128)>) {
        for (account_id, balance) in stored {
            if self.balance(&account_id).is_none() {
                self.balances.push(KeptBalance { account_id, balance, changed: false });
            }
        }
    }

    pub fn keep_session(&mut self, kept: KeptSession) {
        self.sessions.push((kept.session.id.to_string(), kept));
    }

    pub fn session(&self, session_id: &str) -> Option<&KeptSession> {
        self.sessions.iter().find(|(id, _)| id == session_id).map(|(_, kept)| kept).or_else(|| self.carried.as_ref()?.sessions.get(session_id))
    }

    /// Keeps what a wallet holds of an outcome, as just read from the store.
    pub fn keep_position(&mut self, wallet_id: &str, outcome_id: &str, position: Option<Position>) {
        if self.position(wallet_id, outcome_id).is_none() {
            self.positions.push(KeptPosition { wallet_id: wallet_id.into(), outcome_id: outcome_id.into(), position, changed: false });
        }
    }

    /// Every kept position as the batch's trades left it: (wallet, outcome, position).
    pub fn kept_positions(&self) -> Vec<(String, String, Option<Position>)> {
        self.positions.iter().map(|p| (p.wallet_id.clone(), p.outcome_id.clone(), p.position.clone())).collect()
    }

    /// None: not kept. Some(None): kept, and the wallet holds none.
    pub fn position(&self, wallet_id: &str, outcome_id: &str) -> Option<Option<&Position>> {
        self.positions.iter().find(|p| p.wallet_id == wallet_id && p.outcome_id == outcome_id).map(|p| p.position.as_ref())
    }

    /// Changes a kept position; returns it back if it is not kept.
    pub fn set_position(&mut self, position: &Position) -> Option<()> {
        let kept = self.positions.iter_mut().find(|p| p.wallet_id == position.wallet_id.as_str() && p.outcome_id == position.outcome_id.as_str())?;
        self.changes += 1;
        kept.position = Some(position.clone());
        kept.changed = true;
        Some(())
    }

    pub fn changes(&self) -> u64 {
        self.changes
    }

    pub(super) fn defer_events(&mut self, node: &str, rows: Vec<Written>) {
        self.changes += 1;
        match &mut self.events {
            Some((_, kept)) => kept.extend(rows),
            None => self.events = Some((node.to_string(), rows)),
        }
    }

    pub fn seq(&self, market_id: &str) -> Option<i64> {
        self.seqs.iter().find(|(id, _)| id == market_id).map(|(_, seq)| *seq).or_else(|| self.carried.as_ref()?.seqs.get(market_id).copied())
    }

    /// Numbering is part of the events' write: a trade that fails before it has none.
    pub fn set_seq(&mut self, market_id: &str, seq: i64) {
        match self.seqs.iter_mut().find(|(id, _)| id == market_id) {
            Some(kept) => kept.1 = seq,
            None => self.seqs.push((market_id.to_string(), seq)),
        }
    }

    pub fn balance(&self, account_id: &str) -> Option<u128> {
        self.balances.iter().find(|b| b.account_id == account_id).map(|b| b.balance).or_else(|| self.carried.as_ref()?.balances.get(account_id).copied())
    }

    pub fn set_balance(&mut self, account_id: &str, balance: u128) {
        self.changes += 1;
        match self.balances.iter_mut().find(|b| b.account_id == account_id) {
            Some(kept) => {
                kept.balance = balance;
                kept.changed = true;
            }
            None => self.balances.push(KeptBalance { account_id: account_id.to_string(), balance, changed: true }),
        }
    }

    pub fn get(&self, market_id: &str) -> Option<&Market> {
        self.markets.iter().find(|m| m.record.id == market_id).map(|m| &m.record)
    }

    /// Keeps a market just read from the store.
    pub fn keep(&mut self, record: Market) {
        if self.get(&record.id).is_none() {
            self.markets.push(HotMarket { record, trades: 0, traded: Vec::new(), candles: Vec::new() });
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
        if !m.traded.contains(&totals.outcome) {
            m.traded.push(totals.outcome);
        }
        for candle in candles {
            if !m.candles.iter_mut().any(|kept| kept.absorb(&candle)) {
                m.candles.push(candle);
            }
        }
        None
    }
}

/// Writes every row changed in memory and forgets them all; the next read loads them again.
/// Called before COMMIT and, on SQLite, before a write that is not a trade.
pub fn flush(c: &mut dyn Conn) -> Result<()> {
    let Some(hot) = c.hot() else {
        return Ok(());
    };
    let events = hot.events.take();
    let (markets, balances, positions) = hot.take();
    super::positions::upsert_positions(c, &positions)?;
    match c.dialect() {
        // One statement per table: each statement of a PostgreSQL batch costs a parse and a
        // plan. SQLite's cached statements cost neither, and its planner may scan a whole
        // table to update from a list of values.
        Dialect::Postgres => {
            super::ledger::set_balances(c, &balances)?;
            let outcomes: Vec<&Outcome> = markets.iter().flat_map(KeptMarket::traded_outcomes).collect();
            let totals: Vec<(&Market, i64)> = markets.iter().map(|m| (&m.record, m.trades)).collect();
            super::markets::write_totals_of(c, &outcomes, &totals)?;
        }
        Dialect::Sqlite => {
            for (account_id, balance) in &balances {
                super::ledger::set_balance(c, account_id, *balance)?;
            }
            for m in &markets {
                let outcomes: Vec<&Outcome> = m.traded_outcomes().collect();
                super::markets::write_totals(c, &m.record, &outcomes, m.trades)?;
            }
        }
    }
    let candles: Vec<(&str, &[Candle])> = markets.iter().map(|m| (m.record.id.as_str(), m.candles.as_slice())).collect();
    super::history::upsert_candles_of(c, &candles)?;
    if let Some((node, rows)) = events {
        super::events::write(c, &rows, &node, crate::domain::time::now_micros())?;
    }
    if let Some(hot) = c.hot() {
        // As stored: `write_totals` bumped each revision.
        hot.carry_markets(markets.into_iter().map(|m| Market { revision: m.record.revision + 1, ..m.record }));
    }
    Ok(())
}
