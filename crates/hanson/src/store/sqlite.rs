//! SQLite backend: one writer thread with group commit, a flusher thread that makes commits
//! durable, a checkpoint thread that copies the WAL into the database, and reader threads
//! that each own a read-only connection.
//!
//! Every write is a job; the writer drains the queued jobs into one transaction and commits
//! once. A job runs inside its own SAVEPOINT, and one that fails rolls back to it and leaves
//! no trace; bets and sells instead check before writing (`Undo::WholeBatch`) and keep the
//! rows they share in memory until the batch ends (`hot`). A job's reply is sent only after
//! an fsync of the WAL that began after its COMMIT returned: the sync `synchronous=FULL`
//! makes inside each COMMIT, moved to the flusher so that the writer runs the next batch
//! while the disk flushes the last one, and one flush covers every commit made since the
//! previous one. A committed batch is visible to readers from its COMMIT, up to one flush
//! before it is durable.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, OnceLock};

use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, OpenFlags, ToSql};
use tokio::sync::oneshot;

mod wal_writes;

use super::hot::{Carried, HotRows};
use super::readers::{self, ReadQueue};
use super::sql::{Conn, Dialect, Param, Row, Value};
use super::settings::Undo;
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
    (12, include_str!("../../migrations/sqlite/0012_events.sql")),
    (13, include_str!("../../migrations/sqlite/0013_webhooks.sql")),
    (14, include_str!("../../migrations/sqlite/0014_search_versions.sql")),
    (15, include_str!("../../migrations/sqlite/0015_trade_record_keys.sql")),
    (16, include_str!("../../migrations/sqlite/0016_market_rows_without_volume_indexes.sql")),
    (17, include_str!("../../migrations/sqlite/0017_positions_by_pair_only.sql")),
    (18, include_str!("../../migrations/sqlite/0018_append_only_records_without_primary_keys.sql")),
];

/// Most jobs one commit carries. Commits no longer wait for the disk, so small batches are
/// cheap; they let replies stream back while later jobs run, instead of every client
/// waiting for one large batch and then sending its next request at once.
const MAX_BATCH: usize = 32;
const READERS: usize = 8;
/// Address space mapped per connection (the file is mapped once by the kernel, shared).
const MMAP_BYTES: i64 = 1 << 32;

type Finish = Box<dyn FnOnce(Result<(), String>) + Send>;
/// Given the writer's connection, runs; given none, was refused before running.
type Job = Box<dyn FnOnce(Option<&mut SqliteConn>) -> Ran + Send>;

/// A job that has run: its reply, sent once the batch is durable or has failed, and whether
/// it failed after changing rows that only a rollback of the whole batch can undo.
struct Ran {
    finish: Finish,
    spoiled: bool,
}
/// A read, given the reader's connection (or why it could not be opened).
type ReadJob = Box<dyn FnOnce(Result<&Connection>) + Send>;

#[derive(Clone)]
pub struct SqliteBackend {
    jobs: mpsc::Sender<Job>,
    /// Taken by READERS long-lived threads (`readers`), each with a connection of its own.
    reads: mpsc::Sender<ReadJob>,
    /// Held by every handle; the optimizer thread ends when the last handle is gone.
    _alive: Arc<()>,
}

pub struct SqliteConn<'c> {
    conn: &'c Connection,
    /// The writer's, for one group commit.
    hot: Option<HotRows>,
}

/// `sqlite://path` or `sqlite:path` -> path.
pub fn path_from_url(url: &str) -> Option<PathBuf> {
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
        let writer = open_writer(&path)?;
        migrate(&writer)?;
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

    /// Runs `op` in the next group commit; resolves once that commit is flushed to disk.
    pub async fn write<T, F>(&self, undo: Undo, op: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut dyn Conn) -> Result<T> + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let job: Job = Box::new(move |conn: Option<&mut SqliteConn>| {
            let (result, spoiled) = match (conn, undo) {
                (None, _) => (None, false),
                // Such a write may read what the batch's trades keep in memory, so that is
                // written first; it runs without copies, which its savepoint could not undo.
                (Some(conn), Undo::Savepoint) => match super::hot::flush(conn) {
                    Ok(()) => {
                        let mut hot = conn.hot.take();
                        let result = run_in_savepoint(conn, op);
                        if let Some(hot) = &mut hot {
                            hot.forget_carried();
                        }
                        conn.hot = hot;
                        (Some(result), false)
                    }
                    Err(e) => (Some(Err(e)), true),
                },
                (Some(conn), Undo::WholeBatch) => {
                    let changes = conn.changes();
                    let result = run_caught(conn, op);
                    let spoiled = result.is_err() && conn.changes() != changes;
                    (Some(result), spoiled)
                }
            };
            let finish: Finish = Box::new(move |committed: Result<(), String>| {
                let outcome = match (result, committed) {
                    (Some(Ok(value)), Ok(())) => Ok(value),
                    (Some(Err(e)), _) => Err(e),
                    (_, Err(cause)) => Err(Error::internal(format!("not written: {cause}"))),
                    (None, Ok(())) => Err(Error::internal("not written")),
                };
                let _ = reply.send(outcome);
            });
            Ran { finish, spoiled }
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
                let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| op(&mut SqliteConn { conn, hot: None })))
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

fn run_caught<T>(conn: &mut SqliteConn, op: impl FnOnce(&mut dyn Conn) -> Result<T>) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| op(conn)))
        .unwrap_or_else(|_| Err(Error::internal("store operation panicked")))
}

