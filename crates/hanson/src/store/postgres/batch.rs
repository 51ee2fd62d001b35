//! Trade batches: the bets and sells a node has waiting run in one transaction with one
//! commit, as SQLite's group commit does. Each trade holding its market's row lock across its
//! own round trips and commit ran one market at about one trade per commit; a batch takes
//! the lock once, keeps the market and the balances its trades change in memory
//! (`store::batch`), writes each row once, and commits once for all of them.
//!
//! Every batch first takes one advisory lock (`TRADE_BATCH_LOCK`), so the batches of all
//! nodes sharing the database run one after another: a batch locks markets and accounts in
//! the order its trades come, and two batches running at once could each hold a row the
//! other waits for. Writes that are not trades run beside the batches as before.
//!
//! The batch sends its BEGIN, the batch lock and the reads of the rows its trades start from
//! (markets, sessions, positions, balances; a statement per kind) in one round trip
//! (`batch::preload`, `Conn::query_all`), and the rows its trades write and the COMMIT in
//! one more (`Conn::exec_later`).
//!
//! A trade that fails before its first write (a rule, a balance) fails alone and the batch
//! goes on. One that fails after writing, or a batch whose writes or COMMIT the server
//! refuses (a lost race among them), rolls the batch back; each of its trades then runs again
//! alone, in a transaction of its own, so only the failing one fails. A trade is answered
//! only after its commit.

use std::sync::{mpsc, Arc, LazyLock};

use tokio::sync::oneshot;

use super::conn::PgConn;
use super::pool::Pool;
use super::{pg_error, InUse, BEGIN_WRITE, PLAN_ONCE};
use crate::error::{Error, Result};
use crate::store::batch::{self, BatchRows, CommittedRows, MarketCopies, TradeKeys};
use crate::store::sql::{Conn, Row};

/// Most trades one batch carries. Replies wait for the whole batch, so a batch stays small
/// enough that its first trade is not held long.
const MAX_BATCH: usize = 64;
/// Key of the advisory lock every trade batch holds until it ends ("hanson" + 1).
const TRADE_BATCH_LOCK: i64 = 0x0068_616e_736f_6e01;
/// A batch's BEGIN, sent with its reads. Generic plans: the batch's reads list as many ids
/// as it has trades, a statement text per count, each of which PostgreSQL would otherwise
/// plan afresh for its first five runs.
static BATCH_BEGIN: LazyLock<String> = LazyLock::new(|| format!("{BEGIN_WRITE}; {PLAN_ONCE}"));
/// Takes the batch lock, first of the batch's reads; its row is how long it waited, in us.
static TAKE_BATCH_LOCK: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT (extract(epoch FROM clock_timestamp() - statement_timestamp()) * 1000000)::int8 FROM (SELECT pg_advisory_xact_lock({TRADE_BATCH_LOCK})) AS locked"
    )
});
/// A wait for the batch lock longer than this (us) was for another node's batch.
const OTHER_BATCH_US: i64 = 200;

