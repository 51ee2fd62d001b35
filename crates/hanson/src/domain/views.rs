//! Response bodies the API builds from domain entities: markets and outcomes (spec part 2,
//! with CONTRACT's extra fields), previews, tokens and wallets. The OpenAPI schemas are
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
pub struct OutcomeView {
    pub id: OutcomeId,
    pub title: String,
    pub description: String,
    /// Image URLs by name.
    #[schema(value_type = Object)]
    pub images: Value,
    pub outcome_index: i64,
    /// Price as a decimal in [0, 1] with 18 places.
    pub current_price: String,
    pub total_shares: Wei,
}

impl OutcomeView {
    pub fn new(o: &Outcome, price: lmsr::Price) -> OutcomeView {
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
    pub fn of(m: &Market, outcome_id: &str) -> Result<OutcomeView> {
        let prices = m.prices()?;
        m.outcomes.iter().zip(prices).find(|(o, _)| o.id == outcome_id).map(|(o, p)| OutcomeView::new(o, p)).ok_or(Error::NotFound)
    }
}

/// An outcome in the market detail: the summary fields and its volume.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OutcomeDetail {
    #[serde(flatten)]
    pub outcome: OutcomeView,
    pub total_volume: Wei,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TokenRef {
    pub id: String,
    pub symbol: String,
    pub name: String,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ProviderRef {
    pub id: ProviderId,
    pub name: String,
}

/// What the summary and the detail of a market both show, besides outcomes and token.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct MarketCommon {
    pub id: MarketId,
    pub question: String,
    pub description: String,
    pub category: Option<String>,
    pub status: MarketStatus,
    pub total_pool: Wei,
    pub total_volume: Wei,
    pub provider: ProviderRef,
    pub created_at: Timestamp,
    pub closes_at: Timestamp,
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
        }
    }
}

/// A market as search results show it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct MarketSummary {
    #[serde(flatten)]
    pub common: MarketCommon,
    pub outcomes: Vec<OutcomeView>,
    pub token: TokenRef,
}

pub fn market_summary(m: &Market, now: Micros) -> Result<MarketSummary> {
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
pub struct MarketDetail {
    #[serde(flatten)]
    pub common: MarketCommon,
    pub outcomes: Vec<OutcomeDetail>,
    /// The token, with its decimals.
    pub token: Token,
    pub resolution_source: Option<String>,
    pub minimum_bet: Wei,
    pub game_id: Option<String>,
    #[schema(value_type = Vec<String>)]
    pub tags: Value,
    #[schema(value_type = Object)]
    pub images: Value,
    #[schema(value_type = Object)]
    pub metadata: Value,
    pub pricing_method: String,
    pub min_bet_amount: Wei,
    pub max_bet_amount: Wei,
    pub liquidity: Wei,
    /// The LMSR liquidity parameter, in wei.
    pub b: Wei,
    pub creator_wallet_id: WalletId,
    pub creator_fee_percentage: Percentage,
    pub platform_fee_percentage: Percentage,
    pub starts_at: Timestamp,
    pub ends_at: Timestamp,
    pub updated_at: Timestamp,
    pub winning_outcome_id: Option<OutcomeId>,
    pub resolved_at: Option<Timestamp>,
    pub cancelled_at: Option<Timestamp>,
}

pub fn market_detail(m: &Market, now: Micros) -> Result<MarketDetail> {
    let prices = m.prices()?;
    let settled_at = |status| m.settled_at.filter(|_| m.stored_status == status).map(Timestamp);
    Ok(MarketDetail {
        common: MarketCommon::new(m, now),
        outcomes: m.outcomes.iter().zip(prices).map(|(o, p)| OutcomeDetail { outcome: OutcomeView::new(o, p), total_volume: Wei(o.total_volume) }).collect(),
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
    })
}

/// The token a preview is denominated in.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PreviewToken {
    pub id: String,
    pub symbol: String,
    pub decimals: i64,
}

impl PreviewToken {
    pub fn of(m: &Market) -> PreviewToken {
        PreviewToken { id: m.token.id.clone(), symbol: m.token.symbol.clone(), decimals: m.token.decimals }
    }
}

/// What a bet would buy now (spec 4.1, Bet Preview).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct BetPreview {
    pub outcome_id: String,
    pub amount: Wei,
    pub estimated_shares: Wei,
    pub average_price: String,
    pub price_impact: String,
    pub new_outcome_price: String,
    pub current_price: String,
    pub estimated_fee: Wei,
    pub net_amount: Wei,
    pub market_id: MarketId,
    pub token: PreviewToken,
}

/// What a sale would pay now (spec 4.1, Sell Preview).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SellPreview {
    pub outcome_id: String,
    pub estimated_shares: Wei,
    pub estimated_proceeds: Wei,
    pub estimated_fee: Wei,
    pub estimated_net_proceeds: Wei,
    pub average_price: String,
    pub price_impact: String,
    pub new_outcome_price: String,
    pub current_price: String,
    pub market_id: MarketId,
    pub token: PreviewToken,
}

/// A list without pages.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct List<T> {
    pub data: Vec<T>,
}

/// A confirmation with nothing else to say.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Message {
    pub message: &'static str,
}

/// The market fields a provider operation answers with.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct MarketHeader {
    pub id: MarketId,
    pub question: String,
    pub description: String,
    pub status: MarketStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_at: Option<Timestamp>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub starts_at: Option<Timestamp>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ends_at: Option<Timestamp>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<Timestamp>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct MarketCreated {
    pub market: MarketHeader,
    pub outcomes: Vec<OutcomeView>,
    pub message: &'static str,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct MarketUpdated {
    pub market: MarketHeader,
    pub message: &'static str,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OutcomeChanged {
    pub outcome: OutcomeView,
    pub message: &'static str,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Treasury {
    pub provider_id: ProviderId,
    pub balances: Vec<Balance>,
}

/// A wallet and its balances, as its provider looks it up.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct WalletView {
    pub wallet_id: WalletId,
    pub wallet_address: String,
    pub wallet_type: String,
    pub balances: Vec<Balance>,
}

/// `{"status": ...}` of the health routes.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Health {
    pub status: &'static str,
}
