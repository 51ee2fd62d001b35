//! The market stream: a snapshot, then every event type with its exact data; market.closed
//! on time and once; a gapless `seq` under concurrent trades; refusals publish nothing.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{json, Value};
use tokio::time::{timeout, Instant};

use super::support::*;
use super::*;

#[tokio::test]
async fn market_stream_sends_a_snapshot_then_every_event_with_its_exact_data() {
    let f = Fixture::new().await;
    let market = f.market(2).await;
    let id = id_of(&market);
    let key = Some(f.provider.key.as_str());
    let t = f.trader(100 * ONE_TOKEN).await;
    let mut sse = Sse::market(&f.app.client, &f.app.base, &id, "", &[]).await;
    // market.created is seq 1 and nothing happened since.
    expect_snapshot(&mut sse, 1, &market).await;

    let put = f.app.put(&format!("/v1/providers/markets/{id}"), key, json!({ "question": "Will the away team win?", "tags": ["football"] })).await;
    assert_eq!(put.status, StatusCode::OK, "{}", put.body);
    let d = detail(&f.app, &id).await;
    let updated = market_event(&sse.next_event().await, "market.updated", &id, 2);
    assert_eq!(updated["data"], d, "market.updated carries the detail after the change");
    assert_eq!(updated["data"]["question"], "Will the away team win?");
    assert_eq!(updated["data"]["tags"], json!(["football"]));

    let created = f
        .app
        .post(&format!("/v1/providers/markets/{id}/outcomes"), key, json!({ "title": "Draw", "description": "Level at full time", "outcome_index": 2 }))
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let d = detail(&f.app, &id).await;
    let e = market_event(&sse.next_event().await, "outcome.created", &id, 3);
    assert_eq!(e["data"], json!({ "outcome": created.body["outcome"], "prices": prices_of(&d) }));
    assert_eq!(e["data"]["prices"].as_array().unwrap().len(), 3);
    for p in e["data"]["prices"].as_array().unwrap() {
        assert_eq!(p["price"], "0.333333333333333333", "a new outcome before trades: every price 1/3");
    }
    let draw = created.body["outcome"]["id"].as_str().unwrap().to_string();

    let renamed = f.app.put(&format!("/v1/providers/markets/{id}/outcomes/{draw}"), key, json!({ "title": "Tie" })).await;
    assert_eq!(renamed.status, StatusCode::OK, "{}", renamed.body);
    let d = detail(&f.app, &id).await;
    let e = market_event(&sse.next_event().await, "outcome.updated", &id, 4);
    assert_eq!(e["data"], json!({ "outcome": renamed.body["outcome"], "prices": prices_of(&d) }));
    assert_eq!(e["data"]["outcome"]["title"], "Tie");

    let bet = bet_ok(&f.app, &d, 0, &t, 10 * ONE_TOKEN).await;
    let bet_id = bet["bet_id"].as_str().unwrap();
    let e = market_event(&sse.next_event().await, "trade.created", &id, 5);
    assert_eq!(e["data"], trade_created_data(&f.app, &id, bet_id).await);
    assert_eq!(e["data"]["trade"]["id"], bet_id);
    assert_eq!(e["data"]["trade"]["transaction_type"], "buy");
    assert_eq!(e["data"]["trade"]["amount"], "10000000000000000000");
    assert_eq!(e["data"]["trade"]["shares"], bet["shares_purchased"]);
    assert_eq!(e["data"]["trade"]["wallet_id"], t.wallet_id);
    assert!(e["data"].get("balance_after").is_none() && e["data"]["trade"].get("balance_after").is_none(), "never a balance");

    let shares = wei(&bet["shares_purchased"]) / 2;
    let sold = sell(&f.app, &d, 0, &t, shares).await;
    assert_eq!(sold.status, StatusCode::OK, "{}", sold.body);
    let sale_id = sold.body["transaction_id"].as_str().unwrap();
    let e = market_event(&sse.next_event().await, "trade.created", &id, 6);
    assert_eq!(e["data"], trade_created_data(&f.app, &id, sale_id).await);
    assert_eq!(e["data"]["trade"]["transaction_type"], "sell");
    assert_eq!(e["data"]["trade"]["amount"], sold.body["proceeds"]);
    assert_eq!(e["data"]["trade"]["shares"], shares.to_string());

    let resolution = resolve(&f, &d, 0).await;
    let e = market_event(&sse.next_event().await, "market.resolved", &id, 7);
    assert_eq!(e["data"], resolution);
    // A settled market's stream ends after its last event.
    sse.expect_end(Duration::from_secs(3)).await;

    // The log from the start: the same envelopes, market.created first with the detail as
    // it was at creation.
    let mut replayed = Sse::market(&f.app.client, &f.app.base, &id, "?after_seq=0", &[]).await;
    let first = market_event(&replayed.next_event().await, "market.created", &id, 1);
    assert_eq!(first["data"], market);
    let kinds = ["market.updated", "outcome.created", "outcome.updated", "trade.created", "trade.created", "market.resolved"];
    for (i, kind) in kinds.iter().enumerate() {
        market_event(&replayed.next_event().await, kind, &id, i as u64 + 2);
    }
    replayed.expect_end(Duration::from_secs(3)).await;
}

