//! Response bodies the API builds from domain entities: markets and outcomes (with the extra
//! fields `docs/api.md` lists), previews, tokens and wallets. The OpenAPI schemas are
//! generated from these same types.

use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use super::fees::Percentage;
use crate::domain::ids::{MarketId, OutcomeId, ProviderId, WalletId};
use crate::domain::market::{Market, MarketStatus, Outcome};
use crate::domain::money::Wei;
use crate::domain::tenant::{Balance, Token};
use crate::domain::time::{Micros, Timestamp};
use crate::error::{Error, Result};

/// An outcome as search results and provider operations show it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct OutcomeView {
    pub(crate) id: OutcomeId,
    pub(crate) title: String,
    pub(crate) description: String,
    #[schema(value_type = crate::domain::json_maps::Images)]
    pub(crate) images: Value,
    pub(crate) outcome_index: i64,
    /// Price as a decimal in [0, 1] with 18 places.
    pub(crate) current_price: String,
    pub(crate) total_shares: Wei,
}

impl OutcomeView {
    pub(crate) fn new(o: &Outcome, price: lmsr::Price) -> OutcomeView {
        OutcomeView {
            id: o.id.clone(),
            title: o.title.clone(),
            description: o.description.clone(),
            images: o.images.clone(),
            outcome_index: o.index,
            current_price: price.to_string(),
            total_shares: Wei(o.total_shares),
        }
    }

    /// The outcome `outcome_id` of `m`, priced.
    pub(crate) fn of(m: &Market, outcome_id: &str) -> Result<OutcomeView> {
        let prices = m.prices()?;
        m.outcomes.iter().zip(prices).find(|(o, _)| o.id == outcome_id).map(|(o, p)| OutcomeView::new(o, p)).ok_or(Error::NotFound)
    }
}

/// An outcome in the market detail: the summary fields and its volume.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct OutcomeDetail {
    #[serde(flatten)]
    pub(crate) outcome: OutcomeView,
    pub(crate) total_volume: Wei,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct TokenRef {
    pub(crate) id: String,
    pub(crate) symbol: String,
    pub(crate) name: String,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct ProviderRef {
    pub(crate) id: ProviderId,
    pub(crate) name: String,
}

/// What the summary and the detail of a market both show, besides outcomes and token.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct MarketCommon {
    pub(crate) id: MarketId,
    pub(crate) question: String,
    pub(crate) description: String,
    pub(crate) category: Option<String>,
    pub(crate) status: MarketStatus,
    pub(crate) total_pool: Wei,
    pub(crate) total_volume: Wei,
    pub(crate) provider: ProviderRef,
    pub(crate) created_at: Timestamp,
    pub(crate) closes_at: Timestamp,
    /// Whether the provider has paused trading: bets, sells and their previews answer 409
    /// market_paused until it resumes (or settles the market).
    pub(crate) trading_paused: bool,
    /// The provider's reason for the pause; null when not paused.
    pub(crate) paused_reason: Option<String>,
    /// When trading was paused; null when not paused.
    pub(crate) paused_at: Option<Timestamp>,
}

impl MarketCommon {
    fn new(m: &Market, now: Micros) -> MarketCommon {
        MarketCommon {
            id: m.id.clone(),
            question: m.question.clone(),
            description: m.description.clone(),
            category: m.category.clone(),
            status: m.status(now),
            total_pool: Wei(m.pool),
            total_volume: Wei(m.total_volume),
            provider: ProviderRef { id: m.provider_id.clone(), name: m.provider_name.clone() },
            created_at: Timestamp(m.created_at),
            closes_at: Timestamp(m.ends_at),
            trading_paused: m.paused_at.is_some(),
            paused_reason: m.paused_reason.clone().filter(|_| m.paused_at.is_some()),
            paused_at: m.paused_at.map(Timestamp),
        }
    }
}

/// A market as search results show it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct MarketSummary {
    #[serde(flatten)]
    pub(crate) common: MarketCommon,
    pub(crate) outcomes: Vec<OutcomeView>,
    pub(crate) token: TokenRef,
}

pub(crate) fn market_summary(m: &Market, now: Micros) -> Result<MarketSummary> {
    let prices = m.prices()?;
    Ok(MarketSummary {
        common: MarketCommon::new(m, now),
        outcomes: m.outcomes.iter().zip(prices).map(|(o, p)| OutcomeView::new(o, p)).collect(),
        token: TokenRef { id: m.token.id.clone(), symbol: m.token.symbol.clone(), name: m.token.name.clone() },
    })
}

/// Market detail: every summary field (outcomes with their volume, the token with its
/// decimals) plus the kept creation fields.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct MarketDetail {
    #[serde(flatten)]
    pub(crate) common: MarketCommon,
    pub(crate) outcomes: Vec<OutcomeDetail>,
    /// The token, with its decimals.
    pub(crate) token: Token,
    pub(crate) resolution_source: Option<String>,
    pub(crate) minimum_bet: Wei,
    pub(crate) game_id: Option<String>,
    #[schema(value_type = Vec<String>)]
    pub(crate) tags: Value,
    #[schema(value_type = crate::domain::json_maps::Images)]
    pub(crate) images: Value,
    #[schema(value_type = crate::domain::json_maps::Metadata)]
    pub(crate) metadata: Value,
    pub(crate) pricing_method: String,
    pub(crate) min_bet_amount: Wei,
    pub(crate) max_bet_amount: Wei,
    pub(crate) liquidity: Wei,
    /// The LMSR liquidity parameter, in wei.
    pub(crate) b: Wei,
    pub(crate) creator_wallet_id: WalletId,
    pub(crate) creator_fee_percentage: Percentage,
    pub(crate) platform_fee_percentage: Percentage,
    pub(crate) starts_at: Timestamp,
    pub(crate) ends_at: Timestamp,
    pub(crate) updated_at: Timestamp,
    pub(crate) winning_outcome_id: Option<OutcomeId>,
    pub(crate) resolved_at: Option<Timestamp>,
    pub(crate) cancelled_at: Option<Timestamp>,
    /// When the resolution becomes final (its dispute window ends; equal to resolved_at
    /// without one). Null before any resolution, and after a cancellation.
    pub(crate) final_at: Option<Timestamp>,
    /// True while a resolution waits out its dispute window: claims wait until final_at.
    pub(crate) resolution_pending: bool,
}

