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
pub(crate) struct ResolveRequest {
    pub(crate) market_id: MarketId,
    pub(crate) winning_outcome_id: OutcomeId,
    pub(crate) resolver_wallet_id: String,
    pub(crate) resolution_source: Option<String>,
    pub(crate) resolution_data: Value,
    /// Seconds during which the resolution may still be replaced or cancelled; 0: final at once.
    pub(crate) dispute_window_seconds: u32,
}

/// The longest dispute window: a week.
pub(crate) const MAX_DISPUTE_WINDOW_SECONDS: u32 = 604_800;

#[derive(Debug, Clone)]
pub(crate) struct CancelRequest {
    pub(crate) market_id: MarketId,
    pub(crate) canceller_wallet_id: String,
    pub(crate) cancellation_source: String,
    pub(crate) reason: String,
    pub(crate) cancellation_data: Value,
}

/// A resolved market.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub(crate) struct Resolution {
    pub(crate) market_id: MarketId,
    pub(crate) winning_outcome_id: OutcomeId,
    pub(crate) resolved_at: Timestamp,
    pub(crate) total_pool: Wei,
    pub(crate) winning_pool: Wei,
    pub(crate) payout_ratio: String,
    pub(crate) positions_updated: usize,
    pub(crate) resolution_source: Option<String>,
    pub(crate) resolver_wallet_id: String,
    pub(crate) resolution_data: Value,
    /// The dispute window asked for, in seconds (0: final at once).
    pub(crate) dispute_window_seconds: u32,
    /// When the resolution becomes final: `resolved_at` plus the window. Until then claims
    /// wait, the surplus stays in the pool, and the market may be resolved again or cancelled.
    pub(crate) final_at: Timestamp,
    pub(crate) status: MarketStatus,
}

/// A resolution that became final at the end of its dispute window (`market.finalized`).
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub(crate) struct Finalization {
    pub(crate) market_id: MarketId,
    pub(crate) winning_outcome_id: OutcomeId,
    pub(crate) final_at: Timestamp,
    /// Wei paid per winning share unit, as in the resolution.
    pub(crate) payout_ratio: String,
    /// The surplus the pool returned to the provider's treasury (what winners are not owed).
    pub(crate) returned_to_treasury: Wei,
}

/// What one wallet got back from a cancellation.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub(crate) struct UserRefund {
    pub(crate) wallet_id: WalletId,
    pub(crate) refund_amount: Wei,
    pub(crate) original_positions: usize,
}

/// A cancelled market.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub(crate) struct Cancellation {
    pub(crate) market_id: MarketId,
    pub(crate) cancelled_at: Timestamp,
    pub(crate) total_refund_amount: Wei,
    pub(crate) positions_refunded: usize,
    pub(crate) user_refunds: Vec<UserRefund>,
    pub(crate) refund_ratio: String,
    pub(crate) canceller_wallet_id: String,
    pub(crate) cancellation_source: String,
    pub(crate) reason: String,
    pub(crate) cancellation_data: Value,
    pub(crate) status: MarketStatus,
}

/// Always `completed`: a claim is recorded whole or not at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ClaimStatus {
    Completed,
}

/// A claimed payout.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub(crate) struct ClaimReceipt {
    pub(crate) claim_id: TradeId,
    pub(crate) position_id: PositionId,
    pub(crate) market_id: MarketId,
    pub(crate) outcome_id: OutcomeId,
    pub(crate) session_id: SessionId,
    pub(crate) shares_claimed: Wei,
    pub(crate) claimed_amount: Wei,
    pub(crate) payout_ratio: String,
    pub(crate) balance_before: Wei,
    pub(crate) balance_after: Wei,
    pub(crate) claimed_at: Timestamp,
    pub(crate) status: ClaimStatus,
}

/// Solvency keeps the pool at or above what winners are owed; these are the terms per
/// winning share unit, (1, 1) when fully funded.
pub(crate) fn payout_ratio_text(num: u128, den: u128) -> String {
    if num == den || den == 0 {
        "1".to_string()
    } else {
        ratio_decimal(num, den)
    }
}
