//! Fee percentages and the one fee function (`docs/api.md`, "Fees").

use super::num::{mul_div, Rounding};

/// Percentages are kept as integer units of 0.0001 percent: 1.5% is 15_000.
pub(crate) const PERCENT_UNITS: u32 = 10_000;
/// creator + platform may not exceed 50%.
pub(crate) const MAX_TOTAL_FEE_UNITS: u32 = 50 * PERCENT_UNITS;

/// Parses a JSON number's literal text (at most 4 fractional digits, no exponent, no sign).
pub fn parse_percentage(literal: &str) -> Option<u32> {
    let (int_part, frac_part) = match literal.split_once('.') {
        Some((i, f)) => (i, f),
        None => (literal, ""),
    };
    if int_part.is_empty() || int_part.len() > 3 || !int_part.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if frac_part.len() > 4 || !frac_part.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if literal.contains('.') && frac_part.is_empty() {
        return None;
    }
    let int_value: u32 = int_part.parse().ok()?;
    let mut frac_value: u32 = if frac_part.is_empty() { 0 } else { frac_part.parse().ok()? };
    for _ in frac_part.len()..4 {
        frac_value *= 10;
    }
    Some(int_value * PERCENT_UNITS + frac_value)
}

/// A fee percentage, kept in units of 1/10,000 of a percent; the API shows it as the
/// shortest decimal number (e.g. 1.5), never through a float.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Percentage(pub u32);

impl serde::Serialize for Percentage {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serde::Serialize::serialize(&percentage_json(self.0), s)
    }
}

impl utoipa::PartialSchema for Percentage {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::Number)
            .minimum(Some(0))
            .maximum(Some(50))
            .description(Some("A percentage with at most 4 decimal places"))
            .into()
    }
}

impl utoipa::ToSchema for Percentage {}

/// Renders units back as the shortest decimal percentage, e.g. 15_000 -> 1.5.
pub(crate) fn percentage_json(units: u32) -> serde_json::Value {
    let int_part = units / PERCENT_UNITS;
    let frac = units % PERCENT_UNITS;
    let text = if frac == 0 {
        int_part.to_string()
    } else {
        let digits = format!("{frac:04}");
        format!("{int_part}.{}", digits.trim_end_matches('0'))
    };
    serde_json::from_str(&text).expect("a plain decimal is valid JSON")
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeeSplit {
    pub total: u128,
    pub creator: u128,
    pub platform: u128,
}

/// fee = ceil(gross * (creator + platform) / 100); the creator gets
/// floor(fee * creator / (creator + platform)), the platform the rest.
pub fn split_fee(gross: u128, creator_units: u32, platform_units: u32) -> FeeSplit {
    let rate = u128::from(creator_units + platform_units);
    if rate == 0 {
        return FeeSplit { total: 0, creator: 0, platform: 0 };
    }
    let denominator = 100 * u128::from(PERCENT_UNITS);
    // rate <= 50% so the fee never exceeds gross; mul_div cannot overflow.
    let total = mul_div(gross, rate, denominator, Rounding::Up).unwrap_or(gross);
    let creator = mul_div(total, u128::from(creator_units), rate, Rounding::Down).unwrap_or(0);
    FeeSplit { total, creator, platform: total - creator }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_parse_exactly() {
        assert_eq!(parse_percentage("0"), Some(0));
        assert_eq!(parse_percentage("1.5"), Some(15_000));
        assert_eq!(parse_percentage("0.25"), Some(2_500));
        assert_eq!(parse_percentage("0.0001"), Some(1));
        assert_eq!(parse_percentage("50"), Some(500_000));
        for bad in ["-1", "1.", ".5", "0.00001", "1e2", "1E2", "abc", "1000"] {
            assert_eq!(parse_percentage(bad), None, "{bad}");
        }
    }

    #[test]
    fn percentages_render_back() {
        assert_eq!(percentage_json(15_000).to_string(), "1.5");
        assert_eq!(percentage_json(2_500).to_string(), "0.25");
        assert_eq!(percentage_json(20_000).to_string(), "2");
        assert_eq!(percentage_json(1).to_string(), "0.0001");
    }

    #[test]
    fn fee_rounds_up_and_platform_takes_the_remainder() {
        // 2% + 1% of 1001 = 30.03 -> 31; creator floor(31*2/3) = 20; platform 11.
        assert_eq!(split_fee(1001, 20_000, 10_000), FeeSplit { total: 31, creator: 20, platform: 11 });
        // Exact multiples are not rounded up.
        assert_eq!(split_fee(1000, 20_000, 10_000), FeeSplit { total: 30, creator: 20, platform: 10 });
        // One wei at the smallest rate still pays one wei.
        assert_eq!(split_fee(1, 0, 1), FeeSplit { total: 1, creator: 0, platform: 1 });
        assert_eq!(split_fee(1000, 0, 0), FeeSplit { total: 0, creator: 0, platform: 0 });
        // The largest input at the largest rate stays exact.
        let max = super::super::money::MAX_INPUT_AMOUNT;
        assert_eq!(split_fee(max, 250_000, 250_000).total, max / 2);
    }
}
