//! The event log: the rows of a write's events, written in its transaction; reading a
//! market's stream back (resume, gap filling, other nodes' events); announcing closed
//! markets; pruning.

use std::sync::Arc;

use super::sql::{id_list, value_rows, Conn, Dialect, FromRow, Param, Row};
use super::webhooks;
use crate::domain::event::{Event, Published};
use crate::domain::ids::{new_id, MarketId};
use crate::domain::time::Micros;
use crate::error::Result;

/// The NOTIFY channel through which PostgreSQL nodes learn of each other's events.
pub(crate) const CHANNEL: &str = "hanson_events";

const COLUMNS: &str = "market_id, seq, wallet_id, type, envelope";

impl FromRow for Published {
    fn from_row(r: &Row) -> Result<Published> {
        Ok(Published {
            market_id: r.opt_text(0)?.map(MarketId),
            seq: r.opt_int(1)?,
            wallet_id: r.opt_text(2)?.map(Into::into),
            kind: Arc::from(r.text(3)?),
            envelope: Arc::from(r.text(4)?),
        })
    }
}

/// The market's last sequence number, 0 before its first event. Under the market's write
/// lock the next event takes this plus one.
pub(crate) fn current_seq(c: &mut dyn Conn, market_id: &str) -> Result<i64> {
    Ok(current_seqs(c, &[market_id])?.first().map_or(0, |(_, seq)| *seq))
}

/// [`current_seq`] of each market of `market_ids`, in id order, in one statement (a trade
/// batch's markets: one statement each was 29 round trips a batch in many_markets).
pub fn current_seqs(c: &mut dyn Conn, market_ids: &[&str]) -> Result<Vec<(String, i64)>> {
    if market_ids.is_empty() {
        return Ok(Vec::new());
    }
    let (sql, params) = current_seqs_read(market_ids);
    seqs_from(&c.query(&sql, &params)?)
}

/// The statement of [`current_seqs`] (`market_ids` not empty), for a caller that sends more
/// with it in one round trip; [`seqs_from`] reads its rows.
pub fn current_seqs_read<'a>(market_ids: &'a [&'a str]) -> (String, Vec<Param<'a>>) {
    let (_, params) = id_list(market_ids);
    // The ids are compared as bound, not as `markets.id`: on PostgreSQL that column's "C"
    // collation is not the index's, and the lookup became a scan. The last
    // seq is read as the first row of a backward walk, not as MAX(seq), which PostgreSQL may
    // plan as an aggregate over every event of the market when its statistics are older than
    // the log ([`seq_end`]).
    let sql = format!(
        "WITH wanted(id) AS (VALUES {}) SELECT id, COALESCE(({}), 0) FROM wanted",
        value_rows(params.len(), 1),
        seq_end("wanted.id", "DESC")
    );
    (sql, params)
}

