//! Events: what each committed change tells the world (`docs/streams.md`, "Events"). Store writes emit
//! them inside their transaction; the store records each as a row with its envelope and
//! publishes it once the commit is durable.

use std::sync::Arc;

use serde::Serialize;

use super::ids::{MarketId, OutcomeId, ProviderId, SessionId, WalletId};
use super::market::Market;
use super::money::Wei;
use super::position::Holding;
use super::settlement::{Cancellation, ClaimReceipt, Finalization, Resolution};
use super::tenant::TransferReceipt;
use super::time::{Micros, Timestamp};
use super::trade_record::TradeRecord;
use super::views::{market_detail, OutcomeView};
use crate::error::{Error, Result};

#[derive(Debug, Clone)]
pub(crate) enum Event {
    MarketCreated(Market),
    MarketUpdated(Market),
    OutcomeCreated {
        market: Market,
        outcome_id: OutcomeId,
    },
    OutcomeUpdated {
        market: Market,
        outcome_id: OutcomeId,
    },
    TradeCreated(TradeCreated),
    MarketClosed {
        market_id: MarketId,
        closes_at: Micros,
    },
    MarketResolved(Resolution),
    MarketCancelled(Cancellation),
    /// A resolution's dispute window ended: it is final and the surplus went back.
    MarketFinalized(Finalization),
    ClaimCompleted {
        receipt: ClaimReceipt,
        wallet_id: WalletId,
    },
    /// A wallet deposit (with its wallet) or a treasury deposit.
    DepositCompleted {
        receipt: TransferReceipt,
        wallet_id: Option<WalletId>,
        provider_id: ProviderId,
    },
    WithdrawalCompleted {
        receipt: TransferReceipt,
        wallet_id: WalletId,
        provider_id: ProviderId,
    },
    /// A wallet's balance of a token after a change (user stream only).
    BalanceUpdated {
        wallet_id: WalletId,
        token_id: String,
        balance: u128,
    },
    /// A position after a change of its own fields (user stream only).
    PositionUpdated(Holding),
    /// A session was revoked: its user streams end. Never shown to clients.
    SessionEnded {
        wallet_id: WalletId,
        session_id: SessionId,
    },
}

/// `trade.created`'s data.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct TradeCreated {
    pub(crate) trade: TradeRecord,
    pub(crate) prices: Vec<OutcomePrice>,
    pub(crate) total_volume: Wei,
    pub(crate) total_pool: Wei,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct OutcomePrice {
    pub(crate) outcome_id: OutcomeId,
    pub(crate) price: String,
}

/// Every outcome's price, in the market's outcome order.
pub(crate) fn outcome_prices(m: &Market) -> Result<Vec<OutcomePrice>> {
    let prices = m.prices()?;
    Ok(m.outcomes.iter().zip(prices).map(|(o, p)| OutcomePrice { outcome_id: o.id.clone(), price: p.to_string() }).collect())
}

#[derive(Serialize)]
struct OutcomeChange {
    outcome: OutcomeView,
    prices: Vec<OutcomePrice>,
}

#[derive(Serialize)]
struct Closed {
    closes_at: Timestamp,
}

#[derive(Serialize)]
struct BalanceChange<'a> {
    token_id: &'a str,
    balance: Wei,
}

#[derive(Serialize)]
struct PositionChange<'a> {
    position: &'a Holding,
}

#[derive(Serialize)]
struct SessionChange<'a> {
    session_id: &'a SessionId,
}

#[derive(Serialize)]
struct Envelope<'a, D: Serialize> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    timestamp: Timestamp,
    market_id: Option<&'a MarketId>,
    seq: Option<i64>,
    data: D,
}

/// The envelope of a `webhook.test` event, sent to one endpoint on request.
pub(crate) fn webhook_test_envelope(id: &str, now: Micros, endpoint_id: &str) -> Result<String> {
    #[derive(Serialize)]
    struct Test<'a> {
        endpoint_id: &'a str,
        message: &'static str,
    }
    let data = Test { endpoint_id, message: "a test event sent on request" };
    let envelope = Envelope { id, kind: super::webhook::TEST_EVENT, timestamp: Timestamp(now), market_id: None, seq: None, data };
    serde_json::to_string(&envelope).map_err(Error::internal)
}

