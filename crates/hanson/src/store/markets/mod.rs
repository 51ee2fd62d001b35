//! Markets and outcomes as stored: reading them (with their outcomes and pools), and the
//! totals trades write. `market_edits` creates and changes them; `search` finds them.

pub(crate) mod search;

use std::collections::HashMap;

use serde_json::Value as Json;

use crate::domain::ids::{MarketId, OutcomeId};
use crate::domain::ledger::pool_account;
use crate::domain::market::{Market, MarketStatus, Outcome};
use crate::domain::tenant::Token;
use crate::error::{Error, Result};
use crate::store::sql::{id_list, placeholders, value_rows, Conn, FromRow, Param, Row};

const MARKET_COLUMNS: &str = "m.id, m.provider_id, p.name, m.game_id, m.question, m.description, m.category, \
    m.resolution_source, m.tags, m.images, m.metadata, m.pricing_method, \
    t.id, t.symbol, t.name, t.decimals, \
    m.min_bet, m.max_bet, m.liquidity, m.b, m.starts_at, m.ends_at, m.creator_wallet_id, \
    m.creator_fee, m.platform_fee, m.status, m.total_volume, m.trade_count, m.winning_outcome_id, \
    m.settled_at, m.created_at, m.updated_at, m.revision, m.paused_at, m.paused_reason, m.final_at, m.finalized";

const MARKET_FROM: &str = "FROM markets m JOIN providers p ON p.id = m.provider_id JOIN tokens t ON t.id = m.token_id";

fn json_column(r: &Row, i: usize) -> Result<Json> {
    serde_json::from_str(&r.text(i)?).map_err(Error::internal)
}

/// A market's stored status column.
pub(crate) fn stored_status(r: &Row, i: usize) -> Result<MarketStatus> {
    let text = r.text(i)?;
    MarketStatus::parse(&text).ok_or_else(|| Error::internal(format!("unknown market status {text:?}")))
}

impl FromRow for Market {
    fn from_row(r: &Row) -> Result<Market> {
        Ok(Market {
            id: r.text(0)?.into(),
            provider_id: r.text(1)?.into(),
            provider_name: r.text(2)?,
            game_id: r.opt_text(3)?,
            question: r.text(4)?,
            description: r.text(5)?,
            category: r.opt_text(6)?,
            resolution_source: r.opt_text(7)?,
            tags: json_column(r, 8)?,
            images: json_column(r, 9)?,
            metadata: json_column(r, 10)?,
            pricing_method: r.text(11)?,
            token: Token { id: r.text(12)?, symbol: r.text(13)?, name: r.text(14)?, decimals: r.int(15)? },
            min_bet: r.money(16)?,
            max_bet: r.money(17)?,
            liquidity: r.money(18)?,
            b: r.money(19)?,
            starts_at: r.int(20)?,
            ends_at: r.int(21)?,
            creator_wallet_id: r.text(22)?.into(),
            creator_fee: r.int(23)? as u32,
            platform_fee: r.int(24)? as u32,
            stored_status: stored_status(r, 25)?,
            total_volume: r.money(26)?,
            trade_count: r.int(27)?,
            winning_outcome_id: r.opt_text(28)?.map(OutcomeId),
            settled_at: r.opt_int(29)?,
            created_at: r.int(30)?,
            updated_at: r.int(31)?,
            revision: r.int(32)?,
            paused_at: r.opt_int(33)?,
            paused_reason: r.opt_text(34)?,
            final_at: r.opt_int(35)?,
            finalized: r.int(36)? != 0,
            pool: 0,
            outcomes: Vec::new(),
        })
    }
}

impl FromRow for Outcome {
    fn from_row(r: &Row) -> Result<Outcome> {
        Ok(Outcome {
            id: r.text(0)?.into(),
            market_id: r.text(1)?.into(),
            index: r.int(2)?,
            title: r.text(3)?,
            description: r.text(4)?,
            images: json_column(r, 5)?,
            total_shares: r.money(6)?,
            total_volume: r.money(7)?,
        })
    }
}

/// The statements reading markets' outcomes and pools; `pools` are the markets' pool
/// accounts.
fn details_reads<'a>(ids: &'a [&'a str], pools: &'a [String]) -> Vec<(String, Vec<Param<'a>>)> {
    let (outcome_list, outcome_params) = id_list(ids);
    let (pool_list, pool_params) = id_list(pools);
    vec![
        (
            format!(
                "SELECT id, market_id, outcome_index, title, description, images, total_shares, total_volume \
                 FROM outcomes WHERE market_id IN ({outcome_list}) ORDER BY market_id, outcome_index"
            ),
            outcome_params,
        ),
        (format!("SELECT id, balance FROM accounts WHERE id IN ({pool_list})"), pool_params),
    ]
}

