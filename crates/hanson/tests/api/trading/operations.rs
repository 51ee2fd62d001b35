//! Market operations: pausing and resuming trading (no trade is accepted once a pause has
//! answered, even under concurrent trading), and resolutions with a dispute window: claims
//! wait, the market may be resolved again or cancelled, and the service finalizes it once,
//! with a clean audit at every step.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{json, Value};

use super::support::*;

async fn pause(a: &Arena, reason: &str) -> Response {
    a.f.app.post(&format!("/v1/providers/markets/{}/pause", a.market_id()), Some(&a.f.provider.key), json!({ "reason": reason })).await
}

async fn resume(a: &Arena) -> Response {
    a.f.app.post(&format!("/v1/providers/markets/{}/resume", a.market_id()), Some(&a.f.provider.key), json!({})).await
}

async fn resolve_in(a: &Arena, winner: usize, window_secs: u64) -> Response {
    let body = json!({ "winning_outcome_id": a.outcome(winner), "resolver_wallet_id": "resolver-1", "dispute_window_seconds": window_secs });
    a.f.app.post(&format!("/v1/providers/markets/{}/resolve", a.market_id()), Some(&a.f.provider.key), body).await
}

async fn claim(a: &Arena, t: &Trader) -> Response {
    let position = a.holdings(t).await["data"][0]["id"].as_str().unwrap().to_string();
    a.f.app.post(&format!("/v1/markets/positions/{position}/claim"), Some(&t.session.access_token), json!({ "session_id": t.session.session_id })).await
}

fn assert_audit(a: &Arena, when: &str) {
    let (ok, report) = audit(&a.f.app);
    assert!(ok, "audit {when}: {report}");
}

fn micros(timestamp: &Value) -> i128 {
    let t = time::OffsetDateTime::parse(timestamp.as_str().unwrap(), &time::format_description::well_known::Rfc3339).unwrap();
    t.unix_timestamp_nanos() / 1_000
}

