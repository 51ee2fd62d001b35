//! Settlement: a provider resolves or cancels a market, and winners claim. The requests and
//! what each answers.

use serde::Serialize;
use serde_json::Value;

use super::ids::{MarketId, OutcomeId, PositionId, SessionId, TradeId, WalletId};
use super::market::MarketStatus;
use super::money::Wei;
use super::num::ratio_decimal;
use super::time::Timestamp;

#[derive(Debug, Clone)]
pub struct ResolveRequest {
    pub market_id: MarketId,
    pub winning_outcome_id: OutcomeId,
    pub resolver_wallet_id: String,
    pub resolution_source: Option<String>,
    pub resolution_data: Value,
}

#[derive(Debug, Clone)]
pub struct CancelRequest {
    pub market_id: MarketId,
    pub canceller_wallet_id: String,
    pub cancellation_source: String,
    pub reason: String,
    pub cancellation_data: Value,
}

/// A resolved market (spec 4.3, Resolve Market).
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Resolution {
    pub market_id: MarketId,
    pub winning_outcome_id: OutcomeId,
    pub resolved_at: Timestamp,
    pub total_pool: Wei,
    pub winning_pool: Wei,
    pub payout_ratio: String,
    pub positions_updated: usize,
    pub resolution_source: Option<String>,
    pub resolver_wallet_id: String,
    pub resolution_data: Value,
    pub status: MarketStatus,
}

/// What one wallet got back from a cancellation.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct UserRefund {
    pub wallet_id: WalletId,
    pub refund_amount: Wei,
    pub original_positions: usize,
}

/// A cancelled market (spec 4.3, Cancel Market).
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Cancellation {
    pub market_id: MarketId,
    pub cancelled_at: Timestamp,
    pub total_refund_amount: Wei,
    pub positions_refunded: usize,
    pub user_refunds: Vec<UserRefund>,
    pub refund_ratio: String,
    pub canceller_wallet_id: String,
    pub cancellation_source: String,
    pub reason: String,
    pub cancellation_data: Value,
    pub status: MarketStatus,
}

/// Always `completed`: a claim is recorded whole or not at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ClaimStatus {
    Completed,
}

/// A claimed payout (spec 4.2, Claim).
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct ClaimReceipt {
    pub claim_id: TradeId,
    pub position_id: PositionId,
    pub market_id: MarketId,
    pub outcome_id: OutcomeId,
    pub session_id: SessionId,
    pub shares_claimed: Wei,
    pub claimed_amount: Wei,
    pub payout_ratio: String,
    pub balance_before: Wei,
    pub balance_after: Wei,
    pub claimed_at: Timestamp,
    pub status: ClaimStatus,
}

/// Solvency keeps the pool at or above what winners are owed; these are the terms per
/// winning share unit, (1, 1) when fully funded.
pub fn payout_ratio_text(num: u128, den: u128) -> String {
    if num == den || den == 0 {
        "1".to_string()
    } else {
        ratio_decimal(num, den)
    }
}
