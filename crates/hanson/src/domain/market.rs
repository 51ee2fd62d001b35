//! Markets and outcomes as the domain knows them: their fields, their statuses (`closed` is
//! derived from the clock) and their prices.

use serde_json::Value as Json;

use super::ids::{MarketId, OutcomeId, ProviderId, WalletId};
use super::tenant::Token;
use super::time::Micros;
use crate::error::{Error, Result};

/// A market's status. `Closed` is never stored: it is an active market whose end has passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum MarketStatus {
    Active,
    Closed,
    Resolved,
    Cancelled,
}

impl MarketStatus {
    pub(crate) const ALL: [MarketStatus; 4] = [MarketStatus::Active, MarketStatus::Closed, MarketStatus::Resolved, MarketStatus::Cancelled];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            MarketStatus::Active => "active",
            MarketStatus::Closed => "closed",
            MarketStatus::Resolved => "resolved",
            MarketStatus::Cancelled => "cancelled",
        }
    }

    pub(crate) fn parse(text: &str) -> Option<MarketStatus> {
        MarketStatus::ALL.into_iter().find(|s| s.as_str() == text)
    }

    pub(crate) fn is_settled(self) -> bool {
        matches!(self, MarketStatus::Resolved | MarketStatus::Cancelled)
    }
}

impl std::fmt::Display for MarketStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Outcome {
    pub(crate) id: OutcomeId,
    pub(crate) market_id: MarketId,
    pub(crate) index: i64,
    pub(crate) title: String,
    pub(crate) description: String,
    pub(crate) images: Json,
    pub(crate) total_shares: u128,
    pub(crate) total_volume: u128,
}

#[derive(Debug, Clone)]
pub(crate) struct Market {
    pub(crate) id: MarketId,
    pub(crate) provider_id: ProviderId,
    pub(crate) provider_name: String,
    pub(crate) game_id: Option<String>,
    pub(crate) question: String,
    pub(crate) description: String,
    pub(crate) category: Option<String>,
    pub(crate) resolution_source: Option<String>,
    pub(crate) tags: Json,
    pub(crate) images: Json,
    pub(crate) metadata: Json,
    pub(crate) pricing_method: String,
    pub(crate) token: Token,
    pub(crate) min_bet: u128,
    pub(crate) max_bet: u128,
    pub(crate) liquidity: u128,
    pub(crate) b: u128,
    pub(crate) starts_at: Micros,
    pub(crate) ends_at: Micros,
    pub(crate) creator_wallet_id: WalletId,
    pub(crate) creator_fee: u32,
    pub(crate) platform_fee: u32,
    /// Stored status: active, resolved or cancelled. See [`Market::status`].
    pub(crate) stored_status: MarketStatus,
    pub(crate) total_volume: u128,
    pub(crate) trade_count: i64,
    pub(crate) winning_outcome_id: Option<OutcomeId>,
    pub(crate) settled_at: Option<Micros>,
    /// Set while trading is paused, with the provider's reason.
    pub(crate) paused_at: Option<Micros>,
    pub(crate) paused_reason: Option<String>,
    /// When a resolution becomes final (its dispute window ends); None before any.
    pub(crate) final_at: Option<Micros>,
    /// False while a resolution waits out its dispute window.
    pub(crate) finalized: bool,
    pub(crate) created_at: Micros,
    pub(crate) updated_at: Micros,
    /// Changes with everything a search result shows of the market (see migration 11).
    pub(crate) revision: i64,
    pub(crate) pool: u128,
    pub(crate) outcomes: Vec<Outcome>,
}

/// `closed` is derived: an active market whose end has passed.
pub(crate) fn derived_status(stored_status: MarketStatus, ends_at: Micros, now: Micros) -> MarketStatus {
    if stored_status == MarketStatus::Active && now >= ends_at {
        MarketStatus::Closed
    } else {
        stored_status
    }
}

impl Market {
    pub(crate) fn status(&self, now: Micros) -> MarketStatus {
        derived_status(self.stored_status, self.ends_at, now)
    }

    pub(crate) fn is_settled(&self) -> bool {
        self.stored_status.is_settled()
    }

    /// A resolution still inside its dispute window at `now`: it may be resolved again or
    /// cancelled, and nothing is claimed yet.
    pub(crate) fn resolution_pending(&self, now: Micros) -> bool {
        self.stored_status == MarketStatus::Resolved && !self.finalized && self.final_at.is_some_and(|at| now < at)
    }

    pub(crate) fn shares(&self) -> Vec<u128> {
        self.outcomes.iter().map(|o| o.total_shares).collect()
    }

    /// Current prices, one per outcome in index order.
    pub(crate) fn prices(&self) -> Result<Vec<lmsr::Price>> {
        lmsr::prices(self.b, &self.shares()).map_err(|e| Error::internal(format!("prices: {e}")))
    }
}