#[tokio::test]
async fn a_paused_market_refuses_trades_and_previews_until_it_resumes() {
    let a = Arena::new(1, 100 * ONE_TOKEN).await;
    let t = &a.traders[0];
    assert_eq!(a.bet(t, 0, ONE_TOKEN).await.status, StatusCode::OK);
    let d = a.detail().await;
    assert_eq!((&d["trading_paused"], &d["paused_reason"], &d["paused_at"]), (&json!(false), &Value::Null, &Value::Null));

    assert_field_error(&pause(&a, " ").await, "reason");
    let other = a.f.app.create_provider("Other");
    let r = a.f.app.post(&format!("/v1/providers/markets/{}/pause", a.market_id()), Some(&other.key), json!({ "reason": "x" })).await;
    assert_problem(&r, 404, "not_found");

    let mut sse = Sse::market(&a.f.app.client, &a.f.app.base, a.market_id(), "", &[]).await;
    sse.next_event().await;
    let paused = pause(&a, "feed outage").await;
    assert_eq!(paused.status, StatusCode::OK, "{}", paused.body);
    assert_eq!((&paused.body["trading_paused"], &paused.body["paused_reason"]), (&json!(true), &json!("feed outage")));
    assert_eq!(paused.body, a.detail().await, "the answer is the market detail");
    let event = sse.next_event().await.json();
    assert_eq!((&event["type"], &event["data"]), (&json!("market.updated"), &paused.body));

    let before = a.snapshot().await;
    assert_problem(&a.bet(t, 0, ONE_TOKEN).await, 409, "market_paused");
    assert_problem(&a.sell_shares(t, 0, 1_000).await, 409, "market_paused");
    let preview = a.f.app.post("/v1/markets/bet-preview", None, json!({ "outcome_id": a.outcome(0), "amount": "1000" })).await;
    assert_problem(&preview, 409, "market_paused");
    let preview = a.f.app.post("/v1/markets/sell-preview", None, json!({ "outcome_id": a.outcome(0), "shares_amount": "1000" })).await;
    assert_problem(&preview, 409, "market_paused");
    assert_eq!(a.snapshot().await, before);

    // A second pause changes nothing and says nothing.
    let again = pause(&a, "another reason").await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.body);
    assert_eq!((&again.body["paused_at"], &again.body["paused_reason"]), (&paused.body["paused_at"], &json!("feed outage")));
    sse.assert_quiet(Duration::from_millis(300)).await;
    // Search results carry the three fields too.
    let found = a.f.app.post("/v1/markets/search", None, json!({})).await;
    let item = found.body["data"].as_array().unwrap().iter().find(|m| m["id"] == a.market_id()).unwrap().clone();
    assert_eq!((&item["trading_paused"], &item["paused_reason"], &item["paused_at"]), (&json!(true), &json!("feed outage"), &paused.body["paused_at"]));

    let resumed = resume(&a).await;
    assert_eq!(resumed.status, StatusCode::OK, "{}", resumed.body);
    assert_eq!((&resumed.body["trading_paused"], &resumed.body["paused_reason"], &resumed.body["paused_at"]), (&json!(false), &Value::Null, &Value::Null));
    assert_eq!(sse.next_event().await.json()["data"], resumed.body);
    assert_eq!(resume(&a).await.body, resumed.body, "resuming again changes nothing");
    assert_eq!(a.bet(t, 0, ONE_TOKEN).await.status, StatusCode::OK);
    let found = a.f.app.post("/v1/markets/search", None, json!({})).await;
    assert_eq!(found.body["data"].as_array().unwrap().iter().find(|m| m["id"] == a.market_id()).unwrap()["trading_paused"], false);

    // Resolve ends a pause; a settled market cannot be paused or resumed.
    assert_eq!(pause(&a, "settling").await.status, StatusCode::OK);
    assert_eq!(a.resolve(0).await.status, StatusCode::OK);
    assert_eq!(a.detail().await["trading_paused"], false);
    assert_problem(&pause(&a, "late").await, 409, "market_settled");
    assert_problem(&resume(&a).await, 409, "market_settled");
    assert_audit(&a, "after the pauses");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn no_trade_is_accepted_after_the_pause_answers() {
    let a = Arc::new(Arena::new(8, 1_000 * ONE_TOKEN).await);
    let paused = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::new();
    for i in 0..a.traders.len() {
        let (a, paused) = (a.clone(), paused.clone());
        tasks.push(tokio::spawn(async move {
            let mut after_pause = Vec::new();
            loop {
                // Read before the request is sent: true means the pause had answered.
                let sent_after = paused.load(Ordering::SeqCst);
                let r = a.bet(&a.traders[i], i % 2, ONE_TOKEN / 10).await;
                if sent_after {
                    after_pause.push((r.status, r.body["code"].clone()));
                }
                if after_pause.len() >= 3 {
                    break;
                }
            }
            after_pause
        }));
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let r = pause(&a, "suspicious flow").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    paused.store(true, Ordering::SeqCst);
    let paused_at = micros(&r.body["paused_at"]);
    let mut refused = 0;
    for task in tasks {
        for (status, code) in task.await.unwrap() {
            assert_eq!((status, code), (StatusCode::CONFLICT, json!("market_paused")), "a trade sent after the pause answered");
            refused += 1;
        }
    }
    assert_eq!(refused, 3 * a.traders.len(), "every trader tried three times after the pause");
    let trades = trades_in_order(&a.f.app, a.market_id()).await;
    assert!(!trades.is_empty(), "trades ran before the pause");
    for t in &trades {
        assert!(micros(&t["created_at"]) <= paused_at, "a trade applied after the pause: {t}");
    }
    assert_eq!(a.detail().await["trading_paused"], true);
    assert_audit(&a, "after the pause");
}

#[tokio::test]
async fn a_resolution_in_its_window_can_be_replaced_and_becomes_final_once() {
    let a = Arena::new(4, 100 * ONE_TOKEN).await;
    for (i, t) in a.traders.iter().enumerate() {
        assert_eq!(a.bet(t, i % 2, (i as u128 + 2) * ONE_TOKEN).await.status, StatusCode::OK);
    }
    let treasury = wei(&json!(a.f.treasury_balance().await));
    let d = a.detail().await;
    let pool = wei(&d["total_pool"]);
    assert_eq!(d["final_at"], Value::Null, "no resolution yet");
    let mut sse = Sse::market(&a.f.app.client, &a.f.app.base, a.market_id(), "", &[]).await;
    sse.next_event().await;

    assert_field_error(&resolve_in(&a, 0, 604_801).await, "dispute_window_seconds");
    let first = resolve_in(&a, 0, 60).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.body);
    assert_eq!(first.body["dispute_window_seconds"], 60);
    assert_eq!(micros(&first.body["final_at"]) - micros(&first.body["resolved_at"]), 60_000_000);
    let d = a.detail().await;
    assert_eq!((&d["status"], &d["final_at"], &d["resolution_pending"]), (&json!("resolved"), &first.body["final_at"], &json!(true)));
    assert_eq!(wei(&d["total_pool"]), pool, "the surplus stays in the pool");
    assert_eq!(wei(&json!(a.f.treasury_balance().await)), treasury);
    assert_problem(&claim(&a, &a.traders[0]).await, 409, "resolution_pending");
    assert_audit(&a, "in the first window");
    assert_eq!(market_event(&sse.next_event().await, "market.resolved", a.market_id(), 6)["data"], first.body);

    // Resolved again, for the other outcome, with a short window of its own.
    let second = resolve_in(&a, 1, 2).await;
    assert_eq!(second.status, StatusCode::OK, "{}", second.body);
    assert_eq!((wei(&second.body["total_pool"]), second.body["positions_updated"].as_u64()), (pool, Some(4)));
    assert_eq!(a.holdings(&a.traders[1]).await["data"][0]["status"], "won");
    assert_eq!(a.holdings(&a.traders[0]).await["data"][0]["status"], "lost");
    assert_problem(&claim(&a, &a.traders[1]).await, 409, "resolution_pending");
    assert_audit(&a, "in the second window");
    assert_eq!(market_event(&sse.next_event().await, "market.resolved", a.market_id(), 7)["data"], second.body);

    // Final within 5 s of final_at, once: market.finalized, then the stream ends.
    let finalized = market_event(&sse.next_event_within(Duration::from_secs(8)).await, "market.finalized", a.market_id(), 8);
    let arrived = time::OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000;
    assert!(arrived - micros(&second.body["final_at"]) < 5_500_000, "finalized late");
    let winning = wei(&a.detail().await["outcomes"][1]["total_shares"]);
    assert_eq!(
        finalized["data"],
        json!({ "market_id": a.market_id(), "winning_outcome_id": a.outcome(1), "final_at": second.body["final_at"], "payout_ratio": "1", "returned_to_treasury": (pool - winning).to_string() })
    );
    sse.expect_end(Duration::from_secs(3)).await;
    assert_eq!(wei(&json!(a.f.treasury_balance().await)), treasury + pool - winning);
    assert_eq!(a.detail().await["resolution_pending"], false);
    assert_audit(&a, "after finalizing");

    let paid = claim(&a, &a.traders[1]).await;
    assert_eq!(paid.status, StatusCode::OK, "{}", paid.body);
    assert_problem(&claim(&a, &a.traders[0]).await, 409, "not_claimable");
    assert_problem(&resolve_in(&a, 0, 0).await, 409, "market_settled");
    assert_problem(&a.cancel().await, 409, "market_settled");
    // Once: the log holds one market.finalized.
    let mut log = Sse::market(&a.f.app.client, &a.f.app.base, a.market_id(), "?after_seq=7", &[]).await;
    assert_eq!(log.next_event().await.json(), finalized);
    log.expect_end(Duration::from_secs(2)).await;
    assert_audit(&a, "after the claims");
}

