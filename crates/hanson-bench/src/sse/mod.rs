//! Light Server-Sent Events subscribers for the stream scenarios: one tokio task and one raw
//! `TcpStream` each (HTTP/1.1 `GET` with `Accept: text/event-stream`), the chunked transfer
//! encoding and the SSE frames parsed here, one read buffer per subscriber and nothing else
//! of any size, so 10,000 of them fit easily.
//!
//! Per event the hot path does no JSON parsing: the type comes from the `event:` line, the
//! seq from the `id:` line, and the envelope's `timestamp` is found with a substring search of
//! the `data:` line (the envelope's own key comes before `data`, so the first match is it;
//! should a `"data":` ever come first, that envelope is parsed in full instead).
//! One subscriber (`verify`) also parses every envelope in full and checks that the fast
//! path read the same type, seq and timestamp, so a change of the envelope cannot go unseen.

mod lag;
mod subscriber;
#[cfg(test)]
mod tests;
pub(crate) mod ticker;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{watch, Semaphore};
use tokio::task::JoinHandle;

pub(crate) use lag::LagHistogram;
use subscriber::Subscriber;

/// The subscribers' worker threads (their CPU time is read by this name).
pub(crate) const THREAD_NAME: &str = "sse-subscribers";

/// What one subscriber saw.
#[derive(Default)]
pub(crate) struct SubStats {
    /// Seq of the snapshot (its `id:` line).
    pub snapshot_seq: Option<u64>,
    /// Seq of the last event after the snapshot.
    pub last_seq: Option<u64>,
    pub trades: u64,
    /// Market events other than `trade.created` (after the snapshot).
    pub other_events: BTreeMap<String, u64>,
    /// Times the seq jumped forward by more than 1, and the seqs skipped in all.
    pub gaps: u64,
    pub missing_seqs: u64,
    /// Events whose seq was not above the previous one.
    pub repeats: u64,
    pub pings: u64,
    /// Body bytes read (chunk framing included).
    pub bytes: u64,
    /// `trade.created` whose timestamp lay after the local receive time (clamped to 0).
    pub negative_lags: u64,
    /// Events without a readable timestamp (no lag recorded).
    pub bad_timestamps: u64,
    /// Protocol surprises: a second snapshot, an event before the snapshot, a bad `id:`.
    pub protocol_errors: u64,
    /// Verify mode: envelopes whose full parse disagreed with the fast path.
    pub envelope_mismatches: u64,
    pub first_problem: Option<String>,
    /// Why the stream ended before the bench stopped it (None: it was still open).
    pub ended: Option<String>,
    pub lags: Option<Box<LagHistogram>>,
}

impl SubStats {
    fn problem(&mut self, text: String) {
        if self.first_problem.is_none() {
            self.first_problem = Some(text);
        }
    }
}

/// Counters the scenario watches while the subscribers run.
pub(crate) struct Shared {
    pub snapshots: AtomicUsize,
    /// Subscribers that ended (any reason) before their snapshot.
    pub failed_before_snapshot: AtomicUsize,
    /// Per subscriber: `trade.created` events received so far.
    pub trades: Vec<AtomicU64>,
    /// Per subscriber: its task has ended.
    pub finished: Vec<AtomicBool>,
}

pub(crate) struct Config {
    /// host:port to connect to.
    pub addr: String,
    pub host: String,
    pub path: String,
    pub market_id: String,
    pub read_buffer: usize,
    /// Record delivery lags of `trade.created` events.
    pub lags: bool,
}

/// Splits `http://host:port[/...]` into (host:port, host header).
pub(crate) fn authority(base: &str) -> Result<String, String> {
    let rest = base.strip_prefix("http://").ok_or_else(|| format!("stream scenarios need an http:// URL, not {base}"))?;
    let authority = rest.split('/').next().unwrap_or(rest);
    if authority.is_empty() {
        return Err(format!("no host in {base}"));
    }
    Ok(if authority.contains(':') { authority.to_string() } else { format!("{authority}:80") })
}

/// N subscribers to one market's `GET /v1/markets/{id}/events`, on a runtime of their own.
pub(crate) struct Subscribers {
    runtime: Option<tokio::runtime::Runtime>,
    handles: Vec<JoinHandle<SubStats>>,
    pub shared: Arc<Shared>,
    stop: watch::Sender<bool>,
    pub opened_at: Instant,
}