fn run_in_savepoint<T>(
    conn: &mut SqliteConn,
    op: impl FnOnce(&mut dyn Conn) -> Result<T>,
) -> Result<T> {
    run_cached(conn.conn, "SAVEPOINT job")?;
    let result = run_caught(conn, op);
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

fn run_writer(conn: Connection, queue: mpsc::Receiver<Job>, flusher: Flusher, checkpointer: Checkpointer) {
    let mut checkpoints = WalCheckpoints::new(checkpointer);
    let metrics = crate::metrics::metrics();
    let page_size: i64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0)).unwrap_or(4096);
    // Copies as the last commits left them (`HotRows::carrying`), and the data version they
    // were read at: another connection's commit (a CLI command, say) changes it.
    let mut carried = Carried::default();
    let mut carried_version = None;
    while let Ok(first) = queue.recv() {
        let started = std::time::Instant::now();
        // After a failed flush nothing more is written: the disk may have dropped data that
        // SQLite believes is on it.
        let refused = match flusher.failure() {
            Some(cause) => Err(format!("the database could not be flushed to disk ({cause}); restart the service")),
            None => run_cached(&conn, "BEGIN IMMEDIATE").map_err(|e| e.to_string()),
        };
        if let Err(cause) = refused {
            (first(None).finish)(Err(cause));
            continue;
        }
        // Read once the write lock is held: no other connection can commit after it.
        let version = data_version(&conn);
        if version.is_none() || version != carried_version {
            carried = Carried::default();
        }
        carried_version = version;
        let mut sql_conn = SqliteConn { conn: &conn, hot: Some(HotRows::carrying(std::mem::take(&mut carried))) };
        let mut finishers: Vec<Finish> = Vec::with_capacity(MAX_BATCH);
        let ran = first(Some(&mut sql_conn));
        // Some errors (a full disk, I/O) make SQLite roll the whole transaction back itself;
        // later jobs would then run outside any transaction.
        let mut spoiled = ran.spoiled || conn.is_autocommit();
        finishers.push(ran.finish);
        while !spoiled && finishers.len() < MAX_BATCH {
            match queue.try_recv() {
                Ok(job) => {
                    let ran = job(Some(&mut sql_conn));
                    spoiled = ran.spoiled || conn.is_autocommit();
                    finishers.push(ran.finish);
                }
                Err(_) => break,
            }
        }
        let committed = if spoiled {
            Err("an operation of the same group commit failed after writing; all were rolled back".to_string())
        } else {
            super::hot::flush(&mut sql_conn)
                .map_err(|e| format!("the rows the group commit kept in memory could not be written: {e}"))
                .and_then(|()| run_cached(&conn, "COMMIT").map_err(|e| e.to_string()))
        };
        match committed {
            Ok(()) => {
                carried = sql_conn.hot.take().map(HotRows::into_carried).unwrap_or_default();
                metrics.commit_batch_size.observe(finishers.len() as f64);
                metrics.commit_seconds.observe(started.elapsed().as_secs_f64());
                flusher.submit(finishers);
                checkpoints.after_commit(&conn);
                // Each WAL frame is a page and a 24-byte header, after the 32-byte file header.
                let frames = WAL_FRAMES.with(std::cell::Cell::get);
                metrics.wal_bytes.set(if frames == 0 { 0 } else { 32 + frames * (page_size + 24) });
            }
            Err(cause) => {
                let _ = run_cached(&conn, "ROLLBACK");
                for finish in finishers {
                    finish(Err(cause.clone()));
                }
            }
        }
    }
}

