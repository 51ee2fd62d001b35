//! Trades and settlement. Each operation is one transaction: lock the market, check the
//! rules, compute with the engine (through `domain::trade`), then write the trade, the
//! position, the outcome totals, the price points and the ledger transfers together, and
//! emit the events the change causes.

use std::collections::HashMap;

use super::events;
use super::history;
use super::hot::{Carried, KeptSession, TradeTotals};
use super::ledger::{self, Account, Kind, Transfer};
use super::markets;
use super::positions::{self, active_positions};
use super::sql::{id_list, Conn, FromRow, Param, Row};
use crate::domain::event::{Event, OutcomePrice, TradeCreated};
use crate::domain::ids::{MarketId, OutcomeId, PositionId, TradeId, WalletId};
use crate::domain::market::{Market, MarketStatus};
use crate::domain::money::Wei;
use crate::domain::num::{mul_div, Rounding};
use crate::domain::position::{Holding, Position, PositionStatus};
use crate::domain::session::Session;
use crate::domain::settlement::{
    payout_ratio_text, CancelRequest, Cancellation, ClaimReceipt, ClaimStatus, Resolution, ResolveRequest, UserRefund,
};
use crate::domain::time::{Micros, Timestamp};
use crate::domain::trade::{
    quote_buy, quote_sell, BetReceipt, BetRequest, FilledTrade, SaleReceipt, SellRequest, TradeKind, TradeRecord, TradeStatus, Trader,
};
use crate::error::{Error, Result};

/// The market to trade on, locked (or as this group commit left it, see `hot`); rejects other tenants' markets and unknown outcomes.
fn trading_market(c: &mut dyn Conn, trader: &Trader, market_id: &str, outcome_id: &str) -> Result<(Market, usize)> {
    let m = match c.hot().and_then(|hot| hot.get(market_id)).cloned() {
        Some(m) => m,
        None => {
            let carried = c.hot().and_then(|hot| hot.take_carried(market_id));
            let mut m = match carried {
                Some(m) => m,
                None => markets::market(c, market_id, true)?.ok_or(Error::NotFound)?,
            };
            if let Some(hot) = c.hot() {
                if let Some(pool) = hot.balance(&ledger::pool_account(&m.id)) {
                    m.pool = pool;
                }
                hot.keep(m.clone());
            }
            m
        }
    };
    if m.provider_id != trader.provider_id {
        return Err(Error::forbidden("wrong_provider", "this market belongs to another provider than the one you logged in to"));
    }
    let index = m
        .outcomes
        .iter()
        .position(|o| o.id == outcome_id)
        .ok_or_else(|| Error::rule_on("unknown_outcome", "outcome_id", "no such outcome in this market"))?;
    Ok((m, index))
}

fn checked_add(a: u128, b: u128) -> Result<u128> {
    a.checked_add(b).ok_or_else(|| Error::rule("amount_too_large", "a total would exceed the supported maximum"))
}

/// What a bet and a sale share before their own rules: the market (locked, or as this
/// group commit left it), the outcome's index, the clock, the trade's id and accounts.
struct Trade {
    market: Market,
    outcome: usize,
    at: Micros,
    id: TradeId,
    wallet_account: String,
    pool_account: String,
}

fn begin_trade(c: &mut dyn Conn, trader: &Trader, market_id: &str, outcome_id: &str) -> Result<Trade> {
    let (market, outcome) = trading_market(c, trader, market_id, outcome_id)?;
    // Read the clock under the market lock, never behind the market's last change: the
    // order of created_at is the order trades were applied.
    let at = crate::domain::time::now_micros().max(market.updated_at);
    Ok(Trade {
        wallet_account: ledger::wallet_account(&trader.wallet_id, &market.token.id),
        pool_account: ledger::pool_account(&market.id),
        id: TradeId::new(),
        market,
        outcome,
        at,
    })
}

/// The amounts of one filled trade, as its record shows them.
struct Fill<'a> {
    kind: TradeKind,
    amount: u128,
    net_amount: u128,
    fee: u128,
    shares: u128,
    new_total_shares: u128,
    pool_after: u128,
    price: &'a str,
    new_prices: &'a [lmsr::Price],
}

