//! The writer thread: every write is a job, and the writer drains the queued jobs into one
//! transaction and commits once (group commit).

use std::sync::mpsc;

use rusqlite::Connection;
use tokio::sync::oneshot;

use super::checkpoints::{Checkpointer, WalCheckpoints, WAL_FRAMES};
use super::conn::{run_cached, SqliteConn};
use super::flusher::Flusher;
use super::{Finish, Job, Ran, SqliteBackend, MAX_BATCH};
use crate::error::{Error, Result};
use crate::store::batch::{self, BatchRows, CommittedRows};
use crate::store::settings::Undo;
use crate::store::sql::Conn;

impl SqliteBackend {
    /// Runs `op` in the next group commit; resolves once that commit is flushed to disk.
    /// `op` is given the batch's copies when it runs without a savepoint (a trade).
    pub(crate) async fn write<T, F>(&self, undo: Undo, op: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut dyn Conn, Option<&mut BatchRows>) -> Result<T> + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let job: Job = Box::new(move |writer: Option<(&mut SqliteConn, &mut BatchRows)>| {
            let (result, failed_after_writing) = match (writer, undo) {
                (None, _) => (None, false),
                // Such a write may read what the batch's trades keep in memory, so that is
                // written first; it runs without copies, which its savepoint could not undo.
                (Some((conn, rows)), Undo::Savepoint) => match batch::flush(conn, rows) {
                    Ok(()) => {
                        let result = run_in_savepoint(conn, |c| op(c, None));
                        rows.forget_committed();
                        (Some(result), false)
                    }
                    Err(e) => (Some(Err(e)), true),
                },
                (Some((conn, rows)), Undo::WholeBatch) => {
                    let before = (conn.changes(), rows.changes());
                    let result = run_caught(conn, |c| op(c, Some(&mut *rows)));
                    let failed_after_writing = result.is_err() && (conn.changes(), rows.changes()) != before;
                    (Some(result), failed_after_writing)
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
            Ran { finish, failed_after_writing }
        });
        self.jobs.send(job).map_err(|_| Error::internal("sqlite writer stopped"))?;
        answer.await.map_err(|_| Error::internal("sqlite writer dropped a job"))?
    }
}

fn run_caught<T>(conn: &mut SqliteConn, op: impl FnOnce(&mut dyn Conn) -> Result<T>) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| op(conn))).unwrap_or_else(|_| Err(Error::internal("store operation panicked")))
}

fn run_in_savepoint<T>(conn: &mut SqliteConn, op: impl FnOnce(&mut dyn Conn) -> Result<T>) -> Result<T> {
    run_cached(conn.conn, "SAVEPOINT job")?;
    let result = run_caught(conn, op);
    if result.is_err() {
        run_cached(conn.conn, "ROLLBACK TO job")?;
    }
    run_cached(conn.conn, "RELEASE job")?;
    result
}

/// Runs group commits until every sender of jobs is gone.
pub(super) fn run_writer(conn: Connection, queue: mpsc::Receiver<Job>, flusher: Flusher, checkpointer: Checkpointer) {
    let mut checkpoints = WalCheckpoints::new(checkpointer);
    let metrics = crate::metrics::metrics();
    let page_size: i64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0)).unwrap_or(4096);
    // Copies as the last commits left them, and the data version they were read at: another
    // connection's commit (a CLI command, say) changes it.
    let mut committed_rows = CommittedRows::default();
    let mut committed_version = None;
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
        if version.is_none() || version != committed_version {
            committed_rows = CommittedRows::default();
        }
        committed_version = version;
        let mut rows = BatchRows::starting_from(std::mem::take(&mut committed_rows));
        let mut sql_conn = SqliteConn { conn: &conn };
        let mut finishers: Vec<Finish> = Vec::with_capacity(MAX_BATCH);
        let ran = first(Some((&mut sql_conn, &mut rows)));
        // Some errors (a full disk, I/O) make SQLite roll the whole transaction back itself;
        // later jobs would then run outside any transaction.
        let mut failed = ran.failed_after_writing || conn.is_autocommit();
        finishers.push(ran.finish);
        while !failed && finishers.len() < MAX_BATCH {
            match queue.try_recv() {
                Ok(job) => {
                    let ran = job(Some((&mut sql_conn, &mut rows)));
                    failed = ran.failed_after_writing || conn.is_autocommit();
                    finishers.push(ran.finish);
                }
                Err(_) => break,
            }
        }
        let committed = if failed {
            Err("an operation of the same group commit failed after writing; all were rolled back".to_string())
        } else {
            batch::flush(&mut sql_conn, &mut rows)
                .map_err(|e| format!("the rows the group commit kept in memory could not be written: {e}"))
                .and_then(|()| run_cached(&conn, "COMMIT").map_err(|e| e.to_string()))
        };
        match committed {
            Ok(()) => {
                committed_rows = rows.into_committed();
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
