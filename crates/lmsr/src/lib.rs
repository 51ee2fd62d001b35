//! Exact integer LMSR (logarithmic market scoring rule) market-maker math.
//!
//! All money is integer wei. Cost function `C(q) = b ln sum_j exp(q_j / b)`.
//! Every transcendental is evaluated as a rigorous interval in 256-bit-fraction fixed point
//! (see `fixed.rs` and README.md); charges round UP from the interval's upper bound,
//! payouts round DOWN from its lower bound, so every rounding favours the market.

mod fixed;
mod limits;
#[rustfmt::skip]
mod tables;

use fixed::{exp_neg, ln, ln_iv, neg_ln_unit_estimate, Iv, EXP_CUTOFF, FRAC_BITS, ONE};
use fixed::{Fx, FxWide};
use ruint::aliases::U512;
use ruint::Uint;

/// Wei amounts with 256 fractional bits (values < 2^130 wei).
type Wei = Uint<448, 7>;
use std::fmt;

pub use limits::{buy_limit, sell_limit, BuyLimit};

pub const MAX_OUTCOMES: usize = 64;
pub const PRICE_SCALE: u128 = 1_000_000_000_000_000_000_000_000_000_000_000_000; // 10^36
/// Largest supported b, q_j, amount, share count and target (2^126 wei ~ 8.5e37).
pub const MAX_VALUE: u128 = 1 << 126;

/// A price in units of 10^-36: `raw / 10^36` is within `PRICE_ERROR_BOUND_RAW / 10^36`
/// of the true softmax price (0.5e-36 from rounding to nearest plus < 2^-240 from the
/// interval arithmetic, so the documented bound is 1e-36).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Price(u128);

/// |raw / 10^36 - true price| <= 1 / 10^36.
pub const PRICE_ERROR_BOUND_RAW: u128 = 1;

impl Price {
    pub fn raw(self) -> u128 {
        self.0
    }
    pub fn from_raw(raw: u128) -> Price {
        Price(raw)
    }
}

impl fmt::Display for Price {
    /// Plain decimal with exactly 18 fractional digits, rounded to nearest and clamped
    /// into [1e-18, 1 - 1e-18] so a displayed price is always strictly inside (0, 1).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const STEP: u128 = 1_000_000_000_000_000_000; // 10^18 raw units per displayed digit
        let rounded = self.0 / STEP + u128::from(self.0 % STEP >= STEP / 2);
        let clamped = rounded.clamp(1, STEP - 1);
        write!(f, "0.{clamped:018}")
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LmsrError {
    /// n outside 2..=64.
    InvalidOutcomeCount,
    /// Outcome index >= n.
    InvalidOutcome,
    /// b == 0, or liquidity too small to give b >= 1.
    ZeroLiquidity,
    /// The trade's output rounds to zero.
    TradeTooSmall,
    /// Selling more than q_i.
    InsufficientShares,
    /// A sell target that no allowed share count reaches.
    Unreachable,
    /// Inputs (or the result) beyond the supported range (`MAX_VALUE`).
    Overflow,
    /// A price limit outside (0, 1).
    InvalidLimit,
}

impl fmt::Display for LmsrError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let msg = match self {
            LmsrError::InvalidOutcomeCount => "number of outcomes must be between 2 and 64",
            LmsrError::InvalidOutcome => "outcome index out of range",
            LmsrError::ZeroLiquidity => "liquidity parameter b must be at least 1 wei",
            LmsrError::TradeTooSmall => "trade too small: result rounds to zero",
            LmsrError::InsufficientShares => "not enough outstanding shares to sell",
            LmsrError::Unreachable => "sell target cannot be reached",
            LmsrError::Overflow => "value beyond the supported range (2^126)",
            LmsrError::InvalidLimit => "a price limit must lie strictly between 0 and 1",
        };
        f.write_str(msg)
    }
}

