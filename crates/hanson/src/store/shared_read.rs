//! A read whose answer concurrent callers share.

use std::future::Future;
use std::sync::Mutex;

use tokio::sync::watch;

use crate::error::Result;

/// A read that callers arriving together share. Each caller gets the answer of a read that
/// started after it arrived, so the answer is as current as a read of its own would be; one
/// read serves every caller that arrived while the one before it ran. A caller whose shared
/// read failed reads on its own, and so gets its own error.
pub(crate) struct SharedRead<T> {
    state: Mutex<State>,
    answers: watch::Sender<Answer<T>>,
}

struct State {
    /// Callers so far; each caller's ticket is the count at its arrival.
    arrived: u64,
    /// A caller is reading for the others.
    reading: bool,
}

#[derive(Clone)]
struct Answer<T> {
    /// Tickets up to this one arrived before the read started.
    covers: u64,
    /// None when the read failed.
    value: Option<T>,
}

impl<T: Clone> Default for SharedRead<T> {
    fn default() -> Self {
        SharedRead {
            state: Mutex::new(State { arrived: 0, reading: false }),
            answers: watch::Sender::new(Answer { covers: 0, value: None }),
        }
    }
}

/// The turn of the caller reading for the others. Dropped unfinished (the caller's request
/// was abandoned mid-read), it wakes the waiters, one of whom then reads.
struct Turn<'a, T> {
    owner: &'a SharedRead<T>,
    finished: bool,
}

impl<T> Turn<'_, T> {
    fn finish(mut self, answer: Answer<T>) {
        let mut state = self.owner.lock();
        state.reading = false;
        self.owner.answers.send_replace(answer);
        self.finished = true;
    }
}

impl<T> Drop for Turn<'_, T> {
    fn drop(&mut self) {
        if !self.finished {
            self.owner.lock().reading = false;
            self.owner.answers.send_modify(|_| {});
        }
    }
}

impl<T> SharedRead<T> {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // Two counters and a flag: no invariant a panicking holder could break halfway.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl<T: Clone> SharedRead<T> {
    /// The answer of `read`, run by this caller or by another that started it after this
    /// caller arrived.
    pub(crate) async fn get<F, Fut>(&self, read: F) -> Result<T>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        let mut answers = self.answers.subscribe();
        let ticket = {
            let mut state = self.lock();
            state.arrived += 1;
            state.arrived
        };
        loop {
            let served = {
                let answer = answers.borrow_and_update();
                (answer.covers >= ticket).then(|| answer.value.clone())
            };
            match served {
                Some(Some(value)) => return Ok(value),
                Some(None) => return read().await,
                None => {}
            }
            let covers = {
                let mut state = self.lock();
                (!state.reading).then(|| {
                    state.reading = true;
                    state.arrived
                })
            };
            let Some(covers) = covers else {
                // The sender lives as long as `self`, so this only ends with a new answer or a
                // turn given up.
                let _ = answers.changed().await;
                continue;
            };
            let turn = Turn { owner: self, finished: false };
            let result = read().await;
            turn.finish(Answer { covers, value: result.as_ref().ok().cloned() });
            return result;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;
    use crate::error::Error;

    /// A counter the reads return; it counts the reads that started.
    struct Source(AtomicU64);

    impl Source {
        async fn read(&self) -> Result<u64> {
            let n = self.0.fetch_add(1, Ordering::SeqCst) + 1;
            tokio::time::sleep(Duration::from_millis(20)).await;
            Ok(n)
        }
    }

    /// Every caller gets a read that started after it arrived: a value at least the count of
    /// reads started before it arrived, plus one. Callers arriving together share reads.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn each_caller_gets_a_read_that_started_after_it_arrived() {
        let shared = Arc::new(SharedRead::<u64>::default());
        let source = Arc::new(Source(AtomicU64::new(0)));
        let mut callers = Vec::new();
        for i in 0..200u64 {
            let (shared, source) = (shared.clone(), source.clone());
            callers.push(tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(i % 50)).await;
                let started_before = source.0.load(Ordering::SeqCst);
                let value = shared.get(|| source.read()).await.expect("read");
                (started_before, value)
            }));
        }
        for caller in callers {
            let (started_before, value) = caller.await.expect("caller");
            assert!(value > started_before, "got read {value}, though read {started_before} had started before it arrived");
        }
        let reads = source.0.load(Ordering::SeqCst);
        assert!((2..=8).contains(&reads), "200 callers over 50 ms of 20 ms reads took {reads} reads");
    }

    /// A failed read answers its reader with its error, and a caller that arrived during it
    /// reads again; a reader that gives up its turn mid-read hands it to a waiter.
    #[tokio::test]
    async fn failures_and_abandoned_reads_leave_no_caller_stuck() {
        let shared = Arc::new(SharedRead::<u64>::default());
        let failing = {
            let shared = shared.clone();
            tokio::spawn(async move {
                shared
                    .get(|| async {
                        tokio::time::sleep(Duration::from_millis(30)).await;
                        Err(Error::Unavailable("down".into()))
                    })
                    .await
            })
        };
        tokio::time::sleep(Duration::from_millis(5)).await;
        let waiting = {
            let shared = shared.clone();
            tokio::spawn(async move { shared.get(|| async { Ok(7) }).await })
        };
        assert!(matches!(failing.await.expect("task"), Err(Error::Unavailable(_))));
        assert_eq!(waiting.await.expect("task").expect("its own read"), 7);

        let abandoned = {
            let shared = shared.clone();
            tokio::spawn(async move { shared.get(std::future::pending::<Result<u64>>).await })
        };
        tokio::time::sleep(Duration::from_millis(5)).await;
        let next = {
            let shared = shared.clone();
            tokio::spawn(async move { shared.get(|| async { Ok(9) }).await })
        };
        tokio::time::sleep(Duration::from_millis(5)).await;
        abandoned.abort();
        let value = tokio::time::timeout(Duration::from_secs(5), next).await.expect("not stuck").expect("task").expect("read");
        assert_eq!(value, 9);
    }
}
