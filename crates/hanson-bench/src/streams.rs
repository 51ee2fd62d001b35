//! The live-stream scenarios: `stream_fanout` (the hot market's trade load, first alone, then
//! with N SSE subscribers on the market, every event checked) and `stream_idle` (N idle
//! subscribers held open: the server's memory per subscriber and `/healthz` latency).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::api::{self, Api, Market, MarketSpec, Session, ONE_TOKEN};
use crate::env::{self, Result, Server};
use crate::load::{Percentiles, RunStats};
use crate::sse::{LagHistogram, SubStats, Subscribers};
use crate::{round, round_sig, workers, Args};

/// `hanson serve` flags for these scenarios: the default caps (10,000 connections, 20,000
/// streams, 200 streams per IP) would refuse 10,000 subscribers from one address.
const STREAM_LIMITS: &[&str] = &["--max-connections", "30000", "--max-streams", "30000", "--max-streams-per-ip", "30000"];
/// Subscribers between connect and snapshot at a time.
const CONNECT_PARALLEL: usize = 256;
/// Read buffer per subscriber: a fan-out subscriber may have many events waiting per read; an
/// idle one only a snapshot and pings.
const FANOUT_READ_BUFFER: usize = 64 * 1024;
const IDLE_READ_BUFFER: usize = 4 * 1024;

pub(crate) fn default_subscribers(name: &str) -> usize {
    if name == "stream_idle" {
        10_000
    } else {
        1_000
    }
}

/// What a stream scenario printed: the readable block, the JSON fields, and whether it failed.
pub(crate) struct Report {
    pub fields: Vec<(&'static str, Value)>,
    pub text: String,
    pub failed: bool,
}

/// The server (ours or the user's), its database and the scenario's market.
pub(crate) struct Setup {
    pub(crate) bin: PathBuf,
    pub(crate) db: env::Database,
    pub(crate) backend: &'static str,
    pub(crate) server: Option<Server>,
    pub(crate) base: String,
    pub(crate) pid: Option<u32>,
    pub(crate) api: Api,
    pub(crate) provider: api::Provider,
    pub(crate) token_id: String,
    pub(crate) market: Market,
}

pub(crate) async fn setup(args: &Args, name: &'static str, subscribers: usize, flags: &[&str]) -> Result<Setup> {
    let bin = args.hanson_bin();
    if !bin.exists() {
        return Err(format!(
            "hanson binary not found at {} (build it with `cargo build --release -p hanson`, or pass --hanson-bin)",
            bin.display()
        )
        .into());
    }
    // Sockets: the subscribers, the trade clients, a margin for the rest. Raised before the
    // server is launched, so it inherits the limit.
    let limit = env::raise_fd_limit((subscribers + args.clients + 512) as u64)?;
    let db = crate::scenario_database(args)?;
    let backend = env::backend_of(&db.url);
    let (server, base) = match &args.url {
        Some(url) => (None, url.trim_end_matches('/').to_string()),
        None => {
            let flags: Vec<&str> = STREAM_LIMITS.iter().chain(flags).copied().collect();
            let server = Server::launch(&bin, &db.url, &db.scratch_dir(), &flags)?;
            let base = server.base.clone();
            (Some(server), base)
        }
    };
    let pid = server.as_ref().map(Server::pid).or(args.server_pid);
    eprintln!(
        "[{name}] {backend} database {}; server {base}{}; open-file limit {limit}",
        crate::redact(&db.url),
        pid.map(|p| format!(" (pid {p})")).unwrap_or_default()
    );
    let api = Api::new(&base);
    let token_id = api::create_token(&bin, &db.url)?;
    let tag = &uuid::Uuid::new_v4().simple().to_string()[..8];
    let provider =
        api::create_provider(&api, &bin, &db.url, &format!("bench {name} {tag}"), &token_id, 1_000_000_000_000 * ONE_TOKEN).await?;
    // The hot_market market.
    let spec = MarketSpec {
        question: format!("Bench {name} market?"),
        category: "sports",
        outcomes: 2,
        liquidity: 100_000 * ONE_TOKEN,
        max_bet: 1_000 * ONE_TOKEN,
    };
    let market = api::create_market(&api, &provider, &token_id, spec).await?;
    Ok(Setup { bin, db, backend, server, base, pid, api, provider, token_id, market })
}

/// The audit and the server's health after a scenario; stops our server.
pub(crate) fn finish(name: &str, mut s: Setup) -> Result<(bool, String, Option<String>)> {
    let died = s.server.as_mut().and_then(|srv| srv.exited().map(|status| format!("{status}; log: {}", srv.log.display())));
    eprintln!("[{name}] audit");
    let (ok, report) = env::audit(&s.bin, &s.db.url)?;
    if !ok {
        eprintln!("[{name}] audit FAILED:\n{report}");
    }
    if let Some(server) = s.server.take() {
        server.stop();
    }
    Ok((ok, report, died))
}

/// The hot_market trade load (warm-up + duration) over `sessions`.
pub(crate) async fn trade_load(args: &Args, base: &str, market: &Market, sessions: &[Session]) -> RunStats {
    let clients = args.clients;
    let mut slices: Vec<Vec<Session>> = vec![Vec::new(); clients];
    for (i, s) in sessions.iter().enumerate() {
        slices[i % clients].push(s.clone());
    }
    let markets = Arc::new(vec![market.clone()]);
    let traders = slices.into_iter().map(|wallets| workers::Trader::new(base, markets.clone(), wallets, args.sell_share)).collect();
    crate::measure(args, traders, |t: workers::Trader| t.step()).await
}

/// CPU seconds so far: the server's (when its pid is known), this whole process's, and the
/// subscriber threads' of this process.
pub(crate) struct Cpu {
    at: Instant,
    server: Option<f64>,
    bench: Option<f64>,
    subscribers: Option<f64>,
}

impl Cpu {
    pub(crate) fn now(server_pid: Option<u32>) -> Cpu {
        let me = std::process::id();
        Cpu {
            at: Instant::now(),
            server: server_pid.and_then(|p| env::cpu_seconds(p, None)),
            bench: env::cpu_seconds(me, None),
            subscribers: env::cpu_seconds(me, Some(crate::sse::THREAD_NAME)),
        }
    }