/// [`current_seqs_read`] for a trade batch that keeps copies (PostgreSQL): each market with
/// the revision of the batch thread's copy, or -1. Only markets now stored at another revision
/// are read: every event numbered in a market's stream comes with an update of its row.
pub fn changed_seqs_read<'a>(markets: &'a [(&'a str, i64)]) -> (String, Vec<Param<'a>>) {
    let padded = markets.len().next_power_of_two();
    let last = markets.last().into_iter().cycle().take(padded - markets.len());
    let params: Vec<Param<'_>> = markets.iter().chain(last).flat_map(|(id, revision)| [Param::Text(id), Param::Int(*revision)]).collect();
    let sql = format!(
        "WITH wanted(id, revision) AS (VALUES {}) SELECT wanted.id, COALESCE(({}), 0) FROM wanted \
         JOIN markets m ON m.id = wanted.id WHERE m.revision <> wanted.revision",
        value_rows(padded, 2),
        seq_end("wanted.id", "DESC")
    );
    (sql, params)
}

pub(crate) fn seqs_from(rows: &[Row]) -> Result<Vec<(String, i64)>> {
    let mut seqs = rows.iter().map(|r| Ok((r.text(0)?, r.int(1)?))).collect::<Result<Vec<_>>>()?;
    // The padding's repeated id comes back once for each time it is repeated.
    seqs.sort_unstable();
    seqs.dedup();
    Ok(seqs)
}

/// Writes `rows` (and the webhook deliveries they cause; on PostgreSQL, notifies the other
/// nodes of them), in the current transaction.
pub(crate) fn write(c: &mut dyn Conn, rows: &[EventRow], node: &str, now: Micros) -> Result<()> {
    let kept: Vec<&EventRow> = rows.iter().filter(|r| r.kept).collect();
    let mut params: Vec<Param<'_>> = Vec::with_capacity(kept.len() * 11 + 4);
    for r in &kept {
        let p = &r.published;
        params.extend([
            Param::Text(&r.id),
            p.market_id.as_deref().into(),
            p.seq.map_or(Param::Null, Param::Int),
            p.wallet_id.as_deref().into(),
            Param::Text(&p.kind),
            Param::Int(r.at),
            Param::Text(&p.envelope),
        ]);
    }
    let insert = (!kept.is_empty()).then(|| {
        format!(
            "INSERT INTO events (id, market_id, seq, wallet_id, type, created_at, envelope) VALUES {} RETURNING position, id",
            value_rows(kept.len(), 7)
        )
    });
    match c.dialect() {
        Dialect::Sqlite => {
            if let Some(insert) = insert {
                let written = c.query(&insert, &params)?;
                // The deliveries of webhooks subscribed to these events, in the same transaction.
                let positions: Vec<(String, i64)> = written.iter().map(|r| Ok((r.text(1)?, r.int(0)?))).collect::<Result<_>>()?;
                let mut source: Vec<Param<'_>> = Vec::with_capacity(kept.len() * webhooks::SOURCE_COLUMNS + 1);
                for r in &kept {
                    let position = positions.iter().find(|(id, _)| *id == r.id).map_or(0, |(_, p)| *p);
                    source.extend([
                        Param::Int(position),
                        Param::Text(&r.id),
                        Param::Text(&r.published.kind),
                        (&r.provider_id).into(),
                        (&r.tenant_market).into(),
                    ]);
                }
                source.push(Param::Int(now));
                let sql = format!(
                    "WITH source(event_position, event_id, kind, provider_id, market_id) AS (VALUES {}) {}",
                    value_rows(kept.len(), webhooks::SOURCE_COLUMNS),
                    webhooks::enqueue_sql(source.len())
                );
                c.exec(&sql, &source)?;
            }
        }
        Dialect::Postgres => {
            let positions_prefix = format!("{node}:");
            let transient: Vec<&Published> = rows.iter().filter(|r| !r.kept).map(|r| &r.published).collect();
            let payloads = notice_payloads(node, &transient)?;
            // A data-modifying WITH must lead the statement; the selects follow it. The
            // webhook deliveries of the written events are inserted by the same statement.
            let mut with = String::new();
            let mut selects = Vec::new();
            if let Some(insert) = insert {
                let first = params.len() + 1;
                for r in &kept {
                    params.extend([Param::Text(&r.id), Param::Text(&r.published.kind), (&r.provider_id).into(), (&r.tenant_market).into()]);
                }
                let values: Vec<String> = (0..kept.len())
                    .map(|k| {
                        let i = first + k * 4;
                        format!("(${i}::text, ${}::text, ${}::text, ${}::text)", i + 1, i + 2, i + 3)
                    })
                    .collect();
                params.push(Param::Int(now));
                let now_param = params.len();
                params.push(Param::Text(&positions_prefix));
                with = format!(
                    "WITH written AS ({insert}), source AS (SELECT written.position AS event_position, written.id AS event_id, \
                     v.kind, v.provider_id, v.market_id FROM written JOIN (VALUES {}) AS v(event_id, kind, provider_id, market_id) \
                     ON v.event_id = written.id), delivered AS ({}) ",
                    values.join(", "),
                    webhooks::enqueue_sql(now_param)
                );
                selects.push(format!(
                    "SELECT pg_notify('{CHANNEL}', ${} || string_agg(position::text, ','))::text FROM written",
                    params.len()
                ));
            }
            if !payloads.is_empty() {
                let first = params.len() + 1;
                params.extend(payloads.iter().map(|p| Param::Text(p)));
                let values: Vec<String> = (first..first + payloads.len()).map(|i| format!("(${i})")).collect();
                selects.push(format!("SELECT pg_notify('{CHANNEL}', p)::text FROM (VALUES {}) AS sent(p)", values.join(", ")));
            }
            if !selects.is_empty() {
                c.exec_later(&format!("{with}{}", selects.join(" UNION ALL ")), &params)?;
            }
        }
    }
    Ok(())
}

/// An event as the log writes it: numbered, in its envelope, with what webhooks need.
#[derive(Clone)]
pub(crate) struct EventRow {
    id: String,
    published: Published,
    /// Kept in the log (not [`Event::is_stream_only`]).
    kept: bool,
    /// The tenant whose webhooks receive it: its own, or else its market's.
    provider_id: Option<String>,
    tenant_market: Option<String>,
    /// When it was recorded.
    at: Micros,
}

impl EventRow {
    /// `event` with its market sequence number (None for events outside a market's stream).
    pub(crate) fn new(event: &Event, seq: Option<i64>, now: Micros) -> Result<EventRow> {
        let id = new_id();
        let envelope = event.envelope(&id, now, seq)?;
        let published = Published {
            kind: Arc::from(event.kind()),
            market_id: event.market_stream().cloned(),
            seq,
            wallet_id: event.wallet().cloned(),
            envelope: Arc::from(envelope),
        };
        Ok(EventRow {
            id,
            published,
            kept: !event.is_stream_only(),
            provider_id: event.provider().map(|p| p.to_string()),
            tenant_market: event.tenant_market().map(|m| m.to_string()),
            at: now,
        })
    }

    pub(crate) fn published(&self) -> &Published {
        &self.published
    }
}

/// An event that is not kept, as another node's listener receives it.
#[derive(serde::Serialize, serde::Deserialize)]
struct Notice<'a> {
    #[serde(borrow)]
    wallet_id: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, rename = "type")]
    kind: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    envelope: std::borrow::Cow<'a, str>,
}

