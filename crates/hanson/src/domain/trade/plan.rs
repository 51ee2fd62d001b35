//! The trade planner: every rule of a bet and a sale, as a pure function. It takes the
//! market, the trader's position and the balances the trade moves, as the store loaded them,
//! and returns everything the trade changes: the transfers and the balances they leave, the
//! position after it, the trade record, the market's new totals and prices, the events, and
//! the receipt. It does no I/O; the store loads, applies the plan and saves.
//!
//! Every check comes before the plan exists, so a store that applies a plan never has to
//! undo part of it for a rule.

use super::quote::{quote_bet, quote_bounded_sell};
use super::{BetReceipt, BetRequest, FilledTrade, SaleReceipt, SellRequest, TradeStatus, Trader};
use crate::domain::event::{Event, OutcomePrice, TradeCreated};
use crate::domain::fees::FeeSplit;
use crate::domain::ids::{MarketId, OutcomeId, PositionId, TradeId};
use crate::domain::ledger::{self, Account, Balances, Transfer, TransferError};
use crate::domain::market::Market;
use crate::domain::money::Wei;
use crate::domain::num::{mul_div, Rounding};
use crate::domain::position::{Holding, Position, PositionStatus};
use crate::domain::time::{Micros, Timestamp};
use crate::domain::trade_record::{TradeKind, TradeRecord};
use crate::error::{Error, Result};

/// What a trade starts from, as the store read it inside the trade's transaction.
pub(crate) struct TradeStart<'a> {
    /// The ids of the accounts the trade moves.
    pub(crate) accounts: &'a TradeAccounts,
    /// Locked (or as the running batch left it), with its pool.
    pub(crate) market: &'a Market,
    /// What the trader holds of the traded outcome, as stored; None if nothing yet.
    pub(crate) position: Option<&'a Position>,
    /// The stored balances among `accounts`; an account absent here does not exist.
    pub(crate) balances: &'a [(String, u128)],
    /// The trader's wallet address (the trade record shows it).
    pub(crate) wallet_address: &'a str,
    pub(crate) now: Micros,
    /// Ids for what the trade creates: its record, and a position if it opens one.
    pub(crate) trade_id: TradeId,
    pub(crate) new_position_id: PositionId,
}

/// The accounts a trade moves: the trader's wallet, the market's pool, the creator's wallet
/// and the platform's (for the fee).
#[derive(Debug, Clone)]
pub(crate) struct TradeAccounts {
    pub(crate) wallet: String,
    pub(crate) pool: String,
    pub(crate) creator: String,
    pub(crate) platform: String,
}

impl TradeAccounts {
    /// A trade by `wallet_id` on the market `market_id`, created by `creator_wallet_id`, in
    /// `token_id`.
    pub(crate) fn of(market_id: &str, creator_wallet_id: &str, token_id: &str, wallet_id: &str) -> TradeAccounts {
        TradeAccounts {
            wallet: ledger::wallet_account(wallet_id, token_id),
            pool: ledger::pool_account(market_id),
            creator: ledger::wallet_account(creator_wallet_id, token_id),
            platform: ledger::platform_account(token_id),
        }
    }

    /// The distinct ids, sorted (the creator may be the trader).
    pub(crate) fn ids(&self) -> Vec<&str> {
        let mut ids = vec![self.wallet.as_str(), &self.pool, &self.creator, &self.platform];
        ids.sort_unstable();
        ids.dedup();
        ids
    }
}

/// What one trade changes in its market's row and its outcome's.
#[derive(Debug, Clone)]
pub(crate) struct TradeTotals {
    pub(crate) outcome: usize,
    pub(crate) total_shares: u128,
    pub(crate) outcome_volume: u128,
    pub(crate) market_volume: u128,
    pub(crate) pool: u128,
    pub(crate) at: Micros,
}

impl TradeTotals {
    /// The market as the trade leaves it.
    pub(crate) fn apply_to(&self, m: &mut Market) {
        let outcome = &mut m.outcomes[self.outcome];
        outcome.total_shares = self.total_shares;
        outcome.total_volume = self.outcome_volume;
        m.total_volume = self.market_volume;
        m.trade_count += 1;
        m.updated_at = self.at;
        m.pool = self.pool;
    }
}