impl std::error::Error for LmsrError {}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Buy {
    pub shares: u128,
    pub cost: u128,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sell {
    pub shares: u128,
    pub proceeds: u128,
}

/// An interval `[lo, hi]` of a wei amount in units of 2^-256 wei.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WeiInterval {
    lo: Wei,
    hi: Wei,
}

impl WeiInterval {
    /// Largest integer <= the lower bound (what a payout may use); saturates at u128::MAX.
    pub fn floor_lo(&self) -> u128 {
        (self.lo >> FRAC_BITS).saturating_to::<u128>()
    }
    /// Smallest integer >= the upper bound (what a charge must use); saturates at u128::MAX.
    pub fn ceil_hi(&self) -> u128 {
        ceil_wei(self.hi)
    }
    /// True when the whole interval is <= `wei`, i.e. the value is proven <= `wei`.
    pub fn proven_le(&self, wei: u128) -> bool {
        self.hi <= Wei::from(wei) << FRAC_BITS
    }
    /// True when the whole interval is > `wei`.
    pub fn proven_gt(&self, wei: u128) -> bool {
        self.lo > Wei::from(wei) << FRAC_BITS
    }
    /// True when every value of `self` is below every value of `other`.
    pub fn proven_lt(&self, other: &WeiInterval) -> bool {
        self.hi < other.lo
    }
    /// Width of the interval in units of 2^-256 wei (for error-bound checks).
    pub fn width_raw(&self) -> u128 {
        (self.hi - self.lo).saturating_to::<u128>()
    }
}

fn ceil_wei(raw: Wei) -> u128 {
    let mask = (Wei::from(1u8) << FRAC_BITS) - Wei::from(1u8);
    // Saturates: C(q) itself may exceed 2^128 wei, charged differences never do.
    let q = (raw >> FRAC_BITS).saturating_to::<u128>();
    q.saturating_add(u128::from((raw & mask) != Wei::ZERO))
}

fn check_common(b: u128, q: &[u128]) -> Result<(), LmsrError> {
    if q.len() < 2 || q.len() > MAX_OUTCOMES {
        return Err(LmsrError::InvalidOutcomeCount);
    }
    if b == 0 {
        return Err(LmsrError::ZeroLiquidity);
    }
    if b > MAX_VALUE || q.iter().any(|&x| x > MAX_VALUE) {
        return Err(LmsrError::Overflow);
    }
    Ok(())
}

/// Divides by b through a precomputed reciprocal: one 128x384-bit multiply per exp
/// instead of a 448-bit division.
#[derive(Clone, Copy)]
struct Reciprocal {
    b: u128,
    /// floor(2^383 / b)
    inv: Uint<384, 6>,
}

impl Reciprocal {
    fn new(b: u128) -> Reciprocal {
        Reciprocal { b, inv: (Uint::<384, 6>::from(1u8) << 383usize) / Uint::<384, 6>::from(b) }
    }

    /// e^-(d/b) as an interval, for integers d >= 0.
    fn exp_neg_ratio(&self, d: u128) -> Iv {
        if d == 0 {
            return Iv::exact(ONE);
        }
        if self.b.checked_mul(EXP_CUTOFF).is_some_and(|limit| d >= limit) {
            return Iv { lo: Fx::ZERO, hi: Fx::from(1u8) };
        }
        // y = floor(d * inv / 2^127) undershoots d * 2^256 / b by less than 2 ulps
        // (inv is short of 2^383/b by < 1, times d < 2^127, plus the floor), and e^-y
        // has slope <= 1, so widening the lower end by 2 ulps covers it.
        let prod: Uint<512, 8> = Uint::<128, 2>::from(d).widening_mul(self.inv);
        let y = (prod >> 127usize).to::<Fx>();
        let e = exp_neg(y);
        Iv { lo: e.lo.saturating_sub(Fx::from(2u8)), hi: e.hi }
    }
}

