//! Streams of a real `hanson serve`: pings, stream limits, shutdown; and the documents that
//! describe the streams.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{json, Value};
use tokio::time::{timeout, Instant};

use super::support::*;
use super::*;

#[tokio::test]
async fn streams_get_pings_at_the_configured_interval() {
    let f = Fixture::new().await;
    let market = f.market(2).await;
    let t = f.trader(ONE_TOKEN).await;
    let serve = ServeProcess::start_flags(&f.app.database_url, &["--stream-ping-secs", "1"]).await;
    let client = reqwest::Client::new();
    let mut sse = Sse::market(&client, &serve.base, &id_of(&market), "", &[]).await;
    expect_snapshot(&mut sse, 1, &market).await;
    let mut user = Sse::user(&client, &serve.base, &t.session.access_token).await;
    assert_eq!(user.next_event().await.event.as_deref(), Some("snapshot"));
    // Connected now, so that its pings are waiting once the SSE ones have been read.
    let mut ws = ws_connect(&serve.base).await;
    for stream in [&mut sse, &mut user] {
        for _ in 0..2 {
            let started = Instant::now();
            let frame = stream.next_frame(Duration::from_millis(2500)).await.expect("open");
            assert!(frame.is_comment(), "only pings on an idle stream: {frame:?}");
            assert_eq!(frame.comments, ["ping"]);
            // Every second, give or take a loaded test machine.
            assert!(started.elapsed() <= Duration::from_millis(2000), "a ping after {:?}", started.elapsed());
        }
    }
    for _ in 0..2 {
        assert_eq!(ws_next_raw(&mut ws, Duration::from_millis(2500)).await, json!({ "type": "ping" }));
    }
}

