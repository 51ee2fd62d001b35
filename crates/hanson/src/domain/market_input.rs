//! Market and outcome requests: parsed and validated here, so the store only ever sees
//! well-formed values.

use serde::Deserialize;
use serde_json::{Map, Value as Json};

use super::fees::Percentage;
use super::fees::{parse_percentage, MAX_TOTAL_FEE_UNITS};
#[allow(unused_imports)] // named by schema attributes
use super::ids::{MarketId, OutcomeId, ProviderId, WalletId};
use super::market::{Market, MarketStatus};
use super::money::{parse_amount, AmountError, PositiveAmount};
use super::page::{PageRequest, SearchRequest, Sort};
use super::time::{parse_timestamp, Micros, Timestamp};
use crate::error::{Error, Result, Validator};

const MAX_TEXT: usize = 4_000;

const MAX_QUESTION: usize = 500;

/// Parses a wei field; a JSON number or other type is a validation error, a value above the
/// cap is `amount_too_large`.
pub(crate) fn wei_field(value: Option<&Json>, field: &str, v: &mut Validator) -> Result<Option<u128>> {
    match value {
        None | Some(Json::Null) => Ok(None),
        Some(Json::String(s)) => match parse_amount(s) {
            Ok(n) => Ok(Some(n)),
            Err(AmountError::TooLarge) => Err(Error::rule_on("amount_too_large", field, format!("{field} must not exceed 10^36"))),
            Err(e) => {
                v.push(field, e.message());
                Ok(None)
            }
        },
        Some(_) => {
            v.push(field, "must be a string of decimal digits");
            Ok(None)
        }
    }
}

fn percentage_field(value: Option<&serde_json::Number>, field: &str, v: &mut Validator) -> Option<u32> {
    let n = value?;
    let units = parse_percentage(&n.to_string());
    if units.is_none() {
        v.push(field, "must be a number from 0 with at most 4 fractional digits");
    }
    units
}

fn timestamp_field(value: Option<&str>, field: &str, v: &mut Validator) -> Option<Micros> {
    let text = value?;
    let parsed = parse_timestamp(text);
    if parsed.is_none() {
        v.push(field, "must be an RFC 3339 timestamp");
    }
    parsed
}

fn text_field(value: Option<&str>, field: &str, max: usize, required: bool, v: &mut Validator) {
    match value {
        None if required => v.push(field, "is required"),
        Some(s) if required && s.trim().is_empty() => v.push(field, "must not be empty"),
        Some(s) if s.chars().count() > max => v.push(field, format!("must be at most {max} characters")),
        _ => {}
    }
}

fn images_field(value: Option<&Map<String, Json>>, field: &str, v: &mut Validator) {
    if let Some(map) = value {
        if map.values().any(|x| !x.is_string()) {
            v.push(field, "must map names to URL strings");
        }
    }
}

fn metadata_text(metadata: &Map<String, Json>, key: &str) -> Option<String> {
    metadata.get(key).and_then(Json::as_str).map(str::to_string)
}

/// An outcome to create.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
pub(crate) struct OutcomeInput {
    /// Not blank.
    #[schema(required = true, nullable = false, min_length = 1, max_length = 200)]
    pub(crate) title: Option<String>,
    #[schema(max_length = 4000)]
    pub(crate) description: Option<String>,
    /// Image URLs by name.
    #[schema(value_type = Option<crate::domain::json_maps::Images>)]
    pub(crate) images: Option<Map<String, Json>>,
    /// Distinct within the market.
    #[schema(required = true, nullable = false, minimum = 0, maximum = 1000000)]
    pub(crate) outcome_index: Option<i64>,
}

/// A partial update of an outcome: only the fields present change.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
pub(crate) struct OutcomeUpdateInput {
    /// Not blank.
    #[schema(min_length = 1, max_length = 200)]
    pub(crate) title: Option<String>,
    #[schema(max_length = 4000)]
    pub(crate) description: Option<String>,
    /// Image URLs by name.
    #[schema(value_type = Option<crate::domain::json_maps::Images>)]
    pub(crate) images: Option<Map<String, Json>>,
    /// Distinct within the market.
    #[schema(minimum = 0, maximum = 1000000)]
    pub(crate) outcome_index: Option<i64>,
}

#[derive(Debug, Clone)]
pub(crate) struct NewOutcome {
    pub(crate) id: String,
    pub(crate) index: i64,
    pub(crate) title: String,
    pub(crate) description: String,
    pub(crate) images: Json,
}

