//! Keeping the WAL short: checkpoints copy it into the database beside the writer, on a
//! thread of their own, and the writer finishes the tail between its batches.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};

use rusqlite::Connection;

use crate::error::{Error, Result};

/// WAL frames (pages) after which a checkpoint starts: about 16 MiB.
pub(super) const CHECKPOINT_FRAMES: i64 = 4000;

/// Frames the writer copies itself to finish a checkpoint: more, and the checkpointer goes
/// again (a writer's checkpoint holds up its next batch).
pub(super) const TAIL_FRAMES: i64 = 100;

/// Past this the writer finishes the checkpoint itself however long it takes, should the
/// checkpointer fall behind the commits.
pub(super) const MAX_FRAMES: i64 = 4 * CHECKPOINT_FRAMES;

/// A WAL file that once grew past this (readers holding an old snapshot kept it from
/// starting over) is cut back to it when it next starts over.
pub(super) const WAL_SIZE_LIMIT: i64 = 64 << 20;

thread_local! {
    /// Frames in the WAL after the last commit on this thread, from SQLite's WAL hook.
    pub(super) static WAL_FRAMES: std::cell::Cell<i64> = const { std::cell::Cell::new(0) };
}

pub(super) fn note_wal_frames(_: &rusqlite::hooks::Wal, frames: std::ffi::c_int) -> rusqlite::Result<()> {
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
pub(super) struct WalCheckpoints {
    /// Frames at the last commit; fewer now means the WAL started over.
    pub(super) last_frames: i64,
    /// Start a checkpoint when the WAL reaches this many frames; 0 until the first commit.
    pub(super) next_at: i64,
    pub(super) checkpointer: Checkpointer,
    /// The WAL's frames when the checkpointer last began: it copies those; the writer copies
    /// the rest once few enough, else the checkpointer goes again.
    pub(super) started_at: Option<i64>,
}

impl WalCheckpoints {
    pub(super) fn new(checkpointer: Checkpointer) -> Self {
        WalCheckpoints { last_frames: 0, next_at: 0, checkpointer, started_at: None }
    }

    pub(super) fn after_commit(&mut self, conn: &Connection) {
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

pub(super) fn checkpoint(conn: &Connection) {
    if let Err(e) = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(())) {
        tracing::warn!(error = %e, "WAL checkpoint failed");
    }
}

/// The thread that copies the WAL into the database beside the writer (see `WalCheckpoints`).
pub(super) struct Checkpointer {
    pub(super) start: mpsc::Sender<()>,
    /// From a start until that checkpoint has ended.
    pub(super) busy: Arc<AtomicBool>,
}

impl Checkpointer {
    pub(super) fn spawn(conn: Connection) -> Result<Self> {
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

    pub(super) fn busy(&self) -> bool {
        self.busy.load(Ordering::Acquire)
    }

    /// Whether the thread took the checkpoint (it is gone only if it panicked).
    pub(super) fn start(&self) -> bool {
        self.busy.store(true, Ordering::Release);
        let started = self.start.send(()).is_ok();
        if !started {
            self.busy.store(false, Ordering::Release);
        }
        started
    }
}
