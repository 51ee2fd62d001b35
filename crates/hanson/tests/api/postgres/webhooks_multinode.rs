//! PostgreSQL only: two nodes share the deliveries of one database. Each attempt is claimed
//! by one node, so with a receiver that accepts everything, every event arrives exactly once
//! and every delivery took one attempt, whichever node wrote the event.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::json;

use super::support::*;

const EVENTS: usize = 120;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_nodes_attempt_each_delivery_once() {
    let receiver = Receiver::start().await;
    let f = Fixture::new_with(webhook_settings("1s")).await;
    let other_node = ServeProcess::start_flags(&f.app.database_url, &["--webhook-allow-private", "--webhook-retry-schedule", "1s"]).await;
    let key = f.provider.key.clone();
    let endpoints = [
        create_endpoint(&f.app, &key, &receiver.url("/a"), &["deposit.completed"]).await,
        create_endpoint(&f.app, &key, &receiver.url("/b"), &["*"]).await,
    ];
    let client = reqwest::Client::new();
    let mut handles = Vec::new();
    for i in 0..EVENTS {
        let base = if i % 2 == 0 { f.app.base.clone() } else { other_node.base.clone() };
        let (client, key, token_id) = (client.clone(), key.clone(), f.token_id.clone());
        handles.push(tokio::spawn(async move {
            let r = client
                .post(format!("{base}/v1/providers/treasury/deposits"))
                .bearer_auth(&key)
                .json(&json!({ "token_id": token_id, "amount": "1", "reference": format!("multi-{i}") }))
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), StatusCode::CREATED);
        }));
    }
    for h in handles {
        h.await.unwrap();
    }
    for path in ["/a", "/b"] {
        receiver.wait_for(path, EVENTS, Duration::from_secs(20)).await;
    }
    // Whatever is still to come would show as a second request for an id.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    for path in ["/a", "/b"] {
        let mut per_id: BTreeMap<String, usize> = BTreeMap::new();
        for r in receiver.received(path) {
            *per_id.entry(r.header("webhook-id").to_string()).or_default() += 1;
        }
        assert_eq!(per_id.len(), EVENTS, "{path}: one id per event");
        assert!(per_id.values().all(|n| *n == 1), "{path}: an event sent twice: {per_id:?}");
    }
    for endpoint in &endpoints {
        let id = endpoint["id"].as_str().unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let log = f.app.get(&format!("/v1/providers/webhooks/{id}/deliveries?status=succeeded&per_page=100"), Some(&key)).await.body;
            if log["pagination"]["total"] == EVENTS {
                assert!(log["data"].as_array().unwrap().iter().all(|d| d["attempts"] == 1), "{log}");
                break;
            }
            assert!(Instant::now() < deadline, "not every delivery recorded as succeeded: {}", log["pagination"]);
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}