impl Subscribers {
    /// Starts `n` subscribers; at most `parallel` of them are between connect and snapshot at
    /// a time (so the server's accept queue never overflows). Subscriber 0 verifies every
    /// envelope in full.
    pub(crate) fn open(
        base: &str,
        market_id: &str,
        n: usize,
        parallel: usize,
        read_buffer: usize,
        lags: bool,
    ) -> Result<Subscribers, String> {
        let addr = authority(base)?;
        let config = Arc::new(Config {
            host: addr.clone(),
            addr,
            path: format!("/v1/markets/{market_id}/events"),
            market_id: market_id.to_string(),
            read_buffer,
            lags,
        });
        // Their own worker threads: the trade clients of the main runtime never queue behind
        // a thousand readers (both still share the machine's cores with the server).
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name(THREAD_NAME)
            .enable_all()
            .build()
            .map_err(|e| format!("subscriber runtime: {e}"))?;
        let shared = Arc::new(Shared {
            snapshots: AtomicUsize::new(0),
            failed_before_snapshot: AtomicUsize::new(0),
            trades: (0..n).map(|_| AtomicU64::new(0)).collect(),
            finished: (0..n).map(|_| AtomicBool::new(false)).collect(),
        });
        let (stop, stop_rx) = watch::channel(false);
        let gate = Arc::new(Semaphore::new(parallel.max(1)));
        let handles = (0..n)
            .map(|i| {
                let (config, shared, stop_rx, gate) = (config.clone(), shared.clone(), stop_rx.clone(), gate.clone());
                runtime.spawn(async move {
                    let permit = gate.acquire_owned().await.ok();
                    let mut sub = Subscriber::new(i, &config, &shared, i == 0, permit);
                    let end = sub.run(stop_rx).await;
                    let mut stats = sub.finish();
                    stats.ended = end.err();
                    if stats.snapshot_seq.is_none() {
                        shared.failed_before_snapshot.fetch_add(1, Ordering::SeqCst);
                    }
                    shared.finished[i].store(true, Ordering::SeqCst);
                    stats
                })
            })
            .collect();
        Ok(Subscribers { runtime: Some(runtime), handles, shared, stop, opened_at: Instant::now() })
    }

    pub(crate) fn len(&self) -> usize {
        self.handles.len()
    }

    /// Waits until every subscriber has its snapshot or has failed; returns (snapshots, failed).
    pub(crate) async fn wait_snapshots(&self, timeout: Duration) -> (usize, usize) {
        let deadline = Instant::now() + timeout;
        loop {
            let ok = self.shared.snapshots.load(Ordering::SeqCst);
            let failed = self.shared.failed_before_snapshot.load(Ordering::SeqCst);
            if ok + failed >= self.len() || Instant::now() >= deadline {
                return (ok, failed);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Subscribers whose task has ended (stream closed, error).
    pub(crate) fn finished(&self) -> usize {
        self.shared.finished.iter().filter(|f| f.load(Ordering::SeqCst)).count()
    }

    /// Waits until every live subscriber has `expected` trade events, or nothing moved for
    /// `stall`, or `timeout` passed. Returns the seconds it waited.
    pub(crate) async fn wait_trades(&self, expected: u64, stall: Duration, timeout: Duration) -> f64 {
        let start = Instant::now();
        let mut last_total = u64::MAX;
        let mut last_move = Instant::now();
        loop {
            let mut total = 0;
            let mut pending = false;
            for (count, finished) in self.shared.trades.iter().zip(&self.shared.finished) {
                let c = count.load(Ordering::SeqCst);
                total += c;
                if c < expected && !finished.load(Ordering::SeqCst) {
                    pending = true;
                }
            }
            if !pending {
                break;
            }
            if total != last_total {
                last_total = total;
                last_move = Instant::now();
            }
            if last_move.elapsed() >= stall || start.elapsed() >= timeout {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        start.elapsed().as_secs_f64()
    }

    /// Closes every stream and collects what each subscriber saw.
    pub(crate) async fn close(mut self) -> Vec<SubStats> {
        let _ = self.stop.send(true);
        let mut out = Vec::with_capacity(self.handles.len());
        for h in std::mem::take(&mut self.handles) {
            out.push(h.await.unwrap_or_else(|e| SubStats { ended: Some(format!("task failed: {e}")), ..Default::default() }));
        }
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
        out
    }
}

impl Drop for Subscribers {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}