    /// Cores used since `start`: (server, bench, subscriber threads).
    pub(crate) fn cores_since(&self, start: &Cpu) -> (Option<f64>, Option<f64>, Option<f64>) {
        let wall = (self.at - start.at).as_secs_f64().max(1e-9);
        let d = |a: Option<f64>, b: Option<f64>| Some((a? - b?) / wall);
        (d(self.server, start.server), d(self.bench, start.bench), d(self.subscribers, start.subscribers))
    }
}

pub(crate) fn cores_json(v: Option<f64>) -> Value {
    v.map_or(Value::Null, |c| round(c, 2))
}

fn errors_json(errors: &BTreeMap<String, u64>) -> Value {
    Value::Object(errors.iter().map(|(k, v)| (k.clone(), json!(v))).collect())
}

/// Opens one more subscriber and returns the seq of its snapshot: the market's seq now.
async fn current_seq(base: &str, market_id: &str) -> Option<u64> {
    let probe = Subscribers::open(base, market_id, 1, 1, IDLE_READ_BUFFER, false).ok()?;
    probe.wait_snapshots(Duration::from_secs(10)).await;
    probe.close().await.into_iter().next().and_then(|s| s.snapshot_seq)
}

pub(crate) async fn run(args: &Args, name: &'static str) -> Result<Report> {
    let subscribers = args.subscribers.unwrap_or_else(|| default_subscribers(name)).max(1);
    match name {
        "stream_fanout" => fanout(args, subscribers).await,
        "stream_idle" => idle(args, subscribers).await,
        other => Err(format!("not a stream scenario: {other}").into()),
    }
}

async fn fanout(args: &Args, n: usize) -> Result<Report> {
    let name = "stream_fanout";
    let s = setup(args, name, n, &[]).await?;
    let clients = args.clients;
    let wallets = args.wallets.max(clients);
    eprintln!("[{name}] funding and logging in {wallets} wallets");
    let sessions = api::new_traders(&s.api, &s.provider, &s.token_id, 1_000_000 * ONE_TOKEN, wallets, 16).await?;

    eprintln!("[{name}] baseline without subscribers: {clients} clients, {} s + {} s warm-up", args.duration, args.warmup);
    let cpu0 = Cpu::now(s.pid);
    let baseline = trade_load(args, &s.base, &s.market, &sessions).await;
    let (server_cores_b, bench_cores_b, _) = Cpu::now(s.pid).cores_since(&cpu0);

    eprintln!("[{name}] opening {n} subscribers");
    let subs = Subscribers::open(&s.base, &s.market.id, n, CONNECT_PARALLEL, FANOUT_READ_BUFFER, true)?;
    let (connected, failed) = subs.wait_snapshots(Duration::from_secs(120)).await;
    let connect_s = subs.opened_at.elapsed().as_secs_f64();
    eprintln!("[{name}] {connected} snapshots, {failed} failed, in {connect_s:.2} s");
    if connected == 0 {
        let stats = subs.close().await;
        let why = stats.iter().find_map(|s| s.ended.clone()).unwrap_or_else(|| "no snapshot in time".into());
        return Err(format!("no subscriber got its snapshot ({why})").into());
    }

    eprintln!("[{name}] with {connected} subscribers: {clients} clients, {} s + {} s warm-up", args.duration, args.warmup);
    let cpu1 = Cpu::now(s.pid);
    let loaded = trade_load(args, &s.base, &s.market, &sessions).await;
    let (server_cores, bench_cores, subscriber_cores) = Cpu::now(s.pid).cores_since(&cpu1);
    let expected = loaded.ok_total;
    eprintln!("[{name}] {expected} trades acknowledged; waiting for every subscriber to receive them");
    let drain_s = subs.wait_trades(expected, Duration::from_secs(10), Duration::from_secs(120)).await;
    let still_open = n - subs.finished();
    let stats = subs.close().await;
    let seq_end = current_seq(&s.base, &s.market.id).await;

    // Per subscriber: every acknowledged trade of the phase, gapless, still open.
    let snapshot_seqs: BTreeSet<u64> = stats.iter().filter_map(|st| st.snapshot_seq).collect();
    let mut lags = LagHistogram::new();
    let mut complete = 0;
    let mut ended: BTreeMap<String, u64> = BTreeMap::new();
    let mut other_events: BTreeMap<String, u64> = BTreeMap::new();
    let (mut min_trades, mut max_trades) = (u64::MAX, 0);
    let (mut missing, mut gaps, mut missing_seqs, mut repeats, mut protocol, mut mismatches, mut negative, mut bad_ts) =
        (0u64, 0, 0, 0, 0, 0, 0, 0);
    let mut first_problem: Option<String> = None;
    let bytes: u64 = stats.iter().map(|st| st.bytes).sum();
    for st in &stats {
        if let Some(why) = &st.ended {
            *ended.entry(why.clone()).or_default() += 1;
        }
        if let Some(h) = &st.lags {
            lags.merge(h);
        }
        for (k, v) in &st.other_events {
            *other_events.entry(k.clone()).or_default() += v;
        }
        gaps += st.gaps;
        missing_seqs += st.missing_seqs;
        repeats += st.repeats;
        protocol += st.protocol_errors;
        mismatches += st.envelope_mismatches;
        negative += st.negative_lags;
        bad_ts += st.bad_timestamps;
        if first_problem.is_none() {
            first_problem.clone_from(&st.first_problem);
        }
        let Some(snap) = st.snapshot_seq else { continue };
        min_trades = min_trades.min(st.trades);
        max_trades = max_trades.max(st.trades);
        missing += expected.saturating_sub(st.trades);
        let others: u64 = st.other_events.values().sum();
        let last = st.last_seq.unwrap_or(snap);
        let gapless = st.gaps == 0 && st.repeats == 0 && st.protocol_errors == 0 && last - snap == st.trades + others;
        let at_end = seq_end.is_none_or(|end| end == last);
        if st.ended.is_none() && st.trades == expected && gapless && at_end {
            complete += 1;
        }
    }
    if min_trades == u64::MAX {
        min_trades = 0;
    }

    let backend = s.backend;
    let (audit_ok, audit_report, died) = finish(name, s)?;
    let (b, l) = (baseline.per_second(), loaded.per_second());
    let (bp, lp) = (baseline.percentiles(), loaded.percentiles());
    let seq_start = snapshot_seqs.iter().next().copied();
    let fields: Vec<(&'static str, Value)> = vec![
        ("scenario", json!(name)),
        ("backend", json!(backend)),
        ("clients", json!(clients)),
        ("subscribers", json!(n)),
        ("seconds", round(args.duration, 1)),
        ("trades_per_sec_baseline", round(b, 1)),
        ("trades_per_sec", round(l, 1)),
        ("ratio_to_baseline", round_sig(l / b, 3)),
        ("p50_ms", round(lp.p50, 2)),
        ("p99_ms", round(lp.p99, 2)),
        ("baseline_p50_ms", round(bp.p50, 2)),
        ("baseline_p99_ms", round(bp.p99, 2)),
        ("errors", json!(loaded.error_count())),
        ("errors_by_code", errors_json(&loaded.errors)),
        ("trades_acknowledged", json!(expected)),
        ("trades_failed", json!(loaded.errors_total)),
        ("subscribers_connected", json!(connected)),
        ("subscribers_complete", json!(complete)),
        ("trade_events_min", json!(min_trades)),
        ("trade_events_max", json!(max_trades)),
        ("events_missing", json!(missing)),
        ("seq_gaps", json!(gaps)),
        ("seq_repeats", json!(repeats)),
        ("seq_start", json!(seq_start)),
        ("seq_end", json!(seq_end)),
        ("lag_p50_ms", round(lags.percentile_ms(50.0), 2)),
        ("lag_p99_ms", round(lags.percentile_ms(99.0), 2)),
        ("lag_max_ms", round(lags.max_us as f64 / 1000.0, 2)),
        ("lag_events", json!(lags.count)),
        ("bytes_per_event", round(bytes as f64 / lags.count.max(1) as f64, 0)),
        ("connect_s", round(connect_s, 2)),
        ("drain_s", round(drain_s, 2)),
        ("server_cores_baseline", cores_json(server_cores_b)),
        ("server_cores", cores_json(server_cores)),
        ("bench_cores_baseline", cores_json(bench_cores_b)),
        ("bench_cores", cores_json(bench_cores)),
        ("subscriber_cores", cores_json(subscriber_cores)),
        ("subscriber_errors", errors_json(&ended)),
        ("other_events", errors_json(&other_events)),
        ("audit", json!(if audit_ok { "ok" } else { "failed" })),
    ];
    let mut fields = fields;
    if mismatches + protocol > 0 {
        fields.push(("protocol_errors", json!(protocol)));
        fields.push(("envelope_mismatches", json!(mismatches)));
    }
    if negative + bad_ts > 0 {
        fields.push(("negative_lags", json!(negative)));
        fields.push(("bad_timestamps", json!(bad_ts)));
    }
    if let Some(d) = &died {
        fields.push(("server_died", json!(d)));
    }

    let mut t = String::new();
    use std::fmt::Write;
    let _ = writeln!(t, "== {name} ({}, {clients} clients, {n} subscribers, {} s measured per phase) ==", backend, args.duration);
    let _ = writeln!(t, "baseline: {b:.1} trades/s, p50 {:.2} ms, p99 {:.2} ms, {} errors", bp.p50, bp.p99, baseline.error_count());
    let _ = writeln!(
        t,
        "with subscribers: {l:.1} trades/s ({:.1}% of baseline), p50 {:.2} ms, p99 {:.2} ms, {} errors",
        100.0 * l / b,
        lp.p50,
        lp.p99,
        loaded.error_count()
    );
    for (k, v) in &loaded.errors {
        let _ = writeln!(t, "  {k}: {v}");
    }
    let _ = writeln!(
        t,
        "subscribers: {connected}/{n} connected in {connect_s:.2} s, {complete}/{n} complete ({expected} trades acknowledged, {} failed; per subscriber {min_trades}..{max_trades} trade events; {missing} missing in all; {still_open} still open at the end; drained in {drain_s:.2} s)",
        loaded.errors_total
    );
    let _ = writeln!(
        t,
        "seq: snapshot {:?}, end {seq_end:?}; gaps {gaps} ({missing_seqs} seqs), repeats {repeats}, protocol errors {protocol}, envelope mismatches {mismatches}",
        snapshot_seqs
    );
    let _ = writeln!(
        t,
        "delivery lag (trade timestamp -> client read, upper bound): p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms over {} events{}",
        lags.percentile_ms(50.0),
        lags.percentile_ms(99.0),
        lags.max_us as f64 / 1000.0,
        lags.count,
        if negative > 0 { format!(" ({negative} negative, counted as 0)") } else { String::new() }
    );
    let _ = writeln!(
        t,
        "stream bytes: {:.0} per trade event (SSE framing and chunking included), {:.1} MiB in all",
        bytes as f64 / lags.count.max(1) as f64,
        bytes as f64 / 1048576.0
    );
    let fmt = |v: Option<f64>| v.map_or("?".to_string(), |c| format!("{c:.2}"));
    let _ = writeln!(
        t,
        "CPU cores used over each phase (warm-up included): server {} -> {}, bench {} -> {} (of which the subscribers {})",
        fmt(server_cores_b),
        fmt(server_cores),
        fmt(bench_cores_b),
        fmt(bench_cores),
        fmt(subscriber_cores)
    );
    if !ended.is_empty() {
        let _ = writeln!(t, "subscriber streams that ended early:");
        for (k, v) in &ended {
            let _ = writeln!(t, "  {k}: {v}");
        }
    }
    if !other_events.is_empty() {
        let _ = writeln!(t, "other events: {other_events:?}");
    }
    if let Some(p) = &first_problem {
        let _ = writeln!(t, "first problem: {p}");
    }
    let _ = writeln!(t, "audit: {} ({})", if audit_ok { "ok" } else { "FAILED" }, audit_report.lines().next().unwrap_or(""));
    if let Some(d) = &died {
        let _ = writeln!(t, "server died: {d}");
    }
    let failed = !audit_ok || died.is_some() || complete < n;
    Ok(Report { fields, text: t, failed })
}

/// `count` sequential GET /healthz over one keep-alive connection (after a few unmeasured
/// ones that open it): latency percentiles and the error count.
async fn healthz_sequential(base: &str, count: usize) -> (Percentiles, u64) {
    let http = workers::client();
    let url = format!("{base}/healthz");
    let mut lat = Vec::with_capacity(count);
    let mut errors = 0;
    for i in 0..count + 20 {
        let t0 = Instant::now();
        let ok = match http.get(&url).send().await {
            Ok(res) => res.status().is_success() && res.bytes().await.is_ok(),
            Err(_) => false,
        };
        if i < 20 {
            continue;
        }
        if ok {
            lat.push(u32::try_from(t0.elapsed().as_micros()).unwrap_or(u32::MAX));
        } else {
            errors += 1;
        }
    }
    (Percentiles::of(&mut lat), errors)
}

/// The server's `hanson_open_streams` gauge (GET /metrics).
async fn open_streams(base: &str) -> Option<u64> {
    let text = reqwest::get(format!("{base}/metrics")).await.ok()?.text().await.ok()?;
    text.lines().find_map(|l| l.strip_prefix("hanson_open_streams ")).and_then(|v| v.trim().parse::<f64>().ok()).map(|v| v as u64)
}

fn rss(pid: Option<u32>) -> Option<u64> {
    pid.and_then(|p| match env::rss_kib(p) {
        Ok(v) => Some(v),
        Err(e) => {
            eprintln!("warning: {e}");
            None
        }
    })
}

async fn idle(args: &Args, n: usize) -> Result<Report> {
    let name = "stream_idle";
    let s = setup(args, name, n, &[]).await?;
    let requests = args.healthz_requests.max(1);
    let (h0, h0_errors) = healthz_sequential(&s.base, requests).await;
    // Settle, then the server's memory before any stream.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let rss_before = rss(s.pid);
    let streams_before = open_streams(&s.base).await;

    eprintln!("[{name}] opening {n} idle subscribers");
    let subs = Subscribers::open(&s.base, &s.market.id, n, CONNECT_PARALLEL, IDLE_READ_BUFFER, false)?;
    let (connected, failed) = subs.wait_snapshots(Duration::from_secs(300)).await;
    let connect_s = subs.opened_at.elapsed().as_secs_f64();
    let held_from = Instant::now();
    eprintln!("[{name}] {connected} snapshots, {failed} failed, in {connect_s:.2} s");
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss_after = rss(s.pid);
    let streams_held = open_streams(&s.base).await;
    eprintln!("[{name}] {requests} sequential /healthz while they are held");
    let (h1, h1_errors) = healthz_sequential(&s.base, requests).await;
    // Hold them for --duration in all (pings may arrive meanwhile).
    let hold = Duration::from_secs_f64(args.duration);
    if let Some(rest) = hold.checked_sub(held_from.elapsed()) {
        tokio::time::sleep(rest).await;
    }
    let held_s = held_from.elapsed().as_secs_f64();
    let still_open = n - subs.finished();
    let stats: Vec<SubStats> = subs.close().await;
    // How long the server keeps closed streams: until its gauge is back where it was (an idle
    // stream may only notice the closed socket when it next writes, i.e. at a ping).
    let closed_at = Instant::now();
    let mut released_s = None;
    let mut streams_left = None;
    if let Some(before) = streams_before {
        while closed_at.elapsed() < Duration::from_secs(40) {
            streams_left = open_streams(&s.base).await;
            if streams_left.is_some_and(|left| left <= before) {
                released_s = Some(closed_at.elapsed().as_secs_f64());
                break;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss_closed = rss(s.pid);

    let mut ended: BTreeMap<String, u64> = BTreeMap::new();
    let mut pings = 0;
    let mut events = 0;
    for st in &stats {
        if let Some(why) = &st.ended {
            *ended.entry(why.clone()).or_default() += 1;
        }
        pings += st.pings;
        events += st.trades + st.other_events.values().sum::<u64>();
    }
    let backend = s.backend;
    let (audit_ok, audit_report, died) = finish(name, s)?;
    let per_sub = match (rss_before, rss_after) {
        (Some(b), Some(a)) if connected > 0 => Some((a as f64 - b as f64) / connected as f64),
        _ => None,
    };
    let memory_note = if per_sub.is_some() {
        None
    } else if args.url.is_some() && args.server_pid.is_none() {
        Some("skipped: a server given by --url needs --server-pid for its memory")
    } else {
        Some("unavailable: could not read the server's VmRSS")
    };

    let mut fields: Vec<(&'static str, Value)> = vec![
        ("scenario", json!(name)),
        ("backend", json!(backend)),
        ("subscribers", json!(n)),
        ("subscribers_connected", json!(connected)),
        ("subscribers_open_at_end", json!(still_open)),
        ("connect_s", round(connect_s, 2)),
        ("held_s", round(held_s, 1)),
    ];
    match per_sub {
        Some(v) => {
            fields.push(("rss_before_kib", json!(rss_before)));
            fields.push(("rss_after_kib", json!(rss_after)));
            fields.push(("kib_per_subscriber", round(v, 2)));
            fields.push(("rss_after_close_kib", json!(rss_closed)));
        }
        None => fields.push(("memory", json!(memory_note))),
    }
    fields.extend([
        ("healthz_requests", json!(requests)),
        ("healthz_p50_ms", round(h1.p50, 3)),
        ("healthz_p99_ms", round(h1.p99, 3)),
        ("healthz_max_ms", round(h1.max, 3)),
        ("healthz_errors", json!(h1_errors)),
        ("healthz_before_p50_ms", round(h0.p50, 3)),
        ("healthz_before_p99_ms", round(h0.p99, 3)),
        ("server_open_streams_held", json!(streams_held)),
        ("server_streams_released_s", released_s.map_or(Value::Null, |v| round(v, 2))),
        ("server_open_streams_left", json!(streams_left)),
        ("pings", json!(pings)),
        ("events", json!(events)),
        ("subscriber_errors", errors_json(&ended)),
        ("audit", json!(if audit_ok { "ok" } else { "failed" })),
    ]);
    if let Some(d) = &died {
        fields.push(("server_died", json!(d)));
    }

    let mut t = String::new();
    use std::fmt::Write;
    let _ = writeln!(t, "== {name} ({}, {n} idle subscribers) ==", backend);
    let _ = writeln!(t, "subscribers: {connected}/{n} got their snapshot in {connect_s:.2} s ({failed} failed); {still_open} still open after {held_s:.1} s; {pings} pings, {events} events");
    match (per_sub, rss_before, rss_after) {
        (Some(v), Some(b), Some(a)) => {
            let _ = writeln!(
                t,
                "server RSS: {b} KiB before, {a} KiB with the subscribers -> {v:.2} KiB per subscriber; {} KiB after closing them",
                rss_closed.map_or("?".to_string(), |c| c.to_string())
            );
        }
        _ => {
            let _ = writeln!(t, "server memory: {}", memory_note.unwrap_or(""));
        }
    }
    let _ = writeln!(
        t,
        "server's open_streams gauge: {streams_held:?} while held; back to {streams_before:?} {} after closing ({streams_left:?} at the last look)",
        released_s.map_or("not within 40 s".to_string(), |v| format!("{v:.2} s"))
    );
    let _ = writeln!(
        t,
        "healthz ({requests} sequential, one connection): p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms, {h1_errors} errors (before the subscribers: p50 {:.3} ms, p99 {:.3} ms, {h0_errors} errors)",
        h1.p50, h1.p99, h1.max, h0.p50, h0.p99
    );
    if !ended.is_empty() {
        let _ = writeln!(t, "subscriber streams that ended early:");
        for (k, v) in &ended {
            let _ = writeln!(t, "  {k}: {v}");
        }
    }
    let _ = writeln!(t, "audit: {} ({})", if audit_ok { "ok" } else { "FAILED" }, audit_report.lines().next().unwrap_or(""));
    if let Some(d) = &died {
        let _ = writeln!(t, "server died: {d}");
    }
    let failed = !audit_ok || died.is_some() || connected < n || still_open < n || h1_errors > 0;
    Ok(Report { fields, text: t, failed })
}
