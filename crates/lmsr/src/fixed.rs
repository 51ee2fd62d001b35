//! Unsigned fixed-point numbers with 256 fractional bits (raw `Fx` = 320-bit integer,
//! 1 ulp = 2^-256, integer part < 2^64)
//! and rigorous interval versions of e^-y and ln z.
//!
//! Every function returning an [`Iv`] guarantees `lo <= true value <= hi`; the error
//! analysis behind each widening is written next to the code and summarised in README.md.

use crate::tables::{
    EXP_NEG_FRAC, EXP_NEG_FRAC2, EXP_NEG_FRAC3, EXP_NEG_INT, INV_FACT, INV_INT, LN2, LN_RECIP, LN_RECIP2, LN_RECIP2_NEG_LN, LN_RECIP3,
    LN_RECIP3_NEG_LN, LN_RECIP_NEG_LN,
};
use ruint::Uint;

/// Raw fixed-point value: 64 integer bits, 256 fractional bits.
pub(crate) type Fx = Uint<320, 5>;
/// Full product of two `Fx`.
pub(crate) type FxWide = Uint<640, 10>;

pub(crate) const FRAC_BITS: usize = 256;
pub(crate) const ONE: Fx = Fx::from_limbs([0, 0, 0, 0, 1]);
/// Above this argument e^-y < 2^-256, i.e. the result is the interval [0, 1 ulp].
pub(crate) const EXP_CUTOFF: u128 = 178;

/// Closed interval of raw fixed-point values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Iv {
    pub lo: Fx,
    pub hi: Fx,
}

impl Iv {
    pub(crate) const fn exact(v: Fx) -> Iv {
        Iv { lo: v, hi: v }
    }
    pub(crate) fn add(self, o: Iv) -> Iv {
        Iv { lo: self.lo + o.lo, hi: self.hi + o.hi }
    }
    pub(crate) fn mul(self, o: Iv) -> Iv {
        Iv { lo: mul_floor(self.lo, o.lo), hi: mul_ceil(self.hi, o.hi) }
    }
    pub(crate) fn mid(self) -> Fx {
        (self.lo >> 1) + (self.hi >> 1)
    }
}

/// floor(a * b / 2^256). Operands stay below 2^64 in this crate, so the product
/// always fits the 320-bit result.
#[inline]
pub(crate) fn mul_floor(a: Fx, b: Fx) -> Fx {
    let p: FxWide = a.widening_mul(b);
    let l = p.as_limbs();
    debug_assert_eq!(l[9], 0);
    Fx::from_limbs([l[4], l[5], l[6], l[7], l[8]])
}

/// ceil(a * b / 2^256).
#[inline]
pub(crate) fn mul_ceil(a: Fx, b: Fx) -> Fx {
    let p: FxWide = a.widening_mul(b);
    let l = p.as_limbs();
    let q = Fx::from_limbs([l[4], l[5], l[6], l[7], l[8]]);
    if l[0] | l[1] | l[2] | l[3] != 0 {
        q + Fx::from(1u8)
    } else {
        q
    }
}

/// e^r for exact r in [0, 2^-24], as [lo, lo + 3] ulps.
///
/// Horner on sum_{j<=9} r^j/j! with floored constants and floored products: each step
/// loses < 2 ulps and earlier losses shrink by r <= 2^-24, so the total loss is
/// < 2/(1 - 2^-24) < 2.001 ulps; the truncated tail is < 2 r^10/10! < 2^-260.
#[inline]
fn exp_small(r: Fx) -> Iv {
    let mut h = INV_FACT[INV_FACT.len() - 1];
    for c in INV_FACT[..INV_FACT.len() - 1].iter().rev() {
        h = *c + mul_floor(r, h);
    }
    Iv { lo: h, hi: h + Fx::from(3u8) }
}

