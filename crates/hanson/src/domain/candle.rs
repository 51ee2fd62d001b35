//! Price candles: per outcome and width, the last price and the volume of the points that
//! fall in one time bucket.

use serde::Serialize;

use super::money::Wei;
use super::time::{Micros, Timestamp};

/// One price point, or one bucket of them (its last price and summed volume), as price
/// history shows it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct PricePoint {
    pub market_id: String,
    pub outcome_id: String,
    pub price: String,
    pub volume: Wei,
    pub timestamp: Timestamp,
}

pub(crate) const MINUTE: Micros = 60_000_000;
pub const HOUR: Micros = 3_600_000_000;
/// Widths of the maintained candles; every interval is a multiple of one of them.
pub(crate) const CANDLE_WIDTHS: [Micros; 2] = [MINUTE, HOUR];

/// The candles an interval is built from: the widest maintained width that divides it.
pub(crate) fn base_width(interval: Micros) -> Micros {
    if interval % HOUR == 0 {
        HOUR
    } else {
        MINUTE
    }
}

pub(crate) fn bucket_start(at: Micros, width: Micros) -> Micros {
    at.div_euclid(width) * width
}

/// A trade's share of one candle, or several trades' of the same candle merged.
#[derive(Debug, Clone)]
pub(crate) struct Candle {
    pub(crate) width: Micros,
    pub(crate) start: Micros,
    pub(crate) outcome_id: String,
    /// The last point's price and running volume total.
    pub(crate) price: u128,
    pub(crate) cum_after: u128,
    /// The running volume total before the first point.
    pub(crate) cum_before: u128,
    pub(crate) points: i64,
}

impl Candle {
    /// Folds a later row of the same candle into this one; false if it is another candle.
    pub(crate) fn absorb(&mut self, later: &Candle) -> bool {
        if (self.width, self.start, &self.outcome_id) != (later.width, later.start, &later.outcome_id) {
            return false;
        }
        self.price = later.price;
        self.cum_after = later.cum_after;
        self.points += later.points;
        true
    }
}
