//! SQLite backend: one writer thread with group commit, a flusher thread that makes commits
//! durable, a checkpoint thread that copies the WAL into the database, and reader threads
//! that each own a read-only connection.
//!
//! Every write is a job; the writer drains the queued jobs into one transaction and commits
//! once (`writer`). A job runs inside its own SAVEPOINT, and one that fails rolls back to it
//! and leaves no trace; trades instead check before writing (`Undo::WholeBatch`) and keep the
//! rows they share in memory until the batch ends (`batch`). A job's reply is sent only after
//! an fsync of the WAL that began after its COMMIT returned (`flusher`): the sync
//! `synchronous=FULL` makes inside each COMMIT, moved to the flusher so that the writer runs
//! the next batch while the disk flushes the last one, and one flush covers every commit made
//! since the previous one. A committed batch is visible to readers from its COMMIT, up to one
//! flush before it is durable.

mod checkpoints;
mod conn;
mod files;
mod flusher;
#[cfg(test)]
mod tests;
mod wal_writes;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc};

use rusqlite::{Connection, OpenFlags};
use tokio::sync::oneshot;

use crate::error::{Error, Result};
use crate::store::batch::BatchRows;
use crate::store::readers::{self, ReadQueue};
use crate::store::sql::Conn;
use checkpoints::{note_wal_frames, Checkpointer, WAL_SIZE_LIMIT};
use conn::{run_cached, SqliteConn};
pub(crate) use files::{backup, existing, hold_for_serving, read_file, shown};
use flusher::Flusher;
use writer::run_writer;

const MIGRATIONS: &[(i64, &str)] = &[
    (1, include_str!("../../../migrations/sqlite/0001_foundation.sql")),
    (2, include_str!("../../../migrations/sqlite/0002_auth.sql")),
    (3, include_str!("../../../migrations/sqlite/0003_trading.sql")),
    (4, include_str!("../../../migrations/sqlite/0004_lean_indexes.sql")),
    (5, include_str!("../../../migrations/sqlite/0005_price_volume_totals.sql")),
    (6, include_str!("../../../migrations/sqlite/0006_market_search.sql")),
    (7, include_str!("../../../migrations/sqlite/0007_market_sort_indexes.sql")),
    (
        8,
        concat!(
            include_str!("../../../migrations/sqlite/0008_price_candles.sql"),
            include_str!("../../../migrations/price_candles_backfill_0008.sql")
        ),
    ),
    (9, include_str!("../../../migrations/sqlite/0009_market_set_version.sql")),
    (10, include_str!("../../../migrations/sqlite/0010_market_filter_sort_indexes.sql")),
    (11, include_str!("../../../migrations/sqlite/0011_search_revisions.sql")),
    (12, include_str!("../../../migrations/sqlite/0012_events.sql")),
    (13, include_str!("../../../migrations/sqlite/0013_webhooks.sql")),
    (14, include_str!("../../../migrations/sqlite/0014_search_versions.sql")),
    (15, include_str!("../../../migrations/sqlite/0015_trade_record_keys.sql")),
    (16, include_str!("../../../migrations/sqlite/0016_market_rows_without_volume_indexes.sql")),
    (17, include_str!("../../../migrations/sqlite/0017_positions_by_pair_only.sql")),
    (18, include_str!("../../../migrations/sqlite/0018_append_only_records_without_primary_keys.sql")),
    (19, include_str!("../../../migrations/sqlite/0019_market_operations.sql")),
    (
        20,
        concat!(
            include_str!("../../../migrations/sqlite/0020_market_data.sql"),
            include_str!("../../../migrations/price_candles_backfill.sql")
        ),
    ),
    (21, include_str!("../../../migrations/sqlite/0021_siwe_nonces.sql")),
    (22, include_str!("../../../migrations/sqlite/0022_webhook_deliveries_ended.sql")),
    (23, include_str!("../../../migrations/sqlite/0023_webhook_deliveries_endpoint_due.sql")),
];

/// Most jobs one commit carries. Commits no longer wait for the disk, so small batches are
/// cheap; they let replies stream back while later jobs run, instead of every client
/// waiting for one large batch and then sending its next request at once.
const MAX_BATCH: usize = 32;