#[tokio::test]
async fn a_cancel_in_the_window_refunds_from_the_whole_pool() {
    let a = Arena::new(2, 100 * ONE_TOKEN).await;
    for (i, t) in a.traders.iter().enumerate() {
        assert_eq!(a.bet(t, i, 10 * ONE_TOKEN).await.status, StatusCode::OK);
    }
    let invested: Vec<u128> = {
        let mut v = Vec::new();
        for t in &a.traders {
            v.push(wei(&a.holdings(t).await["data"][0]["total_invested"]));
        }
        v
    };
    assert_eq!(resolve_in(&a, 0, 300).await.status, StatusCode::OK);
    let balances_before = [a.balance(&a.traders[0]).await, a.balance(&a.traders[1]).await];
    let r = a.cancel().await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!((&r.body["refund_ratio"], r.body["positions_refunded"].as_u64()), (&json!("1"), Some(2)));
    for (i, t) in a.traders.iter().enumerate() {
        assert_eq!(a.balance(t).await, balances_before[i] + invested[i], "refunded its cost basis");
        assert_eq!(a.holdings(t).await["data"][0]["status"], "refunded");
    }
    let d = a.detail().await;
    assert_eq!((&d["status"], &d["final_at"], &d["total_pool"]), (&json!("cancelled"), &Value::Null, &json!("0")));
    assert_audit(&a, "after the cancel");
}

