//! What a PostgreSQL batch thread knows of markets from one batch to the next: each market's
//! creator and token, and copies of markets, their last event numbers and the positions on
//! them, checked against the stored revision before each batch uses them.

use std::collections::HashMap;

use super::{CommittedRows, KeptPosition};
use crate::domain::market::Market;
use crate::domain::position::Position;

/// What a PostgreSQL batch thread knows of markets from one batch to the next.
#[derive(Debug, Default)]
pub(crate) struct MarketCopies {
    /// Each market's creator and token, which never change once it exists: they name the
    /// accounts a trade moves before its market is read.
    pub(super) owners: HashMap<String, (String, String)>,
    /// Markets as this thread's batches last read or committed them.
    pub(super) copies: HashMap<String, MarketCopy>,
    /// The positions of the copies the running batch took, by market.
    pub(super) in_batch: HashMap<String, CopiedPositions>,
    /// Positions in `copies`, which bound the memory kept.
    copied_positions: usize,
}

/// A market as a batch thread last read or committed it, with its last event number and the
/// positions it read or wrote on it (None: the wallet held none). A market's revision changes
/// with every update of its row, and every change to its outcomes, its pool, its event stream
/// or a position on it comes with one, so a copy taken at the stored revision is what is
/// stored. Reading them all again took a many_markets batch over a third of its reads
/// (`docs/performance.md`).
#[derive(Debug)]
pub(super) struct MarketCopy {
    pub(super) market: Market,
    pub(super) seq: i64,
    pub(super) positions: CopiedPositions,
}

/// Positions by (wallet, outcome).
pub(super) type CopiedPositions = HashMap<(String, String), Option<Position>>;

impl MarketCopies {
    /// Most owners kept; past it the map starts over (each entry about 200 bytes).
    const MAX_OWNERS: usize = 1 << 16;
    /// Most markets and positions copied (some 2 KiB and 300 bytes each); past either, the
    /// copies start over.
    const MAX_COPIES: usize = 1 << 12;
    const MAX_POSITIONS: usize = 1 << 16;

    pub(super) fn learn(&mut self, markets: &[Market]) {
        for m in markets {
            if !self.owners.contains_key(m.id.as_str()) {
                if self.owners.len() >= Self::MAX_OWNERS {
                    self.owners.clear();
                }
                let (creator, token): (&str, &str) = (&m.creator_wallet_id, &m.token.id);
                self.owners.insert(m.id.to_string(), (creator.to_owned(), token.to_owned()));
            }
        }
    }

    pub(super) fn take_copy(&mut self, market_id: &str) -> Option<MarketCopy> {
        let copy = self.copies.remove(market_id)?;
        self.copied_positions -= copy.positions.len();
        Some(copy)
    }

    /// A batch starts: copies an earlier batch took and did not commit are gone (its writes
    /// may or may not have been stored).
    pub(crate) fn start_batch(&mut self) {
        self.in_batch.clear();
    }

    /// Keeps the markets of a committed batch as `flush` stored them, with their event
    /// numbers (`committed`), and the positions its trades left (`BatchRows::kept_positions`).
    pub(crate) fn committed(&mut self, committed: CommittedRows, positions: Vec<KeptPosition>) {
        let (markets, seqs) = committed.into_markets_and_seqs();
        let mut taken = std::mem::take(&mut self.in_batch);
        let mut by_outcome: HashMap<&str, Vec<&KeptPosition>> = HashMap::new();
        for kept in &positions {
            by_outcome.entry(kept.1.as_str()).or_default().push(kept);
        }
        for (id, market) in markets {
            let Some(&seq) = seqs.get(&id) else { continue };
            let mut copied = taken.remove(&id).unwrap_or_default();
            for (wallet, outcome, position) in market.outcomes.iter().filter_map(|o| by_outcome.get(o.id.as_str())).flatten() {
                copied.insert((wallet.clone(), outcome.clone()), position.clone());
            }
            if self.copies.len() >= Self::MAX_COPIES || self.copied_positions + copied.len() > Self::MAX_POSITIONS {
                self.copies.clear();
                self.copied_positions = 0;
            }
            self.copied_positions += copied.len();
            if let Some(old) = self.copies.insert(id, MarketCopy { market, seq, positions: copied }) {
                self.copied_positions -= old.positions.len();
            }
        }
    }
}