/// Everything one trade changes.
#[derive(Debug)]
pub(crate) struct TradePlan<'a> {
    pub(crate) transfers: Vec<Transfer<'a>>,
    pub(crate) balances: Balances<'a>,
    pub(crate) position: Position,
    /// The position's status as stored; None: the trade opens it.
    pub(crate) stored_status: Option<PositionStatus>,
    pub(crate) totals: TradeTotals,
    /// Every outcome's price after the trade, in outcome order.
    pub(crate) prices: Vec<lmsr::Price>,
    /// In the order they happen: balances, the position, the trade (whose event carries the
    /// trade record, see [`TradePlan::record`]).
    pub(crate) events: Vec<Event>,
}

impl TradePlan<'_> {
    /// The trade record, as its `trade.created` event carries it.
    pub(crate) fn record(&self) -> &TradeRecord {
        self.events
            .iter()
            .find_map(|e| match e {
                Event::TradeCreated(created) => Some(&created.trade),
                _ => None,
            })
            .expect("a plan's events include its trade")
    }
}

fn checked_add(a: u128, b: u128) -> Result<u128> {
    a.checked_add(b).ok_or_else(|| Error::rule("amount_too_large", "a total would exceed the supported maximum"))
}

/// The traded outcome's index; refuses other tenants' markets and unknown outcomes.
fn traded_outcome(m: &Market, trader: &Trader, outcome_id: &str) -> Result<usize> {
    if m.provider_id != trader.provider_id {
        return Err(Error::forbidden("wrong_provider", "this market belongs to another provider than the one you logged in to"));
    }
    m.outcomes
        .iter()
        .position(|o| o.id == outcome_id)
        .ok_or_else(|| Error::rule_on("unknown_outcome", "outcome_id", "no such outcome in this market"))
}

/// The trade's clock: never behind the market's last change, so the order of `created_at`
/// is the order trades were applied.
fn trade_time(m: &Market, now: Micros) -> Micros {
    now.max(m.updated_at)
}

/// The money of one trade: `payer` pays `principal` to `payee`, and `fee_payer` pays the
/// creator's and the platform's shares of the fee.
struct Money<'a> {
    kind: &'static str,
    payer: Account<'a>,
    payee: Account<'a>,
    principal: u128,
    fee_payer: Account<'a>,
    fee: FeeSplit,
}

/// The transfers of `money` on the trade's market, recorded under its id at `at`.
fn trade_transfers<'a>(start: &'a TradeStart<'a>, money: Money<'a>, at: Micros) -> Vec<Transfer<'a>> {
    let m = start.market;
    let transfer = |kind: &'static str, from: Account<'a>, to: Account<'a>, amount: u128| Transfer {
        kind,
        from: Some(from),
        to: Some(to),
        token_id: &m.token.id,
        amount,
        reference_id: Some(&start.trade_id),
        at,
    };
    vec![
        transfer(money.kind, money.payer, money.payee, money.principal),
        transfer("creator_fee", money.fee_payer, Account::wallet(&start.accounts.creator, &m.creator_wallet_id), money.fee.creator),
        transfer("platform_fee", money.fee_payer, Account::platform(&start.accounts.platform), money.fee.platform),
    ]
}

/// One filled trade: its amounts as its record shows them, the money it moved and the
/// position it left.
struct Fill<'a, 'q> {
    outcome: usize,
    at: Micros,
    transfers: Vec<Transfer<'a>>,
    balances: Balances<'a>,
    position: Position,
    kind: TradeKind,
    amount: u128,
    net_amount: u128,
    fee: u128,
    shares: u128,
    new_total_shares: u128,
    average_price: &'q str,
    prices: Vec<lmsr::Price>,
}

