//! The ticker: the state now first, then ticks at most every interval (250 ms by default)
//! whose trades add up with `trades_omitted`, the last equal to the market's final state;
//! the same ticks on the WebSocket's `ticker` channel.

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{json, Value};

use super::super::support::{assert_problem, trades_in_order, ws_connect, ws_next, ws_quiet, ws_send, Arena, Sse};

const ONE: u128 = 1_000_000_000_000_000_000;

/// What a tick must show of a market detail.
fn state_of(detail: &Value) -> Value {
    json!({
        "market_id": detail["id"],
        "status": detail["status"],
        "trading_paused": detail["trading_paused"],
        "prices": detail["outcomes"].as_array().unwrap().iter().map(|o| json!({ "outcome_id": o["id"], "price": o["current_price"] })).collect::<Vec<_>>(),
        "total_volume": detail["total_volume"],
        "total_pool": detail["total_pool"],
    })
}

fn state_of_tick(tick: &Value) -> Value {
    let mut state = tick.clone();
    let map = state.as_object_mut().unwrap();
    for field in ["seq", "trades", "trades_omitted", "type"] {
        map.remove(field);
    }
    state
}

#[tokio::test]
async fn ticks_are_spaced_add_up_and_end_at_the_final_state() {
    let a = Arena::new(2, 10_000 * ONE).await;
    let client = reqwest::Client::new();
    let mut stream = Sse::market(&client, &a.f.app.base, a.market_id(), "", &[]).await;
    let snapshot = stream.next_event().await.json();
    let mut ticker = Sse::ticker(&client, &a.f.app.base, a.market_id()).await;
    let first = ticker.next_event().await;
    let data = first.json();
    assert_eq!(first.event.as_deref(), Some("ticker"));
    assert_eq!(first.id, Some(snapshot["seq"].to_string()));
    assert_eq!(data["seq"], snapshot["seq"]);
    assert_eq!(state_of_tick(&data), state_of(&a.detail().await));
    assert_eq!((data["trades"].clone(), data["trades_omitted"].clone()), (json!([]), json!(0)));

    // 30 trades as fast as they go: more than 10 may fall between two ticks.
    let trades = 30;
    let receiving = tokio::spawn(async move {
        let mut ticks = Vec::new();
        loop {
            let frame = ticker.next_event().await;
            let tick = frame.json();
            assert_eq!(frame.id, Some(tick["seq"].to_string()));
            let listed = tick["trades"].as_array().unwrap().len() as u64 + tick["trades_omitted"].as_u64().unwrap();
            ticks.push((Instant::now(), tick));
            let total: u64 = ticks.iter().map(|(_, t)| t["trades"].as_array().unwrap().len() as u64 + t["trades_omitted"].as_u64().unwrap()).sum();
            assert!(listed > 0, "a tick without a change: {:?}", ticks.last());
            if total >= trades {
                return (ticks, ticker);
            }
        }
    });
    for i in 0..trades {
        let r = a.bet(&a.traders[(i % 2) as usize], (i % 2) as usize, ONE + i as u128).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    }
    let (ticks, mut ticker) = receiving.await.unwrap();
    let total: u64 = ticks.iter().map(|(_, t)| t["trades"].as_array().unwrap().len() as u64 + t["trades_omitted"].as_u64().unwrap()).sum();
    assert_eq!(total, trades);
    // Spacing: at least the interval between ticks, less what the network may bunch.
    for pair in ticks.windows(2) {
        let gap = pair[1].0 - pair[0].0;
        assert!(gap >= Duration::from_millis(200), "ticks {gap:?} apart");
    }
    // The listed trades are the newest of their tick's, in apply order.
    let records = trades_in_order(&a.f.app, a.market_id()).await;
    let mut seen = 0usize;
    for (_, tick) in &ticks {
        seen += tick["trades_omitted"].as_u64().unwrap() as usize;
        for t in tick["trades"].as_array().unwrap() {
            let r = &records[seen];
            let expected = json!({ "id": r["id"], "outcome_id": r["outcome_id"], "transaction_type": r["transaction_type"], "amount": r["amount"], "shares": r["shares"], "price": r["price"], "wallet_address": r["wallet_address"], "created_at": r["created_at"] });
            assert_eq!(t, &expected);
            seen += 1;
        }
        assert!(tick["trades"].as_array().unwrap().len() <= 10);
    }
    // The last tick is the final state, and nothing follows without a change.
    let last = &ticks.last().unwrap().1;
    assert_eq!(state_of_tick(last), state_of(&a.detail().await));
    assert_eq!(last["seq"], snapshot["seq"].as_u64().unwrap() + trades);
    ticker.assert_quiet(Duration::from_millis(700)).await;
}

#[tokio::test]
async fn the_websocket_ticker_channel_sends_the_same_ticks() {
    let a = Arena::new(1, 1_000 * ONE).await;
    let mut ws = ws_connect(&a.f.app.base).await;
    let market_id = a.market_id().to_string();
    ws_send(&mut ws, json!({ "op": "subscribe", "market_id": market_id, "channel": "ticker" })).await;
    assert_eq!(ws_next(&mut ws).await, json!({ "type": "subscribed", "market_id": market_id, "channel": "ticker" }));
    let first = ws_next(&mut ws).await;
    assert_eq!(first["type"], "ticker");
    assert_eq!(state_of_tick(&first), state_of(&a.detail().await));
    let r = a.bet(&a.traders[0], 1, 3 * ONE).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let tick = ws_next(&mut ws).await;
    assert_eq!(tick["type"], "ticker");
    assert_eq!(state_of_tick(&tick), state_of(&a.detail().await));
    assert_eq!(tick["seq"], first["seq"].as_u64().unwrap() + 1);
    assert_eq!((tick["trades"].as_array().unwrap().len(), tick["trades_omitted"].as_u64()), (1, Some(0)));
    assert_eq!(tick["trades"][0]["id"], trades_in_order(&a.f.app, &market_id).await[0]["id"]);
    ws_send(&mut ws, json!({ "op": "unsubscribe", "market_id": market_id, "channel": "ticker" })).await;
    assert_eq!(ws_next(&mut ws).await, json!({ "type": "unsubscribed", "market_id": market_id, "channel": "ticker" }));
    assert_eq!(a.bet(&a.traders[0], 0, ONE).await.status, StatusCode::OK);
    ws_quiet(&mut ws, Duration::from_millis(600)).await;
    assert_problem(&a.f.app.get("/v1/markets/nope/ticker", None).await, 404, "not_found");
}