/// `PRAGMA data_version`: changes when another connection commits.
fn data_version(conn: &Connection) -> Option<i64> {
    conn.prepare_cached("PRAGMA data_version").ok()?.query_row([], |r| r.get(0)).ok()
}

/// Writes a consistent copy of the database at `url` to `target` (which must not exist) with
/// `VACUUM INTO`, from a read transaction of its own: it runs beside a serving writer and
/// copies the last commit before it began. Returns the copy's size in bytes.
pub fn backup(url: &str, target: &Path) -> Result<u64> {
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        return Err(Error::invalid("database_url", "backup copies SQLite databases; for PostgreSQL use pg_dump (see the README)"));
    }
    let path = path_from_url(url).ok_or_else(|| Error::invalid("database_url", "expected sqlite://PATH"))?;
    if !path.exists() {
        return Err(Error::invalid("database_url", format!("no database at {}", path.display())));
    }
    if target.exists() {
        return Err(Error::invalid("to", format!("{} already exists", target.display())));
    }
    let conn = open(&path, true)?;
    let target_text = target.to_str().ok_or_else(|| Error::invalid("to", "must be a UTF-8 path"))?;
    conn.execute("VACUUM INTO ?1", [target_text])?;
    Ok(std::fs::metadata(target).map_err(Error::internal)?.len())
}

/// Hands committed batches to the flusher thread, which syncs the WAL and then replies.
struct Flusher {
    batches: mpsc::Sender<Vec<Finish>>,
    failed: Arc<OnceLock<String>>,
}

impl Flusher {
    fn start(wal: PathBuf) -> Result<Flusher> {
        let (batches, committed) = mpsc::channel::<Vec<Finish>>();
        let failed = Arc::new(OnceLock::new());
        let failure = failed.clone();
        std::thread::Builder::new()
            .name("sqlite-flusher".into())
            .spawn(move || run_flusher(&wal, &committed, &failure))
            .map_err(Error::internal)?;
        Ok(Flusher { batches, failed })
    }

    fn submit(&self, finishers: Vec<Finish>) {
        if let Err(mpsc::SendError(finishers)) = self.batches.send(finishers) {
            for finish in finishers {
                finish(Err("the flusher stopped".into()));
            }
        }
    }

    fn failure(&self) -> Option<String> {
        self.failed.get().cloned()
    }
}

/// Syncs the WAL once for every committed batch queued so far, then replies to their jobs.
/// Ends when the writer is gone and every batch has been flushed.
fn run_flusher(wal: &Path, committed: &mpsc::Receiver<Vec<Finish>>, failed: &OnceLock<String>) {
    let mut file: Option<WalFile> = None;
    while let Ok(mut waiting) = committed.recv() {
        while let Ok(more) = committed.try_recv() {
            waiting.extend(more);
        }
        let flushed = match failed.get() {
            Some(cause) => Err(cause.clone()),
            None => sync_wal(wal, &mut file).map_err(|e| {
                tracing::error!(error = %e, "WAL fsync failed; refusing further writes");
                let cause = e.to_string();
                let _ = failed.set(cause.clone());
                cause
            }),
        };
        for finish in waiting {
            finish(flushed.clone());
        }
    }
}

/// The open WAL file and its identity, to notice when it was replaced.
struct WalFile {
    file: std::fs::File,
    id: (u64, u64),
}

fn file_id(meta: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

/// fdatasync of the WAL, as SQLite's own commit sync does. The WAL is reopened if it is not
/// the file open here (it is deleted when the last connection of any process closes); the
/// first sync of a newly opened WAL also syncs its directory entry.
fn sync_wal(wal: &Path, open: &mut Option<WalFile>) -> std::io::Result<()> {
    let current = file_id(&std::fs::metadata(wal)?);
    if open.as_ref().is_none_or(|f| f.id != current) {
        let file = std::fs::File::open(wal)?;
        let id = file_id(&file.metadata()?);
        file.sync_data()?;
        if let Some(dir) = wal.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::File::open(dir)?.sync_all()?;
        }
        *open = Some(WalFile { file, id });
        return Ok(());
    }
    open.as_ref().map_or(Ok(()), |f| f.file.sync_data())
}

