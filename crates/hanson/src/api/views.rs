//! JSON shapes of markets and outcomes (spec part 2, with CONTRACT's extra fields).

use serde_json::{json, Value as Json};

use crate::domain::fees::percentage_json;
use crate::domain::money::Wei;
use crate::domain::time::{format_micros, Micros};
use crate::error::Result;
use crate::store::markets::{MarketRecord, OutcomeRecord};

pub fn outcome_json(o: &OutcomeRecord, price: lmsr::Price, detail: bool) -> Json {
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

/// Search result item; with `detail`, outcomes also carry their volume and the token its
/// decimals (the detail view builds on this).
fn market_core(m: &MarketRecord, now: Micros, detail: bool) -> Result<Json> {
    let prices = m.prices()?;
    let mut token = json!({ "id": m.token.id, "symbol": m.token.symbol, "name": m.token.name });
    if detail {
        token["decimals"] = json!(m.token.decimals);
    }
    Ok(json!({
        "id": m.id,
        "question": m.question,
        "description": m.description,
        "category": m.category,
        "status": m.status(now),
        "total_pool": Wei(m.pool),
        "total_volume": Wei(m.total_volume),
        "outcomes": m.outcomes.iter().zip(prices).map(|(o, p)| outcome_json(o, p, detail)).collect::<Vec<_>>(),
        "token": token,
        "provider": { "id": m.provider_id, "name": m.provider_name },
        "created_at": format_micros(m.created_at),
        "closes_at": format_micros(m.ends_at),
    }))
}

pub fn market_summary(m: &MarketRecord, now: Micros) -> Result<Json> {
    market_core(m, now, false)
}

/// Market detail: every summary field plus the kept creation fields.
pub fn market_detail(m: &MarketRecord, now: Micros) -> Result<Json> {
    let mut v = market_core(m, now, true)?;
    let settled_at = m.settled_at.map(format_micros);
    let extra = json!({
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
    });
    if let (Some(target), Json::Object(fields)) = (v.as_object_mut(), extra) {
        target.extend(fields);
    }
    Ok(v)
}
