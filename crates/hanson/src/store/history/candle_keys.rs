//! The hourly candle keys and settled minutes that price-history pages keep between reads.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::volume_between;
use super::Scope;
use crate::domain::candle::{bucket_start, HOUR, MINUTE};
use crate::domain::time::Micros;
use crate::error::{Error, Result};
use crate::store::sql::{Conn, Param};

/// The keys `(start, outcome_id)` of every market's hourly candles that price-history reads
/// kept, each as of one snapshot. On PostgreSQL an hourly page walked the market's candles
/// to its offset and on for its count (1,442 index entries for a month of two outcomes, the
/// largest part of that mix's statements); with the keys at hand it finds both here and
/// reads only its rows. A market's candles are only ever added after its last one in that
/// order, as its points arrive in time order and each trade writes one for every outcome
/// (`trading::record_trade`): kept keys are right as long as they end at the market's last
/// candle, which each page read by them checks in its statement. The candles of the hours
/// before the last can no longer change: their price and volume are kept with their keys,
/// and a page of those alone reads nothing else. So are the minute candles of such hours
/// that raw pages needed.
///
/// It also keeps each outcome's market, which never changes: an outcome's pages (two in five
/// of the bench's mix) looked it up in a round trip of its own.
#[derive(Default)]
pub struct CandleKeys {
    pub(super) kept: Mutex<KeptCandleKeys>,
}

#[derive(Default)]
pub(super) struct KeptCandleKeys {
    pub(super) markets: HashMap<String, Arc<MarketCandleKeys>>,
    pub(super) keys: usize,
    /// Markets with more than `MARKET_CANDLE_KEYS` keys: their pages walk, and their keys
    /// are not read again.
    pub(super) too_many: std::collections::HashSet<String>,
    /// Each outcome's market, by outcome id.
    pub(super) markets_of_outcomes: HashMap<String, String>,
    /// The minute candles of settled hours, by market and hour.
    pub(super) hours: HashMap<(String, Micros), Arc<HourMinutes>>,
    /// Minute candles in `hours`.
    pub(super) minutes: usize,
}

/// The point counts of one settled hour's minute candles: an hour before the market's last
/// candle's, which no point can join any more (points arrive in time order). A raw page over
/// a date range counted the whole minutes of its partial hours at both ends from these
/// candles (up to 118 rows each), and its walk to its offset passed up to an hour of points:
/// kept, both are counted here.
pub(super) struct HourMinutes {
    /// The outcomes that have candles in the hour, in id order; `minutes` name them by index.
    pub(super) outcomes: Vec<String>,
    /// `(start, outcome, points)` in (start, outcome id) order.
    pub(super) minutes: Vec<(Micros, u32, i64)>,
}

impl HourMinutes {
    /// The scope's minute candles: all of them, or its outcome's.
    pub(super) fn in_scope<'m>(&'m self, scope: &Scope) -> impl Iterator<Item = &'m (Micros, u32, i64)> + 'm {
        let outcome = scope.outcome_id.as_ref().map(|id| self.outcomes.binary_search(id).ok().map(|i| i as u32));
        self.minutes.iter().filter(move |m| outcome.is_none_or(|o| o == Some(m.1)))
    }

    /// The scope's points in the minutes that start in `range` (half open).
    pub(super) fn points(&self, scope: &Scope, range: (Micros, Micros)) -> i64 {
        self.in_scope(scope).filter(|m| m.0 >= range.0 && m.0 < range.1).map(|m| m.2).sum()
    }

    /// The minute holding the scope's point `skip` (from 0) of the hour in the page's order,
    /// and the points before that minute.
    pub(super) fn minute_of(&self, scope: &Scope, desc: bool, skip: i64) -> Option<(Micros, i64)> {
        let mut by_minute: Vec<(Micros, i64)> = Vec::new();
        for &(start, _, points) in self.in_scope(scope) {
            match by_minute.last_mut() {
                Some(last) if last.0 == start => last.1 += points,
                _ => by_minute.push((start, points)),
            }
        }
        if desc {
            by_minute.reverse();
        }
        let mut before = 0;
        for (start, points) in by_minute {
            if before + points > skip {
                return Some((start, before));
            }
            before += points;
        }
        None
    }
}

/// One market's hourly candle keys, and their candles' point counts.
pub(super) struct MarketCandleKeys {
    /// The outcomes that have candles, in id order; `keys` name them by index.
    pub(super) outcomes: Vec<String>,
    /// In (start, outcome id) order.
    pub(super) keys: Vec<(Micros, u32)>,
    /// Each key's candle's points. Those of the last hour can still grow; the ones before
    /// cannot, as no point arrives before the market's last.
    pub(super) points: Vec<i64>,
    /// Each key's candle's last price and volume, for the hours before the last: those
    /// candles can no longer change.
    pub(super) buckets: Vec<(u128, u128)>,
}

