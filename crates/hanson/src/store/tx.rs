//! A write's transaction as its operation sees it: the connection, the events the write
//! emits, and the copies of the batch it runs in, if any (`batch`).

use super::batch::{self, BatchRows};
use super::event_log::{self, EventRow};
use super::sql::{Conn, Dialect, Param, Row};
use crate::domain::event::{Event, Published};
use crate::domain::ids::MarketId;
use crate::domain::time::Micros;
use crate::error::Result;

pub struct Tx<'t> {
    conn: &'t mut dyn Conn,
    rows: Option<&'t mut BatchRows>,
    events: Vec<Event>,
}

impl<'t> Tx<'t> {
    pub(crate) fn new(conn: &'t mut dyn Conn, rows: Option<&'t mut BatchRows>) -> Tx<'t> {
        Tx { conn, rows, events: Vec::new() }
    }

    /// Records an event this write causes: written with it, and published once its commit is
    /// durable (nothing, if it fails).
    pub(crate) fn emit(&mut self, event: Event) {
        self.events.push(event);
    }

    /// The connection and the batch's copies (None outside a batch), for a trade's reads and
    /// writes through them.
    pub(crate) fn parts(&mut self) -> (&mut dyn Conn, Option<&mut BatchRows>) {
        (&mut *self.conn, self.rows.as_deref_mut())
    }

    pub(crate) fn events(&self) -> &[Event] {
        &self.events
    }

    /// Writes the events emitted, each market event numbered next in its market's stream (or
    /// keeps them with the batch's, to be written before its commit), and returns them as they
    /// will be published. Every write that emits a market event holds the market's lock (or is
    /// SQLite's single writer), so numbering from the last stored number is gapless.
    pub(crate) fn finish(self, node: &str, now: Micros) -> Result<Vec<Published>> {
        let Tx { conn, rows, events } = self;
        if events.is_empty() {
            return Ok(Vec::new());
        }
        let mut last_seqs: Vec<(MarketId, i64)> = Vec::new();
        let mut written: Vec<EventRow> = Vec::with_capacity(events.len());
        for event in &events {
            let seq = match event.market_stream() {
                None => None,
                Some(market_id) => {
                    let index = match last_seqs.iter().position(|(m, _)| m == market_id) {
                        Some(i) => i,
                        None => {
                            last_seqs.push((market_id.clone(), batch::seq(conn, rows.as_deref(), market_id)?));
                            last_seqs.len() - 1
                        }
                    };
                    last_seqs[index].1 += 1;
                    Some(last_seqs[index].1)
                }
            };
            written.push(EventRow::new(event, seq, now)?);
        }
        let published = written.iter().map(|row| row.published().clone()).collect();
        match rows {
            // A batch of trades writes the events of all its trades together, before its COMMIT.
            Some(rows) => {
                rows.defer_events(node, written);
                // Numbered once the events are queued with the batch: a failed write numbers
                // nothing.
                for (market_id, seq) in &last_seqs {
                    rows.set_seq(market_id, *seq);
                }
            }
            None => event_log::write(conn, &written, node, now)?,
        }
        Ok(published)
    }
}

// A write's operation reads and writes through its transaction as through any connection:
// passed where a `Conn` is asked for (`impl Conn`), and with `Conn`'s methods callable on it
// where the trait is not in scope (`Deref`).
impl Conn for Tx<'_> {
    fn dialect(&self) -> Dialect {
        self.conn.dialect()
    }

    fn exec(&mut self, sql: &str, params: &[Param<'_>]) -> Result<u64> {
        self.conn.exec(sql, params)
    }

    fn query(&mut self, sql: &str, params: &[Param<'_>]) -> Result<Vec<Row>> {
        self.conn.query(sql, params)
    }

    fn exec_later(&mut self, sql: &str, params: &[Param<'_>]) -> Result<()> {
        self.conn.exec_later(sql, params)
    }

    fn query_all(&mut self, reads: &[(String, Vec<Param<'_>>)]) -> Result<Vec<Vec<Row>>> {
        self.conn.query_all(reads)
    }

    fn plan_once(&mut self) -> Result<()> {
        self.conn.plan_once()
    }

    fn lock_clause(&self) -> &'static str {
        self.conn.lock_clause()
    }
}

impl<'t> std::ops::Deref for Tx<'t> {
    type Target = dyn Conn + 't;

    fn deref(&self) -> &Self::Target {
        &*self.conn
    }
}

impl std::ops::DerefMut for Tx<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut *self.conn
    }
}