/// WAL frames (pages) after which a checkpoint starts: about 16 MiB.
const CHECKPOINT_FRAMES: i64 = 4000;
/// Frames the writer copies itself to finish a checkpoint: more, and the checkpointer goes
/// again (a writer's checkpoint holds up its next batch).
const TAIL_FRAMES: i64 = 100;
/// Past this the writer finishes the checkpoint itself however long it takes, should the
/// checkpointer fall behind the commits.
const MAX_FRAMES: i64 = 4 * CHECKPOINT_FRAMES;

/// A WAL file that once grew past this (readers holding an old snapshot kept it from
/// starting over) is cut back to it when it next starts over.
const WAL_SIZE_LIMIT: i64 = 64 << 20;

thread_local! {
    /// Frames in the WAL after the last commit on this thread, from SQLite's WAL hook.
    static WAL_FRAMES: std::cell::Cell<i64> = const { std::cell::Cell::new(0) };
}

fn note_wal_frames(_: &rusqlite::hooks::Wal, frames: std::ffi::c_int) -> rusqlite::Result<()> {
    WAL_FRAMES.with(|f| f.set(frames.into()));
    Ok(())
}

/// Keeps the WAL short. Every page a statement reads is first looked up in the WAL's index,
/// whose hash chains hold one entry per frame of a page: in a long WAL the hot pages' chains
/// grew so long that the lookups took a third of the writer's time, and the growing file
/// made the kernel zero fresh blocks for another sixth. So once the WAL holds
/// `CHECKPOINT_FRAMES`, it is copied into the database (PASSIVE: never waiting for readers)
/// and the writer's next transaction starts it over from the beginning. Each checkpoint
/// copies every page the WAL holds once, however many frames it has: the longer the WAL, the
/// fewer copies of each hot page. The bulk is copied by the checkpointer thread on its own
/// connection while the writer goes on committing; then the writer, between batches, copies
/// the few frames it added meanwhile, so that the WAL is whole in the database and can start
/// over. A checkpoint syncs the WAL before copying and the database file after, as
/// `synchronous=NORMAL` does.
struct WalCheckpoints {
    /// Frames at the last commit; fewer now means the WAL started over.
    last_frames: i64,
    /// Start a checkpoint when the WAL reaches this many frames; 0 until the first commit.
    next_at: i64,
    checkpointer: Checkpointer,
    /// The WAL's frames when the checkpointer last began: it copies those; the writer copies
    /// the rest once few enough, else the checkpointer goes again.
    started_at: Option<i64>,
}

impl WalCheckpoints {
    fn new(checkpointer: Checkpointer) -> Self {
        WalCheckpoints { last_frames: 0, next_at: 0, checkpointer, started_at: None }
    }

    fn after_commit(&mut self, conn: &Connection) {
        let frames = WAL_FRAMES.with(std::cell::Cell::get);
        if frames < self.last_frames || self.next_at == 0 {
            self.next_at = CHECKPOINT_FRAMES;
        }
        self.last_frames = frames;
        if self.checkpointer.busy() {
            return;
        }
        if let Some(started_at) = self.started_at.take() {
            if frames - started_at <= TAIL_FRAMES || frames >= MAX_FRAMES || !self.checkpointer.start() {
                checkpoint(conn);
            } else {
                self.started_at = Some(frames);
            }
            return;
        }
        if frames < self.next_at {
            return;
        }
        // If readers kept part of the WAL from being copied, try again a while later.
        self.next_at = frames + CHECKPOINT_FRAMES;
        if self.checkpointer.start() {
            self.started_at = Some(frames);
        } else {
            checkpoint(conn);
        }
    }
}

fn checkpoint(conn: &Connection) {
    if let Err(e) = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(())) {
        tracing::warn!(error = %e, "WAL checkpoint failed");
    }
}

/// The thread that copies the WAL into the database beside the writer (see `WalCheckpoints`).
struct Checkpointer {
    start: mpsc::Sender<()>,
    /// From a start until that checkpoint has ended.
    busy: Arc<AtomicBool>,
}

impl Checkpointer {
    fn spawn(conn: Connection) -> Result<Self> {
        let (start, starts) = mpsc::channel::<()>();
        let busy = Arc::new(AtomicBool::new(false));
        let done = busy.clone();
        std::thread::Builder::new()
            .name("sqlite-checkpoint".into())
            .spawn(move || {
                while starts.recv().is_ok() {
                    checkpoint(&conn);
                    done.store(false, Ordering::Release);
                }
            })
            .map_err(Error::internal)?;
        Ok(Checkpointer { start, busy })
    }

    fn busy(&self) -> bool {
        self.busy.load(Ordering::Acquire)
    }