impl OutcomeInput {
    fn validate(self, prefix: &str, v: &mut Validator) -> Option<NewOutcome> {
        text_field(self.title.as_deref(), &format!("{prefix}title"), 200, true, v);
        text_field(self.description.as_deref(), &format!("{prefix}description"), MAX_TEXT, false, v);
        images_field(self.images.as_ref(), &format!("{prefix}images"), v);
        let index = match self.outcome_index {
            Some(i) if (0..=1_000_000).contains(&i) => Some(i),
            Some(_) => {
                v.push(&format!("{prefix}outcome_index"), "must be between 0 and 1000000");
                None
            }
            None => {
                v.push(&format!("{prefix}outcome_index"), "is required");
                None
            }
        };
        Some(NewOutcome {
            id: crate::domain::ids::new_id(),
            index: index?,
            title: self.title?.trim().to_string(),
            description: self.description.unwrap_or_default(),
            images: Json::Object(self.images.unwrap_or_default()),
        })
    }

    pub(crate) fn into_new_outcome(self) -> Result<NewOutcome> {
        let mut v = Validator::default();
        let outcome = self.validate("", &mut v);
        v.finish()?;
        outcome.ok_or_else(|| Error::internal("validated outcome missing"))
    }
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
pub(crate) struct CreateMarketInput {
    pub(crate) game_id: Option<String>,
    /// Not blank.
    #[schema(required = true, nullable = false, min_length = 1, max_length = 500)]
    pub(crate) question: Option<String>,
    #[schema(max_length = 4000)]
    pub(crate) description: Option<String>,
    /// At most 50 tags of at most 100 characters each.
    #[schema(max_items = 50)]
    pub(crate) tags: Option<Vec<String>>,
    /// Image URLs by name.
    #[schema(value_type = Option<crate::domain::json_maps::Images>)]
    pub(crate) images: Option<Map<String, Json>>,
    /// `lmsr`, the only method.
    #[schema(pattern = "^lmsr$")]
    pub(crate) pricing_method: Option<String>,
    #[schema(required = true, nullable = false, min_length = 1)]
    pub(crate) token_id: Option<String>,
    /// At least 1, and at most max_bet_amount.
    #[schema(value_type = Option<PositiveAmount>)]
    pub(crate) min_bet_amount: Option<Json>,
    #[schema(value_type = Option<PositiveAmount>)]
    pub(crate) max_bet_amount: Option<Json>,
    /// Moved from the provider's treasury into the market's pool.
    #[schema(value_type = PositiveAmount, required = true)]
    pub(crate) liquidity: Option<Json>,
    #[schema(value_type = Option<Timestamp>)]
    pub(crate) starts_at: Option<String>,
    /// After starts_at.
    #[schema(value_type = Timestamp, required = true)]
    pub(crate) ends_at: Option<String>,
    #[schema(required = true, nullable = false, min_length = 1)]
    pub(crate) creator_wallet_id: Option<String>,
    #[schema(value_type = Option<Percentage>)]
    pub(crate) creator_fee_percentage: Option<serde_json::Number>,
    #[schema(value_type = Option<Percentage>)]
    pub(crate) platform_fee_percentage: Option<serde_json::Number>,
    /// `category` and `resolution_source` are searchable and shown.
    #[schema(value_type = Option<crate::domain::json_maps::Metadata>)]
    pub(crate) metadata: Option<Map<String, Json>>,
    #[schema(required = true, min_items = 2, max_items = 64)]
    pub(crate) outcomes: Option<Vec<OutcomeInput>>,
}

#[derive(Debug, Clone)]
pub(crate) struct NewMarket {
    pub(crate) id: String,
    pub(crate) provider_id: String,
    pub(crate) game_id: Option<String>,
    pub(crate) question: String,
    pub(crate) description: String,
    pub(crate) tags: Json,
    pub(crate) images: Json,
    pub(crate) metadata: Json,
    pub(crate) token_id: String,
    pub(crate) min_bet: u128,
    pub(crate) max_bet: u128,
    pub(crate) liquidity: u128,
    pub(crate) starts_at: Micros,
    pub(crate) ends_at: Micros,
    pub(crate) creator_wallet_id: String,
    pub(crate) creator_fee: u32,
    pub(crate) platform_fee: u32,
    pub(crate) outcomes: Vec<NewOutcome>,
}

impl NewMarket {
    pub(crate) fn category(&self) -> Option<&str> {
        self.metadata.get("category").and_then(Json::as_str)
    }

