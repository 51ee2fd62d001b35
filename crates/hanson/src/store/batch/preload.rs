//! A PostgreSQL trade batch's first reads: the rows of all its trades, a statement per kind,
//! in one round trip with its BEGIN and batch lock.

use super::{BatchRows, MarketCopies};
use crate::domain::ledger::pool_account;
use crate::domain::position::Position;
use crate::domain::trade::plan::TradeAccounts;
use crate::domain::trade::Trader;
use crate::error::{Error, Result};
use crate::store::sql::{Conn, FromRow, Param, Row};
use crate::store::{accounts, event_log, markets, positions, sessions};

/// What a trade reads first, named before it runs, so that a batch of trades can read the
/// rows of all of them at once ([`preload`]).
#[derive(Debug, Clone)]
pub struct TradeKeys {
    pub session_id: String,
    pub wallet_id: String,
    pub market_id: String,
    pub outcome_id: String,
}

impl TradeKeys {
    /// A trade by `trader` on `outcome_id` of `market_id`.
    pub(crate) fn of(trader: &Trader, market_id: &str, outcome_id: &str) -> TradeKeys {
        TradeKeys {
            session_id: trader.session_id.to_string(),
            wallet_id: trader.wallet_id.to_string(),
            market_id: market_id.to_string(),
            outcome_id: outcome_id.to_string(),
        }
    }
}

/// One of each `field` of `keys`, in order.
fn distinct<'k>(keys: &'k [TradeKeys], field: impl Fn(&'k TradeKeys) -> &'k String) -> Vec<&'k str> {
    let mut values: Vec<&str> = keys.iter().map(|k| field(k).as_str()).collect();
    values.sort_unstable();
    values.dedup();
    values
}