/// Writes what every trade changes besides money: outcome and market totals (in memory
/// where the connection keeps the market, see `hot`), the trade record and one price point
/// per outcome; emits `TradeCreated`.
fn record_trade(c: &mut dyn Conn, t: &Trade, trader: &Trader, wallet_address: &str, f: Fill<'_>) -> Result<()> {
    let o = &t.market.outcomes[t.outcome];
    let totals = TradeTotals {
        outcome: t.outcome,
        total_shares: f.new_total_shares,
        outcome_volume: checked_add(o.total_volume, f.amount)?,
        market_volume: checked_add(t.market.total_volume, f.amount)?,
        pool: f.pool_after,
        at: t.at,
    };
    c.exec_later(
        "INSERT INTO trades (id, market_id, outcome_id, wallet_id, wallet_address, session_id, transaction_type, amount, \
         net_amount, fee, shares, price, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
        &[
            Param::Text(&t.id),
            Param::Text(&t.market.id),
            Param::Text(&o.id),
            Param::Text(&trader.wallet_id),
            Param::Text(wallet_address),
            Param::Text(&trader.session_id),
            Param::Text(f.kind.as_str()),
            Param::Money(f.amount),
            Param::Money(f.net_amount),
            Param::Money(f.fee),
            Param::Money(f.shares),
            Param::Text(f.price),
            Param::Int(t.at),
        ],
    )?;
    let points: Vec<history::NewPricePoint<'_>> = t
        .market
        .outcomes
        .iter()
        .zip(f.new_prices)
        .map(|(outcome, price)| history::NewPricePoint {
            outcome_id: &outcome.id,
            price: price.raw(),
            volume: if outcome.id == o.id { f.amount } else { 0 },
            total_before: outcome.total_volume,
        })
        .collect();
    let candles = history::insert_price_points(c, &t.market.id, &points, t.at)?;
    let prices = t.market.outcomes.iter().zip(f.new_prices).map(|(o, p)| OutcomePrice { outcome_id: o.id.clone(), price: p.to_string() }).collect();
    let trade = TradeRecord {
        id: t.id.clone(),
        market_id: MarketId::from(t.market.id.as_str()),
        outcome_id: OutcomeId::from(o.id.as_str()),
        wallet_id: trader.wallet_id.clone(),
        wallet_address: wallet_address.to_string(),
        transaction_type: f.kind,
        amount: Wei(f.amount),
        shares: Wei(f.shares),
        price: f.price.to_string(),
        fee: Wei(f.fee),
        net_amount: Wei(f.net_amount),
        created_at: Timestamp(t.at),
    };
    c.emit(Event::TradeCreated(TradeCreated { trade, prices, total_volume: Wei(totals.market_volume), total_pool: Wei(f.pool_after) }))?;
    // Last, and infallible where the market is kept: a trade that failed before this point
    // left the copy untouched.
    let unkept = match c.hot() {
        Some(hot) => hot.record_trade(&t.market.id, &totals, candles),
        None => Some(candles),
    };
    if let Some(candles) = unkept {
        let mut after = t.market.clone();
        totals.apply_to(&mut after);
        markets::write_totals(c, &after, &[&after.outcomes[t.outcome]], 1)?;
        history::upsert_candles(c, &t.market.id, &candles)?;
    }
    Ok(())
}

/// The part of a trade's receipt that bets and sales share.
fn filled(t: &Trade, trader: &Trader, position_id: PositionId, touched: &ledger::Touched, average_price: &str, fee: u128, new_price: lmsr::Price) -> FilledTrade {
    FilledTrade {
        market_id: MarketId::from(t.market.id.as_str()),
        outcome_id: OutcomeId::from(t.market.outcomes[t.outcome].id.as_str()),
        session_id: trader.session_id.clone(),
        average_price: average_price.to_string(),
        transaction_fee: Wei(fee),
        balance_before: Wei(touched.before(&t.wallet_account)),
        balance_after: Wei(touched.after(&t.wallet_account)),
        position_id,
        new_outcome_price: new_price.to_string(),
        created_at: Timestamp(t.at),
        status: TradeStatus::Confirmed,
    }
}

fn wallet_side<'a>(account: &'a str, wallet_id: &'a str) -> Account<'a> {
    Account { id: account, kind: Kind::Wallet, owner_id: Some(wallet_id) }
}

/// The money of one trade: `payer` moves `principal` to `payee`, and the fee shares move
/// from `fee_payer` to the creator wallet and the platform account; all in one ledger pass.
struct TradeMoney<'a> {
    kind: &'static str,
    payer: Account<'a>,
    payee: Account<'a>,
    principal: u128,
    fee_payer: Account<'a>,
    fee: crate::domain::fees::FeeSplit,
}

fn move_trade_money(c: &mut dyn Conn, t: &Trade, money: TradeMoney<'_>) -> Result<ledger::Touched> {
    let (m, reference, at) = (&t.market, &*t.id, t.at);
    let creator = ledger::wallet_account(&m.creator_wallet_id, &m.token.id);
    let platform = ledger::platform_account(&m.token.id);
    let token_id = &m.token.id;
    let transfers = [
        Transfer { kind: money.kind, from: Some(money.payer), to: Some(money.payee), token_id, amount: money.principal, reference_id: Some(reference), at },
        Transfer {
            kind: "creator_fee",
            from: Some(money.fee_payer.clone()),
            to: Some(Account { id: &creator, kind: Kind::Wallet, owner_id: Some(&m.creator_wallet_id) }),
            token_id,
            amount: money.fee.creator,
            reference_id: Some(reference),
            at,
        },
        Transfer {
            kind: "platform_fee",
            from: Some(money.fee_payer),
            to: Some(Account { id: &platform, kind: Kind::Platform, owner_id: None }),
            token_id,
            amount: money.fee.platform,
            reference_id: Some(reference),
            at,
        },
    ];
    ledger::apply(c, &transfers).map_err(|e| ledger::map_transfer_error(e, "insufficient_balance", "wallet"))
}