/// e^-y for an exact fixed-point y >= 0.
///
/// With J = ceil(2^24 y) and r = J/2^24 - y in [0, 2^-24):
/// e^-y = A F G H e^r with A = e^-(J>>24), F = e^-(((J>>16)&255)/2^8),
/// G = e^-(((J>>8)&255)/2^16), H = e^-((J&255)/2^24) from tables (floored: true values
/// within +1 ulp) and e^r in [P, P + 3] from the series. L = floor(...floor(A F) G) H) P)
/// loses < 4.01 ulps to the floors (all factors <= 1 + 2^-23), and the true factors exceed
/// the floored ones by at most 1 + 1 + 1 + 1 + 3 ulps, which moves the product by
/// < 7.01 ulps; so e^-y is in [L, L + 12].
pub(crate) fn exp_neg(y: Fx) -> Iv {
    // J = ceil(y * 2^24) = ceil(raw / 2^232)
    let j_floor: Fx = y >> (FRAC_BITS - 24);
    let rem_mask = (Fx::from(1u8) << (FRAC_BITS - 24)) - Fx::from(1u8);
    let has_rem = (y & rem_mask) != Fx::ZERO;
    let j = if has_rem { j_floor + Fx::from(1u8) } else { j_floor };
    let int_part: Fx = j >> 24usize;
    if int_part >= Fx::from(EXP_CUTOFF) {
        // y > 177.996, so 0 < e^-y < 2^-256.
        return Iv { lo: Fx::ZERO, hi: Fx::from(1u8) };
    }
    let a = int_part.to::<usize>();
    let low = j.as_limbs()[0] as usize;
    let (f, g, h) = ((low >> 16) & 255, (low >> 8) & 255, low & 255);
    let r = (j << (FRAC_BITS - 24)) - y;
    let p = exp_small(r);
    let tab = mul_floor(mul_floor(mul_floor(EXP_NEG_INT[a], EXP_NEG_FRAC[f]), EXP_NEG_FRAC2[g]), EXP_NEG_FRAC3[h]);
    let lo = mul_floor(tab, p.lo);
    Iv { lo, hi: lo + Fx::from(12u8) }
}

/// ln(1 + v) for exact v in [0, 2^-24 + 2^-253], as [res - 1, res + 2] ulps.
///
/// Horner on v(1 - v(1/2 - v(1/3 - ... v/10))): every inner value is in (0, 1/j], each
/// step errs by < 2 ulps in either direction and earlier errors shrink by v, so the
/// inner error is < 1/(1 - v) ulps < 1.004; multiplying by v and flooring gives
/// (-0.01, 1.01) ulps; the alternating tail is < v^11/11 < 2^-264.
#[inline]
fn ln1p_small(v: Fx) -> Iv {
    let mut h = INV_INT[INV_INT.len() - 1];
    for c in INV_INT[1..INV_INT.len() - 1].iter().rev() {
        h = *c - mul_floor(v, h);
    }
    let res = mul_floor(v, h);
    Iv { lo: res.saturating_sub(Fx::from(1u8)), hi: res + Fx::from(2u8) }
}

/// ln z for an exact fixed-point z >= 1 (z < 2^64).
///
/// z = 2^k w with w in [1, 2) (w floored to 256 bits: true ln w within +1 ulp);
/// j = floor(256 (w - 1)); x = w * ceil(256/(256+j)) is in [1, 1 + 2^-8 + 2^-255];
/// j2 = floor(65536 (x - 1)) <= 256; x2 = x * ceil(65536/(65536+j2)) is in
/// [1, 1 + 2^-16 + 2^-254]; j3 = floor(2^24 (x2 - 1)) <= 256, x3 = x2 * ceil(2^24/(2^24+j3))
/// is in [1, 1 + 2^-24 + 2^-253]; ln z = k ln2 - sum of the three table logs + ln(x3).
pub(crate) fn ln(z: Fx) -> Iv {
    debug_assert!(z >= ONE);
    let k = z.bit_len() - 1 - FRAC_BITS;
    let w = z >> k;
    let j = ((w - ONE) >> (FRAC_BITS - 8)).to::<usize>();
    let x = mul_floor(w, LN_RECIP[j]);
    // x >= 1 exactly because w >= 1 + j/256 and LN_RECIP[j] >= 256/(256+j); same for x2.
    let j2 = ((x - ONE) >> (FRAC_BITS - 16)).to::<usize>();
    let x2 = mul_floor(x, LN_RECIP2[j2]);
    let j3 = ((x2 - ONE) >> (FRAC_BITS - 24)).to::<usize>();
    let x3 = mul_floor(x2, LN_RECIP3[j3]);
    let l = ln1p_small(x3 - ONE);
    let kk = Fx::from(k);
    let tabs = LN_RECIP_NEG_LN[j] + LN_RECIP2_NEG_LN[j2] + LN_RECIP3_NEG_LN[j3];
    let base_lo = kk * LN2 + tabs;
    // +k for ln 2, +3 for the table entries, +1 each for w, x, x2 and x3 floored.
    let base_hi = kk * (LN2 + Fx::from(1u8)) + tabs + Fx::from(7u8);
    Iv { lo: base_lo + l.lo, hi: base_hi + l.hi }
}