/// What bets and sales share once their money and position are settled: the record, the
/// totals, the events and the common part of the receipt.
fn finish<'a>(start: &'a TradeStart<'a>, trader: &Trader, fill: Fill<'a, '_>) -> Result<(TradePlan<'a>, FilledTrade)> {
    let Fill { outcome, at, transfers, balances, position, .. } = fill;
    let m = start.market;
    let o = &m.outcomes[outcome];
    let wallet = &start.accounts.wallet;
    let pool_after = balances.after(&start.accounts.pool);
    let totals = TradeTotals {
        outcome,
        total_shares: fill.new_total_shares,
        outcome_volume: checked_add(o.total_volume, fill.amount)?,
        market_volume: checked_add(m.total_volume, fill.amount)?,
        pool: pool_after,
        at,
    };
    let record = TradeRecord {
        id: start.trade_id.clone(),
        market_id: m.id.clone(),
        outcome_id: o.id.clone(),
        wallet_id: trader.wallet_id.clone(),
        wallet_address: start.wallet_address.to_string(),
        transaction_type: fill.kind,
        amount: Wei(fill.amount),
        shares: Wei(fill.shares),
        price: fill.average_price.to_string(),
        fee: Wei(fill.fee),
        net_amount: Wei(fill.net_amount),
        created_at: Timestamp(at),
    };
    let new_price = fill.prices[outcome];
    let mut events = balances.wallet_events();
    events.push(Event::PositionUpdated(Holding::value(position.clone(), new_price, (1, 1))));
    let prices =
        m.outcomes.iter().zip(&fill.prices).map(|(o, p)| OutcomePrice { outcome_id: o.id.clone(), price: p.to_string() }).collect();
    events.push(Event::TradeCreated(TradeCreated {
        trade: record,
        prices,
        total_volume: Wei(totals.market_volume),
        total_pool: Wei(pool_after),
    }));
    let filled = FilledTrade {
        market_id: MarketId::from(m.id.as_str()),
        outcome_id: OutcomeId::from(o.id.as_str()),
        session_id: trader.session_id.clone(),
        average_price: fill.average_price.to_string(),
        transaction_fee: Wei(fill.fee),
        balance_before: Wei(balances.before(wallet)),
        balance_after: Wei(balances.after(wallet)),
        position_id: position.id.clone(),
        new_outcome_price: new_price.to_string(),
        created_at: Timestamp(at),
        status: TradeStatus::Confirmed,
    };
    let stored_status = start.position.map(|p| p.status);
    Ok((TradePlan { transfers, balances, position, stored_status, totals, prices: fill.prices, events }, filled))
}

/// A bet: the wallet pays `amount`; the fee goes to the creator and the platform, the rest
/// into the pool, and buys shares.
pub(crate) fn plan_bet<'a>(start: &'a TradeStart<'a>, trader: &'a Trader, req: &BetRequest) -> Result<(TradePlan<'a>, BetReceipt)> {
    let m = start.market;
    let index = traded_outcome(m, trader, &req.outcome_id)?;
    let at = trade_time(m, start.now);
    let quote = quote_bet(m, index, req.amount, &req.bounds, at)?;
    if quote.unfilled > 0 {
        // Judged on the requested amount, as a full fill would be.
        let wallet = ledger::wallet_account(&trader.wallet_id, &m.token.id);
        let balance = start.balances.iter().find(|(id, _)| *id == wallet).map_or(0, |(_, b)| *b);
        if balance < req.amount {
            return Err(Error::rule("insufficient_balance", format!("wallet balance is below the bet amount {}", req.amount)));
        }
    }
    let outcome = &m.outcomes[index];
    let new_total_shares = checked_add(outcome.total_shares, quote.shares)?;
    let mut position = start.position.cloned().unwrap_or_else(|| Position {
        id: start.new_position_id.clone(),
        market_id: m.id.clone(),
        outcome_id: outcome.id.clone(),
        wallet_id: trader.wallet_id.clone(),
        shares: 0,
        total_invested: 0,
        status: PositionStatus::Active,
        claimed_amount: None,
        created_at: at,
        updated_at: at,
    });
    position.shares = checked_add(position.shares, quote.shares)?;
    position.total_invested = checked_add(position.total_invested, quote.net_amount)?;
    position.status = PositionStatus::Active;
    position.updated_at = at;

    let wallet = Account::wallet(&start.accounts.wallet, &trader.wallet_id);
    let pool = Account::pool(&start.accounts.pool, &m.id);
    let money = Money { kind: "bet", payer: wallet, payee: pool, principal: quote.net_amount, fee_payer: wallet, fee: quote.fee };
    let transfers = trade_transfers(start, money, at);
    let balances = ledger::apply(start.balances, &transfers).map_err(|e| match e {
        TransferError::Insufficient { .. } => {
            Error::rule("insufficient_balance", format!("wallet balance is below the bet amount {}", req.amount))
        }
        TransferError::Overflow => Error::rule("amount_too_large", "wallet balance would exceed the supported maximum"),
    })?;
    let fill = Fill {
        outcome: index,
        at,
        transfers,
        balances,
        position,
        kind: TradeKind::Buy,
        amount: quote.amount,
        net_amount: quote.net_amount,
        fee: quote.fee.total,
        shares: quote.shares,
        new_total_shares,
        average_price: &quote.average_price,
        prices: quote.new_prices,
    };
    let (plan, filled) = finish(start, trader, fill)?;
    let receipt = BetReceipt {
        bet_id: start.trade_id.clone(),
        amount: Wei(quote.amount),
        unfilled_amount: Wei(quote.unfilled),
        shares_purchased: Wei(quote.shares),
        net_amount: Wei(quote.net_amount),
        fill: filled,
    };
    Ok((plan, receipt))
}

