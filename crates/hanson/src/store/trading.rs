//! Trades and settlement. Each operation is one transaction: lock the market, check the
//! rules, compute with the engine (through `domain::trade`), then write the trade, the
//! position, the outcome totals, the price points and the ledger transfers together.

use serde_json::{json, Value};

use super::history;
use super::hot::{self, TradeTotals};
use super::ledger::{self, Account, Kind, Transfer};
use super::markets::{self, MarketRecord};
use super::sql::{Conn, Param, Row};
use crate::domain::money::Wei;
use crate::domain::num::{mul_div, ratio_decimal, Rounding};
use crate::domain::time::{format_micros, Micros};
use crate::domain::trade::{quote_buy, quote_sell, SellBy};
use crate::error::{Error, Result};

#[derive(Debug, Clone)]
pub struct Position {
    pub id: String,
    pub market_id: String,
    pub outcome_id: String,
    pub wallet_id: String,
    pub shares: u128,
    pub total_invested: u128,
    pub status: String,
    pub claimed_amount: Option<u128>,
    pub created_at: Micros,
    pub updated_at: Micros,
}

pub const POSITION_COLUMNS: &str =
    "id, market_id, outcome_id, wallet_id, shares, total_invested, status, claimed_amount, created_at, updated_at";

pub fn position_from_row(r: &Row) -> Result<Position> {
    Ok(Position {
        id: r.text(0)?,
        market_id: r.text(1)?,
        outcome_id: r.text(2)?,
        wallet_id: r.text(3)?,
        shares: r.money(4)?,
        total_invested: r.money(5)?,
        status: r.text(6)?,
        claimed_amount: r.opt_money(7)?,
        created_at: r.int(8)?,
        updated_at: r.int(9)?,
    })
}

fn position_of(c: &mut dyn Conn, wallet_id: &str, outcome_id: &str) -> Result<Option<Position>> {
    let sql = format!("SELECT {POSITION_COLUMNS} FROM positions WHERE wallet_id = $1 AND outcome_id = $2{}", c.lock_clause());
    c.query_opt(&sql, &[Param::Text(wallet_id), Param::Text(outcome_id)])?.map(|r| position_from_row(&r)).transpose()
}

/// Stores a position: inserted when `stored_status` is None (it was never stored), else
/// updated from that status.
fn save_position(c: &mut dyn Conn, p: &Position, stored_status: Option<&str>) -> Result<()> {
    match stored_status {
        None => c.exec(
            "INSERT INTO positions (id, market_id, outcome_id, wallet_id, shares, total_invested, status, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            &[
                Param::Text(&p.id),
                Param::Text(&p.market_id),
                Param::Text(&p.outcome_id),
                Param::Text(&p.wallet_id),
                Param::Money(p.shares),
                Param::Money(p.total_invested),
                Param::Text(&p.status),
                Param::Int(p.created_at),
                Param::Int(p.updated_at),
            ],
        )?,
        // Leaving an unchanged status out keeps SQLite from rewriting the position's entry in
        // the (market_id, status) index on every trade.
        Some(status) if status == p.status => c.exec(
            "UPDATE positions SET shares = $1, total_invested = $2, updated_at = $3 WHERE id = $4",
            &[Param::Money(p.shares), Param::Money(p.total_invested), Param::Int(p.updated_at), Param::Text(&p.id)],
        )?,
        Some(_) => c.exec(
            "UPDATE positions SET shares = $1, total_invested = $2, status = $3, updated_at = $4 WHERE id = $5",
            &[Param::Money(p.shares), Param::Money(p.total_invested), Param::Text(&p.status), Param::Int(p.updated_at), Param::Text(&p.id)],
        )?,
    };
    Ok(())
}

/// Who is trading: the wallet and session behind the access token.
#[derive(Debug, Clone)]
pub struct Trader {
    pub wallet_id: String,
    pub session_id: String,
    pub provider_id: String,
}

