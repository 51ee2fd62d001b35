//! PostgreSQL only: live streams across nodes. This test's server and a `hanson serve`
//! process share one database; an event committed through either reaches the subscribers of
//! both within a second, with the same seq and the very same envelope, and `market.closed` is
//! announced once, by one node.

use std::sync::Arc;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{json, Value};
use tokio::time::Instant;

use super::support::*;

const WITHIN: Duration = Duration::from_secs(1);

/// The next event of `sse`, which must have arrived by `deadline`.
async fn by(sse: &mut Sse, deadline: Instant) -> Frame {
    let left = deadline.saturating_duration_since(Instant::now());
    sse.next_event_within(left).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_reach_the_subscribers_of_every_node_within_a_second() {
    let f = Arc::new(Fixture::new().await);
    let market = f.market(2).await;
    let id = market["id"].as_str().unwrap().to_string();
    let t = Arc::new(f.trader(1_000 * ONE_TOKEN).await);
    let other = ServeProcess::start_flags(&f.app.database_url, &[]).await;
    let client = reqwest::Client::new();
    let nodes = [f.app.base.clone(), other.base.clone()];

    let mut markets = Vec::new();
    let mut users = Vec::new();
    for base in &nodes {
        let mut sse = Sse::market(&client, base, &id, "", &[]).await;
        expect_snapshot(&mut sse, 1, &market).await;
        markets.push(sse);
        let mut user = Sse::user(&client, base, &t.session.access_token).await;
        assert_eq!(user.next_event().await.event.as_deref(), Some("snapshot"));
        users.push(user);
    }

    // One at a time, through alternating nodes: every subscriber within a second.
    for k in 0..6u64 {
        let started = Instant::now();
        let bet = bet_at(&client, &nodes[(k % 2) as usize], &market, (k % 2) as usize, &t, ONE_TOKEN + u128::from(k)).await;
        let mut seen = Vec::new();
        for sse in markets.iter_mut() {
            let frame = by(sse, started + WITHIN).await;
            seen.push((frame.id.clone(), market_event(&frame, "trade.created", &id, k + 2)));
        }
        assert_eq!(seen[0], seen[1], "the same envelope on both nodes");
        assert_eq!(seen[0].1["data"]["trade"]["id"], bet["bet_id"]);
        let mut as_user = seen[0].1.clone();
        as_user["seq"] = Value::Null;
        for user in users.iter_mut() {
            let mut kinds = Vec::new();
            for _ in 0..3 {
                let frame = by(user, started + WITHIN).await;
                let envelope = frame.json();
                if frame.event.as_deref() == Some("trade.created") {
                    assert_eq!(envelope, as_user);
                }
                if frame.event.as_deref() == Some("balance.updated") {
                    assert_eq!(envelope["data"]["balance"], bet["balance_after"]);
                }
                kinds.push(frame.event.unwrap());
            }
            kinds.sort();
            assert_eq!(kinds, ["balance.updated", "position.updated", "trade.created"]);
        }
    }

    // Concurrent trades through both nodes: both subscribers see the same gapless sequence.
    let mut tasks = tokio::task::JoinSet::new();
    for n in 0..40usize {
        let (client, base, market, t) = (client.clone(), nodes[n % 2].clone(), market.clone(), t.clone());
        tasks.spawn(async move {
            bet_at(&client, &base, &market, n % 2, &t, ONE_TOKEN / 2 + n as u128).await["bet_id"].as_str().unwrap().to_string()
        });
    }
    let mut placed = Vec::new();
    while let Some(joined) = tasks.join_next().await {
        placed.push(joined.unwrap());
    }
    let mut sequences = Vec::new();
    for sse in markets.iter_mut() {
        let mut frames = Vec::new();
        for seq in 8..48u64 {
            let frame = sse.next_event().await;
            frames.push((frame.id.clone(), market_event(&frame, "trade.created", &id, seq)));
        }
        sse.assert_quiet(Duration::from_millis(300)).await;
        sequences.push(frames);
    }
    assert_eq!(sequences[0], sequences[1], "the same events in the same order on both nodes");
    let mut published: Vec<String> = sequences[0].iter().map(|(_, e)| e["data"]["trade"]["id"].as_str().unwrap().to_string()).collect();
    published.sort();
    placed.sort();
    assert_eq!(published, placed);

    // Logout through one node ends the user streams on both within a second.
    let out = client.post(format!("{}/v1/auth/logout", nodes[0])).bearer_auth(&t.session.access_token).send().await.unwrap();
    assert_eq!(out.status(), StatusCode::OK);
    // (The concurrent trades' user events are still buffered: skipped.)
    let deadline = Instant::now() + WITHIN;
    for user in users.iter_mut() {
        user.skip_to_end(deadline.saturating_duration_since(Instant::now())).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn market_closed_is_announced_once_across_nodes() {
    let f = Fixture::new().await;
    let others = [ServeProcess::start_flags(&f.app.database_url, &[]).await, ServeProcess::start_flags(&f.app.database_url, &[]).await];
    let market = f.ending_market(2).await;
    let id = id_of(&market);
    let client = reqwest::Client::new();
    let mut subscribers = Vec::new();
    for base in [&f.app.base, &others[0].base, &others[1].base] {
        let mut sse = Sse::market(&client, base, &id, "", &[]).await;
        expect_snapshot(&mut sse, 1, &market).await;
        subscribers.push(sse);
    }
    let mut closed = Vec::new();
    for sse in subscribers.iter_mut() {
        let frame = sse.next_event_within(Duration::from_secs(12)).await;
        closed.push(market_event(&frame, "market.closed", &id, 2));
    }
    assert!(closed.iter().all(|e| *e == closed[0]), "one event, the same everywhere: {closed:#?}");
    assert_eq!(closed[0]["data"], json!({ "closes_at": market["closes_at"] }));
    // Nothing more from any node while their closers keep running.
    tokio::time::sleep(Duration::from_millis(5_500)).await;
    for sse in subscribers.iter_mut() {
        sse.assert_quiet(Duration::from_millis(100)).await;
    }
    let mut log = Sse::market(&client, &others[1].base, &id, "?after_seq=0", &[]).await;
    assert_eq!(market_event(&log.next_event().await, "market.created", &id, 1)["data"], market);
    assert_eq!(log.next_event().await.json(), closed[0]);
    log.assert_quiet(Duration::from_millis(300)).await;
}
