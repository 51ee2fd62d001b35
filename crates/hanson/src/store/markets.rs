//! Markets and outcomes: creation (funded from the provider's treasury), partial updates,
//! reads and search.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value as Json;

use super::ledger::{self, Account, Kind, Transfer};
use super::sql::{id_list, placeholders, value_rows, Conn, Dialect, FromRow, Param, Row};
use super::shared_read::SharedRead;
use super::tenants;
use super::Store;
use crate::domain::event::Event;
use crate::domain::ids::{MarketId, OutcomeId};
use crate::domain::market::{derived_status, Market, MarketStatus, Outcome};
use crate::domain::tenant::Token;
use crate::domain::market::{MarketPatch, NewMarket, NewOutcome, OutcomePatch, SearchMarkets};
use crate::domain::page::{Direction, Page, PageRequest};
use crate::domain::time::Micros;
use crate::error::{Error, Result};

const MARKET_COLUMNS: &str = "m.id, m.provider_id, p.name, m.game_id, m.question, m.description, m.category, \
    m.resolution_source, m.tags, m.images, m.metadata, m.pricing_method, \
    t.id, t.symbol, t.name, t.decimals, \
    m.min_bet, m.max_bet, m.liquidity, m.b, m.starts_at, m.ends_at, m.creator_wallet_id, \
    m.creator_fee, m.platform_fee, m.status, m.total_volume, m.trade_count, m.winning_outcome_id, \
    m.settled_at, m.created_at, m.updated_at, m.revision";
const MARKET_FROM: &str = "FROM markets m JOIN providers p ON p.id = m.provider_id JOIN tokens t ON t.id = m.token_id";

fn json_column(r: &Row, i: usize) -> Result<Json> {
    serde_json::from_str(&r.text(i)?).map_err(Error::internal)
}

/// A market's stored status column.
pub fn stored_status(r: &Row, i: usize) -> Result<MarketStatus> {
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
        m.pool = balances.get(&ledger::pool_account(&m.id)).copied().unwrap_or(0);
    }
    Ok(markets)
}

/// A market with its outcomes and pool; `lock` takes the row lock where the dialect has one.
pub fn market(c: &mut dyn Conn, id: &str, lock: bool) -> Result<Option<Market>> {
    Ok(markets_by_id(c, &[id], lock)?.pop())
}

/// The markets among `ids` that exist, with their outcomes and pools, in no set order;
/// `lock` takes their row locks (in id order, so two writers locking overlapping sets cannot
/// each hold one the other waits for) where the dialect has them. One round trip.
pub fn markets_by_id(c: &mut dyn Conn, ids: &[&str], lock: bool) -> Result<Vec<Market>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let pools: Vec<String> = ids.iter().map(|id| ledger::pool_account(id)).collect();
    let reads = markets_by_id_reads(c, ids, &pools, lock);
    markets_from(c.query_all(&reads)?)
}

/// The statements of [`markets_by_id`], for a caller that sends more with them in one round
/// trip; `pools` are the markets' pool accounts ([`ledger::pool_account`]). Their rows, in
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
pub fn markets_from(mut rows: Vec<Vec<Row>>) -> Result<Vec<Market>> {
    // The lock's rows, if it was read, come first and say nothing more.
    let last = rows.split_off(rows.len().saturating_sub(3));
    let [market_rows, outcome_rows, pool_rows] =
        <[Vec<Row>; 3]>::try_from(last).map_err(|_| Error::internal("the markets' reads"))?;
    let markets = market_rows.iter().map(Market::from_row).collect::<Result<Vec<_>>>()?;
    with_details(markets, &outcome_rows, &pool_rows)
}