#[tokio::test]
async fn market_cancelled_carries_the_cancel_response_and_ends_the_stream() {
    let f = Fixture::new().await;
    let market = f.market(2).await;
    let id = id_of(&market);
    let t = f.trader(10 * ONE_TOKEN).await;
    bet_ok(&f.app, &market, 1, &t, ONE_TOKEN).await;
    let mut sse = Sse::market(&f.app.client, &f.app.base, &id, "", &[]).await;
    expect_snapshot(&mut sse, 2, &detail(&f.app, &id).await).await;
    let cancellation = cancel(&f, &market).await;
    let e = market_event(&sse.next_event().await, "market.cancelled", &id, 3);
    assert_eq!(e["data"], cancellation);
    sse.expect_end(Duration::from_secs(3)).await;
}

#[tokio::test]
async fn market_closed_is_sent_once_within_five_seconds_of_ends_at() {
    let f = Fixture::new().await;
    let market = f.ending_market(2).await;
    let id = id_of(&market);
    assert_eq!(market["status"], "active");
    let ends_at = time::OffsetDateTime::parse(market["ends_at"].as_str().unwrap(), &time::format_description::well_known::Rfc3339).unwrap();

    let mut sse = Sse::market(&f.app.client, &f.app.base, &id, "", &[]).await;
    expect_snapshot(&mut sse, 1, &market).await;
    let e = market_event(&sse.next_event_within(Duration::from_secs(12)).await, "market.closed", &id, 2);
    let arrived = time::OffsetDateTime::now_utc();
    assert_eq!(e["data"], json!({ "closes_at": market["closes_at"] }));
    assert!(arrived >= ends_at, "market.closed before ends_at ({arrived} < {ends_at})");
    assert!(arrived - ends_at < time::Duration::milliseconds(5_500), "market.closed {} after ends_at", arrived - ends_at);
    assert_eq!(detail(&f.app, &id).await["status"], "closed");

    // Once: nothing more while the closer keeps running, and the log holds it once.
    sse.assert_quiet(Duration::from_millis(5_500)).await;
    let mut replayed = Sse::market(&f.app.client, &f.app.base, &id, "?after_seq=0", &[]).await;
    assert_eq!(market_event(&replayed.next_event().await, "market.created", &id, 1)["data"], market);
    assert_eq!(replayed.next_event().await.json(), e);
    replayed.assert_quiet(Duration::from_millis(300)).await;
}

