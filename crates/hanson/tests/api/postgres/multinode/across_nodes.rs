//! Nodes that run their own trades under the batch lock, in turns, and a node that keeps
//! search lists: what one node wrote, the others see at once, each trade exactly once.

use std::sync::Arc;

use reqwest::StatusCode;
use serde_json::json;

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_serve_processes_trade_one_market_exactly_once() {
    let limits = Limits { auth_per_ip: Rule::OFF, ..Default::default() };
    let f = Fixture::new_with(Settings { limits, forward_trades: false, ..Settings::default() }).await;
    let nodes = [without_forwarding(&f.app.database_url).await, without_forwarding(&f.app.database_url).await];
    let hot = f.market(2).await;
    let side = f.market(3).await;
    let client = reqwest::Client::new();

    // Wallets log in through alternating nodes.
    let mut traders = Vec::new();
    for i in 0..20 {
        let wallet = TestWallet::random();
        let wallet_id = f.app.fund_wallet(&f.provider, &f.token_id, &wallet.address, 500 * ONE_TOKEN).await;
        let session = login_at(&client, &nodes[i % 2].base, &f.provider.id, &wallet).await;
        traders.push(Arc::new(Trader { wallet, session, wallet_id }));
    }
    // Opening positions so that sells have shares.
    for (i, t) in traders.iter().enumerate() {
        let market = if i % 4 == 0 { &side } else { &hot };
        let (status, body) = post(
            &client,
            format!("{}/v1/markets/{}/bet", nodes[i % 2].base, market["id"].as_str().unwrap()),
            &t.session.access_token,
            json!({ "session_id": t.session.session_id, "outcome_id": market["outcomes"][0]["id"], "amount": (3 * ONE_TOKEN).to_string() }),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }

    let mut tasks = tokio::task::JoinSet::new();
    for n in 0..400usize {
        let t = traders[n % 20].clone();
        let base = nodes[n % 2].base.clone();
        let market = if n % 4 == 0 { side.clone() } else { hot.clone() };
        let client = client.clone();
        tasks.spawn(async move {
            let market_id = market["id"].as_str().unwrap();
            let (path, body) = if n % 5 == 4 {
                (format!("{base}/v1/markets/{market_id}/sell"), json!({
                    "session_id": t.session.session_id, "outcome_id": market["outcomes"][0]["id"], "shares_amount": (ONE_TOKEN / 50 + n as u128).to_string(),
                }))
            } else {
                (format!("{base}/v1/markets/{market_id}/bet"), json!({
                    "session_id": t.session.session_id, "outcome_id": market["outcomes"][n % 2]["id"], "amount": (ONE_TOKEN / 4 + n as u128 * 1_000_003).to_string(),
                }))
            };
            post(&client, path, &t.session.access_token, body).await
        });
    }
    let mut acknowledged = Vec::new();
    while let Some(joined) = tasks.join_next().await {
        let (status, body) = joined.unwrap();
        assert_eq!(status, StatusCode::OK, "{body}");
        let id = body["bet_id"].as_str().or(body["transaction_id"].as_str()).unwrap().to_string();
        acknowledged.push(id);
    }
    assert_eq!(acknowledged.len(), 400);

    // Every acknowledged trade is recorded exactly once, and replaying the records reproduces
    // each market's prices.
    let mut recorded = Vec::new();
    for market in [&hot, &side] {
        let id = market["id"].as_str().unwrap();
        let trades = trades_in_order(&f.app, id).await;
        let detail = f.app.get(&format!("/v1/markets/{id}"), None).await.body;
        replay(&detail, &trades);
        recorded.extend(trades.iter().map(|t| t["id"].as_str().unwrap().to_string()));
    }
    assert_eq!(recorded.len(), 420, "20 opening trades and 400 concurrent ones");
    let mut unique = recorded.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), recorded.len(), "no trade recorded twice");
    for id in &acknowledged {
        assert!(recorded.contains(id), "acknowledged trade {id} is missing");
    }
    let (passed, report) = audit(&f.app);
    assert!(passed, "{report}");

    // Logout through node A ends the session on node B at once.
    let t = &traders[0];
    let out = client.post(format!("{}/v1/auth/logout", nodes[0].base)).bearer_auth(&t.session.access_token).send().await.unwrap();
    assert_eq!(out.status(), StatusCode::OK);
    let profile = client.get(format!("{}/v1/auth/profile", nodes[1].base)).bearer_auth(&t.session.access_token).send().await.unwrap();
    assert_eq!(profile.status(), StatusCode::UNAUTHORIZED);
}

