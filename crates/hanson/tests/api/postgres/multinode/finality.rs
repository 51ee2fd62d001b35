//! Resolutions with a dispute window on several nodes: every node's finalizer finds the same
//! due markets at the same moment, and each market is finalized once, by one of them.

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
