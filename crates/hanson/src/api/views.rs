//! JSON shapes of markets and outcomes (spec part 2, with CONTRACT's extra fields).

use serde_json::{json, Value as Json};

use crate::domain::fees::percentage_json;
use crate::domain::money::Wei;
use crate::domain::time::{format_micros, Micros};
use crate::error::Result;
use crate::store::markets::{MarketRecord, OutcomeRecord};

fn outcome_json(o: &OutcomeRecord, price: lmsr::Price, detail: bool) -> Json {
    let mut v = json!({
        "id": o.id,
        "title": o.title,
        "description": o.description,
        "images": o.images,
        "outcome_index": o.index,
        "current_price": price.to_string(),
        "total_shares": Wei(o.total_shares),
    });
    if detail {
        v["total_volume"] = json!(Wei(o.total_volume));
    }
    v
}

/// Outcome as returned by provider operations.
pub fn outcome(m: &MarketRecord, outcome_id: &str) -> Result<Json> {
    let prices = m.prices()?;
    let (o, price) = m
        .outcomes
        .iter()
        .zip(prices)
        .find(|(o, _)| o.id == outcome_id)
        .ok_or(crate::error::Error::NotFound)?;
    Ok(outcome_json(o, price, false))
}

/// Search result item.
pub fn market_summary(m: &MarketRecord, now: Micros) -> Result<Json> {
    let prices = m.prices()?;
    Ok(json!({
        "id": m.id,
        "question": m.question,
        "description": m.description,
        "category": m.category,
        "status": m.status(now),
        "total_pool": Wei(m.pool),
        "total_volume": Wei(m.total_volume),
        "outcomes": m.outcomes.iter().zip(prices).map(|(o, p)| outcome_json(o, p, false)).collect::<Vec<_>>(),
        "token": { "id": m.token.id, "symbol": m.token.symbol, "name": m.token.name },
        "provider": { "id": m.provider_id, "name": m.provider_name },
        "created_at": format_micros(m.created_at),
        "closes_at": format_micros(m.ends_at),
    }))
}

/// Market detail: every summary field plus the kept creation fields.
pub fn market_detail(m: &MarketRecord, now: Micros) -> Result<Json> {
    let prices = m.prices()?;
    let settled_at = m.settled_at.map(format_micros);
    Ok(json!({
        "id": m.id,
        "question": m.question,
        "description": m.description,
        "category": m.category,
        "status": m.status(now),
        "total_pool": Wei(m.pool),
        "total_volume": Wei(m.total_volume),
        "outcomes": m.outcomes.iter().zip(prices).map(|(o, p)| outcome_json(o, p, true)).collect::<Vec<_>>(),
        "token": { "id": m.token.id, "symbol": m.token.symbol, "name": m.token.name, "decimals": m.token.decimals },
        "provider": { "id": m.provider_id, "name": m.provider_name },
        "created_at": format_micros(m.created_at),
        "closes_at": format_micros(m.ends_at),
        "resolution_source": m.resolution_source,
        "minimum_bet": Wei(m.min_bet),
        "game_id": m.game_id,
        "tags": m.tags,
        "images": m.images,
        "metadata": m.metadata,
        "pricing_method": m.pricing_method,
        "min_bet_amount": Wei(m.min_bet),
        "max_bet_amount": Wei(m.max_bet),
        "liquidity": Wei(m.liquidity),
        "b": Wei(m.b),
        "creator_wallet_id": m.creator_wallet_id,
        "creator_fee_percentage": percentage_json(m.creator_fee),
        "platform_fee_percentage": percentage_json(m.platform_fee),
        "starts_at": format_micros(m.starts_at),
        "ends_at": format_micros(m.ends_at),
        "updated_at": format_micros(m.updated_at),
        "winning_outcome_id": m.winning_outcome_id,
        "resolved_at": if m.stored_status == "resolved" { settled_at.clone() } else { None },
        "cancelled_at": if m.stored_status == "cancelled" { settled_at } else { None },
    }))
}
