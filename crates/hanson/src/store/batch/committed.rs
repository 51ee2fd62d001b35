//! Copies of rows as a writer's earlier batches committed them: markets, balances, sessions
//! and the markets' last event numbers. They are right as long as every change to those rows
//! since went through the copies, so the writer forgets them whenever another write may have
//! changed them (a write that is not a trade, another connection's commit, a rollback).
//! `flush` adds what it wrote.

use std::collections::HashMap;

use crate::domain::market::Market;
use crate::store::sessions::KeptSession;

#[derive(Default)]
pub(crate) struct CommittedRows {
    pub(super) markets: HashMap<String, Market>,
    pub(super) balances: HashMap<String, u128>,
    pub(super) sessions: HashMap<String, KeptSession>,
    pub(super) seqs: HashMap<String, i64>,
}

/// The most rows of each kind kept between batches (a market is some 2 KiB, the rest a few
/// hundred bytes): past it, new ones are not kept.
const MAX_ROWS: usize = 4096;

fn keep<V>(into: &mut HashMap<String, V>, key: String, value: V) {
    if into.len() < MAX_ROWS || into.contains_key(&key) {
        into.insert(key, value);
    }
}

impl CommittedRows {
    /// The markets and their last event numbers, without the rest (PostgreSQL's batches
    /// check them against the stored revision, see `MarketCopies`).
    pub(crate) fn into_markets_and_seqs(self) -> (HashMap<String, Market>, HashMap<String, i64>) {
        (self.markets, self.seqs)
    }

    pub(super) fn keep_markets(&mut self, markets: impl IntoIterator<Item = Market>) {
        for m in markets {
            keep(&mut self.markets, m.id.as_str().to_string(), m);
        }
    }

    pub(super) fn keep_seqs(&mut self, seqs: Vec<(String, i64)>) {
        seqs.into_iter().for_each(|(market_id, seq)| keep(&mut self.seqs, market_id, seq));
    }

    pub(super) fn keep_sessions(&mut self, sessions: Vec<(String, KeptSession)>) {
        sessions.into_iter().for_each(|(session_id, session)| keep(&mut self.sessions, session_id, session));
    }

    pub(super) fn keep_balance(&mut self, account_id: String, balance: u128) {
        keep(&mut self.balances, account_id, balance);
    }
}
