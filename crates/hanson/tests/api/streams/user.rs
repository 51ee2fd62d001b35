//! The user stream: the caller's own changes exactly, nobody else's, and its end on logout.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{json, Value};

use super::support::*;
use super::*;

#[tokio::test]
async fn user_stream_shows_the_callers_own_changes_exactly_and_ends_on_logout() {
    let f = Fixture::new().await;
    let market = f.market(2).await;
    let id = id_of(&market);
    let t = f.trader(100 * ONE_TOKEN).await;
    let other = f.trader(100 * ONE_TOKEN).await;

    assert_problem(&f.app.get("/v1/auth/events", None).await, 401, "unauthenticated");
    assert_problem(&f.app.get("/v1/auth/events", Some(&f.provider.key)).await, 401, "unauthenticated");
    assert_problem(&f.app.get("/v1/auth/events", Some("not.a.token")).await, 401, "unauthenticated");

    bet_ok(&f.app, &market, 0, &t, 5 * ONE_TOKEN).await;
    bet_ok(&f.app, &market, 1, &t, 3 * ONE_TOKEN).await;
    // A second session of the same wallet: its logout must not end this one's stream.
    let second = login(&f.app, &f.provider.id, &t.wallet).await;

    let token = t.session.access_token.as_str();
    let mut stream = Sse::user(&f.app.client, &f.app.base, token).await;
    let snapshot = stream.next_event().await;
    assert_eq!(snapshot.event.as_deref(), Some("snapshot"), "{snapshot:?}");
    assert_eq!(snapshot.id, None, "{snapshot:?}");
    let positions = holdings_oldest_first(&f.app, token).await;
    assert_eq!(positions.len(), 2);
    assert_eq!(positions[0]["outcome_id"], outcome(&market, 0));
    assert_eq!(snapshot.json(), json!({ "balances": balances(&f.app, token).await, "positions": positions }));

    let mut market_sse = Sse::market(&f.app.client, &f.app.base, &id, "", &[]).await;
    expect_snapshot(&mut market_sse, 3, &detail(&f.app, &id).await).await;

    // Own bet: trade.created (the market stream's envelope with seq null), balance.updated
    // with the bet's balance_after, position.updated as holdings search shows it.
    let bet = bet_ok(&f.app, &market, 0, &t, 2 * ONE_TOKEN).await;
    let in_market = market_event(&market_sse.next_event().await, "trade.created", &id, 4);
    let mut events = user_events(&mut stream, 3).await;
    let trade = events.remove("trade.created").expect("trade.created").remove(0);
    let mut expected = in_market.clone();
    expected["seq"] = Value::Null;
    assert_eq!(trade, expected);
    assert_eq!(trade["data"]["trade"]["id"], bet["bet_id"]);
    let balance = events.remove("balance.updated").expect("balance.updated").remove(0);
    assert_eq!(balance["data"], json!({ "token_id": f.token_id, "balance": bet["balance_after"] }));
    assert_eq!(bet["balance_after"], (90 * ONE_TOKEN).to_string());
    let position = events.remove("position.updated").expect("position.updated").remove(0);
    assert_eq!(position["data"], json!({ "position": holding(&f.app, token, outcome(&market, 0)).await }));
    assert!(events.is_empty(), "{events:?}");

    // Another wallet's trade does not show; the next event is this wallet's deposit.
    bet_ok(&f.app, &market, 1, &other, 4 * ONE_TOKEN).await;
    market_event(&market_sse.next_event().await, "trade.created", &id, 5);
    marker(&f, &mut stream, &t.wallet.address, 7).await;

    // A sell: the same three.
    let shares = wei(&holding(&f.app, token, outcome(&market, 1)).await["shares"]) / 3;
    let sold = sell(&f.app, &market, 1, &t, shares).await;
    assert_eq!(sold.status, StatusCode::OK, "{}", sold.body);
    let mut events = user_events(&mut stream, 3).await;
    assert_eq!(events["trade.created"][0]["data"]["trade"]["id"], sold.body["transaction_id"]);
    assert_eq!(events["balance.updated"][0]["data"]["balance"], sold.body["balance_after"]);
    let position = events.remove("position.updated").expect("position.updated").remove(0);
    assert_eq!(position["data"], json!({ "position": holding(&f.app, token, outcome(&market, 1)).await }));

    // A withdrawal: withdrawal.completed (the withdrawal response) and balance.updated.
    let withdrawal = f
        .app
        .post("/v1/providers/wallets/withdrawals", Some(&f.provider.key), json!({ "wallet_address": t.wallet.address, "token_id": f.token_id, "amount": ONE_TOKEN.to_string(), "reference": uuid() }))
        .await;
    assert_eq!(withdrawal.status, StatusCode::CREATED, "{}", withdrawal.body);
    let events = user_events(&mut stream, 2).await;
    assert_eq!(events["withdrawal.completed"][0]["data"], withdrawal.body);
    assert_eq!(events["balance.updated"][0]["data"], json!({ "token_id": f.token_id, "balance": withdrawal.body["balance_after"] }));

    // Resolution changes both positions' status; a claim adds claim.completed.
    resolve(&f, &market, 0).await;
    let changed = user_events(&mut stream, 2).await;
    let changed = &changed["position.updated"];
    let now = holdings_oldest_first(&f.app, token).await;
    let mut statuses: Vec<&str> = changed.iter().map(|e| e["data"]["position"]["status"].as_str().unwrap()).collect();
    statuses.sort();
    assert_eq!(statuses, ["lost", "won"]);
    for e in changed {
        let shown = now.iter().find(|h| h["id"] == e["data"]["position"]["id"]).expect("a holding");
        assert_eq!(e["data"], json!({ "position": shown }));
    }
    let won = now.iter().find(|h| h["status"] == "won").unwrap();
    let claim = f
        .app
        .post(&format!("/v1/markets/positions/{}/claim", won["id"].as_str().unwrap()), Some(token), json!({ "session_id": t.session.session_id }))
        .await;
    assert_eq!(claim.status, StatusCode::OK, "{}", claim.body);
    let mut events = user_events(&mut stream, 3).await;
    assert_eq!(events.remove("claim.completed").expect("claim.completed")[0]["data"], claim.body);
    assert_eq!(events.remove("balance.updated").expect("balance.updated")[0]["data"], json!({ "token_id": f.token_id, "balance": claim.body["balance_after"] }));
    let position = events.remove("position.updated").expect("position.updated").remove(0);
    assert_eq!(position["data"]["position"]["status"], "claimed");
    assert_eq!(position["data"], json!({ "position": holding(&f.app, token, outcome(&market, 0)).await }));
    marker(&f, &mut stream, &t.wallet.address, 11).await;

    // Logging out another session of the wallet leaves this stream open.
    assert_eq!(f.app.post("/v1/auth/logout", Some(&second.access_token), json!({})).await.status, StatusCode::OK);
    marker(&f, &mut stream, &t.wallet.address, 13).await;
    // Logging out its own session ends it within a second.
    let out = f.app.post("/v1/auth/logout", Some(token), json!({})).await;
    assert_eq!(out.status, StatusCode::OK, "{}", out.body);
    stream.expect_end(Duration::from_secs(1)).await;
    assert_problem(&f.app.get("/v1/auth/events", Some(token)).await, 401, "unauthenticated");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_creator_sees_every_fee_credited_with_the_balance_after_it() {
    const MARKETS: usize = 4;
    const TRADERS: usize = 8;
    let f = Fixture::new().await;
    let creator = f.trader(5 * ONE_TOKEN).await;
    let mut body = f.market_body(2);
    body["creator_wallet_id"] = json!(creator.wallet_id);
    let mut markets = Vec::new();
    for _ in 0..MARKETS {
        let r = f.create_market(body.clone()).await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
        markets.push(f.app.get(&format!("/v1/markets/{}", r.body["market"]["id"].as_str().unwrap()), None).await.body);
    }
    let client = reqwest::Client::new();
    let mut stream = Sse::user(&client, &f.app.base, &creator.session.access_token).await;
    assert_eq!(stream.next_event().await.event.as_deref(), Some("snapshot"));
    let traders = f.traders(TRADERS, 10 * ONE_TOKEN).await;
    // Every trader on every market at once: the trades share group commits (SQLite) and
    // batches (PostgreSQL), each crediting the creator's wallet.
    let bets = traders.iter().flat_map(|t| markets.iter().map(move |m| (t, m))).map(|(t, m)| {
        bet_on(&f.app, m["id"].as_str().unwrap(), m["outcomes"][0]["id"].as_str().unwrap(), t, ONE_TOKEN)
    });
    for r in futures_util::future::join_all(bets).await {
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    }
    let fee = library::fees(&markets[0], ONE_TOKEN).0;
    assert!(fee > 0);
    let mut balances = Vec::new();
    for _ in 0..MARKETS * TRADERS {
        let frame = stream.next_event().await;
        assert_eq!(frame.event.as_deref(), Some("balance.updated"), "{frame:?}");
        let envelope = frame.json();
        assert_eq!(envelope["data"]["token_id"], json!(f.token_id));
        balances.push(envelope["data"]["balance"].as_str().unwrap().parse::<u128>().unwrap());
    }
    stream.assert_quiet(Duration::from_millis(300)).await;
    // One event per trade, each with the balance right after its fee; the trades of one
    // commit are published by their own requests, in any order.
    balances.sort_unstable();
    let expected: Vec<u128> = (1..=(MARKETS * TRADERS) as u128).map(|k| 5 * ONE_TOKEN + k * fee).collect();
    assert_eq!(balances, expected);
    let (passed, report) = audit(&f.app);
    assert!(passed, "{report}");
}
