//! The trade record: one trade as the public trade records, the event streams and the
//! exports show it.

use serde::Serialize;

use super::ids::{MarketId, OutcomeId, TradeId, WalletId};
use super::money::Wei;
use super::time::Timestamp;

/// Buy or sell, as trade records name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum TradeKind {
    Buy,
    Sell,
}

impl TradeKind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            TradeKind::Buy => "buy",
            TradeKind::Sell => "sell",
        }
    }

    pub(crate) fn parse(text: &str) -> Option<TradeKind> {
        [TradeKind::Buy, TradeKind::Sell].into_iter().find(|k| k.as_str() == text)
    }
}

/// One trade as the public trade records show it (positions search).
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub(crate) struct TradeRecord {
    pub(crate) id: TradeId,
    pub(crate) market_id: MarketId,
    pub(crate) outcome_id: OutcomeId,
    pub(crate) wallet_id: WalletId,
    pub(crate) wallet_address: String,
    pub(crate) transaction_type: TradeKind,
    pub(crate) amount: Wei,
    pub(crate) shares: Wei,
    pub(crate) price: String,
    pub(crate) fee: Wei,
    pub(crate) net_amount: Wei,
    pub(crate) created_at: Timestamp,
}
