//! Trade quotes: the one place that turns a market's state and a request into shares, costs,
//! fees and prices. Previews and trades both call these.

use super::bounds::{largest_gross_within, price_moved, BetBounds, SellBounds};
use super::SellBy;
use crate::domain::fees::{split_fee, FeeSplit, PERCENT_UNITS};
use crate::domain::market::{Market, MarketStatus};
use crate::domain::num::{mul_div, ratio_decimal, relative_change_decimal, Rounding};
use crate::domain::time::Micros;
use crate::error::{Error, Result};

fn engine_error(e: lmsr::LmsrError) -> Error {
    match e {
        lmsr::LmsrError::TradeTooSmall => Error::rule("trade_too_small", "the trade rounds to zero shares or proceeds"),
        lmsr::LmsrError::InsufficientShares | lmsr::LmsrError::Unreachable => {
            Error::rule("insufficient_shares", "not enough shares to sell for that")
        }
        lmsr::LmsrError::Overflow => Error::rule("amount_too_large", "the trade exceeds the supported range"),
        other => Error::internal(format!("lmsr: {other}")),
    }
}

/// Trades need an active market inside its trading window, and not paused.
pub(crate) fn ensure_open(m: &Market, now: Micros) -> Result<()> {
    if m.stored_status != MarketStatus::Active || now < m.starts_at || now >= m.ends_at {
        return Err(Error::conflict("market_not_open", format!("the market is not open for trading (status {})", m.status(now))));
    }
    if m.paused_at.is_some() {
        let reason = m.paused_reason.as_deref().unwrap_or_default();
        return Err(Error::conflict("market_paused", format!("trading on this market is paused: {reason}")));
    }
    Ok(())
}

#[derive(Debug, Clone)]
pub(crate) struct BuyQuote {
    /// The gross amount filled: the request's, or less under a price limit.
    pub(crate) amount: u128,
    /// What the limit left of the requested amount.
    pub(crate) unfilled: u128,
    pub(crate) fee: FeeSplit,
    pub(crate) net_amount: u128,
    pub(crate) shares: u128,
    pub(crate) average_price: String,
    pub(crate) price_impact: String,
    pub(crate) current_price: lmsr::Price,
    pub(crate) new_prices: Vec<lmsr::Price>,
}

/// average price as a 10^36-scaled fixed point, for comparing with an engine price.
fn scaled_ratio(num: u128, den: u128) -> u128 {
    mul_div(num, lmsr::PRICE_SCALE, den, Rounding::Down).unwrap_or(u128::MAX)
}

/// A bet of `amount` within `bounds` (none: the plain bet, with no other work).
pub(crate) fn quote_bet(m: &Market, outcome: usize, amount: u128, bounds: &BetBounds, now: Micros) -> Result<BuyQuote> {
    if bounds.is_none() {
        return quote_buy(m, outcome, amount, now);
    }
    ensure_open(m, now)?;
    check_bet_amount(m, amount)?;
    let current = || m.prices().map(|p| p[outcome]);
    let filled = match bounds.max_price {
        None => amount,
        Some(limit) => {
            let most = lmsr::buy_limit(m.b, &m.shares(), outcome, limit).map_err(engine_error)?;
            let within = largest_gross_within(most.max_cost, m.creator_fee + m.platform_fee).unwrap_or(amount);
            let filled = amount.min(within);
            if filled < m.min_bet.max(1) {
                return Err(price_moved(
                    format!("no bet of at least the minimum {} keeps the price at or below {}", m.min_bet, limit),
                    current()?,
                ));
            }
            filled
        }
    };
    let mut quote = match buy_gross(m, outcome, filled) {
        Err(Error::Rule { code: "trade_too_small", .. }) if filled < amount => {
            return Err(price_moved("the part of the bet within the price limit buys no share", current()?));
        }
        other => other?,
    };
    quote.unfilled = amount - filled;
    if let Some(min) = bounds.min_shares.filter(|&min| quote.shares < min) {
        return Err(price_moved(format!("the bet would buy {} shares, fewer than min_shares {min}", quote.shares), quote.current_price));
    }
    Ok(quote)
}

fn check_bet_amount(m: &Market, amount: u128) -> Result<()> {
    if amount < m.min_bet {
        return Err(Error::rule_on("bet_below_minimum", "amount", format!("the minimum bet is {}", m.min_bet)));
    }
    if amount > m.max_bet {
        return Err(Error::rule_on("bet_above_maximum", "amount", format!("the maximum bet is {}", m.max_bet)));
    }
    Ok(())
}

pub(crate) fn quote_buy(m: &Market, outcome: usize, amount: u128, now: Micros) -> Result<BuyQuote> {
    ensure_open(m, now)?;
    check_bet_amount(m, amount)?;
    buy_gross(m, outcome, amount)
}

/// The bet of gross `amount`: the fee first, then the net buys shares.
fn buy_gross(m: &Market, outcome: usize, amount: u128) -> Result<BuyQuote> {
    let fee = split_fee(amount, m.creator_fee, m.platform_fee);
    let net_amount = amount - fee.total;
    let mut q = m.shares();
    let prices = lmsr::prices(m.b, &q).map_err(engine_error)?;
    let buy = lmsr::buy(m.b, &q, outcome, net_amount).map_err(engine_error)?;
    q[outcome] = q[outcome].checked_add(buy.shares).ok_or_else(|| Error::rule("amount_too_large", "share total overflow"))?;
    let new_prices = lmsr::prices(m.b, &q).map_err(engine_error)?;
    let current_price = prices[outcome];
    let average = scaled_ratio(net_amount, buy.shares);
    Ok(BuyQuote {
        amount,
        unfilled: 0,
        fee,
        net_amount,
        shares: buy.shares,
        average_price: ratio_decimal(net_amount, buy.shares),
        price_impact: relative_change_decimal(average, current_price.raw()),
        current_price,
        new_prices,
    })
}