/// A trade batch's reads of its markets (PostgreSQL), which lock them in id order: each id
/// (sorted) with the revision of the copy the batch thread keeps of it, or -1 where it has
/// none. Only markets stored at another revision come back, with their outcomes, so a copy is
/// used only while it is the stored row (the lock keeps it so). Pools are not read: they are
/// among the balances a batch reads. Their rows, in order, are [`changed_markets_from`]'s.
pub fn changed_markets_reads<'a>(markets: &'a [(&'a str, i64)]) -> Vec<(String, Vec<Param<'a>>)> {
    let padded = markets.len().next_power_of_two();
    // The lock's list padded as `id_list` pads it (repeating the last id).
    let last = markets.last().map_or("", |(id, _)| *id);
    let lock_params: Vec<Param<'a>> = markets.iter().map(|(id, _)| *id).chain(std::iter::repeat(last)).take(padded).map(Param::Text).collect();
    // The revisions' list padded with a row that matches no market: a repeated row would
    // return its market twice.
    let padding = std::iter::repeat(("", -1)).take(padded - markets.len());
    let pair_params: Vec<Param<'a>> =
        markets.iter().copied().chain(padding).flat_map(|(id, revision)| [Param::Text(id), Param::Int(revision)]).collect();
    let changed = format!("WITH k(id, revision) AS (VALUES {})", value_rows(padded, 2));
    vec![
        (format!("SELECT id FROM markets WHERE id IN ({}) ORDER BY id FOR UPDATE", placeholders(1, padded)), lock_params),
        (format!("{changed} SELECT {MARKET_COLUMNS} {MARKET_FROM} JOIN k ON k.id = m.id WHERE m.revision <> k.revision"), pair_params.clone()),
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
pub fn changed_markets_from(rows: Vec<Vec<Row>>) -> Result<Vec<Market>> {
    let [_lock, market_rows, outcome_rows] = <[Vec<Row>; 3]>::try_from(rows).map_err(|_| Error::internal("the markets' reads"))?;
    let markets = market_rows.iter().map(Market::from_row).collect::<Result<Vec<_>>>()?;
    with_details(markets, &outcome_rows, &[])
}

/// The provider's own market, or 404 (another provider's market is invisible).
pub fn provider_market(c: &mut dyn Conn, provider_id: &str, id: &str) -> Result<Market> {
    match market(c, id, true)? {
        Some(m) if m.provider_id == provider_id => Ok(m),
        _ => Err(Error::NotFound),
    }
}

/// The market an outcome belongs to, and the outcome's position in it.
pub fn market_of_outcome(c: &mut dyn Conn, outcome_id: &str) -> Result<Option<(Market, usize)>> {
    let Some(row) = c.query_opt("SELECT market_id FROM outcomes WHERE id = $1", &[Param::Text(outcome_id)])? else {
        return Ok(None);
    };
    let market_id = row.text(0)?;
    let Some(m) = market(c, &market_id, false)? else { return Ok(None) };
    let position = m.outcomes.iter().position(|o| o.id == outcome_id);
    Ok(position.map(|p| (m, p)))
}

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

pub fn create_market(c: &mut dyn Conn, m: NewMarket, now: Micros) -> Result<Market> {
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
    let treasury = ledger::treasury_account(&m.provider_id, &m.token_id);
    let pool = ledger::pool_account(&m.id);
    ledger::transfer(
        c,
        Transfer {
            kind: "market_funding",
            from: Some(Account { id: &treasury, kind: Kind::Treasury, owner_id: Some(&m.provider_id) }),
            to: Some(Account { id: &pool, kind: Kind::Pool, owner_id: Some(&m.id) }),
            token_id: &m.token_id,
            amount: m.liquidity,
            reference_id: Some(&m.id),
            at: now,
        },
    )
    .map_err(|e| ledger::map_transfer_error(e, "insufficient_treasury", "treasury"))?;
    let created = market(c, &m.id, false)?.ok_or_else(|| Error::internal("created market vanished"))?;
    c.emit(Event::MarketCreated(created.clone()))?;
    Ok(created)
}

fn ensure_editable(m: &Market) -> Result<()> {
    if m.is_settled() {
        return Err(Error::conflict("market_settled", format!("the market is {}", m.stored_status)));
    }
    Ok(())
}

pub fn update_market(c: &mut dyn Conn, provider_id: &str, id: &str, patch: MarketPatch, now: Micros) -> Result<Market> {
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
    c.emit(Event::MarketUpdated(updated.clone()))?;
    if merged.ends_at != m.ends_at {
        // A new closing time is announced anew when it passes; one already past, now.
        let passed = merged.ends_at <= now;
        c.exec("UPDATE markets SET close_announced = $1 WHERE id = $2", &[Param::Int(i64::from(passed)), Param::Text(id)])?;
        if passed {
            c.emit(Event::MarketClosed { market_id: updated.id.clone(), closes_at: merged.ends_at })?;
        }
    }
    Ok(updated)
}

/// Adds an outcome. Before the first trade, b is recomputed for n+1 outcomes (all prices
/// become 1/(n+1)); after trades, b stays and the provider's treasury funds the extra
/// worst-case loss into the pool, so solvency holds either way.
pub fn create_outcome(c: &mut dyn Conn, provider_id: &str, market_id: &str, o: NewOutcome, now: Micros) -> Result<(Market, String)> {
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
        let extra = lmsr::add_outcome_cost(m.b, &m.shares())
            .map_err(|e| Error::internal(format!("add_outcome_cost: {e}")))?;
        let treasury = ledger::treasury_account(provider_id, &m.token.id);
        let pool = ledger::pool_account(market_id);
        ledger::transfer(
            c,
            Transfer {
                kind: "outcome_funding",
                from: Some(Account { id: &treasury, kind: Kind::Treasury, owner_id: Some(provider_id) }),
                to: Some(Account { id: &pool, kind: Kind::Pool, owner_id: Some(market_id) }),
                token_id: &m.token.id,
                amount: extra,
                reference_id: Some(&o.id),
                at: now,
            },
        )
        .map_err(|e| ledger::map_transfer_error(e, "insufficient_treasury", "treasury"))?;
        c.exec("UPDATE markets SET liquidity = $1, updated_at = $2 WHERE id = $3", &[
            Param::Money(m.liquidity.checked_add(extra).ok_or_else(|| Error::rule("amount_too_large", "liquidity overflow"))?),
            Param::Int(now),
            Param::Text(market_id),
        ])?;
    }
    insert_outcome(c, market_id, &o)?;
    let m = market(c, market_id, false)?.ok_or_else(|| Error::internal("market vanished"))?;
    c.emit(Event::OutcomeCreated { market: m.clone(), outcome_id: OutcomeId::from(o.id.as_str()) })?;
    Ok((m, o.id))
}

pub fn update_outcome(c: &mut dyn Conn, provider_id: &str, market_id: &str, outcome_id: &str, patch: OutcomePatch, now: Micros) -> Result<Market> {
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
    c.emit(Event::OutcomeUpdated { market: m.clone(), outcome_id: OutcomeId::from(outcome_id) })?;
    Ok(m)
}

/// Escapes LIKE wildcards so a search query matches literally.
fn like_pattern(query: &str) -> String {
    let mut out = String::with_capacity(query.len() + 2);
    out.push('%');
    for ch in query.to_lowercase().chars() {
        if matches!(ch, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(ch);
    }
    out.push('%');
    out
}

/// The versions a cached search list is valid under, read from the database so that a change
/// made through any node invalidates every node's cache.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Versions {
    /// Bumped when a market is added or removed or a filtered column changes.
    set: i64,
    /// Bumped when any market's revision changes; `None` in a cached value that no such
    /// change can alter (lists in an order trades do not move, the catalog).
    data: Option<i64>,
}

/// The versions a search reads before anything it shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MarketVersions {
    /// The market set's version.
    pub set: i64,
    /// The data version.
    pub data: i64,
}

pub fn versions(c: &mut dyn Conn) -> Result<MarketVersions> {
    let row = c.query_one("SELECT version, data_version FROM market_set_version", &[])?;
    Ok(MarketVersions { set: row.int(0)?, data: row.int(1)? })
}

/// Up to `limit` markets whose ids sort below `before` (from the last when `None`), with the
/// versions read before them and the lowest id read (the next call's `before`; `None` when
/// none was left).
pub fn markets_before(c: &mut dyn Conn, before: Option<&str>, limit: i64) -> Result<(MarketVersions, Vec<Market>, Option<String>)> {
    let current = versions(c)?;
    let rows = match before {
        Some(id) => c.query("SELECT id FROM markets WHERE id < $1 ORDER BY id DESC LIMIT $2", &[Param::Text(id), Param::Int(limit)])?,
        None => c.query("SELECT id FROM markets ORDER BY id DESC LIMIT $1", &[Param::Int(limit)])?,
    };
    let ids = rows.iter().map(|r| r.text(0)).collect::<Result<Vec<_>>>()?;
    let markets = markets_by_id(c, &ids.iter().map(String::as_str).collect::<Vec<_>>(), false)?;
    Ok((current, markets, ids.last().cloned()))
}

struct Cached<T> {
    versions: Versions,
    /// A list filtered by active or closed also lapses when the next active market ends.
    valid_until: Micros,
    value: T,
}

/// Search results kept per node: the ordered market ids of each (filters, sort), valid while
/// the versions they were read under are current. A page and its total are then a slice and
/// the length of a list. A filtered list is derived in memory from the unfiltered
/// list of its sort and a catalog of every market's filtered columns; only a text query is
/// matched in SQL, once per filter set.
#[derive(Default)]
pub struct SearchCache {
    inner: Mutex<CacheInner>,
    /// One gate per list key: concurrent misses of one list build it once.
    gates: Mutex<HashMap<String, Arc<Mutex<()>>>>,
    /// The versions, read once for all the searches that arrive while the last read runs.
    versions: SharedRead<MarketVersions>,
}

#[derive(Default)]
struct CacheInner {
    lists: HashMap<String, Cached<Arc<Vec<u32>>>>,
    /// Market ids interned once for all lists, which hold their numbers.
    ids: Vec<Arc<str>>,
    numbers: HashMap<Arc<str>, u32>,
    listed: usize,
    /// What the filters read of every market, by number: a filtered list is derived from the
    /// unfiltered list of its sort in memory instead of read row by row.
    catalog: Option<Cached<Arc<Vec<Option<Filtered>>>>>,
    /// The markets each filter set with a text query matches, whatever the sort.
    matches: HashMap<String, Cached<Arc<std::collections::HashSet<u32>>>>,
}

/// The columns of a market that search filters other than the text query read.
struct Filtered {
    provider_id: Arc<str>,
    token_id: Arc<str>,
    category: Option<Arc<str>>,
    stored_status: Arc<str>,
    ends_at: Micros,
}

impl Filtered {
    /// Whether the market passes the query's filters at `now`, as the SQL filters decide.
    fn admits(&self, q: &SearchMarkets, now: Micros) -> bool {
        let status_holds = match q.status.as_deref() {
            None => true,
            Some("active") => &*self.stored_status == "active" && self.ends_at > now,
            Some("closed") => &*self.stored_status == "active" && self.ends_at <= now,
            Some(other) => &*self.stored_status == other,
        };
        status_holds
            && q.provider_id.as_deref().is_none_or(|v| &*self.provider_id == v)
            && q.token_id.as_deref().is_none_or(|v| &*self.token_id == v)
            && q.category.as_deref().is_none_or(|v| self.category.as_deref() == Some(v))
    }
}

/// Ids all lists hold together at most; the whole cache starts over when a list would pass it.
const MAX_LISTED_IDS: usize = 8_000_000;
/// The gate of the catalog's build (no list key looks like it).
const CATALOG_GATE: &str = "catalog";
/// Filter sets whose text matches (and list keys whose gates) are kept at most.
const MAX_CACHED_FILTER_SETS: usize = 4096;

impl<T: Clone> Cached<T> {
    fn current(&self, versions: Versions, now: Micros) -> Option<T> {
        (self.versions == versions && now < self.valid_until).then(|| self.value.clone())
    }
}

impl CacheInner {
    fn page_of(&self, list: &[u32], window: Window) -> Vec<Arc<str>> {
        window.of(list).map(|&n| self.ids[n as usize].clone()).collect()
    }

    fn intern(&mut self, id: String) -> u32 {
        if let Some(&n) = self.numbers.get(id.as_str()) {
            return n;
        }
        let n = self.ids.len() as u32;
        let id: Arc<str> = id.into();
        self.ids.push(id.clone());
        self.numbers.insert(id, n);
        n
    }
}

impl SearchCache {
    fn lock(&self) -> std::sync::MutexGuard<'_, CacheInner> {
        // The cache holds no invariant a panicking holder could break halfway.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Keeps what the filters read of every market, as loaded under `versions` (the set
    /// version alone: no filter reads a column a trade changes).
    fn put_catalog(&self, versions: Versions, rows: Vec<(String, Filtered)>) {
        let mut inner = self.lock();
        if inner.listed + rows.len() > MAX_LISTED_IDS {
            *inner = CacheInner::default();
        }
        let mut catalog: Vec<Option<Filtered>> = Vec::new();
        for (id, filtered) in rows {
            let n = inner.intern(id) as usize;
            if catalog.len() <= n {
                catalog.resize_with(n + 1, || None);
            }
            catalog[n] = Some(filtered);
        }
        inner.catalog = Some(Cached { versions, valid_until: Micros::MAX, value: Arc::new(catalog) });
    }

    fn has_catalog(&self, versions: Versions) -> bool {
        self.lock().catalog.as_ref().is_some_and(|c| c.versions == versions)
    }

    fn has_matches(&self, filters_key: &str, versions: Versions, now: Micros) -> bool {
        self.lock().matches.get(filters_key).is_some_and(|m| m.current(versions, now).is_some())
    }

    fn put_matches(&self, filters_key: String, versions: Versions, valid_until: Micros, ids: Vec<String>) {
        let mut inner = self.lock();
        if inner.matches.len() >= MAX_CACHED_FILTER_SETS {
            inner.matches.clear();
        }
        let numbers = ids.into_iter().map(|id| inner.intern(id)).collect();
        inner.matches.insert(filters_key, Cached { versions, valid_until, value: Arc::new(numbers) });
    }

    /// Derives the list of `q` under `key` from the current list under `base_key` and the
    /// catalog: the markets `q`'s filters admit, and with a text query only those it matches.
    /// None when the base list, the catalog or the matches are no longer current.
    #[allow(clippy::too_many_arguments)]
    fn derive_list(&self, key: String, versions: Versions, valid_until: Micros, base_key: &str, filters_key: &str, set_versions: Versions, q: &SearchMarkets, now: Micros, window: Window) -> Option<(Vec<Arc<str>>, i64)> {
        let (base, catalog, matching) = {
            let inner = self.lock();
            let base = inner.lists.get(base_key)?.current(versions, now)?;
            let catalog = inner.catalog.as_ref().filter(|c| c.versions == set_versions)?.value.clone();
            let matching = match q.search_query {
                Some(_) => Some(inner.matches.get(filters_key)?.current(set_versions, now)?),
                None => None,
            };
            (base, catalog, matching)
        };
        // Filtered without the lock: searches served from the cache need it meanwhile.
        let numbers: Vec<u32> = base
            .iter()
            .copied()
            .filter(|&n| catalog.get(n as usize).and_then(Option::as_ref).is_some_and(|f| f.admits(q, now)))
            .filter(|n| matching.as_ref().is_none_or(|m| m.contains(n)))
            .collect();
        let mut inner = self.lock();
        // A cache started over meanwhile numbers markets anew.
        if !inner.catalog.as_ref().is_some_and(|c| Arc::ptr_eq(&c.value, &catalog)) || inner.listed + numbers.len() > MAX_LISTED_IDS {
            return None;
        }
        inner.listed += numbers.len();
        let page = (inner.page_of(&numbers, window), numbers.len() as i64);
        if let Some(old) = inner.lists.insert(key, Cached { versions, valid_until, value: Arc::new(numbers) }) {
            inner.listed -= old.value.len();
        }
        Some(page)
    }

    fn gate(&self, key: &str) -> Arc<Mutex<()>> {
        let mut gates = self.gates.lock().unwrap_or_else(|e| e.into_inner());
        if gates.len() >= MAX_CACHED_FILTER_SETS && !gates.contains_key(key) {
            gates.clear();
        }
        gates.entry(key.to_string()).or_default().clone()
    }

    /// The ids of one page of a cached list, read from its end for a descending sort, and the
    /// list's length.
    fn page(&self, key: &str, versions: Versions, now: Micros, window: Window) -> Option<(Vec<Arc<str>>, i64)> {
        let inner = self.lock();
        let list = inner.lists.get(key)?.current(versions, now)?;
        Some((inner.page_of(&list, window), list.len() as i64))
    }

    /// Keeps a list and returns one page of it, as `page` would.
    fn put_list(&self, key: String, versions: Versions, valid_until: Micros, ids: Vec<String>, window: Window) -> (Vec<Arc<str>>, i64) {
        let mut inner = self.lock();
        if inner.listed + ids.len() > MAX_LISTED_IDS {
            *inner = CacheInner::default();
        }
        inner.listed += ids.len();
        let numbers: Vec<u32> = ids.into_iter().map(|id| inner.intern(id)).collect();
        let page = (inner.page_of(&numbers, window), numbers.len() as i64);
        if let Some(old) = inner.lists.insert(key, Cached { versions, valid_until, value: Arc::new(numbers) }) {
            inner.listed -= old.value.len();
        }
        page
    }
}

/// A page's place in an ascending list.
#[derive(Clone, Copy)]
struct Window {
    offset: usize,
    limit: usize,
    descending: bool,
}

impl Window {
    fn of<'a, T>(&self, ascending: &'a [T]) -> Box<dyn Iterator<Item = &'a T> + 'a> {
        if self.descending {
            Box::new(ascending.iter().rev().skip(self.offset).take(self.limit))
        } else {
            Box::new(ascending.iter().skip(self.offset).take(self.limit))
        }
    }
}

