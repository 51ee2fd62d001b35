//! A wallet's positions, valued at their markets' current prices or settlement.

use std::collections::HashMap;

use crate::domain::ids::MarketId;
use crate::domain::market::Market;
use crate::domain::page::{Direction, Page, PageRequest, Sort};
use crate::domain::position::{Holding, Position};
use crate::error::{Error, Result};
use crate::store::markets;
use crate::store::positions::POSITION_COLUMNS;
use crate::store::sql::{query_as, Conn, Param};

#[derive(Debug, Clone, Default)]
pub(crate) struct HoldingsQuery {
    pub(crate) wallet_id: String,
    pub(crate) market_id: Option<String>,
    pub(crate) outcome_id: Option<String>,
    pub(crate) status: Option<String>,
    pub(crate) page: PageRequest,
    pub(crate) sort: Sort,
}

/// Markets of the positions valued so far: the market, its prices and payout terms.
pub(crate) type Seen = HashMap<MarketId, (Market, Vec<lmsr::Price>, (u128, u128))>;

pub(crate) fn value_position(c: &mut dyn Conn, p: Position, markets_seen: &mut Seen) -> Result<Holding> {
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
pub(crate) fn wallet_holdings(c: &mut dyn Conn, wallet_id: &str) -> Result<Vec<Holding>> {
    let sql = format!("SELECT {POSITION_COLUMNS} FROM positions WHERE wallet_id = $1 ORDER BY created_at, id");
    let positions: Vec<Position> = query_as(c, &sql, &[Param::Text(wallet_id)])?;
    let mut seen = HashMap::new();
    positions.into_iter().map(|p| value_position(c, p, &mut seen)).collect()
}

/// Only the caller's positions. Values depend on live prices, so sorting happens here.
pub(crate) fn holdings(c: &mut dyn Conn, q: &HoldingsQuery) -> Result<Page<Holding>> {
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
        if q.sort.direction == Direction::Desc {
            key.reverse()
        } else {
            key
        }
    });
    let total = valued.len() as i64;
    let start = ((q.page.page - 1) * q.page.per_page) as usize;
    let data = valued.into_iter().skip(start).take(q.page.per_page as usize).collect();
    Ok(Page::new(data, q.page, total))
}
