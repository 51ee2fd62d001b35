//! The rows a batch of trades keeps in memory for its one transaction: SQLite's group commit
//! and PostgreSQL's trade batch. The markets its bets and sells trade on, the balances,
//! sessions and positions they read and change, and each market's last event number. In a
//! busy market every trade of a batch used to load the same market and rewrite its row, its
//! outcome rows, its candles and the pool, creator and platform balances; now the batch's
//! trades read and update the copies here, and each row is written once, by [`flush`]: before
//! the batch commits, and before any other kind of write in the batch runs (it may read those
//! rows, and runs without copies). Outside a batch there are none and trades write straight
//! through.
//!
//! SQLite's writer also keeps the copies from one commit to the next ([`CommittedRows`]), and
//! PostgreSQL's batch thread keeps its markets between batches ([`MarketCopies`]): loading
//! each market afresh in every batch was a large part of a batch with trades spread over many
//! markets (`docs/architecture.md`).

mod committed;
mod flush;
mod known;
mod load;
mod preload;

pub(crate) use committed::CommittedRows;
pub(crate) use flush::flush;
pub(crate) use known::MarketCopies;
pub(crate) use load::{balances, market, position, record_trade, save_position, seq, session, set_balance};
pub(crate) use preload::preload;
pub use preload::TradeKeys;

use crate::domain::candle::Candle;
use crate::domain::market::{Market, Outcome};
use crate::domain::position::Position;
use crate::domain::trade::plan::TradeTotals;
use crate::store::event_log::EventRow;
use crate::store::sessions::KeptSession;

#[derive(Default)]
pub(crate) struct BatchRows {
    markets: Vec<KeptMarket>,
    /// Balances read for this batch or changed by its trades.
    balances: Vec<KeptBalance>,
    /// Sessions read for this batch's trades, by id.
    sessions: Vec<(String, KeptSession)>,
    /// Positions read for this batch's trades, by (wallet, outcome): None where the wallet
    /// holds none yet.
    positions: Vec<PositionCopy>,
    /// Counts every change to the copies: a trade that fails after changing them fails its
    /// batch, as one that changed stored rows does.
    changes: u64,
    /// The last event number of each of this batch's markets: read ahead, then advanced by
    /// its trades' events (whose rows may not be written yet).
    seqs: Vec<(String, i64)>,
    /// The batch's events, written together by `flush`; with the node that recorded them.
    events: Option<(String, Vec<EventRow>)>,
    /// Copies as earlier batches of this writer committed them, read before the store; None
    /// where batches keep nothing between them.
    committed: Option<CommittedRows>,
}

/// What a wallet holds of an outcome as a batch left it: (wallet, outcome, position), None
/// where it holds none.
pub(crate) type KeptPosition = (String, String, Option<Position>);

struct KeptBalance {
    account_id: String,
    balance: u128,
    /// Not stored yet.
    changed: bool,
}

struct PositionCopy {
    wallet_id: String,
    outcome_id: String,
    position: Option<Position>,
    /// Not stored yet.
    changed: bool,
}

struct KeptMarket {
    record: Market,
    /// Trades applied to `record` that the stored row does not count yet.
    trades: i64,
    /// Indexes of the outcomes those trades changed: only their rows are written.
    traded: Vec<usize>,
    candles: Vec<Candle>,
}

/// A market the batch's trades changed, as [`BatchRows::take`] hands it over to be written.
pub(crate) struct ChangedMarket {
    pub(crate) record: Market,
    pub(crate) trades: i64,
    traded: Vec<usize>,
    pub(crate) candles: Vec<Candle>,
}

impl ChangedMarket {
    /// The outcomes whose rows the trades changed (a trade changes only its own outcome).
    pub(crate) fn traded_outcomes(&self) -> impl Iterator<Item = &Outcome> + '_ {
        self.traded.iter().map(|&i| &self.record.outcomes[i])
    }
}

/// What `flush` writes: the changed markets, balances and positions.
pub(crate) struct Changes {
    pub(crate) markets: Vec<ChangedMarket>,
    pub(crate) balances: Vec<(String, u128)>,
    pub(crate) positions: Vec<Position>,
}

impl BatchRows {
    /// Copies for a batch that starts from what earlier batches committed.
    pub(crate) fn starting_from(committed: CommittedRows) -> BatchRows {
        BatchRows { committed: Some(committed), ..BatchRows::default() }
    }

    /// A committed market, taken out to be kept for this batch.
    fn take_committed(&mut self, market_id: &str) -> Option<Market> {
        self.committed.as_mut()?.markets.remove(market_id)
    }

    /// Forgets the committed copies: a write without copies may have changed any of them.
    pub(crate) fn forget_committed(&mut self) {
        if let Some(committed) = &mut self.committed {
            *committed = CommittedRows::default();
        }
    }

    /// The copies to start the next batch from, once this one has committed.
    pub(crate) fn into_committed(self) -> CommittedRows {
        self.committed.unwrap_or_default()
    }

    /// Keeps markets as `flush` stored them for the next batch.
    fn commit_markets(&mut self, markets: impl IntoIterator<Item = Market>) {
        if let Some(committed) = &mut self.committed {
            committed.keep_markets(markets);
        }
    }