/// One page of the list under `key`: from the cache, or built by `build` (which keeps it) once
/// across concurrent misses.
fn cached_list(
    cache: &SearchCache,
    key: &str,
    versions: Versions,
    now: Micros,
    window: Window,
    build: impl FnOnce(&SearchCache) -> Result<(Vec<Arc<str>>, i64)>,
) -> Result<(Vec<Arc<str>>, i64)> {
    if let Some(hit) = cache.page(key, versions, now, window) {
        return Ok(hit);
    }
    let gate = cache.gate(key);
    let _building = gate.lock().unwrap_or_else(|e| e.into_inner());
    // The request this one waited for may have built the list meanwhile.
    match cache.page(key, versions, now, window) {
        Some(hit) => Ok(hit),
        None => build(cache),
    }
}

/// Every market's filtered columns, for the catalog.
fn catalog_rows(c: &mut dyn Conn) -> Result<Vec<(String, Filtered)>> {
    let mut labels: HashMap<String, Arc<str>> = HashMap::new();
    let mut label = |text: String| labels.entry(text).or_insert_with_key(|t| Arc::from(t.as_str())).clone();
    c.query("SELECT id, provider_id, token_id, category, status, ends_at FROM markets", &[])?
        .iter()
        .map(|r| {
            let filtered = Filtered {
                provider_id: label(r.text(1)?),
                token_id: label(r.text(2)?),
                category: r.opt_text(3)?.map(&mut label),
                stored_status: label(r.text(4)?),
                ends_at: r.int(5)?,
            };
            Ok((r.text(0)?, filtered))
        })
        .collect()
}

