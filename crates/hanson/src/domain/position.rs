//! Positions: what a wallet holds of one outcome, and the statuses a position goes through.

use serde::Serialize;

use super::ids::{MarketId, OutcomeId, PositionId, WalletId};
use super::money::{SignedWei, Wei};
use super::num::{mul_div, ratio_decimal, Rounding};
use super::time::{Micros, Timestamp};

/// `Active` while held; `Closed` once sold out; on resolution `Won` or `Lost`; `Claimed`
/// after the payout; `Refunded` by a cancellation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum PositionStatus {
    Active,
    Closed,
    Won,
    Lost,
    Claimed,
    Refunded,
}

impl PositionStatus {
    pub(crate) const ALL: [PositionStatus; 6] = [
        PositionStatus::Active,
        PositionStatus::Closed,
        PositionStatus::Won,
        PositionStatus::Lost,
        PositionStatus::Claimed,
        PositionStatus::Refunded,
    ];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            PositionStatus::Active => "active",
            PositionStatus::Closed => "closed",
            PositionStatus::Won => "won",
            PositionStatus::Lost => "lost",
            PositionStatus::Claimed => "claimed",
            PositionStatus::Refunded => "refunded",
        }
    }

    pub(crate) fn parse(text: &str) -> Option<PositionStatus> {
        PositionStatus::ALL.into_iter().find(|s| s.as_str() == text)
    }
}

impl std::fmt::Display for PositionStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Position {
    pub(crate) id: PositionId,
    pub(crate) market_id: MarketId,
    pub(crate) outcome_id: OutcomeId,
    pub(crate) wallet_id: WalletId,
    pub(crate) shares: u128,
    pub(crate) total_invested: u128,
    pub(crate) status: PositionStatus,
    pub(crate) claimed_amount: Option<u128>,
    pub(crate) created_at: Micros,
    pub(crate) updated_at: Micros,
}

/// Only long positions exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum PositionType {
    Long,
}

/// A position valued at its market's current prices or settlement (holdings search).
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub(crate) struct Holding {
    pub(crate) id: PositionId,
    pub(crate) market_id: MarketId,
    pub(crate) outcome_id: OutcomeId,
    pub(crate) wallet_id: WalletId,
    pub(crate) shares: Wei,
    pub(crate) average_cost: String,
    pub(crate) total_invested: Wei,
    pub(crate) current_price: String,
    pub(crate) current_value: Wei,
    pub(crate) unrealized_pnl: SignedWei,
    pub(crate) status: PositionStatus,
    pub(crate) position_type: PositionType,
    pub(crate) is_claimable: bool,
    pub(crate) claimed_amount: Option<Wei>,
    pub(crate) created_at: Timestamp,
    pub(crate) updated_at: Timestamp,
}

impl Holding {
    /// Values `p`: at `price` while it trades; on resolution at the payout terms
    /// `num / den` per share (rounded down) until claimed; nothing once lost, refunded or
    /// claimed.
    pub(crate) fn value(p: Position, price: lmsr::Price, (num, den): (u128, u128)) -> Holding {
        let (current_price, value) = match p.status {
            PositionStatus::Won => (ratio_decimal(num, den), mul_div(p.shares, num, den, Rounding::Down).unwrap_or(0)),
            PositionStatus::Lost | PositionStatus::Refunded => (ratio_decimal(0, 1), 0),
            PositionStatus::Claimed => (ratio_decimal(num, den), 0),
            PositionStatus::Active | PositionStatus::Closed => {
                (price.to_string(), mul_div(p.shares, price.raw(), lmsr::PRICE_SCALE, Rounding::Down).unwrap_or(0))
            }
        };
        Holding {
            average_cost: if p.shares == 0 { ratio_decimal(0, 1) } else { ratio_decimal(p.total_invested, p.shares) },
            shares: Wei(p.shares),
            total_invested: Wei(p.total_invested),
            current_price,
            current_value: Wei(value),
            unrealized_pnl: SignedWei::difference(value, p.total_invested),
            status: p.status,
            position_type: PositionType::Long,
            is_claimable: p.status == PositionStatus::Won,
            claimed_amount: p.claimed_amount.map(Wei),
            created_at: Timestamp(p.created_at),
            updated_at: Timestamp(p.updated_at),
            id: p.id,
            market_id: p.market_id,
            outcome_id: p.outcome_id,
            wallet_id: p.wallet_id,
        }
    }
}