/// The live-session check of a trade, in the trade's own transaction: the token's session
/// must exist, be unrevoked and belong to the token's wallet and provider. Returns the
/// wallet's address.
pub fn live_session(c: &mut dyn Conn, trader: &Trader) -> Result<String> {
    let kept = match c.hot().and_then(|hot| hot.session(&trader.session_id).cloned()) {
        Some(kept) => Some(kept),
        None => {
            let ids = [trader.session_id.as_str()];
            let (sql, params) = sessions_read(&ids);
            let read = sessions_from(&c.query(&sql, &params)?)?.pop();
            if let (Some(hot), Some(read)) = (c.hot(), &read) {
                hot.keep_session(read.clone());
            }
            read
        }
    };
    match kept {
        Some(KeptSession { session, address }) if session.is_live_for(&trader.wallet_id, &trader.provider_id) => Ok(address),
        _ => Err(Error::Unauthenticated("the session has ended")),
    }
}

/// The statement reading the sessions among `ids` that exist, with their wallets' addresses;
/// [`sessions_from`] reads its rows.
fn sessions_read<'a>(ids: &'a [&'a str]) -> (String, Vec<Param<'a>>) {
    let (list, params) = id_list(ids);
    let sql = format!(
        "SELECT s.id, s.wallet_id, s.provider_id, s.revoked_at, s.expires_at, w.address FROM sessions s JOIN wallets w ON w.id = s.wallet_id WHERE s.id IN ({list})"
    );
    (sql, params)
}

fn sessions_from(rows: &[Row]) -> Result<Vec<KeptSession>> {
    rows.iter()
        .map(|r| {
            let session = Session {
                id: r.text(0)?.into(),
                wallet_id: r.text(1)?.into(),
                provider_id: r.text(2)?.into(),
                revoked: r.opt_int(3)?.is_some(),
                expires_at: r.int(4)?,
            };
            Ok(KeptSession { session, address: r.text(5)? })
        })
        .collect()
}

/// What a trade reads first, named before it runs, so that a batch of trades can read the
/// rows of all of them at once ([`preload`]).
#[derive(Debug, Clone)]
pub struct TradeKeys {
    pub session_id: String,
    pub wallet_id: String,
    pub market_id: String,
    pub outcome_id: String,
}

/// One of each `field` of `keys`, in order.
fn distinct<'k>(keys: &'k [TradeKeys], field: impl Fn(&'k TradeKeys) -> &'k String) -> Vec<&'k str> {
    let mut values: Vec<&str> = keys.iter().map(|k| field(k).as_str()).collect();
    values.sort_unstable();
    values.dedup();
    values
}

