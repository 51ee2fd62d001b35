//! Exact amounts over PostgreSQL's NUMERIC binary wire format, so a u128 never passes through
//! text parsing or floats on its way to or from a `NUMERIC(78,0)` column.
//!
//! The format: `ndigits: i16, weight: i16, sign: u16, dscale: u16`, then `ndigits` base-10000
//! digits (i16), most significant first. The value is `sum(digit[i] * 10000^(weight - i))`.

use std::error::Error as StdError;

use ::postgres::types::{to_sql_checked, FromSql, IsNull, ToSql, Type};
use bytes::{BufMut, BytesMut};

const NBASE: u128 = 10_000;
const SIGN_POSITIVE: u16 = 0x0000;
const SIGN_NEGATIVE: u16 = 0x4000;
const SIGN_NAN: u16 = 0xC000;

/// A non-negative integer amount bound to or read from a NUMERIC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PgMoney(pub u128);

type BoxError = Box<dyn StdError + Sync + Send>;

/// 10^16: four base-10000 digits, and below 2^64.
const TEN_16: u128 = 10_000_000_000_000_000;

/// The wire bytes of `value` (no fraction, dscale 0). Allocation-free and with two u128
/// divisions (a libcall each) rather than one a digit: a trade batch binds hundreds of
/// amounts.
pub(crate) fn encode(value: u128, out: &mut BytesMut) {
    // Base-10000 digits, least significant first: a u128 has at most 10.
    let mut digits = [0i16; 10];
    let (above_16, above_32) = (value / TEN_16, value / TEN_16 / TEN_16);
    let parts = [value - above_16 * TEN_16, above_16 - above_32 * TEN_16, above_32].map(|part| part as u64);
    for (part, slots) in parts.into_iter().zip(digits.chunks_mut(4)) {
        let mut rest = part;
        for slot in slots {
            *slot = (rest % 10_000) as i16;
            rest /= 10_000;
        }
    }
    let Some(highest) = digits.iter().rposition(|&d| d != 0) else {
        out.put_slice(&[0; 8]);
        return;
    };
    // PostgreSQL keeps no trailing zero digits; the weight alone carries the magnitude.
    let lowest = digits.iter().position(|&d| d != 0).unwrap_or(highest);
    let kept = &digits[lowest..=highest];
    // At most 10 digits, so these casts cannot truncate.
    out.reserve(8 + 2 * kept.len());
    out.put_i16(kept.len() as i16);
    out.put_i16(highest as i16);
    out.put_u16(SIGN_POSITIVE);
    out.put_u16(0);
    for &d in kept.iter().rev() {
        out.put_i16(d);
    }
}

/// Reads a NUMERIC that must be a non-negative integer fitting in u128.
pub(crate) fn decode(raw: &[u8]) -> Result<u128, String> {
    let header = raw.get(..8).ok_or("NUMERIC value is truncated")?;
    let ndigits = i16::from_be_bytes([header[0], header[1]]);
    let weight = i16::from_be_bytes([header[2], header[3]]);
    let sign = u16::from_be_bytes([header[4], header[5]]);
    let ndigits = usize::try_from(ndigits).map_err(|_| "NUMERIC digit count is negative")?;
    let body = &raw[8..];
    if body.len() != 2 * ndigits {
        return Err("NUMERIC digit count does not match its length".into());
    }
    let digits = || body.chunks_exact(2).map(|c| i16::from_be_bytes([c[0], c[1]]));
    if digits().any(|d| !(0..10_000).contains(&d)) {
        return Err("NUMERIC digit out of range".into());
    }
    match sign {
        SIGN_POSITIVE => {}
        // PostgreSQL never sends a negative zero, so any negative value is below zero.
        SIGN_NEGATIVE => return Err("amount is negative".into()),
        SIGN_NAN => return Err("amount is NaN".into()),
        _ => return Err("amount is infinite or malformed".into()),
    }
    // Digit i sits at power weight - i; those below 0 are the fraction and must be zero.
    let integer_digits = usize::try_from(i32::from(weight) + 1).unwrap_or(0);
    if digits().skip(integer_digits).any(|d| d != 0) {
        return Err("amount has a fraction".into());
    }
    // The integer digits, then a zero digit for each power the trailing zeros left out.
    let sent = digits().take(integer_digits).map(|d| d as u128);
    let left_out = std::iter::repeat_n(0, integer_digits.saturating_sub(ndigits));
    sent.chain(left_out)
        .try_fold(0u128, |value, digit| value.checked_mul(NBASE).and_then(|v| v.checked_add(digit)))
        .ok_or_else(|| "amount exceeds the supported maximum".into())
}

impl ToSql for PgMoney {
    fn to_sql(&self, _ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        encode(self.0, out);
        Ok(IsNull::No)
    }

