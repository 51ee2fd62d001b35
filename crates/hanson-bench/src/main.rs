//! `hanson-bench`: a load generator for the Hanson service. See README.md beside Cargo.toml.

mod api;
mod args;
mod env;
mod export;
mod load;
mod reads;
mod rng;
mod seed;
mod soak;
mod sse;
mod streams;
mod watchers;
mod webhooks;
mod workers;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use serde_json::{json, Value};

use api::{Api, Market, MarketSpec, Provider, ONE_TOKEN};
use env::{Database, Result, Server};
use load::{drive, RunStats};

use args::{default_scenarios, Args, SCENARIOS};

impl Args {
    fn database_url(&self) -> Option<String> {
        if self.postgres {
            Some(env::DEFAULT_POSTGRES_ADMIN_URL.to_string())
        } else {
            self.database_url.clone()
        }
    }

    fn hanson_bin(&self) -> PathBuf {
        self.hanson_bin.clone().unwrap_or_else(|| {
            let exe = std::env::current_exe().unwrap_or_default();
            exe.with_file_name(format!("hanson{}", std::env::consts::EXE_SUFFIX))
        })
    }
}

/// What a scenario prepared for its measured run.
enum Prepared {
    Trade { markets: Arc<Vec<Market>>, sessions: Vec<api::Session> },
    Search { providers: Arc<Vec<String>> },
    History { market: Market, from: i64, to: i64, mixed: bool },
    Cards { markets: Arc<Vec<String>> },
}

struct ScenarioResult {
    name: &'static str,
    backend: &'static str,
    nodes: usize,
    clients: usize,
    seconds: f64,
    main: RunStats,
    healthz: RunStats,
    audit_ok: bool,
    audit_report: String,
    server_died: Option<String>,
    seed: Option<Value>,
}

impl ScenarioResult {
    fn is_trade(&self) -> bool {
        matches!(self.name, "hot_market" | "many_markets")
    }
}

fn round(x: f64, digits: i32) -> Value {
    if !x.is_finite() {
        return Value::Null;
    }
    let f = 10f64.powi(digits);
    json!((x * f).round() / f)
}

/// Rounded to `digits` significant digits (ratios span several orders of magnitude).
fn round_sig(x: f64, digits: i32) -> Value {
    if !x.is_finite() {
        return Value::Null;
    }
    if x == 0.0 {
        return json!(0.0);
    }
    let magnitude = x.abs().log10().floor() as i32;
    round(x, (digits - 1 - magnitude).max(0))
}

/// One JSON object with its keys in this order.
fn ordered_json(fields: Vec<(&str, Value)>) -> String {
    let body: Vec<String> = fields.into_iter().map(|(k, v)| format!("{}:{}", Value::from(k), v)).collect();
    format!("{{{}}}", body.join(","))
}

fn scenario_json(r: &ScenarioResult) -> String {
    let p = r.main.percentiles();
    let rate = r.main.per_second();
    let healthz = r.healthz.per_second();
    let errors: serde_json::Map<String, Value> = r.main.errors.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
    let mut fields: Vec<(&str, Value)> = vec![
        ("scenario", json!(r.name)),
        ("backend", json!(r.backend)),
        ("nodes", json!(r.nodes)),
        ("clients", json!(r.clients)),
        ("seconds", round(r.seconds, 1)),
    ];
    if r.is_trade() {
        fields.push(("bets_per_s", round(rate, 1)));
    } else {
        fields.push(("requests_per_s", round(rate, 1)));
    }
    fields.extend([
        ("p50_ms", round(p.p50, 2)),
        ("p90_ms", round(p.p90, 2)),
        ("p99_ms", round(p.p99, 2)),
        ("errors", json!(r.main.error_count())),
        ("errors_by_code", Value::Object(errors)),
        ("healthz_per_s", round(healthz, 1)),
        ("ratio", round_sig(rate / healthz, 3)),
    ]);
    if r.is_trade() {
        fields.push(("sells_per_s", round(r.main.ok_of("sell") as f64 / r.main.seconds, 1)));
    } else {
        let mut kinds: Vec<&&str> = r.main.kinds.keys().collect();
        kinds.sort();
        let by_kind: serde_json::Map<String, Value> = kinds
            .into_iter()
            .map(|k| {
                let kp = r.main.kind_percentiles(k);
                (k.to_string(), json!({ "n": kp.count, "p50_ms": round(kp.p50, 2), "p99_ms": round(kp.p99, 2) }))
            })
            .collect();
        fields.push(("by_kind", Value::Object(by_kind)));
        if r.name == "market_reads" {
            fields.extend(
                reads::p99_ratios(&r.main)
                    .into_iter()
                    .map(|(k, v)| (if k == "candles" { "candles_p99_ratio" } else { "leaderboard_p99_ratio" }, round_sig(v, 3))),
            );
        }
    }
    if let Some(seed) = &r.seed {
        fields.push(("seed", seed.clone()));
    }
    fields.push(("audit", json!(if r.audit_ok { "ok" } else { "failed" })));
    if let Some(died) = &r.server_died {
        fields.push(("server_died", json!(died)));
    }
    ordered_json(fields)
}

