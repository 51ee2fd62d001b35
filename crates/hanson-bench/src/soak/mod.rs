//! The `soak` scenario: a long run of everything at once at a steady pace, to show what the
//! server does over time. Trading on `--markets` (100) markets at `--rate` trades/s,
//! `--subscribers` (1,000) SSE subscribers spread over them (every tenth hangs up now and
//! then and resumes), webhooks to five endpoints (one failing half the time), and the event
//! log's retention shortened so that pruning runs. Every `--sample-secs` (60) it prints one
//! JSON line: the server's RSS and open fds, the trades' p99, the database's size. At the end:
//! every event delivered to every endpoint, streams without a gap, the audit, and the
//! targets (flat memory and fds after the first third, the last sample's p99 within 1.5x the
//! first's).

mod followers;
mod receiver;
mod samples;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::api::{self, Market, MarketSpec, ONE_TOKEN};
use crate::env::Result;
use crate::load::Percentiles;
use crate::streams::{finish, setup, Report};
use crate::workers::Trader;
use crate::{ordered_json, round, round_sig, Args};
use followers::Followers;
use receiver::Receiver;

const NAME: &str = "soak";
const ENDPOINTS: usize = 5;
/// Retries of the failing endpoint's deliveries: more than its refusals in a row
/// ([`receiver::MAX_FAILURES`]), short enough that the run drains.
const RETRY_SCHEDULE: &str = "1s,2s,4s,8s,15s";
/// The event log keeps 60 s and each market's last 200 events, pruned every 10 s: pruning
/// runs all along while a resume after a hang-up still finds its events.
const SERVER_FLAGS: &[&str] = &[
    "--webhook-allow-private",
    "--webhook-retry-schedule",
    RETRY_SCHEDULE,
    "--event-retention-secs",
    "60",
    "--event-retention-events",
    "200",
    "--event-prune-every-secs",
    "10",
];
/// Growth allowed over the run's last two thirds, and the last p99 against the first.
const FLAT: f64 = 0.10;
const P99_RATIO: f64 = 1.5;
/// How long deliveries may take to drain after the load.
const DRAIN: Duration = Duration::from_secs(180);

/// Trade answers since the last sample.
#[derive(Default)]
struct Window {
    latencies_us: Vec<u32>,
    ok: u64,
    errors: BTreeMap<String, u64>,
}

/// One client: trades at a fixed pace until `stop`.
async fn trade(
    mut trader: Trader,
    every: Duration,
    offset: Duration,
    stop: Arc<AtomicBool>,
    window: Arc<Mutex<Window>>,
    acked: Arc<AtomicU64>,
) {
    let mut next = tokio::time::Instant::now() + offset;
    while !stop.load(Ordering::SeqCst) {
        tokio::time::sleep_until(next).await;
        // A client that fell behind does not burst to catch up.
        next = (next + every).max(tokio::time::Instant::now() - Duration::from_secs(1));
        let t0 = Instant::now();
        let (back, sample) = trader.step().await;
        trader = back;
        let us = u32::try_from(t0.elapsed().as_micros()).unwrap_or(u32::MAX);
        let mut w = window.lock().unwrap();
        match sample.error {
            None => {
                acked.fetch_add(1, Ordering::Relaxed);
                w.ok += 1;
                w.latencies_us.push(us);
            }
            Some(key) => *w.errors.entry(key).or_default() += 1,
        }
    }
}

/// One sample's figures, as printed.
struct Sample {
    rss_kib: Option<u64>,
    rss_anon_kib: Option<u64>,
    fds: Option<u64>,
    p99_ms: f64,
}

/// Growth of `values` over the last two thirds: the highest against the first, as a share.
fn growth(values: &[Option<u64>]) -> Option<f64> {
    let tail = &values[values.len() / 3..];
    let start = (*tail.first()?)? as f64;
    let peak = tail.iter().flatten().copied().max()? as f64;
    (start > 0.0).then(|| (peak - start) / start)
}