/// A trade waiting for its batch.
pub(super) trait Member: Send {
    /// The rows the trade reads first.
    fn keys(&self) -> &TradeKeys;
    /// Runs a copy of the operation inside the batch's transaction, keeping its result.
    /// Returns false if it failed after writing: the batch must be rolled back.
    fn run(&mut self, conn: &mut PgConn<'_>, rows: &mut BatchRows) -> bool;
    /// Answers with the kept result once the batch is committed, or with why it was not.
    fn answer(self: Box<Self>, committed: std::result::Result<(), &Error>);
    /// Runs the operation alone, in a transaction of its own, and answers.
    fn run_alone(self: Box<Self>, pool: &Pool);
}

struct Waiting<T, F> {
    keys: TradeKeys,
    op: F,
    result: Option<Result<T>>,
    reply: oneshot::Sender<Result<T>>,
}

impl<T, F> Member for Waiting<T, F>
where
    T: Send + 'static,
    F: FnOnce(&mut dyn Conn, Option<&mut BatchRows>) -> Result<T> + Clone + Send + 'static,
{
    fn keys(&self) -> &TradeKeys {
        &self.keys
    }

    fn run(&mut self, conn: &mut PgConn<'_>, rows: &mut BatchRows) -> bool {
        let before = (conn.changes(), rows.changes());
        let op = self.op.clone();
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| op(conn, Some(&mut *rows))))
            .unwrap_or_else(|_| Err(Error::internal("store operation panicked")));
        let failed_after_writing = result.is_err() && (conn.failure.is_some() || (conn.changes(), rows.changes()) != before);
        self.result = Some(result);
        !failed_after_writing
    }

    fn answer(self: Box<Self>, committed: std::result::Result<(), &Error>) {
        let outcome = match (self.result, committed) {
            // It failed before writing: its own error stands, whatever became of the batch.
            (Some(Err(e)), _) => Err(e),
            (Some(Ok(value)), Ok(())) => Ok(value),
            (_, Err(e)) => Err(same_kind(e)),
            (None, Ok(())) => Err(Error::internal("the trade was not run")),
        };
        let _ = self.reply.send(outcome);
    }

    fn run_alone(self: Box<Self>, pool: &Pool) {
        let op = self.op;
        let _ = self.reply.send(pool.write_retrying(move |c| op(c, None)));
    }
}

/// The batch's failure, for each of its trades.
fn same_kind(e: &Error) -> Error {
    match e {
        Error::Unavailable(message) => Error::Unavailable(message.clone()),
        other => Error::internal(other.to_string()),
    }
}

/// Queues `op` for the next batch; resolves once that batch is committed.
pub(super) async fn submit<T, F>(queue: &mpsc::Sender<Box<dyn Member>>, keys: TradeKeys, op: F) -> Result<T>
where
    T: Send + 'static,
    F: FnOnce(&mut dyn Conn, Option<&mut BatchRows>) -> Result<T> + Clone + Send + 'static,
{
    let (reply, answer) = oneshot::channel();
    queue.send(Box::new(Waiting { keys, op, result: None, reply })).map_err(|_| Error::internal("the PostgreSQL trade batcher stopped"))?;
    answer.await.map_err(|_| Error::internal("the PostgreSQL trade batcher dropped a trade"))?
}

/// Starts the thread that runs the batches; it ends when every sender is gone.
pub(super) fn start(pool: Arc<Pool>) -> Result<mpsc::Sender<Box<dyn Member>>> {
    let (queue, waiting) = mpsc::channel::<Box<dyn Member>>();
    std::thread::Builder::new()
        .name("pg-trade-batches".into())
        .spawn(move || {
            let mut batches = BatchThread { markets: MarketCopies::default(), contended: false };
            while let Ok(first) = waiting.recv() {
                pool.run_batch(first, &waiting, &mut batches);
            }
        })
        .map_err(Error::internal)?;
    Ok(queue)
}

/// What the batch thread keeps from one batch to the next.
struct BatchThread {
    markets: MarketCopies,
    /// The last batch waited for another node's to release the batch lock.
    contended: bool,
}

/// How long the batch waited for its lock (`TAKE_BATCH_LOCK`'s row), in us.
fn waited(lock: &[Row]) -> Result<i64> {
    lock.first().map_or(Ok(0), |row| row.int(0))
}

