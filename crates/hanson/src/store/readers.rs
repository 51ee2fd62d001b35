//! Long-lived reader threads fed by one queue, as both backends run their reads. A fixed set
//! of threads keeps each one's connection state and the allocator's per-thread heaps warm,
//! and a reader that ends one read takes the next from the queue without sleeping. Blocking
//! tasks instead kept starting threads on SQLite (fresh memory faulted in under load) and
//! woke a parked thread for every read on PostgreSQL (`docs/performance.md`).

use std::sync::{mpsc, Arc, Mutex};

use crate::error::{Error, Result};

/// The queue the reader threads share.
pub(crate) struct ReadQueue<J>(Mutex<mpsc::Receiver<J>>);

impl<J> ReadQueue<J> {
    /// The next job, waited for; None once every sender is gone.
    pub(crate) fn next(&self) -> Option<J> {
        // The lock is held only while waiting for the next job, never while running one.
        self.0.lock().ok()?.recv().ok()
    }
}

/// Starts `count` threads named `{name}-{i}`, each running `reader` on the shared queue until
/// it returns; the threads end once the returned sender (and its clones) are gone.
pub(crate) fn start<J, R>(name: &str, count: usize, reader: R) -> Result<mpsc::Sender<J>>
where
    J: Send + 'static,
    R: Fn(&ReadQueue<J>) + Clone + Send + 'static,
{
    let (jobs, queue) = mpsc::channel::<J>();
    let queue = Arc::new(ReadQueue(Mutex::new(queue)));
    for i in 0..count {
        let (queue, reader) = (queue.clone(), reader.clone());
        std::thread::Builder::new().name(format!("{name}-{i}")).spawn(move || reader(&queue)).map_err(Error::internal)?;
    }
    Ok(jobs)
}