const READERS: usize = 8;

/// Address space mapped per connection (the file is mapped once by the kernel, shared).
const MMAP_BYTES: i64 = 1 << 32;

/// A job's reply, given whether its batch committed and is durable.
type Finish = Box<dyn FnOnce(Result<(), String>) + Send>;
/// Given the writer's connection and the batch's copies, runs; given none, was refused
/// before running.
type Job = Box<dyn FnOnce(Option<(&mut SqliteConn, &mut BatchRows)>) -> Ran + Send>;

/// A job that has run: its reply, sent once the batch is durable or has failed, and whether
/// it failed after changing rows that only a rollback of the whole batch can undo.
struct Ran {
    finish: Finish,
    failed_after_writing: bool,
}

/// A read, given the reader's connection (or why it could not be opened).
type ReadJob = Box<dyn FnOnce(Result<&Connection>) + Send>;

#[derive(Clone)]
pub(crate) struct SqliteBackend {
    jobs: mpsc::Sender<Job>,
    /// Taken by READERS long-lived threads (`readers`), each with a connection of its own.
    reads: mpsc::Sender<ReadJob>,
    /// Held by every handle; the optimizer thread ends when the last handle is gone.
    _alive: Arc<()>,
}

/// `sqlite://path` or `sqlite:path` -> path.
pub(crate) fn path_from_url(url: &str) -> Option<PathBuf> {
    let rest = url.strip_prefix("sqlite://").or_else(|| url.strip_prefix("sqlite:"))?;
    let rest = rest.split('?').next().unwrap_or(rest);
    (!rest.is_empty()).then(|| PathBuf::from(rest))
}

fn open(path: &Path, read_only: bool) -> Result<Connection> {
    open_as(path, read_only, None)
}

/// The writer's connection: a commit's WAL frames passed on in a few large writes (`wal_writes`).
fn open_writer(path: &Path) -> Result<Connection> {
    wal_writes::register()?;
    open_as(path, false, Some(wal_writes::NAME))
}

fn open_as(path: &Path, read_only: bool, vfs: Option<&str>) -> Result<Connection> {
    let flags = if read_only {
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX
    } else {
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX
    };
    let conn = match vfs {
        Some(vfs) => Connection::open_with_flags_and_vfs(path, flags, vfs)?,
        None => Connection::open_with_flags(path, flags)?,
    };
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    if !read_only {
        conn.pragma_update(None, "journal_mode", "WAL")?;
    }
    // COMMIT writes the WAL without syncing it; the flusher thread syncs it before any reply
    // (see the module docs). Checkpoints still sync the WAL before copying it and the
    // database file after.
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    // Savepoint sub-journals live in memory: writing them to a temp file cost the writer
    // about a third of its time under load.
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    // Reads of the main file come straight from the page mapping instead of being copied
    // into each connection's page cache.
    conn.pragma_update(None, "mmap_size", MMAP_BYTES)?;
    conn.set_prepared_statement_cache_capacity(256);
    // Without the planner stability guarantee, a statement whose plan consulted the STAT4
    // samples for a bound value is parsed and planned again each time that value changes,
    // which made cached statements cost as much as fresh ones.
    conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
    Ok(conn)
}

fn migrate(conn: &Connection) -> Result<()> {
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let result = (|| -> Result<()> {
        conn.execute_batch("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)")?;
        for (version, sql) in MIGRATIONS {
            let applied: i64 = conn.query_row("SELECT count(*) FROM schema_migrations WHERE version = ?1", [version], |r| r.get(0))?;
            if applied == 0 {
                conn.execute_batch(sql)?;
                conn.execute(
                    "INSERT INTO schema_migrations (version, applied_at) VALUES (?1, ?2)",
                    rusqlite::params![version, crate::domain::time::now_micros()],
                )?;
            }
        }
        Ok(())
    })();
    match result {
        Ok(()) => conn.execute_batch("COMMIT")?,
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            return Err(e);
        }
    }
    Ok(())
}