pub(crate) async fn run(args: &Args) -> Result<Report> {
    let subscribers = args.subscribers.unwrap_or(1_000);
    let s = setup(args, NAME, subscribers, SERVER_FLAGS).await?;
    let pid = s.pid.ok_or("the soak needs the server's pid (launch it, or pass --server-pid with --url)")?;
    let markets_n = args.markets.max(1);
    eprintln!("[{NAME}] {markets_n} markets, {subscribers} subscribers, {ENDPOINTS} webhook endpoints, {} trades/s", args.rate);
    let mut markets: Vec<Market> = vec![s.market.clone()];
    for i in 1..markets_n {
        let spec = MarketSpec {
            question: format!("Soak market {i}?"),
            category: "sports",
            outcomes: 2 + i % 3,
            liquidity: 100_000 * ONE_TOKEN,
            max_bet: 1_000 * ONE_TOKEN,
        };
        markets.push(api::create_market(&s.api, &s.provider, &s.token_id, spec).await?);
    }
    let receiver = Receiver::start(ENDPOINTS).await?;
    for i in 0..ENDPOINTS {
        let body = json!({ "url": receiver.url(i), "event_types": ["*"] });
        s.api.post_ok("/v1/providers/webhooks", Some(&s.provider.key), &body).await?;
    }
    let clients = args.clients;
    let wallets = args.wallets.max(clients);
    eprintln!("[{NAME}] funding and logging in {wallets} wallets");
    let sessions = api::new_traders(&s.api, &s.provider, &s.token_id, 1_000_000 * ONE_TOKEN, wallets, 16).await?;
    let ids: Vec<String> = markets.iter().map(|m| m.id.clone()).collect();
    let followers = Followers::start(&s.base, &ids, subscribers, 10);

    let stop = Arc::new(AtomicBool::new(false));
    let window = Arc::new(Mutex::new(Window::default()));
    let acked = Arc::new(AtomicU64::new(0));
    let markets = Arc::new(markets);
    let every = Duration::from_secs_f64(clients as f64 / args.rate.max(0.001));
    let mut slices: Vec<Vec<api::Session>> = vec![Vec::new(); clients];
    for (i, session) in sessions.into_iter().enumerate() {
        slices[i % clients].push(session);
    }
    let traders: Vec<_> = slices
        .into_iter()
        .enumerate()
        .map(|(i, wallets)| {
            let trader = Trader::new(&s.base, markets.clone(), wallets, args.sell_share);
            let offset = every.mul_f64(i as f64 / clients as f64);
            tokio::spawn(trade(trader, every, offset, stop.clone(), window.clone(), acked.clone()))
        })
        .collect();

    let interval = Duration::from_secs_f64(args.sample_secs.max(1.0));
    let samples_n = (args.duration / interval.as_secs_f64()).ceil().max(1.0) as usize;
    eprintln!("[{NAME}] running {} s: a warm-up sample, then {samples_n} samples of {} s", args.duration, interval.as_secs_f64());
    let http = reqwest::Client::new();
    let started = Instant::now();
    let mut samples: Vec<Sample> = Vec::new();
    let mut error_total: BTreeMap<String, u64> = BTreeMap::new();
    // Sample 0 is the warm-up (connections opening, caches filling): printed, not judged.
    for k in 0..=samples_n {
        tokio::time::sleep_until((started + interval * (k as u32 + 1)).into()).await;
        let w = std::mem::take(&mut *window.lock().unwrap());
        let mut latencies = w.latencies_us;
        let p = Percentiles::of(&mut latencies);
        let (rss, anon) = samples::memory_kib(pid);
        let fds = samples::open_fds(pid);
        let url = s.db.url.clone();
        let storage = tokio::task::spawn_blocking(move || samples::storage(&url)).await.unwrap_or_default();
        let metrics = http.get(format!("{}/metrics", s.base)).send().await.ok();
        let metrics = match metrics {
            Some(r) => r.text().await.unwrap_or_default(),
            None => String::new(),
        };
        let (delivered, refused, backlog) = receiver.with(|r| {
            let slowest = r.endpoints.iter().map(|e| e.trades).min().unwrap_or(0);
            let out = (r.delivered_since, r.refused_since, acked.load(Ordering::Relaxed).saturating_sub(slowest));
            r.delivered_since = 0;
            r.refused_since = 0;
            out
        });
        let c = &followers.counts;
        for (key, n) in &w.errors {
            *error_total.entry(key.clone()).or_default() += n;
        }
        let seconds = interval.as_secs_f64();
        let mut fields: Vec<(&str, Value)> = vec![
            ("scenario", json!(NAME)),
            ("backend", json!(s.backend)),
            ("sample", json!(k)),
            ("warmup", json!(k == 0)),
            ("minute", round(started.elapsed().as_secs_f64() / 60.0, 2)),
            ("trades_per_s", round(w.ok as f64 / seconds, 1)),
            ("p50_ms", round(p.p50, 2)),
            ("p99_ms", round(p.p99, 2)),
            ("errors", json!(w.errors.values().sum::<u64>())),
            ("rss_kib", json!(rss)),
            ("rss_anon_kib", json!(anon)),
            ("fds", json!(fds)),
        ];
        fields.extend(storage);
        fields.extend([
            ("events_pruned", samples::metric(&metrics, "hanson_event_log_pruned_total").map_or(Value::Null, |v| json!(v as u64))),
            ("open_streams", samples::metric(&metrics, "hanson_open_streams").map_or(Value::Null, |v| json!(v as u64))),
            ("webhooks_delivered_per_s", round(delivered as f64 / seconds, 1)),
            ("webhooks_refused_per_s", round(refused as f64 / seconds, 1)),
            ("webhook_backlog_trades", json!(backlog)),
            ("stream_events", json!(c.events.load(Ordering::Relaxed))),
            ("stream_gaps", json!(c.gaps.load(Ordering::Relaxed))),
            ("stream_reconnects", json!(c.reconnects.load(Ordering::Relaxed))),
        ]);
        println!("{}", ordered_json(fields));
        eprintln!(
            "[{NAME}] {:>5.1} min: {:.1} trades/s, p99 {:.2} ms, RSS {} KiB (anon {}), {} fds, backlog {backlog}",
            started.elapsed().as_secs_f64() / 60.0,
            w.ok as f64 / seconds,
            p.p99,
            rss.unwrap_or(0),
            anon.unwrap_or(0),
            fds.unwrap_or(0)
        );
        if k > 0 {
            samples.push(Sample { rss_kib: rss, rss_anon_kib: anon, fds, p99_ms: p.p99 });
        }
    }

    stop.store(true, Ordering::SeqCst);
    for t in traders {
        let _ = t.await;
    }
    let trades = acked.load(Ordering::SeqCst);
    eprintln!("[{NAME}] {trades} trades acknowledged; draining webhook deliveries");
    let drain_started = Instant::now();
    let delivered_all = loop {
        if receiver.complete(trades) {
            break true;
        }
        if drain_started.elapsed() > DRAIN {
            break false;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    let drain_s = drain_started.elapsed().as_secs_f64();
    // The streams' last events, then their verdict.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let counts = followers.counts.clone();
    followers.stop().await;
    let (per_endpoint, duplicates, refused) = receiver.with(|r| {
        (
            r.endpoints.iter().map(|e| e.trades).collect::<Vec<_>>(),
            r.endpoints.iter().map(|e| e.duplicates).sum::<u64>(),
            r.endpoints.iter().map(|e| e.refused).sum::<u64>(),
        )
    });
    let events_per_endpoint = receiver.with(|r| r.endpoints[0].delivered.len());
    let backend = s.backend;
    let (audit_ok, audit_report, died) = finish(NAME, s)?;

    let rss_growth = growth(&samples.iter().map(|x| x.rss_anon_kib).collect::<Vec<_>>());
    let vmrss_growth = growth(&samples.iter().map(|x| x.rss_kib).collect::<Vec<_>>());
    let fds_growth = growth(&samples.iter().map(|x| x.fds).collect::<Vec<_>>());
    let p99_ratio = match (samples.first(), samples.last()) {
        (Some(a), Some(b)) if a.p99_ms > 0.0 => b.p99_ms / a.p99_ms,
        _ => f64::NAN,
    };
    let gaps = counts.gaps.load(Ordering::SeqCst);
    let flat = rss_growth.is_some_and(|g| g < FLAT) && fds_growth.is_some_and(|g| g < FLAT);
    let targets_met = flat && p99_ratio <= P99_RATIO;
    let errors: u64 = error_total.values().sum();
    let correct = audit_ok && died.is_none() && delivered_all && gaps == 0 && errors == 0;
    let share = |g: Option<f64>| g.map_or(Value::Null, |g| round(100.0 * g, 1));
    let fields: Vec<(&'static str, Value)> = vec![
        ("scenario", json!(NAME)),
        ("backend", json!(backend)),
        ("seconds", round(args.duration, 0)),
        ("markets", json!(markets_n)),
        ("subscribers", json!(subscribers)),
        ("endpoints", json!(ENDPOINTS)),
        ("trades", json!(trades)),
        ("errors", json!(errors)),
        ("errors_by_code", Value::Object(error_total.iter().map(|(k, v)| (k.clone(), json!(v))).collect())),
        ("rss_anon_growth_pct", share(rss_growth)),
        ("vmrss_growth_pct", share(vmrss_growth)),
        ("fds_growth_pct", share(fds_growth)),
        ("p99_first_ms", samples.first().map_or(Value::Null, |x| round(x.p99_ms, 2))),
        ("p99_last_ms", samples.last().map_or(Value::Null, |x| round(x.p99_ms, 2))),
        ("p99_ratio", round_sig(p99_ratio, 3)),
        ("targets_met", json!(targets_met)),
        ("every_event_delivered", json!(delivered_all)),
        ("trade_events_per_endpoint", json!(per_endpoint)),
        ("events_per_endpoint", json!(events_per_endpoint)),
        ("webhook_duplicates", json!(duplicates)),
        ("webhook_refusals", json!(refused)),
        ("drain_s", round(drain_s, 1)),
        ("stream_events", json!(counts.events.load(Ordering::SeqCst))),
        ("stream_gaps", json!(gaps)),
        ("stream_reconnects", json!(counts.reconnects.load(Ordering::SeqCst))),
        ("stream_resumed_by_snapshot", json!(counts.resumed_by_snapshot.load(Ordering::SeqCst))),
        ("stream_failures", json!(counts.failures.load(Ordering::SeqCst))),
        ("audit", json!(if audit_ok { "ok" } else { "failed" })),
    ];
    let text = format!(
        "== {NAME} ({backend}, {} s, {markets_n} markets, {subscribers} subscribers, {ENDPOINTS} endpoints) ==\n\
         trades: {trades} acknowledged, {errors} errors\n\
         over the last two thirds: RssAnon {} %, VmRSS {} %, fds {} % (target < {} %)\n\
         p99: first sample {:.2} ms, last {:.2} ms, ratio {p99_ratio:.3} (target <= {P99_RATIO})\n\
         webhooks: every event delivered to every endpoint: {delivered_all} ({events_per_endpoint} events each, trade events {per_endpoint:?}, {duplicates} duplicates, {refused} refusals, drained in {drain_s:.1} s)\n\
         streams: {} events, {gaps} gaps, {} reconnects ({} resumed by a snapshot), {} failures\n\
         audit: {} ({}){}\n",
        args.duration,
        share(rss_growth),
        share(vmrss_growth),
        share(fds_growth),
        100.0 * FLAT,
        samples.first().map_or(0.0, |x| x.p99_ms),
        samples.last().map_or(0.0, |x| x.p99_ms),
        counts.events.load(Ordering::SeqCst),
        counts.reconnects.load(Ordering::SeqCst),
        counts.resumed_by_snapshot.load(Ordering::SeqCst),
        counts.failures.load(Ordering::SeqCst),
        if audit_ok { "ok" } else { "FAILED" },
        audit_report.lines().next().unwrap_or(""),
        died.as_ref().map(|d| format!("\nserver died: {d}")).unwrap_or_default(),
    );
    // The targets are judged on a full soak only: a short run's first sample is its warm-up.
    let judged = args.duration >= 1200.0;
    Ok(Report { fields, text, failed: !correct || (judged && !targets_met) })
}