/// Reads the rows the trades of one PostgreSQL batch start from, a statement per kind
/// instead of several per trade, into the batch's kept rows (`hot`): the markets (locked, in
/// id order) and their last event numbers, the sessions, the positions held and the balances
/// the trades move. A trade then finds them there, as it finds what earlier trades of its
/// batch left. Nothing is read for keys that name nothing; their trades fail as they would
/// alone. A market the batch thread keeps a copy of (`known`), with its last event number and
/// the positions on it, is read only if its stored revision is not the copy's.
///
/// One round trip, `lead` first (its rows are returned), when `known` has every market's
/// creator and token, which name the accounts besides the traders'; else the balances
/// follow in a second.
pub fn preload(c: &mut dyn Conn, keys: &[TradeKeys], lead: Option<&str>, known: &mut KnownMarkets) -> Result<Vec<Row>> {
    let market_ids = distinct(keys, |k| &k.market_id);
    let session_ids = distinct(keys, |k| &k.session_id);
    let owners = market_ids.iter().map(|id| known.owners.get(*id).map(|(creator, token)| (*id, creator.as_str(), token.as_str()))).collect::<Option<Vec<_>>>();
    let early_accounts = owners.map(|owners| trade_accounts(keys, owners.into_iter()));
    let early_ids: Vec<&str> = early_accounts.iter().flatten().map(String::as_str).collect();
    // The revision each copy was taken at; -1 (no stored revision is negative) where none.
    let revisions: Vec<(&str, i64)> = market_ids.iter().map(|id| (*id, known.copies.get(*id).map_or(-1, |copy| copy.market.revision))).collect();
    let mut pairs: Vec<(&str, &str, &str, i64)> = keys
        .iter()
        .map(|k| {
            let copy = known.copies.get(&k.market_id).filter(|copy| copy.positions.contains_key(&(k.wallet_id.clone(), k.outcome_id.clone())));
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
        reads.extend([events::changed_seqs_read(&revisions), sessions_read(&session_ids), positions::changed_positions_read(&pairs)]);
        if !early_ids.is_empty() {
            reads.push(ledger::stored_balances_read(c, &early_ids));
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
    let mut seqs = events::seqs_from(&seq_rows)?;
    let found = sessions_from(&session_rows)?;
    let held = position_rows.iter().map(Position::from_row).collect::<Result<Vec<_>>>()?;
    known.learn(&found_markets);
    // A market read again was changed by another write: its copy is gone. The others' copies
    // are the stored rows; the batch takes them (`KnownMarkets::committed` keeps them again).
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
        Some(rows) => ledger::balances_from(&rows)?,
        None => {
            let accounts = trade_accounts(keys, found_markets.iter().map(|m| (m.id.as_str(), &*m.creator_wallet_id, &*m.token.id)));
            let account_ids: Vec<&str> = accounts.iter().map(String::as_str).collect();
            ledger::stored_balances(c, &account_ids)?
        }
    };
    // Each market's pool is among the balances read (`trade_accounts`).
    for m in &mut found_markets {
        let pool = ledger::pool_account(&m.id);
        m.pool = balances.iter().find(|(id, _)| *id == pool).map_or(0, |(_, balance)| *balance);
    }
    let Some(hot) = c.hot() else { return Ok(lead_rows) };
    found_markets.into_iter().for_each(|m| hot.keep(m));
    found.into_iter().for_each(|s| hot.keep_session(s));
    for k in keys {
        let copied = known.in_batch.get(&k.market_id).and_then(|positions| positions.get(&(k.wallet_id.clone(), k.outcome_id.clone())));
        let position = match copied {
            Some(copy) => copy.clone(),
            None => held.iter().find(|p| p.wallet_id.as_str() == k.wallet_id && p.outcome_id.as_str() == k.outcome_id).cloned(),
        };
        hot.keep_position(&k.wallet_id, &k.outcome_id, position);
    }
    hot.keep_balances(balances);
    for (market_id, seq) in seqs {
        hot.set_seq(&market_id, seq);
    }
    Ok(lead_rows)
}

/// The accounts the trades of `keys` move on `markets` (id, creator wallet, token), sorted.
fn trade_accounts<'m>(keys: &[TradeKeys], markets: impl Iterator<Item = (&'m str, &'m str, &'m str)>) -> Vec<String> {
    let mut accounts: Vec<String> = Vec::new();
    for (market_id, creator, token) in markets {
        accounts.push(ledger::pool_account(market_id));
        accounts.push(ledger::wallet_account(creator, token));
        accounts.push(ledger::platform_account(token));
        for k in keys.iter().filter(|k| k.market_id == market_id) {
            accounts.push(ledger::wallet_account(&k.wallet_id, token));
        }
    }
    accounts.sort_unstable();
    accounts.dedup();
    accounts
}

/// What a PostgreSQL batch thread knows of markets from one batch to the next.
#[derive(Debug, Default)]
pub struct KnownMarkets {
    /// Each market's creator and token, which never change once it exists: they name the
    /// accounts a trade moves before its market is read.
    owners: HashMap<String, (String, String)>,
    /// Markets as this thread's batches last read or committed them.
    copies: HashMap<String, MarketCopy>,
    /// The positions of the copies the running batch took, by market.
    in_batch: HashMap<String, CopiedPositions>,
    /// Positions in `copies`, which bound the memory kept.
    copied_positions: usize,
}

/// A market as a batch thread last read or committed it, with its last event number and the
/// positions it read or wrote on it (None: the wallet held none). A market's revision changes
/// with every update of its row, and every change to its outcomes, its pool, its event stream
/// or a position on it comes with one, so a copy taken at the stored revision is what is
/// stored. Reading them all again took a many_markets batch over a third of its reads
/// (`docs/performance.md`).
#[derive(Debug)]
struct MarketCopy {
    market: Market,
    seq: i64,
    positions: CopiedPositions,
}

/// Positions by (wallet, outcome).
type CopiedPositions = HashMap<(String, String), Option<Position>>;

impl KnownMarkets {
    /// Most owners kept; past it the map starts over (each entry about 200 bytes).
    const MAX_OWNERS: usize = 1 << 16;
    /// Most markets and positions copied (some 2 KiB and 300 bytes each); past either, the
    /// copies start over.
    const MAX_COPIES: usize = 1 << 12;
    const MAX_POSITIONS: usize = 1 << 16;

    fn learn(&mut self, markets: &[Market]) {
        for m in markets {
            if !self.owners.contains_key(m.id.as_str()) {
                if self.owners.len() >= Self::MAX_OWNERS {
                    self.owners.clear();
                }
                let (creator, token): (&str, &str) = (&m.creator_wallet_id, &m.token.id);
                self.owners.insert(m.id.to_string(), (creator.to_owned(), token.to_owned()));
            }
        }
    }

    fn take_copy(&mut self, market_id: &str) -> Option<MarketCopy> {
        let copy = self.copies.remove(market_id)?;
        self.copied_positions -= copy.positions.len();
        Some(copy)
    }

    /// A batch starts: copies an earlier batch took and did not commit are gone (its writes
    /// may or may not have been stored).
    pub fn start_batch(&mut self) {
        self.in_batch.clear();
    }