/// Market state seen from one outcome i: everything except q_i is precomputed, so
/// C(q with q_i := t) costs one exp and one ln.
struct OutcomeView {
    b: u128,
    recip: Reciprocal,
    q_i: u128,
    /// max_{j != i} q_j
    m_o: u128,
    /// sum_{j != i} e^{(q_j - m_o)/b}, in [1, 63]
    rest: Iv,
    /// C(q) itself
    c_now: WeiInterval,
}

impl OutcomeView {
    fn new(b: u128, q: &[u128], outcome: usize) -> Result<OutcomeView, LmsrError> {
        check_common(b, q)?;
        if outcome >= q.len() {
            return Err(LmsrError::InvalidOutcome);
        }
        let m_o = q.iter().enumerate().filter(|&(j, _)| j != outcome).map(|(_, &x)| x).max().unwrap_or(0);
        let recip = Reciprocal::new(b);
        let mut rest = Iv::exact(Fx::ZERO);
        for (j, &x) in q.iter().enumerate() {
            if j != outcome {
                rest = rest.add(recip.exp_neg_ratio(m_o - x));
            }
        }
        let c_now = WeiInterval { lo: Wei::ZERO, hi: Wei::ZERO };
        let mut view = OutcomeView { b, recip, q_i: q[outcome], m_o, rest, c_now };
        view.c_now = view.cost_fn_at(q[outcome]);
        Ok(view)
    }

    /// C(q with q_i := t), t <= 2^127. Both arguments of ln are >= 1, so the absolute
    /// error stays a few hundred ulps whatever the prices are.
    fn cost_fn_at(&self, t: u128) -> WeiInterval {
        self.cost_fn_and_price_at(t).0
    }

    /// Also returns (num, den) with num/den <= p_i at q_i = t: the marginal price, a lower
    /// bound on C(t + 1) - C(t) since the price of i rises as t grows.
    fn cost_fn_and_price_at(&self, t: u128) -> (WeiInterval, Fx, Fx) {
        let (base, z, num) = if t <= self.m_o {
            // C = m_o + b ln(rest + e^{(t - m_o)/b}); p_i = e / (rest + e)
            let e = self.recip.exp_neg_ratio(self.m_o - t);
            (self.m_o, self.rest.add(e), e.lo)
        } else {
            // C = t + b ln(1 + rest e^{-(t - m_o)/b}); p_i = 1 / (1 + rest e^{..})
            (t, Iv::exact(ONE).add(self.rest.mul(self.recip.exp_neg_ratio(t - self.m_o))), ONE)
        };
        let l = ln_iv(z);
        let b = Wei::from(self.b);
        let base = Wei::from(base) << FRAC_BITS;
        (WeiInterval { lo: base + b * Wei::from(l.lo), hi: base + b * Wei::from(l.hi) }, num, z.hi)
    }

    /// Fast path of `buy`: proves s is the answer with one evaluation when
    /// cost(s) <= amount and lower(C(t)) + lower(p(t)) already exceeds C + amount, which
    /// bounds cost(s + 1) from below. None means "search normally".
    fn buy_in_one_step(&self, s: u128, amount: u128) -> Option<u128> {
        if s == 0 || s >= MAX_VALUE {
            return None;
        }
        let (c, p_num, p_den) = self.cost_fn_and_price_at(self.q_i + s);
        let cost = ceil_wei(c.hi.saturating_sub(self.c_now.lo));
        if cost > amount {
            return None;
        }
        let limit = self.c_now.lo + (Wei::from(amount) << FRAC_BITS);
        if c.lo >= limit {
            return Some(cost);
        }
        let gap = limit - c.lo;
        if gap.bit_len() > FRAC_BITS + 1 {
            return None; // gap >= 2 wei > any price
        }
        // p_num / p_den > gap / 2^256  <=>  p_num * 2^256 > gap * p_den
        let lhs = FxWide::from(p_num) << FRAC_BITS;
        let rhs = FxWide::from(gap.to::<Fx>()).widening_mul::<640, 10, 1280, 20>(FxWide::from(p_den));
        (Uint::<1280, 20>::from(lhs) > rhs).then_some(cost)
    }

