//! Bets and sales in the store: load what the trade starts from (through the batch's copies
//! when it runs in a batch), have `domain::trade::plan` plan it, and apply the plan: the
//! balances and transfer rows, the position, the trade record, the price points and candles,
//! the market's totals, and the events.

use super::accounts;
use super::batch;
use super::history::points::{self, NewPricePoint};
use super::history::trades;
use super::sessions::KeptSession;
use super::tx::Tx;
use crate::domain::ids::{new_id, PositionId, TradeId};
use crate::domain::market::Market;
use crate::domain::position::Position;
use crate::domain::time::now_micros;
use crate::domain::trade::plan::{plan_bet, plan_sell, TradeAccounts, TradePlan, TradeStart};
use crate::domain::trade::{BetReceipt, BetRequest, SaleReceipt, SellRequest, Trader};
use crate::error::{Error, Result};

/// The live-session check of a trade or claim, in its own transaction: the token's session
/// must exist, be unrevoked and belong to the token's wallet and provider. Returns the
/// wallet's address.
pub(crate) fn live_session(tx: &mut Tx<'_>, trader: &Trader) -> Result<String> {
    let (c, rows) = tx.parts();
    match batch::session(c, rows, &trader.session_id)? {
        Some(KeptSession { session, address }) if session.is_live_for(&trader.wallet_id, &trader.provider_id) => Ok(address),
        _ => Err(Error::Unauthenticated("the session has ended")),
    }
}

/// The market, the trader's position, the accounts the trade moves and their stored balances.
struct Loaded {
    market: Market,
    position: Option<Position>,
    accounts: TradeAccounts,
    balances: Vec<(String, u128)>,
}

/// Reads what a trade by `trader` on `outcome_id` of `market_id` starts from: the market, the
/// trader's position and the balances the trade moves.
fn load(tx: &mut Tx<'_>, trader: &Trader, market_id: &str, outcome_id: &str) -> Result<Loaded> {
    let (c, mut rows) = tx.parts();
    let market = batch::market(c, rows.as_deref_mut(), market_id)?;
    let position = batch::position(c, rows.as_deref_mut(), &trader.wallet_id, outcome_id)?;
    let accounts = TradeAccounts::of(&market.id, &market.creator_wallet_id, &market.token.id, &trader.wallet_id);
    let balances = batch::balances(c, rows, &accounts.ids())?;
    Ok(Loaded { market, position, accounts, balances })
}

impl Loaded {
    /// What the planner starts from, with fresh ids and the clock read now, under the
    /// market's lock.
    fn start<'a>(&'a self, address: &'a str) -> TradeStart<'a> {
        TradeStart {
            accounts: &self.accounts,
            market: &self.market,
            position: self.position.as_ref(),
            balances: &self.balances,
            wallet_address: address,
            now: now_micros(),
            trade_id: TradeId::new(),
            new_position_id: PositionId(new_id()),
        }
    }
}

/// `address` is the wallet's, as [`live_session`] returned it in this transaction.
pub(crate) fn place_bet(tx: &mut Tx<'_>, trader: &Trader, address: &str, req: &BetRequest) -> Result<BetReceipt> {
    let loaded = load(tx, trader, &req.market_id, &req.outcome_id)?;
    let start = loaded.start(address);
    let (plan, receipt) = plan_bet(&start, trader, req)?;
    apply(tx, trader, &loaded.market, plan)?;
    Ok(receipt)
}

/// `address` is the wallet's, as [`live_session`] returned it in this transaction.
pub(crate) fn sell(tx: &mut Tx<'_>, trader: &Trader, address: &str, req: &SellRequest) -> Result<SaleReceipt> {
    let loaded = load(tx, trader, &req.market_id, &req.outcome_id)?;
    let start = loaded.start(address);
    let (plan, receipt) = plan_sell(&start, trader, req)?;
    apply(tx, trader, &loaded.market, plan)?;
    Ok(receipt)
}

/// Writes what the plan changes, in the order a failure is cheapest to undo: the money, the
/// position, the record and price points, and last the market's totals (in the batch's copy
/// where it keeps one, which a failure before it left untouched).
fn apply(tx: &mut Tx<'_>, trader: &Trader, before: &Market, plan: TradePlan<'_>) -> Result<()> {
    let (c, mut rows) = tx.parts();
    batch::set_balance(c, rows.as_deref_mut(), &plan.balances)?;
    accounts::insert_transfers(c, &plan.transfers)?;
    batch::save_position(c, rows.as_deref_mut(), &plan.position, plan.stored_status)?;
    trades::insert_trade(c, plan.record(), &trader.session_id)?;
    let (traded, amount) = (plan.totals.outcome, plan.record().amount.0);
    let points: Vec<NewPricePoint<'_>> = before
        .outcomes
        .iter()
        .zip(&plan.prices)
        .enumerate()
        .map(|(i, (outcome, price))| NewPricePoint {
            outcome_id: &outcome.id,
            price: price.raw(),
            volume: if i == traded { amount } else { 0 },
            total_before: outcome.total_volume,
        })
        .collect();
    let candles = points::insert_price_points(c, &before.id, &points, plan.totals.at)?;
    batch::record_trade(c, rows, before, &plan.totals, candles)?;
    for event in plan.events {
        tx.emit(event);
    }
    Ok(())
}