    /// Keeps the markets of a committed batch as `hot::flush` stored them, with their event
    /// numbers (`carried`), and the positions its trades left (`HotRows::kept_positions`).
    pub fn committed(&mut self, carried: Carried, positions: Vec<(String, String, Option<Position>)>) {
        let (markets, seqs) = carried.into_markets_and_seqs();
        let mut taken = std::mem::take(&mut self.in_batch);
        let mut by_outcome: HashMap<&str, Vec<&(String, String, Option<Position>)>> = HashMap::new();
        for kept in &positions {
            by_outcome.entry(kept.1.as_str()).or_default().push(kept);
        }
        for (id, market) in markets {
            let Some(&seq) = seqs.get(&id) else { continue };
            let mut copied = taken.remove(&id).unwrap_or_default();
            for (wallet, outcome, position) in market.outcomes.iter().filter_map(|o| by_outcome.get(o.id.as_str())).flatten() {
                copied.insert((wallet.clone(), outcome.clone()), position.clone());
            }
            if self.copies.len() >= Self::MAX_COPIES || self.copied_positions + copied.len() > Self::MAX_POSITIONS {
                self.copies.clear();
                self.copied_positions = 0;
            }
            self.copied_positions += copied.len();
            if let Some(old) = self.copies.insert(id, MarketCopy { market, seq, positions: copied }) {
                self.copied_positions -= old.positions.len();
            }
        }
    }
}

/// `address` is the wallet's, as [`live_session`] returned it in this transaction.
pub fn place_bet(c: &mut dyn Conn, trader: &Trader, address: &str, req: &BetRequest) -> Result<BetReceipt> {
    let t = begin_trade(c, trader, &req.market_id, &req.outcome_id)?;
    let (m, index, now) = (&t.market, t.outcome, t.at);
    let quote = quote_buy(m, index, req.amount, now)?;
    // Every check before the first write (see `Undo::WholeBatch`).
    let outcome = &m.outcomes[index];
    let new_total_shares = checked_add(outcome.total_shares, quote.shares)?;
    let stored = positions::position_of(c, &trader.wallet_id, &outcome.id)?;
    let stored_status = stored.as_ref().map(|p| p.status);
    let mut position = stored.unwrap_or_else(|| Position {
        id: PositionId(crate::domain::ids::new_id()),
        market_id: m.id.clone(),
        outcome_id: outcome.id.clone(),
        wallet_id: trader.wallet_id.clone(),
        shares: 0,
        total_invested: 0,
        status: PositionStatus::Active,
        claimed_amount: None,
        created_at: now,
        updated_at: now,
    });
    position.shares = checked_add(position.shares, quote.shares)?;
    position.total_invested = checked_add(position.total_invested, quote.net_amount)?;
    position.status = PositionStatus::Active;
    position.updated_at = now;

    let wallet = wallet_side(&t.wallet_account, &trader.wallet_id);
    let money = TradeMoney {
        kind: "bet",
        payer: wallet.clone(),
        payee: Account { id: &t.pool_account, kind: Kind::Pool, owner_id: Some(&m.id) },
        principal: quote.net_amount,
        fee_payer: wallet,
        fee: quote.fee,
    };
    let touched = move_trade_money(c, &t, money).map_err(|e| match e {
        Error::Rule { code: "insufficient_balance", .. } => {
            Error::rule("insufficient_balance", format!("wallet balance is below the bet amount {}", req.amount))
        }
        other => other,
    })?;
    positions::save_position(c, &position, stored_status)?;
    c.emit(Event::PositionUpdated(Holding::value(position.clone(), quote.new_prices[index], (1, 1))))?;
    let fill = Fill {
        kind: TradeKind::Buy,
        amount: req.amount,
        net_amount: quote.net_amount,
        fee: quote.fee.total,
        shares: quote.shares,
        new_total_shares,
        pool_after: touched.after(&t.pool_account),
        price: &quote.average_price,
        new_prices: &quote.new_prices,
    };
    record_trade(c, &t, trader, address, fill)?;
    Ok(BetReceipt {
        bet_id: t.id.clone(),
        amount: Wei(req.amount),
        shares_purchased: Wei(quote.shares),
        net_amount: Wei(quote.net_amount),
        fill: filled(&t, trader, position.id, &touched, &quote.average_price, quote.fee.total, quote.new_prices[index]),
    })
}

