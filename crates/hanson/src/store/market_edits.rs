//! Creating and changing markets and outcomes: creation funded from the provider's
//! treasury, partial updates, outcomes added (funded when the market has trades).

use super::markets::{market, provider_market};
use crate::domain::event::Event;
use crate::domain::ids::OutcomeId;
use crate::domain::ledger::{pool_account, treasury_account, Account, Transfer};
use crate::domain::market::Market;
use crate::domain::market_input::{MarketPatch, NewMarket, NewOutcome, OutcomePatch};
use crate::domain::time::Micros;
use crate::error::{Error, Result};
use crate::store::history::points;
use crate::store::sql::{Conn, Param};
use crate::store::tx::Tx;
use crate::store::{ledger, tenants};

fn insert_outcome(c: &mut dyn Conn, market_id: &str, o: &NewOutcome) -> Result<()> {
    c.exec(
        "INSERT INTO outcomes (id, market_id, outcome_index, title, description, images, total_shares, total_volume) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        &[
            Param::Text(&o.id),
            Param::Text(market_id),
            Param::Int(o.index),
            Param::Text(&o.title),
            Param::Text(&o.description),
            Param::Text(&o.images.to_string()),
            Param::Money(0),
            Param::Money(0),
        ],
    )?;
    Ok(())
}

pub(crate) fn create_market(c: &mut Tx<'_>, m: NewMarket, now: Micros) -> Result<Market> {
    if tenants::token(c, &m.token_id)?.is_none() {
        return Err(Error::rule_on("unknown_token", "token_id", "no such token"));
    }
    match tenants::wallet_by_id(c, &m.creator_wallet_id)? {
        Some(w) if w.provider_id == m.provider_id => {}
        _ => {
            return Err(Error::invalid("creator_wallet_id", "no such wallet in this provider's tenant"));
        }
    }
    let b = lmsr::liquidity_parameter(m.liquidity, m.outcomes.len())
        .map_err(|_| Error::invalid("liquidity", "too small for this many outcomes"))?;
    c.exec(
        "INSERT INTO markets (id, provider_id, game_id, question, question_lower, description, description_lower, \
         category, resolution_source, tags, images, metadata, pricing_method, token_id, min_bet, max_bet, liquidity, b, \
         starts_at, ends_at, creator_wallet_id, creator_fee, platform_fee, status, total_volume, trade_count, \
         created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, \
         $23, 'active', $24, 0, $25, $25)",
        &[
            Param::Text(&m.id),
            Param::Text(&m.provider_id),
            (&m.game_id).into(),
            Param::Text(&m.question),
            Param::Text(&m.question.to_lowercase()),
            Param::Text(&m.description),
            Param::Text(&m.description.to_lowercase()),
            m.category().into(),
            m.resolution_source().into(),
            Param::Text(&m.tags.to_string()),
            Param::Text(&m.images.to_string()),
            Param::Text(&m.metadata.to_string()),
            Param::Text("lmsr"),
            Param::Text(&m.token_id),
            Param::Money(m.min_bet),
            Param::Money(m.max_bet),
            Param::Money(m.liquidity),
            Param::Money(b),
            Param::Int(m.starts_at),
            Param::Int(m.ends_at),
            Param::Text(&m.creator_wallet_id),
            Param::Int(i64::from(m.creator_fee)),
            Param::Int(i64::from(m.platform_fee)),
            Param::Money(0),
            Param::Int(now),
        ],
    )?;
    for o in &m.outcomes {
        insert_outcome(c, &m.id, o)?;
    }
    let (treasury, pool) = (treasury_account(&m.provider_id, &m.token_id), pool_account(&m.id));
    let funding = Transfer {
        kind: "market_funding",
        from: Some(Account::treasury(&treasury, &m.provider_id)),
        to: Some(Account::pool(&pool, &m.id)),
        token_id: &m.token_id,
        amount: m.liquidity,
        reference_id: Some(&m.id),
        at: now,
    };
    ledger::transfer(c, funding).map_err(|e| ledger::client_error(e, "insufficient_treasury", "treasury"))?;
    let created = market(c, &m.id, false)?.ok_or_else(|| Error::internal("created market vanished"))?;
    mark_prices(c, &created, now)?;
    c.emit(Event::MarketCreated(created.clone()));
    Ok(created)
}