#[tokio::test]
async fn streams_beyond_the_limits_get_429() {
    let f = Fixture::new().await;
    let market = f.market(2).await;
    let id = id_of(&market);
    let client = reqwest::Client::new();
    let refused = |base: String| {
        let (client, id) = (client.clone(), id.clone());
        async move {
            let r = client.get(format!("{base}/v1/markets/{id}/events")).send().await.unwrap();
            assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
            assert_eq!(r.headers().get("content-type").and_then(|v| v.to_str().ok()), Some("application/problem+json"));
            let retry: u64 = r.headers().get("retry-after").expect("Retry-After").to_str().unwrap().parse().expect("Retry-After in seconds");
            assert!(retry >= 1, "Retry-After {retry}");
            let body: Value = r.json().await.unwrap();
            assert_eq!(body["status"], 429, "{body}");
            assert_eq!(body["code"], "rate_limited", "{body}");
        }
    };
    for flags in [["--max-streams-per-ip", "2"], ["--max-streams", "2"]] {
        let serve = ServeProcess::start_flags(&f.app.database_url, &[flags[0], flags[1], "--stream-ping-secs", "1"]).await;
        let mut first = Sse::market(&client, &serve.base, &id, "", &[]).await;
        expect_snapshot(&mut first, 1, &market).await;
        // A WebSocket counts as a stream too.
        let mut ws = ws_connect(&serve.base).await;
        ws_subscribe(&mut ws, json!({ "op": "subscribe", "market_id": id }), &[json!({ "type": "snapshot", "market_id": id, "seq": 1, "market": market })]).await;
        refused(serve.base.clone()).await;
        assert_eq!(ws_refused(&serve.base).await, 429, "{flags:?}: a WebSocket beyond the limit");
        // Other requests are not limited.
        assert_eq!(client.get(format!("{}/v1/markets/{id}", serve.base)).send().await.unwrap().status(), StatusCode::OK);
        // Once a stream closes, its slot is free again.
        drop(first);
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let r = client.get(format!("{}/v1/markets/{id}/events", serve.base)).send().await.unwrap();
            if r.status() == StatusCode::OK {
                break;
            }
            assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
            assert!(Instant::now() < deadline, "{flags:?}: the slot of a closed stream was not freed within 5 s");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_ends_every_stream_cleanly_and_the_server_exits() {
    let f = Fixture::new().await;
    let market = f.market(2).await;
    let id = id_of(&market);
    let t = f.trader(10 * ONE_TOKEN).await;
    let mut serve = ServeProcess::start_flags(&f.app.database_url, &[]).await;
    let client = reqwest::Client::new();
    let mut sse = Sse::market(&client, &serve.base, &id, "", &[]).await;
    expect_snapshot(&mut sse, 1, &market).await;
    let mut user = Sse::user(&client, &serve.base, &t.session.access_token).await;
    assert_eq!(user.next_event().await.event.as_deref(), Some("snapshot"));
    let mut ws = ws_connect(&serve.base).await;
    ws_subscribe(&mut ws, json!({ "op": "subscribe", "market_id": id }), &[json!({ "type": "snapshot", "market_id": id, "seq": 1, "market": market })]).await;

    // A trade through this server reaches all three first.
    let r = client
        .post(format!("{}/v1/markets/{id}/bet", serve.base))
        .bearer_auth(&t.session.access_token)
        .json(&json!({ "session_id": t.session.session_id, "outcome_id": outcome(&market, 0), "amount": ONE_TOKEN.to_string() }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let envelope = market_event(&sse.next_event().await, "trade.created", &id, 2);
    assert_eq!(ws_next(&mut ws).await, envelope);
    user_events(&mut user, 3).await;

    serve.terminate();
    sse.expect_end(Duration::from_secs(5)).await;
    user.expect_end(Duration::from_secs(5)).await;
    let closed = ws_expect_close(&mut ws, Duration::from_secs(5)).await;
    let frame = closed.expect("the close frame carries a code");
    assert_eq!((u16::from(frame.code), frame.reason.as_str()), (1001, "server shutting down"));
    let status = serve.exited_within(Duration::from_secs(10)).await;
    assert!(status.success(), "hanson serve exited with {status:?}");
}

#[tokio::test]
async fn a_stream_opened_once_shutdown_has_begun_ends_at_once() {
    let app = TestApp::spawn().await;
    let (_hub, mut before, mut after) = library::closed_hub(&app.database_url);
    for closing in [&mut before, &mut after] {
        timeout(Duration::from_secs(1), closing.changed()).await.expect("sees the shutdown at once").expect("the hub is alive");
        assert!(*closing.borrow());
    }
}

#[tokio::test]
async fn the_streams_are_documented() {
    let app = TestApp::spawn().await;
    let r = app.get("/v1/asyncapi.json", None).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.headers.get("content-type").and_then(|v| v.to_str().ok()), Some("application/json"));
    let doc = &r.body;
    assert!(doc["asyncapi"].as_str().is_some_and(|v| v.starts_with("3.0")), "{}", doc["asyncapi"]);
    assert!(doc["channels"].as_object().is_some_and(|c| !c.is_empty()));
    let text = doc.to_string();
    for name in [
        "/v1/markets/{market_id}/events",
        "/v1/auth/events",
        "/v1/ws",
        "snapshot",
        "market.created",
        "market.updated",
        "outcome.created",
        "outcome.updated",
        "trade.created",
        "market.closed",
        "market.resolved",
        "market.cancelled",
        "market.finalized",
        "claim.completed",
        "balance.updated",
        "position.updated",
        "subscribed",
        "unsubscribed",
        "bad_message",
    ] {
        assert!(text.contains(name), "the AsyncAPI document does not mention {name}");
    }
    let openapi = app.get("/v1/openapi.json", None).await.body;
    for path in ["/v1/markets/{market_id}/events", "/v1/auth/events"] {
        let content = &openapi["paths"][path]["get"]["responses"]["200"]["content"];
        assert!(content.get("text/event-stream").is_some(), "{path} is not documented as an event stream: {content}");
    }

    // Every event the stream clients and the webhook receiver get is held against this
    // document (`contract::asyncapi`): the check passes a real event, and rejects it spoiled
    // in each way the schemas can tell, under a name its stream does not carry, under another
    // type's name, or on a stream that does not carry it.
    use crate::contract::asyncapi::Stream;
    let f = Fixture::new().await;
    let market = f.market(2).await;
    let mut log = Sse::market(&f.app.client, &f.app.base, &id_of(&market), "?after_seq=0", &[]).await;
    let created = log.next_event().await.json();
    let contract = contract::asyncapi::get();
    contract.check(Stream::Market, "market.created", &created);
    let rejects = |stream: Stream, name: &str, event: &Value| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| contract.check(stream, name, event))).is_err()
    };
    let mut spoiled = Vec::new();
    for (pointer, bad) in [
        ("/id", json!("not-a-uuid")),
        ("/seq", json!(0)),
        ("/timestamp", json!("yesterday")),
        ("/market_id", Value::Null),
        ("/data/total_pool", json!("1.5")),
        ("/data/status", json!("open")),
    ] {
        let mut event = created.clone();
        *event.pointer_mut(pointer).unwrap() = bad;
        spoiled.push(event);
    }
    let mut missing = created.clone();
    missing.as_object_mut().unwrap().remove("data");
    spoiled.push(missing);
    for event in &spoiled {
        assert!(rejects(Stream::Market, "market.created", event), "a spoiled event passed: {event}");
        assert!(contract.webhook_errors(event).is_err(), "a spoiled webhook body passed: {event}");
    }
    assert!(rejects(Stream::Market, "market.exploded", &created), "an event of no documented name passed");
    assert!(rejects(Stream::Market, "market.updated", &created), "an event under another type's name passed");
    assert!(rejects(Stream::User, "market.created", &created), "a market event passed on the user stream");
    assert_eq!(contract.webhook_errors(&created), Ok(()));
}
