//! What the soak reads off the server once per sample: its memory and open descriptors from
//! /proc, the database's size on disk, and a few counters from `/metrics`.

use serde_json::{json, Value};

/// `VmRSS` and `RssAnon` of /proc/PID/status, KiB. `RssAnon` leaves out file-backed pages
/// (SQLite maps its database file, which grows with every trade by design), so it is the
/// one that shows a leak.
pub(crate) fn memory_kib(pid: u32) -> (Option<u64>, Option<u64>) {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return (None, None);
    };
    let field =
        |name: &str| status.lines().find_map(|l| l.strip_prefix(name)).and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok());
    (field("VmRSS:"), field("RssAnon:"))
}

pub(crate) fn open_fds(pid: u32) -> Option<u64> {
    Some(std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count() as u64)
}

/// The database's footprint: the SQLite file and its WAL, or PostgreSQL's database and its
/// two fastest-growing tables with the event log's row count.
pub(crate) fn storage(database_url: &str) -> Vec<(&'static str, Value)> {
    if let Some(path) = database_url.strip_prefix("sqlite://") {
        let path = path.split('?').next().unwrap_or(path);
        let size = |p: String| std::fs::metadata(p).map_or(Value::Null, |m| json!(m.len()));
        return vec![("db_bytes", size(path.to_string())), ("wal_bytes", size(format!("{path}-wal")))];
    }
    let url = database_url.to_string();
    // The sync client drives its own runtime: a plain thread, not tokio's.
    let read = std::thread::spawn(move || -> Option<[i64; 4]> {
        let mut client = postgres::Client::connect(&url, postgres::NoTls).ok()?;
        let row = client
            .query_one(
                "SELECT pg_database_size(current_database()), pg_total_relation_size('events'), \
                 pg_total_relation_size('webhook_deliveries'), (SELECT count(*) FROM events)",
                &[],
            )
            .ok()?;
        Some([row.get(0), row.get(1), row.get(2), row.get(3)])
    })
    .join()
    .ok()
    .flatten();
    match read {
        Some([database, events, deliveries, rows]) => vec![
            ("database_bytes", json!(database)),
            ("events_bytes", json!(events)),
            ("deliveries_bytes", json!(deliveries)),
            ("event_rows", json!(rows)),
        ],
        None => vec![("database_bytes", Value::Null)],
    }
}

/// The sum of a metric's samples in a Prometheus exposition (every label set).
pub(crate) fn metric(text: &str, name: &str) -> Option<f64> {
    let mut found = None;
    for line in text.lines() {
        let Some(rest) = line.strip_prefix(name) else { continue };
        if !(rest.starts_with(' ') || rest.starts_with('{')) {
            continue;
        }
        if let Some(value) = rest.rsplit(' ').next().and_then(|v| v.parse::<f64>().ok()) {
            *found.get_or_insert(0.0) += value;
        }
    }
    found
}
