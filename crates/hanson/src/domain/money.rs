//! Wei amounts and share counts: canonical decimal strings at the edge, `u128` inside.

use std::fmt;

/// The largest amount accepted from a client (`docs/api.md`, "Numbers": 10^36).
/// Internal sums stay below `u128::MAX` through checked arithmetic.
pub(crate) const MAX_INPUT_AMOUNT: u128 = 1_000_000_000_000_000_000_000_000_000_000_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AmountError {
    /// Not a canonical decimal string (sign, point, exponent, spaces, leading zeros, empty).
    Malformed,
    /// Canonical but above [`MAX_INPUT_AMOUNT`].
    TooLarge,
}

impl AmountError {
    pub(crate) fn message(self) -> &'static str {
        match self {
            AmountError::Malformed => "must be a string of decimal digits without sign, point, exponent or leading zeros",
            AmountError::TooLarge => "must not exceed 10^36",
        }
    }
}

/// Parses a client-supplied wei or share amount.
pub(crate) fn parse_amount(s: &str) -> Result<u128, AmountError> {
    let bytes = s.as_bytes();
    if bytes.is_empty() || !bytes.iter().all(u8::is_ascii_digit) {
        return Err(AmountError::Malformed);
    }
    if bytes.len() > 1 && bytes[0] == b'0' {
        return Err(AmountError::Malformed);
    }
    // 10^36 has 37 digits; anything longer is too large without parsing.
    if bytes.len() > 37 {
        return Err(AmountError::TooLarge);
    }
    let value: u128 = s.parse().map_err(|_| AmountError::Malformed)?;
    if value > MAX_INPUT_AMOUNT {
        return Err(AmountError::TooLarge);
    }
    Ok(value)
}

/// Parses an amount read back from storage (already canonical, any u128).
pub(crate) fn parse_stored(s: &str) -> Option<u128> {
    s.parse().ok()
}

/// A wei or share amount rendered as the API's decimal string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Wei(pub u128);

impl fmt::Display for Wei {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl serde::Serialize for Wei {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0)
    }
}

/// Reads back an amount this service wrote (a stored response): a canonical decimal string.
impl<'de> serde::Deserialize<'de> for Wei {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        parse_stored(&text).map(Wei).ok_or_else(|| serde::de::Error::custom("not a wei amount"))
    }
}

/// A string schema: the shape every amount, price and time takes in the API.
pub(crate) fn string_schema(
    pattern: Option<&str>,
    format: Option<&str>,
    description: &str,
    example: &str,
) -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
    use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, SchemaFormat, Type};
    let mut builder = ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(pattern)
        .description(Some(description))
        .examples([serde_json::Value::String(example.to_string())]);
    if let Some("date-time") = format {
        builder = builder.format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime)));
    }
    builder.into()
}

/// Canonical decimal integers: no sign, no leading zero, no exponent.
pub(crate) const WEI_PATTERN: &str = "^(0|[1-9][0-9]*)$";

impl utoipa::PartialSchema for Wei {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        string_schema(
            Some(WEI_PATTERN),
            None,
            "An amount in wei, or shares in share units: a decimal integer string",
            "1000000000000000000",
        )
    }
}

impl utoipa::ToSchema for Wei {}

/// An amount a client sends (a bet, a deposit, a bet limit): a canonical decimal integer
/// string of at most 10^36 ([`MAX_INPUT_AMOUNT`]); a larger one is `amount_too_large`.
pub(crate) struct InputAmount;

/// [`InputAmount`]s at most 10^36: up to 36 digits, or 1 followed by 36 zeros.
pub(crate) const INPUT_AMOUNT_PATTERN: &str = "^(0|[1-9][0-9]{0,35}|10{36})$";

impl utoipa::PartialSchema for InputAmount {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        string_schema(
            Some(INPUT_AMOUNT_PATTERN),
            None,
            "An amount in wei or share units: a decimal integer string without sign, point, exponent or leading zeros, at most 10^36",
            "1000000000000000000",
        )
    }
}

impl utoipa::ToSchema for InputAmount {}

/// An [`InputAmount`] greater than zero.
pub(crate) struct PositiveAmount;

pub(crate) const POSITIVE_AMOUNT_PATTERN: &str = "^([1-9][0-9]{0,35}|10{36})$";

impl utoipa::PartialSchema for PositiveAmount {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        string_schema(
            Some(POSITIVE_AMOUNT_PATTERN),
            None,
            "An amount in wei greater than 0: a decimal integer string without sign, point, exponent or leading zeros, at most 10^36",
            "1000000000000000000",
        )
    }
}

impl utoipa::ToSchema for PositiveAmount {}

impl utoipa::PartialSchema for SignedWei {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        string_schema(Some("^(0|-?[1-9][0-9]*)$"), None, "A signed amount in wei: a decimal integer string", "-250")
    }
}

impl utoipa::ToSchema for SignedWei {}

/// Signed amount for `unrealized_pnl`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SignedWei {
    pub(crate) negative: bool,
    pub(crate) magnitude: u128,
}

impl SignedWei {
    pub(crate) fn difference(a: u128, b: u128) -> SignedWei {
        if a >= b {
            SignedWei { negative: false, magnitude: a - b }
        } else {
            SignedWei { negative: true, magnitude: b - a }
        }
    }
}

impl serde::Serialize for SignedWei {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.negative && self.magnitude != 0 {
            s.collect_str(&format_args!("-{}", self.magnitude))
        } else {
            s.collect_str(&self.magnitude)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_amounts_parse() {
        assert_eq!(parse_amount("0"), Ok(0));
        assert_eq!(parse_amount("1"), Ok(1));
        assert_eq!(parse_amount("1000000000000000000000000000000000000"), Ok(MAX_INPUT_AMOUNT));
    }

    #[test]
    fn non_canonical_amounts_are_rejected() {
        for bad in ["", "-1", "+1", "1.0", "1e3", " 1", "1 ", "01", "00", "0x10", "１"] {
            assert_eq!(parse_amount(bad), Err(AmountError::Malformed), "{bad:?}");
        }
    }

    #[test]
    fn amounts_above_the_cap_are_too_large() {
        assert_eq!(parse_amount("1000000000000000000000000000000000001"), Err(AmountError::TooLarge));
        assert_eq!(parse_amount(&"9".repeat(80)), Err(AmountError::TooLarge));
    }

    #[test]
    fn signed_wei_renders_a_leading_minus() {
        assert_eq!(serde_json::to_string(&SignedWei::difference(3, 10)).unwrap(), "\"-7\"");
        assert_eq!(serde_json::to_string(&SignedWei::difference(10, 3)).unwrap(), "\"7\"");
        assert_eq!(serde_json::to_string(&SignedWei::difference(3, 3)).unwrap(), "\"0\"");
    }
}
