//! The command line's arguments, as clap parses them.

use clap::{Args, Parser, Subcommand, ValueEnum};

/// `hanson --version`: the release and the commit it was built from (`build.rs`).
pub(super) const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("HANSON_COMMIT"), ")");

#[derive(Parser)]
#[command(name = "hanson", version = VERSION, about = "Self-hostable prediction markets with an exact LMSR market maker")]
pub(super) struct Cli {
    #[command(subcommand)]
    pub(super) command: Command,
}

#[derive(Args, Clone)]
pub(super) struct Database {
    /// sqlite://PATH or postgres://USER@HOST:PORT/DB [default: sqlite://hanson.db, with
    /// --demo sqlite://hanson-demo.db]. Only `serve` creates a SQLite file; a PostgreSQL
    /// database must exist.
    #[arg(long, env = "HANSON_DATABASE_URL")]
    database_url: Option<String>,
}

impl Database {
    /// The URL given, or `sqlite://hanson.db`.
    pub(super) fn url(&self) -> String {
        self.url_or("hanson.db")
    }

    /// Whether a URL was given (flag or environment).
    pub(super) fn given(&self) -> bool {
        self.database_url.is_some()
    }

    /// The URL given, or a SQLite file `default_file` in the current folder.
    pub(super) fn url_or(&self, default_file: &str) -> String {
        self.database_url.clone().unwrap_or_else(|| format!("sqlite://{default_file}"))
    }
}

#[derive(Subcommand)]
pub(super) enum Command {
    /// Run the HTTP service.
    Serve(Box<ServeArgs>),
    /// Manage providers (tenants).
    Provider {
        #[command(subcommand)]
        command: ProviderCommand,
    },
    /// Manage tokens.
    Token {
        #[command(subcommand)]
        command: TokenCommand,
    },
    /// Print the OpenAPI 3.1 document.
    Openapi,
    /// Check every ledger and market invariant; exit 1 with a report if any fails.
    Audit {
        #[command(flatten)]
        database: Database,
    },
    /// Write a consistent copy of a SQLite database, online, while `serve` runs on it
    /// (PostgreSQL: use pg_dump).
    Backup {
        /// The file to write; it must not exist yet.
        #[arg(long)]
        to: std::path::PathBuf,
        #[command(flatten)]
        database: Database,
    },
    /// Bulk-load generated markets or price points (load tests, demos); prints a JSON summary.
    Seed {
        #[command(subcommand)]
        command: SeedCommand,
    },
    /// Sign a login nonce with an EVM private key (for demos and scripts; never send real keys around).
    Sign {
        /// 0x + 64 hex digits.
        #[arg(long, env = "HANSON_PRIVATE_KEY", hide_env_values = true)]
        private_key: String,
        /// The nonce from POST /v1/auth/nonce.
        #[arg(long)]
        nonce: String,
        /// Sign this exact text instead of the spec's message for the nonce: the `message` of a
        /// Sign-In with Ethereum nonce.
        #[arg(long)]
        message: Option<String>,
    },
}

