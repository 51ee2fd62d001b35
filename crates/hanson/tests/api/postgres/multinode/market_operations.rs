//! Market operations on several nodes: a pause made through one node stops the trades every
//! node runs or forwards at once, and every node's finalizer finds the same due resolutions at
//! the same moment, and each market is finalized once, by one of them.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{json, Value};

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn each_resolution_is_finalized_once_across_nodes() {
    let f = Fixture::new().await;
    // With the fixture's own server, three finalizers race for each market.
    let nodes = [node(&f.app.database_url, &[]).await, node(&f.app.database_url, &[]).await];
    let t = f.trader(500 * ONE_TOKEN).await;
    let mut markets = Vec::new();
    for i in 0..5u128 {
        let market = f.market(2).await;
        let r = bet_on(&f.app, &id_of(&market), outcome(&market, 0), &t, (i + 1) * ONE_TOKEN).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        markets.push(f.app.get(&format!("/v1/markets/{}", id_of(&market)), None).await.body);
    }
    let treasury = wei(&json!(f.treasury_balance().await));
    let mut surplus = 0;
    for market in &markets {
        let body = json!({ "winning_outcome_id": outcome(market, 0), "resolver_wallet_id": "ops", "dispute_window_seconds": 2 });
        let r = f.app.post(&format!("/v1/providers/markets/{}/resolve", id_of(market)), Some(&f.provider.key), body).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        surplus += wei(&market["total_pool"]) - wei(&market["outcomes"][0]["total_shares"]);
    }
    tokio::time::sleep(Duration::from_secs(7)).await;
    let client = reqwest::Client::new();
    for market in &markets {
        let id = id_of(market);
        // Read through another node: the log holds one market.finalized, after the resolution.
        let mut log = Sse::market(&client, &nodes[1].base, &id, "?after_seq=2", &[]).await;
        market_event(&log.next_event().await, "market.resolved", &id, 3);
        let finalized: Value = market_event(&log.next_event().await, "market.finalized", &id, 4);
        assert_eq!(
            finalized["data"]["returned_to_treasury"],
            (wei(&market["total_pool"]) - wei(&market["outcomes"][0]["total_shares"])).to_string()
        );
        log.expect_end(Duration::from_secs(2)).await;
    }
    assert_eq!(wei(&json!(f.treasury_balance().await)), treasury + surplus, "each surplus returned once");
    let (ok, report) = audit(&f.app);
    assert!(ok, "{report}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_pause_through_one_node_stops_the_trades_of_every_node() {
    let limits = Limits { auth_per_ip: Rule::OFF, ..Default::default() };
    let f = Fixture::new_with(Settings { limits, ..Settings::default() }).await;
    let nodes = [node(&f.app.database_url, &[]).await, node(&f.app.database_url, &[]).await];
    let market = f.market(2).await;
    let client = reqwest::Client::new();
    let traders = f.traders_at(&client, &nodes[0].base, 6, 500 * ONE_TOKEN).await;
    let paused = Arc::new(AtomicBool::new(false));
    let mut tasks = tokio::task::JoinSet::new();
    for (i, t) in traders.iter().enumerate() {
        let (t, paused, client, market) = (t.clone(), paused.clone(), client.clone(), market.clone());
        let bases = [nodes[0].base.clone(), nodes[1].base.clone()];
        tasks.spawn(async move {
            let mut after = Vec::new();
            for n in 0.. {
                let sent_after = paused.load(Ordering::SeqCst);
                let url = format!("{}/v1/markets/{}/bet", bases[(i + n) % 2], market["id"].as_str().unwrap());
                let (status, body) =
                    post(&client, url, &t.session.access_token, bet_body(&t.session, &market, i % 2, ONE_TOKEN / 10)).await;
                if sent_after {
                    after.push((status, body["code"].clone()));
                }
                if after.len() >= 3 {
                    break;
                }
            }
            after
        });
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let url = format!("{}/v1/providers/markets/{}/pause", nodes[1].base, market["id"].as_str().unwrap());
    let (status, detail) = post(&client, url, &f.provider.key, json!({ "reason": "halt on every node" })).await;
    assert_eq!(status, StatusCode::OK, "{detail}");
    paused.store(true, Ordering::SeqCst);
    while let Some(after) = tasks.join_next().await {
        for (status, code) in after.unwrap() {
            assert_eq!((status, code), (StatusCode::CONFLICT, json!("market_paused")), "a trade sent after the pause answered");
        }
    }
    let paused_at =
        time::OffsetDateTime::parse(detail["paused_at"].as_str().unwrap(), &time::format_description::well_known::Rfc3339).unwrap();
    let trades = trades_in_order(&f.app, market["id"].as_str().unwrap()).await;
    assert!(!trades.is_empty());
    for t in &trades {
        let at = time::OffsetDateTime::parse(t["created_at"].as_str().unwrap(), &time::format_description::well_known::Rfc3339).unwrap();
        assert!(at <= paused_at, "a trade applied after the pause: {t}");
    }
    let (ok, report) = audit(&f.app);
    assert!(ok, "{report}");
}