/// Until when a search filtered by a time-derived status keeps its members: the next end of an
/// active market.
fn members_valid_until(c: &mut dyn Conn, q: &SearchMarkets, now: Micros) -> Result<Micros> {
    match q.status.as_deref() {
        Some("active" | "closed") => Ok(c
            .query_one("SELECT min(ends_at) FROM markets WHERE status = 'active' AND ends_at > $1", &[Param::Int(now)])?
            .opt_int(0)?
            .unwrap_or(Micros::MAX)),
        _ => Ok(Micros::MAX),
    }
}

/// Renderings of markets a caller keeps for search pages.
pub trait Renderings {
    type Item;
    /// For each id, what is kept of it: a rendering known current under `data_version` whose
    /// status still holds at `now`, one to be checked against its revision, or nothing.
    fn kept(&self, ids: &[Arc<str>], data_version: i64, now: Micros) -> Vec<Kept<Self::Item>>;
    /// A rendering made at this revision with this status; it becomes known current under
    /// `data_version`, which was read before the revision.
    fn at_revision(&self, id: &str, revision: i64, status: MarketStatus, data_version: i64) -> Option<Self::Item>;
}

/// What a caller keeps of one market of a search page.
pub enum Kept<T> {
    Current(T),
    /// A rendering that is current only if the market's revision and status are unchanged.
    Unverified,
    Nothing,
}

