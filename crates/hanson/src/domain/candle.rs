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
    /// The highest and lowest price of its points.
    pub(crate) high: u128,
    pub(crate) low: u128,
    /// Its points with volume: the outcome's own trades.
    pub(crate) trades: i64,
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
        self.high = self.high.max(later.high);
        self.low = self.low.min(later.low);
        self.trades += later.trades;
        true
    }
}

/// One change of an outcome's price series (a trade's point, a mark), or a stored candle's
/// changes folded.
#[derive(Debug, Clone)]
pub(crate) struct Move {
    pub(crate) at: Micros,
    /// The first price of the change, where known (a stored candle keeps only its extremes
    /// and its last).
    pub(crate) first: Option<u128>,
    pub(crate) high: u128,
    pub(crate) low: u128,
    pub(crate) close: u128,
    pub(crate) volume: u128,
    pub(crate) trades: i64,
}

impl Move {
    /// A single price: a trade's point (with its volume) or a mark.
    pub(crate) fn point(at: Micros, price: u128, volume: u128) -> Move {
        Move { at, first: Some(price), high: price, low: price, close: price, volume, trades: i64::from(volume > 0) }
    }
}

/// One bucket of an outcome's candles, prices in 10^-36 units.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Bar {
    pub(crate) start: Micros,
    pub(crate) open: u128,
    pub(crate) high: u128,
    pub(crate) low: u128,
    pub(crate) close: u128,
    pub(crate) volume: u128,
    pub(crate) trades: i64,
}

/// Folds an outcome's moves (in apply order, none before `first`) into every bucket of
/// `interval` from the one starting at `first` to the one starting at `last`. `open` is the
/// last price before `first`; without one, buckets before the series' first move are left
/// out and its first bucket opens at its first price.
pub(crate) fn fold(open: Option<u128>, moves: &[Move], interval: Micros, first: Micros, last: Micros) -> Result<Vec<Bar>, &'static str> {
    let mut bars = Vec::new();
    let mut price = open;
    let mut rest = moves;
    let mut start = first;
    while start <= last {
        let end = start.saturating_add(interval);
        let inside = rest.partition_point(|m| m.at < end);
        let (now, later) = rest.split_at(inside);
        rest = later;
        let opening = match (price, now.first()) {
            (Some(p), _) => p,
            (None, Some(m)) => m.first.ok_or("a series starts without its first price")?,
            (None, None) => {
                start = end;
                continue;
            }
        };
        let mut bar = Bar { start, open: opening, high: opening, low: opening, close: opening, volume: 0, trades: 0 };
        for m in now {
            bar.high = bar.high.max(m.high);
            bar.low = bar.low.min(m.low);
            bar.close = m.close;
            bar.volume = bar.volume.checked_add(m.volume).ok_or("candle volume overflow")?;
            bar.trades += m.trades;
        }
        price = Some(bar.close);
        bars.push(bar);
        start = end;
    }
    Ok(bars)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_contiguous_and_open_at_the_last_price_before() {
        let moves = [Move::point(65, 7, 3), Move::point(70, 4, 0), Move::point(200, 9, 5)];
        let bars = fold(Some(5), &moves, 60, 0, 240).unwrap();
        let starts: Vec<Micros> = bars.iter().map(|b| b.start).collect();
        assert_eq!(starts, [0, 60, 120, 180, 240]);
        assert_eq!(bars[0], Bar { start: 0, open: 5, high: 5, low: 5, close: 5, volume: 0, trades: 0 });
        assert_eq!(bars[1], Bar { start: 60, open: 5, high: 7, low: 4, close: 4, volume: 3, trades: 1 });
        assert_eq!(bars[2], Bar { start: 120, open: 4, high: 4, low: 4, close: 4, volume: 0, trades: 0 });
        assert_eq!(bars[3], Bar { start: 180, open: 4, high: 9, low: 4, close: 9, volume: 5, trades: 1 });
        assert_eq!(bars[4].open, 9);
    }

    #[test]
    fn a_series_without_an_earlier_price_starts_at_its_first_move() {
        let bars = fold(None, &[Move::point(130, 8, 0)], 60, 0, 180).unwrap();
        assert_eq!(bars.iter().map(|b| (b.start, b.open, b.close)).collect::<Vec<_>>(), [(120, 8, 8), (180, 8, 8)]);
    }
}
