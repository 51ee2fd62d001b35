//! Read models: a wallet's holdings, the public trade records and price history.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};


use super::markets;
use super::positions::POSITION_COLUMNS;
use crate::domain::market::Market;
use crate::domain::position::{Holding, Position};
use super::sql::{query_as, value_rows, Conn, Param};
use crate::domain::candle::PricePoint;
use crate::domain::ids::{MarketId, OutcomeId, TradeId, WalletId};
use crate::domain::money::Wei;
use crate::domain::trade::{TradeKind, TradeRecord};
use crate::domain::page::{Direction, Page, PageRequest, Sort};
use crate::domain::candle::{base_width, bucket_start, Candle, CANDLE_WIDTHS, HOUR, MINUTE};
use crate::domain::time::{Micros, Timestamp};
use crate::error::{Error, Result};

#[derive(Debug, Clone, Default)]
pub struct HoldingsQuery {
    pub wallet_id: String,
    pub market_id: Option<String>,
    pub outcome_id: Option<String>,
    pub status: Option<String>,
    pub page: PageRequest,
    pub sort: Sort,
}

/// Markets of the positions valued so far: the market, its prices and payout terms.
type Seen = HashMap<MarketId, (Market, Vec<lmsr::Price>, (u128, u128))>;

fn value_position(c: &mut dyn Conn, p: Position, markets_seen: &mut Seen) -> Result<Holding> {
    if !markets_seen.contains_key(&p.market_id) {
        let m = markets::market(c, &p.market_id, false)?.ok_or_else(|| Error::internal("position without market"))?;
        let prices = m.prices()?;
        let terms = if m.is_settled() { markets::payout_terms(c, &m.id)? } else { (1, 1) };
        markets_seen.insert(p.market_id.clone(), (m, prices, terms));
    }
    let (m, prices, terms) = &markets_seen[&p.market_id];
    let index = m.outcomes.iter().position(|o| o.id == p.outcome_id).unwrap_or(0);
    Ok(Holding::value(p, prices[index], *terms))
}

/// Every position of a wallet, valued, oldest first (the user stream's snapshot).
pub fn wallet_holdings(c: &mut dyn Conn, wallet_id: &str) -> Result<Vec<Holding>> {
    let sql = format!("SELECT {POSITION_COLUMNS} FROM positions WHERE wallet_id = $1 ORDER BY created_at, id");
    let positions: Vec<Position> = query_as(c, &sql, &[Param::Text(wallet_id)])?;
    let mut seen = HashMap::new();
    positions.into_iter().map(|p| value_position(c, p, &mut seen)).collect()
}

/// Only the caller's positions. Values depend on live prices, so sorting happens here.
pub fn holdings(c: &mut dyn Conn, q: &HoldingsQuery) -> Result<Page<Holding>> {
    let mut clauses = vec!["wallet_id = $1".to_string()];
    let mut params: Vec<Param<'_>> = vec![Param::Text(&q.wallet_id)];
    for (column, value) in [("market_id", &q.market_id), ("outcome_id", &q.outcome_id), ("status", &q.status)] {
        if let Some(v) = value {
            params.push(Param::Text(v));
            clauses.push(format!("{column} = ${}", params.len()));
        }
    }
    let sql = format!("SELECT {POSITION_COLUMNS} FROM positions WHERE {}", clauses.join(" AND "));
    let positions: Vec<Position> = query_as(c, &sql, &params)?;
    let mut seen = HashMap::new();
    let mut valued = positions.into_iter().map(|p| value_position(c, p, &mut seen)).collect::<Result<Vec<_>>>()?;
    valued.sort_by(|pa, pb| {
        let key = match q.sort.field.as_str() {
            "current_value" => pa.current_value.cmp(&pb.current_value),
            "shares" => pa.shares.cmp(&pb.shares),
            "total_invested" => pa.total_invested.cmp(&pb.total_invested),
            "updated_at" => pa.updated_at.cmp(&pb.updated_at),
            _ => pa.created_at.cmp(&pb.created_at),
        }
        .then_with(|| pa.id.cmp(&pb.id));
        if q.sort.direction == Direction::Desc { key.reverse() } else { key }
    });
    let total = valued.len() as i64;
    let start = ((q.page.page - 1) * q.page.per_page) as usize;
    let data = valued.into_iter().skip(start).take(q.page.per_page as usize).collect();
    Ok(Page::new(data, q.page, total))
}