#[derive(Args)]
pub(super) struct ServeArgs {
    /// Address to listen on (port 0 picks a free port).
    #[arg(long, env = "HANSON_LISTEN", default_value = "127.0.0.1:8080")]
    pub(super) listen: String,
    #[command(flatten)]
    pub(super) database: Database,
    /// A demo exchange: on an empty database (default file `hanson-demo.db`) it creates a
    /// provider, a token, funded wallets and markets, prints the provider's API key, and keeps
    /// a demo trader betting every few seconds.
    #[arg(long)]
    pub(super) demo: bool,
    /// Most PostgreSQL connections this process opens (SQLite ignores it).
    #[arg(long, env = "HANSON_DB_MAX_CONNECTIONS", default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub(super) db_max_connections: u32,
    /// PostgreSQL statement timeout in milliseconds, 0 = none (SQLite ignores it).
    #[arg(long, env = "HANSON_DB_STATEMENT_TIMEOUT_MS", default_value_t = 5_000)]
    pub(super) db_statement_timeout_ms: u64,
    /// Proxies (IP addresses or CIDR ranges, comma-separated) whose Forwarded or
    /// X-Forwarded-For headers name the client for rate limits; empty: trust none.
    #[arg(long, env = "HANSON_TRUSTED_PROXIES", value_delimiter = ',', value_parser = parse_proxy)]
    pub(super) trusted_proxies: Vec<ipnet::IpNet>,
    /// Nonce, login and refresh requests per second per client IP (0 = unlimited).
    #[arg(long, env = "HANSON_AUTH_RATE_PER_IP", default_value_t = 5.0)]
    pub(super) auth_rate_per_ip: f64,
    /// Burst allowance for the auth routes per client IP.
    #[arg(long, env = "HANSON_AUTH_BURST_PER_IP", default_value_t = 30.0)]
    pub(super) auth_burst_per_ip: f64,
    /// Requests per second per client IP on every route (0 = unlimited).
    #[arg(long, env = "HANSON_RATE_PER_IP", default_value_t = 0.0)]
    pub(super) rate_per_ip: f64,
    #[arg(long, env = "HANSON_BURST_PER_IP", default_value_t = 100.0)]
    pub(super) burst_per_ip: f64,
    /// Requests per second per credential (API key or access token; 0 = unlimited).
    #[arg(long, env = "HANSON_RATE_PER_PRINCIPAL", default_value_t = 0.0)]
    pub(super) rate_per_principal: f64,
    #[arg(long, env = "HANSON_BURST_PER_PRINCIPAL", default_value_t = 100.0)]
    pub(super) burst_per_principal: f64,
    /// HS256 secret for access tokens; without it one is generated once and kept in the database.
    #[arg(long, env = "HANSON_JWT_SECRET", hide_env_values = true)]
    pub(super) jwt_secret: Option<String>,
    /// Access token lifetime in seconds.
    #[arg(long, env = "HANSON_ACCESS_TOKEN_TTL", default_value_t = 604_800)]
    pub(super) access_token_ttl: i64,
    /// Refresh window of a session in seconds.
    #[arg(long, env = "HANSON_REFRESH_TOKEN_TTL", default_value_t = 2_592_000)]
    pub(super) refresh_token_ttl: i64,
    /// Seconds a client may take to send a request's headers (from connecting, or from the
    /// first byte of a later request on a keep-alive connection); then the connection is closed.
    #[arg(long, env = "HANSON_HEADER_READ_TIMEOUT_SECS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub(super) header_read_timeout_secs: u64,
    /// Seconds a client may take to send a request's body after its headers; then 408.
    #[arg(long, env = "HANSON_BODY_READ_TIMEOUT_SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub(super) body_read_timeout_secs: u64,
    /// Seconds a keep-alive connection may stay open with no request in flight.
    #[arg(long, env = "HANSON_IDLE_TIMEOUT_SECS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub(super) idle_timeout_secs: u64,
    /// Seconds a shutdown (SIGTERM, Ctrl-C) gives requests in flight and streams to end
    /// before the process exits without them.
    #[arg(long, env = "HANSON_SHUTDOWN_GRACE_SECS", default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..=3_600))]
    pub(super) shutdown_grace_secs: u64,
    /// Most client connections open at once; beyond it new ones wait to be accepted.
    #[arg(long, env = "HANSON_MAX_CONNECTIONS", default_value_t = 10_000, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub(super) max_connections: u32,
    /// Most event streams (SSE and WebSocket) open at once; beyond it new ones get 429.
    /// Each holds a connection, so keep it below --max-connections.
    #[arg(long, env = "HANSON_MAX_STREAMS", default_value_t = 8_000, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub(super) max_streams: u32,
    /// Most event streams open at once from one client IP.
    #[arg(long, env = "HANSON_MAX_STREAMS_PER_IP", default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub(super) max_streams_per_ip: u32,
    /// Milliseconds between a market's ticker events at the most (they follow changes only).
    #[arg(long, env = "HANSON_TICKER_INTERVAL_MS", default_value_t = 250, value_parser = clap::value_parser!(u64).range(1..=60_000))]
    pub(super) ticker_interval_ms: u64,
    /// Seconds between keep-alive pings on idle event streams.
    #[arg(long, env = "HANSON_STREAM_PING_SECS", default_value_t = 15, value_parser = clap::value_parser!(u64).range(1..=3_600))]
    pub(super) stream_ping_secs: u64,
    /// A stream subscriber more than this many events behind its market is disconnected (it
    /// resumes with Last-Event-ID or after_seq).
    #[arg(long, env = "HANSON_STREAM_LAG_LIMIT", default_value_t = 10_000, value_parser = clap::value_parser!(i64).range(1..=1_000_000))]
    pub(super) stream_lag_limit: i64,
    /// Serve the web app's pages and assets from this directory (the repository's
    /// `crates/hanson/web`), read on every request, instead of the copy built into the binary.
    #[arg(long, env = "HANSON_WEB_DIR")]
    pub(super) web_dir: Option<std::path::PathBuf>,
    /// Where the other nodes on the same PostgreSQL database reach this one (http:// or
    /// https:// URL), to forward their bets and sells to it while it runs the trades.
    /// Default: the address it listens on, unless that is 0.0.0.0 or [::].
    #[arg(long, env = "HANSON_ADVERTISE_URL", value_parser = parse_advertise_url)]
    pub(super) advertise_url: Option<String>,
    /// Neither forward this node's bets and sells to the node running the trades nor run
    /// the other nodes': run its own, taking the trade batch lock in turns with the others.
    #[arg(long, env = "HANSON_NO_TRADE_FORWARDING")]
    pub(super) no_trade_forwarding: bool,
    /// Delays before each retry of a failed webhook delivery, e.g. `1s,2s,4s` (units ms, s, m,
    /// h); each gets up to 20% jitter. The default is the one `docs/api.md` gives.
    #[arg(long, env = "HANSON_WEBHOOK_RETRY_SCHEDULE", default_value = "5s,5m,30m,2h,5h,10h,10h")]
    pub(super) webhook_retry_schedule: crate::domain::webhook::RetrySchedule,
    /// Also allow `http` webhook URLs and loopback or private addresses (local use and tests).
    #[arg(long, env = "HANSON_WEBHOOK_ALLOW_PRIVATE")]
    pub(super) webhook_allow_private: bool,
    /// Where users reach this service (https://host[:port]): the domain and URI that
    /// Sign-In with Ethereum login messages name. Without it, logins use the spec's message only.
    #[arg(long, env = "HANSON_PUBLIC_URL", value_parser = crate::domain::siwe::PublicUrl::parse)]
    pub(super) public_url: Option<crate::domain::siwe::PublicUrl>,
    /// Also serve `/metrics` on this address (e.g. one on a private network), printed as
    /// `metrics on http://ADDR/metrics` after the `listening on` line.
    #[arg(long, env = "HANSON_METRICS_LISTEN")]
    pub(super) metrics_listen: Option<String>,
    /// Do not serve `/metrics` on the API's address (404 there); with --metrics-listen, only
    /// that address serves it.
    #[arg(long, env = "HANSON_NO_PUBLIC_METRICS")]
    pub(super) no_public_metrics: bool,
    /// Keep every event of the log this many seconds (and each market's last
    /// --event-retention-events); older ones are pruned. Streams resume only within it.
    #[arg(long, env = "HANSON_EVENT_RETENTION_SECS", default_value_t = 86_400, value_parser = clap::value_parser!(u64).range(0..=3_153_600_000))]
    pub(super) event_retention_secs: u64,
    /// Keep at least each market's last this many events, however old.
    #[arg(long, env = "HANSON_EVENT_RETENTION_EVENTS", default_value_t = 10_000, value_parser = clap::value_parser!(i64).range(0..=1_000_000_000))]
    pub(super) event_retention_events: i64,
    /// Seconds between prunings of the event log.
    #[arg(long, env = "HANSON_EVENT_PRUNE_EVERY_SECS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub(super) event_prune_every_secs: u64,
    /// Log lines as plain text or as one JSON object per line.
    #[arg(long, env = "HANSON_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub(super) log_format: LogFormat,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum LogFormat {
    Text,
    Json,
}

