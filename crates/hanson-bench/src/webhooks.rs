//! The `webhooks` scenario: the hot market's trade load without webhook endpoints, then with
//! `--endpoints` (10) endpoints subscribed to `*` on a receiver in this process. Reports both
//! trade rates and their ratio, deliveries per second, the delivery lag (the event's
//! timestamp, i.e. its commit, to its receipt) and whether every endpoint got every event.

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use serde_json::{json, Value};

use crate::api::{self, ONE_TOKEN};
use crate::env::Result;
use crate::sse::LagHistogram;
use crate::streams::{cores_json, finish, setup, trade_load, Cpu, Report};
use crate::{round, round_sig, Args};

/// How long deliveries may take to drain after the measured run.
const DRAIN: Duration = Duration::from_secs(120);

#[derive(Default)]
struct Received {
    /// Event ids per endpoint (path).
    ids: BTreeMap<String, HashSet<String>>,
    deliveries: u64,
    duplicates: u64,
    /// Receipts inside the measured window, and their lag.
    in_window: u64,
    lag: Option<LagHistogram>,
    measuring: bool,
}

async fn receive(
    State(state): State<Arc<Mutex<Received>>>,
    uri: axum::http::Uri,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> StatusCode {
    let now = hanson::domain::time::now_micros();
    let id = headers.get("webhook-id").and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
    // The envelope's timestamp is the change's (commit) time.
    let at =
        serde_json::from_slice::<Value>(&body).ok().and_then(|v| v["timestamp"].as_str().and_then(hanson::domain::time::parse_timestamp));
    let mut s = state.lock().unwrap();
    s.deliveries += 1;
    if !s.ids.entry(uri.path().to_string()).or_default().insert(id) {
        s.duplicates += 1;
    }
    if s.measuring {
        s.in_window += 1;
        if let Some(at) = at {
            s.lag.get_or_insert_with(LagHistogram::new).record(now.saturating_sub(at).max(0) as u64);
        }
    }
    StatusCode::NO_CONTENT
}

pub(crate) async fn run(args: &Args, endpoints: usize) -> Result<Report> {
    let name = "webhooks";
    let s = setup(args, name, 0, &["--webhook-allow-private"]).await?;
    let clients = args.clients;
    let wallets = args.wallets.max(clients);
    eprintln!("[{name}] funding and logging in {wallets} wallets");
    let sessions = api::new_traders(&s.api, &s.provider, &s.token_id, 1_000_000 * ONE_TOKEN, wallets, 16).await?;

    let state = Arc::new(Mutex::new(Received::default()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let receiver = format!("http://{}", listener.local_addr()?);
    let app = axum::Router::new().fallback(axum::routing::post(receive)).with_state(state.clone());
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });

    eprintln!("[{name}] baseline without endpoints: {clients} clients, {} s + {} s warm-up", args.duration, args.warmup);
    let cpu0 = Cpu::now(s.pid);
    let baseline = trade_load(args, &s.base, &s.market, &sessions).await;
    let (server_cores_b, _, _) = Cpu::now(s.pid).cores_since(&cpu0);

    for i in 0..endpoints {
        s.api
            .post_ok("/v1/providers/webhooks", Some(&s.provider.key), &json!({ "url": format!("{receiver}/e{i}"), "event_types": ["*"] }))
            .await?;
    }
    eprintln!("[{name}] with {endpoints} endpoints: {clients} clients, {} s + {} s warm-up", args.duration, args.warmup);
    let warm = tokio::spawn({
        let state = state.clone();
        let warmup = Duration::from_secs_f64(args.warmup);
        async move {
            tokio::time::sleep(warmup).await;
            state.lock().unwrap().measuring = true;
        }
    });
    let cpu1 = Cpu::now(s.pid);
    let loaded = trade_load(args, &s.base, &s.market, &sessions).await;
    let (server_cores, bench_cores, _) = Cpu::now(s.pid).cores_since(&cpu1);
    let _ = warm.await;
    let (in_window, lag) = {
        let mut st = state.lock().unwrap();
        st.measuring = false;
        (st.in_window, st.lag.take().unwrap_or_else(LagHistogram::new))
    };

    // Every endpoint must get every event of the run: wait until each has all of the first
    // endpoint's set, and that set stops growing.
    eprintln!("[{name}] draining deliveries");
    let drain_started = Instant::now();
    let mut last = 0;
    let mut stable_since = Instant::now();
    let complete = loop {
        let (all_equal, total) = {
            let st = state.lock().unwrap();
            let sets: Vec<&HashSet<String>> = (0..endpoints).filter_map(|i| st.ids.get(&format!("/e{i}"))).collect();
            let equal = sets.len() == endpoints && sets.windows(2).all(|w| w[0] == w[1]);
            (equal, st.deliveries)
        };
        if total != last {
            last = total;
            stable_since = Instant::now();
        }
        if all_equal && stable_since.elapsed() > Duration::from_secs(3) {
            break true;
        }
        if drain_started.elapsed() > DRAIN {
            break false;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let drain_s = drain_started.elapsed().as_secs_f64();
    let (deliveries, duplicates, per_endpoint) = {
        let st = state.lock().unwrap();
        (st.deliveries, st.duplicates, st.ids.get("/e0").map_or(0, HashSet::len))
    };
    let backend = s.backend;
    let (audit_ok, _, died) = finish(name, s)?;

    let base_rate = baseline.per_second();
    let rate = loaded.per_second();
    let ratio = rate / base_rate;
    let deliveries_per_s = in_window as f64 / args.duration;
    let p = loaded.percentiles();
    let fields: Vec<(&'static str, Value)> = vec![
        ("scenario", json!(name)),
        ("backend", json!(backend)),
        ("clients", json!(clients)),
        ("endpoints", json!(endpoints)),
        ("seconds", round(args.duration, 1)),
        ("baseline_trades_per_s", round(base_rate, 1)),
        ("trades_per_s", round(rate, 1)),
        ("ratio", round_sig(ratio, 3)),
        ("trade_p99_ms", round(p.p99, 2)),
        ("deliveries_per_s", round(deliveries_per_s, 1)),
        ("lag_p50_ms", round(lag.percentile_ms(50.0), 1)),
        ("lag_p99_ms", round(lag.percentile_ms(99.0), 1)),
        ("lag_max_ms", round(lag.max_us as f64 / 1000.0, 1)),
        ("deliveries", json!(deliveries)),
        ("events_per_endpoint", json!(per_endpoint)),
        ("duplicates", json!(duplicates)),
        ("every_endpoint_every_event", json!(complete)),
        ("drain_s", round(drain_s, 1)),
        ("server_cores_baseline", cores_json(server_cores_b)),
        ("server_cores", cores_json(server_cores)),
        ("bench_cores", cores_json(bench_cores)),
        ("errors", json!(loaded.error_count() + baseline.error_count())),
        ("audit", json!(if audit_ok { "ok" } else { "failed" })),
    ];
    let text = format!(
        "== {name} ({backend}, {clients} clients, {endpoints} endpoints) ==\n\
         trades/s: {base_rate:.1} without endpoints, {rate:.1} with (ratio {ratio:.3})\n\
         deliveries: {deliveries_per_s:.1}/s in the window; lag p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms\n\
         every endpoint got every event: {complete} ({per_endpoint} events each, {duplicates} duplicates, drained in {drain_s:.1} s)\n\
         audit: {}{}\n",
        lag.percentile_ms(50.0),
        lag.percentile_ms(99.0),
        lag.max_us as f64 / 1000.0,
        if audit_ok { "ok" } else { "FAILED" },
        died.as_ref().map(|d| format!("\nserver died: {d}")).unwrap_or_default(),
    );
    Ok(Report { fields, text, failed: !audit_ok || died.is_some() || !complete })
}
