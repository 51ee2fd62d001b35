//! Raw price-history pages: the points themselves, with their total counted mostly from
//! candles.

use std::sync::Arc;

use super::candle_keys::{last_candle_columns, CandleKeys, HourMinutes, MarketCandleKeys};
use super::{candles_where, price_point, seeks_to_offset, split, PriceQuery, Scope};
use crate::domain::candle::{bucket_start, PricePoint, CANDLE_WIDTHS, HOUR, MINUTE};
use crate::domain::page::{Direction, Page, PageRequest};
use crate::domain::time::Micros;
use crate::error::Result;
use crate::store::sql::{Conn, Param};

/// The terms whose sum is the number of raw points in `[from, to]` of the scope, appending
/// their parameters to `params`, whose `$1` is the scope's key (`column`). `widths` are
/// candle widths, narrowest first: the widest takes the whole buckets (the hourly candles'
/// point counts), the narrower ones the whole buckets inside the partial ones at the ends,
/// and only what is left there (partial minutes) is counted point by point.
/// With `kept` hourly candle keys, the hours before the last are counted from them (counting
/// a month of hours was most of an outcome's raw page).
pub(super) fn raw_total_terms<'a>(
    scope: &'a Scope,
    from: Option<Micros>,
    to: Option<Micros>,
    widths: &[Micros],
    column: &str,
    kept: Option<&Kept<'_>>,
    params: &mut Vec<Param<'a>>,
) -> Vec<String> {
    let Some((&width, finer)) = widths.split_last() else {
        params.extend([Param::Int(from.unwrap_or(Micros::MIN)), Param::Int(to.unwrap_or(Micros::MAX))]);
        let n = params.len();
        return vec![format!("(SELECT count(*) FROM price_points WHERE {column} = $1 AND at >= ${} AND at <= ${n})", n - 1)];
    };
    let parts = split(from, to, width);
    let mut terms = Vec::new();
    for (lo, hi) in [parts.partial_lo, parts.partial_hi].into_iter().flatten() {
        match kept.filter(|_| width == HOUR).and_then(|k| k.minutes_of(bucket_start(lo, HOUR))) {
            Some(minutes) => {
                // Only the partial minutes at its ends are counted point by point.
                let minute_parts = split(Some(lo), Some(hi), MINUTE);
                for (lo, hi) in [minute_parts.partial_lo, minute_parts.partial_hi].into_iter().flatten() {
                    terms.extend(raw_total_terms(scope, Some(lo), Some(hi), &[], column, None, params));
                }
                if let Some(range) = minute_parts.whole {
                    params.push(Param::Int(minutes.points(scope, range)));
                    terms.push(format!("${}", params.len()));
                }
            }
            None => terms.extend(raw_total_terms(scope, Some(lo), Some(hi), finer, column, None, params)),
        }
    }
    let Some(mut range) = parts.whole else { return terms };
    if let Some(kept) = kept.filter(|_| width == HOUR) {
        let (settled, open_from) = kept.hours.settled_points(scope, range);
        params.push(Param::Int(settled));
        terms.push(format!("${}", params.len()));
        range.0 = range.0.max(open_from);
        if range.0 >= range.1 {
            return terms;
        }
    }
    let (filter, candle_params) = candles_where(scope, width, range, params.len() + 1);
    params.extend(candle_params);
    terms.push(format!("(SELECT CAST(COALESCE(SUM(points), 0) AS BIGINT) FROM price_candles WHERE {filter})"));
    terms
}

/// What a raw page counts from memory: a market's kept hourly candle keys, and the minute
/// candles of the settled hours it needs.
pub(super) struct Kept<'k> {
    hours: &'k MarketCandleKeys,
    settled: &'k [(Micros, Arc<HourMinutes>)],
}

impl Kept<'_> {
    fn minutes_of(&self, hour: Micros) -> Option<&HourMinutes> {
        minutes_of(self.settled, hour)
    }
}

pub(super) fn minutes_of(settled: &[(Micros, Arc<HourMinutes>)], hour: Micros) -> Option<&HourMinutes> {
    settled.iter().find(|(h, _)| *h == hour).map(|(_, m)| &**m)
}

/// Offsets below this are walked point by point: a seek costs a statement of its own.
pub(super) const RAW_SEEK_FROM: i64 = 100;

