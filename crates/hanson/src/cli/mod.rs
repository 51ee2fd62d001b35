//! The `hanson` command line: serve, and the administrative commands that print JSON and
//! work while a server runs on the same database.
//!
//! Only `serve` creates a database; every other command names the database it uses on stderr
//! and refuses a missing one. Errors are one plain sentence on stderr: exit 2 for a mistake in
//! the command line, 1 for a failure.

mod args;
mod demo;
mod serve;

use std::process::ExitCode;

use clap::Parser;
use serde_json::json;

use crate::auth;
use crate::domain::tenant::Token;
use crate::domain::time::now_micros;
use crate::error::{Error, Result};
use crate::store::{sqlite, tenants, Store};
use args::{Cli, Command, Database, LogFormat, ProviderCommand, SeedCommand, TokenCommand};

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

/// A mistake in the command line (arguments clap accepted but the command refuses).
const USAGE: u8 = 2;

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
            let (sentence, usage) = sentence(e);
            eprintln!("error: {sentence}");
            if usage {
                ExitCode::from(USAGE)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

/// An error as one plain sentence for a person at a terminal, and whether it is a mistake in
/// the command line. (A 500's "internal:" is for the service's log; here nothing is one.)
fn sentence(error: Error) -> (String, bool) {
    match error {
        Error::Validation(fields) => {
            let parts: Vec<String> = fields.iter().map(|f| format!("--{}: {}", f.field.replace('_', "-"), f.message)).collect();
            (parts.join("; "), true)
        }
        Error::Internal(cause) | Error::Unavailable(cause) | Error::OutcomeUnknown(cause) => {
            (cause.trim_start_matches("sqlite: ").to_string(), false)
        }
        Error::Rule { detail, .. } | Error::Conflict { detail, .. } | Error::Forbidden { detail, .. } => (detail, false),
        other => (other.to_string(), false),
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

fn print_json(value: serde_json::Value) {
    println!("{value}");
}

/// The URL of the database a command uses, said on stderr: a SQLite file by its absolute
/// path, PostgreSQL without its password.
fn announce(url: &str) {
    let shown = match sqlite::path_from_url(url) {
        Some(path) if url.starts_with("sqlite:") => sqlite::shown(&path),
        _ => crate::server::redact(url),
    };
    eprintln!("database: {shown}");
}

/// Opens the existing database a command works on (never creating one), having named it.
fn open_existing(database: &Database) -> Result<(String, Store)> {
    let url = database.url();
    announce(&url);
    let store = Store::open_existing(&url)?;
    Ok((url, store))
}

async fn run(command: Command) -> Result<()> {
    match command {
        Command::Serve(args) => serve::serve(args).await,
        Command::Sign { private_key, nonce, message } => {
            let bytes = wallet_auth::parse_hex(&private_key, true)
                .ok()
                .and_then(|b| <[u8; 32]>::try_from(b).ok())
                .ok_or_else(|| Error::invalid("private_key", "must be 0x followed by 64 hex digits"))?;
            let address = wallet_auth::evm_address_from_private_key(&bytes)
                .map_err(|_| Error::invalid("private_key", "is not a valid secp256k1 key"))?;
            let message = message.unwrap_or_else(|| crate::domain::session::login_message(&nonce));
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
            let url = database.url();
            announce(&url);
            // SQLite: one connection of its own, closed at the end, so a copy audited is left
            // without -wal or -shm files.
            let report = match url.starts_with("sqlite:") {
                true => sqlite::read_file(&url, crate::store::audit::audit)?,
                false => Store::open_existing(&url)?.read(crate::store::audit::audit).await?,
            };
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
            let url = database.url();
            announce(&url);
            let bytes = sqlite::backup(&url, &to)?;
            print_json(json!({ "backup": to.display().to_string(), "bytes": bytes }));
            Ok(())
        }
        Command::Seed { command: SeedCommand::Markets { count, token_id, providers, liquidity, categories, database } } => {
            let started = std::time::Instant::now();
            let (url, store) = open_existing(&database)?;
            let seed = crate::store::seed::MarketSeed { providers, token_id, liquidity, count, categories };
            crate::store::seed::seed_markets(&store, &seed).await?;
            analyze_after_bulk_load(&url)?;
            print_json(json!({ "markets": count, "seconds": started.elapsed().as_secs_f64() }));
            Ok(())
        }
        Command::Seed { command: SeedCommand::PricePoints { market_id, count, days, database } } => {
            let started = std::time::Instant::now();
            let (url, store) = open_existing(&database)?;
            let seed = crate::store::seed::PriceSeed { market_id, count, days };
            let (first, last) = crate::store::seed::seed_price_points(&store, &seed).await?;
            analyze_after_bulk_load(&url)?;
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
            let (url, store) = open_existing(&database)?;
            let seed = crate::store::seed::TradeSeed { market_id, wallets, count, days };
            let seeded = crate::store::seed::seed_trades(&store, &seed).await?;
            analyze_after_bulk_load(&url)?;
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
            let (_, store) = open_existing(&database)?;
            let id = uuid::Uuid::new_v4().to_string();
            let key = auth::generate_api_key();
            let hash = crate::api::extract::hash_api_key(&key);
            let (pid, pname) = (id.clone(), name.clone());
            store.write(move |c| tenants::create_provider(c, &pid, &pname, &hash, now_micros())).await?;
            print_json(json!({ "provider_id": id, "name": name, "api_key": key }));
            Ok(())
        }
        Command::Provider { command: ProviderCommand::RotateKey { provider_id, database } } => {
            let (_, store) = open_existing(&database)?;
            let key = auth::generate_api_key();
            let hash = crate::api::extract::hash_api_key(&key);
            let pid = provider_id.clone();
            store.write(move |c| tenants::rotate_key(c, &pid, &hash, now_micros())).await.map_err(|e| match e {
                Error::NotFound => Error::Unavailable(format!("there is no provider {provider_id:?} in this database")),
                other => other,
            })?;
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
            let (_, store) = open_existing(&database)?;
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