/// `address` is the wallet's, as [`live_session`] returned it in this transaction.
pub fn sell(c: &mut dyn Conn, trader: &Trader, address: &str, req: &SellRequest) -> Result<SaleReceipt> {
    let t = begin_trade(c, trader, &req.market_id, &req.outcome_id)?;
    let (m, index, now) = (&t.market, t.outcome, t.at);
    let outcome = &m.outcomes[index];
    let held = positions::position_of(c, &trader.wallet_id, &outcome.id)?.filter(|p| p.status == PositionStatus::Active);
    let held_shares = held.as_ref().map_or(0, |p| p.shares);
    let quote = quote_sell(m, index, req.by, held_shares, now)?;
    let mut position = held.ok_or_else(|| Error::rule("insufficient_shares", "no shares of this outcome to sell"))?;

    let pool = Account { id: &t.pool_account, kind: Kind::Pool, owner_id: Some(&m.id) };
    let money = TradeMoney {
        kind: "sell",
        payer: pool.clone(),
        payee: wallet_side(&t.wallet_account, &trader.wallet_id),
        principal: quote.net_proceeds,
        fee_payer: pool,
        fee: quote.fee,
    };
    let touched = move_trade_money(c, &t, money).map_err(|e| Error::internal(format!("the pool cannot pay a sale: {e}")))?;

    // Average-cost basis: remove the sold shares' share of the basis, rounded up so the
    // remaining basis (what a cancellation refunds) is never overstated.
    let removed = mul_div(position.total_invested, quote.shares, position.shares, Rounding::Up)
        .unwrap_or(position.total_invested)
        .min(position.total_invested);
    position.shares -= quote.shares;
    position.total_invested = if position.shares == 0 { 0 } else { position.total_invested - removed };
    position.status = if position.shares == 0 { PositionStatus::Closed } else { PositionStatus::Active };
    position.updated_at = now;
    // `held` is active (filtered above).
    positions::save_position(c, &position, Some(PositionStatus::Active))?;
    c.emit(Event::PositionUpdated(Holding::value(position.clone(), quote.new_prices[index], (1, 1))))?;
    let fill = Fill {
        kind: TradeKind::Sell,
        amount: quote.proceeds,
        net_amount: quote.net_proceeds,
        fee: quote.fee.total,
        shares: quote.shares,
        new_total_shares: outcome.total_shares - quote.shares,
        pool_after: touched.after(&t.pool_account),
        price: &quote.average_price,
        new_prices: &quote.new_prices,
    };
    record_trade(c, &t, trader, address, fill)?;
    Ok(SaleReceipt {
        transaction_id: t.id.clone(),
        shares_sold: Wei(quote.shares),
        proceeds: Wei(quote.proceeds),
        net_proceeds: Wei(quote.net_proceeds),
        fill: filled(&t, trader, position.id, &touched, &quote.average_price, quote.fee.total, quote.new_prices[index]),
    })
}

fn ensure_settleable(m: &Market) -> Result<()> {
    if m.is_settled() {
        return Err(Error::conflict("market_settled", format!("the market is already {}", m.stored_status)));
    }
    Ok(())
}

/// Who settles a market is the provider's to name: one of its own wallets, or a label of its
/// own (an operator, a system). A wallet id of another tenant is refused: it would put that
/// tenant's wallet on this provider's record.
fn ensure_own_wallet_or_label(c: &mut dyn Conn, provider_id: &str, id: &str, field: &str) -> Result<()> {
    match c.query_opt("SELECT provider_id FROM wallets WHERE id = $1", &[Param::Text(id)])? {
        Some(row) if row.text(0)? != provider_id => {
            Err(Error::invalid(field, "must be one of your wallets or a label of your own"))
        }
        _ => Ok(()),
    }
}

/// Returns what is left in the pool beyond `keep` to the provider's treasury.
fn return_surplus(c: &mut dyn Conn, m: &Market, keep: u128, at: Micros) -> Result<()> {
    let pool = ledger::pool_account(&m.id);
    let balance = ledger::balance(c, &pool)?;
    let treasury = ledger::treasury_account(&m.provider_id, &m.token.id);
    ledger::transfer(
        c,
        Transfer {
            kind: "surplus",
            from: Some(Account { id: &pool, kind: Kind::Pool, owner_id: Some(&m.id) }),
            to: Some(Account { id: &treasury, kind: Kind::Treasury, owner_id: Some(&m.provider_id) }),
            token_id: &m.token.id,
            amount: balance.saturating_sub(keep),
            reference_id: Some(&m.id),
            at,
        },
    )
    .map_err(|e| Error::internal(format!("surplus transfer failed: {e:?}")))?;
    Ok(())
}

/// How a market was settled, as its row keeps it.
struct Settled<'a> {
    status: MarketStatus,
    payout: (u128, u128),
    winner: Option<&'a str>,
    resolution_source: Option<&'a str>,
    resolver: Option<&'a str>,
    /// The settlement's response body, kept with the market.
    body: String,
    at: Micros,
}

fn settle_market(c: &mut dyn Conn, m: &Market, s: Settled<'_>) -> Result<()> {
    c.exec(
        "UPDATE markets SET status = $1, payout_num = $2, payout_den = $3, winning_outcome_id = $4, resolution_source = $5, \
         resolver_wallet_id = $6, settlement = $7, settled_at = $8, updated_at = $8 WHERE id = $9",
        &[
            Param::Text(s.status.as_str()),
            Param::Money(s.payout.0),
            Param::Money(s.payout.1),
            s.winner.into(),
            s.resolution_source.into(),
            s.resolver.into(),
            Param::Text(&s.body),
            Param::Int(s.at),
            Param::Text(&m.id),
        ],
    )?;
    Ok(())
}

