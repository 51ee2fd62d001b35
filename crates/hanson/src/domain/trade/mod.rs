//! Trades: who trades and what they ask for, what a filled trade answers, and the trade
//! record. `quote` turns a market's state and a request into shares, costs, fees and prices;
//! `plan` turns a quote into everything the trade changes.

use serde::Serialize;

use super::ids::{MarketId, OutcomeId, PositionId, ProviderId, SessionId, TradeId, WalletId};
use super::money::Wei;
use super::time::Timestamp;

pub(crate) mod plan;
pub(crate) mod quote;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SellBy {
    Shares(u128),
    /// Net proceeds after the fee.
    TargetProceeds(u128),
}

/// Who is trading: the wallet and session behind an access token.
#[derive(Debug, Clone)]
pub struct Trader {
    pub wallet_id: WalletId,
    pub session_id: SessionId,
    pub provider_id: ProviderId,
}

#[derive(Debug, Clone)]
pub struct BetRequest {
    pub market_id: MarketId,
    pub outcome_id: OutcomeId,
    pub amount: u128,
}

#[derive(Debug, Clone)]
pub struct SellRequest {
    pub market_id: MarketId,
    pub outcome_id: OutcomeId,
    pub by: SellBy,
}

/// What every trade receipt says of its state: it is recorded and durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum TradeStatus {
    Confirmed,
}

/// What the receipts of a bet and of a sale both say: where, by whom, at what price and
/// fee, the wallet's balance around it, the position and the price it left.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct FilledTrade {
    pub market_id: MarketId,
    pub outcome_id: OutcomeId,
    pub session_id: SessionId,
    pub average_price: String,
    pub transaction_fee: Wei,
    pub balance_before: Wei,
    pub balance_after: Wei,
    pub position_id: PositionId,
    pub new_outcome_price: String,
    pub created_at: Timestamp,
    pub status: TradeStatus,
}

/// A placed bet (spec 4.2, Place Bet).
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct BetReceipt {
    pub bet_id: TradeId,
    pub amount: Wei,
    pub shares_purchased: Wei,
    pub net_amount: Wei,
    #[serde(flatten)]
    pub fill: FilledTrade,
}

/// A sale of shares (spec 4.2, Sell).
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct SaleReceipt {
    pub transaction_id: TradeId,
    pub shares_sold: Wei,
    pub proceeds: Wei,
    pub net_proceeds: Wei,
    #[serde(flatten)]
    pub fill: FilledTrade,
}