/// The volume order of a search on node B, by market id.
async fn volume_order(client: &reqwest::Client, base: &str, provider_id: &str) -> Vec<(String, String)> {
    let body = json!({
        "filters": { "provider_id": provider_id },
        "sort": { "field": "total_volume", "direction": "desc" },
        "pagination": { "page": 1, "per_page": 10 },
    });
    let page = json_of(client.post(format!("{base}/v1/markets/search")).json(&body)).await;
    page["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["id"].as_str().unwrap().to_string(), m["total_volume"].as_str().unwrap().to_string()))
        .collect()
}

/// Node B keeps volume-sorted search lists and renderings; a trade through node A must show in
/// B's next search at once, in its order and its totals (the data version both read).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_volume_search_on_one_node_shows_a_trade_through_the_other_at_once() {
    let f = Fixture::new().await;
    let nodes = [node(&f.app.database_url, &[]).await, node(&f.app.database_url, &[]).await];
    let markets = [f.market(2).await, f.market(2).await, f.market(2).await];
    let id = |i: usize| markets[i]["id"].as_str().unwrap().to_string();
    let client = reqwest::Client::new();
    let wallet = TestWallet::random();
    f.app.fund_wallet(&f.provider, &f.token_id, &wallet.address, 500 * ONE_TOKEN).await;
    let session = login_at(&client, &nodes[0].base, &f.provider.id, &wallet).await;

    let before = volume_order(&client, &nodes[1].base, &f.provider.id).await;
    assert_eq!(before.len(), 3);
    assert!(before.iter().all(|(_, volume)| volume == "0"), "{before:?}");
    // Asked twice, so the second answer comes from what node B kept.
    assert_eq!(volume_order(&client, &nodes[1].base, &f.provider.id).await, before);

    for (market, amount) in [(1usize, 2 * ONE_TOKEN), (2, 5 * ONE_TOKEN), (1, 4 * ONE_TOKEN)] {
        let (status, body) = post(
            &client,
            format!("{}/v1/markets/{}/bet", nodes[0].base, id(market)),
            &session.access_token,
            json!({ "session_id": session.session_id, "outcome_id": markets[market]["outcomes"][0]["id"], "amount": amount.to_string() }),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let after = volume_order(&client, &nodes[1].base, &f.provider.id).await;
    assert_eq!(after, vec![(id(1), (6 * ONE_TOKEN).to_string()), (id(2), (5 * ONE_TOKEN).to_string()), (id(0), "0".to_string())]);
}

/// Each node's batch thread keeps copies of the markets it traded on, their event numbers and
/// the positions on them. Trades on one market by one wallet, through the test's server and
/// two nodes in turn, with a market update between them: each batch sees what the others
/// wrote, so the balance runs on from trade to trade, the shares held add up, every event
/// number is taken once (no node's batch failed and ran its trades again), and the books balance.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn trades_through_three_servers_in_turn_each_see_what_the_others_wrote() {
    let f = Fixture::new_with(Settings { forward_trades: false, ..Settings::default() }).await;
    let nodes = [without_forwarding(&f.app.database_url).await, without_forwarding(&f.app.database_url).await];
    let bases = [f.app.base.clone(), nodes[0].base.clone(), nodes[1].base.clone()];
    let market = f.market(2).await;
    let market_id = market["id"].as_str().unwrap();
    let outcome = market["outcomes"][0]["id"].as_str().unwrap();
    let client = reqwest::Client::new();
    let wallet = TestWallet::random();
    f.app.fund_wallet(&f.provider, &f.token_id, &wallet.address, 100 * ONE_TOKEN).await;
    let session = login_at(&client, &bases[1], &f.provider.id, &wallet).await;

    let mut balance = 100 * ONE_TOKEN;
    let mut held: u128 = 0;
    for step in 0..12usize {
        if step == 6 {
            let r = f
                .app
                .put(&format!("/v1/providers/markets/{market_id}"), Some(&f.provider.key), json!({ "question": "Renamed between trades?" }))
                .await;
            assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        }
        let base = &bases[step % 3];
        let (status, body) = if step % 4 == 3 {
            let shares = held / 3;
            let r = post(
                &client,
                format!("{base}/v1/markets/{market_id}/sell"),
                &session.access_token,
                json!({ "session_id": session.session_id, "outcome_id": outcome, "shares_amount": shares.to_string() }),
            )
            .await;
            held -= shares;
            r
        } else {
            let r = post(
                &client,
                format!("{base}/v1/markets/{market_id}/bet"),
                &session.access_token,
                json!({ "session_id": session.session_id, "outcome_id": outcome, "amount": (ONE_TOKEN + step as u128).to_string() }),
            )
            .await;
            held += r.1["shares_purchased"].as_str().map_or(0, |s| s.parse::<u128>().unwrap());
            r
        };
        assert_eq!(status, StatusCode::OK, "step {step}: {body}");
        assert_eq!(body["balance_before"], balance.to_string(), "step {step}: {body}");
        balance = body["balance_after"].as_str().unwrap().parse().unwrap();
    }

    let holdings =
        f.app.post("/v1/markets/holdings/search", Some(&session.access_token), json!({ "filters": { "outcome_id": outcome } })).await.body;
    assert_eq!(holdings["pagination"]["total"], 1, "{holdings}");
    assert_eq!(holdings["data"][0]["shares"], held.to_string(), "{holdings}");
    let trades = trades_in_order(&f.app, market_id).await;
    assert_eq!(trades.len(), 12);
    replay(&f.app.get(&format!("/v1/markets/{market_id}"), None).await.body, &trades);
    // The nodes' own counts (the test's server shares its metrics with the other tests).
    for base in &bases[1..] {
        let text = client.get(format!("{base}/metrics")).send().await.unwrap().text().await.unwrap();
        assert_eq!(sample(&text, "hanson_postgres_write_retries_total", r#"cause="batch""#), None, "{base}: {text}");
    }
    let (passed, report) = audit(&f.app);
    assert!(passed, "{report}");
}