/// The hour holding a raw page's first point, found through the hourly candles' point counts
/// instead of a walk over every point before it.
pub(super) struct SeekHour {
    start: Micros,
    /// The range's points before that hour, in the page's order.
    before: i64,
    /// The market's last hourly candle's start in this read's snapshot.
    last_start: Option<Micros>,
}

impl SeekHour {
    fn is_settled(&self) -> bool {
        self.last_start.is_some_and(|last| self.start.saturating_add(HOUR) <= last)
    }
}

/// None when the page starts in a partial hour at either end of the range (those hold an
/// hour's worth of points) or near enough to the start to walk.
pub(super) fn seek_hour(c: &mut dyn Conn, scope: &Scope, q: &PriceQuery, column: &str, key: &str, offset: i64) -> Result<Option<SeekHour>> {
    let Some((&width, finer)) = CANDLE_WIDTHS.split_last() else { return Ok(None) };
    let parts = split(q.from, q.to, width);
    let Some(whole) = parts.whole.filter(|_| offset >= RAW_SEEK_FROM && seeks_to_offset(c)) else { return Ok(None) };
    let desc = q.direction == Direction::Desc;
    let mut params = vec![Param::Text(key)];
    // The points before the whole candles, in the page's order.
    let head = match if desc { parts.partial_hi } else { parts.partial_lo } {
        Some((lo, hi)) => raw_total_terms(scope, Some(lo), Some(hi), finer, column, None, &mut params).join(" + "),
        None => "0".into(),
    };
    let (filter, candle_params) = candles_where(scope, width, whole, params.len() + 1);
    params.extend(candle_params);
    params.push(Param::Int(offset));
    let offset_param = params.len();
    params.push(Param::Text(&scope.market_id));
    let last = format!(
        "(SELECT start FROM price_candles WHERE market_id = ${} AND width = {HOUR} ORDER BY start DESC, outcome_id DESC LIMIT 1)",
        params.len()
    );
    let d = q.direction.as_sql();
    // Per candle, in the page's order: the points of its bucket (every outcome's candle of
    // that start) and of every bucket up to it. A GROUP BY start was planned as a forward walk
    // and a sort of every bucket; these windows follow the index in either direction and stop
    // at the bucket found.
    let sql = format!(
        "SELECT start, upto - points + head, {last} AS last_start FROM \
         (SELECT start, CAST(SUM(points) OVER (ORDER BY start {d} RANGE BETWEEN CURRENT ROW AND CURRENT ROW) AS BIGINT) AS points, \
         CAST(SUM(points) OVER (ORDER BY start {d}) AS BIGINT) AS upto FROM price_candles WHERE {filter}) AS candles, \
         (SELECT {head} AS head) AS ahead \
         WHERE upto + head > ${offset_param} ORDER BY start {d} LIMIT 1"
    );
    let Some(row) = c.query_opt(&sql, &params)? else { return Ok(None) };
    let found = SeekHour { start: row.int(0)?, before: row.int(1)?, last_start: row.opt_int(2)? };
    Ok((found.before <= offset).then_some(found))
}