/// ln over an interval [lo, hi] with lo >= 1: ln is increasing with slope <= 1 there.
pub(crate) fn ln_iv(z: Iv) -> Iv {
    let l = ln(z.lo);
    Iv { lo: l.lo, hi: l.hi + (z.hi - z.lo) }
}

/// -ln z for 0 < z <= 1, midpoint only (used for search starting points, never for money).
pub(crate) fn neg_ln_unit_estimate(z: Fx) -> Fx {
    if z >= ONE {
        return Fx::ZERO;
    }
    if z == Fx::ZERO {
        return Fx::MAX >> 1;
    }
    let shift = FRAC_BITS + 1 - z.bit_len();
    let w = z << shift;
    Fx::from(shift) * LN2 - ln(w).mid()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn to_f64(v: Fx) -> f64 {
        let l = v.as_limbs();
        l[1] as f64 * 2f64.powi(-192) + l[2] as f64 * 2f64.powi(-128) + l[3] as f64 * 2f64.powi(-64) + l[4] as f64
    }
    fn from_f64(x: f64) -> Fx {
        // Test helper only: builds an exact fixed-point value from a double.
        let m = (x * 2f64.powi(60)) as u128;
        Fx::from(m) << (FRAC_BITS - 60)
    }

    #[test]
    fn tables_are_consistent() {
        // e^-1 squared must land on e^-2, within the table rounding.
        let e1 = Iv { lo: EXP_NEG_INT[1], hi: EXP_NEG_INT[1] + Fx::from(1u8) };
        let sq = e1.mul(e1);
        assert!(sq.lo <= EXP_NEG_INT[2] + Fx::from(1u8) && EXP_NEG_INT[2] <= sq.hi);
        // (e^-1/256)^256 ~ e^-1
        let mut acc = Iv::exact(ONE);
        let f = Iv { lo: EXP_NEG_FRAC[1], hi: EXP_NEG_FRAC[1] + Fx::from(1u8) };
        for _ in 0..256 {
            acc = acc.mul(f);
        }
        assert!(acc.lo <= EXP_NEG_INT[1] + Fx::from(1u8) && EXP_NEG_INT[1] <= acc.hi);
        // ln(e^...) round trip via ln 2: ln(2) must contain LN2.
        let l2 = ln(ONE << 1);
        assert!(l2.lo <= LN2 && LN2 < l2.hi);
    }

    #[test]
    fn exp_and_ln_match_f64() {
        for &y in &[0.0, 1e-9, 0.001, 0.5, 0.7, 1.0, 3.7, 20.0, 69.0, 133.0, 177.0, 200.0] {
            let iv = exp_neg(from_f64(y));
            let want = (-y).exp();
            assert!(iv.lo <= iv.hi);
            assert!((to_f64(iv.lo) - want).abs() <= 1e-15 * want + 1e-57, "{y}");
            assert!(iv.hi - iv.lo <= Fx::from(12u8), "{y}");
        }
        for &z in &[1.0, 1.0000001, 1.5, 2.0, 3.999, 10.0, 63.9, 64.0, 1e6] {
            let iv = ln(from_f64(z));
            assert!((to_f64(iv.lo) - z.ln()).abs() <= 1e-14, "{z}");
            assert!(iv.hi - iv.lo <= Fx::from(80u8), "{z}");
        }
    }

    #[test]
    fn exp_ln_inverse_brackets() {
        // ln(e^-y * e^y) identity checked through ln of a product: ln(1/e^-y) = y.
        for &y in &[0.25f64, 1.0, 5.5, 40.0] {
            let yy = from_f64(y);
            let e = exp_neg(yy);
            // z = 1 / e^-y lies in [2^512/hi, 2^512/lo]
            let num: FxWide = FxWide::from(1u8) << 512usize;
            let z_lo = (num / FxWide::from(e.hi)).to::<Fx>();
            let z_hi = (num / FxWide::from(e.lo)).to::<Fx>() + Fx::from(1u8);
            let l = ln_iv(Iv { lo: z_lo, hi: z_hi });
            assert!(l.lo <= yy && yy <= l.hi, "{y}");
        }
    }
}
