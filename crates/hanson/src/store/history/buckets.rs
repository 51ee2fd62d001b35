//! Bucketed price-history pages: whole buckets from candles, partial ones at a date
//! filter's ends from the raw points.

use std::collections::HashMap;

use super::candle_keys::{last_candle_columns, CandleKeys, MarketCandleKeys};
use super::{candles_where, price_point, running_total, seeks_to_offset, split, volume_between, Bucket, PriceQuery, Scope};
use crate::domain::candle::{base_width, bucket_start, PricePoint, HOUR};
use crate::domain::page::{Direction, Page, PageRequest};
use crate::domain::time::Micros;
use crate::error::{Error, Result};
use crate::store::sql::{Conn, Param};

/// Which of a page's buckets to read: their order, how many to skip, how many to take.
#[derive(Clone, Copy)]
pub(super) struct Slice {
    pub(super) dir: Direction,
    pub(super) offset: i64,
    pub(super) limit: i64,
}

/// A bucket folded from its candles: the total before it, its last price, the total after it.
type Folded = (u128, u128, u128);

/// The partial buckets at both ends of a date filter (`ranges`: inclusive, each inside one
/// bucket), in one statement: per outcome of the scope, ordered by id (the tie-break of
/// buckets that share a start), the last price in the range, and the volume as the difference
/// of running totals. An outcome without points in a range has no bucket there.
pub(super) fn partial_buckets(
    c: &mut dyn Conn,
    scope: &Scope,
    ranges: [Option<(Micros, Micros)>; 2],
    width: Micros,
) -> Result<[Vec<Bucket>; 2]> {
    let mut out: [Vec<Bucket>; 2] = [Vec::new(), Vec::new()];
    let mut params: Vec<Param<'_>> = vec![Param::Text(&scope.market_id)];
    let mut outcome_filter = String::new();
    if let Some(outcome) = &scope.outcome_id {
        params.push(Param::Text(outcome));
        outcome_filter = " AND o.id = $2".into();
    }
    let mut selects = Vec::new();
    for (part, (lo, hi)) in ranges.iter().enumerate().filter_map(|(i, r)| r.map(|r| (i, r))) {
        params.extend([Param::Int(lo), Param::Int(hi)]);
        let (lo, hi) = (params.len() - 1, params.len());
        let last = |column: &str| {
            format!(
                "(SELECT p.{column} FROM price_points p WHERE p.outcome_id = o.id AND p.at >= ${lo} AND p.at <= ${hi} \
                 ORDER BY p.at DESC, p.seq DESC LIMIT 1)"
            )
        };
        selects.push(format!(
            "SELECT {part} AS part, o.id AS outcome_id, {}, {}, \
             (SELECT p.cum_volume FROM price_points p WHERE p.outcome_id = o.id AND p.at < ${lo} ORDER BY p.at DESC, p.seq DESC LIMIT 1) \
             FROM outcomes o WHERE o.market_id = $1{outcome_filter}",
            last("price"),
            last("cum_volume"),
        ));
    }
    if selects.is_empty() {
        return Ok(out);
    }
    let sql = format!("{} ORDER BY part, outcome_id", selects.join(" UNION ALL "));
    for r in &c.query(&sql, &params)? {
        let part = r.int(0)? as usize;
        let Some(price) = r.opt_money(2)? else { continue };
        let before = r.opt_money(4)?.unwrap_or(0);
        let range = ranges[part].ok_or_else(|| Error::internal("partial bucket outside its ranges"))?;
        out[part].push(Bucket {
            outcome_id: r.text(1)?,
            start: bucket_start(range.0, width),
            price,
            volume: volume_between(before, running_total(r, 3)?)?,
        });
    }
    Ok(out)
}

