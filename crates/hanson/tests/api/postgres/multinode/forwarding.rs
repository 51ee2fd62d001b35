//! Trade forwarding (the default): a follower sends its trades to the leader, closes idle
//! connections to it in time, and leads when the leader dies; only the leader's own key
//! lifts the rate limits.

use reqwest::StatusCode;
use serde_json::Value;

use super::*;

/// With forwarding (the default), the first node takes the trade lead and the second sends it
/// its bets and sells: each is answered as the leader answered it (request id and idempotency
/// key included), runs on the leader alone, and is recorded exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_follower_forwards_its_trades_to_the_leader_exactly_once() {
    let nodes = TwoNodes::start(8).await;
    let opening = nodes.until_forwarding().await;
    let TwoNodes { f, client, leader, follower, market, traders } = nodes;
    let market_id = market["id"].as_str().unwrap().to_string();
    let bet_url = |base: &str| format!("{base}/v1/markets/{market_id}/bet");

    // Answered as the leader answers: the client's request id, and its idempotency key kept
    // by the leader (the same key straight to the leader replays the forwarded bet).
    let t = &traders[1];
    let keyed = |base: &str| {
        client.post(bet_url(base)).bearer_auth(&t.session.access_token).header("Idempotency-Key", "forwarded-once").json(&bet_body(
            &t.session,
            &market,
            1,
            2 * ONE_TOKEN,
        ))
    };
    let through_follower = keyed(&follower.base).header("x-request-id", "forwarded-request-1").send().await.unwrap();
    assert_eq!(through_follower.status(), StatusCode::OK);
    assert_eq!(through_follower.headers()["x-request-id"], "forwarded-request-1");
    let first: Value = through_follower.json().await.unwrap();
    let mut acknowledged_extra = Vec::new();
    let again: Value = keyed(&leader.base).send().await.unwrap().json().await.unwrap();
    assert_eq!(again["bet_id"], first["bet_id"], "{again}");
    assert_eq!(again["balance_after"], first["balance_after"], "{again}");

    // A request already carrying a key (here a wrong one) is not sent on again: it runs where
    // it arrived, so a URL leading back to a follower cannot make a loop.
    let before = committed_trades(&metrics_of(&client, &follower.base).await);
    let (status, body) = {
        let r = client
            .post(bet_url(&follower.base))
            .bearer_auth(&t.session.access_token)
            .header("hanson-forward-key", "0".repeat(64))
            .json(&bet_body(&t.session, &market, 0, ONE_TOKEN))
            .send()
            .await
            .unwrap();
        (r.status(), r.json::<Value>().await.unwrap())
    };
    assert_eq!(status, StatusCode::OK, "{body}");
    acknowledged_extra.push(body["bet_id"].as_str().unwrap().to_string());
    assert_eq!(committed_trades(&metrics_of(&client, &follower.base).await), before + 1.0);

    let follower_committed = committed_trades(&metrics_of(&client, &follower.base).await);
    let forwarded_before = forwarded(&client, &follower.base).await;
    let mut tasks = tokio::task::JoinSet::new();
    for n in 0..80usize {
        let (t, client, market) = (traders[n % 8].clone(), client.clone(), market.clone());
        let base = if n % 4 == 0 { leader.base.clone() } else { follower.base.clone() };
        tasks.spawn(async move {
            let url = format!("{base}/v1/markets/{}/bet", market["id"].as_str().unwrap());
            post(&client, url, &t.session.access_token, bet_body(&t.session, &market, n % 2, ONE_TOKEN / 8 + n as u128 * 1_000_003)).await
        });
    }
    let mut acknowledged = vec![first["bet_id"].as_str().unwrap().to_string()];
    acknowledged.append(&mut acknowledged_extra);
    while let Some(joined) = tasks.join_next().await {
        let (status, body) = joined.unwrap();
        assert_eq!(status, StatusCode::OK, "{body}");
        acknowledged.push(body["bet_id"].as_str().unwrap().to_string());
    }
    // The 60 through the follower ran on the leader.
    let text = metrics_of(&client, &follower.base).await;
    assert_eq!(sample(&text, "hanson_trades_forwarded_total", r#"outcome="forwarded""#), Some(forwarded_before + 60.0), "{text}");
    assert_eq!(committed_trades(&text), follower_committed, "{text}");
    assert!(text.lines().any(|line| line == "hanson_trade_leader 0"), "{text}");

    assert_eq!(recorded_once(&f, &market_id, &acknowledged).await, opening + 2 + 80);
}

/// A follower closes a kept-alive connection to the leader once it has gone unused for half a
/// second, long before the leader's idle timeout (60 s here, 1 s at the least) would close it:
/// no trade is sent on a connection the leader is closing, to be lost unread and answered 503.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_follower_closes_its_idle_connections_to_the_leader_before_the_leader_would() {
    let nodes = TwoNodes::start(1).await;
    nodes.until_forwarding().await;
    let TwoNodes { client, leader, follower, market, traders, .. } = &nodes;
    let t = &traders[0];
    let bet = || {
        post(
            client,
            format!("{}/v1/markets/{}/bet", follower.base, market["id"].as_str().unwrap()),
            &t.session.access_token,
            bet_body(&t.session, market, 0, ONE_TOKEN / 8),
        )
    };

    // A trade every 100 ms keeps a connection open.
    let before = forwarded(client, &follower.base).await;
    let mut held = Vec::new();
    for _ in 0..10 {
        assert_eq!(bet().await.0, StatusCode::OK);
        held.push(connections_to(follower, &leader.base));
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(forwarded(client, &follower.base).await, before + 10.0);
    assert!(held.iter().all(|&n| n >= 1), "{held:?}");

    // Unused, it is closed by the follower: the leader would wait 60 s.
    let quiet = std::time::Instant::now();
    while connections_to(follower, &leader.base) > 0 {
        assert!(quiet.elapsed() < std::time::Duration::from_secs(5), "the follower kept an idle connection to the leader");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// The leader takes a forwarded request's client address, and skips the rate limits the
/// forwarding node applied, only with its own key: a client sending the headers itself is
/// limited as any other.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn only_the_leaders_own_key_lifts_the_rate_limits() {
    let f = Fixture::new_with(Settings { forward_trades: false, ..Settings::default() }).await;
    let client = reqwest::Client::new();
    let leader = node(&f.app.database_url, &["--rate-per-ip", "0.01", "--burst-per-ip", "2"]).await;
    // Waited for in the database, not through /metrics: the node's own limits allow two
    // requests, and a slow start would spend them on polling.
    let observer = library::Db::open(&f.app.database_url);
    let mut stored = Value::Null;
    for _ in 0..100 {
        let row = observer.text("SELECT COALESCE((SELECT value FROM settings WHERE name = 'trade_leader'), '{}')", &[]).await;
        stored = serde_json::from_str(&row).unwrap();
        if stored["url"] == leader.base.as_str() {
            // The node writes its row, then reports the lead to its router.
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(stored["url"], leader.base.as_str());
    let key = stored["key"].as_str().unwrap().to_string();
    assert_eq!(key.len(), 64);

    let status_with = |key: String| {
        let request =
            client.get(format!("{}/healthz", leader.base)).header("hanson-forward-key", key).header("hanson-client-ip", "203.0.113.9");
        async move { request.send().await.unwrap().status() }
    };
    // A burst of 2 (of which the waiting for the lead took some): a forged key earns nothing.
    let forged = "0".repeat(64);
    let mut statuses = Vec::new();
    for _ in 0..3 {
        statuses.push(status_with(forged.clone()).await);
    }
    assert_eq!(statuses.last(), Some(&StatusCode::TOO_MANY_REQUESTS), "{statuses:?}");
    // The leader's key: the forwarding node limited the client already.
    for _ in 0..5 {
        assert_eq!(status_with(key.clone()).await, StatusCode::OK);
    }
    assert_eq!(client.get(format!("{}/healthz", leader.base)).send().await.unwrap().status(), StatusCode::TOO_MANY_REQUESTS);
}

/// The leader is killed (SIGKILL) while a follower forwards it trades: every trade the
/// follower acknowledged is recorded exactly once, the others fail with 503 (their outcome
/// unknown to the follower), never 500, the follower takes the lead, and the books balance.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn when_the_leader_dies_a_follower_leads_and_no_acknowledged_trade_is_lost() {
    let TwoNodes { f, client, leader, follower, market, traders } = TwoNodes::start(8).await;
    let market_id = market["id"].as_str().unwrap().to_string();

    let mut tasks = tokio::task::JoinSet::new();
    for (w, t) in traders.iter().enumerate() {
        let (t, client, market, base) = (t.clone(), client.clone(), market.clone(), follower.base.clone());
        tasks.spawn(async move {
            let mut answers = Vec::new();
            for n in 0..40u128 {
                let url = format!("{base}/v1/markets/{}/bet", market["id"].as_str().unwrap());
                answers.push(post(&client, url, &t.session.access_token, bet_body(&t.session, &market, w % 2, ONE_TOKEN / 4 + n)).await);
                tokio::time::sleep(std::time::Duration::from_millis(15)).await;
            }
            answers
        });
    }
    // Each wallet's 40 bets take over 600 ms. The follower is frozen across the kill, so
    // that the connections it holds to the leader are counted with none opened after.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    follower.signal(libc::SIGSTOP);
    let held = connections_to(&follower, &leader.base);
    leader.crash();
    follower.signal(libc::SIGCONT);
    let killed_at = std::time::Instant::now();

    let mut acknowledged = Vec::new();
    let mut failed = 0;
    while let Some(joined) = tasks.join_next().await {
        for (status, body) in joined.unwrap() {
            match status {
                StatusCode::OK => acknowledged.push(body["bet_id"].as_str().unwrap().to_string()),
                StatusCode::SERVICE_UNAVAILABLE => {
                    assert_eq!(body["code"], "outcome_unknown", "{body}");
                    failed += 1;
                }
                other => panic!("{other}: {body}"),
            }
        }
    }
    // A trade can fail only on a connection to the dead leader (a new one is refused and the
    // trade runs here), and a connection carries one request at a time and is dropped when
    // it fails: those in flight at the kill, and those sent on a kept-alive connection before
    // the follower read that it had closed.
    assert!(held >= 1 && failed <= held, "{failed} failed, {held} connections to the leader at the kill");
    until_leading(&client, &follower.base).await;
    // The kill fell among the trades: some reached no leader, or got no answer.
    let text = metrics_of(&client, &follower.base).await;
    let after_kill = ["run_here", "failed"]
        .iter()
        .filter_map(|o| sample(&text, "hanson_trades_forwarded_total", &format!(r#"outcome="{o}""#)))
        .sum::<f64>();
    assert!(after_kill >= 1.0, "{text}");
    assert_eq!(sample(&text, "hanson_trades_forwarded_total", r#"outcome="failed""#).unwrap_or(0.0), failed as f64);
    assert!(killed_at.elapsed() < std::time::Duration::from_secs(10));
    let (status, body) = post(
        &client,
        format!("{}/v1/markets/{market_id}/bet", follower.base),
        &traders[0].session.access_token,
        bet_body(&traders[0].session, &market, 0, ONE_TOKEN),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    acknowledged.push(body["bet_id"].as_str().unwrap().to_string());

    let recorded = recorded_once(&f, &market_id, &acknowledged).await;
    assert!(recorded <= acknowledged.len() + failed, "{recorded} recorded");
}
