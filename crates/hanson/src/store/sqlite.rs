//! SQLite backend: one writer thread with group commit, plus reader threads that each own a
//! read-only connection.
//!
//! Every write is a job that runs inside its own SAVEPOINT; the writer drains all queued jobs
//! into one transaction and commits once, so concurrent writes share one fsync. A job's reply
//! is sent only after COMMIT returns (WAL with synchronous=FULL: durable). A job that fails
//! rolls back to its savepoint and leaves no trace.

use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc, Mutex};

use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, OpenFlags, ToSql};
use tokio::sync::oneshot;

use super::sql::{Conn, Dialect, Param, Row, Value};
use crate::error::{Error, Result};

const MIGRATIONS: &[(i64, &str)] = &[
    (1, include_str!("../../migrations/sqlite/0001_foundation.sql")),
    (2, include_str!("../../migrations/sqlite/0002_auth.sql")),
    (3, include_str!("../../migrations/sqlite/0003_trading.sql")),
    (4, include_str!("../../migrations/sqlite/0004_lean_indexes.sql")),
    (5, include_str!("../../migrations/sqlite/0005_price_volume_totals.sql")),
    (6, include_str!("../../migrations/sqlite/0006_market_search.sql")),
    (7, include_str!("../../migrations/sqlite/0007_market_sort_indexes.sql")),
    (8, concat!(include_str!("../../migrations/sqlite/0008_price_candles.sql"), include_str!("../../migrations/price_candles_backfill.sql"))),
    (9, include_str!("../../migrations/sqlite/0009_market_set_version.sql")),
    (10, include_str!("../../migrations/sqlite/0010_market_filter_sort_indexes.sql")),
    (11, include_str!("../../migrations/sqlite/0011_search_revisions.sql")),
];

/// Most jobs one commit carries; bounds the latency a large batch adds to its first job.
const MAX_BATCH: usize = 512;
const READERS: usize = 8;
/// Address space mapped per connection (the file is mapped once by the kernel, shared).
const MMAP_BYTES: i64 = 1 << 32;

type Finish = Box<dyn FnOnce(Result<(), String>) + Send>;
type Job = Box<dyn FnOnce(&mut SqliteConn) -> Finish + Send>;
/// A read, given the reader's connection (or why it could not be opened).
type ReadJob = Box<dyn FnOnce(Result<&Connection>) + Send>;

#[derive(Clone)]
pub struct SqliteBackend {
    jobs: mpsc::Sender<Job>,
    /// Taken by READERS long-lived threads: a fixed set of threads keeps each connection's
    /// statement cache and the allocator's per-thread heaps warm, where a pool of blocking
    /// tasks kept starting threads and faulting in fresh memory under load.
    reads: mpsc::Sender<ReadJob>,
    /// Held by every handle; the checkpoint thread ends when the last handle is gone.
    _alive: Arc<()>,
}

pub struct SqliteConn<'c> {
    conn: &'c Connection,
}

/// `sqlite://path` or `sqlite:path` -> path.
pub fn path_from_url(url: &str) -> Option<PathBuf> {
    let rest = url.strip_prefix("sqlite://").or_else(|| url.strip_prefix("sqlite:"))?;
    let rest = rest.split('?').next().unwrap_or(rest);
    (!rest.is_empty()).then(|| PathBuf::from(rest))
}

