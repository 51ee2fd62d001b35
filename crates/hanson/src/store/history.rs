//! Read models: a wallet's holdings, the public trade records and price history.

use std::collections::HashMap;

use serde_json::{json, Value};

use super::markets::{self, MarketRecord};
use super::sql::{Conn, Param};
use super::trading::{self, position_from_row, Position, POSITION_COLUMNS};
use crate::domain::money::{SignedWei, Wei};
use crate::domain::num::{mul_div, ratio_decimal, Rounding};
use crate::domain::page::{Direction, Page, PageRequest, Sort};
use crate::domain::time::{format_micros, Micros};
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

/// A position valued at the market's current state (or its settlement).
struct Valued {
    position: Position,
    price: String,
    value: u128,
}

fn value_position(c: &mut dyn Conn, p: Position, markets_seen: &mut HashMap<String, (MarketRecord, Vec<lmsr::Price>, (u128, u128))>) -> Result<Valued> {
    if !markets_seen.contains_key(&p.market_id) {
        let m = markets::market(c, &p.market_id, false)?.ok_or_else(|| Error::internal("position without market"))?;
        let prices = m.prices()?;
        let terms = if m.is_settled() { trading::payout_terms(c, &m.id)? } else { (1, 1) };
        markets_seen.insert(p.market_id.clone(), (m, prices, terms));
    }
    let (m, prices, (num, den)) = &markets_seen[&p.market_id];
    let index = m.outcomes.iter().position(|o| o.id == p.outcome_id).unwrap_or(0);
    let (price, value) = match p.status.as_str() {
        "won" => (ratio_decimal(*num, *den), mul_div(p.shares, *num, *den, Rounding::Down).unwrap_or(0)),
        "lost" | "refunded" => (ratio_decimal(0, 1), 0),
        "claimed" => (ratio_decimal(*num, *den), 0),
        _ => {
            let price = prices[index];
            (price.to_string(), mul_div(p.shares, price.raw(), lmsr::PRICE_SCALE, Rounding::Down).unwrap_or(0))
        }
    };
    Ok(Valued { position: p, price, value })
}

fn holding_json(v: &Valued) -> Value {
    let p = &v.position;
    json!({
        "id": p.id,
        "market_id": p.market_id,
        "outcome_id": p.outcome_id,
        "wallet_id": p.wallet_id,
        "shares": Wei(p.shares),
        "average_cost": if p.shares == 0 { ratio_decimal(0, 1) } else { ratio_decimal(p.total_invested, p.shares) },
        "total_invested": Wei(p.total_invested),
        "current_price": v.price,
        "current_value": Wei(v.value),
        "unrealized_pnl": SignedWei::difference(v.value, p.total_invested),
        "status": p.status,
        "position_type": "long",
        "is_claimable": p.status == "won",
        "claimed_amount": p.claimed_amount.map(Wei),
        "created_at": format_micros(p.created_at),
        "updated_at": format_micros(p.updated_at),
    })
}