impl Pool {
    /// Runs `first` and the trades waiting behind it, up to `MAX_BATCH`.
    fn run_batch(&self, first: Box<dyn Member>, waiting: &mpsc::Receiver<Box<dyn Member>>, batches: &mut BatchThread) {
        let _in_use = InUse::start();
        let started = std::time::Instant::now();
        batches.markets.start_batch();
        let mut members = vec![first];
        let mut pc = match self.begin(&BATCH_BEGIN, true) {
            Ok(pc) => pc,
            Err(e) => {
                members.into_iter().for_each(|m| m.answer(Err(&e)));
                return;
            }
        };
        // Starting from no committed rows: `batch::flush` leaves the markets as written,
        // kept once committed.
        let mut rows = BatchRows::starting_from(CommittedRows::default());
        let mut conn = PgConn::for_batch(&mut pc);
        let known = &mut batches.markets;
        let (ran, waited_us) = if batches.contended {
            // Another node's batches take the lock in turns with this node's: the lock first,
            // then every trade that arrived meanwhile, read in one round trip (reading the
            // late ones in a second cost a many_markets batch its reads twice).
            match conn.query(&TAKE_BATCH_LOCK, &[]).and_then(|lock| waited(&lock)) {
                Ok(waited_us) => {
                    members.extend(waiting.try_iter().take(MAX_BATCH - 1));
                    let keys: Vec<TradeKeys> = members.iter().map(|m| m.keys().clone()).collect();
                    (batch::preload(&mut conn, &mut rows, &keys, None, known).is_ok(), waited_us)
                }
                Err(_) => (false, 0),
            }
        } else {
            // BEGIN, the batch lock and the reads in one round trip.
            members.extend(waiting.try_iter().take(MAX_BATCH - 1));
            let keys: Vec<TradeKeys> = members.iter().map(|m| m.keys().clone()).collect();
            match batch::preload(&mut conn, &mut rows, &keys, Some(&TAKE_BATCH_LOCK), known).and_then(|lock| waited(&lock)) {
                Ok(waited_us) => {
                    // Trades that arrived while another node's batch held the lock join this
                    // one (without them, two nodes took turns with half-sized batches).
                    let late: Vec<_> =
                        if waited_us > OTHER_BATCH_US { waiting.try_iter().take(MAX_BATCH - members.len()).collect() } else { Vec::new() };
                    let late_keys: Vec<TradeKeys> = late.iter().map(|m| m.keys().clone()).collect();
                    members.extend(late);
                    (late_keys.is_empty() || batch::preload(&mut conn, &mut rows, &late_keys, None, known).is_ok(), waited_us)
                }
                Err(_) => (false, 0),
            }
        };
        batches.contended = waited_us > OTHER_BATCH_US;
        let read = started.elapsed();
        let ran = ran && members.iter_mut().all(|m| m.run(&mut conn, &mut rows));
        let positions = rows.kept_positions();
        let ran = ran && batch::flush(&mut conn, &mut rows).is_ok() && conn.failure.is_none();
        if ran {
            let run = started.elapsed();
            // The writes and COMMIT in one round trip.
            match conn.send_later_then("COMMIT") {
                Ok(()) => {
                    let written = started.elapsed();
                    batches.markets.committed(rows.into_committed(), positions);
                    self.give_back(pc, true);
                    let metrics = crate::metrics::metrics();
                    metrics.pg_batch_size.observe(members.len() as f64);
                    metrics.pg_batch_seconds.observe(written.as_secs_f64());
                    let lock = std::time::Duration::from_micros(u64::try_from(waited_us).unwrap_or(0)).min(read);
                    for (phase, seconds) in [("lock", lock), ("read", read - lock), ("run", run - read), ("write", written - run)] {
                        metrics.pg_batch_phase_seconds.get_or_create(&[("phase", phase)]).inc_by(seconds.as_secs_f64());
                    }
                    members.into_iter().for_each(|m| m.answer(Ok(())));
                    return;
                }
                // The server refused a write or the COMMIT (a lost race among them) and
                // committed nothing: run each trade again below. Without the server's word
                // (a lost connection) the outcome is unknown, and is reported as it is.
                Err(e) if e.code().is_some() => {}
                Err(e) => {
                    let healthy = pc.client.batch_execute("ROLLBACK").is_ok();
                    self.give_back(pc, healthy);
                    let e = pg_error(&e);
                    members.into_iter().for_each(|m| m.answer(Err(&e)));
                    return;
                }
            }
        }
        let healthy = pc.client.batch_execute("ROLLBACK").is_ok();
        self.give_back(pc, healthy);
        crate::metrics::metrics().write_retries.get_or_create(&[("cause", "batch")]).inc();
        for member in members {
            member.run_alone(self);
        }
    }
}