    /// Whether the thread took the checkpoint (it is gone only if it panicked).
    fn start(&self) -> bool {
        self.busy.store(true, Ordering::Release);
        let started = self.start.send(()).is_ok();
        if !started {
            self.busy.store(false, Ordering::Release);
        }
        started
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
        if ticks % OPTIMIZE_EVERY_TICKS == 0 {
            if let Err(e) = conn.execute_batch("PRAGMA optimize") {
                tracing::warn!(error = %e, "PRAGMA optimize failed");
            }
        }
    }
}

/// Runs `f` on `sql` with `$1` written as `?1` (store SQL is in PostgreSQL's placeholder
/// style), in a buffer reused across statements of this thread.
fn translated<T>(sql: &str, f: impl FnOnce(&str) -> T) -> T {
    thread_local! {
        static BUFFER: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
    }
    if !sql.contains('$') {
        return f(sql);
    }
    BUFFER.with(|buffer| match buffer.try_borrow_mut() {
        Ok(mut buffer) => {
            buffer.clear();
            for (i, part) in sql.split('$').enumerate() {
                if i > 0 {
                    buffer.push('?');
                }
                buffer.push_str(part);
            }
            f(&buffer)
        }
        // Only if `f` itself translated another statement.
        Err(_) => f(&sql.replace('$', "?")),
    })
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

impl SqliteConn<'_> {
    /// Rows changed so far, in the database and in the copies kept in memory.
    fn changes(&self) -> (u64, u64) {
        (self.conn.total_changes(), self.hot.as_ref().map_or(0, HotRows::changes))
    }
}