/// One market of a search page: a rendering the caller keeps, or the market loaded to be
/// rendered.
pub enum SearchHit<T> {
    Cached(T),
    Loaded(Market),
}

pub struct SearchPage<T> {
    pub page: Page<SearchHit<T>>,
    /// The data version read before any market of the page.
    pub data_version: i64,
}

/// A page of a market search at `now`. The versions it reads are shared with the searches
/// arriving at the same time, each still getting versions read after it arrived. A page whose
/// list and renderings are current under them is served from memory; the rest in one read.
pub async fn search<R>(store: &Store, cache: Arc<SearchCache>, q: SearchMarkets, now: Micros, renderings: Arc<R>) -> Result<SearchPage<R::Item>>
where
    R: Renderings + Send + Sync + 'static,
    R::Item: Send + 'static,
{
    let current = cache.versions.get(|| store.read(versions)).await?;
    if let Some(page) = cached_page(&cache, &q, now, renderings.as_ref(), current) {
        return Ok(page);
    }
    store.read(move |c| search_markets(c, &cache, &q, now, renderings.as_ref(), current)).await
}

/// Where a search's page lies in the cache.
struct ListAddress {
    /// The list of the search's filters and sort.
    key: String,
    /// The unfiltered list of the same sort.
    base_key: String,
    filters_key: String,
    window: Window,
    /// The list's order moves with trades.
    by_volume: bool,
}