#[tokio::test]
async fn a_window_of_zero_is_final_at_once() {
    let a = Arena::new(1, 100 * ONE_TOKEN).await;
    let t = &a.traders[0];
    assert_eq!(a.bet(t, 0, 5 * ONE_TOKEN).await.status, StatusCode::OK);
    let r = resolve_in(&a, 0, 0).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!((&r.body["final_at"], &r.body["dispute_window_seconds"]), (&r.body["resolved_at"], &json!(0)));
    assert_eq!(a.detail().await["resolution_pending"], false);
    assert_eq!(claim(&a, t).await.status, StatusCode::OK);
    assert_problem(&resolve_in(&a, 1, 0).await, 409, "market_settled");
    assert_audit(&a, "after a final resolution");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_in_the_window_finalizes_after_it() {
    let db = TestDatabase::create();
    let url = db.url.clone();
    create_database(&url).await;
    let provider = cli_on(&url, &["provider", "create", "--name", "Window Games"]);
    let (provider_id, key) = (provider["provider_id"].as_str().unwrap().to_string(), provider["api_key"].as_str().unwrap().to_string());
    let token_id = cli_on(&url, &["token", "create", "--symbol", "USDC", "--name", "USDC token", "--decimals", "18"])["token_id"].as_str().unwrap().to_string();
    let server = ServeProcess::start_flags(&url, &[]).await;
    let client = reqwest::Client::new();
    let base = server.base.clone();
    let deposit = |address: &str, amount: u128| {
        post(&client, format!("{base}/v1/providers/wallets/deposits"), &key, json!({
            "wallet_address": address, "token_id": token_id, "amount": amount.to_string(), "reference": uuid(),
        }))
    };
    let (status, _) = post(&client, format!("{base}/v1/providers/treasury/deposits"), &key, json!({
        "token_id": token_id, "amount": (10_000 * ONE_TOKEN).to_string(), "reference": uuid(),
    }))
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let (_, creator) = deposit(CREATOR_ADDRESS, 1).await;
    let (status, created) = post(&client, format!("{base}/v1/providers/markets"), &key, json!({
        "question": "Does a window survive a restart?", "token_id": token_id, "liquidity": (1000 * ONE_TOKEN).to_string(),
        "ends_at": iso(86_400), "creator_wallet_id": creator["wallet_id"],
        "outcomes": [{ "title": "Yes", "outcome_index": 0 }, { "title": "No", "outcome_index": 1 }],
    }))
    .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let market_id = created["market"]["id"].as_str().unwrap().to_string();
    let yes = created["outcomes"][0]["id"].as_str().unwrap().to_string();
    let wallet = TestWallet::random();
    deposit(&wallet.address, 50 * ONE_TOKEN).await;
    let session = login_at(&client, &base, &provider_id, &wallet).await;
    let (status, bet) = post(&client, format!("{base}/v1/markets/{market_id}/bet"), &session.access_token, json!({
        "session_id": session.session_id, "outcome_id": yes, "amount": (20 * ONE_TOKEN).to_string(),
    }))
    .await;
    assert_eq!(status, StatusCode::OK, "{bet}");
    let (status, resolution) = post(&client, format!("{base}/v1/providers/markets/{market_id}/resolve"), &key, json!({
        "winning_outcome_id": yes, "resolver_wallet_id": "ops", "dispute_window_seconds": 3,
    }))
    .await;
    assert_eq!(status, StatusCode::OK, "{resolution}");

    // Killed inside the window; the books hold while it is down.
    server.crash();
    assert!(audit_on(&url).0, "audit after the kill: {}", audit_on(&url).1);
    tokio::time::sleep(Duration::from_secs(4)).await;
    let server = ServeProcess::start_flags(&url, &[]).await;
    let base = server.base.clone();
    let mut finalized = false;
    for _ in 0..60 {
        let d: Value = client.get(format!("{base}/v1/markets/{market_id}")).send().await.unwrap().json().await.unwrap();
        if d["resolution_pending"] == false {
            finalized = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(finalized, "the restarted service finalized the resolution");
    let position = {
        let r = client.post(format!("{base}/v1/markets/holdings/search")).bearer_auth(&session.access_token).json(&json!({})).send().await.unwrap();
        r.json::<Value>().await.unwrap()["data"][0]["id"].as_str().unwrap().to_string()
    };
    let (status, paid) = post(&client, format!("{base}/v1/markets/positions/{position}/claim"), &session.access_token, json!({ "session_id": session.session_id })).await;
    assert_eq!((status, &paid["claimed_amount"]), (StatusCode::OK, &bet["shares_purchased"]), "{paid}");
    let mut log = Sse::market(&client, &base, &market_id, "?after_seq=0", &[]).await;
    let kinds = ["market.created", "trade.created", "market.resolved", "market.finalized"];
    for (i, kind) in kinds.iter().enumerate() {
        market_event(&log.next_event().await, kind, &market_id, i as u64 + 1);
    }
    log.expect_end(Duration::from_secs(2)).await;
    drop(server);
    assert!(audit_on(&url).0, "audit at the end: {}", audit_on(&url).1);
}
