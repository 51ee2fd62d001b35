//! Operational metrics in the Prometheus text format, at `GET /metrics`: requests by route
//! and status with latency, trades, the SQLite group commit (batch sizes, commit latency,
//! WAL size), the PostgreSQL pool (connections in use, waits), its trade batches (sizes,
//! durations, time per phase), write retries, open streams and the search renderings kept.
//! Labels are of low cardinality: route patterns, methods, statuses, trade kinds and batch
//! phases only.

use std::sync::atomic::AtomicU64;
use std::sync::OnceLock;

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

/// Label values are static strings: no allocation to count a request (route patterns are
/// interned once, see [`Metrics::route`]).
type Labels<const N: usize> = [(&'static str, &'static str); N];

pub struct Metrics {
    registry: Registry,
    /// Label values seen so far (route patterns, statuses), leaked once each: both come from
    /// small fixed sets.
    interned: std::sync::RwLock<std::collections::HashSet<&'static str>>,
    /// Responses by route pattern, method and status.
    pub(crate) requests: Family<Labels<3>, Counter>,
    /// Request latency by route pattern and method, seconds.
    pub(crate) request_seconds: Family<Labels<2>, Histogram>,
    /// Committed trades by kind (buy, sell).
    pub(crate) trades: Family<Labels<1>, Counter>,
    /// Operations per SQLite group commit.
    pub(crate) commit_batch_size: Histogram,
    /// SQLite group commit, from BEGIN to the WAL flushed, seconds.
    pub(crate) commit_seconds: Histogram,
    pub(crate) pg_batch_size: Histogram,
    pub(crate) pg_batch_seconds: Histogram,
    /// Seconds committed PostgreSQL trade batches spent per phase: `lock` (waiting for
    /// another batch), `read` and `write` (round trips, the database working), `run` (this
    /// service running the trades and building the writes). The batch thread and the
    /// database take turns, so `run` against `read` + `write` is the split to shrink.
    pub(crate) pg_batch_phase_seconds: Family<Labels<1>, Counter<f64, AtomicU64>>,
    /// Bytes in the SQLite WAL after the last commit.
    pub(crate) wal_bytes: Gauge,
    /// PostgreSQL connections running a transaction now.
    pub(crate) pool_in_use: Gauge,
    /// Transactions that waited for a free PostgreSQL connection, and how long.
    pub(crate) pool_wait_seconds: Histogram,
    /// PostgreSQL writes run again after losing a race, by cause (serialization, deadlock,
    /// unique, connection).
    pub write_retries: Family<Labels<1>, Counter>,
    /// Open event streams (SSE and WebSocket).
    pub(crate) open_streams: Gauge,
    /// Markets whose search rendering this node keeps, and their bytes.
    pub(crate) rendered_markets: Gauge,
    pub(crate) rendered_bytes: Gauge,
    /// Bets and sells this node sent to the trade leader, by outcome: `forwarded`,
    /// `run_here` (the leader could not be reached), `failed` (no answer).
    pub(crate) trades_forwarded: Family<Labels<1>, Counter>,
    /// 1 while this node runs the trades of every node sharing its PostgreSQL database.
    pub(crate) trade_leader: Gauge,
    /// Events the retention pruning deleted from the log.
    pub(crate) event_log_pruned: Counter,
}

fn latency_buckets() -> impl Iterator<Item = f64> {
    // 100 µs to about 6.5 s.
    exponential_buckets(0.0001, 2.0, 17)
}

