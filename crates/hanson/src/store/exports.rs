//! Exports for the books, read in chunks by key so that a stream of any length holds one
//! chunk at a time: a provider's trades in apply order (time, then record number) and the
//! transfers touching its treasury, its markets' pools or its wallets, by transfer id.

use crate::domain::ledger::pool_account;
use crate::domain::time::{format_micros, Micros};
use crate::error::Result;
use crate::store::sql::{Conn, Param};

#[derive(Debug, Clone)]
pub(crate) struct ExportQuery {
    pub(crate) provider_id: String,
    pub(crate) market_id: Option<String>,
    pub(crate) from: Option<Micros>,
    pub(crate) to: Option<Micros>,
}

/// The trade record's fields, in the order both formats write them.
pub(crate) const TRADE_FIELDS: [&str; 12] = [
    "id",
    "market_id",
    "outcome_id",
    "wallet_id",
    "wallet_address",
    "transaction_type",
    "amount",
    "shares",
    "price",
    "fee",
    "net_amount",
    "created_at",
];

pub(crate) const LEDGER_FIELDS: [&str; 10] =
    ["id", "created_at", "kind", "token_id", "amount", "from_account", "to_account", "market_id", "wallet_address", "reference"];

/// One exported row: its fields' values (None: null), and where the next chunk starts.
pub(crate) struct ExportRow {
    pub(crate) values: Vec<Option<String>>,
    pub(crate) cursor: (Micros, i64),
}

/// Time and market filters, their parameters numbered after `params`.
fn filters<'a>(q: &'a ExportQuery, params: &mut Vec<Param<'a>>, time: &str, market: &str) -> String {
    let mut sql = String::new();
    if let Some(from) = q.from {
        params.push(Param::Int(from));
        sql.push_str(&format!(" AND {time} >= ${}", params.len()));
    }
    if let Some(to) = q.to {
        params.push(Param::Int(to));
        sql.push_str(&format!(" AND {time} <= ${}", params.len()));
    }
    if let Some(m) = &q.market_id {
        params.push(Param::Text(m));
        sql.push_str(&market.replace("$M", &format!("${}", params.len())));
    }
    sql
}

/// Up to `limit` trades after `after` (time, seq).
pub(crate) fn trades(c: &mut dyn Conn, q: &ExportQuery, after: Option<(Micros, i64)>, limit: i64) -> Result<Vec<ExportRow>> {
    let (at, seq) = after.unwrap_or((Micros::MIN, i64::MIN));
    let mut params = vec![Param::Text(&q.provider_id), Param::Int(at), Param::Int(seq), Param::Int(limit)];
    let more = filters(q, &mut params, "created_at", " AND market_id = $M");
    let sql = format!(
        "SELECT id, market_id, outcome_id, wallet_id, wallet_address, transaction_type, amount, shares, price, fee, net_amount, created_at, seq \
         FROM trades WHERE market_id IN (SELECT id FROM markets WHERE provider_id = $1) AND (created_at > $2 OR (created_at = $2 AND seq > $3)){more} \
         ORDER BY created_at, seq LIMIT $4"
    );
    c.query(&sql, &params)?
        .iter()
        .map(|r| {
            let mut values = Vec::with_capacity(TRADE_FIELDS.len());
            for i in 0..6 {
                values.push(Some(r.text(i)?));
            }
            for i in 6..8 {
                values.push(Some(r.money(i)?.to_string()));
            }
            values.push(Some(r.text(8)?));
            for i in 9..11 {
                values.push(Some(r.money(i)?.to_string()));
            }
            values.push(Some(format_micros(r.int(11)?)));
            Ok(ExportRow { values, cursor: (r.int(11)?, r.int(12)?) })
        })
        .collect()
}

/// An account of the provider: its treasury, a pool of its markets, or one of its wallets.
fn mine(a: &str) -> String {
    format!(
        "(({a}.kind = 'treasury' AND {a}.owner_id = $1) OR ({a}.kind = 'pool' AND {a}.owner_id IN (SELECT id FROM markets WHERE provider_id = $1)) \
         OR ({a}.kind = 'wallet' AND {a}.owner_id IN (SELECT id FROM wallets WHERE provider_id = $1)))"
    )
}

/// Up to `limit` transfers with an id above `after`.
pub(crate) fn ledger(c: &mut dyn Conn, q: &ExportQuery, after: Option<i64>, limit: i64) -> Result<Vec<ExportRow>> {
    let pool = q.market_id.as_deref().map(pool_account);
    let times = ExportQuery { market_id: None, ..q.clone() };
    let mut params = vec![Param::Text(&q.provider_id), Param::Int(after.unwrap_or(i64::MIN)), Param::Int(limit)];
    let mut more = filters(&times, &mut params, "t.created_at", "");
    if let Some(pool) = &pool {
        params.push(Param::Text(pool));
        more.push_str(&format!(" AND (t.from_account = ${0} OR t.to_account = ${0})", params.len()));
    }
    let sql = format!(
        "SELECT t.id, t.created_at, t.kind, t.token_id, t.amount, t.from_account, t.to_account, t.reference_id, \
         fa.kind, fa.owner_id, ta.kind, ta.owner_id, fw.address, tw.address \
         FROM transfers t LEFT JOIN accounts fa ON fa.id = t.from_account LEFT JOIN accounts ta ON ta.id = t.to_account \
         LEFT JOIN wallets fw ON fa.kind = 'wallet' AND fw.id = fa.owner_id LEFT JOIN wallets tw ON ta.kind = 'wallet' AND tw.id = ta.owner_id \
         WHERE t.id > $2 AND ({} OR {}){more} ORDER BY t.id LIMIT $3",
        mine("fa"),
        mine("ta")
    );
    c.query(&sql, &params)?
        .iter()
        .map(|r| {
            let id = r.int(0)?;
            let side = |kind: usize| -> Result<Option<String>> {
                Ok(match r.opt_text(kind)?.as_deref() {
                    Some("pool") => r.opt_text(kind + 1)?,
                    _ => None,
                })
            };
            let market_id = side(8)?.or(side(10)?);
            let wallet_address = r.opt_text(12)?.or(r.opt_text(13)?);
            let values = vec![
                Some(id.to_string()),
                Some(format_micros(r.int(1)?)),
                Some(r.text(2)?),
                Some(r.text(3)?),
                Some(r.money(4)?.to_string()),
                r.opt_text(5)?,
                r.opt_text(6)?,
                market_id,
                wallet_address,
                r.opt_text(7)?,
            ];
            Ok(ExportRow { values, cursor: (0, id) })
        })
        .collect()
}