#[derive(Debug, Clone)]
pub struct TradeQuery {
    pub market_id: Option<String>,
    pub outcome_id: Option<String>,
    pub wallet_address: Option<String>,
    pub transaction_type: Option<String>,
    pub from: Option<Micros>,
    pub to: Option<Micros>,
    pub page: PageRequest,
    pub sort: Sort,
}

pub fn trades(c: &mut dyn Conn, q: &TradeQuery) -> Result<Page<TradeRecord>> {
    let mut clauses: Vec<String> = Vec::new();
    let mut params: Vec<Param<'_>> = Vec::new();
    for (column, value) in [
        ("market_id", &q.market_id),
        ("outcome_id", &q.outcome_id),
        ("wallet_address", &q.wallet_address),
        ("transaction_type", &q.transaction_type),
    ] {
        if let Some(v) = value {
            params.push(Param::Text(v));
            clauses.push(format!("{column} = ${}", params.len()));
        }
    }
    if let Some(from) = q.from {
        params.push(Param::Int(from));
        clauses.push(format!("created_at >= ${}", params.len()));
    }
    if let Some(to) = q.to {
        params.push(Param::Int(to));
        clauses.push(format!("created_at <= ${}", params.len()));
    }
    let where_sql = if clauses.is_empty() { String::new() } else { format!("WHERE {}", clauses.join(" AND ")) };
    let total = c.query_one(&format!("SELECT count(*) FROM trades {where_sql}"), &params)?.int(0)?;
    let dir = q.sort.direction.as_sql();
    let order = match q.sort.field.as_str() {
        "amount" => format!("{}, seq {dir}", c.dialect().money_order("amount", dir)),
        "shares" => format!("{}, seq {dir}", c.dialect().money_order("shares", dir)),
        _ => format!("created_at {dir}, seq {dir}"),
    };
    params.push(Param::Int(q.page.per_page));
    params.push(Param::Int((q.page.page - 1) * q.page.per_page));
    let n = params.len();
    let sql = format!(
        "SELECT id, market_id, outcome_id, wallet_id, wallet_address, transaction_type, amount, shares, price, fee, net_amount, created_at \
         FROM trades {where_sql} ORDER BY {order} LIMIT ${} OFFSET ${n}",
        n - 1
    );
    let data = c
        .query(&sql, &params)?
        .iter()
        .map(|r| {
            let kind = r.text(5)?;
            Ok(TradeRecord {
                id: TradeId(r.text(0)?),
                market_id: MarketId(r.text(1)?),
                outcome_id: OutcomeId(r.text(2)?),
                wallet_id: WalletId(r.text(3)?),
                wallet_address: r.text(4)?,
                transaction_type: TradeKind::parse(&kind).ok_or_else(|| Error::internal(format!("unknown trade type {kind:?}")))?,
                amount: Wei(r.money(6)?),
                shares: Wei(r.money(7)?),
                price: r.text(8)?,
                fee: Wei(r.money(9)?),
                net_amount: Wei(r.money(10)?),
                created_at: Timestamp(r.int(11)?),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Page::new(data, q.page, total))
}

/// A price point's running volume total (written with every point since migration 5).
fn running_total(r: &super::sql::Row, i: usize) -> Result<u128> {
    r.opt_money(i)?.ok_or_else(|| Error::internal("price point without a running volume total"))
}

fn price_point(market_id: &str, outcome_id: &str, price: u128, volume: u128, at: Micros) -> PricePoint {
    PricePoint {
        market_id: market_id.to_string(),
        outcome_id: outcome_id.to_string(),
        price: lmsr::Price::from_raw(price).to_string(),
        volume: Wei(volume),
        timestamp: Timestamp(at),
    }
}

#[derive(Debug, Clone)]
pub struct PriceQuery {
    pub market_id: Option<String>,
    pub outcome_id: Option<String>,
    pub from: Option<Micros>,
    pub to: Option<Micros>,
    /// Bucket width in microseconds (a multiple of a minute); None for raw points.
    pub interval: Option<Micros>,
    pub page: PageRequest,
    pub direction: Direction,
}

/// One outcome's new price point, as a trade writes it.
pub struct NewPricePoint<'a> {
    pub outcome_id: &'a str,
    pub price: u128,
    pub volume: u128,
    /// The outcome's running volume total before this point.
    pub total_before: u128,
}

/// Writes a trade's price points and folds them into the candles, in the trade's transaction.
pub fn record_prices(c: &mut dyn Conn, market_id: &str, points: &[NewPricePoint<'_>], at: Micros) -> Result<()> {
    let candles = insert_price_points(c, market_id, points, at)?;
    upsert_candles(c, market_id, &candles)
}

/// Inserts a trade's price points; returns the candle rows they make, to upsert.
pub fn insert_price_points(c: &mut dyn Conn, market_id: &str, points: &[NewPricePoint<'_>], at: Micros) -> Result<Vec<Candle>> {
    let totals_after =
        points.iter().map(|p| p.total_before.checked_add(p.volume).ok_or_else(|| Error::internal("volume total overflow"))).collect::<Result<Vec<_>>>()?;
    let mut params: Vec<Param<'_>> = Vec::with_capacity(points.len() * 6);
    for (p, after) in points.iter().zip(&totals_after) {
        params.extend([Param::Text(market_id), Param::Text(p.outcome_id), Param::Money(p.price), Param::Money(p.volume), Param::Money(*after), Param::Int(at)]);
    }
    let sql = format!("INSERT INTO price_points (market_id, outcome_id, price, volume, cum_volume, at) VALUES {}", value_rows(points.len(), 6));
    c.exec_later(&sql, &params)?;
    let mut candles = Vec::with_capacity(points.len() * CANDLE_WIDTHS.len());
    for width in CANDLE_WIDTHS {
        for (p, after) in points.iter().zip(&totals_after) {
            candles.push(Candle {
                width,
                start: bucket_start(at, width),
                outcome_id: p.outcome_id.to_string(),
                price: p.price,
                cum_after: *after,
                cum_before: p.total_before,
                points: 1,
            });
        }
    }
    Ok(candles)
}

/// Points of one market arrive in time order (trades lock the market and never move its
/// clock backwards), so the newest rows are the candles' last.
pub fn upsert_candles(c: &mut dyn Conn, market_id: &str, candles: &[Candle]) -> Result<()> {
    upsert_candles_of(c, &[(market_id, candles)])
}

/// [`upsert_candles`] for several markets in one statement (no two rows of one candle).
pub fn upsert_candles_of(c: &mut dyn Conn, markets: &[(&str, &[Candle])]) -> Result<()> {
    let count: usize = markets.iter().map(|(_, candles)| candles.len()).sum();
    if count == 0 {
        return Ok(());
    }
    let mut params: Vec<Param<'_>> = Vec::with_capacity(count * 8);
    for (market_id, candle) in markets.iter().flat_map(|(m, candles)| candles.iter().map(move |candle| (*m, candle))) {
        params.extend([
            Param::Text(market_id),
            Param::Int(candle.width),
            Param::Int(candle.start),
            Param::Text(&candle.outcome_id),
            Param::Money(candle.price),
            Param::Money(candle.cum_before),
            Param::Money(candle.cum_after),
            Param::Int(candle.points),
        ]);
    }
    let sql = format!(
        "INSERT INTO price_candles (market_id, width, start, outcome_id, price, cum_before, cum_after, points) VALUES {} \
         ON CONFLICT (market_id, width, start, outcome_id) DO UPDATE \
         SET price = excluded.price, cum_after = excluded.cum_after, points = price_candles.points + excluded.points",
        value_rows(count, 8)
    );
    c.exec_later(&sql, &params)?;
    Ok(())
}

/// Rebuilds every candle from the raw points (after a bulk load of price points).
pub fn rebuild_price_candles(c: &mut dyn Conn) -> Result<()> {
    if c.dialect() == super::sql::Dialect::Postgres {
        // A rebuild reads every point; the per-statement limit is meant for requests.
        c.exec("SET LOCAL statement_timeout = 0", &[])?;
    }
    c.exec("DELETE FROM price_candles", &[])?;
    c.exec(include_str!("../../migrations/price_candles_backfill.sql"), &[])?;
    Ok(())
}

/// The market a history query covers, and the outcome when the query names one.
struct Scope {
    market_id: String,
    outcome_id: Option<String>,
}

fn scope(c: &mut dyn Conn, q: &PriceQuery, keys: Option<&CandleKeys>) -> Result<Option<Scope>> {
    if let Some(outcome) = &q.outcome_id {
        let market_id = match keys.and_then(|k| k.market_of(outcome)) {
            Some(market_id) => market_id,
            None => {
                let Some(row) = c.query_opt("SELECT market_id FROM outcomes WHERE id = $1", &[Param::Text(outcome)])? else {
                    return Ok(None);
                };
                let market_id = row.text(0)?;
                if let Some(k) = keys {
                    k.keep_market_of(outcome, &market_id);
                }
                market_id
            }
        };
        if q.market_id.as_ref().is_some_and(|m| *m != market_id) {
            return Ok(None);
        }
        return Ok(Some(Scope { market_id, outcome_id: Some(outcome.clone()) }));
    }
    // A market that does not exist has no candles and no points: its pages are empty.
    Ok(q.market_id.clone().map(|market_id| Scope { market_id, outcome_id: None }))
}

/// A time filter cut at `width` boundaries: whole buckets in `[whole.0, whole.1)` (read from
/// candles) and up to two partial buckets at the ends (inclusive ranges, read from raw points).
struct Split {
    partial_lo: Option<(Micros, Micros)>,
    whole: Option<(Micros, Micros)>,
    partial_hi: Option<(Micros, Micros)>,
}

fn split(from: Option<Micros>, to: Option<Micros>, width: Micros) -> Split {
    let lo = from.unwrap_or(Micros::MIN);
    let hi = to.unwrap_or(Micros::MAX);
    if lo > hi {
        return Split { partial_lo: None, whole: None, partial_hi: None };
    }
    let whole_from = match from {
        Some(f) if f.rem_euclid(width) != 0 => bucket_start(f, width).saturating_add(width),
        _ => lo,
    };
    let whole_to = match to.and_then(|t| t.checked_add(1)) {
        Some(end) => bucket_start(end, width),
        None => Micros::MAX,
    };
    if whole_from > whole_to {
        // Both ends fall in one bucket.
        return Split { partial_lo: Some((lo, hi)), whole: None, partial_hi: None };
    }
    Split {
        partial_lo: (lo < whole_from).then(|| (lo, whole_from - 1)),
        whole: (whole_from < whole_to).then_some((whole_from, whole_to)),
        partial_hi: (to.is_some() && whole_to <= hi).then_some((whole_to, hi)),
    }
}

/// Where clause over the candles of a scope of `width` in `range`, its parameters numbered
/// from `$first`, and those parameters: market, the range's bounds, and the outcome when the
/// scope names one. An open end (`Micros::MIN` or `Micros::MAX`) is left out: it matches
/// every candle, yet PostgreSQL still checked it on every index entry it walked (the hourly
/// page over a whole history took 0.75 ms against 0.89 ms with both bounds). The width, one
/// of two, is written into the statement: planned without its values (`price_history`), a
/// width parameter was taken to match half the candles, and their count read the whole
/// table (10 ms against 0.2 ms over a month of hourly candles).
fn candles_where<'a>(scope: &'a Scope, width: Micros, range: (Micros, Micros), first: usize) -> (String, Vec<Param<'a>>) {
    let mut params = vec![Param::Text(&scope.market_id)];
    let mut terms = vec![format!("market_id = ${first}"), format!("width = {width}")];
    for (bound, op, open) in [(range.0, ">=", Micros::MIN), (range.1, "<", Micros::MAX)] {
        if bound != open {
            params.push(Param::Int(bound));
            terms.push(format!("start {op} ${}", first + params.len() - 1));
        }
    }
    if let Some(outcome) = &scope.outcome_id {
        params.push(Param::Text(outcome));
        terms.push(format!("outcome_id = ${}", first + params.len() - 1));
    }
    (terms.join(" AND "), params)
}

struct Bucket {
    outcome_id: String,
    start: Micros,
    price: u128,
    volume: u128,
}

fn volume_between(before: u128, after: u128) -> Result<u128> {
    after.checked_sub(before).ok_or_else(|| Error::internal("running volume total decreased"))
}

/// The partial buckets at both ends of a date filter (`ranges`: inclusive, each inside one
/// bucket), in one statement: per outcome of the scope, ordered by id (the tie-break of
/// buckets that share a start), the last price in the range, and the volume as the difference
/// of running totals. An outcome without points in a range has no bucket there.
fn partial_buckets(c: &mut dyn Conn, scope: &Scope, ranges: [Option<(Micros, Micros)>; 2], width: Micros) -> Result<[Vec<Bucket>; 2]> {
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
        out[part].push(Bucket { outcome_id: r.text(1)?, start: bucket_start(range.0, width), price, volume: volume_between(before, running_total(r, 3)?)? });
    }
    Ok(out)
}

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
    kept: Mutex<KeptCandleKeys>,
}

#[derive(Default)]
struct KeptCandleKeys {
    markets: HashMap<String, Arc<MarketCandleKeys>>,
    keys: usize,
    /// Markets with more than `MARKET_CANDLE_KEYS` keys: their pages walk, and their keys
    /// are not read again.
    too_many: std::collections::HashSet<String>,
    /// Each outcome's market, by outcome id.
    markets_of_outcomes: HashMap<String, String>,
    /// The minute candles of settled hours, by market and hour.
    hours: HashMap<(String, Micros), Arc<HourMinutes>>,
    /// Minute candles in `hours`.
    minutes: usize,
}

/// The point counts of one settled hour's minute candles: an hour before the market's last
/// candle's, which no point can join any more (points arrive in time order). A raw page over
/// a date range counted the whole minutes of its partial hours at both ends from these
/// candles (up to 118 rows each, 0.2 ms), and its walk to its offset passed up to an hour of
/// points (0.5 ms for 700): kept, both are counted here.
struct HourMinutes {
    /// The outcomes that have candles in the hour, in id order; `minutes` name them by index.
    outcomes: Vec<String>,
    /// `(start, outcome, points)` in (start, outcome id) order.
    minutes: Vec<(Micros, u32, i64)>,
}

impl HourMinutes {
    /// The scope's minute candles: all of them, or its outcome's.
    fn in_scope<'m>(&'m self, scope: &Scope) -> impl Iterator<Item = &'m (Micros, u32, i64)> + 'm {
        let outcome = scope.outcome_id.as_ref().map(|id| self.outcomes.binary_search(id).ok().map(|i| i as u32));
        self.minutes.iter().filter(move |m| outcome.is_none_or(|o| o == Some(m.1)))
    }

    /// The scope's points in the minutes that start in `range` (half open).
    fn points(&self, scope: &Scope, range: (Micros, Micros)) -> i64 {
        self.in_scope(scope).filter(|m| m.0 >= range.0 && m.0 < range.1).map(|m| m.2).sum()
    }

    /// The minute holding the scope's point `skip` (from 0) of the hour in the page's order,
    /// and the points before that minute.
    fn minute_of(&self, scope: &Scope, desc: bool, skip: i64) -> Option<(Micros, i64)> {
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
struct MarketCandleKeys {
    /// The outcomes that have candles, in id order; `keys` name them by index.
    outcomes: Vec<String>,
    /// In (start, outcome id) order.
    keys: Vec<(Micros, u32)>,
    /// Each key's candle's points. Those of the last hour can still grow; the ones before
    /// cannot, as no point arrives before the market's last.
    points: Vec<i64>,
    /// Each key's candle's last price and volume, for the hours before the last: those
    /// candles can no longer change.
    buckets: Vec<(u128, u128)>,
}

impl MarketCandleKeys {
    /// Whether these are the keys of a market whose last candle is `(last_start, last_outcome)`.
    fn end_at(&self, last_start: Option<Micros>, last_outcome: Option<&str>) -> bool {
        match self.keys.last() {
            Some(&(start, outcome)) => last_start == Some(start) && last_outcome == Some(self.outcomes[outcome as usize].as_str()),
            None => last_start.is_none() && last_outcome.is_none(),
        }
    }

    /// Whether `hour` is before the last hour of these keys: no point can join it any more.
    fn is_settled(&self, hour: Micros) -> bool {
        self.keys.last().is_some_and(|&(last, _)| hour < last)
    }

    /// The index of the scope's outcome, if it names one: None inside where it has no candles.
    fn outcome_index(&self, scope: &Scope) -> Option<Option<u32>> {
        scope.outcome_id.as_ref().map(|id| self.outcomes.binary_search(id).ok().map(|i| i as u32))
    }

    /// The indexes of the scope's keys whose start is in `range` (half open).
    fn in_scope(&self, scope: &Scope, range: (Micros, Micros)) -> impl Iterator<Item = usize> + '_ {
        let outcome = self.outcome_index(scope);
        let (lo, hi) = (self.keys.partition_point(|k| k.0 < range.0), self.keys.partition_point(|k| k.0 < range.1));
        (lo..hi).filter(move |&i| outcome.is_none_or(|o| o == Some(self.keys[i].1)))
    }

    /// The scope's points in the candles of `range` that can no longer grow, and the start
    /// of the hour whose candles still can (the last one's).
    fn settled_points(&self, scope: &Scope, range: (Micros, Micros)) -> (i64, Micros) {
        let open_from = self.keys.last().map_or(Micros::MIN, |k| k.0);
        (self.in_scope(scope, (range.0, range.1.min(open_from))).map(|i| self.points[i]).sum(), open_from)
    }
}

/// Columns that read a market's last hourly candle key, its id being parameter `$market`.
fn last_candle_columns(market: usize) -> String {
    let last = |column: &str| format!("(SELECT {column} FROM price_candles WHERE market_id = ${market} AND width = {HOUR} ORDER BY start DESC, outcome_id DESC LIMIT 1)");
    format!("{} AS last_start, {} AS last_outcome", last("start"), last("outcome_id"))
}

/// Bounds the memory kept keys take: some 56 bytes each with their candle's price, volume and
/// points, so about 28 MiB, or a month of hourly candles of two outcomes for 350 markets.
const KEPT_CANDLE_KEYS: usize = 1 << 19;

/// The most keys kept for one market (3.7 years of two outcomes), so that reading them stays
/// cheap.
const MARKET_CANDLE_KEYS: usize = 1 << 16;

/// The most outcomes whose market is kept: some 150 bytes each, about 10 MiB.
const KEPT_OUTCOMES: usize = 1 << 16;

/// The most minute candles of settled hours kept: 16 bytes each, some 16 MiB, or a month of
/// two outcomes for 12 markets.
const KEPT_MINUTE_CANDLES: usize = 1 << 20;

impl CandleKeys {
    fn get(&self, market_id: &str) -> Option<Arc<MarketCandleKeys>> {
        self.kept.lock().ok()?.markets.get(market_id).cloned()
    }

    fn market_of(&self, outcome_id: &str) -> Option<String> {
        self.kept.lock().ok()?.markets_of_outcomes.get(outcome_id).cloned()
    }

    fn keep_market_of(&self, outcome_id: &str, market_id: &str) {
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
    fn settled_hours(&self, c: &mut dyn Conn, market_id: &str, hours: &[Micros]) -> Result<Vec<(Micros, Arc<HourMinutes>)>> {
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
        let last = format!("(SELECT start FROM price_candles WHERE market_id = $1 AND width = {HOUR} ORDER BY start DESC, outcome_id DESC LIMIT 1)");
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
    fn refresh(&self, c: &mut dyn Conn, market_id: &str) -> Result<()> {
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
            .map(|(start, outcome)| outcomes.binary_search(&outcome).map(|i| (start, i as u32)).map_err(|_| Error::internal("candle outcome not kept")))
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

/// An hourly page found through kept keys: its count and first key from them, its rows and
/// the market's last candle from the statement. None when the keys no longer end at the
/// market's last candle.
fn hourly_page_by_keys(c: &mut dyn Conn, scope: &Scope, kept: &MarketCandleKeys, range: (Micros, Micros), dir: Direction, offset: i64, limit: i64) -> Result<Option<(i64, Vec<Bucket>)>> {
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
        .map(|r| Ok(Bucket { outcome_id: r.text(2)?, start: r.int(3)?, price: r.money(4)?, volume: volume_between(r.money(5)?, r.money(6)?)? }))
        .collect::<Result<Vec<_>>>()?;
    Ok(Some((total, buckets)))
}

/// Whole buckets of `width` from the candles of its base width: how many there are, and
/// `limit` of them from `offset` in the page's order.
fn whole_buckets(c: &mut dyn Conn, scope: &Scope, range: (Micros, Micros), width: Micros, dir: Direction, offset: i64, limit: i64, keys: Option<&CandleKeys>) -> Result<(i64, Vec<Bucket>)> {
    let keys = keys.filter(|_| width == HOUR && limit > 0 && seeks_to_offset(c));
    if let Some(kept) = keys.and_then(|k| k.get(&scope.market_id)) {
        if let Some(page) = hourly_page_by_keys(c, scope, &kept, range, dir, offset, limit)? {
            return Ok(page);
        }
    }
    let page = whole_buckets_walked(c, scope, range, width, dir, offset, limit)?;
    if let Some(keys) = keys {
        keys.refresh(c, &scope.market_id)?;
    }
    Ok(page)
}

/// [`whole_buckets`] through the candles' index alone.
fn whole_buckets_walked(c: &mut dyn Conn, scope: &Scope, range: (Micros, Micros), width: Micros, dir: Direction, offset: i64, limit: i64) -> Result<(i64, Vec<Bucket>)> {
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
        // walk: an OFFSET over whole rows reads every row it skips (EXPLAIN ANALYZE, 1,300
        // hourly candles skipped: 1,469 buffers and 1.6 ms against 173 buffers and 1.0 ms).
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
            page_sql(&format!("SELECT outcome_id, start, price, cum_before, cum_after, ({count_sql}) FROM price_candles WHERE {filter}"), &order)
        };
        let rows = c.query(&sql, &page_params)?;
        if let Some(first) = rows.first() {
            let buckets = rows
                .iter()
                .map(|r| Ok(Bucket { outcome_id: r.text(0)?, start: r.int(1)?, price: r.money(2)?, volume: volume_between(r.money(3)?, r.money(4)?)? }))
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
    let mut folded: HashMap<(String, Micros), Option<(u128, u128, u128)>> = keys.iter().map(|k| (k.clone(), None)).collect();
    let (under, under_params) = candles_where(scope, base, (first, last.saturating_add(width)), 1);
    let rows = c.query(&format!("SELECT outcome_id, start, price, cum_before, cum_after FROM price_candles WHERE {under} ORDER BY start"), &under_params)?;
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
fn bucketed(c: &mut dyn Conn, scope: &Scope, q: &PriceQuery, width: Micros, keys: Option<&CandleKeys>) -> Result<Page<PricePoint>> {
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
        Some(range) => whole_buckets(c, scope, range, width, q.direction, whole_offset, per_page - data.len() as i64, keys)?,
        None => (0, Vec::new()),
    };
    data.extend(whole);
    let tail_offset = (offset - head_len - whole_total).max(0);
    let tail_len = tail.len() as i64;
    data.extend(tail.into_iter().skip(tail_offset as usize).take(per_page as usize - data.len()));
    let data = data.iter().map(|b| price_point(&scope.market_id, &b.outcome_id, b.price, b.volume, b.start)).collect();
    Ok(Page::new(data, q.page, head_len + whole_total + tail_len))
}

/// The terms whose sum is the number of raw points in `[from, to]` of the scope, appending
/// their parameters to `params`, whose `$1` is the scope's key (`column`). `widths` are
/// candle widths, narrowest first: the widest takes the whole buckets (the hourly candles'
/// point counts), the narrower ones the whole buckets inside the partial ones at the ends,
/// and only what is left there (partial minutes) is counted point by point.
/// With `kept` hourly candle keys, the hours before the last are counted from them (the
/// outcome's month of hours took 0.6 ms of the 0.72 ms of its raw page).
fn raw_total_terms<'a>(scope: &'a Scope, from: Option<Micros>, to: Option<Micros>, widths: &[Micros], column: &str, kept: Option<&Kept<'_>>, params: &mut Vec<Param<'a>>) -> Vec<String> {
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
struct Kept<'k> {
    hours: &'k MarketCandleKeys,
    settled: &'k [(Micros, Arc<HourMinutes>)],
}

impl Kept<'_> {
    fn minutes_of(&self, hour: Micros) -> Option<&HourMinutes> {
        minutes_of(self.settled, hour)
    }
}

fn minutes_of(settled: &[(Micros, Arc<HourMinutes>)], hour: Micros) -> Option<&HourMinutes> {
    settled.iter().find(|(h, _)| *h == hour).map(|(_, m)| &**m)
}

/// Offsets below this are walked point by point: a seek costs a statement of its own.
const RAW_SEEK_FROM: i64 = 100;

/// Whether pages seek to their offset (by key, or through the candles' point counts) rather
/// than walk to it. Only PostgreSQL does: SQLite walks an index in process, and on the bench's
/// million points its walks were the faster by far (an hourly page at offset 1,300: 0.17 ms
/// walked, 0.66 ms by key; a raw page at offset 3,900: 0.36 ms walked, 2.95 ms through the
/// candles, whose windowed sums SQLite computes for every hour and sorts).
fn seeks_to_offset(c: &dyn Conn) -> bool {
    c.dialect() == super::sql::Dialect::Postgres
}

/// The hour holding a raw page's first point, found through the hourly candles' point counts
/// instead of a walk over every point before it.
struct SeekHour {
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
fn seek_hour(c: &mut dyn Conn, scope: &Scope, q: &PriceQuery, column: &str, key: &str, offset: i64) -> Result<Option<SeekHour>> {
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
    let last = format!("(SELECT start FROM price_candles WHERE market_id = ${} AND width = {HOUR} ORDER BY start DESC, outcome_id DESC LIMIT 1)", params.len());
    let d = q.direction.as_sql();
    // Per candle, in the page's order: the points of its bucket (every outcome's candle of
    // that start) and of every bucket up to it. A GROUP BY start was planned as a forward walk
    // and a sort of every bucket (1.1 ms for 721 hours); these windows follow the index in
    // either direction and stop at the bucket found (0.16 ms).
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
fn raw(c: &mut dyn Conn, scope: &Scope, q: &PriceQuery, keys: Option<&CandleKeys>) -> Result<Page<PricePoint>> {
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
        hours.extend([parts.partial_lo, parts.partial_hi].into_iter().flatten().map(|(lo, _)| bucket_start(lo, HOUR)).filter(|&h| kept.is_settled(h)));
    }
    hours.extend(seek.as_ref().filter(|s| s.is_settled()).map(|s| s.start));
    let settled = match keys {
        Some(keys) if !hours.is_empty() => keys.settled_hours(c, &scope.market_id, &hours)?,
        _ => Vec::new(),
    };
    let (from, to, offset) = match seek {
        None => (q.from, q.to, offset),
        Some(seek) => {
            let minute = minutes_of(&settled, seek.start).filter(|_| seek.is_settled()).and_then(|m| m.minute_of(scope, q.direction == Direction::Desc, offset - seek.before));
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
        // lie together in the table as they were written together (EXPLAIN ANALYZE, 700 points
        // skipped and 60 read: 16 buffers and 0.26 ms against 199 and 0.56 ms looking each
        // row up by `seq`).
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

/// A page of price history; `keys` are the hourly candle keys kept between pages, if any.
/// Its statements are planned once per connection: each is an index walk whatever its values
/// (`tests/api_postgres/plans.rs`), and PostgreSQL spent a quarter of its time in this mix
/// planning them afresh for each page.
pub fn price_history(c: &mut dyn Conn, q: &PriceQuery, keys: Option<&CandleKeys>) -> Result<Page<PricePoint>> {
    c.plan_once()?;
    let Some(scope) = scope(c, q, keys)? else { return Ok(Page::new(Vec::new(), q.page, 0)) };
    match q.interval {
        Some(width) => bucketed(c, &scope, q, width, keys),
        None => raw(c, &scope, q, keys),
    }
}