pub(crate) fn market_detail(m: &Market, now: Micros) -> Result<MarketDetail> {
    let prices = m.prices()?;
    let settled_at = |status| m.settled_at.filter(|_| m.stored_status == status).map(Timestamp);
    Ok(MarketDetail {
        common: MarketCommon::new(m, now),
        outcomes: m
            .outcomes
            .iter()
            .zip(prices)
            .map(|(o, p)| OutcomeDetail { outcome: OutcomeView::new(o, p), total_volume: Wei(o.total_volume) })
            .collect(),
        token: m.token.clone(),
        resolution_source: m.resolution_source.clone(),
        minimum_bet: Wei(m.min_bet),
        game_id: m.game_id.clone(),
        tags: m.tags.clone(),
        images: m.images.clone(),
        metadata: m.metadata.clone(),
        pricing_method: m.pricing_method.clone(),
        min_bet_amount: Wei(m.min_bet),
        max_bet_amount: Wei(m.max_bet),
        liquidity: Wei(m.liquidity),
        b: Wei(m.b),
        creator_wallet_id: m.creator_wallet_id.clone(),
        creator_fee_percentage: Percentage(m.creator_fee),
        platform_fee_percentage: Percentage(m.platform_fee),
        starts_at: Timestamp(m.starts_at),
        ends_at: Timestamp(m.ends_at),
        updated_at: Timestamp(m.updated_at),
        winning_outcome_id: m.winning_outcome_id.clone(),
        resolved_at: settled_at(MarketStatus::Resolved),
        cancelled_at: settled_at(MarketStatus::Cancelled),
        final_at: m.final_at.filter(|_| m.stored_status == MarketStatus::Resolved).map(Timestamp),
        resolution_pending: m.stored_status == MarketStatus::Resolved && !m.finalized,
    })
}

/// The token a preview is denominated in.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct PreviewToken {
    pub(crate) id: String,
    pub(crate) symbol: String,
    pub(crate) decimals: i64,
}

impl PreviewToken {
    pub(crate) fn of(m: &Market) -> PreviewToken {
        PreviewToken { id: m.token.id.clone(), symbol: m.token.symbol.clone(), decimals: m.token.decimals }
    }
}

/// What a bet would buy now (the bet preview).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct BetPreview {
    pub(crate) outcome_id: String,
    /// The gross amount the bet would fill: the request's, or less under max_price.
    pub(crate) amount: Wei,
    /// The requested amount less `amount` ("0" on a full fill).
    pub(crate) unfilled_amount: Wei,
    pub(crate) estimated_shares: Wei,
    pub(crate) average_price: String,
    pub(crate) price_impact: String,
    pub(crate) new_outcome_price: String,
    pub(crate) current_price: String,
    pub(crate) estimated_fee: Wei,
    pub(crate) net_amount: Wei,
    pub(crate) market_id: MarketId,
    pub(crate) token: PreviewToken,
}

/// What a sale would pay now (the sell preview).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct SellPreview {
    pub(crate) outcome_id: String,
    pub(crate) estimated_shares: Wei,
    /// The shares asked to be sold less those a min_price limit would sell ("0" on a full fill).
    pub(crate) unfilled_shares: Wei,
    pub(crate) estimated_proceeds: Wei,
    pub(crate) estimated_fee: Wei,
    pub(crate) estimated_net_proceeds: Wei,
    pub(crate) average_price: String,
    pub(crate) price_impact: String,
    pub(crate) new_outcome_price: String,
    pub(crate) current_price: String,
    pub(crate) market_id: MarketId,
    pub(crate) token: PreviewToken,
}

/// A list without pages.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct List<T> {
    pub(crate) data: Vec<T>,
}

/// A confirmation with nothing else to say.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct Message {
    pub(crate) message: &'static str,
}

/// The market fields a provider operation answers with.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct MarketHeader {
    pub(crate) id: MarketId,
    pub(crate) question: String,
    pub(crate) description: String,
    pub(crate) status: MarketStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) created_at: Option<Timestamp>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) starts_at: Option<Timestamp>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) ends_at: Option<Timestamp>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) updated_at: Option<Timestamp>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct MarketCreated {
    pub(crate) market: MarketHeader,
    pub(crate) outcomes: Vec<OutcomeView>,
    pub(crate) message: &'static str,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct MarketUpdated {
    pub(crate) market: MarketHeader,
    pub(crate) message: &'static str,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct OutcomeChanged {
    pub(crate) outcome: OutcomeView,
    pub(crate) message: &'static str,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct Treasury {
    pub(crate) provider_id: ProviderId,
    pub(crate) balances: Vec<Balance>,
}

/// A wallet and its balances, as its provider looks it up.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct WalletView {
    pub(crate) wallet_id: WalletId,
    pub(crate) wallet_address: String,
    pub(crate) wallet_type: String,
    pub(crate) balances: Vec<Balance>,
}

/// `{"status": ...}` of the health routes.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct Health {
    pub(crate) status: &'static str,
}