#[derive(Debug, Clone)]
pub(crate) struct SellQuote {
    pub(crate) shares: u128,
    /// What a price limit left of the shares asked to be sold.
    pub(crate) unfilled: u128,
    pub(crate) proceeds: u128,
    pub(crate) fee: FeeSplit,
    pub(crate) net_proceeds: u128,
    pub(crate) average_price: String,
    pub(crate) price_impact: String,
    pub(crate) current_price: lmsr::Price,
    pub(crate) new_prices: Vec<lmsr::Price>,
}

/// The smallest gross proceeds whose net (after the rounded-up fee) reaches `target`:
/// gross - ceil(gross * r) >= target  <=>  gross >= ceil(target / (1 - r)).
fn gross_for_net(target: u128, fee_units: u32) -> Option<u128> {
    let whole = 100 * u128::from(PERCENT_UNITS);
    mul_div(target, whole, whole - u128::from(fee_units), Rounding::Up)
}

/// `held` bounds the shares that may be sold (the caller's position, or all outstanding
/// shares for a public preview).
pub(crate) fn quote_sell(m: &Market, outcome: usize, by: SellBy, held: u128, now: Micros) -> Result<SellQuote> {
    ensure_open(m, now)?;
    let mut q = m.shares();
    let prices = lmsr::prices(m.b, &q).map_err(engine_error)?;
    let sell = match by {
        SellBy::Shares(shares) => {
            if shares > held {
                return Err(Error::rule_on("insufficient_shares", "shares_amount", format!("only {held} shares are available")));
            }
            lmsr::sell(m.b, &q, outcome, shares).map_err(engine_error)?
        }
        SellBy::TargetProceeds(target) => {
            let gross =
                gross_for_net(target, m.creator_fee + m.platform_fee).ok_or_else(|| Error::rule("amount_too_large", "target too large"))?;
            lmsr::sell_for_proceeds(m.b, &q, outcome, gross, held).map_err(engine_error)?
        }
    };
    let fee = split_fee(sell.proceeds, m.creator_fee, m.platform_fee);
    let net_proceeds = sell.proceeds - fee.total;
    if net_proceeds == 0 {
        return Err(Error::rule("trade_too_small", "the sale's proceeds after fees round to zero"));
    }
    q[outcome] -= sell.shares;
    let new_prices = lmsr::prices(m.b, &q).map_err(engine_error)?;
    let current_price = prices[outcome];
    let average = scaled_ratio(sell.proceeds, sell.shares);
    Ok(SellQuote {
        shares: sell.shares,
        unfilled: 0,
        proceeds: sell.proceeds,
        fee,
        net_proceeds,
        average_price: ratio_decimal(sell.proceeds, sell.shares),
        price_impact: relative_change_decimal(average, current_price.raw()),
        current_price,
        new_prices,
    })
}

/// A sale within `bounds` (none: the plain sale, with no other work).
pub(crate) fn quote_bounded_sell(
    m: &Market,
    outcome: usize,
    by: SellBy,
    bounds: &SellBounds,
    held: u128,
    now: Micros,
) -> Result<SellQuote> {
    if bounds.is_none() {
        return quote_sell(m, outcome, by, held, now);
    }
    ensure_open(m, now)?;
    let current = || m.prices().map(|p| p[outcome]);
    let (sold, asked) = match (by, bounds.min_price) {
        (SellBy::Shares(shares), Some(limit)) if shares <= held => {
            let most = lmsr::sell_limit(m.b, &m.shares(), outcome, limit).map_err(engine_error)?;
            if most == 0 {
                return Err(price_moved(format!("no sale keeps the price at or above {limit}"), current()?));
            }
            (SellBy::Shares(shares.min(most)), shares)
        }
        (SellBy::Shares(shares), _) => (by, shares),
        (SellBy::TargetProceeds(_), _) => (by, 0),
    };
    let mut quote = match quote_sell(m, outcome, sold, held, now) {
        Err(Error::Rule { code: "trade_too_small", .. }) if sold != by => {
            return Err(price_moved("the part of the sale within the price limit pays nothing", current()?));
        }
        other => other?,
    };
    quote.unfilled = asked.saturating_sub(quote.shares);
    if let Some(min) = bounds.min_proceeds.filter(|&min| quote.net_proceeds < min) {
        let detail = format!("the sale would pay {} net, less than min_proceeds {min}", quote.net_proceeds);
        return Err(price_moved(detail, quote.current_price));
    }
    if let Some(max) = bounds.max_shares.filter(|&max| quote.shares > max) {
        return Err(price_moved(format!("the target needs {} shares, more than max_shares {max}", quote.shares), quote.current_price));
    }
    Ok(quote)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gross_for_net_is_the_smallest_sufficient_gross() {
        for (target, units) in [(1u128, 0u32), (100, 30_000), (997, 25_000), (10u128.pow(36), 500_000), (7, 1)] {
            let gross = gross_for_net(target, units).unwrap();
            let net = |g: u128| g - split_fee(g, units, 0).total;
            assert!(net(gross) >= target, "{target} {units}");
            assert!(gross == 0 || net(gross - 1) < target, "{target} {units}");
        }
    }
}
