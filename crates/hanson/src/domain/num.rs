//! Exact integer helpers shared by every money computation: 256-bit `mul_div` and
//! decimal rendering of ratios. One rounding helper, used everywhere.

/// Decimal places the API shows for prices, ratios and averages.
pub const DISPLAY_DIGITS: u32 = 18;
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
    if let Some(product) = a.checked_mul(b) {
        let q = product / d;
        let r = product % d;
        return if rounding == Rounding::Up && r != 0 { q.checked_add(1) } else { Some(q) };
    }
    let (hi, lo) = widening_mul(a, b);
    if hi >= d {
        return None; // quotient would not fit in u128
    }
    // Restoring division of the 256-bit (hi, lo) by d, one bit at a time; hi < d throughout.
    let mut rem = hi;
    let mut quotient: u128 = 0;
    for i in (0..128).rev() {
        let carry = rem >> 127;
        rem = (rem << 1) | ((lo >> i) & 1);
        quotient <<= 1;
        if carry == 1 || rem >= d {
            rem = rem.wrapping_sub(d);
            quotient |= 1;
        }
    }
    if rounding == Rounding::Up && rem != 0 {
        quotient.checked_add(1)
    } else {
        Some(quotient)
    }
}

fn widening_mul(a: u128, b: u128) -> (u128, u128) {
    const MASK: u128 = u64::MAX as u128;
    let (a_hi, a_lo) = (a >> 64, a & MASK);
    let (b_hi, b_lo) = (b >> 64, b & MASK);
    let ll = a_lo * b_lo;
    let lh = a_lo * b_hi;
    let hl = a_hi * b_lo;
    let hh = a_hi * b_hi;
    let mid = (ll >> 64) + (lh & MASK) + (hl & MASK);
    let lo = (ll & MASK) | (mid << 64);
    let hi = hh + (lh >> 64) + (hl >> 64) + (mid >> 64);
    (hi, lo)
}

/// `num / den` as a plain decimal string with exactly 18 fractional digits, truncated.
pub fn ratio_decimal(num: u128, den: u128) -> String {
    if den == 0 {
        return "0.000000000000000000".to_string();
    }
    let int_part = num / den;
    let rem = num % den;
    let frac = mul_div(rem, DISPLAY_SCALE, den, Rounding::Down).unwrap_or(0);
    format!("{int_part}.{frac:018}")
}

/// A signed ratio `(a - b) / b` rendered like [`ratio_decimal`], with a leading minus when negative.
pub fn relative_change_decimal(a: u128, b: u128) -> String {
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
    fn ratios_render_with_eighteen_truncated_digits() {
        assert_eq!(ratio_decimal(1, 2), "0.500000000000000000");
        assert_eq!(ratio_decimal(2, 3), "0.666666666666666666");
        assert_eq!(ratio_decimal(5, 1), "5.000000000000000000");
        assert_eq!(relative_change_decimal(3, 4), "-0.250000000000000000");
        assert_eq!(relative_change_decimal(5, 4), "0.250000000000000000");
    }
}
