//! The trade record: one trade as the public trade records, the event streams and the
//! exports show it.

use serde::Serialize;

use super::ids::{MarketId, OutcomeId, TradeId, WalletId};
use super::money::Wei;
use super::time::Timestamp;

/// Buy or sell, as trade records name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum TradeKind {
    Buy,
    Sell,
}

impl TradeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TradeKind::Buy => "buy",
            TradeKind::Sell => "sell",
        }
    }

    pub fn parse(text: &str) -> Option<TradeKind> {
        [TradeKind::Buy, TradeKind::Sell].into_iter().find(|k| k.as_str() == text)
    }
}

/// One trade as the public trade records show it (positions search).
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct TradeRecord {
    pub id: TradeId,
    pub market_id: MarketId,
    pub outcome_id: OutcomeId,
    pub wallet_id: WalletId,
    pub wallet_address: String,
    pub transaction_type: TradeKind,
    pub amount: Wei,
    pub shares: Wei,
    pub price: String,
    pub fee: Wei,
    pub net_amount: Wei,
    pub created_at: Timestamp,
}