fn settlement_body<T: serde::Serialize>(body: &T) -> Result<String> {
    serde_json::to_string(body).map_err(Error::internal)
}

/// Resolves: the pool keeps exactly what winners are owed and returns the rest to the
/// treasury at once; active positions become won or lost.
pub fn resolve(c: &mut dyn Conn, provider_id: &str, req: &ResolveRequest, now: Micros) -> Result<Resolution> {
    let m = markets::provider_market(c, provider_id, &req.market_id)?;
    ensure_settleable(&m)?;
    ensure_own_wallet_or_label(c, provider_id, &req.resolver_wallet_id, "resolver_wallet_id")?;
    let winner = m
        .outcomes
        .iter()
        .find(|o| req.winning_outcome_id == o.id.as_str())
        .ok_or_else(|| Error::rule_on("unknown_outcome", "winning_outcome_id", "no such outcome in this market"))?;
    let total_pool = m.pool;
    let winning_pool = winner.total_shares;
    // Solvency keeps pool >= every outcome's shares; scale down only if that ever failed.
    let (num, den) = if total_pool >= winning_pool { (1, 1) } else { (total_pool, winning_pool) };
    let positions = active_positions(c, &m.id)?;
    for p in &positions {
        let status = if p.outcome_id == winner.id && p.shares > 0 { PositionStatus::Won } else { PositionStatus::Lost };
        c.exec(
            "UPDATE positions SET status = $1, updated_at = $2 WHERE id = $3",
            &[Param::Text(status.as_str()), Param::Int(now), Param::Text(&p.id)],
        )?;
        let settled = Position { status, updated_at: now, ..p.clone() };
        c.emit(Event::PositionUpdated(Holding::value(settled, lmsr::Price::from_raw(0), (num, den))))?;
    }
    let owed: u128 = positions
        .iter()
        .filter(|p| p.outcome_id == winner.id)
        .map(|p| mul_div(p.shares, num, den, Rounding::Down).unwrap_or(0))
        .sum();
    return_surplus(c, &m, owed, now)?;
    let resolution_source = req.resolution_source.clone().or_else(|| m.resolution_source.clone());
    let resolution = Resolution {
        market_id: MarketId::from(m.id.as_str()),
        winning_outcome_id: OutcomeId::from(winner.id.as_str()),
        resolved_at: Timestamp(now),
        total_pool: Wei(total_pool),
        winning_pool: Wei(winning_pool),
        payout_ratio: payout_ratio_text(num, den),
        positions_updated: positions.len(),
        resolution_source: resolution_source.clone(),
        resolver_wallet_id: req.resolver_wallet_id.clone(),
        resolution_data: req.resolution_data.clone(),
        status: MarketStatus::Resolved,
    };
    let settled = Settled {
        status: MarketStatus::Resolved,
        payout: (num, den),
        winner: Some(&winner.id),
        resolution_source: resolution_source.as_deref(),
        resolver: Some(&req.resolver_wallet_id),
        body: settlement_body(&resolution)?,
        at: now,
    };
    settle_market(c, &m, settled)?;
    c.emit(Event::MarketResolved(resolution.clone()))?;
    Ok(resolution)
}

