//! The WebSocket: many market subscriptions and the user channel on one connection, bad
//! messages answered without closing it.

use std::collections::HashMap;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{json, Value};
use tokio::time::Instant;

use super::support::*;
use super::*;

#[tokio::test]
async fn websocket_carries_many_market_subscriptions_and_survives_bad_messages() {
    let f = Fixture::new().await;
    let a = f.market(2).await;
    let b = f.market(3).await;
    let (a_id, b_id) = (id_of(&a), id_of(&b));
    let t = f.trader(100 * ONE_TOKEN).await;
    let mut ws = ws_connect(&f.app.base).await;

    ws_subscribe(&mut ws, json!({ "op": "subscribe", "market_id": a_id }), &[json!({ "type": "snapshot", "market_id": a_id, "seq": 1, "market": a })]).await;
    ws_subscribe(&mut ws, json!({ "op": "subscribe", "market_id": b_id }), &[json!({ "type": "snapshot", "market_id": b_id, "seq": 1, "market": b })]).await;

    // Events of both markets, each exactly the SSE stream's envelope.
    let on_a = bet_ok(&f.app, &a, 0, &t, ONE_TOKEN).await;
    let on_b = bet_ok(&f.app, &b, 2, &t, 2 * ONE_TOKEN).await;
    let mut got = [ws_next(&mut ws).await, ws_next(&mut ws).await];
    got.sort_by_key(|m| (m["market_id"] != a_id.as_str()) as u8);
    check_envelope(&got[0], "trade.created", Some(&a_id), Some(2));
    check_envelope(&got[1], "trade.created", Some(&b_id), Some(2));
    assert_eq!(got[0]["data"]["trade"]["id"], on_a["bet_id"]);
    assert_eq!(got[1]["data"]["trade"]["id"], on_b["bet_id"]);
    assert_eq!(got[0], logged(&f.app, &a_id, 2).await);
    assert_eq!(got[1], logged(&f.app, &b_id, 2).await);

    // Unsubscribed, a market's events stop.
    ws_send(&mut ws, json!({ "op": "unsubscribe", "market_id": b_id })).await;
    assert_eq!(ws_next(&mut ws).await, json!({ "type": "unsubscribed", "market_id": b_id }));
    bet_ok(&f.app, &b, 0, &t, ONE_TOKEN).await;
    let on_a = bet_ok(&f.app, &a, 1, &t, ONE_TOKEN).await;
    let next = ws_next(&mut ws).await;
    assert_eq!(next, logged(&f.app, &a_id, 3).await);
    assert_eq!(next["data"]["trade"]["id"], on_a["bet_id"]);
    ws_quiet(&mut ws, Duration::from_millis(300)).await;

    // Bad messages get an error frame and the connection stays.
    ws_expect_error(&mut ws, "not json", "bad_message").await;
    ws_expect_error(&mut ws, json!({ "op": "dance" }), "bad_message").await;
    ws_expect_error(&mut ws, json!({ "op": "subscribe" }), "bad_message").await;
    ws_expect_error(&mut ws, json!({ "op": "subscribe", "market_id": 42 }), "bad_message").await;
    ws_expect_error(&mut ws, json!({ "op": "subscribe", "market_id": a_id, "after_seq": -1 }), "bad_message").await;
    ws_expect_error(&mut ws, json!([1, 2]), "bad_message").await;
    ws_expect_error(&mut ws, json!({ "op": "subscribe", "market_id": uuid() }), "not_found").await;
    ws_expect_error(&mut ws, json!({ "op": "subscribe", "channel": "user" }), "unauthenticated").await;
    ws_expect_error(&mut ws, json!({ "op": "subscribe", "market_id": a_id, "extra": true }), "bad_message").await;
    ws_expect_error(&mut ws, json!({ "op": "unsubscribe", "market_id": b_id }), "not_subscribed").await;
    ws_send_binary(&mut ws, vec![1u8, 2, 3]).await;
    let answer = ws_next(&mut ws).await;
    assert_eq!((answer["type"].as_str(), answer["code"].as_str()), (Some("error"), Some("bad_message")), "{answer}");

    // Still subscribed to a, and a resubscription to b resumes after a seq without a snapshot.
    let on_a = bet_ok(&f.app, &a, 0, &t, ONE_TOKEN).await;
    let next = ws_next(&mut ws).await;
    check_envelope(&next, "trade.created", Some(&a_id), Some(4));
    assert_eq!(next["data"]["trade"]["id"], on_a["bet_id"]);
    ws_subscribe(&mut ws, json!({ "op": "subscribe", "market_id": b_id, "after_seq": 2 }), &[logged(&f.app, &b_id, 3).await]).await;
    let on_b = bet_ok(&f.app, &b, 1, &t, ONE_TOKEN).await;
    let next = ws_next(&mut ws).await;
    check_envelope(&next, "trade.created", Some(&b_id), Some(4));
    assert_eq!(next["data"]["trade"]["id"], on_b["bet_id"]);
    ws_quiet(&mut ws, Duration::from_millis(300)).await;
    ws_close(&mut ws).await;
}