/// `markets` with the outcomes and pool balances `details_reads` returned.
fn with_details(mut markets: Vec<Market>, outcome_rows: &[Row], pool_rows: &[Row]) -> Result<Vec<Market>> {
    let mut outcomes: HashMap<MarketId, Vec<Outcome>> = HashMap::new();
    for row in outcome_rows {
        let o = Outcome::from_row(row)?;
        outcomes.entry(o.market_id.clone()).or_default().push(o);
    }
    let mut balances: HashMap<String, u128> = HashMap::new();
    for row in pool_rows {
        balances.insert(row.text(0)?, row.money(1)?);
    }
    for m in markets.iter_mut() {
        m.outcomes = outcomes.remove(&m.id).unwrap_or_default();
        m.pool = balances.get(&pool_account(&m.id)).copied().unwrap_or(0);
    }
    Ok(markets)
}

/// A market with its outcomes and pool; `lock` takes the row lock where the dialect has one.
pub(crate) fn market(c: &mut dyn Conn, id: &str, lock: bool) -> Result<Option<Market>> {
    Ok(markets_by_id(c, &[id], lock)?.pop())
}

/// The markets among `ids` that exist, with their outcomes and pools, in no set order;
/// `lock` takes their row locks (in id order, so two writers locking overlapping sets cannot
/// each hold one the other waits for) where the dialect has them. One round trip.
pub(crate) fn markets_by_id(c: &mut dyn Conn, ids: &[&str], lock: bool) -> Result<Vec<Market>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let pools: Vec<String> = ids.iter().map(|id| pool_account(id)).collect();
    let reads = markets_by_id_reads(c, ids, &pools, lock);
    markets_from(c.query_all(&reads)?)
}

/// The statements of [`markets_by_id`], for a caller that sends more with them in one round
/// trip; `pools` are the markets' pool accounts ([`pool_account`]). Their rows, in
/// order, are [`markets_from`]'s.
fn markets_by_id_reads<'a>(c: &dyn Conn, ids: &'a [&'a str], pools: &'a [String], lock: bool) -> Vec<(String, Vec<Param<'a>>)> {
    let (list, params) = id_list(ids);
    let mut reads = Vec::with_capacity(4);
    // SQLite's single writer already serializes: nothing to lock there.
    let lock_clause = c.lock_clause();
    if lock && !lock_clause.is_empty() {
        reads.push((format!("SELECT id FROM markets WHERE id IN ({list}) ORDER BY id{lock_clause}"), params.clone()));
    }
    reads.push((format!("SELECT {MARKET_COLUMNS} {MARKET_FROM} WHERE m.id IN ({list})"), params));
    reads.extend(details_reads(ids, pools));
    reads
}

/// The markets whose rows [`markets_by_id_reads`]' statements returned.
pub(crate) fn markets_from(mut rows: Vec<Vec<Row>>) -> Result<Vec<Market>> {
    // The lock's rows, if it was read, come first and say nothing more.
    let last = rows.split_off(rows.len().saturating_sub(3));
    let [market_rows, outcome_rows, pool_rows] = <[Vec<Row>; 3]>::try_from(last).map_err(|_| Error::internal("the markets' reads"))?;
    let markets = market_rows.iter().map(Market::from_row).collect::<Result<Vec<_>>>()?;
    with_details(markets, &outcome_rows, &pool_rows)
}