fn open(path: &Path, read_only: bool) -> Result<Connection> {
    let flags = if read_only {
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX
    } else {
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX
    };
    let conn = Connection::open_with_flags(path, flags)?;
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    if !read_only {
        conn.pragma_update(None, "journal_mode", "WAL")?;
    }
    conn.pragma_update(None, "synchronous", "FULL")?;
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
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)",
        )?;
        for (version, sql) in MIGRATIONS {
            let applied: i64 = conn.query_row(
                "SELECT count(*) FROM schema_migrations WHERE version = ?1",
                [version],
                |r| r.get(0),
            )?;
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
    pub fn open(url: &str) -> Result<Self> {
        let path = path_from_url(url)
            .ok_or_else(|| Error::internal(format!("not a sqlite URL: {url}")))?;
        let writer = open(&path, false)?;
        migrate(&writer)?;
        // Planner statistics: without them SQLite picks poor indexes for combined filters
        // and sorts. The checkpointer refreshes them as the data grows.
        writer.execute_batch("PRAGMA optimize=0x10002")?;
        // Checkpoints run on their own connection and thread, not in the writer's commits.
        writer.pragma_update(None, "wal_autocheckpoint", 0)?;
        let checkpointer = open(&path, false)?;
        let (jobs, queue) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("sqlite-writer".into())
            .spawn(move || run_writer(writer, queue))
            .map_err(Error::internal)?;
        let alive = Arc::new(());
        let watch = Arc::downgrade(&alive);
        std::thread::Builder::new()
            .name("sqlite-checkpoint".into())
            .spawn({
                let wal = PathBuf::from(format!("{}-wal", path.display()));
                move || run_checkpoints(checkpointer, wal, watch)
            })
            .map_err(Error::internal)?;
        let (reads, read_queue) = mpsc::channel::<ReadJob>();
        let (read_queue, path) = (Arc::new(Mutex::new(read_queue)), Arc::new(path));
        for i in 0..READERS {
            let (queue, path) = (read_queue.clone(), path.clone());
            std::thread::Builder::new()
                .name(format!("sqlite-reader-{i}"))
                .spawn(move || run_reader(&path, &queue))
                .map_err(Error::internal)?;
        }
        Ok(SqliteBackend { jobs, reads, _alive: alive })
    }

    /// Runs `op` in the next group commit; resolves once that commit is durable.
    pub async fn write<T, F>(&self, op: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut dyn Conn) -> Result<T> + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let job: Job = Box::new(move |conn: &mut SqliteConn| {
            let result = run_in_savepoint(conn, op);
            Box::new(move |committed: Result<(), String>| {
                let outcome = match (result, committed) {
                    (Ok(value), Ok(())) => Ok(value),
                    (Ok(_), Err(cause)) => Err(Error::internal(format!("commit failed: {cause}"))),
                    (Err(e), _) => Err(e),
                };
                let _ = reply.send(outcome);
            })
        });
        self.jobs.send(job).map_err(|_| Error::internal("sqlite writer stopped"))?;
        answer.await.map_err(|_| Error::internal("sqlite writer dropped a job"))?
    }

    /// Runs `op` in a read transaction (one consistent snapshot) on a reader thread.
    pub async fn read<T, F>(&self, op: F) -> Result<T>
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
fn run_reader(path: &Path, queue: &Mutex<mpsc::Receiver<ReadJob>>) {
    let mut conn: Option<Connection> = None;
    loop {
        // The lock is held only while waiting for the next job, never while running one.
        let next = match queue.lock() {
            Ok(queue) => queue.recv(),
            Err(_) => return,
        };
        let Ok(job) = next else { return };
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

fn run_in_savepoint<T>(
    conn: &mut SqliteConn,
    op: impl FnOnce(&mut dyn Conn) -> Result<T>,
) -> Result<T> {
    run_cached(conn.conn, "SAVEPOINT job")?;
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| op(conn)))
        .unwrap_or_else(|_| Err(Error::internal("store operation panicked")));
    if result.is_err() {
        run_cached(conn.conn, "ROLLBACK TO job")?;
    }
    run_cached(conn.conn, "RELEASE job")?;
    result
}

/// Runs a fixed statement through the prepared-statement cache (execute_batch re-parses).
fn run_cached(conn: &Connection, sql: &str) -> Result<()> {
    conn.prepare_cached(sql)?.execute([])?;
    Ok(())
}

fn run_writer(conn: Connection, queue: mpsc::Receiver<Job>) {
    let mut finishers: Vec<Finish> = Vec::with_capacity(MAX_BATCH);
    while let Ok(first) = queue.recv() {
        if let Err(e) = run_cached(&conn, "BEGIN IMMEDIATE") {
            let cause = e.to_string();
            let mut sql_conn = SqliteConn { conn: &conn };
            first(&mut sql_conn)(Err(cause));
            continue;
        }
        let mut sql_conn = SqliteConn { conn: &conn };
        finishers.push(first(&mut sql_conn));
        while finishers.len() < MAX_BATCH {
            match queue.try_recv() {
                Ok(job) => finishers.push(job(&mut sql_conn)),
                Err(_) => break,
            }
        }
        let committed = run_cached(&conn, "COMMIT").map_err(|e| {
            let _ = run_cached(&conn, "ROLLBACK");
            e.to_string()
        });
        for finish in finishers.drain(..) {
            finish(committed.clone());
        }
    }
}