fn print_summary(r: &ScenarioResult) {
    let p = r.main.percentiles();
    let h = r.healthz.percentiles();
    let rate = r.main.per_second();
    let healthz = r.healthz.per_second();
    println!("== {} ({}, {} clients, {} s measured) ==", r.name, r.backend, r.clients, r.seconds);
    if r.is_trade() {
        println!(
            "trades: {} ok in window (bets {}, sells {}) -> {:.1} trades/s",
            r.main.ok(),
            r.main.ok_of("bet"),
            r.main.ok_of("sell"),
            rate
        );
    } else {
        println!("requests: {} ok in window -> {:.1} requests/s", r.main.ok(), rate);
        let mut kinds: Vec<&&str> = r.main.kinds.keys().collect();
        kinds.sort();
        for k in kinds {
            let kp = r.main.kind_percentiles(k);
            println!("  {k:<16} n={:<7} p50 {:>9.2} ms  p90 {:>9.2} ms  p99 {:>9.2} ms", kp.count, kp.p50, kp.p90, kp.p99);
        }
        if r.name == "market_reads" {
            for (k, ratio) in reads::p99_ratios(&r.main) {
                println!("  {k} p99 / price_history p99: {ratio:.2} (target <= 2)");
            }
        }
    }
    println!("latency: p50 {:.2} ms  p90 {:.2} ms  p99 {:.2} ms  max {:.2} ms", p.p50, p.p90, p.p99, p.max);
    if r.main.errors.is_empty() {
        println!("errors: none");
    } else {
        println!("errors: {}", r.main.error_count());
        for (k, n) in &r.main.errors {
            println!("  {k}: {n}");
        }
    }
    println!(
        "healthz: {:.1} requests/s (p50 {:.2} ms, p99 {:.2} ms, {} errors) -> ratio {:.3e}",
        healthz,
        h.p50,
        h.p99,
        r.healthz.error_count(),
        rate / healthz
    );
    if let Some(seed) = &r.seed {
        println!("seed: {seed}");
    }
    println!("audit: {} ({})", if r.audit_ok { "ok" } else { "FAILED" }, r.audit_report.lines().next().unwrap_or(""));
    if let Some(died) = &r.server_died {
        println!("server died: {died}");
    }
    println!();
}

async fn measure<S, F, Fut>(args: &Args, states: Vec<S>, step: F) -> RunStats
where
    S: Send + 'static,
    F: Fn(S) -> Fut + Clone + Send + Sync + 'static,
    Fut: std::future::Future<Output = (S, load::Sample)> + Send + 'static,
{
    drive(states, Duration::from_secs_f64(args.warmup), Duration::from_secs_f64(args.duration), step).await
}

/// Picks the database for one scenario.
fn scenario_database(args: &Args) -> Result<Database> {
    match (&args.url, args.database_url()) {
        (Some(_), Some(url)) => Ok(Database::existing(&url)),
        (Some(_), None) => Err("--url needs --database-url (setup, seeding and the audit use the database)".into()),
        (None, Some(url)) if env::backend_of(&url) == "postgres" => Database::fresh_postgres(&url),
        (None, Some(url)) => Ok(Database::existing(&url)),
        (None, None) => Database::fresh_sqlite(),
    }
}

