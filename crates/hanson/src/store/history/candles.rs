//! Candles at read time: the maintained candles of the interval's base width, the marks
//! (prices moved without a trade) and, where a mark falls inside a base bucket that has
//! trades, that bucket's raw points, folded per outcome by `domain::candle::fold`.

use std::collections::HashMap;

use super::volume_between;
use crate::domain::candle::{base_width, bucket_start, fold, Bar, Move};
use crate::domain::time::Micros;
use crate::error::{Error, Result};
use crate::store::sql::{Conn, Param};

pub(crate) struct CandleQuery {
    pub(crate) market_id: String,
    pub(crate) outcome_id: Option<String>,
    pub(crate) interval: Micros,
    pub(crate) start: Micros,
    pub(crate) end: Micros,
    pub(crate) now: Micros,
}

/// An outcome's id and its candles.
pub(crate) type OutcomeBars = (String, Vec<Bar>);

/// Each outcome's candles (market order), or None for an unknown market; an outcome the
/// market does not have is 422 `unknown_outcome`.
pub(crate) fn candles(c: &mut dyn Conn, q: &CandleQuery) -> Result<Option<Vec<OutcomeBars>>> {
    let Some(market) = c.query_opt("SELECT created_at FROM markets WHERE id = $1", &[Param::Text(&q.market_id)])? else {
        return Ok(None);
    };
    let created_at = market.int(0)?;
    let mut outcomes = Vec::new();
    for r in c.query("SELECT id FROM outcomes WHERE market_id = $1 ORDER BY outcome_index", &[Param::Text(&q.market_id)])? {
        outcomes.push(r.text(0)?);
    }
    if let Some(only) = &q.outcome_id {
        if !outcomes.contains(only) {
            return Err(Error::rule_on("unknown_outcome", "outcome_id", "no such outcome in this market"));
        }
        outcomes.retain(|o| o == only);
    }
    let (lo, hi) = (q.start.max(created_at), q.end.min(q.now));
    if lo > hi {
        return Ok(Some(outcomes.into_iter().map(|o| (o, Vec::new())).collect()));
    }
    let (first, last) = (bucket_start(lo, q.interval), bucket_start(hi, q.interval));
    let end = last.saturating_add(q.interval);
    let width = base_width(q.interval);
    let index: HashMap<&str, usize> = outcomes.iter().enumerate().map(|(i, o)| (o.as_str(), i)).collect();
    let mut moves: Vec<Vec<(u8, Move)>> = vec![Vec::new(); outcomes.len()];

    // Marks: the market's few, before the range for the opening prices, inside it as moves.
    let mut opens: Vec<Option<(Micros, u128)>> = vec![None; outcomes.len()];
    let mut marked_buckets = Vec::new();
    let marks = c.query(
        "SELECT outcome_id, at, price FROM price_marks WHERE market_id = $1 AND at < $2 ORDER BY at, seq",
        &[Param::Text(&q.market_id), Param::Int(end)],
    )?;
    for r in &marks {
        let Some(&i) = index.get(r.text(0)?.as_str()) else { continue };
        let (at, price) = (r.int(1)?, r.money(2)?);
        if at < first {
            opens[i] = Some((at, price));
        } else {
            moves[i].push((0, Move::point(at, price, 0)));
            marked_buckets.push(bucket_start(at, width));
        }
    }
    marked_buckets.dedup();

    // The last trade's price before the range, per outcome, if later than its last mark.
    let mut params = vec![Param::Int(first)];
    let mut selects = Vec::new();
    for o in &outcomes {
        params.push(Param::Text(o));
        let n = params.len();
        selects.push(format!(
            "SELECT * FROM (SELECT outcome_id, at, price FROM price_points WHERE outcome_id = ${n} AND at < $1 ORDER BY at DESC, seq DESC LIMIT 1) AS p{n}"
        ));
    }
    for r in c.query(&selects.join(" UNION ALL "), &params)? {
        let Some(&i) = index.get(r.text(0)?.as_str()) else { continue };
        let (at, price) = (r.int(1)?, r.money(2)?);
        // On a tie the trade is taken as the later: a trade's clock never runs behind the
        // market's last change.
        if opens[i].is_none_or(|(mark_at, _)| at >= mark_at) {
            opens[i] = Some((at, price));
        }
    }

    // The stored candles, but for base buckets holding a mark: those come from raw points.
    let mut params = vec![Param::Text(&q.market_id), Param::Int(first), Param::Int(end)];
    let mut outcome_filter = String::new();
    if let Some(only) = &q.outcome_id {
        params.push(Param::Text(only));
        outcome_filter = " AND outcome_id = $4".into();
    }
    let sql = format!(
        "SELECT outcome_id, start, price, high, low, cum_before, cum_after, trades FROM price_candles \
         WHERE market_id = $1 AND width = {width} AND start >= $2 AND start < $3{outcome_filter} ORDER BY start, outcome_id"
    );
    for r in c.query(&sql, &params)? {
        let Some(&i) = index.get(r.text(0)?.as_str()) else { continue };
        let start = r.int(1)?;
        if marked_buckets.binary_search(&start).is_ok() {
            continue;
        }
        let volume = volume_between(r.money(5)?, r.money(6)?)?;
        moves[i]
            .push((1, Move { at: start, first: None, high: r.money(3)?, low: r.money(4)?, close: r.money(2)?, volume, trades: r.int(7)? }));
    }
    for &bucket in &marked_buckets {
        let rows = c.query(
            "SELECT outcome_id, at, price, volume FROM price_points WHERE market_id = $1 AND at >= $2 AND at < $3 ORDER BY at, seq",
            &[Param::Text(&q.market_id), Param::Int(bucket), Param::Int(bucket.saturating_add(width))],
        )?;
        for r in rows {
            let Some(&i) = index.get(r.text(0)?.as_str()) else { continue };
            moves[i].push((1, Move::point(r.int(1)?, r.money(2)?, r.money(3)?)));
        }
    }

    let mut out = Vec::with_capacity(outcomes.len());
    for (i, outcome) in outcomes.into_iter().enumerate() {
        let mut series = std::mem::take(&mut moves[i]);
        // Apply order: by time, a mark before a trade's point at the same instant.
        series.sort_by_key(|(kind, m)| (m.at, *kind));
        let mut series: Vec<Move> = series.into_iter().map(|(_, m)| m).collect();
        let open = opens[i].map(|(_, p)| p);
        if open.is_none() {
            if let Some(m) = series.first_mut().filter(|m| m.first.is_none()) {
                // A market from before marks were kept: its series opens at its first trade.
                let row = c.query_opt(
                    "SELECT price FROM price_points WHERE outcome_id = $1 AND at >= $2 ORDER BY at, seq LIMIT 1",
                    &[Param::Text(&outcome), Param::Int(m.at)],
                )?;
                m.first = Some(row.map(|r| r.money(0)).transpose()?.unwrap_or(m.close));
            }
        }
        let bars = fold(open, &series, q.interval, first, last).map_err(Error::internal)?;
        out.push((outcome, bars));
    }
    Ok(Some(out))
}
