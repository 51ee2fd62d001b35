//! The `stream_watchers` scenario: the hot market's trade load, first alone, then with N
//! ticker watchers (SSE) on the market: trades/s and its ratio, every watcher's last tick set
//! against the market's final state, tick lag, and the server's memory per watcher.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{json, Value};

use crate::api::{self, ONE_TOKEN};
use crate::env::{self, Result};
use crate::sse::ticker::Watchers;
use crate::sse::LagHistogram;
use crate::streams::{cores_json, finish, setup, trade_load, Cpu, Report};
use crate::{round, round_sig, Args};

const CONNECT_PARALLEL: usize = 256;

/// The fields of a tick that make up the market's state (the rest lists recent trades).
fn state_of(data: &str) -> Option<Value> {
    let v: Value = serde_json::from_str(data).ok()?;
    let keys = ["seq", "status", "trading_paused", "prices", "total_volume", "total_pool"];
    Some(Value::Object(keys.iter().map(|k| (k.to_string(), v[*k].clone())).collect()))
}

pub(crate) async fn run(args: &Args) -> Result<Report> {
    let name = "stream_watchers";
    let n = args.subscribers.unwrap_or(10_000).max(1);
    let s = setup(args, name, n, &[]).await?;
    let clients = args.clients;
    let wallets = args.wallets.max(clients);
    eprintln!("[{name}] funding and logging in {wallets} wallets");
    let sessions = api::new_traders(&s.api, &s.provider, &s.token_id, 1_000_000 * ONE_TOKEN, wallets, 16).await?;
    eprintln!("[{name}] baseline without watchers: {clients} clients, {} s + {} s warm-up", args.duration, args.warmup);
    let baseline = trade_load(args, &s.base, &s.market, &sessions).await;

    tokio::time::sleep(Duration::from_millis(500)).await;
    let rss_before = s.pid.and_then(|p| env::rss_kib(p).ok());
    eprintln!("[{name}] opening {n} ticker watchers");
    let watchers = Watchers::open(&s.base, &s.market.id, n, CONNECT_PARALLEL)?;
    let (connected, failed) = watchers.wait_first(Duration::from_secs(300)).await;
    eprintln!("[{name}] {connected} first ticks, {failed} failed");
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss_after = s.pid.and_then(|p| env::rss_kib(p).ok());

    eprintln!("[{name}] with {connected} watchers: {clients} clients, {} s + {} s warm-up", args.duration, args.warmup);
    let cpu = Cpu::now(s.pid);
    let loaded = trade_load(args, &s.base, &s.market, &sessions).await;
    let (server_cores, bench_cores, watcher_cores) = Cpu::now(s.pid).cores_since(&cpu);
    // The last state goes out at most one ticker interval (250 ms) after the last trade.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let stats = watchers.close().await;
    let probe = Watchers::open(&s.base, &s.market.id, 1, 1)?;
    probe.wait_first(Duration::from_secs(10)).await;
    let final_state = probe.close().await.pop().and_then(|st| st.last).and_then(|d| state_of(&d));

    let mut lags = LagHistogram::new();
    let (mut matched, mut mismatched, mut ticks, mut bytes) = (0u64, 0u64, 0u64, 0u64);
    let mut ended: BTreeMap<String, u64> = BTreeMap::new();
    for st in &stats {
        if let Some(h) = &st.lags {
            lags.merge(h);
        }
        if let Some(why) = &st.ended {
            *ended.entry(why.clone()).or_default() += 1;
        }
        ticks += st.ticks;
        bytes += st.bytes;
        let last = st.last.as_deref().and_then(state_of);
        if last.is_some() && last == final_state {
            matched += 1;
        } else {
            mismatched += 1;
        }
    }
    let backend = s.backend;
    let (audit_ok, audit_report, died) = finish(name, s)?;
    let (b, l) = (baseline.per_second(), loaded.per_second());
    let per_watcher = match (rss_before, rss_after) {
        (Some(b), Some(a)) if connected > 0 => Some((a as f64 - b as f64) / connected as f64),
        _ => None,
    };
    let (lag50, lag99, lag_max) = (lags.percentile_ms(50.0), lags.percentile_ms(99.0), lags.max_us as f64 / 1000.0);
    let fields = vec![
        ("scenario", json!(name)),
        ("backend", json!(backend)),
        ("clients", json!(clients)),
        ("watchers", json!(n)),
        ("seconds", round(args.duration, 1)),
        ("trades_per_sec_baseline", round(b, 1)),
        ("trades_per_sec", round(l, 1)),
        ("ratio_to_baseline", round_sig(l / b, 3)),
        ("errors", json!(loaded.error_count())),
        ("watchers_connected", json!(connected)),
        ("last_tick_matches", json!(matched)),
        ("last_tick_mismatches", json!(mismatched)),
        ("final_seq", final_state.as_ref().map_or(Value::Null, |v| v["seq"].clone())),
        ("ticks", json!(ticks)),
        ("bytes_per_tick", round(bytes as f64 / ticks.max(1) as f64, 0)),
        ("tick_lag_p50_ms", round(lag50, 1)),
        ("tick_lag_p99_ms", round(lag99, 1)),
        ("tick_lag_max_ms", round(lag_max, 1)),
        ("server_cores", cores_json(server_cores)),
        ("bench_cores", cores_json(bench_cores)),
        ("watcher_cores", cores_json(watcher_cores)),
        ("rss_before_kib", json!(rss_before)),
        ("rss_after_kib", json!(rss_after)),
        ("kib_per_watcher", per_watcher.map_or(Value::Null, |v| round(v, 2))),
        ("watcher_errors", Value::Object(ended.iter().map(|(k, v)| (k.clone(), json!(v))).collect())),
        ("audit", json!(if audit_ok { "ok" } else { "failed" })),
    ];
    let text = format!(
        "== {name} ({backend}, {clients} clients, {n} ticker watchers, {} s measured per phase) ==\n\
         baseline: {b:.1} trades/s; with watchers: {l:.1} trades/s ({:.1}% of baseline, target >= 80%), {} errors\n\
         watchers: {connected}/{n} got a first tick ({failed} failed); {matched} last ticks equal the final state (seq {}), {mismatched} do not; {ticks} ticks in all\n\
         tick lag (newest trade's created_at -> read): p50 {lag50:.1} ms, p99 {lag99:.1} ms (target < 500), max {lag_max:.1} ms over {} ticks\n\
         server RSS: {} KiB before, {} KiB with the watchers -> {} KiB per watcher (target <= 32)\n\
         watcher streams that ended early: {ended:?}\n\
         audit: {} ({}){}\n",
        args.duration,
        100.0 * l / b,
        loaded.error_count(),
        final_state.as_ref().map_or(Value::Null, |v| v["seq"].clone()),
        lags.count,
        rss_before.map_or("?".into(), |v| v.to_string()),
        rss_after.map_or("?".into(), |v| v.to_string()),
        per_watcher.map_or("?".into(), |v| format!("{v:.2}")),
        if audit_ok { "ok" } else { "FAILED" },
        audit_report.lines().next().unwrap_or(""),
        died.as_ref().map(|d| format!("\nserver died: {d}")).unwrap_or_default(),
    );
    let failed = !audit_ok || died.is_some() || mismatched > 0;
    Ok(Report { fields, text, failed })
}