    pub(crate) fn resolution_source(&self) -> Option<&str> {
        self.metadata.get("resolution_source").and_then(Json::as_str)
    }
}

fn validate_tags(tags: Option<&Vec<String>>, v: &mut Validator) {
    if let Some(tags) = tags {
        if tags.len() > 50 || tags.iter().any(|t| t.chars().count() > 100) {
            v.push("tags", "at most 50 tags of at most 100 characters each");
        }
    }
}

fn validate_metadata(metadata: Option<&Map<String, Json>>, v: &mut Validator) {
    if let Some(m) = metadata {
        for key in ["category", "resolution_source"] {
            if m.get(key).is_some_and(|x| !x.is_string()) {
                v.push(&format!("metadata.{key}"), "must be a string");
            }
        }
    }
}

impl CreateMarketInput {
    pub(crate) fn validate(self, provider_id: &str) -> Result<NewMarket> {
        let mut v = Validator::default();
        text_field(self.question.as_deref(), "question", MAX_QUESTION, true, &mut v);
        text_field(self.description.as_deref(), "description", MAX_TEXT, false, &mut v);
        validate_tags(self.tags.as_ref(), &mut v);
        images_field(self.images.as_ref(), "images", &mut v);
        validate_metadata(self.metadata.as_ref(), &mut v);
        match self.pricing_method.as_deref() {
            None | Some("lmsr") => {}
            Some(_) => v.push("pricing_method", "must be lmsr"),
        }
        if self.token_id.as_deref().is_none_or(str::is_empty) {
            v.push("token_id", "is required");
        }
        if self.creator_wallet_id.as_deref().is_none_or(str::is_empty) {
            v.push("creator_wallet_id", "is required");
        }
        let min_bet = wei_field(self.min_bet_amount.as_ref(), "min_bet_amount", &mut v)?;
        let max_bet = wei_field(self.max_bet_amount.as_ref(), "max_bet_amount", &mut v)?;
        let liquidity = wei_field(self.liquidity.as_ref(), "liquidity", &mut v)?;
        if self.liquidity.is_none() {
            v.push("liquidity", "is required");
        }
        if liquidity == Some(0) {
            v.push("liquidity", "must be greater than 0");
        }
        let min_bet = min_bet.unwrap_or(1);
        let max_bet = max_bet.unwrap_or(super::money::MAX_INPUT_AMOUNT);
        if min_bet == 0 {
            v.push("min_bet_amount", "must be at least 1");
        }
        if min_bet > max_bet {
            v.push("min_bet_amount", "must not exceed max_bet_amount");
        }
        let starts_at = timestamp_field(self.starts_at.as_deref(), "starts_at", &mut v);
        let ends_at = timestamp_field(self.ends_at.as_deref(), "ends_at", &mut v);
        if self.ends_at.is_none() {
            v.push("ends_at", "is required");
        }
        let now = super::time::now_micros();
        let starts_at = starts_at.unwrap_or(now);
        if let Some(end) = ends_at {
            if end <= starts_at {
                v.push("ends_at", "must be after starts_at");
            }
        }
        let creator_fee = percentage_field(self.creator_fee_percentage.as_ref(), "creator_fee_percentage", &mut v);
        let platform_fee = percentage_field(self.platform_fee_percentage.as_ref(), "platform_fee_percentage", &mut v);
        let (creator_fee, platform_fee) = (creator_fee.unwrap_or(0), platform_fee.unwrap_or(0));
        if creator_fee + platform_fee > MAX_TOTAL_FEE_UNITS {
            v.push("creator_fee_percentage", "creator and platform fees together must not exceed 50");
        }
        let outcomes_input = self.outcomes.unwrap_or_default();
        if !(2..=lmsr::MAX_OUTCOMES).contains(&outcomes_input.len()) {
            v.push("outcomes", "must have between 2 and 64 outcomes");
        }
        let mut outcomes = Vec::with_capacity(outcomes_input.len());
        for (i, o) in outcomes_input.into_iter().enumerate() {
            if let Some(o) = o.validate(&format!("outcomes[{i}]."), &mut v) {
                outcomes.push(o);
            }
        }
        let mut indexes: Vec<i64> = outcomes.iter().map(|o| o.index).collect();
        indexes.sort_unstable();
        if indexes.windows(2).any(|w| w[0] == w[1]) {
            v.push("outcomes", "outcome_index values must be distinct");
        }
        v.finish()?;
        outcomes.sort_by_key(|o| o.index);
        Ok(NewMarket {
            id: crate::domain::ids::new_id(),
            provider_id: provider_id.to_string(),
            game_id: self.game_id,
            question: self.question.unwrap_or_default().trim().to_string(),
            description: self.description.unwrap_or_default(),
            tags: Json::from(self.tags.unwrap_or_default()),
            images: Json::Object(self.images.unwrap_or_default()),
            metadata: Json::Object(self.metadata.unwrap_or_default()),
            token_id: self.token_id.unwrap_or_default(),
            min_bet,
            max_bet,
            liquidity: liquidity.unwrap_or(0),
            starts_at,
            ends_at: ends_at.unwrap_or(0),
            creator_wallet_id: self.creator_wallet_id.unwrap_or_default(),
            creator_fee,
            platform_fee,
            outcomes,
        })
    }
}

#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
pub(crate) struct UpdateMarketInput {
    /// Not blank.
    #[schema(min_length = 1, max_length = 500)]
    pub(crate) question: Option<String>,
    #[schema(max_length = 4000)]
    pub(crate) description: Option<String>,
    /// At most 50 tags of at most 100 characters each.
    #[schema(max_items = 50)]
    pub(crate) tags: Option<Vec<String>>,
    #[schema(value_type = Option<crate::domain::json_maps::Images>)]
    pub(crate) images: Option<Map<String, Json>>,
    #[schema(value_type = Option<PositiveAmount>)]
    pub(crate) min_bet_amount: Option<Json>,
    #[schema(value_type = Option<PositiveAmount>)]
    pub(crate) max_bet_amount: Option<Json>,
    #[schema(value_type = Option<Timestamp>)]
    pub(crate) ends_at: Option<String>,
    #[schema(value_type = Option<Percentage>)]
    pub(crate) creator_fee_percentage: Option<serde_json::Number>,
    #[schema(value_type = Option<crate::domain::json_maps::Metadata>)]
    pub(crate) metadata: Option<Map<String, Json>>,
}

/// The validated fields of a partial update; absent fields keep their value.
#[derive(Clone, Debug, Default)]
pub(crate) struct MarketPatch {
    question: Option<String>,
    description: Option<String>,
    tags: Option<Json>,
    images: Option<Json>,
    min_bet: Option<u128>,
    max_bet: Option<u128>,
    ends_at: Option<Micros>,
    creator_fee: Option<u32>,
    metadata: Option<Map<String, Json>>,
}

/// A market's editable fields after a patch, checked together.
pub(crate) struct MergedMarket {
    pub(crate) question: String,
    pub(crate) description: String,
    pub(crate) tags: Json,
    pub(crate) images: Json,
    pub(crate) metadata: Json,
    pub(crate) category: Option<String>,
    pub(crate) resolution_source: Option<String>,
    pub(crate) min_bet: u128,
    pub(crate) max_bet: u128,
    pub(crate) ends_at: Micros,
    pub(crate) creator_fee: u32,
}

impl UpdateMarketInput {
    pub(crate) fn validate(self) -> Result<MarketPatch> {
        let mut v = Validator::default();
        if self.question.is_some() {
            text_field(self.question.as_deref(), "question", MAX_QUESTION, true, &mut v);
        }
        text_field(self.description.as_deref(), "description", MAX_TEXT, false, &mut v);
        validate_tags(self.tags.as_ref(), &mut v);
        images_field(self.images.as_ref(), "images", &mut v);
        validate_metadata(self.metadata.as_ref(), &mut v);
        let min_bet = wei_field(self.min_bet_amount.as_ref(), "min_bet_amount", &mut v)?;
        let max_bet = wei_field(self.max_bet_amount.as_ref(), "max_bet_amount", &mut v)?;
        if min_bet == Some(0) {
            v.push("min_bet_amount", "must be at least 1");
        }
        let ends_at = timestamp_field(self.ends_at.as_deref(), "ends_at", &mut v);
        let creator_fee = percentage_field(self.creator_fee_percentage.as_ref(), "creator_fee_percentage", &mut v);
        v.finish()?;
        Ok(MarketPatch {
            question: self.question.map(|q| q.trim().to_string()),
            description: self.description,
            tags: self.tags.map(Json::from),
            images: self.images.map(Json::Object),
            min_bet,
            max_bet,
            ends_at,
            creator_fee,
            metadata: self.metadata,
        })
    }
}

impl MarketPatch {
    /// Applies the patch to the stored market and re-checks the rules that span fields.
    pub(crate) fn apply_to(self, m: &Market) -> Result<MergedMarket> {
        let metadata = match self.metadata {
            Some(map) => map,
            None => m.metadata.as_object().cloned().unwrap_or_default(),
        };
        let merged = MergedMarket {
            question: self.question.unwrap_or_else(|| m.question.clone()),
            description: self.description.unwrap_or_else(|| m.description.clone()),
            tags: self.tags.unwrap_or_else(|| m.tags.clone()),
            images: self.images.unwrap_or_else(|| m.images.clone()),
            category: metadata_text(&metadata, "category"),
            resolution_source: metadata_text(&metadata, "resolution_source").or_else(|| m.resolution_source.clone()),
            metadata: Json::Object(metadata),
            min_bet: self.min_bet.unwrap_or(m.min_bet),
            max_bet: self.max_bet.unwrap_or(m.max_bet),
            ends_at: self.ends_at.unwrap_or(m.ends_at),
            creator_fee: self.creator_fee.unwrap_or(m.creator_fee),
        };
        let mut v = Validator::default();
        if merged.min_bet > merged.max_bet {
            v.push("min_bet_amount", "must not exceed max_bet_amount");
        }
        if merged.ends_at <= m.starts_at {
            v.push("ends_at", "must be after starts_at");
        }
        if merged.creator_fee + m.platform_fee > MAX_TOTAL_FEE_UNITS {
            v.push("creator_fee_percentage", "creator and platform fees together must not exceed 50");
        }
        v.finish()?;
        Ok(merged)
    }
}

#[derive(Clone, Debug, Default)]
pub(crate) struct OutcomePatch {
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) images: Option<Json>,
    pub(crate) index: Option<i64>,
}