/// NOTIFY payloads are limited to 8,000 bytes.
const NOTICE_BYTES: usize = 7_500;

/// `node|[notice, ...]` payloads, each under the NOTIFY limit.
fn notice_payloads(node: &str, events: &[&Published]) -> Result<Vec<String>> {
    let mut payloads = Vec::new();
    let mut current: Vec<String> = Vec::new();
    let mut size = 0;
    for p in events {
        let notice = Notice { wallet_id: p.wallet_id.as_deref().map(Into::into), kind: (&*p.kind).into(), envelope: (&*p.envelope).into() };
        let text = serde_json::to_string(&notice).map_err(crate::error::Error::internal)?;
        if text.len() + node.len() + 3 > NOTICE_BYTES {
            tracing::warn!(kind = %p.kind, bytes = text.len(), "an event too large to notify other nodes of");
            continue;
        }
        if size + text.len() + node.len() + 3 > NOTICE_BYTES {
            payloads.push(format!("{node}|[{}]", current.join(",")));
            current.clear();
            size = 0;
        }
        size += text.len() + 1;
        current.push(text);
    }
    if !current.is_empty() {
        payloads.push(format!("{node}|[{}]", current.join(",")));
    }
    Ok(payloads)
}

/// What another node's notification carries: positions of kept rows, or events not kept.
pub(crate) enum Notified {
    Positions(Vec<i64>),
    Events(Vec<Published>),
}

/// Reads a notification's payload; None for this node's own (`node`) and unreadable ones.
pub(crate) fn parse_notice(payload: &str, node: &str) -> Option<Notified> {
    let (sender, rest) = payload.split_at(payload.find([':', '|'])?);
    if sender == node {
        return None;
    }
    if let Some(list) = rest.strip_prefix(':') {
        return Some(Notified::Positions(list.split(',').filter_map(|p| p.parse().ok()).collect()));
    }
    let notices: Vec<Notice<'_>> = serde_json::from_str(rest.strip_prefix('|')?).ok()?;
    Some(Notified::Events(
        notices
            .into_iter()
            .map(|n| Published {
                kind: Arc::from(&*n.kind),
                market_id: None,
                seq: None,
                wallet_id: n.wallet_id.map(|w| w.as_ref().into()),
                envelope: Arc::from(&*n.envelope),
            })
            .collect(),
    ))
}

