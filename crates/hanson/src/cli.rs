//! The `hanson` command line: serve, and the administrative commands that print JSON and
//! work while a server runs on the same database.

use crate::events::StreamSettings;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};
use serde_json::json;

use crate::api::ratelimit::Rule;
use crate::api::{Limits, Settings};
use crate::auth;
use crate::domain::tenant::Token;
use crate::domain::time::now_micros;
use crate::error::{Error, Result};
use crate::server::{serve, ConnectionLimits, ServeConfig};
use crate::store::tenants;
use crate::store::{Store, StoreOptions};

#[derive(Parser)]
#[command(name = "hanson", version, about = "Self-hostable prediction markets with an exact LMSR market maker")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Args, Clone)]
struct Database {
    /// sqlite://PATH (created if missing) or postgres://USER@HOST:PORT/DB (must exist).
    #[arg(long, env = "HANSON_DATABASE_URL", default_value = "sqlite://hanson.db")]
    database_url: String,
}

#[derive(Subcommand)]
enum Command {
    /// Run the HTTP service.
    Serve(ServeArgs),
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
    },
}

#[derive(Args)]
struct ServeArgs {
    /// Address to listen on (port 0 picks a free port).
    #[arg(long, env = "HANSON_LISTEN", default_value = "127.0.0.1:8080")]
    listen: String,
    #[command(flatten)]
    database: Database,
    /// Most PostgreSQL connections this process opens (SQLite ignores it).
    #[arg(long, env = "HANSON_DB_MAX_CONNECTIONS", default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    db_max_connections: u32,
    /// PostgreSQL statement timeout in milliseconds, 0 = none (SQLite ignores it).
    #[arg(long, env = "HANSON_DB_STATEMENT_TIMEOUT_MS", default_value_t = 5_000)]
    db_statement_timeout_ms: u64,
    /// Proxies (IP addresses or CIDR ranges, comma-separated) whose Forwarded or
    /// X-Forwarded-For headers name the client for rate limits; empty: trust none.
    #[arg(long, env = "HANSON_TRUSTED_PROXIES", value_delimiter = ',', value_parser = parse_proxy)]
    trusted_proxies: Vec<ipnet::IpNet>,
    /// Nonce, login and refresh requests per second per client IP (0 = unlimited).
    #[arg(long, env = "HANSON_AUTH_RATE_PER_IP", default_value_t = 5.0)]
    auth_rate_per_ip: f64,
    /// Burst allowance for the auth routes per client IP.
    #[arg(long, env = "HANSON_AUTH_BURST_PER_IP", default_value_t = 30.0)]
    auth_burst_per_ip: f64,
    /// Requests per second per client IP on every route (0 = unlimited).
    #[arg(long, env = "HANSON_RATE_PER_IP", default_value_t = 0.0)]
    rate_per_ip: f64,
    #[arg(long, env = "HANSON_BURST_PER_IP", default_value_t = 100.0)]
    burst_per_ip: f64,
    /// Requests per second per credential (API key or access token; 0 = unlimited).
    #[arg(long, env = "HANSON_RATE_PER_PRINCIPAL", default_value_t = 0.0)]
    rate_per_principal: f64,
    #[arg(long, env = "HANSON_BURST_PER_PRINCIPAL", default_value_t = 100.0)]
    burst_per_principal: f64,
    /// HS256 secret for access tokens; without it one is generated once and kept in the database.
    #[arg(long, env = "HANSON_JWT_SECRET", hide_env_values = true)]
    jwt_secret: Option<String>,
    /// Access token lifetime in seconds.
    #[arg(long, env = "HANSON_ACCESS_TOKEN_TTL", default_value_t = 604_800)]
    access_token_ttl: i64,
    /// Refresh window of a session in seconds.
    #[arg(long, env = "HANSON_REFRESH_TOKEN_TTL", default_value_t = 2_592_000)]
    refresh_token_ttl: i64,
    /// Seconds a client may take to send a request's headers (from connecting, or from the
    /// first byte of a later request on a keep-alive connection); then the connection is closed.
    #[arg(long, env = "HANSON_HEADER_READ_TIMEOUT_SECS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    header_read_timeout_secs: u64,
    /// Seconds a client may take to send a request's body after its headers; then 408.
    #[arg(long, env = "HANSON_BODY_READ_TIMEOUT_SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    body_read_timeout_secs: u64,
    /// Seconds a keep-alive connection may stay open with no request in flight.
    #[arg(long, env = "HANSON_IDLE_TIMEOUT_SECS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    idle_timeout_secs: u64,
    /// Seconds a shutdown (SIGTERM, Ctrl-C) gives requests in flight and streams to end
    /// before the process exits without them.
    #[arg(long, env = "HANSON_SHUTDOWN_GRACE_SECS", default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..=3_600))]
    shutdown_grace_secs: u64,
    /// Most client connections open at once; beyond it new ones wait to be accepted.
    #[arg(long, env = "HANSON_MAX_CONNECTIONS", default_value_t = 10_000, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    max_connections: u32,
    /// Most event streams (SSE and WebSocket) open at once; beyond it new ones get 429.
    /// Each holds a connection, so keep it below --max-connections.
    #[arg(long, env = "HANSON_MAX_STREAMS", default_value_t = 8_000, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    max_streams: u32,
    /// Most event streams open at once from one client IP.
    #[arg(long, env = "HANSON_MAX_STREAMS_PER_IP", default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    max_streams_per_ip: u32,
    /// Milliseconds between a market's ticker events at the most (they follow changes only).
    #[arg(long, env = "HANSON_TICKER_INTERVAL_MS", default_value_t = 250, value_parser = clap::value_parser!(u64).range(1..=60_000))]
    ticker_interval_ms: u64,
    /// Seconds between keep-alive pings on idle event streams.
    #[arg(long, env = "HANSON_STREAM_PING_SECS", default_value_t = 15, value_parser = clap::value_parser!(u64).range(1..=3_600))]
    stream_ping_secs: u64,
    /// A stream subscriber more than this many events behind its market is disconnected (it
    /// resumes with Last-Event-ID or after_seq).
    #[arg(long, env = "HANSON_STREAM_LAG_LIMIT", default_value_t = 10_000, value_parser = clap::value_parser!(i64).range(1..=1_000_000))]
    stream_lag_limit: i64,
    /// Serve the web app's pages and assets from this directory (the repository's
    /// `crates/hanson/web`), read on every request, instead of the copy built into the binary.
    #[arg(long, env = "HANSON_WEB_DIR")]
    web_dir: Option<std::path::PathBuf>,
    /// Where the other nodes on the same PostgreSQL database reach this one (http:// or
    /// https:// URL), to forward their bets and sells to it while it runs the trades.
    /// Default: the address it listens on, unless that is 0.0.0.0 or [::].
    #[arg(long, env = "HANSON_ADVERTISE_URL", value_parser = parse_advertise_url)]
    advertise_url: Option<String>,
    /// Neither forward this node's bets and sells to the node running the trades nor run
    /// the other nodes': run its own, taking the trade batch lock in turns with the others.
    #[arg(long, env = "HANSON_NO_TRADE_FORWARDING")]
    no_trade_forwarding: bool,
    /// Delays before each retry of a failed webhook delivery, e.g. `1s,2s,4s` (units ms, s, m,
    /// h); each gets up to 20% jitter. The default is the one `docs/api.md` gives.
    #[arg(long, env = "HANSON_WEBHOOK_RETRY_SCHEDULE", default_value = "5s,5m,30m,2h,5h,10h,10h")]
    webhook_retry_schedule: crate::domain::webhook::RetrySchedule,
    /// Also allow `http` webhook URLs and loopback or private addresses (local use and tests).
    #[arg(long, env = "HANSON_WEBHOOK_ALLOW_PRIVATE")]
    webhook_allow_private: bool,
    /// Log lines as plain text or as one JSON object per line.
    #[arg(long, env = "HANSON_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

#[derive(Subcommand)]
enum ProviderCommand {
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
enum TokenCommand {
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
enum SeedCommand {
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

fn parse_provider_wallet(text: &str) -> std::result::Result<(String, String), String> {
    match text.split_once(':') {
        Some((provider, wallet)) if !provider.is_empty() && !wallet.is_empty() => Ok((provider.to_string(), wallet.to_string())),
        _ => Err(format!("{text:?} is not PROVIDER_ID:WALLET_ID")),
    }
}

/// Refreshes PostgreSQL's statistics and visibility map after a bulk load, as autovacuum
/// would within a minute or so: until then the planner sorts whole tables instead of
/// walking an index. SQLite is left as the service leaves it.
fn analyze_after_bulk_load(database_url: &str) -> Result<()> {
    if database_url.starts_with("postgres") {
        crate::store::postgres::admin::execute(database_url, "VACUUM ANALYZE".into()).map_err(Error::internal)?;
    }
    Ok(())
}

/// Set by `hanson audit` when an invariant fails, so the process exits 1.
static AUDIT_FAILED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    init_tracing(match &cli.command {
        Command::Serve(args) => args.log_format,
        _ => LogFormat::Text,
    });
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli.command)) {
        Ok(()) if AUDIT_FAILED.load(std::sync::atomic::Ordering::SeqCst) => ExitCode::FAILURE,
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn init_tracing(format: LogFormat) {
    use tracing_subscriber::filter::Targets;
    use tracing_subscriber::prelude::*;
    let filter: Targets =
        std::env::var("RUST_LOG").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| Targets::new().with_default(tracing::Level::INFO));
    let text = (format == LogFormat::Text).then(|| {
        tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
    });
    let json = (format == LogFormat::Json).then(|| tracing_subscriber::fmt::layer().json().with_writer(std::io::stderr));
    let _ = tracing_subscriber::registry().with(text).with(json).with(filter).try_init();
}

fn rule(per_second: f64, burst: f64) -> Rule {
    Rule { per_second: per_second.max(0.0), burst: burst.max(1.0) }
}

/// An address (a single host) or a CIDR range.
fn parse_proxy(text: &str) -> std::result::Result<ipnet::IpNet, String> {
    let text = text.trim();
    text.parse::<ipnet::IpNet>()
        .or_else(|_| text.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
        .map_err(|_| format!("{text:?} is neither an IP address nor a CIDR range"))
}

fn parse_advertise_url(text: &str) -> std::result::Result<String, String> {
    match url::Url::parse(text.trim()) {
        Ok(url) if matches!(url.scheme(), "http" | "https") && url.host().is_some() && url.path() == "/" && url.query().is_none() => {
            Ok(url.as_str().trim_end_matches('/').to_string())
        }
        _ => Err(format!("{text:?} is not an http:// or https:// URL of a host (and port), without a path")),
    }
}

fn print_json(value: serde_json::Value) {
    println!("{value}");
}

async fn run(command: Command) -> Result<()> {
    match command {
        Command::Serve(args) => {
            let limits = Limits {
                auth_per_ip: rule(args.auth_rate_per_ip, args.auth_burst_per_ip),
                general_per_ip: rule(args.rate_per_ip, args.burst_per_ip),
                per_principal: rule(args.rate_per_principal, args.burst_per_principal),
            };
            if args.access_token_ttl < 1 || args.refresh_token_ttl < 1 {
                return Err(Error::invalid("access_token_ttl", "token lifetimes must be positive"));
            }
            let settings = Settings {
                limits,
                jwt_secret: args.jwt_secret.filter(|s| !s.is_empty()),
                access_token_ttl_secs: args.access_token_ttl,
                refresh_token_ttl_secs: args.refresh_token_ttl,
                trusted_proxies: args.trusted_proxies,
                streams: StreamSettings {
                    ping_interval: std::time::Duration::from_secs(args.stream_ping_secs),
                    max_streams: args.max_streams as usize,
                    max_streams_per_ip: args.max_streams_per_ip as usize,
                    lag_limit: args.stream_lag_limit,
                    ticker_interval: std::time::Duration::from_millis(args.ticker_interval_ms),
                },
                web_dir: args.web_dir,
                advertise_url: args.advertise_url,
                forward_trades: !args.no_trade_forwarding,
                webhooks: crate::events::webhook_sender::SenderSettings {
                    schedule: args.webhook_retry_schedule,
                    allow_private: args.webhook_allow_private,
                },
            };
            let store_options =
                StoreOptions { max_connections: args.db_max_connections as usize, statement_timeout_ms: args.db_statement_timeout_ms };
            let connections = ConnectionLimits {
                header_read_timeout: std::time::Duration::from_secs(args.header_read_timeout_secs),
                body_read_timeout: std::time::Duration::from_secs(args.body_read_timeout_secs),
                idle_timeout: std::time::Duration::from_secs(args.idle_timeout_secs),
                max_connections: args.max_connections as usize,
                shutdown_grace: std::time::Duration::from_secs(args.shutdown_grace_secs),
            };
            serve(ServeConfig { listen: args.listen, database_url: args.database.database_url, store_options, settings, connections }).await
        }
        Command::Sign { private_key, nonce } => {
            let bytes = wallet_auth::parse_hex(&private_key, true)
                .ok()
                .and_then(|b| <[u8; 32]>::try_from(b).ok())
                .ok_or_else(|| Error::invalid("private_key", "must be 0x followed by 64 hex digits"))?;
            let address = wallet_auth::evm_address_from_private_key(&bytes)
                .map_err(|_| Error::invalid("private_key", "is not a valid secp256k1 key"))?;
            let message = crate::domain::session::login_message(&nonce);
            let signature = wallet_auth::sign_personal(&bytes, message.as_bytes())
                .map_err(|_| Error::invalid("private_key", "is not a valid secp256k1 key"))?;
            print_json(json!({
                "wallet_address": wallet_auth::to_checksum_address(&address),
                "message": message,
                "signature": format!("0x{}", wallet_auth::to_hex(&signature)),
            }));
            Ok(())
        }
        Command::Audit { database } => {
            let store = Store::open(&database.database_url)?;
            let report = store.read(crate::store::audit::audit).await?;
            let summary = format!(
                "{} accounts, {} transfers, {} markets, {} positions",
                report.accounts, report.transfers, report.markets, report.positions
            );
            if report.problems.is_empty() {
                println!("audit ok: {summary}");
            } else {
                println!("audit FAILED: {} problem(s) in {summary}", report.problems.len());
                for problem in &report.problems {
                    println!("  - {problem}");
                }
                AUDIT_FAILED.store(true, std::sync::atomic::Ordering::SeqCst);
            }
            Ok(())
        }
        Command::Backup { to, database } => {
            let bytes = crate::store::sqlite::backup(&database.database_url, &to)?;
            print_json(json!({ "backup": to.display().to_string(), "bytes": bytes }));
            Ok(())
        }
        Command::Seed { command: SeedCommand::Markets { count, token_id, providers, liquidity, categories, database } } => {
            let started = std::time::Instant::now();
            let store = Store::open(&database.database_url)?;
            let seed = crate::store::seed::MarketSeed { providers, token_id, liquidity, count, categories };
            crate::store::seed::seed_markets(&store, &seed).await?;
            analyze_after_bulk_load(&database.database_url)?;
            print_json(json!({ "markets": count, "seconds": started.elapsed().as_secs_f64() }));
            Ok(())
        }
        Command::Seed { command: SeedCommand::PricePoints { market_id, count, days, database } } => {
            let started = std::time::Instant::now();
            let store = Store::open(&database.database_url)?;
            let seed = crate::store::seed::PriceSeed { market_id, count, days };
            let (first, last) = crate::store::seed::seed_price_points(&store, &seed).await?;
            analyze_after_bulk_load(&database.database_url)?;
            print_json(json!({
                "price_points": count,
                "from": crate::domain::time::format_micros(first),
                "to": crate::domain::time::format_micros(last),
                "seconds": started.elapsed().as_secs_f64(),
            }));
            Ok(())
        }
        Command::Seed { command: SeedCommand::Trades { market_id, wallets, count, days, database } } => {
            let started = std::time::Instant::now();
            let store = Store::open(&database.database_url)?;
            let seed = crate::store::seed::TradeSeed { market_id, wallets, count, days };
            let seeded = crate::store::seed::seed_trades(&store, &seed).await?;
            analyze_after_bulk_load(&database.database_url)?;
            print_json(json!({
                "trades": count,
                "wallets": wallets,
                "volume": seeded.volume.to_string(),
                "from": crate::domain::time::format_micros(seeded.first),
                "to": crate::domain::time::format_micros(seeded.last),
                "seconds": started.elapsed().as_secs_f64(),
            }));
            Ok(())
        }
        Command::Openapi => {
            print_json(crate::api::openapi_json().clone());
            Ok(())
        }
        Command::Provider { command: ProviderCommand::Create { name, database } } => {
            let name = name.trim().to_string();
            if name.is_empty() {
                return Err(Error::invalid("name", "must not be empty"));
            }
            let store = Store::open(&database.database_url)?;
            let id = uuid::Uuid::new_v4().to_string();
            let key = auth::generate_api_key();
            let hash = crate::api::extract::hash_api_key(&key);
            let (pid, pname) = (id.clone(), name.clone());
            store.write(move |c| tenants::create_provider(c, &pid, &pname, &hash, now_micros())).await?;
            print_json(json!({ "provider_id": id, "name": name, "api_key": key }));
            Ok(())
        }
        Command::Provider { command: ProviderCommand::RotateKey { provider_id, database } } => {
            let store = Store::open(&database.database_url)?;
            let key = auth::generate_api_key();
            let hash = crate::api::extract::hash_api_key(&key);
            let pid = provider_id.clone();
            store.write(move |c| tenants::rotate_key(c, &pid, &hash, now_micros())).await?;
            print_json(json!({ "provider_id": provider_id, "api_key": key }));
            Ok(())
        }
        Command::Token { command: TokenCommand::Create { symbol, name, decimals, database } } => {
            if symbol.trim().is_empty() || name.trim().is_empty() {
                return Err(Error::invalid("symbol", "symbol and name must not be empty"));
            }
            if decimals > 36 {
                return Err(Error::invalid("decimals", "must be at most 36"));
            }
            let store = Store::open(&database.database_url)?;
            let token = Token {
                id: uuid::Uuid::new_v4().to_string(),
                symbol: symbol.trim().to_string(),
                name: name.trim().to_string(),
                decimals: i64::from(decimals),
            };
            let stored = token.clone();
            store.write(move |c| tenants::create_token(c, &stored, now_micros())).await?;
            print_json(json!({ "token_id": token.id, "symbol": token.symbol, "name": token.name, "decimals": token.decimals }));
            Ok(())
        }
    }
}
