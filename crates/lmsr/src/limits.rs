//! Price limits: the largest buy whose price after it stays at or below a limit, and the
//! largest sale whose price after it stays at or above one.
//!
//! The price of outcome i with q_i := t is `p(t) = e / (R + e)`, e = e^{(t - m_o)/b}, so the
//! share count at which it reaches a limit L has the closed form
//! `t* = m_o + b ln(L R / (1 - L))`. That only chooses where to look: every answer is
//! confirmed by comparing the interval of `p(t)` with L (one exp per comparison), so a
//! returned count is one whose price is proven within the limit, and the next count's is not
//! proven to be (it errs low only when L lies within the interval's width, about 2^-240, of a
//! price).

use crate::fixed::{ln, Fx, FRAC_BITS, ONE};
use crate::{last_true, LmsrError, OutcomeView, Price, Search, Wei, MAX_VALUE, PRICE_SCALE};
use ruint::aliases::U512;

/// What a buy may do without its price passing a limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuyLimit {
    /// Most shares whose price after the buy is proven <= the limit (0: the price is already
    /// above it, or not proven below).
    pub shares: u128,
    /// The largest amount a buy may spend and still buy no more than `shares`: the charged
    /// cost of `shares + 1`, less 1 wei (`u128::MAX` when every supported count is within).
    pub max_cost: u128,
}

/// Raw 10^36-scaled limits strictly inside (0, 1).
fn check_limit(limit: Price) -> Result<u128, LmsrError> {
    match limit.raw() {
        0 => Err(LmsrError::InvalidLimit),
        raw if raw >= PRICE_SCALE => Err(LmsrError::InvalidLimit),
        raw => Ok(raw),
    }
}

/// ln of a positive integer below 2^127, as a fixed-point midpoint (estimates only).
fn ln_int(n: u128) -> Fx {
    let k = (128 - n.leading_zeros() as usize).saturating_sub(63);
    // n / 2^k in [1, 2^63), exact in 256 fractional bits.
    let z = Fx::from(n) << (FRAC_BITS - k);
    let scaled = ln(z).mid();
    if k == 0 {
        scaled
    } else {
        scaled + ln(ONE << k).mid()
    }
}

impl OutcomeView {
    /// Proven p(t) <= L / 10^36 (`upper` true) or proven p(t) >= L / 10^36 (`upper` false).
    fn price_proven(&self, t: u128, limit: u128, upper: bool) -> bool {
        let scale = U512::from(PRICE_SCALE);
        let l = U512::from(limit);
        let (r_lo, r_hi) = (U512::from(self.rest.lo), U512::from(self.rest.hi));
        if t <= self.m_o {
            // p = e / (R + e), increasing in e and decreasing in R.
            let e = self.recip.exp_neg_ratio(self.m_o - t);
            if upper {
                U512::from(e.hi) * (scale - l) <= l * r_lo
            } else {
                U512::from(e.lo) * (scale - l) >= l * r_hi
            }
        } else {
            // p = 1 / (1 + R e'), e' = e^{-(t - m_o)/b}.
            let e = self.recip.exp_neg_ratio(t - self.m_o);
            let one = U512::from(ONE);
            if upper {
                let low = U512::from(crate::fixed::mul_floor(self.rest.lo, e.lo));
                scale * one <= l * (one + low)
            } else {
                let high = U512::from(crate::fixed::mul_ceil(self.rest.hi, e.hi));
                scale * one >= l * (one + high)
            }
        }
    }

    /// The t at which the price of i reaches `limit`, estimated; None below t = 0.
    fn limit_estimate(&self, limit: u128) -> Option<u128> {
        let up = crate::fixed::ln_iv(self.rest).mid() + ln_int(limit);
        let down = ln_int(PRICE_SCALE - limit);
        let b = Wei::from(self.b);
        let base = Wei::from(self.m_o) << FRAC_BITS;
        let t = if up >= down { base + b * Wei::from(up - down) } else { base.checked_sub(b * Wei::from(down - up))? };
        Some((t >> FRAC_BITS).saturating_to::<u128>())
    }
}

/// The most shares of `outcome` a buy may take with the price after it proven <= `limit`,
/// and the largest amount whose buy stays within them.
pub fn buy_limit(b: u128, q: &[u128], outcome: usize, limit: Price) -> Result<BuyLimit, LmsrError> {
    let view = OutcomeView::new(b, q, outcome)?;
    let limit = check_limit(limit)?;
    if view.q_i >= MAX_VALUE {
        return Err(LmsrError::Overflow);
    }
    let room = MAX_VALUE - view.q_i;
    let guess = view.limit_estimate(limit).map_or(0, |t| t.saturating_sub(view.q_i));
    let within = |s: u128| view.price_proven(view.q_i + s, limit, true);
    let shares = match last_true(within, guess, 0, room) {
        Search::Found(s) => s,
        Search::NoneTrue => 0,
        Search::AllTrue => return Ok(BuyLimit { shares: room, max_cost: u128::MAX }),
    };
    Ok(BuyLimit { shares, max_cost: view.charged_cost(shares + 1) - 1 })
}

