//! Trades: who trades and what they ask for, what a filled trade answers, and the trade
//! record. `quote` turns a market's state and a request into shares, costs, fees and prices;
//! `plan` turns a quote into everything the trade changes.

use serde::Serialize;

use super::ids::{MarketId, OutcomeId, PositionId, ProviderId, SessionId, TradeId, WalletId};
use super::money::Wei;
use super::time::Timestamp;

pub(crate) mod bounds;
pub(crate) mod plan;
pub(crate) mod quote;

use bounds::{BetBounds, SellBounds};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SellBy {
    Shares(u128),
    /// Net proceeds after the fee.
    TargetProceeds(u128),
}

/// Who is trading: the wallet and session behind an access token.
#[derive(Debug, Clone)]
pub(crate) struct Trader {
    pub(crate) wallet_id: WalletId,
    pub(crate) session_id: SessionId,
    pub(crate) provider_id: ProviderId,
}

#[derive(Debug, Clone)]
pub(crate) struct BetRequest {
    pub(crate) market_id: MarketId,
    pub(crate) outcome_id: OutcomeId,
    pub(crate) amount: u128,
    pub(crate) bounds: BetBounds,
}

#[derive(Debug, Clone)]
pub(crate) struct SellRequest {
    pub(crate) market_id: MarketId,
    pub(crate) outcome_id: OutcomeId,
    pub(crate) by: SellBy,
    pub(crate) bounds: SellBounds,
}

/// What every trade receipt says of its state: it is recorded and durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum TradeStatus {
    Confirmed,
}

/// What the receipts of a bet and of a sale both say: where, by whom, at what price and
/// fee, the wallet's balance around it, the position and the price it left.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub(crate) struct FilledTrade {
    pub(crate) market_id: MarketId,
    pub(crate) outcome_id: OutcomeId,
    pub(crate) session_id: SessionId,
    pub(crate) average_price: String,
    pub(crate) transaction_fee: Wei,
    pub(crate) balance_before: Wei,
    pub(crate) balance_after: Wei,
    pub(crate) position_id: PositionId,
    pub(crate) new_outcome_price: String,
    pub(crate) created_at: Timestamp,
    pub(crate) status: TradeStatus,
}

/// A placed bet.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub(crate) struct BetReceipt {
    pub(crate) bet_id: TradeId,
    /// The gross amount paid: the requested amount, or under `max_price` the part filled.
    pub(crate) amount: Wei,
    /// The requested amount less `amount`: "0" unless a `max_price` limit filled part.
    pub(crate) unfilled_amount: Wei,
    pub(crate) shares_purchased: Wei,
    pub(crate) net_amount: Wei,
    #[serde(flatten)]
    pub(crate) fill: FilledTrade,
}

/// A sale of shares.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub(crate) struct SaleReceipt {
    pub(crate) transaction_id: TradeId,
    pub(crate) shares_sold: Wei,
    /// The shares asked to be sold less `shares_sold`: "0" unless a `min_price` limit sold part.
    pub(crate) unfilled_shares: Wei,
    pub(crate) proceeds: Wei,
    pub(crate) net_proceeds: Wei,
    #[serde(flatten)]
    pub(crate) fill: FilledTrade,
}