/// A sale: the pool pays the gross proceeds, of which the fee goes to the creator and the
/// platform and the rest to the wallet.
pub(crate) fn plan_sell<'a>(start: &'a TradeStart<'a>, trader: &'a Trader, req: &SellRequest) -> Result<(TradePlan<'a>, SaleReceipt)> {
    let m = start.market;
    let index = traded_outcome(m, trader, &req.outcome_id)?;
    let at = trade_time(m, start.now);
    let held = start.position.filter(|p| p.status == PositionStatus::Active);
    let quote = quote_bounded_sell(m, index, req.by, &req.bounds, held.map_or(0, |p| p.shares), at)?;
    let mut position = held.cloned().ok_or_else(|| Error::rule("insufficient_shares", "no shares of this outcome to sell"))?;
    let outcome = &m.outcomes[index];

    let wallet = Account::wallet(&start.accounts.wallet, &trader.wallet_id);
    let pool = Account::pool(&start.accounts.pool, &m.id);
    let money = Money { kind: "sell", payer: pool, payee: wallet, principal: quote.net_proceeds, fee_payer: pool, fee: quote.fee };
    let transfers = trade_transfers(start, money, at);
    let balances = ledger::apply(start.balances, &transfers).map_err(|e| Error::internal(format!("the pool cannot pay a sale: {e:?}")))?;

    // Average-cost basis: remove the sold shares' share of the basis, rounded up so the
    // remaining basis (what a cancellation refunds) is never overstated.
    let removed = mul_div(position.total_invested, quote.shares, position.shares, Rounding::Up)
        .unwrap_or(position.total_invested)
        .min(position.total_invested);
    position.shares -= quote.shares;
    position.total_invested = if position.shares == 0 { 0 } else { position.total_invested - removed };
    position.status = if position.shares == 0 { PositionStatus::Closed } else { PositionStatus::Active };
    position.updated_at = at;
    let fill = Fill {
        outcome: index,
        at,
        transfers,
        balances,
        position,
        kind: TradeKind::Sell,
        amount: quote.proceeds,
        net_amount: quote.net_proceeds,
        fee: quote.fee.total,
        shares: quote.shares,
        new_total_shares: outcome.total_shares - quote.shares,
        average_price: &quote.average_price,
        prices: quote.new_prices,
    };
    let (plan, filled) = finish(start, trader, fill)?;
    let receipt = SaleReceipt {
        transaction_id: start.trade_id.clone(),
        shares_sold: Wei(quote.shares),
        unfilled_shares: Wei(quote.unfilled),
        proceeds: Wei(quote.proceeds),
        net_proceeds: Wei(quote.net_proceeds),
        fill: filled,
    };
    Ok((plan, receipt))
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