    /// Integer cost charged for `s` more shares (0 for s == 0).
    fn charged_cost(&self, s: u128) -> u128 {
        if s == 0 {
            return 0;
        }
        let c = self.cost_fn_at(self.q_i + s);
        ceil_wei(c.hi.saturating_sub(self.c_now.lo))
    }

    /// Integer proceeds paid for selling `s <= q_i` shares.
    fn paid_proceeds(&self, s: u128) -> u128 {
        if s == 0 {
            return 0;
        }
        let c = self.cost_fn_at(self.q_i - s);
        (self.c_now.lo.saturating_sub(c.hi) >> FRAC_BITS).saturating_to::<u128>()
    }

    /// Starting point for searches: the t with C(q with q_i := t) = target (raw wei),
    /// from t = T + b ln(1 - rest e^{-(T - m_o)/b}). None when no t >= 0 can reach it.
    fn solve_t_estimate(&self, target: Wei) -> Option<u128> {
        let m_o = Wei::from(self.m_o) << FRAC_BITS;
        if target <= m_o {
            return None;
        }
        let v = target - m_o;
        let b = Wei::from(self.b);
        let neg_log = if (v >> FRAC_BITS) / b >= Wei::from(EXP_CUTOFF) {
            Fx::ZERO
        } else {
            let u = (v / b).to::<Fx>();
            let e = exp_neg(u).mid();
            let sub = fixed::mul_floor(self.rest.mid(), e);
            if sub >= ONE {
                return None;
            }
            neg_ln_unit_estimate(ONE - sub)
        };
        let drop = b.saturating_mul(Wei::from(neg_log));
        let t = target.saturating_sub(drop) >> FRAC_BITS;
        if t > Wei::from(u128::MAX) {
            Some(u128::MAX)
        } else {
            Some(t.to::<u128>())
        }
    }
}

/// Total worst-case loss bound of a fresh market: b = largest integer with
/// b * ln(n) <= liquidity.
pub fn liquidity_parameter(liquidity: u128, n: usize) -> Result<u128, LmsrError> {
    if !(2..=MAX_OUTCOMES).contains(&n) {
        return Err(LmsrError::InvalidOutcomeCount);
    }
    let ln_n = ln(Fx::from(n) << FRAC_BITS);
    let budget = U512::from(liquidity) << FRAC_BITS;
    // b * ln_n.hi <= liquidity proves b * ln n <= liquidity.
    let mut b = (budget / U512::from(ln_n.hi)).saturating_to::<u128>().min(MAX_VALUE + 1);
    // The true answer is b or b + 1 (ln_n.hi exceeds ln n by < 2^-249).
    if U512::from(b + 1) * U512::from(ln_n.hi) <= budget {
        b += 1;
    }
    if b == 0 {
        return Err(LmsrError::ZeroLiquidity);
    }
    if b > MAX_VALUE {
        return Err(LmsrError::Overflow);
    }
    Ok(b)
}

/// Softmax prices, each within 1e-36 of the true value; they sum to 1 within n * 1e-36.
pub fn prices(b: u128, q: &[u128]) -> Result<Vec<Price>, LmsrError> {
    check_common(b, q)?;
    let m = *q.iter().max().unwrap_or(&0);
    let recip = Reciprocal::new(b);
    let mut weights = [Iv::exact(Fx::ZERO); MAX_OUTCOMES];
    let mut sum = Iv::exact(Fx::ZERO);
    for (w, &x) in weights.iter_mut().zip(q) {
        *w = recip.exp_neg_ratio(m - x);
        sum = sum.add(*w);
    }
    // 1/S as raw fixed point: [floor(2^512 / S_hi), ceil(2^512 / S_lo)]
    let num = FxWide::from(1u8) << (2 * FRAC_BITS);
    let inv_lo = (num / FxWide::from(sum.hi)).to::<Fx>();
    let (qd, rd) = num.div_rem(FxWide::from(sum.lo));
    let inv_hi = qd.to::<Fx>() + Fx::from(u8::from(rd != FxWide::ZERO));
    let inv = Iv { lo: inv_lo, hi: inv_hi };
    let scale = U512::from(PRICE_SCALE);
    Ok(weights[..q.len()]
        .iter()
        .map(|w| {
            let p = w.mul(inv);
            let mid = U512::from(p.lo) + U512::from(p.hi);
            // round(mid / 2 * 10^36 / 2^256)
            let raw = (mid * scale + (U512::from(1u8) << FRAC_BITS)) >> (FRAC_BITS + 1);
            Price(raw.to::<u128>())
        })
        .collect())
}

