//! The load driver: C concurrent clients, each a sequential loop over its own keep-alive
//! connection, for a warm-up and then a measured window.
//!
//! Counting rules: throughput counts the successful requests that *finish* inside the window
//! (after the warm-up, before the end; a slow one started during the warm-up counts too),
//! divided by the window length. Latency percentiles cover every successful request that
//! *started* in the window (a slow request that finishes after the end still shows up in the
//! tail instead of vanishing). Errors count every failed request started in the window.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::time::{Duration, Instant};

/// What one request came to: its kind (e.g. "bet", "sell", "status") and its error key, if any.
pub(crate) struct Sample {
    pub kind: &'static str,
    pub error: Option<String>,
}

impl Sample {
    pub(crate) fn ok(kind: &'static str) -> Sample {
        Sample { kind, error: None }
    }

    pub(crate) fn err(kind: &'static str, key: String) -> Sample {
        Sample { kind, error: Some(key) }
    }
}

#[derive(Default)]
pub(crate) struct KindStats {
    /// Successful requests that finished inside the window.
    pub ok_in_window: u64,
    /// Latencies of successful requests started in the window, microseconds.
    pub latencies_us: Vec<u32>,
}

#[derive(Default)]
pub(crate) struct RunStats {
    pub seconds: f64,
    pub kinds: HashMap<&'static str, KindStats>,
    pub errors: BTreeMap<String, u64>,
    /// Every successful request of the run, warm-up and tail included (the stream scenarios
    /// compare it with the events each subscriber received).
    pub ok_total: u64,
    /// Every failed request of the run, warm-up and tail included.
    pub errors_total: u64,
}

impl RunStats {
    fn merge(&mut self, other: RunStats) {
        for (kind, s) in other.kinds {
            let k = self.kinds.entry(kind).or_default();
            k.ok_in_window += s.ok_in_window;
            k.latencies_us.extend(s.latencies_us);
        }
        for (key, n) in other.errors {
            *self.errors.entry(key).or_default() += n;
        }
        self.ok_total += other.ok_total;
        self.errors_total += other.errors_total;
    }

    pub(crate) fn ok(&self) -> u64 {
        self.kinds.values().map(|k| k.ok_in_window).sum()
    }

    pub(crate) fn ok_of(&self, kind: &str) -> u64 {
        self.kinds.get(kind).map_or(0, |k| k.ok_in_window)
    }

    pub(crate) fn per_second(&self) -> f64 {
        self.ok() as f64 / self.seconds
    }

    pub(crate) fn error_count(&self) -> u64 {
        self.errors.values().sum()
    }

    /// Latency percentiles over every kind: (p50, p90, p99, max) in ms.
    pub(crate) fn percentiles(&self) -> Percentiles {
        let mut all: Vec<u32> = self.kinds.values().flat_map(|k| k.latencies_us.iter().copied()).collect();
        Percentiles::of(&mut all)
    }

    pub(crate) fn kind_percentiles(&self, kind: &str) -> Percentiles {
        let mut v = self.kinds.get(kind).map(|k| k.latencies_us.clone()).unwrap_or_default();
        Percentiles::of(&mut v)
    }
}

#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Percentiles {
    pub count: usize,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
}

impl Percentiles {
    pub(crate) fn of(v: &mut [u32]) -> Percentiles {
        if v.is_empty() {
            return Percentiles::default();
        }
        v.sort_unstable();
        // Nearest-rank percentile.
        let at = |p: f64| {
            let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
            f64::from(v[rank.clamp(1, v.len()) - 1]) / 1000.0
        };
        Percentiles { count: v.len(), p50: at(50.0), p90: at(90.0), p99: at(99.0), max: f64::from(v[v.len() - 1]) / 1000.0 }
    }
}

/// Runs one task per state: each calls `step` in a loop (the state moves in and out, so a
/// step can keep per-client bookkeeping) until the window ends.
pub(crate) async fn drive<S, F, Fut>(states: Vec<S>, warmup: Duration, duration: Duration, step: F) -> RunStats
where
    S: Send + 'static,
    F: Fn(S) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = (S, Sample)> + Send + 'static,
{
    let start = Instant::now();
    let warm_end = start + warmup;
    let end = warm_end + duration;
    let mut tasks = tokio::task::JoinSet::new();
    for state in states {
        let step = step.clone();
        tasks.spawn(async move {
            let mut stats = RunStats::default();
            let mut state = state;
            loop {
                let t0 = Instant::now();
                if t0 >= end {
                    break;
                }
                let (next, sample) = step(state).await;
                state = next;
                let t1 = Instant::now();
                match &sample.error {
                    None => stats.ok_total += 1,
                    Some(_) => stats.errors_total += 1,
                }
                match sample.error {
                    None => {
                        let k = stats.kinds.entry(sample.kind).or_default();
                        if t0 >= warm_end {
                            k.latencies_us.push(u32::try_from((t1 - t0).as_micros()).unwrap_or(u32::MAX));
                        }
                        if t1 >= warm_end && t1 <= end {
                            k.ok_in_window += 1;
                        }
                    }
                    Some(key) if t0 >= warm_end => *stats.errors.entry(key).or_default() += 1,
                    Some(_) => {}
                }
            }
            stats
        });
    }
    let mut total = RunStats { seconds: duration.as_secs_f64(), ..Default::default() };
    while let Some(result) = tasks.join_next().await {
        match result {
            Ok(stats) => total.merge(stats),
            Err(e) => *total.errors.entry(format!("client task failed: {e}")).or_default() += 1,
        }
    }
    total
}