impl ListAddress {
    fn of(q: &SearchMarkets) -> ListAddress {
        let PageRequest { page, per_page } = q.page;
        let descending = q.sort.direction == Direction::Desc;
        let window = Window { offset: ((page - 1) * per_page) as usize, limit: per_page as usize, descending };
        let filters_key = format!("{:?}", (&q.provider_id, &q.token_id, &q.category, &q.status, &q.search_query));
        // One ascending list serves both directions: a descending order is its reverse.
        let column = sort_column(&q.sort.field);
        ListAddress {
            key: format!("{filters_key} BY {column}"),
            base_key: format!("{:?} BY {column}", (None::<()>, None::<()>, None::<()>, None::<()>, None::<()>)),
            filters_key,
            window,
            by_volume: column == "total_volume",
        }
    }

    /// The versions its list is valid under.
    fn versions(&self, current: MarketVersions) -> Versions {
        Versions { set: current.set, data: self.by_volume.then_some(current.data) }
    }
}

/// The column a search sort field orders by.
fn sort_column(field: &str) -> &'static str {
    match field {
        "total_volume" => "total_volume",
        "closes_at" | "ends_at" => "ends_at",
        "question" => "question",
        _ => "created_at",
    }
}

/// A page served from the cache alone: its list and every rendering on it are current under
/// `current`.
fn cached_page<R: Renderings>(cache: &SearchCache, q: &SearchMarkets, now: Micros, renderings: &R, current: MarketVersions) -> Option<SearchPage<R::Item>> {
    let list = ListAddress::of(q);
    let (ids, total) = cache.page(&list.key, list.versions(current), now, list.window)?;
    let hits = renderings
        .kept(&ids, current.data, now)
        .into_iter()
        .map(|kept| match kept {
            Kept::Current(rendering) => Some(SearchHit::Cached(rendering)),
            Kept::Unverified | Kept::Nothing => None,
        })
        .collect::<Option<Vec<_>>>()?;
    Some(SearchPage { page: Page::new(hits, q.page, total), data_version: current.data })
}