/// An hourly page found through kept keys: its count and first key from them, its rows and
/// the market's last candle from the statement. None when the keys no longer end at the
/// market's last candle.
pub(super) fn hourly_page_by_keys(
    c: &mut dyn Conn,
    scope: &Scope,
    kept: &MarketCandleKeys,
    range: (Micros, Micros),
    slice: Slice,
) -> Result<Option<(i64, Vec<Bucket>)>> {
    let Slice { dir, offset, limit } = slice;
    let mut in_scope: Vec<usize> = kept.in_scope(scope, range).collect();
    let total = in_scope.len() as i64;
    let desc = dir == Direction::Desc;
    if desc {
        in_scope.reverse();
    }
    // The page's keys, in its order.
    let page: Vec<usize> = in_scope.into_iter().skip(offset.max(0) as usize).take(limit.max(0) as usize).collect();
    let first = page.first().map(|&i| &kept.keys[i]);
    let (filter, mut params) = candles_where(scope, HOUR, range, 1);
    let last = last_candle_columns(1);
    // A page wholly before the last hour is made of kept candles, once the check holds: its
    // rows took a third of PostgreSQL's time in the bench's price_history mix.
    if !page.is_empty() && page.iter().all(|&i| kept.is_settled(kept.keys[i].0)) {
        let rows = c.query(&format!("SELECT {last}"), &params[..1])?;
        let Some(head) = rows.first() else { return Ok(None) };
        if !kept.end_at(head.opt_int(0)?, head.opt_text(1)?.as_deref()) {
            return Ok(None);
        }
        let buckets = page
            .into_iter()
            .map(|i| {
                let ((start, outcome), (price, volume)) = (kept.keys[i], kept.buckets[i]);
                Bucket { outcome_id: kept.outcomes[outcome as usize].clone(), start, price, volume }
            })
            .collect();
        return Ok(Some((total, buckets)));
    }
    let rows = match first {
        Some(&(start, outcome)) => {
            params.extend([Param::Int(start), Param::Text(&kept.outcomes[outcome as usize]), Param::Int(limit)]);
            let n = params.len();
            let (d, from_key) = (dir.as_sql(), dir.at_or_past_sql());
            c.query(
                &format!(
                    "SELECT {last}, outcome_id, start, price, cum_before, cum_after FROM price_candles \
                     WHERE {filter} AND (start, outcome_id) {from_key} (${}, ${}) ORDER BY start {d}, outcome_id {d} LIMIT ${n}",
                    n - 2,
                    n - 1
                ),
                &params,
            )?
        }
        // Past the end: only the check.
        None => c.query(&format!("SELECT {last}"), &params[..1])?,
    };
    let Some(head) = rows.first() else { return Ok(None) };
    if !kept.end_at(head.opt_int(0)?, head.opt_text(1)?.as_deref()) {
        return Ok(None);
    }
    if first.is_none() {
        return Ok(Some((total, Vec::new())));
    }
    let buckets = rows
        .iter()
        .map(|r| {
            Ok(Bucket { outcome_id: r.text(2)?, start: r.int(3)?, price: r.money(4)?, volume: volume_between(r.money(5)?, r.money(6)?)? })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Some((total, buckets)))
}

/// Whole buckets of `width` from the candles of its base width: how many there are, and
/// `limit` of them from `offset` in the page's order.
pub(super) fn whole_buckets(
    c: &mut dyn Conn,
    scope: &Scope,
    range: (Micros, Micros),
    width: Micros,
    slice: Slice,
    keys: Option<&CandleKeys>,
) -> Result<(i64, Vec<Bucket>)> {
    let Slice { limit, .. } = slice;
    let keys = keys.filter(|_| width == HOUR && limit > 0 && seeks_to_offset(c));
    if let Some(kept) = keys.and_then(|k| k.get(&scope.market_id)) {
        if let Some(page) = hourly_page_by_keys(c, scope, &kept, range, slice)? {
            return Ok(page);
        }
    }
    let page = whole_buckets_walked(c, scope, range, width, slice)?;
    if let Some(keys) = keys {
        keys.refresh(c, &scope.market_id)?;
    }
    Ok(page)
}

/// [`whole_buckets`] through the candles' index alone.
pub(super) fn whole_buckets_walked(
    c: &mut dyn Conn,
    scope: &Scope,
    range: (Micros, Micros),
    width: Micros,
    slice: Slice,
) -> Result<(i64, Vec<Bucket>)> {
    let Slice { dir, offset, limit } = slice;
    let base = base_width(width);
    let (filter, params) = candles_where(scope, base, range, 1);
    // A derived width's buckets are the distinct (outcome, bucket) pairs of its base candles.
    let keys_sql = format!("SELECT DISTINCT outcome_id, start - start % {width} AS b FROM price_candles WHERE {filter}");
    let count_sql = if width == base {
        format!("SELECT count(*) FROM price_candles WHERE {filter}")
    } else {
        format!("SELECT count(*) FROM ({keys_sql}) AS buckets")
    };
    let d = dir.as_sql();
    let mut page_params = params.clone();
    page_params.push(Param::Int(limit));
    page_params.push(Param::Int(offset));
    let n = page_params.len();
    let page_sql = |sql: &str, order: &str| format!("{sql} ORDER BY {order} LIMIT ${} OFFSET ${n}", n - 1);
    if width == base && limit > 0 {
        // The count rides on the page's statement; a page past the end counts alone below.
        // On PostgreSQL the page starts at the key found `offset` entries in by an index-only
        // walk: an OFFSET over whole rows reads every row it skips.
        let order = format!("start {d}, outcome_id {d}");
        let sql = if seeks_to_offset(c) {
            // The count, too, walks on from that key (and adds the offset) rather than from the
            // first candle: the two walks together pass each candle once instead of the ones
            // before the page twice.
            let from_key = dir.at_or_past_sql();
            format!(
                "WITH page_key AS (SELECT start AS key_start, outcome_id AS key_outcome FROM price_candles WHERE {filter} ORDER BY {order} LIMIT 1 OFFSET ${n}) \
                 SELECT outcome_id, start, price, cum_before, cum_after, \
                 ${n} + (SELECT count(*) FROM price_candles, page_key WHERE {filter} AND (start, outcome_id) {from_key} (key_start, key_outcome)) \
                 FROM price_candles WHERE {filter} AND (start, outcome_id) {from_key} (SELECT key_start, key_outcome FROM page_key) ORDER BY {order} LIMIT ${}",
                n - 1
            )
        } else {
            page_sql(
                &format!("SELECT outcome_id, start, price, cum_before, cum_after, ({count_sql}) FROM price_candles WHERE {filter}"),
                &order,
            )
        };
        let rows = c.query(&sql, &page_params)?;
        if let Some(first) = rows.first() {
            let buckets = rows
                .iter()
                .map(|r| {
                    Ok(Bucket {
                        outcome_id: r.text(0)?,
                        start: r.int(1)?,
                        price: r.money(2)?,
                        volume: volume_between(r.money(3)?, r.money(4)?)?,
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            return Ok((first.int(5)?, buckets));
        }
    }
    let total = c.query_one(&count_sql, &params)?.int(0)?;
    if width == base || limit <= 0 || offset >= total {
        return Ok((total, Vec::new()));
    }
    let keys = c
        .query(&page_sql(&keys_sql, &format!("b {d}, outcome_id {d}")), &page_params)?
        .iter()
        .map(|r| Ok((r.text(0)?, r.int(1)?)))
        .collect::<Result<Vec<(String, Micros)>>>()?;
    let (Some(first), Some(last)) = (keys.iter().map(|k| k.1).min(), keys.iter().map(|k| k.1).max()) else {
        return Ok((total, Vec::new()));
    };
    // The candles under the page's buckets, oldest first: the first gives the total before
    // the bucket, the last its price and total after.
    let mut folded: HashMap<(String, Micros), Option<Folded>> = keys.iter().map(|k| (k.clone(), None)).collect();
    let (under, under_params) = candles_where(scope, base, (first, last.saturating_add(width)), 1);
    let rows = c.query(
        &format!("SELECT outcome_id, start, price, cum_before, cum_after FROM price_candles WHERE {under} ORDER BY start"),
        &under_params,
    )?;
    for r in &rows {
        let key = (r.text(0)?, bucket_start(r.int(1)?, width));
        let Some(entry) = folded.get_mut(&key) else { continue };
        let before = match entry {
            Some((before, _, _)) => *before,
            None => r.money(3)?,
        };
        *entry = Some((before, r.money(2)?, r.money(4)?));
    }
    let buckets = keys
        .into_iter()
        .map(|key| {
            let (before, price, after) = folded[&key].ok_or_else(|| Error::internal("bucket without candles"))?;
            Ok(Bucket { outcome_id: key.0, start: key.1, price, volume: volume_between(before, after)? })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((total, buckets))
}

/// Buckets: the last price in each (outcome, interval) and the summed volume; empty buckets
/// do not appear. Whole buckets come from candles, the partial ones at the ends of a date
/// filter from the raw points, so a page costs a few index reads whatever the history's size.
pub(super) fn bucketed(
    c: &mut dyn Conn,
    scope: &Scope,
    q: &PriceQuery,
    width: Micros,
    keys: Option<&CandleKeys>,
) -> Result<Page<PricePoint>> {
    let parts = split(q.from, q.to, width);
    let mut ends = partial_buckets(c, scope, [parts.partial_lo, parts.partial_hi], width)?;
    if q.direction == Direction::Desc {
        ends.reverse();
        ends.iter_mut().for_each(|e| e.reverse());
    }
    let [head, tail] = ends;
    let PageRequest { page, per_page } = q.page;
    let offset = (page - 1) * per_page;
    let mut data: Vec<Bucket> = Vec::new();
    let head_len = head.len() as i64;
    data.extend(head.into_iter().skip(offset as usize).take(per_page as usize));
    let whole_offset = (offset - head_len).max(0);
    let (whole_total, whole) = match parts.whole {
        Some(range) => {
            let slice = Slice { dir: q.direction, offset: whole_offset, limit: per_page - data.len() as i64 };
            whole_buckets(c, scope, range, width, slice, keys)?
        }
        None => (0, Vec::new()),
    };
    data.extend(whole);
    let tail_offset = (offset - head_len - whole_total).max(0);
    let tail_len = tail.len() as i64;
    data.extend(tail.into_iter().skip(tail_offset as usize).take(per_page as usize - data.len()));
    let data = data.iter().map(|b| price_point(&scope.market_id, &b.outcome_id, b.price, b.volume, b.start)).collect();
    Ok(Page::new(data, q.page, head_len + whole_total + tail_len))
}