/// The market to trade on, locked (or as this group commit left it, see `hot`); rejects other tenants' markets and unknown outcomes.
fn trading_market(c: &mut dyn Conn, trader: &Trader, market_id: &str, outcome_id: &str) -> Result<(MarketRecord, usize)> {
    let m = match c.hot().and_then(|hot| hot.get(market_id)).cloned() {
        Some(m) => m,
        None => {
            let mut m = markets::market(c, market_id, true)?.ok_or(Error::NotFound)?;
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

/// Writes what every trade changes besides money: outcome and market totals (in memory
/// where the connection keeps the market, see `hot`), the trade record and one price point
/// per outcome.
struct TradeWrite<'a> {
    market: &'a MarketRecord,
    outcome: usize,
    trade_id: &'a str,
    trader: &'a Trader,
    wallet_address: &'a str,
    kind: &'a str,
    amount: u128,
    net_amount: u128,
    fee: u128,
    shares: u128,
    new_total_shares: u128,
    pool_after: u128,
    price: &'a str,
    new_prices: &'a [lmsr::Price],
    at: Micros,
}

fn record_trade(c: &mut dyn Conn, t: TradeWrite<'_>) -> Result<()> {
    let o = &t.market.outcomes[t.outcome];
    let totals = TradeTotals {
        outcome: t.outcome,
        total_shares: t.new_total_shares,
        outcome_volume: checked_add(o.total_volume, t.amount)?,
        market_volume: checked_add(t.market.total_volume, t.amount)?,
        pool: t.pool_after,
        at: t.at,
    };
    c.exec(
        "INSERT INTO trades (id, market_id, outcome_id, wallet_id, wallet_address, session_id, transaction_type, amount, \
         net_amount, fee, shares, price, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
        &[
            Param::Text(t.trade_id),
            Param::Text(&t.market.id),
            Param::Text(&o.id),
            Param::Text(&t.trader.wallet_id),
            Param::Text(t.wallet_address),
            Param::Text(&t.trader.session_id),
            Param::Text(t.kind),
            Param::Money(t.amount),
            Param::Money(t.net_amount),
            Param::Money(t.fee),
            Param::Money(t.shares),
            Param::Text(t.price),
            Param::Int(t.at),
        ],
    )?;
    let points: Vec<history::NewPricePoint<'_>> = t
        .market
        .outcomes
        .iter()
        .zip(t.new_prices)
        .map(|(outcome, price)| history::NewPricePoint {
            outcome_id: &outcome.id,
            price: price.raw(),
            volume: if outcome.id == o.id { t.amount } else { 0 },
            total_before: outcome.total_volume,
        })
        .collect();
    let candles = history::insert_price_points(c, &t.market.id, &points, t.at)?;
    // Last, and infallible where the market is kept: a trade that failed before this point
    // left the copy untouched.
    let unkept = match c.hot() {
        Some(hot) => hot.record_trade(&t.market.id, &totals, candles),
        None => Some(candles),
    };
    if let Some(candles) = unkept {
        let mut after = t.market.clone();
        totals.apply_to(&mut after);
        hot::write_totals(c, &after, std::slice::from_ref(&after.outcomes[t.outcome]), 1)?;
        history::upsert_candles(c, &t.market.id, &candles)?;
    }
    Ok(())
}

fn wallet_side<'a>(account: &'a str, wallet_id: &'a str) -> Account<'a> {
    Account { id: account, kind: Kind::Wallet, owner_id: Some(wallet_id) }
}

/// The money of one trade: `payer` moves `principal` to `payee`, and the fee shares move
/// from `fee_payer` to the creator wallet and the platform account; all in one ledger pass.
struct TradeMoney<'a> {
    kind: &'a str,
    payer: Account<'a>,
    payee: Account<'a>,
    principal: u128,
    fee_payer: Account<'a>,
    fee: crate::domain::fees::FeeSplit,
}

fn move_trade_money(c: &mut dyn Conn, m: &MarketRecord, money: TradeMoney<'_>, reference: &str, at: Micros) -> Result<ledger::Touched> {
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
    let row = c.query_opt(
        "SELECT s.wallet_id, s.provider_id, s.revoked_at, w.address FROM sessions s JOIN wallets w ON w.id = s.wallet_id WHERE s.id = $1",
        &[Param::Text(&trader.session_id)],
    )?;
    match row {
        Some(r) if r.opt_int(2)?.is_none() && r.text(0)? == trader.wallet_id && r.text(1)? == trader.provider_id => r.text(3),
        _ => Err(Error::Unauthenticated("the session has ended")),
    }
}

#[derive(Debug, Clone)]
pub struct BetRequest {
    pub market_id: String,
    pub outcome_id: String,
    pub amount: u128,
}

/// `address` is the wallet's, as [`live_session`] returned it in this transaction.
pub fn place_bet(c: &mut dyn Conn, trader: &Trader, address: &str, req: &BetRequest) -> Result<Value> {
    let (m, index) = trading_market(c, trader, &req.market_id, &req.outcome_id)?;
    // Read the clock under the market lock, never behind the market's last change: the
    // order of created_at is the order trades were applied.
    let now = crate::domain::time::now_micros().max(m.updated_at);
    let quote = quote_buy(&m, index, req.amount, now)?;
    let account = ledger::wallet_account(&trader.wallet_id, &m.token.id);
    let bet_id = crate::domain::ids::new_id();
    let pool = ledger::pool_account(&m.id);
    let money = TradeMoney {
        kind: "bet",
        payer: wallet_side(&account, &trader.wallet_id),
        payee: Account { id: &pool, kind: Kind::Pool, owner_id: Some(&m.id) },
        principal: quote.net_amount,
        fee_payer: wallet_side(&account, &trader.wallet_id),
        fee: quote.fee,
    };
    // Every check before the first write (see `Undo::WholeBatch`).
    let outcome = &m.outcomes[index];
    let new_total_shares = checked_add(outcome.total_shares, quote.shares)?;
    let (mut position, stored_status) = match position_of(c, &trader.wallet_id, &outcome.id)? {
        Some(p) => {
            let status = p.status.clone();
            (p, Some(status))
        }
        None => (
            Position {
                id: crate::domain::ids::new_id(),
                market_id: m.id.clone(),
                outcome_id: outcome.id.clone(),
                wallet_id: trader.wallet_id.clone(),
                shares: 0,
                total_invested: 0,
                status: "active".into(),
                claimed_amount: None,
                created_at: now,
                updated_at: now,
            },
            None,
        ),
    };
    position.shares = checked_add(position.shares, quote.shares)?;
    position.total_invested = checked_add(position.total_invested, quote.net_amount)?;
    position.status = "active".into();
    position.updated_at = now;

    let touched = move_trade_money(c, &m, money, &bet_id, now).map_err(|e| match e {
        Error::Rule { code: "insufficient_balance", .. } => {
            Error::rule("insufficient_balance", format!("wallet balance is below the bet amount {}", req.amount))
        }
        other => other,
    })?;
    let (balance_before, balance_after) = (touched.before(&account), touched.after(&account));
    save_position(c, &position, stored_status.as_deref())?;

    record_trade(
        c,
        TradeWrite {
            market: &m,
            outcome: index,
            trade_id: &bet_id,
            trader,
            wallet_address: address,
            kind: "buy",
            amount: req.amount,
            net_amount: quote.net_amount,
            fee: quote.fee.total,
            shares: quote.shares,
            new_total_shares,
            pool_after: touched.after(&pool),
            price: &quote.average_price,
            new_prices: &quote.new_prices,
            at: now,
        },
    )?;
    Ok(json!({
        "bet_id": bet_id,
        "market_id": m.id,
        "outcome_id": outcome.id,
        "session_id": trader.session_id,
        "amount": Wei(req.amount),
        "shares_purchased": Wei(quote.shares),
        "average_price": quote.average_price,
        "transaction_fee": Wei(quote.fee.total),
        "net_amount": Wei(quote.net_amount),
        "balance_before": Wei(balance_before),
        "balance_after": Wei(balance_after),
        "position_id": position.id,
        "new_outcome_price": quote.new_prices[index].to_string(),
        "created_at": format_micros(now),
        "status": "confirmed",
    }))
}

#[derive(Debug, Clone)]
pub struct SellRequest {
    pub market_id: String,
    pub outcome_id: String,
    pub by: SellBy,
}

/// `address` is the wallet's, as [`live_session`] returned it in this transaction.
pub fn sell(c: &mut dyn Conn, trader: &Trader, address: &str, req: &SellRequest) -> Result<Value> {
    let (m, index) = trading_market(c, trader, &req.market_id, &req.outcome_id)?;
    // Read the clock under the market lock, never behind the market's last change: the
    // order of created_at is the order trades were applied.
    let now = crate::domain::time::now_micros().max(m.updated_at);
    let outcome = &m.outcomes[index];
    let held = position_of(c, &trader.wallet_id, &outcome.id)?.filter(|p| p.status == "active");
    let held_shares = held.as_ref().map_or(0, |p| p.shares);
    let quote = quote_sell(&m, index, req.by, held_shares, now)?;
    let mut position = held.ok_or_else(|| Error::rule("insufficient_shares", "no shares of this outcome to sell"))?;

    let account = ledger::wallet_account(&trader.wallet_id, &m.token.id);
    let sell_id = crate::domain::ids::new_id();
    let pool = ledger::pool_account(&m.id);
    let money = TradeMoney {
        kind: "sell",
        payer: Account { id: &pool, kind: Kind::Pool, owner_id: Some(&m.id) },
        payee: wallet_side(&account, &trader.wallet_id),
        principal: quote.net_proceeds,
        fee_payer: Account { id: &pool, kind: Kind::Pool, owner_id: Some(&m.id) },
        fee: quote.fee,
    };
    let touched = move_trade_money(c, &m, money, &sell_id, now)
        .map_err(|e| Error::internal(format!("the pool cannot pay a sale: {e}")))?;
    let (balance_before, balance_after) = (touched.before(&account), touched.after(&account));

    // Average-cost basis: remove the sold shares' share of the basis, rounded up so the
    // remaining basis (what a cancellation refunds) is never overstated.
    let removed = mul_div(position.total_invested, quote.shares, position.shares, Rounding::Up)
        .unwrap_or(position.total_invested)
        .min(position.total_invested);
    position.shares -= quote.shares;
    position.total_invested = if position.shares == 0 { 0 } else { position.total_invested - removed };
    position.status = if position.shares == 0 { "closed".into() } else { "active".into() };
    position.updated_at = now;
    // `held` is active (filtered above).
    save_position(c, &position, Some("active"))?;

    record_trade(
        c,
        TradeWrite {
            market: &m,
            outcome: index,
            trade_id: &sell_id,
            trader,
            wallet_address: address,
            kind: "sell",
            amount: quote.proceeds,
            net_amount: quote.net_proceeds,
            fee: quote.fee.total,
            shares: quote.shares,
            new_total_shares: outcome.total_shares - quote.shares,
            pool_after: touched.after(&pool),
            price: &quote.average_price,
            new_prices: &quote.new_prices,
            at: now,
        },
    )?;
    Ok(json!({
        "transaction_id": sell_id,
        "market_id": m.id,
        "outcome_id": outcome.id,
        "session_id": trader.session_id,
        "shares_sold": Wei(quote.shares),
        "proceeds": Wei(quote.proceeds),
        "average_price": quote.average_price,
        "transaction_fee": Wei(quote.fee.total),
        "net_proceeds": Wei(quote.net_proceeds),
        "balance_before": Wei(balance_before),
        "balance_after": Wei(balance_after),
        "position_id": position.id,
        "new_outcome_price": quote.new_prices[index].to_string(),
        "created_at": format_micros(now),
        "status": "confirmed",
    }))
}

fn ensure_settleable(m: &MarketRecord) -> Result<()> {
    if m.is_settled() {
        return Err(Error::conflict("market_settled", format!("the market is already {}", m.stored_status)));
    }
    Ok(())
}

fn active_positions(c: &mut dyn Conn, market_id: &str) -> Result<Vec<Position>> {
    let sql = format!("SELECT {POSITION_COLUMNS} FROM positions WHERE market_id = $1 AND status = 'active' ORDER BY created_at, id");
    c.query(&sql, &[Param::Text(market_id)])?.iter().map(position_from_row).collect()
}

/// Returns what is left in the pool beyond `keep` to the provider's treasury.
fn return_surplus(c: &mut dyn Conn, m: &MarketRecord, keep: u128, at: Micros) -> Result<()> {
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

fn settle_market(c: &mut dyn Conn, m: &MarketRecord, status: &str, num: u128, den: u128, winner: Option<&str>, resolution_source: Option<&str>, resolver: Option<&str>, settlement: &Value, at: Micros) -> Result<()> {
    c.exec(
        "UPDATE markets SET status = $1, payout_num = $2, payout_den = $3, winning_outcome_id = $4, resolution_source = $5, \
         resolver_wallet_id = $6, settlement = $7, settled_at = $8, updated_at = $8 WHERE id = $9",
        &[
            Param::Text(status),
            Param::Money(num),
            Param::Money(den),
            winner.into(),
            resolution_source.into(),
            resolver.into(),
            Param::Text(&settlement.to_string()),
            Param::Int(at),
            Param::Text(&m.id),
        ],
    )?;
    Ok(())
}

/// A payout ratio as a decimal string; "1" exactly when fully funded.
fn ratio_text(num: u128, den: u128) -> String {
    if num == den || den == 0 {
        "1".to_string()
    } else {
        ratio_decimal(num, den)
    }
}

#[derive(Debug, Clone)]
pub struct ResolveRequest {
    pub market_id: String,
    pub winning_outcome_id: String,
    pub resolver_wallet_id: String,
    pub resolution_source: Option<String>,
    pub resolution_data: Value,
}

/// Resolves: the pool keeps exactly what winners are owed and returns the rest to the
/// treasury at once; active positions become won or lost.
pub fn resolve(c: &mut dyn Conn, provider_id: &str, req: &ResolveRequest, now: Micros) -> Result<Value> {
    let m = markets::provider_market(c, provider_id, &req.market_id)?;
    ensure_settleable(&m)?;
    let winner = m
        .outcomes
        .iter()
        .find(|o| o.id == req.winning_outcome_id)
        .ok_or_else(|| Error::rule_on("unknown_outcome", "winning_outcome_id", "no such outcome in this market"))?;
    let total_pool = m.pool;
    let winning_pool = winner.total_shares;
    // Solvency keeps pool >= every outcome's shares; scale down only if that ever failed.
    let (num, den) = if total_pool >= winning_pool { (1, 1) } else { (total_pool, winning_pool) };
    let positions = active_positions(c, &m.id)?;
    for p in &positions {
        let status = if p.outcome_id == winner.id && p.shares > 0 { "won" } else { "lost" };
        c.exec("UPDATE positions SET status = $1, updated_at = $2 WHERE id = $3", &[Param::Text(status), Param::Int(now), Param::Text(&p.id)])?;
    }
    let owed: u128 = positions
        .iter()
        .filter(|p| p.outcome_id == winner.id)
        .map(|p| mul_div(p.shares, num, den, Rounding::Down).unwrap_or(0))
        .sum();
    return_surplus(c, &m, owed, now)?;
    let resolution_source = req.resolution_source.clone().or_else(|| m.resolution_source.clone());
    let response = json!({
        "market_id": m.id,
        "winning_outcome_id": winner.id,
        "resolved_at": format_micros(now),
        "total_pool": Wei(total_pool),
        "winning_pool": Wei(winning_pool),
        "payout_ratio": ratio_text(num, den),
        "positions_updated": positions.len(),
        "resolution_source": resolution_source,
        "resolver_wallet_id": req.resolver_wallet_id,
        "resolution_data": req.resolution_data,
        "status": "resolved",
    });
    settle_market(c, &m, "resolved", num, den, Some(&winner.id), resolution_source.as_deref(), Some(&req.resolver_wallet_id), &response, now)?;
    Ok(response)
}

#[derive(Debug, Clone)]
pub struct CancelRequest {
    pub market_id: String,
    pub canceller_wallet_id: String,
    pub cancellation_source: String,
    pub reason: String,
    pub cancellation_data: Value,
}

/// Cancels: refunds every open position its remaining cost basis (scaled pro rata if the
/// pool cannot cover all), returns the rest of the pool to the treasury.
pub fn cancel(c: &mut dyn Conn, provider_id: &str, req: &CancelRequest, now: Micros) -> Result<Value> {
    let m = markets::provider_market(c, provider_id, &req.market_id)?;
    ensure_settleable(&m)?;
    let positions = active_positions(c, &m.id)?;
    let owed: u128 = positions.iter().try_fold(0u128, |acc, p| checked_add(acc, p.total_invested))?;
    let (num, den) = if m.pool >= owed { (1, 1) } else { (m.pool, owed) };
    let pool = ledger::pool_account(&m.id);
    let mut by_wallet: Vec<(String, u128, usize)> = Vec::new();
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
            "UPDATE positions SET status = 'refunded', claimed_amount = $1, updated_at = $2 WHERE id = $3",
            &[Param::Money(refund), Param::Int(now), Param::Text(&p.id)],
        )?;
        total_refund += refund;
        match by_wallet.iter_mut().find(|(w, _, _)| *w == p.wallet_id) {
            Some(entry) => {
                entry.1 += refund;
                entry.2 += 1;
            }
            None => by_wallet.push((p.wallet_id.clone(), refund, 1)),
        }
    }
    return_surplus(c, &m, 0, now)?;
    let response = json!({
        "market_id": m.id,
        "cancelled_at": format_micros(now),
        "total_refund_amount": Wei(total_refund),
        "positions_refunded": positions.len(),
        "user_refunds": by_wallet.iter().map(|(wallet_id, refund, count)| json!({
            "wallet_id": wallet_id, "refund_amount": Wei(*refund), "original_positions": count,
        })).collect::<Vec<_>>(),
        "refund_ratio": ratio_text(num, den),
        "canceller_wallet_id": req.canceller_wallet_id,
        "cancellation_source": req.cancellation_source,
        "reason": req.reason,
        "cancellation_data": req.cancellation_data,
        "status": "cancelled",
    });
    settle_market(c, &m, "cancelled", num, den, None, m.resolution_source.as_deref(), None, &response, now)?;
    Ok(response)
}