    /// Takes every kept market that trades changed, every changed balance and every changed
    /// position, leaving none: what `flush` writes. The markets, balances, sessions and event
    /// numbers stay as committed copies (a write without copies forgets them).
    fn take(&mut self) -> Changes {
        let seqs = std::mem::take(&mut self.seqs);
        let sessions = std::mem::take(&mut self.sessions);
        if let Some(committed) = &mut self.committed {
            committed.keep_seqs(seqs);
            committed.keep_sessions(sessions);
        }
        let (changed, unchanged): (Vec<KeptMarket>, Vec<KeptMarket>) =
            std::mem::take(&mut self.markets).into_iter().partition(|m| m.trades > 0);
        self.commit_markets(unchanged.into_iter().map(|m| m.record));
        let markets = changed
            .into_iter()
            .map(|m| ChangedMarket { record: m.record, trades: m.trades, traded: m.traded, candles: m.candles })
            .collect();
        let mut balances = Vec::new();
        for b in std::mem::take(&mut self.balances) {
            if let Some(committed) = &mut self.committed {
                committed.keep_balance(b.account_id.clone(), b.balance);
            }
            if b.changed {
                balances.push((b.account_id, b.balance));
            }
        }
        let positions = std::mem::take(&mut self.positions).into_iter().filter(|p| p.changed).filter_map(|p| p.position).collect();
        Changes { markets, balances, positions }
    }

    /// Keeps balances just read from the store, unchanged.
    pub(crate) fn keep_balances(&mut self, stored: Vec<(String, u128)>) {
        for (account_id, balance) in stored {
            if self.balance(&account_id).is_none() {
                self.balances.push(KeptBalance { account_id, balance, changed: false });
            }
        }
    }

    pub(crate) fn keep_session(&mut self, kept: KeptSession) {
        self.sessions.push((kept.session.id.to_string(), kept));
    }

    pub(crate) fn session(&self, session_id: &str) -> Option<&KeptSession> {
        self.sessions
            .iter()
            .find(|(id, _)| id == session_id)
            .map(|(_, kept)| kept)
            .or_else(|| self.committed.as_ref()?.sessions.get(session_id))
    }

    /// Keeps what a wallet holds of an outcome, as just read from the store.
    pub(crate) fn keep_position(&mut self, wallet_id: &str, outcome_id: &str, position: Option<Position>) {
        if self.position(wallet_id, outcome_id).is_none() {
            self.positions.push(PositionCopy { wallet_id: wallet_id.into(), outcome_id: outcome_id.into(), position, changed: false });
        }
    }

    /// Every kept position as the batch's trades left it.
    pub(crate) fn kept_positions(&self) -> Vec<KeptPosition> {
        self.positions.iter().map(|p| (p.wallet_id.clone(), p.outcome_id.clone(), p.position.clone())).collect()
    }

    /// None: not kept. Some(None): kept, and the wallet holds none.
    pub(crate) fn position(&self, wallet_id: &str, outcome_id: &str) -> Option<Option<&Position>> {
        self.positions.iter().find(|p| p.wallet_id == wallet_id && p.outcome_id == outcome_id).map(|p| p.position.as_ref())
    }

    /// Changes a kept position; None if it is not kept.
    fn set_position(&mut self, position: &Position) -> Option<()> {
        let kept = self
            .positions
            .iter_mut()
            .find(|p| p.wallet_id == position.wallet_id.as_str() && p.outcome_id == position.outcome_id.as_str())?;
        self.changes += 1;
        kept.position = Some(position.clone());
        kept.changed = true;
        Some(())
    }

    pub(crate) fn changes(&self) -> u64 {
        self.changes
    }

    /// Keeps a write's event rows, to be written with the batch's others by `flush`.
    pub(crate) fn defer_events(&mut self, node: &str, rows: Vec<EventRow>) {
        self.changes += 1;
        match &mut self.events {
            Some((_, kept)) => kept.extend(rows),
            None => self.events = Some((node.to_string(), rows)),
        }
    }

    pub(crate) fn seq(&self, market_id: &str) -> Option<i64> {
        self.seqs
            .iter()
            .find(|(id, _)| id == market_id)
            .map(|(_, seq)| *seq)
            .or_else(|| self.committed.as_ref()?.seqs.get(market_id).copied())
    }

    /// Numbering is part of the events' write: a trade that fails before it has none.
    pub(crate) fn set_seq(&mut self, market_id: &str, seq: i64) {
        match self.seqs.iter_mut().find(|(id, _)| id == market_id) {
            Some(kept) => kept.1 = seq,
            None => self.seqs.push((market_id.to_string(), seq)),
        }
    }

    pub(crate) fn balance(&self, account_id: &str) -> Option<u128> {
        self.balances
            .iter()
            .find(|b| b.account_id == account_id)
            .map(|b| b.balance)
            .or_else(|| self.committed.as_ref()?.balances.get(account_id).copied())
    }

    fn set_balance(&mut self, account_id: &str, balance: u128) {
        self.changes += 1;
        match self.balances.iter_mut().find(|b| b.account_id == account_id) {
            Some(kept) => {
                kept.balance = balance;
                kept.changed = true;
            }
            None => self.balances.push(KeptBalance { account_id: account_id.to_string(), balance, changed: true }),
        }
    }

    fn market(&self, market_id: &str) -> Option<&Market> {
        self.markets.iter().find(|m| m.record.id == market_id).map(|m| &m.record)
    }

    /// Keeps a market just read from the store.
    pub(crate) fn keep_market(&mut self, record: Market) {
        if self.market(&record.id).is_none() {
            self.markets.push(KeptMarket { record, trades: 0, traded: Vec::new(), candles: Vec::new() });
        }
    }

    /// Records a trade on a kept market: its totals and its candle rows. Returns the candle
    /// rows back if the market is not kept.
    fn record_trade(&mut self, market_id: &str, totals: &TradeTotals, candles: Vec<Candle>) -> Option<Vec<Candle>> {
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