impl Event {
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Event::MarketCreated(_) => "market.created",
            Event::MarketUpdated(_) => "market.updated",
            Event::OutcomeCreated { .. } => "outcome.created",
            Event::OutcomeUpdated { .. } => "outcome.updated",
            Event::TradeCreated(_) => "trade.created",
            Event::MarketClosed { .. } => "market.closed",
            Event::MarketResolved(_) => "market.resolved",
            Event::MarketCancelled(_) => "market.cancelled",
            Event::MarketFinalized(_) => "market.finalized",
            Event::ClaimCompleted { .. } => "claim.completed",
            Event::DepositCompleted { .. } => "deposit.completed",
            Event::WithdrawalCompleted { .. } => "withdrawal.completed",
            Event::BalanceUpdated { .. } => "balance.updated",
            Event::PositionUpdated(_) => "position.updated",
            Event::SessionEnded { .. } => "session.ended",
        }
    }

    /// The market whose stream (and sequence) the event belongs to: market events only.
    pub(crate) fn market_stream(&self) -> Option<&MarketId> {
        match self {
            Event::MarketCreated(m) | Event::MarketUpdated(m) => Some(&m.id),
            Event::OutcomeCreated { market, .. } | Event::OutcomeUpdated { market, .. } => Some(&market.id),
            Event::TradeCreated(t) => Some(&t.trade.market_id),
            Event::MarketClosed { market_id, .. } => Some(market_id),
            Event::MarketResolved(r) => Some(&r.market_id),
            Event::MarketCancelled(c) => Some(&c.market_id),
            Event::MarketFinalized(f) => Some(&f.market_id),
            _ => None,
        }
    }

    /// Shown by a user stream only, never replayed: not kept in the log.
    pub(crate) fn is_stream_only(&self) -> bool {
        matches!(self, Event::BalanceUpdated { .. } | Event::PositionUpdated(_) | Event::SessionEnded { .. })
    }

    /// The wallet whose user stream shows the event.
    pub(crate) fn wallet(&self) -> Option<&WalletId> {
        match self {
            Event::TradeCreated(t) => Some(&t.trade.wallet_id),
            Event::ClaimCompleted { wallet_id, .. }
            | Event::WithdrawalCompleted { wallet_id, .. }
            | Event::BalanceUpdated { wallet_id, .. }
            | Event::SessionEnded { wallet_id, .. } => Some(wallet_id),
            Event::DepositCompleted { wallet_id, .. } => wallet_id.as_ref(),
            Event::PositionUpdated(h) => Some(&h.wallet_id),
            _ => None,
        }
    }

    /// The tenant whose webhooks receive the event, where the event names it; the others
    /// belong to their market's provider ([`Event::tenant_market`]).
    pub(crate) fn provider(&self) -> Option<&ProviderId> {
        match self {
            Event::MarketCreated(m) | Event::MarketUpdated(m) => Some(&m.provider_id),
            Event::OutcomeCreated { market, .. } | Event::OutcomeUpdated { market, .. } => Some(&market.provider_id),
            Event::DepositCompleted { provider_id, .. } | Event::WithdrawalCompleted { provider_id, .. } => Some(provider_id),
            _ => None,
        }
    }

    /// The market whose provider the event belongs to.
    pub(crate) fn tenant_market(&self) -> Option<&MarketId> {
        self.market_id()
    }

    /// The envelope's `market_id`: the market the change belongs to, if any.
    fn market_id(&self) -> Option<&MarketId> {
        match self {
            Event::ClaimCompleted { receipt, .. } => Some(&receipt.market_id),
            Event::PositionUpdated(h) => Some(&h.market_id),
            other => other.market_stream(),
        }
    }

    /// When the change happened, where the change itself says.
    fn at(&self) -> Option<Micros> {
        match self {
            Event::MarketCreated(m) => Some(m.created_at),
            Event::MarketUpdated(m) | Event::OutcomeCreated { market: m, .. } | Event::OutcomeUpdated { market: m, .. } => {
                Some(m.updated_at)
            }
            Event::TradeCreated(t) => Some(t.trade.created_at.0),
            Event::MarketResolved(r) => Some(r.resolved_at.0),
            Event::MarketCancelled(c) => Some(c.cancelled_at.0),
            Event::ClaimCompleted { receipt, .. } => Some(receipt.claimed_at.0),
            _ => None,
        }
    }

    /// The event as it is stored and sent: its envelope, one line of JSON.
    pub(crate) fn envelope(&self, id: &str, now: Micros, seq: Option<i64>) -> Result<String> {
        let at = self.at().unwrap_or(now);
        let market_id = self.market_id();
        let kind = self.kind();
        fn write<D: Serialize>(
            id: &str,
            kind: &'static str,
            at: Micros,
            market_id: Option<&MarketId>,
            seq: Option<i64>,
            data: D,
        ) -> Result<String> {
            let envelope = Envelope { id, kind, timestamp: Timestamp(at), market_id, seq, data };
            // Room for a whole envelope: one grown from empty was copied several times.
            let mut text = Vec::with_capacity(1024);
            serde_json::to_writer(&mut text, &envelope).map_err(Error::internal)?;
            String::from_utf8(text).map_err(Error::internal)
        }
        match self {
            Event::MarketCreated(m) | Event::MarketUpdated(m) => write(id, kind, at, market_id, seq, market_detail(m, at)?),
            Event::OutcomeCreated { market, outcome_id } | Event::OutcomeUpdated { market, outcome_id } => {
                let change = OutcomeChange { outcome: OutcomeView::of(market, outcome_id)?, prices: outcome_prices(market)? };
                write(id, kind, at, market_id, seq, change)
            }
            Event::TradeCreated(t) => write(id, kind, at, market_id, seq, t),
            Event::MarketClosed { closes_at, .. } => write(id, kind, at, market_id, seq, Closed { closes_at: Timestamp(*closes_at) }),
            Event::MarketResolved(r) => write(id, kind, at, market_id, seq, r),
            Event::MarketCancelled(c) => write(id, kind, at, market_id, seq, c),
            Event::MarketFinalized(f) => write(id, kind, at, market_id, seq, f),
            Event::ClaimCompleted { receipt, .. } => write(id, kind, at, market_id, seq, receipt),
            Event::DepositCompleted { receipt, .. } | Event::WithdrawalCompleted { receipt, .. } => {
                write(id, kind, at, market_id, seq, receipt)
            }
            Event::BalanceUpdated { token_id, balance, .. } => {
                write(id, kind, at, market_id, seq, BalanceChange { token_id, balance: Wei(*balance) })
            }
            Event::PositionUpdated(h) => write(id, kind, at, market_id, seq, PositionChange { position: h }),
            Event::SessionEnded { session_id, .. } => write(id, kind, at, market_id, seq, SessionChange { session_id }),
        }
    }
}

/// Whether a market's stream ends with this event (`kind`, `envelope`): a cancellation, a
/// finalization, or a resolution without a dispute window. A resolution with one may still
/// be replaced or cancelled, so the stream goes on to its `market.finalized`.
pub(crate) fn ends_market_stream(kind: &str, envelope: &str) -> bool {
    match kind {
        "market.cancelled" | "market.finalized" => true,
        "market.resolved" => serde_json::from_str::<serde_json::Value>(envelope)
            .map_or(true, |e| e["data"]["dispute_window_seconds"].as_u64().unwrap_or(0) == 0),
        _ => false,
    }
}

/// A recorded event as streams receive it: where it goes, and its envelope.
#[derive(Debug, Clone)]
pub(crate) struct Published {
    pub(crate) kind: Arc<str>,
    /// The market stream it belongs to, with its sequence number there.
    pub(crate) market_id: Option<MarketId>,
    pub(crate) seq: Option<i64>,
    /// The user stream that shows it.
    pub(crate) wallet_id: Option<WalletId>,
    pub(crate) envelope: Arc<str>,
}