/// Integer cost the market charges for exactly `shares` more of `outcome`:
/// ceil(upper bound of C(q + s e_i) - lower bound of C(q)). Zero for zero shares.
pub fn buy_cost(b: u128, q: &[u128], outcome: usize, shares: u128) -> Result<u128, LmsrError> {
    let view = OutcomeView::new(b, q, outcome)?;
    if shares > MAX_VALUE {
        return Err(LmsrError::Overflow);
    }
    Ok(view.charged_cost(shares))
}

/// Interval (in 2^-256 wei) containing the true cost C(q + s e_i) - C(q).
pub fn cost_interval(b: u128, q: &[u128], outcome: usize, shares: u128) -> Result<WeiInterval, LmsrError> {
    let view = OutcomeView::new(b, q, outcome)?;
    if shares > MAX_VALUE {
        return Err(LmsrError::Overflow);
    }
    let c = view.cost_fn_at(view.q_i + shares);
    Ok(WeiInterval { lo: c.lo.saturating_sub(view.c_now.hi), hi: c.hi.saturating_sub(view.c_now.lo) })
}

/// Interval (in 2^-256 wei) containing the true proceeds C(q) - C(q - s e_i).
pub fn proceeds_interval(b: u128, q: &[u128], outcome: usize, shares: u128) -> Result<WeiInterval, LmsrError> {
    let view = OutcomeView::new(b, q, outcome)?;
    if shares > view.q_i {
        return Err(LmsrError::InsufficientShares);
    }
    let c = view.cost_fn_at(view.q_i - shares);
    Ok(WeiInterval { lo: view.c_now.lo.saturating_sub(c.hi), hi: view.c_now.hi.saturating_sub(c.lo) })
}

/// Interval (in 2^-256 wei) containing C(q) = b ln sum_j e^{q_j/b}.
pub fn cost_function(b: u128, q: &[u128]) -> Result<WeiInterval, LmsrError> {
    Ok(OutcomeView::new(b, q, 0)?.c_now)
}

/// Largest s with buy_cost(s) <= amount. s == 0 -> Err(TradeTooSmall).
pub fn buy(b: u128, q: &[u128], outcome: usize, amount: u128) -> Result<Buy, LmsrError> {
    let view = OutcomeView::new(b, q, outcome)?;
    if amount > MAX_VALUE {
        return Err(LmsrError::Overflow);
    }
    if amount == 0 {
        return Err(LmsrError::TradeTooSmall);
    }
    let target = view.c_now.lo + (Wei::from(amount) << FRAC_BITS);
    let guess = view.solve_t_estimate(target).map_or(1, |t| t.saturating_sub(view.q_i));
    if let Some(cost) = view.buy_in_one_step(guess, amount) {
        return Ok(Buy { shares: guess, cost });
    }
    let fits = |s: u128| view.charged_cost(s) <= amount;
    match last_true(fits, guess, 1, MAX_VALUE) {
        Search::Found(shares) => Ok(Buy { shares, cost: view.charged_cost(shares) }),
        Search::NoneTrue => Err(LmsrError::TradeTooSmall),
        Search::AllTrue => Err(LmsrError::Overflow),
    }
}