/// Every outcome's price now, as the start of the candles' series or a move without a trade.
fn mark_prices(c: &mut dyn Conn, m: &Market, at: Micros) -> Result<()> {
    let prices = m.prices()?;
    let marks: Vec<(&str, u128)> = m.outcomes.iter().zip(&prices).map(|(o, p)| (o.id.as_str(), p.raw())).collect();
    points::record_marks(c, &m.id, &marks, at)
}

fn ensure_editable(m: &Market) -> Result<()> {
    if m.is_settled() {
        return Err(Error::conflict("market_settled", format!("the market is {}", m.stored_status)));
    }
    Ok(())
}

pub(crate) fn update_market(c: &mut Tx<'_>, provider_id: &str, id: &str, patch: MarketPatch, now: Micros) -> Result<Market> {
    let m = provider_market(c, provider_id, id)?;
    ensure_editable(&m)?;
    let merged = patch.apply_to(&m)?;
    c.exec(
        "UPDATE markets SET question = $1, question_lower = $2, description = $3, description_lower = $4, tags = $5, \
         images = $6, metadata = $7, category = $8, resolution_source = $9, min_bet = $10, max_bet = $11, ends_at = $12, \
         creator_fee = $13, updated_at = $14 WHERE id = $15",
        &[
            Param::Text(&merged.question),
            Param::Text(&merged.question.to_lowercase()),
            Param::Text(&merged.description),
            Param::Text(&merged.description.to_lowercase()),
            Param::Text(&merged.tags.to_string()),
            Param::Text(&merged.images.to_string()),
            Param::Text(&merged.metadata.to_string()),
            (&merged.category).into(),
            (&merged.resolution_source).into(),
            Param::Money(merged.min_bet),
            Param::Money(merged.max_bet),
            Param::Int(merged.ends_at),
            Param::Int(i64::from(merged.creator_fee)),
            Param::Int(now),
            Param::Text(id),
        ],
    )?;
    let updated = market(c, id, false)?.ok_or_else(|| Error::internal("updated market vanished"))?;
    c.emit(Event::MarketUpdated(updated.clone()));
    if merged.ends_at != m.ends_at {
        // A new closing time is announced anew when it passes; one already past, now.
        let passed = merged.ends_at <= now;
        c.exec("UPDATE markets SET close_announced = $1 WHERE id = $2", &[Param::Int(i64::from(passed)), Param::Text(id)])?;
        if passed {
            c.emit(Event::MarketClosed { market_id: updated.id.clone(), closes_at: merged.ends_at });
        }
    }
    Ok(updated)
}

/// Adds an outcome. Before the first trade, b is recomputed for n+1 outcomes (all prices
/// become 1/(n+1)); after trades, b stays and the provider's treasury funds the extra
/// worst-case loss into the pool, so solvency holds either way.
pub(crate) fn create_outcome(c: &mut Tx<'_>, provider_id: &str, market_id: &str, o: NewOutcome, now: Micros) -> Result<(Market, String)> {
    let m = provider_market(c, provider_id, market_id)?;
    ensure_editable(&m)?;
    if m.outcomes.len() >= lmsr::MAX_OUTCOMES {
        return Err(Error::invalid("outcome_index", "a market has at most 64 outcomes"));
    }
    if m.outcomes.iter().any(|x| x.index == o.index) {
        return Err(Error::invalid("outcome_index", "another outcome of this market has this index"));
    }
    if m.trade_count == 0 {
        let b = lmsr::liquidity_parameter(m.liquidity, m.outcomes.len() + 1)
            .map_err(|_| Error::invalid("outcome_index", "liquidity too small for another outcome"))?;
        c.exec("UPDATE markets SET b = $1, updated_at = $2 WHERE id = $3", &[Param::Money(b), Param::Int(now), Param::Text(market_id)])?;
    } else {
        let extra = lmsr::add_outcome_cost(m.b, &m.shares()).map_err(|e| Error::internal(format!("add_outcome_cost: {e}")))?;
        let (treasury, pool) = (treasury_account(provider_id, &m.token.id), pool_account(market_id));
        let funding = Transfer {
            kind: "outcome_funding",
            from: Some(Account::treasury(&treasury, provider_id)),
            to: Some(Account::pool(&pool, market_id)),
            token_id: &m.token.id,
            amount: extra,
            reference_id: Some(&o.id),
            at: now,
        };
        ledger::transfer(c, funding).map_err(|e| ledger::client_error(e, "insufficient_treasury", "treasury"))?;
        c.exec(
            "UPDATE markets SET liquidity = $1, updated_at = $2 WHERE id = $3",
            &[
                Param::Money(m.liquidity.checked_add(extra).ok_or_else(|| Error::rule("amount_too_large", "liquidity overflow"))?),
                Param::Int(now),
                Param::Text(market_id),
            ],
        )?;
    }
    insert_outcome(c, market_id, &o)?;
    let at = now.max(m.updated_at);
    let m = market(c, market_id, false)?.ok_or_else(|| Error::internal("market vanished"))?;
    mark_prices(c, &m, at)?;
    c.emit(Event::OutcomeCreated { market: m.clone(), outcome_id: OutcomeId::from(o.id.as_str()) });
    Ok((m, o.id))
}

