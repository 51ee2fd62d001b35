//! Events: what each committed change tells the world. Store writes return them alongside
//! their result; they reach the publisher only once the change is durable.

use super::ids::{MarketId, OutcomeId};
use super::settlement::{Cancellation, ClaimReceipt, Resolution};
use super::trade::TradeRecord;

#[derive(Debug, Clone)]
pub enum Event {
    MarketCreated { market_id: MarketId },
    MarketUpdated { market_id: MarketId },
    OutcomeCreated { market_id: MarketId, outcome_id: OutcomeId },
    OutcomeUpdated { market_id: MarketId, outcome_id: OutcomeId },
    TradeCreated(TradeRecord),
    MarketResolved(Resolution),
    MarketCancelled(Cancellation),
    ClaimCompleted(ClaimReceipt),
    /// A wallet or treasury deposit, or a withdrawal, with its transfer id.
    TransferCompleted { transfer_id: String, kind: TransferKind },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransferKind {
    Deposit,
    Withdrawal,
}

impl Event {
    /// The market an event belongs to, if any.
    pub fn market_id(&self) -> Option<&MarketId> {
        match self {
            Event::MarketCreated { market_id }
            | Event::MarketUpdated { market_id }
            | Event::OutcomeCreated { market_id, .. }
            | Event::OutcomeUpdated { market_id, .. } => Some(market_id),
            Event::TradeCreated(t) => Some(&t.market_id),
            Event::MarketResolved(r) => Some(&r.market_id),
            Event::MarketCancelled(c) => Some(&c.market_id),
            Event::ClaimCompleted(c) => Some(&c.market_id),
            Event::TransferCompleted { .. } => None,
        }
    }
}