impl Conn for SqliteConn<'_> {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn hot(&mut self) -> Option<&mut HotRows> {
        self.hot.as_mut()
    }

    fn exec(&mut self, sql: &str, params: &[Param<'_>]) -> Result<u64> {
        let mut stmt = translated(sql, |sql| self.conn.prepare_cached(sql))?;
        let changed = stmt.execute(rusqlite::params_from_iter(params.iter()))?;
        Ok(changed as u64)
    }

    fn query(&mut self, sql: &str, params: &[Param<'_>]) -> Result<Vec<Row>> {
        let mut stmt = translated(sql, |sql| self.conn.prepare_cached(sql))?;
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

#[cfg(test)]
mod tests {
    use super::*;

    async fn scratch_backend(dir: &tempfile::TempDir) -> SqliteBackend {
        let url = format!("sqlite://{}", dir.path().join("scratch.db").display());
        let backend = SqliteBackend::open(&url).expect("open");
        backend.write(Undo::Savepoint, |c| c.exec("CREATE TABLE scratch (name TEXT PRIMARY KEY)", &[])).await.expect("create");
        backend
    }

    fn insert(c: &mut dyn Conn, name: &str) -> Result<u64> {
        c.exec("INSERT INTO scratch (name) VALUES ($1)", &[Param::Text(name)])
    }

    async fn names(backend: &SqliteBackend) -> Vec<String> {
        backend
            .read(|c| c.query("SELECT name FROM scratch ORDER BY name", &[])?.iter().map(|r| r.text(0)).collect())
            .await
            .expect("read")
    }

    /// Submits `first` and then eight savepoint writes at once, so that they tend to share a
    /// group commit; returns the result of `first` and those of the eight.
    async fn with_batch_mates<F>(backend: &SqliteBackend, first: F) -> (Result<()>, Vec<Result<u64>>)
    where
        F: FnOnce(&mut dyn Conn) -> Result<()> + Send + 'static,
    {
        let first = tokio::spawn({
            let backend = backend.clone();
            async move { backend.write(Undo::WholeBatch, first).await }
        });
        let mates: Vec<_> = (0..8)
            .map(|i| {
                let backend = backend.clone();
                tokio::spawn(async move { backend.write(Undo::Savepoint, move |c| insert(c, &format!("mate{i}"))).await })
            })
            .collect();
        let first = first.await.expect("task");
        let mut results = Vec::new();
        for mate in mates {
            results.push(mate.await.expect("task"));
        }
        (first, results)
    }

    #[tokio::test]
    async fn a_write_without_savepoint_that_fails_after_writing_takes_its_whole_batch_back() {
        let dir = tempfile::tempdir().expect("temp dir");
        let backend = scratch_backend(&dir).await;
        let (spoiled, mates) = with_batch_mates(&backend, |c| {
            insert(c, "spoiled")?;
            Err(Error::rule("late_failure", "failed after writing"))
        })
        .await;
        assert!(matches!(spoiled, Err(Error::Rule { code: "late_failure", .. })), "{spoiled:?}");
        // Each batch mate either failed with nothing written or committed its row.
        let stored = names(&backend).await;
        for (i, result) in mates.iter().enumerate() {
            let name = format!("mate{i}");
            assert_eq!(result.is_ok(), stored.contains(&name), "{name}: {result:?} with {stored:?}");
        }
        assert!(!stored.contains(&"spoiled".to_string()), "{stored:?}");
        // The writer goes on.
        backend.write(Undo::WholeBatch, |c| insert(c, "after")).await.expect("write after");
        assert!(names(&backend).await.contains(&"after".to_string()));
    }

    #[tokio::test]
    async fn a_write_without_savepoint_refused_before_writing_spares_its_batch() {
        let dir = tempfile::tempdir().expect("temp dir");
        let backend = scratch_backend(&dir).await;
        let (refused, mates) = with_batch_mates(&backend, |c| {
            c.query("SELECT name FROM scratch", &[])?;
            Err(Error::rule("refused", "checked before writing"))
        })
        .await;
        assert!(matches!(refused, Err(Error::Rule { code: "refused", .. })), "{refused:?}");
        assert!(mates.iter().all(|r| r.is_ok()), "{mates:?}");
        assert_eq!(names(&backend).await, (0..8).map(|i| format!("mate{i}")).collect::<Vec<_>>());
    }

    #[tokio::test]
    async fn the_writer_keeps_the_wal_short_by_checkpointing_it() {
        let dir = tempfile::tempdir().expect("temp dir");
        let backend = scratch_backend(&dir).await;
        // 300 commits of over 100 fresh pages each (rows and their key index): over 30,000
        // frames without checkpoints.
        for commit in 0..300 {
            backend
                .write(Undo::Savepoint, move |c| {
                    for row in 0..200 {
                        insert(c, &format!("{commit:03}-{row:03}-{}", "x".repeat(1000)))?;
                    }
                    Ok(())
                })
                .await
                .expect("write");
        }
        let wal = std::fs::metadata(dir.path().join("scratch.db-wal")).expect("wal").len();
        let frame = 4096 + 24;
        // Checkpoints come after a commit, so one commit may take the WAL past the bound.
        assert!(wal <= (MAX_FRAMES + CHECKPOINT_FRAMES) as u64 * frame, "the WAL grew to {wal} bytes");
        let count = backend.read(|c| c.query_one("SELECT count(*) FROM scratch", &[])?.int(0)).await.expect("count");
        assert_eq!(count, 60_000);
    }

    #[tokio::test]
    async fn a_write_without_savepoint_that_fails_after_changing_kept_rows_takes_its_batch_back() {
        let dir = tempfile::tempdir().expect("temp dir");
        let backend = scratch_backend(&dir).await;
        // Hold the writer so that the next jobs queue up and share one batch.
        let blocker = tokio::spawn({
            let backend = backend.clone();
            async move { backend.write(Undo::Savepoint, |_| Ok(std::thread::sleep(std::time::Duration::from_millis(200)))).await }
        });
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        let (spoiled, mates) = with_batch_mates(&backend, |c| {
            c.hot().expect("the writer keeps rows for trades").set_balance("wallet:w:t", 1);
            Err(Error::rule("late_failure", "failed after changing a kept balance"))
        })
        .await;
        assert!(matches!(spoiled, Err(Error::Rule { code: "late_failure", .. })), "{spoiled:?}");
        // The blocker shared its batch, which was rolled back whole; the batch took no more
        // jobs after it.
        let blocker = blocker.await.expect("task");
        assert!(matches!(&blocker, Err(e) if e.to_string().contains("failed after writing")), "{blocker:?}");
        let stored = names(&backend).await;
        for (i, result) in mates.iter().enumerate() {
            let name = format!("mate{i}");
            assert_eq!(result.is_ok(), stored.contains(&name), "{name}: {result:?} with {stored:?}");
        }
    }

    #[tokio::test]
    async fn only_writes_without_savepoint_see_kept_rows() {
        let dir = tempfile::tempdir().expect("temp dir");
        let backend = scratch_backend(&dir).await;
        assert!(backend.write(Undo::WholeBatch, |c| Ok(c.hot().is_some())).await.expect("write"));
        assert!(!backend.write(Undo::Savepoint, |c| Ok(c.hot().is_some())).await.expect("write"));
        assert!(!backend.read(|c| Ok(c.hot().is_some())).await.expect("read"));
    }
}
