//! Chaos between nodes: a follower reaches PostgreSQL through a cuttable TCP proxy
//! (`support/proxy.rs`) and is cut off from it for 5 s while both nodes take bets. Nothing
//! acknowledged is lost or doubled, refusals are 503 problem+json with Retry-After (never a
//! 500), the follower serves again soon after the heal, and its market stream resumes with
//! every event once, in order.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::Value;

use super::support::proxy::CutProxy;
use super::*;

/// What the load saw: acknowledged bet ids, and the refusals by status and code.
#[derive(Default)]
struct Outcomes {
    acknowledged: Vec<String>,
    refused: Vec<(u16, String)>,
}

/// Bets through `base` until `stop`, recording each answer; any answer but 200 or a 503
/// problem+json with Retry-After fails the test.
async fn bet_until(
    client: reqwest::Client,
    base: String,
    market: Value,
    t: Arc<Trader>,
    stop: Arc<AtomicBool>,
    seen: Arc<Mutex<Outcomes>>,
) {
    let url = format!("{base}/v1/markets/{}/bet", market["id"].as_str().unwrap());
    let mut i = 0;
    while !stop.load(Ordering::SeqCst) {
        i += 1;
        let r =
            client.post(&url).bearer_auth(&t.session.access_token).json(&bet_body(&t.session, &market, i % 2, ONE_TOKEN / 10)).send().await;
        let r = r.unwrap_or_else(|e| panic!("{base}: the connection failed instead of an answer: {e}"));
        let status = r.status();
        let retry_after = r.headers().get("retry-after").cloned();
        let content_type = r.headers().get("content-type").cloned();
        let body: Value = r.json().await.unwrap_or(Value::Null);
        match status {
            StatusCode::OK => seen.lock().unwrap().acknowledged.push(body["bet_id"].as_str().unwrap().to_string()),
            StatusCode::SERVICE_UNAVAILABLE => {
                assert_eq!(content_type.as_ref().and_then(|v| v.to_str().ok()), Some("application/problem+json"), "{body}");
                assert!(retry_after.is_some(), "503 without Retry-After: {body}");
                seen.lock().unwrap().refused.push((503, body["code"].as_str().unwrap_or_default().to_string()));
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            other => panic!("{base}: {other} {body}"),
        }
    }
}

/// Follows a market's stream at `base`, reconnecting with Last-Event-ID whenever it ends or
/// is refused, and records the seq of every event (snapshots aside) until `stop`.
async fn follow(client: reqwest::Client, base: String, market_id: String, stop: Arc<AtomicBool>, seqs: Arc<Mutex<Vec<i64>>>) {
    let mut last: Option<i64> = None;
    while !stop.load(Ordering::SeqCst) {
        let mut request = client.get(format!("{base}/v1/markets/{market_id}/events")).header("accept", "text/event-stream");
        if let Some(seq) = last {
            request = request.header("last-event-id", seq.to_string());
        }
        let Ok(response) = request.send().await else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        if response.status() != StatusCode::OK {
            assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE, "the stream was refused otherwise");
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        }
        let mut response = response;
        let mut buffer = String::new();
        loop {
            let Ok(chunk) = tokio::time::timeout(Duration::from_millis(200), response.chunk()).await else {
                if stop.load(Ordering::SeqCst) {
                    return;
                }
                continue;
            };
            let Ok(Some(bytes)) = chunk else { break };
            buffer.push_str(&String::from_utf8_lossy(&bytes).replace('\r', ""));
            while let Some(end) = buffer.find("\n\n") {
                let frame: String = buffer.drain(..end + 2).collect();
                let event = frame.lines().find_map(|l| l.strip_prefix("event: "));
                let id = frame.lines().find_map(|l| l.strip_prefix("id: ")).and_then(|id| id.parse::<i64>().ok());
                match (event, id) {
                    (Some("snapshot"), Some(seq)) => last = last.or(Some(seq)),
                    (Some(_), Some(seq)) => {
                        seqs.lock().unwrap().push(seq);
                        last = Some(seq);
                    }
                    _ => {}
                }
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_node_cut_from_the_database_for_5_s_loses_nothing_and_recovers() {
    let f = Fixture::new_with(Settings { forward_trades: false, ..Settings::default() }).await;
    let client = reqwest::Client::new();
    let leader = node(&f.app.database_url, &[]).await;
    until_leading(&client, &leader.base).await;
    let proxy = CutProxy::start("127.0.0.1:5432".parse().unwrap()).await;
    let (_, database) = f.app.database_url.rsplit_once('/').unwrap();
    let through_proxy = format!("postgres://postgres@{}/{database}", proxy.addr);
    let follower = node(&through_proxy, &[]).await;
    let market = f.market(2).await;
    let market_id = market["id"].as_str().unwrap().to_string();
    let traders = f.traders_at(&client, &follower.base, 4, 1_000 * ONE_TOKEN).await;

    let stop = Arc::new(AtomicBool::new(false));
    let seen = Arc::new(Mutex::new(Outcomes::default()));
    let seqs = Arc::new(Mutex::new(Vec::new()));
    let stream = tokio::spawn(follow(client.clone(), follower.base.clone(), market_id.clone(), stop.clone(), seqs.clone()));
    let mut load = Vec::new();
    for (i, t) in traders.iter().enumerate() {
        let base = if i % 2 == 0 { &follower.base } else { &leader.base };
        load.push(tokio::spawn(bet_until(client.clone(), base.clone(), market.clone(), t.clone(), stop.clone(), seen.clone())));
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    proxy.cut();
    tokio::time::sleep(Duration::from_secs(5)).await;
    proxy.heal();
    let healed = Instant::now();
    // Back: the follower answers a read from the database and takes a bet.
    let t = &traders[0];
    let url = format!("{}/v1/markets/{market_id}/bet", follower.base);
    let back = loop {
        let (status, body) = post(&client, url.clone(), &t.session.access_token, bet_body(&t.session, &market, 0, ONE_TOKEN / 10)).await;
        if status == StatusCode::OK {
            seen.lock().unwrap().acknowledged.push(body["bet_id"].as_str().unwrap().to_string());
            break healed.elapsed();
        }
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
        assert!(healed.elapsed() < Duration::from_secs(30), "the follower never recovered: {body}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    tokio::time::sleep(Duration::from_secs(1)).await;
    stop.store(true, Ordering::SeqCst);
    for task in load {
        task.await.unwrap();
    }
    // The stream catches up with the log before it is stopped.
    let db = super::support::library::Db::open(&f.app.database_url);
    let last = db.int("SELECT max(seq) FROM events WHERE market_id = $1", &[(&market_id).into()]).await;
    stop.store(false, Ordering::SeqCst);
    let stop_stream = stop.clone();
    let stream_stop = tokio::spawn({
        let seqs = seqs.clone();
        async move {
            for _ in 0..300 {
                if seqs.lock().unwrap().last().is_some_and(|s| *s >= last) {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            stop_stream.store(true, Ordering::SeqCst);
        }
    });
    stream_stop.await.unwrap();
    stream.await.unwrap();

    let outcomes = std::mem::take(&mut *seen.lock().unwrap());
    let refused_codes: std::collections::BTreeSet<&str> = outcomes.refused.iter().map(|(_, c)| c.as_str()).collect();
    let unknown = outcomes.refused.iter().filter(|(_, c)| c == "outcome_unknown").count();
    let recorded = recorded_once(&f, &market_id, &outcomes.acknowledged).await;
    assert!(recorded >= outcomes.acknowledged.len() && recorded <= outcomes.acknowledged.len() + unknown);
    assert!(!outcomes.refused.is_empty(), "the cut refused some bets");
    let seqs = seqs.lock().unwrap().clone();
    let first = *seqs.first().expect("the stream saw events");
    assert_eq!(seqs, (first..=last).collect::<Vec<_>>(), "every event once, in order, across the cut");
    println!(
        "chaos/cut-node-from-database: {} acknowledged, {} refused with 503 ({refused_codes:?}), {} recorded, back {:.2} s after the heal, stream seqs {first}..={last} without a gap",
        outcomes.acknowledged.len(),
        outcomes.refused.len(),
        recorded,
        back.as_secs_f64()
    );
    assert!(back <= Duration::from_secs(2), "back {back:?} after the heal");
}
