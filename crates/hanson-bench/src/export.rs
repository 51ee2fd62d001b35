//! The `export` scenario: `--export-trades` trades seeded with `hanson seed trades`, then
//! exported as CSV through `GET /v1/providers/exports/trades` by one client: rows/s, and the
//! server's memory before, at its highest during (sampled every 10 ms), and its `VmHWM`.
//! `VmRSS` counts the SQLite file's pages the reads map in (`mmap_size`), which the kernel may
//! drop at any time; `RssAnon` (heap and stacks) is what the export itself holds.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::env::{self, Result, Server};
use crate::streams::{self, Report};
use crate::Args;

/// A field of /proc/PID/status in KiB (`VmRSS`, `VmHWM`).
fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find_map(|l| l.strip_prefix(field)).and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

pub(crate) async fn run(args: &Args) -> Result<Report> {
    let name = "export";
    let mut s = streams::setup(args, name, 0, &[]).await?;
    let backend = s.backend;
    if s.server.is_none() {
        return Err("export needs a launched server (it seeds with the server stopped)".into());
    }
    if let Some(server) = s.server.take() {
        server.stop();
    }
    let (trades, wallets) = (args.export_trades, args.wallets.max(1).min(args.export_trades.max(1)));
    eprintln!("[{name}] bulk-inserting {trades} trades by {wallets} wallets");
    let seed_seconds = crate::seed::seed_trades(&s.bin, &s.db.url, &s.market, wallets, trades, args.history_days.max(1))?;
    eprintln!("[{name}] seeded in {seed_seconds:.1} s");
    let server = Server::launch(&s.bin, &s.db.url, &s.db.scratch_dir(), &[])?;
    let pid = server.pid();
    s.base = server.base.clone();
    s.server = Some(server);
    let healthz =
        crate::measure(args, (0..args.clients).map(|_| crate::workers::Healthz::new(&s.base)).collect(), |h: crate::workers::Healthz| {
            h.step()
        })
        .await;

    let rss_before = env::rss_kib(pid)?;
    let anon_before = status_kib(pid, "RssAnon:").unwrap_or(0);
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sampler = {
        let done = done.clone();
        std::thread::spawn(move || {
            let (mut high, mut anon) = (0, 0);
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                high = high.max(status_kib(pid, "VmRSS:").unwrap_or(0));
                anon = anon.max(status_kib(pid, "RssAnon:").unwrap_or(0));
                std::thread::sleep(Duration::from_millis(10));
            }
            (high, anon)
        })
    };
    let url = format!("{}/v1/providers/exports/trades?format=csv", s.base);
    let started = Instant::now();
    let mut res = crate::workers::client().get(&url).bearer_auth(&s.provider.key).send().await?;
    let status = res.status().as_u16();
    let (mut bytes, mut lines) = (0u64, 0u64);
    while let Some(chunk) = res.chunk().await? {
        bytes += chunk.len() as u64;
        lines += chunk.iter().filter(|&&b| b == b'\n').count() as u64;
    }
    let seconds = started.elapsed().as_secs_f64();
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let (rss_max, anon_max) = sampler.join().unwrap_or((0, 0));
    let anon_growth_mib = anon_max.saturating_sub(anon_before) as f64 / 1024.0;
    let hwm = status_kib(pid, "VmHWM:").unwrap_or(0);
    let rows = lines.saturating_sub(1);
    let rate = rows as f64 / seconds;
    let growth_mib = rss_max.saturating_sub(rss_before) as f64 / 1024.0;
    let (audit_ok, audit_report, died) = streams::finish(name, s)?;
    let complete = status == 200 && rows == trades as u64;
    let text = format!(
        "== export ({backend}, {trades} trades by {wallets} wallets, seeded in {seed_seconds:.1} s) ==\n\
         GET /v1/providers/exports/trades?format=csv: HTTP {status}, {rows} rows ({}), {bytes} bytes in {seconds:.2} s -> {rate:.0} rows/s (target >= 100000)\n\
         server VmRSS: {rss_before} KiB before, {rss_max} KiB at most during -> +{growth_mib:.1} MiB; VmHWM {hwm} KiB\n\
         server RssAnon (without the mapped database file): {anon_before} KiB before, {anon_max} KiB at most during -> +{anon_growth_mib:.1} MiB (target < 64 MB)\n\
         healthz: {:.1} requests/s\n\
         audit: {} ({})\n{}",
        if complete { "all" } else { "INCOMPLETE" },
        healthz.per_second(),
        if audit_ok { "ok" } else { "FAILED" },
        audit_report.lines().next().unwrap_or(""),
        died.as_ref().map(|d| format!("server died: {d}\n")).unwrap_or_default(),
    );
    let fields = vec![
        ("scenario", json!(name)),
        ("backend", json!(backend)),
        ("trades", json!(trades)),
        ("wallets", json!(wallets)),
        ("status", json!(status)),
        ("rows", json!(rows)),
        ("bytes", json!(bytes)),
        ("seconds", crate::round(seconds, 2)),
        ("rows_per_s", crate::round(rate, 0)),
        ("rss_before_kib", json!(rss_before)),
        ("rss_max_kib", json!(rss_max)),
        ("rss_growth_mib", crate::round(growth_mib, 1)),
        ("vm_hwm_kib", json!(hwm)),
        ("rss_anon_before_kib", json!(anon_before)),
        ("rss_anon_max_kib", json!(anon_max)),
        ("rss_anon_growth_mib", crate::round(anon_growth_mib, 1)),
        ("healthz_per_s", crate::round(healthz.per_second(), 1)),
        ("seed_seconds", crate::round(seed_seconds, 1)),
        ("audit", json!(if audit_ok { "ok" } else { "failed" })),
    ];
    Ok(Report { fields, text, failed: !complete || !audit_ok || died.is_some() })
}
