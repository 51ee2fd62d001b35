//! Exact integer helpers shared by every money computation: 256-bit `mul_div` and
//! decimal rendering of ratios. One rounding helper, used everywhere.

use ruint::aliases::{U128, U256};

const DISPLAY_SCALE: u128 = 1_000_000_000_000_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rounding {
    Down,
    Up,
}

/// `a * b / d` with a 256-bit intermediate; `None` on division by zero or a result above u128.
pub fn mul_div(a: u128, b: u128, d: u128, rounding: Rounding) -> Option<u128> {
    if d == 0 {
        return None;
    }
    // Kept: a product that fits in u128 (nearly every trade) skips the 256-bit path, a
    // single native division instead of ruint's multi-limb one.
    if let Some(product) = a.checked_mul(b) {
        let q = product / d;
        let r = product % d;
        return if rounding == Rounding::Up && r != 0 { q.checked_add(1) } else { Some(q) };
    }
    let product: U256 = U128::from(a).widening_mul(U128::from(b));
    let (q, r) = product.div_rem(U256::from(d));
    let q = u128::try_from(q).ok()?;
    if rounding == Rounding::Up && !r.is_zero() {
        q.checked_add(1)
    } else {
        Some(q)
    }
}

/// `num / den` as a plain decimal string with exactly 18 fractional digits, truncated.
pub(crate) fn ratio_decimal(num: u128, den: u128) -> String {
    if den == 0 {
        return "0.000000000000000000".to_string();
    }
    let int_part = num / den;
    let rem = num % den;
    let frac = mul_div(rem, DISPLAY_SCALE, den, Rounding::Down).unwrap_or(0);
    format!("{int_part}.{frac:018}")
}

/// A signed ratio `(a - b) / b` rendered like [`ratio_decimal`], with a leading minus when negative.
pub(crate) fn relative_change_decimal(a: u128, b: u128) -> String {
    if a >= b {
        ratio_decimal(a - b, b)
    } else {
        format!("-{}", ratio_decimal(b - a, b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mul_div_matches_small_cases_and_rounds_as_asked() {
        assert_eq!(mul_div(7, 3, 2, Rounding::Down), Some(10));
        assert_eq!(mul_div(7, 3, 2, Rounding::Up), Some(11));
        assert_eq!(mul_div(6, 3, 2, Rounding::Up), Some(9));
        assert_eq!(mul_div(1, 1, 0, Rounding::Down), None);
    }

    #[test]
    fn mul_div_is_exact_beyond_128_bits() {
        let a = 10u128.pow(36);
        // 10^36 * 10^36 / 10^36 needs a 240-bit intermediate.
        assert_eq!(mul_div(a, a, a, Rounding::Down), Some(a));
        // (2^128 - 1) * (2^128 - 1) / (2^128 - 1)
        assert_eq!(mul_div(u128::MAX, u128::MAX, u128::MAX, Rounding::Up), Some(u128::MAX));
        // 10^36 * 3 / 7 rounded both ways.
        assert_eq!(mul_div(a, 300_000, 700_000, Rounding::Down), Some(428571428571428571428571428571428571));
        assert_eq!(mul_div(a, 300_000, 700_000, Rounding::Up), Some(428571428571428571428571428571428572));
        assert_eq!(mul_div(u128::MAX, 2, 1, Rounding::Down), None);
    }

    #[test]
    fn mul_div_rounds_both_ways_near_u128_max() {
        let max = u128::MAX;
        // (2^128 - 1) * (2^128 - 2) / (2^128 - 1) is exact.
        assert_eq!(mul_div(max, max - 1, max, Rounding::Down), Some(max - 1));
        assert_eq!(mul_div(max, max - 1, max, Rounding::Up), Some(max - 1));
        // (2^128 - 1)^2 / (2^128 - 2) = 2^128 remainder 1: above u128 both ways.
        assert_eq!(mul_div(max, max, max - 1, Rounding::Down), None);
        assert_eq!(mul_div(max, max, max - 1, Rounding::Up), None);
        // (2^128 - 2)^2 / (2^128 - 1) = 2^128 - 3 remainder 1.
        assert_eq!(mul_div(max - 1, max - 1, max, Rounding::Down), Some(max - 2));
        assert_eq!(mul_div(max - 1, max - 1, max, Rounding::Up), Some(max - 1));
        // (2^128 - 1) * 3 / 2 = 2^128 + (2^127 - 2) remainder 1: above u128.
        assert_eq!(mul_div(max, 3, 2, Rounding::Down), None);
        // (2^128 - 1) * (2^64 + 2) / (2^64 + 3): wide product, quotient 2^128 - 2^64 + 1, remainder 2^64 - 5.
        let two64 = 1u128 << 64;
        assert_eq!(mul_div(max, two64 + 2, two64 + 3, Rounding::Down), Some(max - two64 + 2));
        assert_eq!(mul_div(max, two64 + 2, two64 + 3, Rounding::Up), Some(max - two64 + 3));
        // Quotient exactly u128::MAX with no remainder, then with one: rounding up overflows.
        assert_eq!(mul_div(max, max, max, Rounding::Up), Some(max));
        let d = (1u128 << 127) + 5;
        assert_eq!(mul_div(max - 1, d + 1, d, Rounding::Down), Some(max));
        assert_eq!(mul_div(max - 1, d + 1, d, Rounding::Up), None);
    }

    #[test]
    fn ratios_render_with_eighteen_truncated_digits() {
        assert_eq!(ratio_decimal(1, 2), "0.500000000000000000");
        assert_eq!(ratio_decimal(2, 3), "0.666666666666666666");
        assert_eq!(ratio_decimal(5, 1), "5.000000000000000000");
        assert_eq!(relative_change_decimal(3, 4), "-0.250000000000000000");
        assert_eq!(relative_change_decimal(5, 4), "0.250000000000000000");
    }
}