/// The most shares of `outcome` a sale may sell (at most `q_i`) with the price after it
/// proven >= `limit`; 0 when the price is already below it, or not proven above.
pub fn sell_limit(b: u128, q: &[u128], outcome: usize, limit: Price) -> Result<u128, LmsrError> {
    let view = OutcomeView::new(b, q, outcome)?;
    let limit = check_limit(limit)?;
    let guess = view.limit_estimate(limit).map_or(view.q_i, |t| view.q_i.saturating_sub(t));
    let within = |s: u128| view.price_proven(view.q_i - s, limit, false);
    Ok(match last_true(within, guess, 0, view.q_i) {
        Search::Found(s) => s,
        Search::NoneTrue => 0,
        Search::AllTrue => view.q_i,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{buy, buy_cost, prices};

    const E18: u128 = 1_000_000_000_000_000_000;

    fn price(raw: u128) -> Price {
        Price::from_raw(raw)
    }

    #[test]
    fn a_limit_at_the_current_price_of_an_even_market_buys_nothing_more() {
        let q = [0, 0];
        let half = PRICE_SCALE / 2;
        let fill = buy_limit(1000 * E18, &q, 0, price(half)).unwrap();
        // p(0) = 1/2 exactly: proven only if the interval allows it; never a share above it.
        assert!(fill.shares <= 1);
        let above = prices(1000 * E18, &[fill.shares + 1, 0]).unwrap()[0].raw();
        assert!(above > half);
    }

    #[test]
    fn the_fill_is_the_last_share_within_the_limit() {
        let cases = [
            (1000 * E18, [0u128, 0u128], 6 * PRICE_SCALE / 10),
            (1000 * E18, [300 * E18, 10 * E18], 9 * PRICE_SCALE / 10),
            (10, [5, 7], 2 * PRICE_SCALE / 3),
        ];
        for (b, q, limit) in cases {
            let fill = buy_limit(b, &q, 0, price(limit)).unwrap();
            let at = prices(b, &[q[0] + fill.shares, q[1]]).unwrap()[0].raw();
            let next = prices(b, &[q[0] + fill.shares + 1, q[1]]).unwrap()[0].raw();
            assert!(at <= limit && next + 1 >= limit, "{q:?} {limit}: {at} {next}");
            assert_eq!(fill.max_cost, buy_cost(b, &q, 0, fill.shares + 1).unwrap() - 1);
            assert!(buy(b, &q, 0, fill.max_cost).map_or(0, |x| x.shares) <= fill.shares);
            // One wei more buys past the limit (several shares at once where a share costs under a wei).
            assert!(buy(b, &q, 0, fill.max_cost + 1).unwrap().shares > fill.shares);
        }
        // Already above the limit: nothing, and the cost of one share less a wei.
        let none = buy_limit(1000 * E18, &[5, 7], 0, price(PRICE_SCALE / 3)).unwrap();
        assert_eq!(none, BuyLimit { shares: 0, max_cost: buy_cost(1000 * E18, &[5, 7], 0, 1).unwrap() - 1 });
    }

    #[test]
    fn a_sale_limit_keeps_the_price_at_or_above_it() {
        let b = 1000 * E18;
        let q = [400 * E18, 0];
        let limit = 55 * PRICE_SCALE / 100;
        let s = sell_limit(b, &q, 0, price(limit)).unwrap();
        assert!(s > 0 && s < q[0]);
        assert!(prices(b, &[q[0] - s, 0]).unwrap()[0].raw() >= limit);
        assert!(prices(b, &[q[0] - s - 1, 0]).unwrap()[0].raw() <= limit);
        // Already below the limit: nothing; far below it: everything.
        assert_eq!(sell_limit(b, &q, 1, price(limit)).unwrap(), 0);
        assert_eq!(sell_limit(b, &q, 0, price(1)).unwrap(), q[0]);
    }

    #[test]
    fn limits_outside_the_unit_interval_are_refused() {
        assert_eq!(buy_limit(1000, &[0, 0], 0, price(0)), Err(LmsrError::InvalidLimit));
        assert_eq!(buy_limit(1000, &[0, 0], 0, price(PRICE_SCALE)), Err(LmsrError::InvalidLimit));
        assert_eq!(sell_limit(1000, &[0, 0], 0, price(PRICE_SCALE + 1)), Err(LmsrError::InvalidLimit));
    }

    #[test]
    fn extreme_limits_and_books_stay_in_range() {
        let fill = buy_limit(1000, &[0, 0], 0, price(PRICE_SCALE - 1)).unwrap();
        assert!(fill.shares > 0);
        let fill = buy_limit(MAX_VALUE, &[MAX_VALUE, 0], 1, price(1)).unwrap();
        assert_eq!(fill.shares, 0);
        let all = buy_limit(1, &[0, 0], 0, price(PRICE_SCALE - 1)).unwrap();
        assert!(all.shares >= 80, "{all:?}");
    }
}
