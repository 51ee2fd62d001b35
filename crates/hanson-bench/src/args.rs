//! The command line: the scenarios and every flag.

use std::path::PathBuf;

use clap::Parser;

pub(crate) const SCENARIOS: &[&str] = &[
    "hot_market",
    "many_markets",
    "search",
    "price_history",
    "market_reads",
    "stream_fanout",
    "stream_idle",
    "stream_watchers",
    "webhooks",
    "export",
    "card",
    "soak",
];

/// Scenarios run when none is named: all but the soak, which runs for as long as it is told.
pub(crate) fn default_scenarios() -> Vec<&'static str> {
    SCENARIOS.iter().copied().filter(|s| *s != "soak").collect()
}

#[derive(Parser, Clone)]
#[command(
    name = "hanson-bench",
    about = "Load generator for the Hanson prediction-market service",
    after_help = "Scenarios (default: all but soak, in this order):
  hot_market     one market, every client trades on it
  many_markets   the same trade load spread over --markets markets
  search         POST /v1/markets/search over --search-markets bulk-seeded markets
  price_history  POST /v1/markets/price-history/search over --price-points seeded points
  market_reads   price history, 1-minute candles (1,000 buckets) and leaderboard pages in
                 equal shares on that market, also holding 10,000 wallets' positions: each
                 kind's p99 and its ratio to price history's
  stream_fanout  the hot_market load without, then with --subscribers (1000) SSE subscribers
                 on the market: trades/s and its ratio to the baseline, every subscriber
                 checked for every trade.created with gapless seq, delivery lag p50/p99/max
  stream_idle    --subscribers (10000) idle SSE subscribers on one market: the server's RSS
                 per subscriber and sequential GET /healthz latency while they are held
  stream_watchers the hot_market load without, then with --subscribers (10000) ticker
                 watchers (SSE): trades/s ratio, last ticks vs the final state, tick lag,
                 server RSS per watcher
  webhooks       the hot_market load without, then with --endpoints (10) webhook endpoints
                 subscribed to * on a local receiver: trades/s and its ratio, deliveries/s,
                 delivery lag p50/p99/max, every endpoint checked for every event
  export         --export-trades (1000000) seeded trades exported as CSV by one client:
                 rows/s and the server's RSS growth during the export
  card           GET /markets/{id}/card.png over --card-markets (20) markets, each card
                 rendered once before the run: warm p50/p90/p99
  soak           --duration seconds of everything at once at --rate trades/s: trading on
                 --markets (100) markets, --subscribers (1000) SSE subscribers (every tenth
                 hangs up and resumes), webhooks to 5 endpoints (one failing half the time),
                 the event log pruned every 10 s; a JSON line every --sample-secs (RSS, fds,
                 p99, database size), then every event delivered, gaps, audit, targets
See crates/hanson-bench/README.md for the output fields."
)]
pub(crate) struct Args {
    /// Run one scenario: hot_market, many_markets, search, price_history, market_reads, stream_fanout,
    /// stream_idle, stream_watchers, webhooks, export, card or soak (default: all but soak, in
    /// that order).
    #[arg(long)]
    pub(crate) scenario: Option<String>,
    /// Concurrent keep-alive clients.
    #[arg(long, default_value_t = 64)]
    pub(crate) clients: usize,
    /// Measured seconds per run (after the warm-up).
    #[arg(long, default_value_t = 10.0)]
    pub(crate) duration: f64,
    /// Warm-up seconds before each measured run (not counted).
    #[arg(long, default_value_t = 2.0)]
    pub(crate) warmup: f64,
    /// Trading wallets (at least one per client), each funded and logged in with a real signature.
    #[arg(long, default_value_t = 200)]
    pub(crate) wallets: usize,
    /// Share of trades that are sells (of shares the wallet bought earlier in the run).
    #[arg(long, default_value_t = 0.2)]
    pub(crate) sell_share: f64,
    /// Markets of the many_markets scenario.
    #[arg(long, default_value_t = 100)]
    pub(crate) markets: usize,
    /// Markets whose share cards the card scenario fetches.
    #[arg(long, default_value_t = 20)]
    pub(crate) card_markets: usize,
    /// Markets seeded for the search scenario.
    #[arg(long, default_value_t = 100_000)]
    pub(crate) search_markets: usize,
    /// Price points seeded for the price_history scenario (one market, 2 outcomes).
    #[arg(long, default_value_t = 1_000_000)]
    pub(crate) price_points: usize,
    /// Days the seeded price history spans.
    #[arg(long, default_value_t = 30)]
    pub(crate) history_days: i64,
    /// Clients of the price_history scenario (default: --clients).
    #[arg(long)]
    pub(crate) history_clients: Option<usize>,
    /// Database. Without --url: sqlite://PATH uses that file as it is; postgres://... is an admin
    /// URL through which a fresh database hanson_bench_<uuid> is created per scenario and dropped
    /// afterwards. Default: a fresh temp SQLite file per scenario. With --url: the server's own
    /// database (needed for setup, seeding and the audit).
    #[arg(long)]
    pub(crate) database_url: Option<String>,
    /// Shorthand for --database-url postgres://postgres@127.0.0.1:5432/postgres.
    #[arg(long, conflicts_with = "database_url")]
    pub(crate) postgres: bool,
    /// A running server to load instead of launching one (requires --database-url).
    #[arg(long)]
    pub(crate) url: Option<String>,
    /// The hanson binary (default: `hanson` next to this binary).
    #[arg(long)]
    pub(crate) hanson_bin: Option<PathBuf>,
    /// SSE subscribers of the stream scenarios (default: 1000 for stream_fanout and soak, 10000 for
    /// stream_idle and stream_watchers).
    #[arg(long)]
    pub(crate) subscribers: Option<usize>,
    /// With --url: the server's process id, for stream_idle's memory per subscriber (read from
    /// /proc/PID/status; without it that figure is skipped).
    #[arg(long)]
    pub(crate) server_pid: Option<u32>,
    /// Sequential GET /healthz requests of stream_idle (before and while the subscribers are held).
    #[arg(long, default_value_t = 2000)]
    pub(crate) healthz_requests: usize,
    /// Trades seeded for the export scenario (by --wallets wallets).
    #[arg(long, default_value_t = 1_000_000)]
    pub(crate) export_trades: usize,
    /// Webhook endpoints of the webhooks scenario.
    #[arg(long, default_value_t = 10)]
    pub(crate) endpoints: usize,
    /// `hanson serve` processes launched on the one PostgreSQL database of hot_market and
    /// many_markets, the trading clients split evenly across them (client i trades on node
    /// i mod N).
    #[arg(long, default_value_t = 1)]
    pub(crate) nodes: usize,
    /// Trades per second of the soak, over all clients, at a steady pace.
    #[arg(long, default_value_t = 200.0)]
    pub(crate) rate: f64,
    /// Seconds between the soak's samples (one JSON line each).
    #[arg(long, default_value_t = 60.0)]
    pub(crate) sample_secs: f64,
}
