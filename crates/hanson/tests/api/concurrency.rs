use std::sync::Arc;

use reqwest::StatusCode;
use serde_json::json;

use super::support::*;
use super::support::library::Db;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_bets_and_sells_keep_the_books_exact() {
    // Twenty logins from one address: lift the per-IP login limit for this test.
    let limits = Limits { auth_per_ip: Rule::OFF, ..Default::default() };
    let f = Arc::new(Fixture::new_with(limits).await);
    let hot = f.market(3).await;
    let others = [f.market(2).await, f.market(2).await];
    let traders = f.traders(20, 1_000 * ONE_TOKEN).await;
    // Everyone starts with a position, so sells have something to sell.
    let hot_id = hot["id"].as_str().unwrap().to_string();
    for (i, t) in traders.iter().enumerate() {
        let r = bet_on(&f.app, &hot_id, hot["outcomes"][i % 3]["id"].as_str().unwrap(), t, 2 * ONE_TOKEN).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    }

    let mut tasks = tokio::task::JoinSet::new();
    for n in 0..240usize {
        let (f, t) = (f.clone(), traders[n % 20].clone());
        let (hot, others) = (hot.clone(), others.clone());
        tasks.spawn(async move {
            if n >= 200 {
                // Traffic on other markets at the same time.
                let m = &others[n % 2];
                let r = bet_on(&f.app, m["id"].as_str().unwrap(), m["outcomes"][n % 2]["id"].as_str().unwrap(), &t, ONE_TOKEN + n as u128).await;
                return (r.status, "other");
            }
            let market_id = hot["id"].as_str().unwrap();
            let outcome = hot["outcomes"][(n / 20) % 3]["id"].as_str().unwrap();
            if n % 3 == 2 {
                // Sell a slice of whatever this wallet holds of its first outcome.
                let own = hot["outcomes"][(n % 20) % 3]["id"].as_str().unwrap();
                let r = f
                    .app
                    .post(&format!("/v1/markets/{market_id}/sell"), Some(&t.session.access_token), json!({
                        "session_id": t.session.session_id, "outcome_id": own, "shares_amount": (ONE_TOKEN / 7 + n as u128).to_string(),
                    }))
                    .await;
                (r.status, "sell")
            } else {
                let amount = ONE_TOKEN / 3 + (n as u128) * 12_345_678_901_234;
                (bet_on(&f.app, market_id, outcome, &t, amount).await.status, "bet")
            }
        });
    }
    let mut ok = 0;
    while let Some(result) = tasks.join_next().await {
        let (status, kind) = result.unwrap();
        assert_eq!(status, StatusCode::OK, "a {kind} failed");
        ok += 1;
    }
    assert_eq!(ok, 240);

    let detail = f.app.get(&format!("/v1/markets/{hot_id}"), None).await.body;
    let trades = trades_in_order(&f.app, &hot_id).await;
    assert_eq!(trades.len(), 220, "20 opening bets and 200 concurrent trades, each exactly once");
    replay(&detail, &trades);
    for m in &others {
        let id = m["id"].as_str().unwrap();
        let d = f.app.get(&format!("/v1/markets/{id}"), None).await.body;
        replay(&d, &trades_in_order(&f.app, id).await);
    }
    // Each market's stream numbers its events 1, 2, ... without a gap, and the batch's
    // read-ahead of the last numbers (`current_seqs`) agrees with it.
    let db = Db::open(&f.app.database_url);
    let ids: Vec<String> = [&hot, &others[0], &others[1]].iter().map(|m| m["id"].as_str().unwrap().to_string()).collect();
    let wanted: Vec<String> = ids.iter().cloned().chain(["no-such-market".to_string()]).collect();
    let seqs = db.current_seqs(&wanted).await;
    let mut counts = Vec::new();
    for id in &ids {
        let sql = "SELECT count(*) FROM events WHERE market_id = $1";
        counts.push((id.clone(), db.int(sql, &[id.into()]).await));
    }
    counts.push(("no-such-market".to_string(), 0));
    counts.sort();
    assert!(counts.iter().any(|(_, n)| *n >= 220), "every trade on the hot market is an event of its stream: {counts:?}");
    assert_eq!(seqs, counts);
    let (passed, report) = audit(&f.app);
    assert!(passed, "{report}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_resolution_amid_concurrent_bets_counts_every_bet_before_it() {
    let limits = Limits { auth_per_ip: Rule::OFF, ..Default::default() };
    let f = Arc::new(Fixture::new_with(limits).await);
    let market = f.market(2).await;
    let market_id = market["id"].as_str().unwrap().to_string();
    let traders = f.traders(10, 100 * ONE_TOKEN).await;
    // Bets in flight on both sides of the resolution, so that some share its group commit.
    let mut bets = tokio::task::JoinSet::new();
    let mut resolution = None;
    for n in 0..120usize {
        let (fixture, t, outcome) = (f.clone(), traders[n % 10].clone(), market["outcomes"][n % 2]["id"].clone());
        let path_id = market_id.clone();
        bets.spawn(async move {
            let r = bet_on(&fixture.app, &path_id, outcome.as_str().unwrap(), &t, ONE_TOKEN + n as u128).await;
            (r.status, r.body)
        });
        if n == 60 {
            let (f, winner) = (f.clone(), market["outcomes"][0]["id"].clone());
            let path = format!("/v1/providers/markets/{market_id}/resolve");
            resolution = Some(tokio::spawn(async move {
                f.app.post(&path, Some(&f.provider.key), json!({ "winning_outcome_id": winner, "resolver_wallet_id": "r" })).await
            }));
        }
    }
    let mut placed = 0;
    while let Some(result) = bets.join_next().await {
        let (status, body) = result.unwrap();
        match status {
            StatusCode::OK => placed += 1,
            StatusCode::CONFLICT => assert_eq!(body["code"], "market_not_open", "{body}"),
            other => panic!("a bet answered {other}: {body}"),
        }
    }
    let resolved = resolution.unwrap().await.unwrap();
    assert_eq!(resolved.status, StatusCode::OK, "{}", resolved.body);

    // The resolution saw every bet committed before it, in its own group commit too.
    let detail = f.app.get(&format!("/v1/markets/{market_id}"), None).await.body;
    assert_eq!(resolved.body["winning_pool"], detail["outcomes"][0]["total_shares"]);
    let trades = trades_in_order(&f.app, &market_id).await;
    assert_eq!(trades.len(), placed);
    let (passed, report) = audit(&f.app);
    assert!(passed, "{report}");
}