impl Metrics {
    fn new() -> Metrics {
        let mut registry = Registry::with_prefix("hanson");
        let requests = Family::<Labels<3>, Counter>::default();
        registry.register("http_requests", "HTTP responses by route, method and status", requests.clone());
        let request_seconds = Family::<Labels<2>, Histogram>::new_with_constructor(|| Histogram::new(latency_buckets()));
        registry.register("http_request_duration_seconds", "HTTP request latency by route and method", request_seconds.clone());
        let trades = Family::<Labels<1>, Counter>::default();
        registry.register("trades", "Committed trades by kind", trades.clone());
        let commit_batch_size = Histogram::new(exponential_buckets(1.0, 2.0, 7));
        registry.register("sqlite_commit_batch_size", "Operations per SQLite group commit", commit_batch_size.clone());
        let commit_seconds = Histogram::new(latency_buckets());
        registry.register("sqlite_commit_duration_seconds", "SQLite group commit from BEGIN to the WAL flushed", commit_seconds.clone());
        let pg_batch_size = Histogram::new(exponential_buckets(1.0, 2.0, 7));
        registry.register("postgres_trade_batch_size", "Trades per PostgreSQL trade batch", pg_batch_size.clone());
        let pg_batch_seconds = Histogram::new(latency_buckets());
        registry.register("postgres_trade_batch_duration_seconds", "PostgreSQL trade batch from BEGIN to COMMIT", pg_batch_seconds.clone());
        let pg_batch_phase_seconds = Family::<Labels<1>, Counter<f64, AtomicU64>>::default();
        registry.register(
            "postgres_trade_batch_phase_seconds",
            "Seconds committed PostgreSQL trade batches spent waiting for the lock, reading, running the trades and writing",
            pg_batch_phase_seconds.clone(),
        );
        let wal_bytes = Gauge::default();
        registry.register("sqlite_wal_bytes", "Bytes in the SQLite WAL after the last commit", wal_bytes.clone());
        let pool_in_use = Gauge::default();
        registry.register("postgres_connections_in_use", "PostgreSQL connections running a transaction", pool_in_use.clone());
        let pool_wait_seconds = Histogram::new(latency_buckets());
        registry.register("postgres_pool_wait_seconds", "Waits for a free PostgreSQL connection", pool_wait_seconds.clone());
        let write_retries = Family::<Labels<1>, Counter>::default();
        registry.register("postgres_write_retries", "PostgreSQL writes run again after losing a race, by cause", write_retries.clone());
        let open_streams = Gauge::default();
        registry.register("open_streams", "Open event streams (SSE and WebSocket)", open_streams.clone());
        let rendered_markets = Gauge::default();
        registry.register("search_rendered_markets", "Markets whose search rendering this node keeps", rendered_markets.clone());
        let rendered_bytes = Gauge::default();
        registry.register("search_rendered_bytes", "Bytes of the search renderings this node keeps", rendered_bytes.clone());
        let trades_forwarded = Family::<Labels<1>, Counter>::default();
        registry.register("trades_forwarded", "Bets and sells sent to the trade leader, by outcome", trades_forwarded.clone());
        let trade_leader = Gauge::default();
        registry.register("trade_leader", "1 while this node runs the trades of every node on its database", trade_leader.clone());
        let event_log_pruned = Counter::default();
        registry.register("event_log_pruned", "Events deleted from the event log by its retention", event_log_pruned.clone());
        Metrics {
            registry,
            interned: Default::default(),
            requests,
            request_seconds,
            trades,
            commit_batch_size,
            commit_seconds,
            pg_batch_size,
            pg_batch_seconds,
            pg_batch_phase_seconds,
            wal_bytes,
            pool_in_use,
            pool_wait_seconds,
            write_retries,
            open_streams,
            rendered_markets,
            rendered_bytes,
            trades_forwarded,
            trade_leader,
            event_log_pruned,
        }
    }

    /// `value` as a static string, interned on first sight. Only for values from a small fixed
    /// set (route patterns, status codes): each distinct one is kept for the process's life.
    pub(crate) fn intern(&self, value: &str) -> &'static str {
        if let Some(known) = self.interned.read().ok().and_then(|set| set.get(value).copied()) {
            return known;
        }
        let mut set = self.interned.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        match set.get(value) {
            Some(known) => known,
            None => {
                let leaked: &'static str = Box::leak(value.to_string().into_boxed_str());
                set.insert(leaked);
                leaked
            }
        }
    }

    /// The exposition text.
    pub(crate) fn render(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = encode(&mut out, &self.registry);
        out
    }
}

/// A method as a label: the standard ones by name, anything else as `other`.
pub(crate) fn method_label(method: &axum::http::Method) -> &'static str {
    use axum::http::Method;
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::PATCH => "PATCH",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        _ => "other",
    }
}

/// The process's metrics.
pub fn metrics() -> &'static Metrics {
    static METRICS: OnceLock<Metrics> = OnceLock::new();
    METRICS.get_or_init(Metrics::new)
}