impl MarketCandleKeys {
    /// Whether these are the keys of a market whose last candle is `(last_start, last_outcome)`.
    pub(super) fn end_at(&self, last_start: Option<Micros>, last_outcome: Option<&str>) -> bool {
        match self.keys.last() {
            Some(&(start, outcome)) => last_start == Some(start) && last_outcome == Some(self.outcomes[outcome as usize].as_str()),
            None => last_start.is_none() && last_outcome.is_none(),
        }
    }

    /// Whether `hour` is before the last hour of these keys: no point can join it any more.
    pub(super) fn is_settled(&self, hour: Micros) -> bool {
        self.keys.last().is_some_and(|&(last, _)| hour < last)
    }

    /// The index of the scope's outcome, if it names one: None inside where it has no candles.
    pub(super) fn outcome_index(&self, scope: &Scope) -> Option<Option<u32>> {
        scope.outcome_id.as_ref().map(|id| self.outcomes.binary_search(id).ok().map(|i| i as u32))
    }

    /// The indexes of the scope's keys whose start is in `range` (half open).
    pub(super) fn in_scope(&self, scope: &Scope, range: (Micros, Micros)) -> impl Iterator<Item = usize> + '_ {
        let outcome = self.outcome_index(scope);
        let (lo, hi) = (self.keys.partition_point(|k| k.0 < range.0), self.keys.partition_point(|k| k.0 < range.1));
        (lo..hi).filter(move |&i| outcome.is_none_or(|o| o == Some(self.keys[i].1)))
    }

    /// The scope's points in the candles of `range` that can no longer grow, and the start
    /// of the hour whose candles still can (the last one's).
    pub(super) fn settled_points(&self, scope: &Scope, range: (Micros, Micros)) -> (i64, Micros) {
        let open_from = self.keys.last().map_or(Micros::MIN, |k| k.0);
        (self.in_scope(scope, (range.0, range.1.min(open_from))).map(|i| self.points[i]).sum(), open_from)
    }
}

/// Columns that read a market's last hourly candle key, its id being parameter `$market`.
pub(super) fn last_candle_columns(market: usize) -> String {
    let last = |column: &str| {
        format!("(SELECT {column} FROM price_candles WHERE market_id = ${market} AND width = {HOUR} ORDER BY start DESC, outcome_id DESC LIMIT 1)")
    };
    format!("{} AS last_start, {} AS last_outcome", last("start"), last("outcome_id"))
}

/// Bounds the memory kept keys take: some 56 bytes each with their candle's price, volume and
/// points, so about 28 MiB, or a month of hourly candles of two outcomes for 350 markets.
pub(super) const KEPT_CANDLE_KEYS: usize = 1 << 19;

/// The most keys kept for one market (3.7 years of two outcomes), so that reading them stays
/// cheap.
pub(super) const MARKET_CANDLE_KEYS: usize = 1 << 16;

/// The most outcomes whose market is kept: some 150 bytes each, about 10 MiB.
pub(super) const KEPT_OUTCOMES: usize = 1 << 16;

/// The most minute candles of settled hours kept: 16 bytes each, some 16 MiB, or a month of
/// two outcomes for 12 markets.
pub(super) const KEPT_MINUTE_CANDLES: usize = 1 << 20;

impl CandleKeys {
    pub(super) fn get(&self, market_id: &str) -> Option<Arc<MarketCandleKeys>> {
        self.kept.lock().ok()?.markets.get(market_id).cloned()
    }

    pub(super) fn market_of(&self, outcome_id: &str) -> Option<String> {
        self.kept.lock().ok()?.markets_of_outcomes.get(outcome_id).cloned()
    }

    pub(super) fn keep_market_of(&self, outcome_id: &str, market_id: &str) {
        let Ok(mut kept) = self.kept.lock() else { return };
        if kept.markets_of_outcomes.len() >= KEPT_OUTCOMES {
            if let Some(evicted) = kept.markets_of_outcomes.keys().next().cloned() {
                kept.markets_of_outcomes.remove(&evicted);
            }
        }
        kept.markets_of_outcomes.insert(outcome_id.to_string(), market_id.to_string());
    }

