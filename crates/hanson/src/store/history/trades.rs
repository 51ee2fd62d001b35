//! The trade records: written with each trade, searched publicly.

use crate::domain::ids::{MarketId, OutcomeId, TradeId, WalletId};
use crate::domain::money::Wei;
use crate::domain::page::{Page, PageRequest, Sort};
use crate::domain::time::{Micros, Timestamp};
use crate::domain::trade_record::{TradeKind, TradeRecord};
use crate::error::{Error, Result};
use crate::store::sql::{Conn, Param};

#[derive(Debug, Clone)]
pub(crate) struct TradeQuery {
    pub(crate) market_id: Option<String>,
    pub(crate) outcome_id: Option<String>,
    pub(crate) wallet_address: Option<String>,
    pub(crate) transaction_type: Option<String>,
    pub(crate) from: Option<Micros>,
    pub(crate) to: Option<Micros>,
    pub(crate) page: PageRequest,
    pub(crate) sort: Sort,
}

pub(crate) fn trades(c: &mut dyn Conn, q: &TradeQuery) -> Result<Page<TradeRecord>> {
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

/// Records a trade, with the session that made it.
pub(crate) fn insert_trade(c: &mut dyn Conn, t: &TradeRecord, session_id: &str) -> Result<()> {
    c.exec_later(
        "INSERT INTO trades (id, market_id, outcome_id, wallet_id, wallet_address, session_id, transaction_type, amount, \
         net_amount, fee, shares, price, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
        &[
            Param::Text(&t.id),
            Param::Text(&t.market_id),
            Param::Text(&t.outcome_id),
            Param::Text(&t.wallet_id),
            Param::Text(&t.wallet_address),
            Param::Text(session_id),
            Param::Text(t.transaction_type.as_str()),
            Param::Money(t.amount.0),
            Param::Money(t.net_amount.0),
            Param::Money(t.fee.0),
            Param::Money(t.shares.0),
            Param::Text(&t.price),
            Param::Int(t.created_at.0),
        ],
    )
}