/// How often the checkpointer copies committed WAL frames into the database file.
const CHECKPOINT_INTERVAL: std::time::Duration = std::time::Duration::from_millis(200);

/// Planner statistics are refreshed about once a minute (PRAGMA optimize is cheap when
/// nothing changed much).
const OPTIMIZE_EVERY_TICKS: u64 = 300;

/// Past this size the checkpointer makes the writer start the WAL over.
const WAL_RESTART_BYTES: u64 = 64 << 20;

/// PASSIVE checkpoints never block the writer or readers. Under steady writes the WAL would
/// never start over, though (a new frame always arrives before the copy completes), so past
/// a size a RESTART checkpoint briefly waits for the writer and resets it. Ends when the
/// backend is dropped.
fn run_checkpoints(conn: Connection, wal: PathBuf, alive: std::sync::Weak<()>) {
    let mut ticks: u64 = 0;
    while alive.strong_count() > 0 {
        std::thread::sleep(CHECKPOINT_INTERVAL);
        let large = std::fs::metadata(&wal).map(|m| m.len() > WAL_RESTART_BYTES).unwrap_or(false);
        let mode = if large { "PRAGMA wal_checkpoint(RESTART)" } else { "PRAGMA wal_checkpoint(PASSIVE)" };
        if let Err(e) = conn.query_row(mode, [], |_| Ok(())) {
            tracing::warn!(error = %e, "WAL checkpoint failed");
        }
        ticks += 1;
        if ticks % OPTIMIZE_EVERY_TICKS == 0 {
            if let Err(e) = conn.execute_batch("PRAGMA optimize") {
                tracing::warn!(error = %e, "PRAGMA optimize failed");
            }
        }
    }
}

/// `$1` -> `?1`: store SQL is written in PostgreSQL's placeholder style.
fn translate(sql: &str) -> std::borrow::Cow<'_, str> {
    if !sql.contains('$') {
        return std::borrow::Cow::Borrowed(sql);
    }
    std::borrow::Cow::Owned(sql.replace('$', "?"))
}

impl ToSql for Param<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        use rusqlite::types::Value as V;
        Ok(match self {
            Param::Null => ToSqlOutput::Owned(V::Null),
            Param::Int(v) => ToSqlOutput::Owned(V::Integer(*v)),
            Param::Text(s) => ToSqlOutput::Borrowed(ValueRef::Text(s.as_bytes())),
            Param::Money(m) => ToSqlOutput::Owned(V::Text(m.to_string())),
            Param::Blob(b) => ToSqlOutput::Borrowed(ValueRef::Blob(b)),
        })
    }
}

impl Conn for SqliteConn<'_> {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn exec(&mut self, sql: &str, params: &[Param<'_>]) -> Result<u64> {
        let mut stmt = self.conn.prepare_cached(&translate(sql))?;
        let changed = stmt.execute(rusqlite::params_from_iter(params.iter()))?;
        Ok(changed as u64)
    }

    fn query(&mut self, sql: &str, params: &[Param<'_>]) -> Result<Vec<Row>> {
        let mut stmt = self.conn.prepare_cached(&translate(sql))?;
        let columns = stmt.column_count();
        let mut rows = stmt.query(rusqlite::params_from_iter(params.iter()))?;
        let mut out = Vec::new();
        while let Some(row) = rows.next()? {
            let mut values = Vec::with_capacity(columns);
            for i in 0..columns {
                values.push(match row.get_ref(i)? {
                    ValueRef::Null => Value::Null,
                    ValueRef::Integer(v) => Value::Int(v),
                    ValueRef::Real(v) => Value::Text(v.to_string()),
                    ValueRef::Text(t) => Value::Text(match std::str::from_utf8(t) {
                        Ok(text) => text.to_owned(),
                        Err(_) => String::from_utf8_lossy(t).into_owned(),
                    }),
                    ValueRef::Blob(b) => Value::Blob(b.to_vec()),
                });
            }
            out.push(Row(values));
        }
        Ok(out)
    }
}