/// The running server: ours (which can be restarted around bulk seeding) or the user's.
struct Target {
    server: Option<Server>,
    base: String,
    /// Further nodes on the same database (`--nodes`).
    more: Vec<Server>,
}

impl Target {
    fn take_server(&mut self) -> Option<Server> {
        self.server.take()
    }
}

async fn run_scenario(args: &Args, name: &'static str) -> Result<ScenarioResult> {
    let bin = args.hanson_bin();
    if !bin.exists() {
        return Err(format!(
            "hanson binary not found at {} (build it with `cargo build --release -p hanson` in the same target dir, or pass --hanson-bin)",
            bin.display()
        )
        .into());
    }
    let db = scenario_database(args)?;
    let backend = env::backend_of(&db.url);
    let mut target = match &args.url {
        Some(url) => Target { server: None, base: url.trim_end_matches('/').to_string(), more: Vec::new() },
        None => {
            let server = Server::launch(&bin, &db.url, &db.scratch_dir(), &[])?;
            let base = server.base.clone();
            Target { server: Some(server), base, more: Vec::new() }
        }
    };
    let nodes = args.nodes.max(1);
    if nodes > 1 {
        if args.url.is_some() || backend != "postgres" || !matches!(name, "hot_market" | "many_markets") {
            return Err("--nodes needs a launched server on PostgreSQL and a trading scenario (hot_market, many_markets)".into());
        }
        for _ in 1..nodes {
            target.more.push(Server::launch(&bin, &db.url, &db.scratch_dir(), &[])?);
        }
    }
    let owned = target.server.is_some();
    eprintln!("[{name}] {backend} database {}; server {}", redact(&db.url), target.base);
    let api = Api::new(&target.base);
    let token_id = api::create_token(&bin, &db.url)?;
    let treasury = 1_000_000_000_000 * ONE_TOKEN;
    let tag = &uuid::Uuid::new_v4().simple().to_string()[..8];
    let mut clients = args.clients;
    let mut seed_info = None;

    let prepared = match name {
        "hot_market" | "many_markets" => {
            let p = api::create_provider(&api, &bin, &db.url, &format!("bench {name} {tag}"), &token_id, treasury).await?;
            let count = if name == "hot_market" { 1 } else { args.markets.max(1) };
            let mut markets = Vec::with_capacity(count);
            for i in 0..count {
                let spec = MarketSpec {
                    question: format!("Bench {name} market {i}?"),
                    category: "sports",
                    outcomes: 2,
                    liquidity: 100_000 * ONE_TOKEN,
                    max_bet: 1_000 * ONE_TOKEN,
                };
                markets.push(api::create_market(&api, &p, &token_id, spec).await?);
            }
            let wallets = args.wallets.max(clients);
            eprintln!("[{name}] {count} market(s); funding and logging in {wallets} wallets");
            let sessions = api::new_traders(&api, &p, &token_id, 1_000_000 * ONE_TOKEN, wallets, 16).await?;
            Prepared::Trade { markets: Arc::new(markets), sessions }
        }
        "search" => {
            let mut providers: Vec<Provider> = Vec::new();
            for i in 0..4 {
                providers.push(api::create_provider(&api, &bin, &db.url, &format!("bench search {tag} #{i}"), &token_id, treasury).await?);
            }
            // Three markets through the API, with 2, 3 and 4 outcomes, beside the seeded ones.
            let liquidity = 1_000 * ONE_TOKEN;
            for n in [2usize, 3, 4] {
                let spec = MarketSpec {
                    question: format!("Will template {n} win the final?"),
                    category: "sports",
                    outcomes: n,
                    liquidity,
                    max_bet: 100 * ONE_TOKEN,
                };
                api::create_market(&api, &providers[0], &token_id, spec).await?;
            }
            let count = args.search_markets.saturating_sub(3);
            eprintln!("[{name}] bulk-inserting {count} markets");
            let server = target.take_server();
            if let Some(s) = server {
                s.stop();
            }
            let seed = seed::SearchSeed { providers: &providers, token_id: &token_id, liquidity };
            let seconds = seed::seed_markets(&bin, &db.url, &seed, count)?;
            eprintln!("[{name}] seeded in {seconds:.1} s");
            seed_info = Some(json!({ "markets": count + 3, "method": "bulk_sql", "seconds": round(seconds, 1) }));
            if owned {
                let server = Server::launch(&bin, &db.url, &db.scratch_dir(), &[])?;
                target.base = server.base.clone();
                target.server = Some(server);
            }
            Prepared::Search { providers: Arc::new(providers.iter().map(|p| p.id.clone()).collect()) }
        }
        "price_history" | "market_reads" => {
            clients = args.history_clients.unwrap_or(args.clients).max(1);
            let p = api::create_provider(&api, &bin, &db.url, &format!("bench history {tag}"), &token_id, treasury).await?;
            let spec = MarketSpec {
                question: "Bench price history market?".into(),
                category: "finance",
                outcomes: 2,
                liquidity: 1_000 * ONE_TOKEN,
                max_bet: 100 * ONE_TOKEN,
            };
            let market = api::create_market(&api, &p, &token_id, spec).await?;
            eprintln!("[{name}] bulk-inserting {} price points", args.price_points);
            if let Some(s) = target.take_server() {
                s.stop();
            }
            let (from, to, seconds) = seed::seed_price_points(&bin, &db.url, &market, args.price_points, args.history_days.max(1))?;
            eprintln!("[{name}] seeded in {seconds:.1} s");
            let mut info =
                json!({ "price_points": args.price_points, "days": args.history_days, "method": "bulk_sql", "seconds": round(seconds, 1) });
            if name == "market_reads" {
                let wallets = reads::LEADERBOARD_WALLETS;
                // One buy on each outcome per wallet: positions on both.
                let seconds = seed::seed_trades(&bin, &db.url, &market, wallets, 2 * wallets, args.history_days.max(1))?;
                eprintln!("[{name}] {wallets} wallets' trades seeded in {seconds:.1} s");
                info["leaderboard_wallets"] = json!(wallets);
                info["trades"] = json!(2 * wallets);
            }
            seed_info = Some(info);
            if owned {
                let server = Server::launch(&bin, &db.url, &db.scratch_dir(), &[])?;
                target.base = server.base.clone();
                target.server = Some(server);
            }
            Prepared::History { market, from, to, mixed: name == "market_reads" }
        }
        "card" => {
            let p = api::create_provider(&api, &bin, &db.url, &format!("bench card {tag}"), &token_id, treasury).await?;
            let mut ids = Vec::new();
            for i in 0..args.card_markets.max(1) {
                let spec = MarketSpec {
                    question: format!("Will the share card of bench market number {i} render in well under fifty milliseconds?"),
                    category: "tech",
                    outcomes: 2 + i % 3,
                    liquidity: 1_000 * ONE_TOKEN,
                    max_bet: 100 * ONE_TOKEN,
                };
                let market = api::create_market(&api, &p, &token_id, spec).await?;
                // Warm: each card rendered once, so the run measures cached cards.
                let http = reqwest::Client::new();
                let warmed = http.get(format!("{}/markets/{}/card.png", target.base, market.id)).send().await?;
                if !warmed.status().is_success() {
                    return Err(format!("GET card.png answered {}", warmed.status()).into());
                }
                ids.push(market.id);
            }
            Prepared::Cards { markets: Arc::new(ids) }
        }
        other => return Err(format!("unknown scenario {other:?}; one of {SCENARIOS:?}").into()),
    };

    let base = target.base.clone();
    eprintln!("[{name}] healthz: {clients} clients, {} s + {} s warm-up", args.duration, args.warmup);
    let healthz = measure(args, (0..clients).map(|_| workers::Healthz::new(&base)).collect(), |h: workers::Healthz| h.step()).await;
    eprintln!("[{name}] measuring: {clients} clients, {} s + {} s warm-up", args.duration, args.warmup);
    let main = match prepared {
        Prepared::Trade { markets, sessions } => {
            let mut slices: Vec<Vec<api::Session>> = vec![Vec::new(); clients];
            for (i, s) in sessions.into_iter().enumerate() {
                slices[i % clients].push(s);
            }
            let bases: Vec<&str> = std::iter::once(base.as_str()).chain(target.more.iter().map(|s| s.base.as_str())).collect();
            let traders = slices
                .into_iter()
                .enumerate()
                .map(|(i, wallets)| workers::Trader::new(bases[i % bases.len()], markets.clone(), wallets, args.sell_share))
                .collect();
            measure(args, traders, |t: workers::Trader| t.step()).await
        }
        Prepared::Search { providers } => {
            measure(args, (0..clients).map(|_| workers::Searcher::new(&base, providers.clone())).collect(), |s: workers::Searcher| s.step())
                .await
        }
        Prepared::History { market, from, to, mixed: true } => {
            let readers = (0..clients).map(|_| reads::MarketReader::new(&base, &market, from, to)).collect();
            measure(args, readers, |r: reads::MarketReader| r.step()).await
        }
        Prepared::History { market, from, to, mixed: false } => {
            let readers = (0..clients).map(|_| workers::HistoryReader::new(&base, &market, from, to)).collect();
            measure(args, readers, |r: workers::HistoryReader| r.step()).await
        }
        Prepared::Cards { markets } => {
            let readers = (0..clients).map(|i| workers::CardReader::new(&base, markets.clone(), i)).collect();
            measure(args, readers, |r: workers::CardReader| r.step()).await
        }
    };
    let server_died = target
        .server
        .iter_mut()
        .chain(target.more.iter_mut())
        .find_map(|s| s.exited().map(|status| format!("{status}; log: {}", s.log.display())));
    eprintln!("[{name}] audit");
    let (audit_ok, audit_report) = env::audit(&bin, &db.url)?;
    if !audit_ok {
        eprintln!("[{name}] audit FAILED:\n{audit_report}");
    }
    if let Some(server) = target.server.take() {
        server.stop();
    }
    target.more.drain(..).for_each(Server::stop);
    drop(db);
    Ok(ScenarioResult {
        name,
        backend,
        nodes,
        clients,
        seconds: args.duration,
        main,
        healthz,
        audit_ok,
        audit_report,
        server_died,
        seed: seed_info,
    })
}