#[tokio::test]
async fn websocket_user_channel_needs_auth_then_carries_the_callers_events() {
    let f = Fixture::new().await;
    let market = f.market(2).await;
    let t = f.trader(100 * ONE_TOKEN).await;
    let other = f.trader(100 * ONE_TOKEN).await;
    bet_ok(&f.app, &market, 1, &t, ONE_TOKEN).await;
    let token = t.session.access_token.as_str();
    let mut ws = ws_connect(&f.app.base).await;
    ws_expect_error(&mut ws, json!({ "op": "subscribe", "channel": "user" }), "unauthenticated").await;
    ws_expect_error(&mut ws, json!({ "op": "auth", "access_token": "not.a.token" }), "unauthenticated").await;
    ws_expect_error(&mut ws, json!({ "op": "auth", "access_token": f.provider.key }), "unauthenticated").await;

    ws_send(&mut ws, json!({ "op": "auth", "access_token": token })).await;
    assert_eq!(ws_next(&mut ws).await, json!({ "type": "authenticated", "wallet_id": t.wallet_id }));
    ws_send(&mut ws, json!({ "op": "subscribe", "channel": "user" })).await;
    assert_eq!(ws_next(&mut ws).await, json!({ "type": "subscribed", "channel": "user" }));
    let expected = json!({ "type": "snapshot", "channel": "user", "balances": balances(&f.app, token).await, "positions": holdings_oldest_first(&f.app, token).await });
    assert_eq!(ws_next(&mut ws).await, expected);

    bet_ok(&f.app, &market, 0, &other, ONE_TOKEN).await;
    let bet = bet_ok(&f.app, &market, 0, &t, 2 * ONE_TOKEN).await;
    let mut got = HashMap::new();
    for _ in 0..3 {
        let message = ws_next(&mut ws).await;
        got.insert(message["type"].as_str().unwrap_or_default().to_string(), message);
    }
    let mut trade = logged(&f.app, &id_of(&market), 4).await;
    trade["seq"] = Value::Null;
    assert_eq!(got["trade.created"], trade, "the caller's own trade only, seq null");
    assert_eq!(got["trade.created"]["data"]["trade"]["id"], bet["bet_id"]);
    check_envelope(&got["balance.updated"], "balance.updated", None, None);
    assert_eq!(got["balance.updated"]["data"], json!({ "token_id": f.token_id, "balance": bet["balance_after"] }));
    check_envelope(&got["position.updated"], "position.updated", Some(&id_of(&market)), None);
    assert_eq!(got["position.updated"]["data"], json!({ "position": holding(&f.app, token, outcome(&market, 0)).await }));
    ws_quiet(&mut ws, Duration::from_millis(300)).await;

    // Unsubscribed from the user channel, its events stop; logout ends nothing on a socket
    // without the user channel.
    ws_send(&mut ws, json!({ "op": "unsubscribe", "channel": "user" })).await;
    assert_eq!(ws_next(&mut ws).await, json!({ "type": "unsubscribed", "channel": "user" }));
    bet_ok(&f.app, &market, 1, &t, ONE_TOKEN).await;
    ws_quiet(&mut ws, Duration::from_millis(300)).await;

    // Subscribed again, a logout ends the user channel with `session_ended`; the socket stays.
    ws_send(&mut ws, json!({ "op": "subscribe", "channel": "user" })).await;
    assert_eq!(ws_next(&mut ws).await, json!({ "type": "subscribed", "channel": "user" }));
    assert_eq!(ws_next(&mut ws).await["type"], "snapshot");
    let started = Instant::now();
    assert_eq!(f.app.post("/v1/auth/logout", Some(token), json!({})).await.status, StatusCode::OK);
    let ended = ws_next(&mut ws).await;
    assert!(started.elapsed() < Duration::from_millis(1500), "session_ended after {:?}", started.elapsed());
    assert_eq!((ended["type"].as_str(), ended["code"].as_str()), (Some("error"), Some("session_ended")), "{ended}");
    ws_send(&mut ws, json!({ "op": "subscribe", "market_id": id_of(&market) })).await;
    assert_eq!(ws_next(&mut ws).await, json!({ "type": "subscribed", "market_id": id_of(&market) }));
    assert_eq!(ws_next(&mut ws).await["type"], "snapshot");
}