pub(crate) fn update_outcome(
    c: &mut Tx<'_>,
    provider_id: &str,
    market_id: &str,
    outcome_id: &str,
    patch: OutcomePatch,
    now: Micros,
) -> Result<Market> {
    let m = provider_market(c, provider_id, market_id)?;
    ensure_editable(&m)?;
    let current = m.outcomes.iter().find(|o| o.id == outcome_id).ok_or(Error::NotFound)?;
    if let Some(index) = patch.index {
        if m.outcomes.iter().any(|o| o.index == index && o.id != outcome_id) {
            return Err(Error::invalid("outcome_index", "another outcome of this market has this index"));
        }
    }
    c.exec(
        "UPDATE outcomes SET title = $1, description = $2, images = $3, outcome_index = $4 WHERE id = $5",
        &[
            Param::Text(patch.title.as_deref().unwrap_or(&current.title)),
            Param::Text(patch.description.as_deref().unwrap_or(&current.description)),
            Param::Text(&patch.images.as_ref().unwrap_or(&current.images).to_string()),
            Param::Int(patch.index.unwrap_or(current.index)),
            Param::Text(outcome_id),
        ],
    )?;
    c.exec("UPDATE markets SET updated_at = $1 WHERE id = $2", &[Param::Int(now), Param::Text(market_id)])?;
    let m = market(c, market_id, false)?.ok_or_else(|| Error::internal("market vanished"))?;
    c.emit(Event::OutcomeUpdated { market: m.clone(), outcome_id: OutcomeId::from(outcome_id) });
    Ok(m)
}

/// Pauses trading on a market: bets, sells and their previews answer 409 `market_paused`
/// until it resumes. Pausing a paused market changes nothing (its first pause stands).
pub(crate) fn pause(c: &mut Tx<'_>, provider_id: &str, id: &str, reason: &str, now: Micros) -> Result<Market> {
    let m = provider_market(c, provider_id, id)?;
    ensure_editable(&m)?;
    if m.paused_at.is_some() {
        return Ok(m);
    }
    // The row's revision moves with the update: search caches and the trade batches' market
    // copies see the pause from the next read on.
    c.exec(
        "UPDATE markets SET paused_at = $1, paused_reason = $2, updated_at = $1 WHERE id = $3",
        &[Param::Int(now.max(m.updated_at)), Param::Text(reason), Param::Text(id)],
    )?;
    let paused = market(c, id, false)?.ok_or_else(|| Error::internal("paused market vanished"))?;
    c.emit(Event::MarketUpdated(paused.clone()));
    Ok(paused)
}

/// Resumes trading on a paused market; resuming one that is not paused changes nothing.
pub(crate) fn resume(c: &mut Tx<'_>, provider_id: &str, id: &str, now: Micros) -> Result<Market> {
    let m = provider_market(c, provider_id, id)?;
    ensure_editable(&m)?;
    if m.paused_at.is_none() {
        return Ok(m);
    }
    c.exec(
        "UPDATE markets SET paused_at = NULL, paused_reason = NULL, updated_at = $1 WHERE id = $2",
        &[Param::Int(now.max(m.updated_at)), Param::Text(id)],
    )?;
    let resumed = market(c, id, false)?.ok_or_else(|| Error::internal("resumed market vanished"))?;
    c.emit(Event::MarketUpdated(resumed.clone()));
    Ok(resumed)
}