#[derive(Subcommand)]
pub(super) enum ProviderCommand {
    /// Create a provider and print its first API key (shown once).
    Create {
        #[arg(long)]
        name: String,
        #[command(flatten)]
        database: Database,
    },
    /// Replace a provider's API key; the old key stops working at once.
    RotateKey {
        provider_id: String,
        #[command(flatten)]
        database: Database,
    },
}

#[derive(Subcommand)]
pub(super) enum TokenCommand {
    /// Register a token markets can be denominated in.
    Create {
        #[arg(long)]
        symbol: String,
        #[arg(long)]
        name: String,
        #[arg(long)]
        decimals: u8,
        #[command(flatten)]
        database: Database,
    },
}

#[derive(Subcommand)]
pub(super) enum SeedCommand {
    /// Markets spread over providers, each funded from its provider's treasury.
    Markets {
        /// How many markets.
        #[arg(long)]
        count: usize,
        /// The token they are denominated in.
        #[arg(long)]
        token_id: String,
        /// A provider and the wallet that earns its markets' creator fee, as
        /// PROVIDER_ID:WALLET_ID; repeat for several.
        #[arg(long = "provider", required = true, value_parser = parse_provider_wallet)]
        providers: Vec<(String, String)>,
        /// Each market's liquidity, in wei.
        #[arg(long)]
        liquidity: u128,
        /// The categories the markets are spread over.
        #[arg(
            long,
            value_delimiter = ',',
            default_value = "sports,politics,crypto,weather,esports,finance,science,entertainment,tech,culture"
        )]
        categories: Vec<String>,
        #[command(flatten)]
        database: Database,
    },
    /// Price points of a two-outcome market, spread over days up to now, with their candles.
    PricePoints {
        #[arg(long)]
        market_id: String,
        /// How many points (two per instant, one per outcome).
        #[arg(long)]
        count: usize,
        /// The days they span, ending a minute ago.
        #[arg(long, default_value_t = 30)]
        days: i64,
        #[command(flatten)]
        database: Database,
    },
    /// Buys in an active market by new wallets, with their positions and transfers (prices
    /// do not move: every outcome gets the same shares). Data for leaderboards and exports.
    Trades {
        #[arg(long)]
        market_id: String,
        /// New wallets of the market's provider that make the trades (round robin).
        #[arg(long)]
        wallets: usize,
        /// How many trades.
        #[arg(long)]
        count: usize,
        /// The days they span, ending a minute ago.
        #[arg(long, default_value_t = 30)]
        days: i64,
        #[command(flatten)]
        database: Database,
    },
}

pub(super) fn parse_provider_wallet(text: &str) -> std::result::Result<(String, String), String> {
    match text.split_once(':') {
        Some((provider, wallet)) if !provider.is_empty() && !wallet.is_empty() => Ok((provider.to_string(), wallet.to_string())),
        _ => Err(format!("{text:?} is not PROVIDER_ID:WALLET_ID")),
    }
}

/// An address (a single host) or a CIDR range.
pub(super) fn parse_proxy(text: &str) -> std::result::Result<ipnet::IpNet, String> {
    let text = text.trim();
    text.parse::<ipnet::IpNet>()
        .or_else(|_| text.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
        .map_err(|_| format!("{text:?} is neither an IP address nor a CIDR range"))
}

pub(super) fn parse_advertise_url(text: &str) -> std::result::Result<String, String> {
    match url::Url::parse(text.trim()) {
        Ok(url) if matches!(url.scheme(), "http" | "https") && url.host().is_some() && url.path() == "/" && url.query().is_none() => {
            Ok(url.as_str().trim_end_matches('/').to_string())
        }
        _ => Err(format!("{text:?} is not an http:// or https:// URL of a host (and port), without a path")),
    }
}