impl OutcomeUpdateInput {
    pub(crate) fn into_patch(self) -> Result<OutcomePatch> {
        let mut v = Validator::default();
        if self.title.is_some() {
            text_field(self.title.as_deref(), "title", 200, true, &mut v);
        }
        text_field(self.description.as_deref(), "description", MAX_TEXT, false, &mut v);
        images_field(self.images.as_ref(), "images", &mut v);
        if let Some(i) = self.outcome_index {
            v.check((0..=1_000_000).contains(&i), "outcome_index", "must be between 0 and 1000000");
        }
        v.finish()?;
        Ok(OutcomePatch {
            title: self.title.map(|t| t.trim().to_string()),
            description: self.description,
            images: self.images.map(Json::Object),
            index: self.outcome_index,
        })
    }
}

#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
pub(crate) struct MarketFilters {
    pub(crate) provider_id: Option<String>,
    pub(crate) token_id: Option<String>,
    #[schema(value_type = Option<MarketStatus>)]
    pub(crate) status: Option<String>,
    pub(crate) category: Option<String>,
    /// Case-insensitive match on question and description.
    #[schema(max_length = 200)]
    pub(crate) search_query: Option<String>,
}

impl super::page::Searchable for MarketFilters {
    const SORT_FIELDS: &'static [&'static str] = &["created_at", "closes_at", "total_volume", "question"];
}

#[derive(Debug)]
pub(crate) struct SearchMarkets {
    pub(crate) provider_id: Option<String>,
    pub(crate) token_id: Option<String>,
    pub(crate) status: Option<String>,
    pub(crate) category: Option<String>,
    pub(crate) search_query: Option<String>,
    pub(crate) page: PageRequest,
    pub(crate) sort: Sort,
}

impl SearchRequest<MarketFilters> {
    pub(crate) fn validate_markets(self) -> Result<SearchMarkets> {
        let mut v = Validator::default();
        let (page, sort) = self.paging(&mut v);
        let f = self.filters.unwrap_or_default();
        if let Some(s) = f.status.as_deref() {
            if MarketStatus::parse(s).is_none() {
                v.push("filters.status", "must be one of: active, closed, resolved, cancelled");
            }
        }
        if f.search_query.as_deref().is_some_and(|q| q.chars().count() > 200) {
            v.push("filters.search_query", "must be at most 200 characters");
        }
        v.finish()?;
        Ok(SearchMarkets {
            provider_id: f.provider_id,
            token_id: f.token_id,
            status: f.status,
            category: f.category,
            search_query: f.search_query.filter(|q| !q.is_empty()),
            page,
            sort,
        })
    }
}
