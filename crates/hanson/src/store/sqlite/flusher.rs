//! The flusher thread: makes commits durable (an fdatasync of the WAL) before any of their
//! replies, while the writer runs the next batch.

use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc, OnceLock};

use super::Finish;
use crate::error::{Error, Result};

/// Hands committed batches to the flusher thread, which syncs the WAL and then replies.
pub(super) struct Flusher {
    pub(super) batches: mpsc::Sender<Vec<Finish>>,
    pub(super) failed: Arc<OnceLock<String>>,
}

impl Flusher {
    pub(super) fn start(wal: PathBuf) -> Result<Flusher> {
        let (batches, committed) = mpsc::channel::<Vec<Finish>>();
        let failed = Arc::new(OnceLock::new());
        let failure = failed.clone();
        std::thread::Builder::new()
            .name("sqlite-flusher".into())
            .spawn(move || run_flusher(&wal, &committed, &failure))
            .map_err(Error::internal)?;
        Ok(Flusher { batches, failed })
    }

    pub(super) fn submit(&self, finishers: Vec<Finish>) {
        if let Err(mpsc::SendError(finishers)) = self.batches.send(finishers) {
            for finish in finishers {
                finish(Err("the flusher stopped".into()));
            }
        }
    }

    pub(super) fn failure(&self) -> Option<String> {
        self.failed.get().cloned()
    }
}

/// Syncs the WAL once for every committed batch queued so far, then replies to their jobs.
/// Ends when the writer is gone and every batch has been flushed.
pub(super) fn run_flusher(wal: &Path, committed: &mpsc::Receiver<Vec<Finish>>, failed: &OnceLock<String>) {
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
pub(super) struct WalFile {
    pub(super) file: std::fs::File,
    pub(super) id: (u64, u64),
}

pub(super) fn file_id(meta: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

/// fdatasync of the WAL, as SQLite's own commit sync does. The WAL is reopened if it is not
/// the file open here (it is deleted when the last connection of any process closes); the
/// first sync of a newly opened WAL also syncs its directory entry.
pub(super) fn sync_wal(wal: &Path, open: &mut Option<WalFile>) -> std::io::Result<()> {
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