/// The URL without its password, for logs.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if url[s + 3..at].contains(':') => {
            let user_end = s + 3 + url[s + 3..at].find(':').unwrap_or(0);
            format!("{}:***{}", &url[..user_end], &url[at..])
        }
        _ => url.to_string(),
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    let names: Vec<&'static str> = match &args.scenario {
        None => default_scenarios(),
        Some(s) => match SCENARIOS.iter().find(|n| **n == s.as_str()) {
            Some(n) => vec![*n],
            None => {
                eprintln!("error: unknown scenario {s:?}; one of {}", SCENARIOS.join(", "));
                return ExitCode::from(2);
            }
        },
    };
    if args.clients == 0 || args.duration <= 0.0 {
        eprintln!("error: --clients and --duration must be positive");
        return ExitCode::from(2);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("tokio runtime");
    let mut failed = false;
    let mut lines = Vec::new();
    for name in names {
        if name.starts_with("stream_") || matches!(name, "webhooks" | "export" | "soak") {
            let run = async {
                if name == "soak" {
                    soak::run(&args).await
                } else if name == "export" {
                    export::run(&args).await
                } else if name == "stream_watchers" {
                    watchers::run(&args).await
                } else if name == "webhooks" {
                    webhooks::run(&args, args.endpoints.max(1)).await
                } else {
                    streams::run(&args, name).await
                }
            };
            match runtime.block_on(run) {
                Ok(r) => {
                    println!("{}", r.text);
                    failed |= r.failed;
                    lines.push(ordered_json(r.fields));
                }
                Err(e) => {
                    eprintln!("error: scenario {name}: {e}");
                    failed = true;
                    lines.push(ordered_json(vec![("scenario", json!(name)), ("error", json!(e.to_string()))]));
                }
            }
            continue;
        }
        match runtime.block_on(run_scenario(&args, name)) {
            Ok(r) => {
                print_summary(&r);
                failed |= !r.audit_ok || r.server_died.is_some();
                lines.push(scenario_json(&r));
            }
            Err(e) => {
                eprintln!("error: scenario {name}: {e}");
                failed = true;
                lines.push(ordered_json(vec![("scenario", json!(name)), ("error", json!(e.to_string()))]));
            }
        }
    }
    for line in lines {
        println!("{line}");
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