/// Raw points, newest or oldest first, with their total in the same statement.
pub(super) fn raw(c: &mut dyn Conn, scope: &Scope, q: &PriceQuery, keys: Option<&CandleKeys>) -> Result<Page<PricePoint>> {
    if q.from.zip(q.to).is_some_and(|(from, to)| from > to) {
        return Ok(Page::new(Vec::new(), q.page, 0));
    }
    let (column, key) = match &scope.outcome_id {
        Some(outcome) => ("outcome_id", outcome),
        None => ("market_id", &scope.market_id),
    };
    let PageRequest { page, per_page } = q.page;
    let offset = (page - 1) * per_page;
    let keys = keys.filter(|_| seeks_to_offset(c));
    let kept_hours = keys.and_then(|k| k.get(&scope.market_id));
    let seek = seek_hour(c, scope, q, column, key, offset)?;
    // The settled hours whose minutes this page counts: the partial hours at the range's ends
    // and the hour it starts in.
    let mut hours = Vec::new();
    if let Some(kept) = &kept_hours {
        let parts = split(q.from, q.to, HOUR);
        hours.extend(
            [parts.partial_lo, parts.partial_hi]
                .into_iter()
                .flatten()
                .map(|(lo, _)| bucket_start(lo, HOUR))
                .filter(|&h| kept.is_settled(h)),
        );
    }
    hours.extend(seek.as_ref().filter(|s| s.is_settled()).map(|s| s.start));
    let settled = match keys {
        Some(keys) if !hours.is_empty() => keys.settled_hours(c, &scope.market_id, &hours)?,
        _ => Vec::new(),
    };
    let (from, to, offset) = match seek {
        None => (q.from, q.to, offset),
        Some(seek) => {
            let minute = minutes_of(&settled, seek.start)
                .filter(|_| seek.is_settled())
                .and_then(|m| m.minute_of(scope, q.direction == Direction::Desc, offset - seek.before));
            let (start, before, width) = match minute {
                Some((minute, within)) => (minute, seek.before + within, MINUTE),
                None => (seek.start, seek.before, HOUR),
            };
            if q.direction == Direction::Desc {
                (q.from, Some(start.saturating_add(width - 1)), offset - before)
            } else {
                (Some(start), q.to, offset - before)
            }
        }
    };
    let kept = kept_hours.as_deref().map(|hours| Kept { hours, settled: &settled });
    let mut params: Vec<Param<'_>> = vec![
        Param::Text(key),
        Param::Int(from.unwrap_or(Micros::MIN)),
        Param::Int(to.unwrap_or(Micros::MAX)),
        Param::Int(per_page),
        Param::Int(offset),
    ];
    let mut total_sql = raw_total_terms(scope, q.from, q.to, &CANDLE_WIDTHS, column, kept.as_ref(), &mut params).join(" + ");
    if kept.is_some() {
        // The total counted from the keys holds if they still end at the market's last candle.
        params.push(Param::Text(&scope.market_id));
        total_sql = format!("{total_sql}, {}", last_candle_columns(params.len()));
    }
    let order = format!("at {dir}, seq {dir}", dir = q.direction.as_sql());
    let range = format!("{column} = $1 AND at >= $2 AND at <= $3");
    // The page's points are found in the index alone and only their rows read: an OFFSET over
    // whole rows reads every row it skips.
    let sql = if seeks_to_offset(c) {
        // From the key `offset` entries in, one walk of the index reads the page's rows, which
        // lie together in the table as they were written together (fewer buffers than looking
        // each row up by `seq`).
        let from_key = q.direction.at_or_past_sql();
        format!(
            "SELECT outcome_id, price, volume, at, {total_sql} FROM price_points WHERE {range} \
             AND (at, seq) {from_key} (SELECT at, seq FROM price_points WHERE {range} ORDER BY {order} LIMIT 1 OFFSET $5) ORDER BY {order} LIMIT $4"
        )
    } else {
        format!(
            "SELECT outcome_id, price, volume, at, {total_sql} FROM price_points \
             WHERE seq IN (SELECT seq FROM price_points WHERE {range} ORDER BY {order} LIMIT $4 OFFSET $5) ORDER BY {order}"
        )
    };
    let rows = c.query(&sql, &params)?;
    let kept_hold = match (&kept, rows.first()) {
        (Some(kept), Some(r)) => kept.hours.end_at(r.opt_int(5)?, r.opt_text(6)?.as_deref()),
        _ => false,
    };
    let total = match rows.first() {
        Some(r) if kept.is_none() || kept_hold => r.int(4)?,
        _ => {
            // A page past the end still reports the total, as does one whose kept keys were
            // out of date.
            let mut params = vec![Param::Text(key)];
            let terms = raw_total_terms(scope, q.from, q.to, &CANDLE_WIDTHS, column, None, &mut params);
            c.query_one(&format!("SELECT {}", terms.join(" + ")), &params)?.int(0)?
        }
    };
    // Read again when none were kept, or found out of date by a page that could tell.
    if let Some(keys) = keys.filter(|_| kept.is_none() || (!rows.is_empty() && !kept_hold)) {
        keys.refresh(c, &scope.market_id)?;
    }
    let data = rows
        .iter()
        .map(|r| Ok(price_point(&scope.market_id, &r.text(0)?, r.money(1)?, r.money(2)?, r.int(3)?)))
        .collect::<Result<Vec<_>>>()?;
    Ok(Page::new(data, q.page, total))
}
