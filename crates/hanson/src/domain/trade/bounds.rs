//! Price bounds of a trade (`docs/api.md`, "Trade protection"): a quote may go stale between
//! a preview and the trade, so a trade may name the worst it accepts. A bound that cannot be
//! met is 409 `price_moved` with the outcome's price now, and changes nothing.

use serde_json::Value as Json;

use super::SellBy;
use crate::domain::fees::PERCENT_UNITS;
use crate::domain::market_input::wei_field;
use crate::domain::money::string_schema;
use crate::domain::num::{mul_div, Rounding};
use crate::error::{Error, Result, Validator};

/// What a bet accepts: at least `min_shares`, and (a limit) a price after it of at most
/// `max_price`, filling partly if the whole amount would pass it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct BetBounds {
    pub(crate) min_shares: Option<u128>,
    pub(crate) max_price: Option<lmsr::Price>,
}

impl BetBounds {
    pub(crate) fn is_none(&self) -> bool {
        self.min_shares.is_none() && self.max_price.is_none()
    }
}

/// What a sale accepts. By shares: net proceeds of at least `min_proceeds`, and (a limit) a
/// price after it of at least `min_price`, selling partly if the whole would pass it. By
/// target proceeds: at most `max_shares` sold.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct SellBounds {
    pub(crate) min_proceeds: Option<u128>,
    pub(crate) min_price: Option<lmsr::Price>,
    pub(crate) max_shares: Option<u128>,
}

impl SellBounds {
    pub(crate) fn is_none(&self) -> bool {
        self.min_proceeds.is_none() && self.min_price.is_none() && self.max_shares.is_none()
    }
}

/// Fractional digits a price bound may have: as many as the API shows of a price.
pub(crate) const PRICE_DIGITS: usize = 18;

/// A price bound: `0.` and 1 to 18 digits, above zero. None for anything else.
pub(crate) fn parse_price_bound(text: &str) -> Option<lmsr::Price> {
    let digits = text.strip_prefix("0.")?;
    if digits.is_empty() || digits.len() > PRICE_DIGITS || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let value: u128 = digits.parse().ok()?;
    let raw = value * 10u128.pow((36 - digits.len()) as u32);
    (raw > 0).then(|| lmsr::Price::from_raw(raw))
}

/// A price bound a client sends: a decimal strictly between 0 and 1.
pub(crate) struct PriceBound;

impl utoipa::PartialSchema for PriceBound {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        string_schema(
            Some("^0\\.[0-9]{1,18}$"),
            None,
            "A price bound: a decimal string strictly between 0 and 1, with 1 to 18 fractional digits",
            "0.65",
        )
    }
}

impl utoipa::ToSchema for PriceBound {}

/// A price bound field, if present and well formed (else an entry in `v`).
fn price_field(value: Option<&Json>, field: &str, v: &mut Validator) -> Option<lmsr::Price> {
    match value {
        None | Some(Json::Null) => None,
        Some(Json::String(text)) if parse_price_bound(text).is_some() => parse_price_bound(text),
        Some(_) => {
            v.push(field, "must be a decimal string strictly between 0 and 1, with 1 to 18 fractional digits");
            None
        }
    }
}

/// A share or wei bound of 0 bounds nothing.
fn amount_bound(value: Option<&Json>, field: &str, v: &mut Validator) -> Result<Option<u128>> {
    Ok(wei_field(value, field, v)?.filter(|&n| n > 0))
}

/// The bounds of a bet or its preview, as the body names them.
pub(crate) fn bet_bounds(min_shares: Option<&Json>, max_price: Option<&Json>, v: &mut Validator) -> Result<BetBounds> {
    Ok(BetBounds { min_shares: amount_bound(min_shares, "min_shares", v)?, max_price: price_field(max_price, "max_price", v) })
}

/// The bounds a sale's body names; each belongs to one way of selling (`by`, when it is
/// known): naming one with the other is 422.
pub(crate) fn sell_bounds(
    by: Option<SellBy>,
    min_proceeds: Option<&Json>,
    min_price: Option<&Json>,
    max_shares: Option<&Json>,
    v: &mut Validator,
) -> Result<SellBounds> {
    let present = |x: Option<&Json>| x.is_some_and(|x| !x.is_null());
    match by {
        Some(SellBy::Shares(_)) if present(max_shares) => v.push("max_shares", "bounds only a sale by target_proceeds"),
        Some(SellBy::TargetProceeds(_)) => {
            for (field, value) in [("min_proceeds", min_proceeds), ("min_price", min_price)] {
                if present(value) {
                    v.push(field, "bounds only a sale by shares_amount");
                }
            }
        }
        _ => {}
    }
    Ok(SellBounds {
        min_proceeds: amount_bound(min_proceeds, "min_proceeds", v)?,
        min_price: price_field(min_price, "min_price", v),
        // Unlike the floors, a ceiling of 0 is a bound: no sale meets it.
        max_shares: wei_field(max_shares, "max_shares", v)?,
    })
}

/// The 409 of a bound that cannot be met, with the outcome's price now.
pub(crate) fn price_moved(detail: impl Into<String>, current: lmsr::Price) -> Error {
    Error::PriceMoved { detail: detail.into(), current_price: current.to_string() }
}

/// The largest gross amount whose net after the rounded-up fee is at most `net`:
/// gross - ceil(gross r) = floor(gross (1 - r)) <= net  <=>  gross < (net + 1) / (1 - r).
/// None when it is beyond u128 (no amount is limited).
pub(crate) fn largest_gross_within(net: u128, fee_units: u32) -> Option<u128> {
    let whole = 100 * u128::from(PERCENT_UNITS);
    let bound = mul_div(net.checked_add(1)?, whole, whole - u128::from(fee_units), Rounding::Up)?;
    Some(bound - 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::fees::split_fee;

    #[test]
    fn price_bounds_parse_exactly_inside_the_unit_interval() {
        assert_eq!(parse_price_bound("0.5").map(lmsr::Price::raw), Some(lmsr::PRICE_SCALE / 2));
        assert_eq!(parse_price_bound("0.000000000000000001").map(lmsr::Price::raw), Some(1_000_000_000_000_000_000));
        assert_eq!(parse_price_bound("0.999999999999999999").map(lmsr::Price::raw), Some(lmsr::PRICE_SCALE - 1_000_000_000_000_000_000));
        for bad in ["0", "1", "0.", "0.0", "0.000", "1.0", ".5", "0.5e1", "0.-5", " 0.5", "0.5 ", "0.1234567890123456789", "-0.5", "00.5"] {
            assert_eq!(parse_price_bound(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_largest_gross_within_a_net_is_exact_at_its_edge() {
        for (net, units) in [(0u128, 0u32), (1, 0), (99, 30_000), (1_000, 25_000), (10u128.pow(30), 500_000), (7, 1), (12_345, 10_001)] {
            let gross = largest_gross_within(net, units).unwrap();
            let net_of = |g: u128| g - split_fee(g, units, 0).total;
            assert!(net_of(gross) <= net, "{net} {units}");
            assert!(net_of(gross + 1) > net, "{net} {units}");
        }
        assert_eq!(largest_gross_within(u128::MAX, 0), None);
    }
}
