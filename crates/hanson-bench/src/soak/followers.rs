//! The soak's stream subscribers: each follows one market's SSE stream and checks that the
//! event ids run on without a gap. Some hang up after a random lifetime and come back with
//! `Last-Event-ID`, as a browser's `EventSource` does, which must replay what they missed.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::rng::Rng;

/// Lifetime of a reconnecting subscriber's connection, seconds.
const LIFETIME_S: (u64, u64) = (10, 60);

#[derive(Default)]
pub(crate) struct Counts {
    /// Events with an id (snapshots aside).
    pub(crate) events: AtomicU64,
    /// Events whose id was not the one after the last.
    pub(crate) gaps: AtomicU64,
    /// Hang-ups by a reconnecting subscriber, each followed by a resume.
    pub(crate) reconnects: AtomicU64,
    /// Resumes answered with a snapshot: the missed events were pruned.
    pub(crate) resumed_by_snapshot: AtomicU64,
    /// Streams the server refused or ended, and connections that failed.
    pub(crate) failures: AtomicU64,
}

pub(crate) struct Followers {
    stop: Arc<AtomicBool>,
    tasks: Vec<JoinHandle<()>>,
    pub(crate) counts: Arc<Counts>,
}

impl Followers {
    /// `n` subscribers spread over `markets`; every `reconnect_every`-th one reconnects.
    pub(crate) fn start(base: &str, markets: &[String], n: usize, reconnect_every: usize) -> Followers {
        let stop = Arc::new(AtomicBool::new(false));
        let counts = Arc::new(Counts::default());
        let client = reqwest::Client::new();
        let tasks = (0..n)
            .map(|i| {
                let url = format!("{base}/v1/markets/{}/events", markets[i % markets.len()]);
                let reconnects = reconnect_every > 0 && i % reconnect_every == 0;
                tokio::spawn(follow(client.clone(), url, reconnects, stop.clone(), counts.clone()))
            })
            .collect();
        Followers { stop, tasks, counts }
    }

    pub(crate) async fn stop(self) {
        self.stop.store(true, Ordering::SeqCst);
        for task in self.tasks {
            let _ = task.await;
        }
    }
}

async fn follow(client: reqwest::Client, url: String, reconnects: bool, stop: Arc<AtomicBool>, counts: Arc<Counts>) {
    let mut rng = Rng::new();
    let mut last: Option<u64> = None;
    while !stop.load(Ordering::SeqCst) {
        let mut request = client.get(&url).header("accept", "text/event-stream");
        if let Some(seq) = last {
            request = request.header("last-event-id", seq.to_string());
        }
        let resuming = last.is_some();
        let mut response = match request.send().await {
            Ok(r) if r.status().is_success() => r,
            _ => {
                counts.failures.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(500)).await;
                continue;
            }
        };
        let hang_up = reconnects.then(|| Instant::now() + Duration::from_secs(rng.range(LIFETIME_S.0, LIFETIME_S.1)));
        let mut buffer = String::new();
        loop {
            if stop.load(Ordering::SeqCst) {
                return;
            }
            if hang_up.is_some_and(|at| Instant::now() >= at) {
                counts.reconnects.fetch_add(1, Ordering::Relaxed);
                break;
            }
            let chunk = match tokio::time::timeout(Duration::from_millis(500), response.chunk()).await {
                Err(_) => continue,
                Ok(Ok(Some(bytes))) => bytes,
                Ok(_) => {
                    counts.failures.fetch_add(1, Ordering::Relaxed);
                    break;
                }
            };
            buffer.push_str(&String::from_utf8_lossy(&chunk).replace('\r', ""));
            while let Some(end) = buffer.find("\n\n") {
                let frame: String = buffer.drain(..end + 2).collect();
                let event = frame.lines().find_map(|l| l.strip_prefix("event: "));
                let Some(id) = frame.lines().find_map(|l| l.strip_prefix("id: ")).and_then(|id| id.trim().parse::<u64>().ok()) else {
                    continue;
                };
                if event == Some("snapshot") {
                    if resuming {
                        counts.resumed_by_snapshot.fetch_add(1, Ordering::Relaxed);
                    }
                } else {
                    if last.is_some_and(|l| id != l + 1) {
                        counts.gaps.fetch_add(1, Ordering::Relaxed);
                    }
                    counts.events.fetch_add(1, Ordering::Relaxed);
                }
                last = Some(id);
            }
        }
    }
}