/// Cancels: refunds every open position its remaining cost basis (scaled pro rata if the
/// pool cannot cover all), returns the rest of the pool to the treasury.
pub fn cancel(c: &mut dyn Conn, provider_id: &str, req: &CancelRequest, now: Micros) -> Result<Cancellation> {
    let m = markets::provider_market(c, provider_id, &req.market_id)?;
    ensure_settleable(&m)?;
    ensure_own_wallet_or_label(c, provider_id, &req.canceller_wallet_id, "canceller_wallet_id")?;
    let positions = active_positions(c, &m.id)?;
    let owed: u128 = positions.iter().try_fold(0u128, |acc, p| checked_add(acc, p.total_invested))?;
    let (num, den) = if m.pool >= owed { (1, 1) } else { (m.pool, owed) };
    let pool = ledger::pool_account(&m.id);
    let mut refunds: Vec<UserRefund> = Vec::new();
    let mut total_refund = 0u128;
    for p in &positions {
        let refund = mul_div(p.total_invested, num, den, Rounding::Down).unwrap_or(0);
        let account = ledger::wallet_account(&p.wallet_id, &m.token.id);
        ledger::transfer(
            c,
            Transfer {
                kind: "refund",
                from: Some(Account { id: &pool, kind: Kind::Pool, owner_id: Some(&m.id) }),
                to: Some(wallet_side(&account, &p.wallet_id)),
                token_id: &m.token.id,
                amount: refund,
                reference_id: Some(&p.id),
                at: now,
            },
        )
        .map_err(|e| Error::internal(format!("refund failed: {e:?}")))?;
        c.exec(
            "UPDATE positions SET status = $1, claimed_amount = $2, updated_at = $3 WHERE id = $4",
            &[Param::Text(PositionStatus::Refunded.as_str()), Param::Money(refund), Param::Int(now), Param::Text(&p.id)],
        )?;
        let refunded = Position { status: PositionStatus::Refunded, claimed_amount: Some(refund), updated_at: now, ..p.clone() };
        c.emit(Event::PositionUpdated(Holding::value(refunded, lmsr::Price::from_raw(0), (num, den))))?;
        total_refund += refund;
        match refunds.iter_mut().find(|r| r.wallet_id == p.wallet_id.as_str()) {
            Some(entry) => {
                entry.refund_amount.0 += refund;
                entry.original_positions += 1;
            }
            None => refunds.push(UserRefund { wallet_id: WalletId::from(p.wallet_id.as_str()), refund_amount: Wei(refund), original_positions: 1 }),
        }
    }
    return_surplus(c, &m, 0, now)?;
    let cancellation = Cancellation {
        market_id: MarketId::from(m.id.as_str()),
        cancelled_at: Timestamp(now),
        total_refund_amount: Wei(total_refund),
        positions_refunded: positions.len(),
        user_refunds: refunds,
        refund_ratio: payout_ratio_text(num, den),
        canceller_wallet_id: req.canceller_wallet_id.clone(),
        cancellation_source: req.cancellation_source.clone(),
        reason: req.reason.clone(),
        cancellation_data: req.cancellation_data.clone(),
        status: MarketStatus::Cancelled,
    };
    let settled = Settled {
        status: MarketStatus::Cancelled,
        payout: (num, den),
        winner: None,
        resolution_source: m.resolution_source.as_deref(),
        resolver: None,
        body: settlement_body(&cancellation)?,
        at: now,
    };
    settle_market(c, &m, settled)?;
    c.emit(Event::MarketCancelled(cancellation.clone()))?;
    Ok(cancellation)
}

/// The caller has checked the session with [`live_session`] in this transaction.
pub fn claim(c: &mut dyn Conn, trader: &Trader, position_id: &str, now: Micros) -> Result<ClaimReceipt> {
    let p = positions::locked_position(c, position_id)?.filter(|p| trader.wallet_id == p.wallet_id.as_str()).ok_or(Error::NotFound)?;
    match p.status {
        PositionStatus::Claimed => return Err(Error::conflict("already_claimed", "this position was already claimed")),
        PositionStatus::Won => {}
        other => return Err(Error::conflict("not_claimable", format!("a {other} position has nothing to claim"))),
    }
    let m = markets::market(c, &p.market_id, true)?.ok_or_else(|| Error::internal("position without market"))?;
    let (num, den) = markets::payout_terms(c, &m.id)?;
    let amount = mul_div(p.shares, num, den, Rounding::Down).unwrap_or(0);
    let account = ledger::wallet_account(&trader.wallet_id, &m.token.id);
    let balance_before = ledger::balance(c, &account)?;
    let pool = ledger::pool_account(&m.id);
    let claim_id = TradeId::new();
    let (_, balance_after) = ledger::transfer(
        c,
        Transfer {
            kind: "payout",
            from: Some(Account { id: &pool, kind: Kind::Pool, owner_id: Some(&m.id) }),
            to: Some(wallet_side(&account, &trader.wallet_id)),
            token_id: &m.token.id,
            amount,
            reference_id: Some(&claim_id),
            at: now,
        },
    )
    .map_err(|e| Error::internal(format!("pool cannot pay a claim: {e:?}")))?;
    // The only change to what a market shows (its pool) that leaves the market row alone.
    c.exec("UPDATE markets SET revision = revision + 1 WHERE id = $1", &[Param::Text(&m.id)])?;
    let balance_after = if amount == 0 { balance_before } else { balance_after };
    c.exec(
        "UPDATE positions SET status = $1, claimed_amount = $2, updated_at = $3 WHERE id = $4",
        &[Param::Text(PositionStatus::Claimed.as_str()), Param::Money(amount), Param::Int(now), Param::Text(&p.id)],
    )?;
    let claimed = Position { status: PositionStatus::Claimed, claimed_amount: Some(amount), updated_at: now, ..p.clone() };
    c.emit(Event::PositionUpdated(Holding::value(claimed, lmsr::Price::from_raw(0), (num, den))))?;
    let receipt = ClaimReceipt {
        claim_id,
        position_id: p.id,
        market_id: m.id,
        outcome_id: p.outcome_id,
        session_id: trader.session_id.clone(),
        shares_claimed: Wei(p.shares),
        claimed_amount: Wei(amount),
        payout_ratio: payout_ratio_text(num, den),
        balance_before: Wei(balance_before),
        balance_after: Wei(balance_after),
        claimed_at: Timestamp(now),
        status: ClaimStatus::Completed,
    };
    c.emit(Event::ClaimCompleted { receipt: receipt.clone(), wallet_id: trader.wallet_id.clone() })?;
    Ok(receipt)
}
