//! Resuming a market stream: `Last-Event-ID` and `after_seq` replay exactly the missed events,
//! a snapshot where they are gone (retention), and a subscriber too far behind is cut off
//! and resumes where it stopped, on SSE and on the WebSocket.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::json;
use tokio::net::TcpStream;
use tokio::time::timeout;

use super::support::*;
use super::*;

#[tokio::test]
async fn resume_replays_exactly_the_missed_events() {
    let f = Fixture::new().await;
    let market = f.market(2).await;
    let id = id_of(&market);
    let t = f.trader(100 * ONE_TOKEN).await;
    let client = &f.app.client;
    let base = f.app.base.as_str();

    let mut live = Sse::market(client, base, &id, "", &[]).await;
    expect_snapshot(&mut live, 1, &market).await;
    for k in 0..3u128 {
        bet_ok(&f.app, &market, (k % 2) as usize, &t, ONE_TOKEN + k).await;
    }
    let mut seen = Vec::new();
    for seq in 2..=4 {
        seen.push(market_event(&live.next_event().await, "trade.created", &id, seq));
    }
    drop(live);
    for k in 3..6u128 {
        bet_ok(&f.app, &market, (k % 2) as usize, &t, ONE_TOKEN + k).await;
    }

    // The whole log, for reference: a replay sends the very envelopes that went out live.
    let mut all = Sse::market(client, base, &id, "?after_seq=0", &[]).await;
    let mut log = vec![market_event(&all.next_event().await, "market.created", &id, 1)];
    assert_eq!(log[0]["data"], market);
    for seq in 2..=7 {
        log.push(market_event(&all.next_event().await, "trade.created", &id, seq));
    }
    all.assert_quiet(Duration::from_millis(300)).await;
    assert_eq!(&log[1..4], &seen[..]);

    // Last-Event-ID and after_seq: exactly the events after it, in order, no snapshot, then live.
    let mut by_header = Sse::market(client, base, &id, "", &[("Last-Event-ID", "4")]).await;
    let mut by_query = Sse::market(client, base, &id, "?after_seq=4", &[]).await;
    // Both sent: the header wins.
    let mut both = Sse::market(client, base, &id, "?after_seq=6", &[("Last-Event-ID", "4")]).await;
    for sse in [&mut by_header, &mut by_query, &mut both] {
        for seq in 5..=7u64 {
            let frame = sse.next_event().await;
            market_event(&frame, "trade.created", &id, seq);
            assert_eq!(frame.json(), log[seq as usize - 1]);
        }
        sse.assert_quiet(Duration::from_millis(200)).await;
    }
    let bet = bet_ok(&f.app, &market, 0, &t, 2 * ONE_TOKEN).await;
    let mut eighth = Vec::new();
    for sse in [&mut by_header, &mut by_query, &mut all] {
        let e = market_event(&sse.next_event().await, "trade.created", &id, 8);
        assert_eq!(e["data"]["trade"]["id"], bet["bet_id"]);
        eighth.push(e);
    }
    assert!(eighth.iter().all(|e| *e == eighth[0]), "every subscriber gets the same envelope");

    // Resuming at the current seq: nothing to replay, no snapshot, then live.
    let mut current = Sse::market(client, base, &id, "?after_seq=8", &[]).await;
    current.assert_quiet(Duration::from_millis(300)).await;
    // Beyond the current seq: a snapshot of now instead.
    let d = detail(&f.app, &id).await;
    let mut beyond = Sse::market(client, base, &id, "?after_seq=9", &[]).await;
    expect_snapshot(&mut beyond, 8, &d).await;
    let mut far = Sse::market(client, base, &id, "", &[("Last-Event-ID", "1000000")]).await;
    expect_snapshot(&mut far, 8, &d).await;
    let bet = bet_ok(&f.app, &market, 1, &t, ONE_TOKEN).await;
    for sse in [&mut current, &mut beyond, &mut far] {
        let e = market_event(&sse.next_event().await, "trade.created", &id, 9);
        assert_eq!(e["data"]["trade"]["id"], bet["bet_id"]);
    }

    // The log pruned down to the last 3 events (seqs 7 to 9): a resume point whose
    // successors are gone gets a snapshot; one whose successors are all kept, a replay.
    let pruned = library::Db::open(&f.app.database_url).prune_events(3).await;
    assert!(pruned >= 6, "seqs 1 to 6 and the wallet events are pruned: {pruned}");
    let d = detail(&f.app, &id).await;
    for resume in ["0", "2", "5"] {
        let mut gone = Sse::market(client, base, &id, "", &[("Last-Event-ID", resume)]).await;
        expect_snapshot(&mut gone, 9, &d).await;
    }
    let mut kept = Sse::market(client, base, &id, "?after_seq=6", &[]).await;
    for seq in 7..=9u64 {
        market_event(&kept.next_event().await, "trade.created", &id, seq);
    }
    kept.assert_quiet(Duration::from_millis(200)).await;

    // Resume points that are not non-negative integers, and unknown markets.
    for bad in ["-1", "abc", "1.5", "0x10", "1e3"] {
        let r = f.app.get(&format!("/v1/markets/{id}/events?after_seq={bad}"), None).await;
        assert_field_error(&r, "after_seq");
        let r = get_with(&f.app, &format!("/v1/markets/{id}/events"), &[("Last-Event-ID", bad)]).await;
        assert_field_error(&r, "Last-Event-ID");
    }
    assert_problem(&f.app.get(&format!("/v1/markets/{}/events", uuid()), None).await, 404, "not_found");
    assert_problem(&f.app.get("/v1/markets/not-a-market/events", None).await, 404, "not_found");
    assert_problem(&get_with(&f.app, &format!("/v1/markets/{}/events", uuid()), &[("Last-Event-ID", "3")]).await, 404, "not_found");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscriber_too_far_behind_is_disconnected_and_resumes_where_it_stopped() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    // Each update's event carries 60 KB of metadata: together far more than what is on its
    // way to one connection (the kernel's few MB, and a WebSocket's queue of 256 messages),
    // so the subscribers fall behind.
    const UPDATES: u64 = 420;
    let f = Fixture::new().await;
    let market = f.market(2).await;
    let id = id_of(&market);
    let serve = ServeProcess::start_flags(&f.app.database_url, &["--stream-lag-limit", "10"]).await;

    // An SSE subscriber that stops reading after its snapshot.
    let address = serve.base.strip_prefix("http://").unwrap();
    let mut tcp = TcpStream::connect(address).await.unwrap();
    tcp.write_all(format!("GET /v1/markets/{id}/events HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n").as_bytes()).await.unwrap();
    let mut received = Vec::new();
    timeout(EVENT_WAIT, async {
        while !String::from_utf8_lossy(&received).contains("event: snapshot") {
            let mut buf = [0u8; 4096];
            let n = tcp.read(&mut buf).await.unwrap();
            assert!(n > 0, "the stream ended before its snapshot");
            received.extend_from_slice(&buf[..n]);
        }
    })
    .await
    .expect("a snapshot");
    // And a WebSocket subscription that stops reading after its snapshot.
    let mut ws = ws_connect(&serve.base).await;
    ws_send(&mut ws, json!({ "op": "subscribe", "market_id": id })).await;
    assert_eq!(ws_next(&mut ws).await["type"], "subscribed");
    assert_eq!(ws_next(&mut ws).await["type"], "snapshot");

    // Writes go on while they do not read: they are never waited for.
    let client = reqwest::Client::new();
    let padding = "x".repeat(60_000);
    for n in 0..UPDATES {
        let body = json!({ "metadata": { "note": padding, "n": n } });
        let r = client.put(format!("{}/v1/providers/markets/{id}", serve.base)).bearer_auth(&f.provider.key).json(&body).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::OK);
    }
    let last_seq = UPDATES + 1;

    // Reading again, it gets what was already on its way; then the server ends the stream.
    let ended = timeout(Duration::from_secs(30), tcp.read_to_end(&mut received)).await;
    let text = String::from_utf8_lossy(&received);
    let seqs: Vec<u64> = text.lines().filter_map(|l| l.strip_prefix("id: ")).map(|v| v.trim().parse().unwrap()).collect();
    assert!(matches!(ended, Ok(Ok(_))), "the server did not end the stream: {ended:?}; it got through {:?} of {last_seq}", seqs.last());
    assert_eq!(seqs.first(), Some(&1), "the snapshot's id first");
    assert!(seqs.windows(2).all(|w| w[1] == w[0] + 1), "what it got has no gap: {seqs:?}");
    let got = *seqs.last().unwrap();
    assert!(got + 10 < last_seq, "ended more than 10 events behind: it got through {got} of {last_seq}");

    // It resumes with Last-Event-ID and gets exactly the events it missed.
    let mut resumed = Sse::market(&client, &serve.base, &id, "", &[("last-event-id", &got.to_string())]).await;
    for seq in got + 1..=last_seq {
        let e = market_event(&resumed.next_event().await, "market.updated", &id, seq);
        assert_eq!(e["data"]["metadata"]["n"], seq - 2);
    }
    resumed.assert_quiet(Duration::from_millis(300)).await;

    // The WebSocket subscription ends with `lagged` after what was on its way; the connection
    // stays, and subscribing again with after_seq replays exactly what it missed.
    let mut got = 1;
    let lagged = loop {
        let message = ws_next(&mut ws).await;
        if message["type"] == "error" {
            break message;
        }
        check_envelope(&message, "market.updated", Some(&id), Some(got + 1));
        got += 1;
    };
    assert_eq!((lagged["code"].as_str(), lagged["market_id"].as_str()), (Some("lagged"), Some(id.as_str())), "{lagged}");
    assert!(got + 10 < last_seq, "ended more than 10 events behind: it got through {got} of {last_seq}");
    ws_send(&mut ws, json!({ "op": "subscribe", "market_id": id, "after_seq": got })).await;
    assert_eq!(ws_next(&mut ws).await, json!({ "type": "subscribed", "market_id": id }));
    for seq in got + 1..=last_seq {
        check_envelope(&ws_next(&mut ws).await, "market.updated", Some(&id), Some(seq));
    }
    ws_quiet(&mut ws, Duration::from_millis(300)).await;
}