/// Reads the rows the trades of one PostgreSQL batch start from, a statement per kind
/// instead of several per trade, into the batch's copies: the markets (locked, in
/// id order) and their last event numbers, the sessions, the positions held and the balances
/// the trades move. A trade then finds them there, as it finds what earlier trades of its
/// batch left. Nothing is read for keys that name nothing; their trades fail as they would
/// alone. A market the batch thread keeps a copy of (`known`), with its last event number and
/// the positions on it, is read only if its stored revision is not the copy's.
///
/// One round trip, `lead` first (its rows are returned), when `known` has every market's
/// creator and token, which name the accounts besides the traders'; else the balances
/// follow in a second.
pub(crate) fn preload(
    c: &mut dyn Conn,
    rows: &mut BatchRows,
    keys: &[TradeKeys],
    lead: Option<&str>,
    known: &mut MarketCopies,
) -> Result<Vec<Row>> {
    let market_ids = distinct(keys, |k| &k.market_id);
    let session_ids = distinct(keys, |k| &k.session_id);
    let owners = market_ids
        .iter()
        .map(|id| known.owners.get(*id).map(|(creator, token)| (*id, creator.as_str(), token.as_str())))
        .collect::<Option<Vec<_>>>();
    let early_accounts = owners.map(|owners| trade_accounts(keys, owners.into_iter()));
    let early_ids: Vec<&str> = early_accounts.iter().flatten().map(String::as_str).collect();
    // The revision each copy was taken at; -1 (no stored revision is negative) where none.
    let revisions: Vec<(&str, i64)> =
        market_ids.iter().map(|id| (*id, known.copies.get(*id).map_or(-1, |copy| copy.market.revision))).collect();
    let mut pairs: Vec<(&str, &str, &str, i64)> = keys
        .iter()
        .map(|k| {
            let copy =
                known.copies.get(&k.market_id).filter(|copy| copy.positions.contains_key(&(k.wallet_id.clone(), k.outcome_id.clone())));
            (k.wallet_id.as_str(), k.outcome_id.as_str(), k.market_id.as_str(), copy.map_or(-1, |copy| copy.market.revision))
        })
        .collect();
    pairs.sort_unstable();
    pairs.dedup();

    let mut reads: Vec<(String, Vec<Param>)> = lead.map(|sql| (sql.to_string(), Vec::new())).into_iter().collect();
    let lead_reads = reads.len();
    if !keys.is_empty() {
        reads.extend(markets::changed_markets_reads(&revisions));
        // Read under the markets' locks, like `events::current_seq`.
        reads.extend([
            event_log::changed_seqs_read(&revisions),
            sessions::sessions_read(&session_ids),
            positions::changed_positions_read(&pairs),
        ]);
        if !early_ids.is_empty() {
            reads.push(accounts::stored_balances_read(c, &early_ids));
        }
    }
    let read_count = reads.len();
    let mut rest = c.query_all(&reads)?;
    if rest.len() != read_count {
        return Err(Error::internal("the batch's reads"));
    }
    let lead_rows = if lead_reads == 0 { Vec::new() } else { rest.remove(0) };
    if keys.is_empty() {
        return Ok(lead_rows);
    }
    let early_balances = if early_ids.is_empty() { None } else { rest.pop() };
    let [seq_rows, session_rows, position_rows] =
        <[Vec<Row>; 3]>::try_from(rest.split_off(rest.len() - 3)).map_err(|_| Error::internal("the batch's reads"))?;
    let mut found_markets = markets::changed_markets_from(rest)?;
    let mut seqs = event_log::seqs_from(&seq_rows)?;
    let found = sessions::sessions_from(&session_rows)?;
    let held = position_rows.iter().map(Position::from_row).collect::<Result<Vec<_>>>()?;
    known.learn(&found_markets);
    // A market read again was changed by another write: its copy is gone. The others' copies
    // are the stored rows; the batch takes them (`MarketCopies::committed` keeps them again).
    for id in &market_ids {
        let Some(copy) = known.take_copy(id) else { continue };
        if found_markets.iter().any(|m| m.id.as_str() == *id) {
            continue;
        }
        seqs.push((id.to_string(), copy.seq));
        found_markets.push(copy.market);
        known.in_batch.insert(id.to_string(), copy.positions);
    }

    let balances = match early_balances {
        Some(read) => accounts::balances_from(&read)?,
        None => {
            let accounts = trade_accounts(keys, found_markets.iter().map(|m| (m.id.as_str(), &*m.creator_wallet_id, &*m.token.id)));
            let account_ids: Vec<&str> = accounts.iter().map(String::as_str).collect();
            accounts::stored_balances(c, &account_ids)?
        }
    };
    // Each market's pool is among the balances read (`trade_accounts`).
    for m in &mut found_markets {
        let pool = pool_account(&m.id);
        m.pool = balances.iter().find(|(id, _)| *id == pool).map_or(0, |(_, balance)| *balance);
    }
    found_markets.into_iter().for_each(|m| rows.keep_market(m));
    found.into_iter().for_each(|s| rows.keep_session(s));
    for k in keys {
        let copied = known.in_batch.get(&k.market_id).and_then(|positions| positions.get(&(k.wallet_id.clone(), k.outcome_id.clone())));
        let position = match copied {
            Some(copy) => copy.clone(),
            None => held.iter().find(|p| p.wallet_id.as_str() == k.wallet_id && p.outcome_id.as_str() == k.outcome_id).cloned(),
        };
        rows.keep_position(&k.wallet_id, &k.outcome_id, position);
    }
    rows.keep_balances(balances);
    for (market_id, seq) in seqs {
        rows.set_seq(&market_id, seq);
    }
    Ok(lead_rows)
}

/// The accounts the trades of `keys` move on `markets` (id, creator wallet, token), sorted.
fn trade_accounts<'m>(keys: &[TradeKeys], markets: impl Iterator<Item = (&'m str, &'m str, &'m str)>) -> Vec<String> {
    let mut accounts: Vec<String> = Vec::new();
    for (market_id, creator, token) in markets {
        for k in keys.iter().filter(|k| k.market_id == market_id) {
            let a = TradeAccounts::of(market_id, creator, token, &k.wallet_id);
            accounts.extend([a.wallet, a.pool, a.creator, a.platform]);
        }
    }
    accounts.sort_unstable();
    accounts.dedup();
    accounts
}