/// Only the caller's positions. Values depend on live prices, so sorting happens here.
pub fn holdings(c: &mut dyn Conn, q: &HoldingsQuery) -> Result<Page<Value>> {
    let mut clauses = vec!["wallet_id = $1".to_string()];
    let mut params: Vec<Param<'_>> = vec![Param::Text(&q.wallet_id)];
    for (column, value) in [("market_id", &q.market_id), ("outcome_id", &q.outcome_id), ("status", &q.status)] {
        if let Some(v) = value {
            params.push(Param::Text(v));
            clauses.push(format!("{column} = ${}", params.len()));
        }
    }
    let sql = format!("SELECT {POSITION_COLUMNS} FROM positions WHERE {}", clauses.join(" AND "));
    let positions = c.query(&sql, &params)?.iter().map(position_from_row).collect::<Result<Vec<_>>>()?;
    let mut seen = HashMap::new();
    let mut valued = positions.into_iter().map(|p| value_position(c, p, &mut seen)).collect::<Result<Vec<_>>>()?;
    valued.sort_by(|a, b| {
        let (pa, pb) = (&a.position, &b.position);
        let key = match q.sort.field.as_str() {
            "current_value" => a.value.cmp(&b.value),
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
    let data = valued.iter().skip(start).take(q.page.per_page as usize).map(holding_json).collect();
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

pub fn trades(c: &mut dyn Conn, q: &TradeQuery) -> Result<Page<Value>> {
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
        "amount" => format!("{}, seq {dir}", c.money_order("amount", dir)),
        "shares" => format!("{}, seq {dir}", c.money_order("shares", dir)),
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
            Ok(json!({
                "id": r.text(0)?,
                "market_id": r.text(1)?,
                "outcome_id": r.text(2)?,
                "wallet_id": r.text(3)?,
                "wallet_address": r.text(4)?,
                "transaction_type": r.text(5)?,
                "amount": Wei(r.money(6)?),
                "shares": Wei(r.money(7)?),
                "price": r.text(8)?,
                "fee": Wei(r.money(9)?),
                "net_amount": Wei(r.money(10)?),
                "created_at": format_micros(r.int(11)?),
            }))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Page::new(data, q.page, total))
}

#[derive(Debug, Clone)]
pub struct PriceQuery {
    pub market_id: Option<String>,
    pub outcome_id: Option<String>,
    pub from: Option<Micros>,
    pub to: Option<Micros>,
    /// Bucket width in microseconds; None for raw points.
    pub interval: Option<Micros>,
    pub page: PageRequest,
    pub direction: Direction,
}

/// A price point's running volume total (written with every point since migration 5).
fn running_total(r: &super::sql::Row, i: usize) -> Result<u128> {
    r.opt_money(i)?.ok_or_else(|| Error::internal("price point without a running volume total"))
}

fn point_json(market_id: &str, outcome_id: &str, price: u128, volume: u128, at: Micros) -> Value {
    json!({
        "market_id": market_id,
        "outcome_id": outcome_id,
        "price": lmsr::Price::from_raw(price).to_string(),
        "volume": Wei(volume),
        "timestamp": format_micros(at),
    })
}

pub fn price_history(c: &mut dyn Conn, q: &PriceQuery) -> Result<Page<Value>> {
    let mut clauses: Vec<String> = Vec::new();
    let mut params: Vec<Param<'_>> = Vec::new();
    for (column, value) in [("market_id", &q.market_id), ("outcome_id", &q.outcome_id)] {
        if let Some(v) = value {
            params.push(Param::Text(v));
            clauses.push(format!("{column} = ${}", params.len()));
        }
    }
    if let Some(from) = q.from {
        params.push(Param::Int(from));
        clauses.push(format!("at >= ${}", params.len()));
    }
    if let Some(to) = q.to {
        params.push(Param::Int(to));
        clauses.push(format!("at <= ${}", params.len()));
    }
    let where_sql = if clauses.is_empty() { String::new() } else { format!("WHERE {}", clauses.join(" AND ")) };
    let dir = q.direction.as_sql();
    let Some(width) = q.interval else {
        let total = c.query_one(&format!("SELECT count(*) FROM price_points {where_sql}"), &params)?.int(0)?;
        params.push(Param::Int(q.page.per_page));
        params.push(Param::Int((q.page.page - 1) * q.page.per_page));
        let n = params.len();
        let sql = format!(
            "SELECT market_id, outcome_id, price, volume, at FROM price_points {where_sql} ORDER BY at {dir}, seq {dir} LIMIT ${} OFFSET ${n}",
            n - 1
        );
        let data = c
            .query(&sql, &params)?
            .iter()
            .map(|r| Ok(point_json(&r.text(0)?, &r.text(1)?, r.money(2)?, r.money(3)?, r.int(4)?)))
            .collect::<Result<Vec<_>>>()?;
        return Ok(Page::new(data, q.page, total));
    };
    // Buckets: the last price in each (outcome, interval) and the summed volume; empty
    // buckets do not appear. Each bucket costs two index seeks per outcome, whatever the
    // number of points in it: its first point, and its last point, whose running volume
    // total minus the previous bucket's gives the bucket's volume.
    let outcomes: Vec<String> = match (&q.outcome_id, &q.market_id) {
        (Some(outcome), _) => vec![outcome.clone()],
        (None, Some(market)) => c
            .query("SELECT id FROM outcomes WHERE market_id = $1 ORDER BY outcome_index", &[Param::Text(market)])?
            .iter()
            .map(|r| r.text(0))
            .collect::<Result<_>>()?,
        (None, None) => Vec::new(),
    };
    let (lo, hi) = (q.from.unwrap_or(Micros::MIN), q.to.unwrap_or(Micros::MAX));
    let market_filter = q.market_id.as_deref().unwrap_or("");
    let mut buckets: Vec<(String, String, Micros, u128, u128)> = Vec::new();
    for outcome in &outcomes {
        let scope = "outcome_id = $1 AND ($2 = '' OR market_id = $2)";
        let before = c.query_opt(
            &format!("SELECT cum_volume FROM price_points WHERE {scope} AND at < $3 ORDER BY at DESC, seq DESC LIMIT 1"),
            &[Param::Text(outcome), Param::Text(market_filter), Param::Int(lo)],
        )?;
        let mut previous_total = match before {
            Some(r) => running_total(&r, 0)?,
            None => 0,
        };
        let mut cursor = lo;
        loop {
            let Some(first) = c.query_opt(
                &format!("SELECT at FROM price_points WHERE {scope} AND at >= $3 AND at <= $4 ORDER BY at, seq LIMIT 1"),
                &[Param::Text(outcome), Param::Text(market_filter), Param::Int(cursor), Param::Int(hi)],
            )?
            else {
                break;
            };
            let start = first.int(0)?.div_euclid(width) * width;
            let end = start.saturating_add(width - 1).min(hi);
            let last = c.query_one(
                &format!(
                    "SELECT market_id, price, cum_volume FROM price_points WHERE {scope} AND at >= $3 AND at <= $4 \
                     ORDER BY at DESC, seq DESC LIMIT 1"
                ),
                &[Param::Text(outcome), Param::Text(market_filter), Param::Int(cursor), Param::Int(end)],
            )?;
            let total = running_total(&last, 2)?;
            let volume = total.checked_sub(previous_total).ok_or_else(|| Error::internal("running volume total decreased"))?;
            buckets.push((last.text(0)?, outcome.clone(), start, last.money(1)?, volume));
            previous_total = total;
            if end == Micros::MAX {
                break;
            }
            cursor = end + 1;
        }
    }
    buckets.sort_by(|a, b| {
        let key = a.2.cmp(&b.2).then_with(|| a.1.cmp(&b.1));
        if q.direction == Direction::Desc { key.reverse() } else { key }
    });
    let total = buckets.len() as i64;
    let start = ((q.page.page - 1) * q.page.per_page) as usize;
    let data = buckets
        .iter()
        .skip(start)
        .take(q.page.per_page as usize)
        .map(|(m, o, at, price, volume)| point_json(m, o, *price, *volume, *at))
        .collect();
    Ok(Page::new(data, q.page, total))
}