/// Sell exactly `shares`: proceeds = floor(lower bound of C(q) - C(q - s e_i)).
pub fn sell(b: u128, q: &[u128], outcome: usize, shares: u128) -> Result<Sell, LmsrError> {
    let view = OutcomeView::new(b, q, outcome)?;
    if shares > view.q_i {
        return Err(LmsrError::InsufficientShares);
    }
    let proceeds = view.paid_proceeds(shares);
    if proceeds == 0 {
        return Err(LmsrError::TradeTooSmall);
    }
    Ok(Sell { shares, proceeds })
}

/// Fewest s (<= min(q_i, max_shares)) with sell(s).proceeds >= target.
pub fn sell_for_proceeds(b: u128, q: &[u128], outcome: usize, target: u128, max_shares: u128) -> Result<Sell, LmsrError> {
    let view = OutcomeView::new(b, q, outcome)?;
    if target > MAX_VALUE {
        return Err(LmsrError::Overflow);
    }
    if target == 0 {
        return Err(LmsrError::TradeTooSmall);
    }
    let limit = view.q_i.min(max_shares);
    if limit == 0 {
        return Err(LmsrError::Unreachable);
    }
    let wanted = view.c_now.lo.checked_sub(Wei::from(target) << FRAC_BITS);
    let guess = match wanted.and_then(|t| view.solve_t_estimate(t)) {
        Some(t) => view.q_i.saturating_sub(t),
        None => limit,
    };
    let short = |s: u128| view.paid_proceeds(s) < target;
    match last_true(short, guess, 1, limit) {
        Search::Found(s) if s < limit => Ok(Sell { shares: s + 1, proceeds: view.paid_proceeds(s + 1) }),
        Search::NoneTrue => Ok(Sell { shares: 1, proceeds: view.paid_proceeds(1) }),
        _ => Err(LmsrError::Unreachable),
    }
}

/// ceil(C(q ++ [0]) - C(q)): the extra worst-case loss of appending an outcome.
pub fn add_outcome_cost(b: u128, q: &[u128]) -> Result<u128, LmsrError> {
    check_common(b, q)?;
    if q.len() >= MAX_OUTCOMES {
        return Err(LmsrError::InvalidOutcomeCount);
    }
    let m = *q.iter().max().unwrap_or(&0);
    let recip = Reciprocal::new(b);
    let mut sum = Iv::exact(Fx::ZERO);
    for &x in q {
        sum = sum.add(recip.exp_neg_ratio(m - x));
    }
    let with_new = sum.add(recip.exp_neg_ratio(m));
    // C(q ++ [0]) - C(q) = b (ln S' - ln S), both sums relative to the same max m.
    let diff = ln_iv(with_new).hi.saturating_sub(ln_iv(sum).lo);
    Ok(ceil_wei(Wei::from(b) * Wei::from(diff)))
}

enum Search {
    Found(u128),
    NoneTrue,
    AllTrue,
}

/// Largest s in [lo, hi] with pred(s), for a predicate that is true then false as s
/// grows, starting from a guess: gallop away from it, then bisect. An exact guess costs
/// two evaluations.
fn last_true(pred: impl Fn(u128) -> bool, guess: u128, lo: u128, hi: u128) -> Search {
    let guess = guess.clamp(lo, hi);
    let (mut good, mut bad);
    if pred(guess) {
        good = guess;
        let mut step = 1u128;
        loop {
            if good == hi {
                return Search::AllTrue;
            }
            let cand = good.saturating_add(step).min(hi);
            if pred(cand) {
                good = cand;
                step = step.saturating_mul(2);
            } else {
                bad = cand;
                break;
            }
        }
    } else {
        bad = guess;
        let mut step = 1u128;
        loop {
            if bad == lo {
                return Search::NoneTrue;
            }
            let cand = bad.saturating_sub(step).max(lo);
            if pred(cand) {
                good = cand;
                break;
            } else {
                bad = cand;
                step = step.saturating_mul(2);
            }
        }
    }
    while bad - good > 1 {
        let mid = good + (bad - good) / 2;
        if pred(mid) {
            good = mid;
        } else {
            bad = mid;
        }
    }
    Search::Found(good)
}

#[cfg(test)]
mod tests;