/// The market's events with `after < seq < before`, in order (at most `limit`).
pub(crate) fn market_events(c: &mut dyn Conn, market_id: &str, after: i64, before: Option<i64>, limit: i64) -> Result<Vec<Published>> {
    let sql = format!("SELECT {COLUMNS} FROM events WHERE market_id = $1 AND seq > $2 AND seq < $3 ORDER BY seq LIMIT $4");
    super::sql::query_as(c, &sql, &[Param::Text(market_id), Param::Int(after), Param::Int(before.unwrap_or(i64::MAX)), Param::Int(limit)])
}

/// The first (`ASC`) or last (`DESC`) seq of the market `market` names in the log (NULL when
/// it holds none), read as one step of an index walk. As `MIN(seq)` / `MAX(seq)`, PostgreSQL
/// planned an aggregate over every event of the market whenever its statistics predated most
/// of the log (after an ANALYZE taken while the hot market's log was young, it halved
/// hot_market's throughput).
fn seq_end(market: &str, direction: &str) -> String {
    format!("SELECT seq FROM events WHERE events.market_id = {market} ORDER BY seq {direction} LIMIT 1")
}

/// The lowest sequence number the log still holds of the market (None: it holds none).
pub fn first_kept_seq(c: &mut dyn Conn, market_id: &str) -> Result<Option<i64>> {
    c.query_one(&format!("SELECT ({})", seq_end("$1", "ASC")), &[Param::Text(market_id)])?.opt_int(0)
}

/// Rows by their log positions (another node's notification), in log order.
pub(crate) fn at_positions(c: &mut dyn Conn, positions: &[i64]) -> Result<Vec<Published>> {
    if positions.is_empty() {
        return Ok(Vec::new());
    }
    let list = positions.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
    let sql = format!("SELECT {COLUMNS} FROM events WHERE position IN ({list}) ORDER BY position");
    super::sql::query_as(c, &sql, &[])
}

/// What the log keeps: every event younger than `keep_for`, and each market's last `keep_last`.
#[derive(Debug, Clone, Copy)]
pub struct Retention {
    pub keep_for: Micros,
    pub keep_last: i64,
}

impl Default for Retention {
    fn default() -> Self {
        Retention { keep_for: 24 * 3600 * 1_000_000, keep_last: 10_000 }
    }
}

/// The markets whose log holds more than `retention.keep_last` events, with their last seq:
/// the only ones with market events to prune (index probes per market, on a read snapshot).
pub fn long_logs(c: &mut dyn Conn, retention: &Retention) -> Result<Vec<(String, i64)>> {
    let mut long = Vec::new();
    for row in c.query("SELECT id FROM markets", &[])? {
        let market_id = row.text(0)?;
        let span = c.query_one(&format!("SELECT ({}), ({})", seq_end("$1", "ASC"), seq_end("$1", "DESC")), &[Param::Text(&market_id)])?;
        if let (Some(first), Some(last)) = (span.opt_int(0)?, span.opt_int(1)?) {
            if last - first >= retention.keep_last {
                long.push((market_id, last));
            }
        }
    }
    Ok(long)
}

/// Events a webhook delivery still waits for are kept.
/// (Everything from the oldest pending delivery's event on: no index serves the deliveries by
/// event, as each one costs every trade of a subscribed provider.)
const UNDELIVERED: &str =
    " AND position < (SELECT COALESCE(MIN(d.event_position), 9223372036854775807) FROM webhook_deliveries d WHERE d.status = 'pending')";

/// Deletes what `retention` no longer keeps: events older than `keep_for` that are not among
/// the last `keep_last` of their market (`long` from [`long_logs`]). Returns the rows deleted.
pub fn prune(c: &mut dyn Conn, now: Micros, retention: &Retention, long: &[(String, i64)]) -> Result<u64> {
    let cutoff = now - retention.keep_for;
    let mut deleted =
        c.exec(&format!("DELETE FROM events WHERE market_id IS NULL AND created_at < $1{UNDELIVERED}"), &[Param::Int(cutoff)])?;
    for (market_id, last) in long {
        deleted += c.exec(
            &format!("DELETE FROM events WHERE market_id = $1 AND seq <= $2 AND created_at < $3{UNDELIVERED}"),
            &[Param::Text(market_id), Param::Int(last - retention.keep_last), Param::Int(cutoff)],
        )?;
    }
    Ok(deleted)
}