/// A trade batch's reads of its markets (PostgreSQL), which lock them in id order: each id
/// (sorted) with the revision of the copy the batch thread keeps of it, or -1 where it has
/// none. Only markets stored at another revision come back, with their outcomes, so a copy is
/// used only while it is the stored row (the lock keeps it so). Pools are not read: they are
/// among the balances a batch reads. Their rows, in order, are [`changed_markets_from`]'s.
pub(crate) fn changed_markets_reads<'a>(markets: &'a [(&'a str, i64)]) -> Vec<(String, Vec<Param<'a>>)> {
    let padded = markets.len().next_power_of_two();
    // The lock's list padded as `id_list` pads it (repeating the last id).
    let last = markets.last().map_or("", |(id, _)| *id);
    let lock_params: Vec<Param<'a>> =
        markets.iter().map(|(id, _)| *id).chain(std::iter::repeat(last)).take(padded).map(Param::Text).collect();
    // The revisions' list padded with a row that matches no market: a repeated row would
    // return its market twice.
    let padding = std::iter::repeat_n(("", -1), padded - markets.len());
    let pair_params: Vec<Param<'a>> =
        markets.iter().copied().chain(padding).flat_map(|(id, revision)| [Param::Text(id), Param::Int(revision)]).collect();
    let changed = format!("WITH k(id, revision) AS (VALUES {})", value_rows(padded, 2));
    vec![
        (format!("SELECT id FROM markets WHERE id IN ({}) ORDER BY id FOR UPDATE", placeholders(1, padded)), lock_params),
        (
            format!("{changed} SELECT {MARKET_COLUMNS} {MARKET_FROM} JOIN k ON k.id = m.id WHERE m.revision <> k.revision"),
            pair_params.clone(),
        ),
        (
            format!(
                "{changed} SELECT o.id, o.market_id, o.outcome_index, o.title, o.description, o.images, o.total_shares, o.total_volume \
                 FROM k JOIN markets m ON m.id = k.id JOIN outcomes o ON o.market_id = m.id WHERE m.revision <> k.revision \
                 ORDER BY o.market_id, o.outcome_index"
            ),
            pair_params,
        ),
    ]
}

/// The markets [`changed_markets_reads`] returned, with their outcomes; their pools are 0.
pub(crate) fn changed_markets_from(rows: Vec<Vec<Row>>) -> Result<Vec<Market>> {
    let [_lock, market_rows, outcome_rows] = <[Vec<Row>; 3]>::try_from(rows).map_err(|_| Error::internal("the markets' reads"))?;
    let markets = market_rows.iter().map(Market::from_row).collect::<Result<Vec<_>>>()?;
    with_details(markets, &outcome_rows, &[])
}

/// The provider's own market, or 404 (another provider's market is invisible).
pub(crate) fn provider_market(c: &mut dyn Conn, provider_id: &str, id: &str) -> Result<Market> {
    match market(c, id, true)? {
        Some(m) if m.provider_id == provider_id => Ok(m),
        _ => Err(Error::NotFound),
    }
}

/// The market an outcome belongs to, and the outcome's position in it.
pub(crate) fn market_of_outcome(c: &mut dyn Conn, outcome_id: &str) -> Result<Option<(Market, usize)>> {
    let Some(row) = c.query_opt("SELECT market_id FROM outcomes WHERE id = $1", &[Param::Text(outcome_id)])? else {
        return Ok(None);
    };
    let market_id = row.text(0)?;
    let Some(m) = market(c, &market_id, false)? else { return Ok(None) };
    let position = m.outcomes.iter().position(|o| o.id == outcome_id);
    Ok(position.map(|p| (m, p)))
}

/// Stores a market's totals after `trades` more trades, and those of `outcomes` (of it).
pub(crate) fn write_totals(c: &mut dyn Conn, m: &Market, outcomes: &[&Outcome], trades: i64) -> Result<()> {
    for o in outcomes {
        c.exec_later(
            "UPDATE outcomes SET total_shares = $1, total_volume = $2 WHERE id = $3",
            &[Param::Money(o.total_shares), Param::Money(o.total_volume), Param::Text(&o.id)],
        )?;
    }
    // Bumping the revision here spares the trigger a second write of the row.
    c.exec_later(
        "UPDATE markets SET total_volume = $1, trade_count = trade_count + $2, updated_at = $3, revision = revision + 1 WHERE id = $4",
        &[Param::Money(m.total_volume), Param::Int(trades), Param::Int(m.updated_at), Param::Text(&m.id)],
    )?;
    Ok(())
}

/// [`write_totals`] of several markets and `outcomes` of theirs, a statement per table.
pub(crate) fn write_totals_of(c: &mut dyn Conn, outcomes: &[&Outcome], markets: &[(&Market, i64)]) -> Result<()> {
    if markets.is_empty() {
        return Ok(());
    }
    if !outcomes.is_empty() {
        let mut params: Vec<Param<'_>> = Vec::with_capacity(outcomes.len() * 3);
        for o in outcomes {
            params.extend([Param::Text(&o.id), Param::Money(o.total_shares), Param::Money(o.total_volume)]);
        }
        c.exec_later(
            &format!(
                "WITH v(id, total_shares, total_volume) AS (VALUES {}) \
                 UPDATE outcomes SET total_shares = v.total_shares, total_volume = v.total_volume FROM v WHERE outcomes.id = v.id",
                value_rows(outcomes.len(), 3)
            ),
            &params,
        )?;
    }
    let mut params: Vec<Param<'_>> = Vec::with_capacity(markets.len() * 4);
    for (m, trades) in markets {
        params.extend([Param::Text(&m.id), Param::Money(m.total_volume), Param::Int(*trades), Param::Int(m.updated_at)]);
    }
    c.exec_later(
        &format!(
            "WITH v(id, total_volume, trades, updated_at) AS (VALUES {}) \
             UPDATE markets SET total_volume = v.total_volume, trade_count = trade_count + v.trades, updated_at = v.updated_at, \
             revision = revision + 1 FROM v WHERE markets.id = v.id",
            value_rows(markets.len(), 4)
        ),
        &params,
    )
}

/// The settlement terms of a resolved market: (numerator, denominator) per winning share.
pub(crate) fn payout_terms(c: &mut dyn Conn, market_id: &str) -> Result<(u128, u128)> {
    let row = c.query_one("SELECT payout_num, payout_den FROM markets WHERE id = $1", &[Param::Text(market_id)])?;
    Ok((row.opt_money(0)?.unwrap_or(1), row.opt_money(1)?.unwrap_or(1)))
}