    /// The minute candles of each of `hours` that was settled when read, reading those not
    /// kept in one statement. `hours` are starts of hours before the kept keys' last one; one
    /// of them counts as settled when this read's snapshot holds a later candle.
    pub(super) fn settled_hours(&self, c: &mut dyn Conn, market_id: &str, hours: &[Micros]) -> Result<Vec<(Micros, Arc<HourMinutes>)>> {
        let mut found = Vec::with_capacity(hours.len());
        let mut missing = Vec::new();
        {
            let kept = self.kept.lock().map_err(Error::internal)?;
            for &hour in hours {
                match kept.hours.get(&(market_id.to_string(), hour)) {
                    Some(minutes) => found.push((hour, minutes.clone())),
                    None if !missing.contains(&hour) => missing.push(hour),
                    None => {}
                }
            }
        }
        if missing.is_empty() {
            return Ok(found);
        }
        let mut params = vec![Param::Text(market_id)];
        let mut selects = Vec::new();
        for &hour in &missing {
            params.extend([Param::Int(hour), Param::Int(hour.saturating_add(HOUR))]);
            let n = params.len();
            selects.push(format!(
                "SELECT start, outcome_id, points FROM price_candles WHERE market_id = $1 AND width = {MINUTE} AND start >= ${} AND start < ${n}",
                n - 1
            ));
        }
        let last = format!(
            "(SELECT start FROM price_candles WHERE market_id = $1 AND width = {HOUR} ORDER BY start DESC, outcome_id DESC LIMIT 1)"
        );
        let rows = c.query(&format!("SELECT {last} AS last_start, minutes.* FROM ({}) AS minutes RIGHT JOIN (SELECT 1) AS one ON true ORDER BY minutes.start, minutes.outcome_id", selects.join(" UNION ALL ")), &params)?;
        let Some(last_start) = rows.first().map(|r| r.opt_int(0)).transpose()?.flatten() else { return Ok(found) };
        let mut loaded: HashMap<Micros, HourMinutes> = HashMap::new();
        for r in rows.iter().filter(|r| matches!(r.opt_int(1), Ok(Some(_)))) {
            let start = r.int(1)?;
            let hour = bucket_start(start, HOUR);
            let minutes = loaded.entry(hour).or_insert_with(|| HourMinutes { outcomes: Vec::new(), minutes: Vec::new() });
            let outcome = r.text(2)?;
            let index = match minutes.outcomes.binary_search(&outcome) {
                Ok(i) => i,
                Err(i) => {
                    minutes.outcomes.insert(i, outcome);
                    // Rows are in outcome id order within a minute but not across the hour:
                    // renumber the ones read so far.
                    for m in &mut minutes.minutes {
                        if m.1 as usize >= i {
                            m.1 += 1;
                        }
                    }
                    i
                }
            };
            minutes.minutes.push((start, index as u32, r.int(3)?));
        }
        let mut kept = self.kept.lock().map_err(Error::internal)?;
        for hour in missing.into_iter().filter(|&h| h.saturating_add(HOUR) <= last_start) {
            let minutes = Arc::new(loaded.remove(&hour).unwrap_or(HourMinutes { outcomes: Vec::new(), minutes: Vec::new() }));
            while kept.minutes + minutes.minutes.len() > KEPT_MINUTE_CANDLES {
                let Some(evicted) = kept.hours.keys().next().cloned() else { break };
                if let Some(old) = kept.hours.remove(&evicted) {
                    kept.minutes -= old.minutes.len();
                }
            }
            kept.minutes += minutes.minutes.len();
            kept.hours.insert((market_id.to_string(), hour), minutes.clone());
            found.push((hour, minutes));
        }
        Ok(found)
    }

    /// Reads and keeps the market's hourly candle keys, unless it has too many.
    pub(super) fn refresh(&self, c: &mut dyn Conn, market_id: &str) -> Result<()> {
        if self.kept.lock().map_err(Error::internal)?.too_many.contains(market_id) {
            return Ok(());
        }
        let rows = c.query(
            &format!("SELECT start, outcome_id, points, price, cum_before, cum_after FROM price_candles WHERE market_id = $1 AND width = {HOUR} ORDER BY start, outcome_id LIMIT {}", MARKET_CANDLE_KEYS + 1),
            &[Param::Text(market_id)],
        )?;
        if rows.len() > MARKET_CANDLE_KEYS {
            let mut kept = self.kept.lock().map_err(Error::internal)?;
            if let Some(old) = kept.markets.remove(market_id) {
                kept.keys -= old.keys.len();
            }
            kept.too_many.insert(market_id.to_string());
            return Ok(());
        }
        let mut outcomes: Vec<String> = Vec::new();
        let mut named = Vec::with_capacity(rows.len());
        let mut points = Vec::with_capacity(rows.len());
        let mut buckets = Vec::with_capacity(rows.len());
        for r in &rows {
            named.push((r.int(0)?, r.text(1)?));
            points.push(r.int(2)?);
            buckets.push((r.money(3)?, volume_between(r.money(4)?, r.money(5)?)?));
        }
        for (_, outcome) in &named {
            if let Err(at) = outcomes.binary_search(outcome) {
                outcomes.insert(at, outcome.clone());
            }
        }
        let keys = named
            .into_iter()
            .map(|(start, outcome)| {
                outcomes.binary_search(&outcome).map(|i| (start, i as u32)).map_err(|_| Error::internal("candle outcome not kept"))
            })
            .collect::<Result<Vec<_>>>()?;
        let mut kept = self.kept.lock().map_err(Error::internal)?;
        if let Some(old) = kept.markets.remove(market_id) {
            kept.keys -= old.keys.len();
        }
        while kept.keys + keys.len() > KEPT_CANDLE_KEYS {
            let Some(evicted) = kept.markets.keys().next().cloned() else { break };
            if let Some(old) = kept.markets.remove(&evicted) {
                kept.keys -= old.keys.len();
            }
        }
        kept.keys += keys.len();
        kept.markets.insert(market_id.to_string(), Arc::new(MarketCandleKeys { outcomes, keys, points, buckets }));
        Ok(())
    }
}