#[tokio::test]
async fn an_update_moving_ends_at_into_the_past_closes_the_market_at_once() {
    let f = Fixture::new().await;
    let market = f.market(2).await;
    let id = id_of(&market);
    let mut sse = Sse::market(&f.app.client, &f.app.base, &id, "", &[]).await;
    expect_snapshot(&mut sse, 1, &market).await;
    let put = f.app.put(&format!("/v1/providers/markets/{id}"), Some(&f.provider.key), json!({ "ends_at": iso(-5) })).await;
    assert_eq!(put.status, StatusCode::OK, "{}", put.body);
    let answered = Instant::now();
    let d = detail(&f.app, &id).await;
    assert_eq!(d["status"], "closed");
    let updated = market_event(&sse.next_event().await, "market.updated", &id, 2);
    assert_eq!(updated["data"], d, "the detail after the change, status computed at the event's time");
    let closed = market_event(&sse.next_event().await, "market.closed", &id, 3);
    assert!(answered.elapsed() < Duration::from_secs(1), "market.closed took {:?}", answered.elapsed());
    assert_eq!(closed["data"], json!({ "closes_at": d["closes_at"] }));
    // The closer does not announce it again.
    sse.assert_quiet(Duration::from_millis(5_500)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn seq_is_gapless_under_concurrent_trades_and_the_events_are_the_trade_records() {
    let limits = Limits { auth_per_ip: Rule::OFF, ..Default::default() };
    let f = Arc::new(Fixture::new_with(limits).await);
    let market = f.market(2).await;
    let id = id_of(&market);
    let traders = f.traders(20, 1_000 * ONE_TOKEN).await;
    let mut sse = Sse::market(&f.app.client, &f.app.base, &id, "", &[]).await;
    expect_snapshot(&mut sse, 1, &market).await;
    // The subscriber reads throughout, from before the first trade.
    let reader = tokio::spawn(async move {
        let mut frames = Vec::with_capacity(420);
        while frames.len() < 420 {
            frames.push(sse.next_event_within(Duration::from_secs(60)).await);
        }
        sse.assert_quiet(Duration::from_millis(500)).await;
        frames
    });

    // Everyone opens a position, so sells have shares.
    let mut acknowledged = HashSet::new();
    for (i, t) in traders.iter().enumerate() {
        let bet = bet_ok(&f.app, &market, i % 2, t, 2 * ONE_TOKEN).await;
        acknowledged.insert(bet["bet_id"].as_str().unwrap().to_string());
    }
    let mut tasks = tokio::task::JoinSet::new();
    for n in 0..400usize {
        let (f, t, market) = (f.clone(), traders[n % 20].clone(), market.clone());
        tasks.spawn(async move {
            if n % 7 == 3 {
                let r = sell(&f.app, &market, (n % 20) % 2, &t, ONE_TOKEN / 10 + n as u128).await;
                (r.status, r.body)
            } else {
                let r = bet_on(&f.app, market["id"].as_str().unwrap(), outcome(&market, (n / 20) % 2), &t, ONE_TOKEN / 3 + n as u128 * 12_345_678_901_234).await;
                (r.status, r.body)
            }
        });
    }
    while let Some(joined) = tasks.join_next().await {
        let (status, body) = joined.unwrap();
        assert_eq!(status, StatusCode::OK, "{body}");
        let trade_id = body["bet_id"].as_str().or(body["transaction_id"].as_str()).unwrap();
        acknowledged.insert(trade_id.to_string());
    }
    assert_eq!(acknowledged.len(), 420);

    let frames = timeout(Duration::from_secs(90), reader).await.expect("the subscriber got every event").unwrap();
    let d = detail(&f.app, &id).await;
    let records = trades_in_order(&f.app, &id).await;
    assert_eq!(records.len(), 420);
    let by_id: HashMap<String, Value> = records.iter().map(|r| (r["id"].as_str().unwrap().to_string(), r.clone())).collect();

    // In seq order, each event is the next trade applied: its record exactly, and the prices,
    // volume and pool right after it.
    let b = wei(&d["b"]);
    let outcomes: Vec<&str> = d["outcomes"].as_array().unwrap().iter().map(|o| o["id"].as_str().unwrap()).collect();
    let mut q = vec![0u128; outcomes.len()];
    let (mut volume, mut pool) = (0u128, wei(&d["liquidity"]));
    let mut seen = HashSet::new();
    let mut in_seq_order = Vec::new();
    for (k, frame) in frames.iter().enumerate() {
        let seq = k as u64 + 2;
        let e = market_event(frame, "trade.created", &id, seq);
        let trade = &e["data"]["trade"];
        let trade_id = trade["id"].as_str().unwrap();
        assert!(seen.insert(trade_id.to_string()), "trade {trade_id} published twice (seq {seq})");
        assert!(acknowledged.contains(trade_id), "seq {seq} is no acknowledged trade: {trade}");
        assert_eq!(trade, &by_id[trade_id], "seq {seq}: the event's trade is the record");
        let i = outcomes.iter().position(|o| *o == trade["outcome_id"].as_str().unwrap()).unwrap();
        let (amount, shares) = (wei(&trade["amount"]), wei(&trade["shares"]));
        match trade["transaction_type"].as_str().unwrap() {
            "buy" => {
                q[i] += shares;
                pool += wei(&trade["net_amount"]);
            }
            "sell" => {
                q[i] -= shares;
                pool -= amount;
            }
            other => panic!("transaction_type {other}"),
        }
        volume += amount;
        let prices = lmsr::prices(b, &q).unwrap();
        let expected: Value = outcomes.iter().zip(&prices).map(|(o, p)| json!({ "outcome_id": o, "price": p.to_string() })).collect();
        assert_eq!(e["data"]["prices"], expected, "seq {seq}: prices after the trade");
        assert_eq!(e["data"]["total_volume"], volume.to_string(), "seq {seq}");
        assert_eq!(e["data"]["total_pool"], pool.to_string(), "seq {seq}");
        in_seq_order.push(trade.clone());
    }
    assert_eq!(seen, acknowledged, "the events are exactly the acknowledged trades");
    // seq order is the order the engine applied them.
    replay(&d, &in_seq_order);
    let last = frames.last().unwrap().json();
    assert_eq!(last["data"]["prices"], prices_of(&d));
    assert_eq!(last["data"]["total_volume"], d["total_volume"]);
    assert_eq!(last["data"]["total_pool"], d["total_pool"]);
}

#[tokio::test]
async fn refused_trades_publish_nothing() {
    let f = Fixture::new().await;
    let market = f.market(2).await;
    let other_market = f.market(2).await;
    let id = id_of(&market);
    let t = f.trader(50 * ONE_TOKEN).await;
    let poor = f.trader(2_000).await;
    let mut sse = Sse::market(&f.app.client, &f.app.base, &id, "", &[]).await;
    expect_snapshot(&mut sse, 1, &market).await;
    let first = bet_ok(&f.app, &market, 0, &t, 5 * ONE_TOKEN).await;
    assert_eq!(market_event(&sse.next_event().await, "trade.created", &id, 2)["data"]["trade"]["id"], first["bet_id"]);

    let bet_path = format!("/v1/markets/{id}/bet");
    let token = Some(t.session.access_token.as_str());
    let body = |outcome_id: &str, amount: &str| json!({ "session_id": t.session.session_id, "outcome_id": outcome_id, "amount": amount });
    assert_problem(&bet_on(&f.app, &id, outcome(&market, 0), &t, 46 * ONE_TOKEN).await, 422, "insufficient_balance");
    assert_problem(&bet_on(&f.app, &id, outcome(&market, 0), &poor, 5_000).await, 422, "insufficient_balance");
    assert_problem(&bet_on(&f.app, &id, outcome(&market, 1), &t, 999).await, 422, "bet_below_minimum");
    assert_problem(&f.app.post(&bet_path, token, body(&uuid(), "5000")).await, 422, "unknown_outcome");
    assert_problem(&f.app.post(&bet_path, token, body(outcome(&other_market, 0), "5000")).await, 422, "unknown_outcome");
    assert_field_error(&f.app.post(&bet_path, token, body(outcome(&market, 0), "1.5")).await, "amount");
    let mismatch = json!({ "session_id": poor.session.session_id, "outcome_id": outcome(&market, 0), "amount": "5000" });
    assert_problem(&f.app.post(&bet_path, token, mismatch).await, 403, "session_mismatch");
    assert_problem(&sell(&f.app, &market, 1, &t, 1_000).await, 422, "insufficient_shares");
    assert_problem(&sell(&f.app, &market, 0, &t, 100 * ONE_TOKEN).await, 422, "insufficient_shares");

    // An idempotent replay answers again without trading again, and publishes nothing.
    let keyed = || {
        f.app
            .client
            .post(format!("{}{bet_path}", f.app.base))
            .bearer_auth(&t.session.access_token)
            .header("Idempotency-Key", "stream-replay-1")
            .json(&body(outcome(&market, 1), "3000000000000000000"))
    };
    let original = keyed().send().await.unwrap();
    assert_eq!(original.status(), StatusCode::OK);
    let original: Value = original.json().await.unwrap();
    let e = market_event(&sse.next_event().await, "trade.created", &id, 3);
    assert_eq!(e["data"]["trade"]["id"], original["bet_id"]);
    let again = keyed().send().await.unwrap();
    assert_eq!(again.status(), StatusCode::OK);
    assert_eq!(again.headers().get("idempotent-replayed").and_then(|v| v.to_str().ok()), Some("true"));

    // The next event after all that is the next trade, at the next seq.
    let next = bet_ok(&f.app, &market, 0, &t, ONE_TOKEN).await;
    let e = market_event(&sse.next_event().await, "trade.created", &id, 4);
    assert_eq!(e["data"], trade_created_data(&f.app, &id, next["bet_id"].as_str().unwrap()).await);
    sse.assert_quiet(Duration::from_millis(300)).await;
}

/// Refusals in flight together with trades (on SQLite, in the same group commits): only the
/// trades are published, gapless. (A whole group commit rolled back cannot be caused through
/// the API: an operation that fails after writing is a server fault, not a client request.)
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn refusals_amid_concurrent_trades_publish_nothing() {
    let f = Arc::new(Fixture::new().await);
    let market = f.market(2).await;
    let id = id_of(&market);
    let traders = f.traders(4, 100 * ONE_TOKEN).await;
    let poor = Arc::new(f.trader(2_000).await);
    let mut sse = Sse::market(&f.app.client, &f.app.base, &id, "", &[]).await;
    expect_snapshot(&mut sse, 1, &market).await;

    let mut tasks = tokio::task::JoinSet::new();
    for n in 0..60usize {
        let (f, market) = (f.clone(), market.clone());
        let t = if n % 2 == 0 { traders[n % 4].clone() } else { poor.clone() };
        tasks.spawn(async move {
            let market_id = market["id"].as_str().unwrap();
            let r = match n % 6 {
                1 | 3 => bet_on(&f.app, market_id, outcome(&market, n % 2), &t, 5_000).await,
                5 => bet_on(&f.app, market_id, &uuid(), &t, 1_500).await,
                _ => bet_on(&f.app, market_id, outcome(&market, (n / 2) % 2), &t, ONE_TOKEN + n as u128).await,
            };
            (n, r.status, r.body)
        });
    }
    let mut placed = HashSet::new();
    while let Some(joined) = tasks.join_next().await {
        let (n, status, body) = joined.unwrap();
        match n % 6 {
            1 | 3 => assert_eq!((status.as_u16(), body["code"].as_str()), (422, Some("insufficient_balance")), "{body}"),
            5 => assert_eq!((status.as_u16(), body["code"].as_str()), (422, Some("unknown_outcome")), "{body}"),
            _ => {
                assert_eq!(status, StatusCode::OK, "{body}");
                placed.insert(body["bet_id"].as_str().unwrap().to_string());
            }
        }
    }
    assert_eq!(placed.len(), 30);
    let mut published = HashSet::new();
    for seq in 2..=31 {
        let e = market_event(&sse.next_event().await, "trade.created", &id, seq);
        published.insert(e["data"]["trade"]["id"].as_str().unwrap().to_string());
    }
    assert_eq!(published, placed);
    let last = bet_ok(&f.app, &market, 1, &traders[0], ONE_TOKEN).await;
    let e = market_event(&sse.next_event().await, "trade.created", &id, 32);
    assert_eq!(e["data"]["trade"]["id"], last["bet_id"]);
}