    fn accepts(ty: &Type) -> bool {
        *ty == Type::NUMERIC
    }

    to_sql_checked!();
}

impl<'a> FromSql<'a> for PgMoney {
    fn from_sql(_ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        decode(raw).map(PgMoney).map_err(Into::into)
    }

    fn accepts(ty: &Type) -> bool {
        *ty == Type::NUMERIC
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CASES: &[u128] = &[
        0,
        1,
        9_999,
        10_000,
        TEN_16 - 1,
        TEN_16,
        TEN_16 + 1,
        TEN_16 * TEN_16 - 1,
        TEN_16 * TEN_16,
        1_000_000_000_000_000_000_000_000_000_000_000_000,
        u128::MAX - 1,
        u128::MAX,
    ];

    /// The wire bytes as the first version built them: one u128 division a digit.
    fn bytes_digit_by_digit(value: u128) -> Vec<u8> {
        let mut digits = Vec::new();
        let mut rest = value;
        while rest > 0 {
            digits.push((rest % NBASE) as i16);
            rest /= NBASE;
        }
        digits.reverse();
        let weight = (digits.len() as i16 - 1).max(0);
        while digits.last() == Some(&0) {
            digits.pop();
        }
        raw(digits.len() as i16, weight, 0, 0, &digits)
    }

    fn bytes(value: u128) -> Vec<u8> {
        let mut out = BytesMut::new();
        encode(value, &mut out);
        out.to_vec()
    }

    fn raw(ndigits: i16, weight: i16, sign: u16, dscale: u16, digits: &[i16]) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend(ndigits.to_be_bytes());
        out.extend(weight.to_be_bytes());
        out.extend(sign.to_be_bytes());
        out.extend(dscale.to_be_bytes());
        for d in digits {
            out.extend(d.to_be_bytes());
        }
        out
    }

    #[test]
    fn round_trips() {
        for &v in CASES {
            assert_eq!(decode(&bytes(v)), Ok(v), "{v}");
        }
    }

    #[test]
    fn same_bytes_as_digit_by_digit_across_the_range() {
        // Powers of ten and their neighbours, then a multiplicative walk through u128.
        let powers = (0..=38).map(|p| 10u128.pow(p)).flat_map(|v| [v - 1, v, v + 1]);
        let walk = std::iter::successors(Some(7u128), |v| v.checked_mul(3).map(|v| v + 12_345));
        for value in powers.chain(walk).chain(CASES.iter().copied()) {
            assert_eq!(bytes(value), bytes_digit_by_digit(value), "{value}");
            assert_eq!(decode(&bytes(value)), Ok(value), "{value}");
        }
    }

    #[test]
    fn exact_wire_bytes() {
        assert_eq!(bytes(0), raw(0, 0, 0, 0, &[]));
        assert_eq!(bytes(1), raw(1, 0, 0, 0, &[1]));
        assert_eq!(bytes(9_999), raw(1, 0, 0, 0, &[9_999]));
        assert_eq!(bytes(10_000), raw(1, 1, 0, 0, &[1]));
        assert_eq!(bytes(10u128.pow(36)), raw(1, 9, 0, 0, &[1]));
        // 340282366920938463463374607431768211455 in base-10000 groups.
        assert_eq!(bytes(u128::MAX), raw(10, 9, 0, 0, &[340, 2823, 6692, 938, 4634, 6337, 4607, 4317, 6821, 1455]));
        // Trailing zero groups are dropped: 10^8 + 1 keeps all three, 2 * 10^8 keeps one.
        assert_eq!(bytes(100_000_001), raw(3, 2, 0, 0, &[1, 0, 1]));
        assert_eq!(bytes(200_000_000), raw(1, 2, 0, 0, &[2]));
    }

    #[test]
    fn rejects_negatives_fractions_and_overflow() {
        assert!(decode(&raw(1, 0, SIGN_NEGATIVE, 0, &[1])).is_err());
        assert!(decode(&raw(1, -1, 0, 1, &[5_000])).unwrap_err().contains("fraction"));
        assert!(decode(&raw(2, 0, 0, 4, &[1, 1])).unwrap_err().contains("fraction"));
        assert!(decode(&raw(0, 0, SIGN_NAN, 0, &[])).is_err());
        assert!(decode(&raw(0, 0, 0xD000, 0, &[])).is_err());
        assert!(decode(&raw(1, 10, 0, 0, &[4])).unwrap_err().contains("maximum"));
        assert!(decode(&raw(1, 0, 0, 0, &[10_000])).is_err());
        assert!(decode(&raw(2, 0, 0, 0, &[1])).is_err());
        assert!(decode(&[0, 1]).is_err());
        // A zero fraction is still an integer (1.0000).
        assert_eq!(decode(&raw(2, 0, 0, 4, &[1, 0])), Ok(1));
    }
}