impl SqliteBackend {
    /// Opens (creating if missing) and migrates the database, then starts the writer thread.
    pub(crate) fn open(url: &str) -> Result<Self> {
        let path = path_from_url(url).ok_or_else(|| Error::internal(format!("not a sqlite URL: {url}")))?;
        let cannot = |e: Error| Error::Unavailable(format!("cannot open {} as a Hanson database: {}", shown(&path), plain(&e)));
        let writer = open_writer(&path).map_err(cannot)?;
        migrate(&writer).map_err(cannot)?;
        // Planner statistics: without them SQLite picks poor indexes for combined filters
        // and sorts. The optimizer thread refreshes them as the data grows.
        writer.execute_batch("PRAGMA optimize=0x10002")?;
        // Checkpoints run beside the writer or between its batches (see `WalCheckpoints`),
        // never inside a COMMIT.
        writer.pragma_update(None, "wal_autocheckpoint", 0)?;
        writer.pragma_update(None, "journal_size_limit", WAL_SIZE_LIMIT)?;
        writer.wal_hook(Some(note_wal_frames));
        let optimizer = open(&path, false)?;
        let checkpointer = Checkpointer::spawn(open(&path, false)?)?;
        let wal = PathBuf::from(format!("{}-wal", path.display()));
        let flusher = Flusher::start(wal)?;
        let (jobs, queue) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("sqlite-writer".into())
            .spawn(move || run_writer(writer, queue, flusher, checkpointer))
            .map_err(Error::internal)?;
        let alive = Arc::new(());
        let watch = Arc::downgrade(&alive);
        std::thread::Builder::new()
            .name("sqlite-optimize".into())
            .spawn(move || run_optimizer(optimizer, watch))
            .map_err(Error::internal)?;
        let path = Arc::new(path);
        let reads = readers::start("sqlite-reader", READERS, move |queue| run_reader(&path, queue))?;
        Ok(SqliteBackend { jobs, reads, _alive: alive })
    }

    /// Runs `op` in a read transaction (one consistent snapshot) on a reader thread.
    pub(crate) async fn read<T, F>(&self, op: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut dyn Conn) -> Result<T> + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let job: ReadJob = Box::new(move |conn: Result<&Connection>| {
            let result = conn.and_then(|conn| {
                run_cached(conn, "BEGIN")?;
                let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| op(&mut SqliteConn { conn })))
                    .unwrap_or_else(|_| Err(Error::internal("read panicked")));
                let _ = run_cached(conn, "COMMIT");
                result
            });
            let _ = reply.send(result);
        });
        self.reads.send(job).map_err(|_| Error::internal("sqlite readers stopped"))?;
        answer.await.map_err(|_| Error::internal("sqlite reader dropped a read"))?
    }
}

/// Runs read jobs until every handle is gone. The connection is opened at the first job, and
/// again after a failed open.
fn run_reader(path: &Path, queue: &ReadQueue<ReadJob>) {
    let mut conn: Option<Connection> = None;
    while let Some(job) = queue.next() {
        if conn.is_none() {
            match open(path, true) {
                Ok(opened) => conn = Some(opened),
                Err(e) => {
                    job(Err(e));
                    continue;
                }
            }
        }
        if let Some(conn) = &conn {
            job(Ok(conn));
        }
    }
}

/// An error's cause without the "internal: sqlite:" of a 500's log line.
fn plain(e: &Error) -> String {
    match e {
        Error::Internal(cause) => cause.trim_start_matches("sqlite: ").to_string(),
        other => other.to_string(),
    }
}

/// How often the optimizer thread looks whether its backend is still open.
const OPTIMIZER_TICK: std::time::Duration = std::time::Duration::from_millis(200);

/// Planner statistics are refreshed about once a minute (PRAGMA optimize is cheap when
/// nothing changed much).
const OPTIMIZE_EVERY_TICKS: u64 = 300;

/// Ends when the backend is dropped.
fn run_optimizer(conn: Connection, alive: std::sync::Weak<()>) {
    let mut ticks: u64 = 0;
    while alive.strong_count() > 0 {
        std::thread::sleep(OPTIMIZER_TICK);
        ticks += 1;
        if ticks.is_multiple_of(OPTIMIZE_EVERY_TICKS) {
            if let Err(e) = conn.execute_batch("PRAGMA optimize") {
                tracing::warn!(error = %e, "PRAGMA optimize failed");
            }
        }
    }
}