/// A page of a market search under versions read before it, reusing the caller's renderings
/// where they are current.
fn search_markets<R: Renderings>(c: &mut dyn Conn, cache: &SearchCache, q: &SearchMarkets, now: Micros, renderings: &R, current: MarketVersions) -> Result<SearchPage<R::Item>> {
    let mut clauses: Vec<String> = Vec::new();
    let mut params: Vec<Param<'_>> = Vec::new();
    let pattern = q.search_query.as_deref().map(like_pattern);
    // SQLite's trigram index needs at least three characters; PostgreSQL's trigram indexes
    // serve the LIKE itself.
    let fts_phrase = match (c.dialect(), q.search_query.as_deref()) {
        (Dialect::Sqlite, Some(query)) if query.chars().count() >= 3 => {
            Some(format!("\"{}\"", query.to_lowercase().replace('"', "\"\"")))
        }
        _ => None,
    };
    if let Some(v) = &q.provider_id {
        params.push(Param::Text(v));
        clauses.push(format!("m.provider_id = ${}", params.len()));
    }
    if let Some(v) = &q.token_id {
        params.push(Param::Text(v));
        clauses.push(format!("m.token_id = ${}", params.len()));
    }
    if let Some(v) = &q.category {
        params.push(Param::Text(v));
        clauses.push(format!("m.category = ${}", params.len()));
    }
    if let Some(status) = q.status.as_deref() {
        match status {
            "active" | "closed" => {
                params.push(Param::Int(now));
                let op = if status == "active" { ">" } else { "<=" };
                clauses.push(format!("m.status = 'active' AND m.ends_at {op} ${}", params.len()));
            }
            other => {
                params.push(Param::Text(other));
                clauses.push(format!("m.status = ${}", params.len()));
            }
        }
    }
    if let Some(p) = &pattern {
        params.push(Param::Text(p));
        let n = params.len();
        clauses.push(match &fts_phrase {
            // The trigram index finds the candidates; LIKE keeps the exact semantics.
            Some(_) => format!(
                "m.rowid IN (SELECT rowid FROM markets_search WHERE markets_search MATCH ${}) \
                 AND (m.question_lower LIKE ${n} ESCAPE '\\' OR m.description_lower LIKE ${n} ESCAPE '\\')",
                n + 1
            ),
            None => format!("(m.question_lower LIKE ${n} ESCAPE '\\' OR m.description_lower LIKE ${n} ESCAPE '\\')"),
        });
        if let Some(phrase) = &fts_phrase {
            params.push(Param::Text(phrase));
        }
    }
    let where_sql = if clauses.is_empty() { String::new() } else { format!("WHERE {}", clauses.join(" AND ")) };
    let order = match sort_column(&q.sort.field) {
        "total_volume" => format!("{}, m.id ASC", c.dialect().money_order("m.total_volume", "ASC")),
        column => format!("m.{column} ASC, m.id ASC"),
    };
    let list = ListAddress::of(q);
    let versions = list.versions(current);
    let ListAddress { key, base_key, filters_key, window, .. } = list;
    let data_version = current.data;

    // The versions were read before the data they guard: a change committed in between makes
    // the cached value newer than its versions, never older.
    let (ids, total) = {
        let filtered = key != base_key;
        cached_list(cache, &key, versions, now, window, |cache| {
            let valid_until = members_valid_until(c, q, now)?;
            if filtered {
                // Derived in memory from the unfiltered list and the catalog; the text
                // query alone is matched in SQL.
                let unfiltered = Window { offset: 0, limit: 0, descending: false };
                cached_list(cache, &base_key, versions, now, unfiltered, |cache| {
                    let sql = format!("SELECT m.id FROM markets m ORDER BY {order}");
                    let all = c.query(&sql, &[])?.iter().map(|r| r.text(0)).collect::<Result<Vec<_>>>()?;
                    Ok(cache.put_list(base_key.clone(), versions, Micros::MAX, all, unfiltered))
                })?;
                let catalog_versions = Versions { set: current.set, data: None };
                if !cache.has_catalog(catalog_versions) {
                    let gate = cache.gate(CATALOG_GATE);
                    let _building = gate.lock().unwrap_or_else(|e| e.into_inner());
                    if !cache.has_catalog(catalog_versions) {
                        cache.put_catalog(catalog_versions, catalog_rows(c)?);
                    }
                }
                if q.search_query.is_some() && !cache.has_matches(&filters_key, catalog_versions, now) {
                    let sql = format!("SELECT m.id FROM markets m {where_sql}");
                    let ids = c.query(&sql, &params)?.iter().map(|r| r.text(0)).collect::<Result<Vec<_>>>()?;
                    cache.put_matches(filters_key.clone(), catalog_versions, valid_until, ids);
                }
                if let Some(page) = cache.derive_list(key.clone(), versions, valid_until, &base_key, &filters_key, catalog_versions, q, now, window) {
                    return Ok(page);
                }
            }
            let sql = format!("SELECT m.id FROM markets m {where_sql} ORDER BY {order}");
            let all = c.query(&sql, &params)?.iter().map(|r| r.text(0)).collect::<Result<Vec<_>>>()?;
            Ok(cache.put_list(key.clone(), versions, valid_until, all, window))
        })?
    };
    // Renderings known current under this data version need no read; the others kept are
    // checked against their markets' revisions in one narrow read; the rest are loaded.
    let mut hits: Vec<Option<R::Item>> = Vec::with_capacity(ids.len());
    let mut unverified: HashMap<&str, usize> = HashMap::new();
    let mut missing: HashMap<String, usize> = HashMap::new();
    for (position, kept) in renderings.kept(&ids, data_version, now).into_iter().enumerate() {
        hits.push(match kept {
            Kept::Current(rendering) => Some(rendering),
            Kept::Unverified => {
                unverified.insert(&ids[position], position);
                None
            }
            Kept::Nothing => {
                missing.insert(ids[position].to_string(), position);
                None
            }
        });
    }
    if !unverified.is_empty() {
        let unverified_ids: Vec<&str> = unverified.keys().copied().collect();
        let (list, params) = id_list(&unverified_ids);
        let sql = format!("SELECT id, revision, status, ends_at FROM markets WHERE id IN ({list})");
        for row in &c.query(&sql, &params)? {
            let (id, revision, stored, ends_at) = (row.text(0)?, row.int(1)?, stored_status(&row, 2)?, row.int(3)?);
            let position = unverified[id.as_str()];
            match renderings.at_revision(&id, revision, derived_status(stored, ends_at, now), data_version) {
                Some(rendering) => hits[position] = Some(rendering),
                None => {
                    missing.insert(id, position);
                }
            }
        }
    }
    let mut data: Vec<Option<SearchHit<R::Item>>> = hits.into_iter().map(|hit| hit.map(SearchHit::Cached)).collect();
    if !missing.is_empty() {
        // The markets, their outcomes and pools in one round trip.
        let missing_ids: Vec<&str> = missing.keys().map(String::as_str).collect();
        for m in markets_by_id(c, &missing_ids, false)? {
            let position = missing[m.id.as_str()];
            data[position] = Some(SearchHit::Loaded(m));
        }
    }
    let data = data.into_iter().map(|hit| hit.ok_or_else(|| Error::internal("searched market vanished"))).collect::<Result<Vec<_>>>()?;
    Ok(SearchPage { page: Page::new(data, q.page, total), data_version })
}

/// Stores a market's totals after `trades` more trades, and those of `outcomes` (of it).
pub fn write_totals(c: &mut dyn Conn, m: &Market, outcomes: &[&Outcome], trades: i64) -> Result<()> {
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
pub fn write_totals_of(c: &mut dyn Conn, outcomes: &[&Outcome], markets: &[(&Market, i64)]) -> Result<()> {
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
pub fn payout_terms(c: &mut dyn Conn, market_id: &str) -> Result<(u128, u128)> {
    let row = c.query_one("SELECT payout_num, payout_den FROM markets WHERE id = $1", &[Param::Text(market_id)])?;
    Ok((row.opt_money(0)?.unwrap_or(1), row.opt_money(1)?.unwrap_or(1)))
}