/// The settlement terms of a resolved market: (numerator, denominator) per winning share.
pub fn payout_terms(c: &mut dyn Conn, market_id: &str) -> Result<(u128, u128)> {
    let row = c.query_one("SELECT payout_num, payout_den FROM markets WHERE id = $1", &[Param::Text(market_id)])?;
    Ok((row.opt_money(0)?.unwrap_or(1), row.opt_money(1)?.unwrap_or(1)))
}

/// The caller has checked the session with [`live_session`] in this transaction.
pub fn claim(c: &mut dyn Conn, trader: &Trader, position_id: &str, now: Micros) -> Result<Value> {
    let sql = format!("SELECT {POSITION_COLUMNS} FROM positions WHERE id = $1{}", c.lock_clause());
    let p = c
        .query_opt(&sql, &[Param::Text(position_id)])?
        .map(|r| position_from_row(&r))
        .transpose()?
        .filter(|p| p.wallet_id == trader.wallet_id)
        .ok_or(Error::NotFound)?;
    match p.status.as_str() {
        "claimed" => return Err(Error::conflict("already_claimed", "this position was already claimed")),
        "won" => {}
        other => return Err(Error::conflict("not_claimable", format!("a {other} position has nothing to claim"))),
    }
    let m = markets::market(c, &p.market_id, true)?.ok_or_else(|| Error::internal("position without market"))?;
    let (num, den) = payout_terms(c, &m.id)?;
    let amount = mul_div(p.shares, num, den, Rounding::Down).unwrap_or(0);
    let account = ledger::wallet_account(&trader.wallet_id, &m.token.id);
    let balance_before = ledger::balance(c, &account)?;
    let pool = ledger::pool_account(&m.id);
    let claim_id = crate::domain::ids::new_id();
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
        "UPDATE positions SET status = 'claimed', claimed_amount = $1, updated_at = $2 WHERE id = $3",
        &[Param::Money(amount), Param::Int(now), Param::Text(&p.id)],
    )?;
    Ok(json!({
        "claim_id": claim_id,
        "position_id": p.id,
        "market_id": m.id,
        "outcome_id": p.outcome_id,
        "session_id": trader.session_id,
        "shares_claimed": Wei(p.shares),
        "claimed_amount": Wei(amount),
        "payout_ratio": ratio_text(num, den),
        "balance_before": Wei(balance_before),
        "balance_after": Wei(balance_after),
        "claimed_at": format_micros(now),
        "status": "completed",
    }))
}
