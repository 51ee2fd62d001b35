//! Provider webhooks against a real receiver over real HTTP: endpoint management and tenancy,
//! Standard Webhooks signatures (checked by the reference library), subscribed types only,
//! the retry schedule, Retry-After, 410, manual retry, test events, secret rotation, and no
//! event lost across a kill -9.

use std::time::{Duration, Instant};

use axum::http::HeaderMap;
use reqwest::StatusCode;
use serde_json::{json, Value};

use super::support::*;

/// The reference library's verdict on a received request.
fn verifies(secret: &str, r: &Received) -> bool {
    let mut headers = HeaderMap::new();
    for name in ["webhook-id", "webhook-timestamp", "webhook-signature"] {
        headers.insert(name, r.header(name).parse().unwrap());
    }
    standardwebhooks::Webhook::new(secret).unwrap().verify(&r.body, &headers).is_ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn endpoints_are_managed_by_their_own_provider_only() {
    let f = Fixture::new_with(webhook_settings("1s")).await;
    let key = f.provider.key.clone();
    let created = create_endpoint(&f.app, &key, "http://127.0.0.1:9/hook", &["trade.created", "market.resolved", "trade.created"]).await;
    let secret = created["secret"].as_str().unwrap();
    let raw = secret.strip_prefix("whsec_").expect("whsec_ prefix");
    assert_eq!(base64_len(raw), 32, "{secret}");
    assert_eq!(created["event_types"], json!(["market.resolved", "trade.created"]));
    assert_eq!(created["enabled"], true);
    assert_eq!(created["description"], Value::Null);
    let id = created["id"].as_str().unwrap();

    let got = f.app.get(&format!("/v1/providers/webhooks/{id}"), Some(&key)).await;
    assert_eq!(got.status, StatusCode::OK);
    assert!(got.body.get("secret").is_none(), "the secret is shown only on creation: {}", got.body);
    assert_eq!(got.body["url"], "http://127.0.0.1:9/hook");

    let changed = f.app.put(&format!("/v1/providers/webhooks/{id}"), Some(&key), json!({ "description": "books", "enabled": false })).await;
    assert_eq!(changed.status, StatusCode::OK, "{}", changed.body);
    assert_eq!(changed.body["description"], "books");
    assert_eq!(changed.body["enabled"], false);
    assert_eq!(changed.body["url"], "http://127.0.0.1:9/hook");
    assert_eq!(changed.body["event_types"], json!(["market.resolved", "trade.created"]));

    create_endpoint(&f.app, &key, "http://127.0.0.1:9/second", &["*"]).await;
    let list = f.app.get("/v1/providers/webhooks?page=1&per_page=1", Some(&key)).await;
    assert_eq!(list.status, StatusCode::OK);
    assert_eq!(list.body["pagination"], json!({ "page": 1, "per_page": 1, "total": 2, "total_pages": 2 }));
    assert_eq!(list.body["data"][0]["id"], id);
    assert_problem(&f.app.get("/v1/providers/webhooks?per_page=101", Some(&key)).await, 422, "validation_failed");

    // Another provider sees none of it.
    let other = f.app.create_provider("Other");
    let theirs = f.app.get("/v1/providers/webhooks", Some(&other.key)).await;
    assert_eq!(theirs.body["pagination"]["total"], 0);
    for r in [
        f.app.get(&format!("/v1/providers/webhooks/{id}"), Some(&other.key)).await,
        f.app.put(&format!("/v1/providers/webhooks/{id}"), Some(&other.key), json!({ "enabled": true })).await,
        f.app.request(reqwest::Method::DELETE, &format!("/v1/providers/webhooks/{id}"), Some(&other.key), None).await,
        f.app.post(&format!("/v1/providers/webhooks/{id}/rotate-secret"), Some(&other.key), json!({})).await,
        f.app.post(&format!("/v1/providers/webhooks/{id}/test"), Some(&other.key), json!({})).await,
        f.app.get(&format!("/v1/providers/webhooks/{id}/deliveries"), Some(&other.key)).await,
    ] {
        assert_problem(&r, 404, "not_found");
    }
    assert_problem(&f.app.get("/v1/providers/webhooks", None).await, 401, "unauthenticated");

    // Bad input changes nothing.
    for (body, field) in [
        (json!({ "url": "ftp://example.com/x", "event_types": ["*"] }), "url"),
        (json!({ "url": "not a url", "event_types": ["*"] }), "url"),
        (json!({ "url": "https://example.com/x", "event_types": ["trade.made"] }), "event_types"),
        (json!({ "url": "https://example.com/x", "event_types": [] }), "event_types"),
    ] {
        assert_field_error(&f.app.post("/v1/providers/webhooks", Some(&key), body).await, field);
    }
    assert_field_error(&f.app.put(&format!("/v1/providers/webhooks/{id}"), Some(&key), json!({ "event_types": ["x"] })).await, "event_types");
    assert_eq!(f.app.get("/v1/providers/webhooks", Some(&key)).await.body["pagination"]["total"], 2);

    let deleted = f.app.request(reqwest::Method::DELETE, &format!("/v1/providers/webhooks/{id}"), Some(&key), None).await;
    assert_eq!(deleted.status, StatusCode::OK);
    assert!(deleted.body["message"].is_string());
    assert_problem(&f.app.get(&format!("/v1/providers/webhooks/{id}"), Some(&key)).await, 404, "not_found");
}

fn base64_len(text: &str) -> usize {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.decode(text).expect("base64").len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_allow_private_only_https_to_public_addresses_is_taken() {
    let f = Fixture::new().await;
    for url in ["http://example.com/hook", "https://127.0.0.1/hook", "https://10.1.2.3/hook", "https://[::1]/hook", "https://169.254.169.254/x"] {
        let r = f.app.post("/v1/providers/webhooks", Some(&f.provider.key), json!({ "url": url, "event_types": ["*"] })).await;
        assert_field_error(&r, "url");
    }
    let created = f.app.post("/v1/providers/webhooks", Some(&f.provider.key), json!({ "url": "https://1.1.1.1/hook", "event_types": ["*"] })).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deliveries_are_signed_and_go_only_to_the_owners_subscribed_endpoints() {
    let receiver = Receiver::start().await;
    let f = Fixture::new_with(webhook_settings("1s")).await;
    let key = f.provider.key.clone();
    let deposits = create_endpoint(&f.app, &key, &receiver.url("/deposits"), &["deposit.completed"]).await;
    let all = create_endpoint(&f.app, &key, &receiver.url("/all"), &["*"]).await;
    let other = f.app.create_provider("Other");
    f.app.fund_treasury(&other, &f.token_id, 1_000).await;
    let theirs = create_endpoint(&f.app, &other.key, &receiver.url("/theirs"), &["*"]).await;

    let market = f.market(2).await;
    let deposit = f.app.wallet_deposit(&f.provider, &f.token_id, "0x00000000000000000000000000000000000000d1", 12_345).await;

    let got = receiver.wait_for("/deposits", 1, Duration::from_secs(5)).await;
    let envelope = got[0].json();
    assert_eq!(envelope["type"], "deposit.completed");
    assert_eq!(envelope["market_id"], Value::Null);
    assert_eq!(envelope["seq"], Value::Null);
    assert_eq!(envelope["data"], deposit);
    assert_eq!(got[0].header("webhook-id"), envelope["id"].as_str().unwrap());
    assert_eq!(got[0].header("content-type"), "application/json");
    let sent_at: i64 = got[0].header("webhook-timestamp").parse().unwrap();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
    assert!((now - sent_at).abs() <= 5, "webhook-timestamp {sent_at} is the attempt's time ({now})");
    assert!(got[0].header("webhook-signature").starts_with("v1,"));
    assert!(verifies(deposits["secret"].as_str().unwrap(), &got[0]), "the reference library verifies the signature");
    assert!(!verifies(all["secret"].as_str().unwrap(), &got[0]), "another endpoint's secret does not");
    let mut tampered = got[0].clone();
    tampered.body[10] ^= 1;
    assert!(!verifies(deposits["secret"].as_str().unwrap(), &tampered), "one changed byte fails verification");

    let got = receiver.wait_for("/all", 2, Duration::from_secs(5)).await;
    let types: Vec<String> = got.iter().map(|r| r.json()["type"].as_str().unwrap().to_string()).collect();
    assert!(types.contains(&"market.created".to_string()) && types.contains(&"deposit.completed".to_string()), "{types:?}");
    let created = got.iter().find(|r| r.json()["type"] == "market.created").unwrap().json();
    assert_eq!(created["market_id"], market["id"]);
    assert_eq!(created["seq"], 1);
    assert_eq!(created["data"]["id"], market["id"]);
    for r in &got {
        assert!(verifies(all["secret"].as_str().unwrap(), r));
    }
    // Nothing of this provider's goes to the other's endpoint, and the first endpoint got only deposits.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(receiver.received("/theirs").len(), 0);
    assert_eq!(receiver.received("/deposits").len(), 1);
    assert_eq!(receiver.received("/all").len(), 2);

    // The deliveries log.
    let log = f.app.get(&format!("/v1/providers/webhooks/{}/deliveries", all["id"].as_str().unwrap()), Some(&key)).await;
    assert_eq!(log.status, StatusCode::OK);
    assert_eq!(log.body["pagination"]["total"], 2);
    for d in log.body["data"].as_array().unwrap() {
        assert_eq!(d["status"], "succeeded");
        assert_eq!(d["attempts"], 1);
        assert_eq!(d["last_status_code"], 200);
        assert_eq!(d["next_attempt_at"], Value::Null);
    }
    let ids: Vec<&str> = got.iter().map(|r| r.header("webhook-id")).collect();
    for d in log.body["data"].as_array().unwrap() {
        assert!(ids.contains(&d["event_id"].as_str().unwrap()));
    }

    // A test event goes to an endpoint whatever it subscribes to.
    let test = f.app.post(&format!("/v1/providers/webhooks/{}/test", deposits["id"].as_str().unwrap()), Some(&key), json!({})).await;
    assert_eq!(test.status, StatusCode::ACCEPTED, "{}", test.body);
    assert_eq!(test.body["event_type"], "webhook.test");
    let got = receiver.wait_for("/deposits", 2, Duration::from_secs(5)).await;
    assert_eq!(got[1].json()["type"], "webhook.test");
    assert_eq!(got[1].header("webhook-id"), test.body["event_id"].as_str().unwrap());
    assert!(verifies(deposits["secret"].as_str().unwrap(), &got[1]));
    assert_eq!(receiver.received("/all").len(), 2, "a test event goes to its endpoint only");

    // The other provider's events reach its endpoint.
    let treasury = f
        .app
        .post("/v1/providers/treasury/deposits", Some(&other.key), json!({ "token_id": f.token_id, "amount": "5", "reference": uuid() }))
        .await;
    assert_eq!(treasury.status, StatusCode::CREATED);
    let got = receiver.wait_for("/theirs", 1, Duration::from_secs(5)).await;
    assert_eq!(got[0].json()["data"], treasury.body);
    assert!(verifies(theirs["secret"].as_str().unwrap(), &got[0]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_are_retried_on_schedule_then_fail_and_a_manual_retry_sends_once_more() {
    let receiver = Receiver::start().await;
    receiver.script("/flaky", vec![(500, None)]);
    let f = Fixture::new_with(webhook_settings("300ms,600ms")).await;
    let key = f.provider.key.clone();
    let endpoint = create_endpoint(&f.app, &key, &receiver.url("/flaky"), &["deposit.completed"]).await;
    let id = endpoint["id"].as_str().unwrap();
    f.app.wallet_deposit(&f.provider, &f.token_id, "0x00000000000000000000000000000000000000d2", 7).await;

    let got = receiver.wait_for("/flaky", 3, Duration::from_secs(5)).await;
    let first_gap = got[1].at - got[0].at;
    let second_gap = got[2].at - got[1].at;
    assert!(first_gap >= Duration::from_millis(240) && first_gap < Duration::from_millis(900), "{first_gap:?}");
    assert!(second_gap >= Duration::from_millis(480) && second_gap < Duration::from_millis(1300), "{second_gap:?}");
    assert!(got.iter().all(|r| r.header("webhook-id") == got[0].header("webhook-id")), "every retry has the event's id");
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert_eq!(receiver.received("/flaky").len(), 3, "no attempt after the schedule ends");

    let failed = f.app.get(&format!("/v1/providers/webhooks/{id}/deliveries?status=failed"), Some(&key)).await;
    assert_eq!(failed.body["pagination"]["total"], 1, "{}", failed.body);
    let delivery = &failed.body["data"][0];
    assert_eq!(delivery["attempts"], 3);
    assert_eq!(delivery["last_status_code"], 500);
    assert_eq!(delivery["next_attempt_at"], Value::Null);
    assert_eq!(f.app.get(&format!("/v1/providers/webhooks/{id}/deliveries?status=pending"), Some(&key)).await.body["pagination"]["total"], 0);
    assert_field_error(&f.app.get(&format!("/v1/providers/webhooks/{id}/deliveries?status=lost"), Some(&key)).await, "status");

    // A manual retry: one more attempt, now.
    receiver.script("/flaky", vec![(500, None), (500, None), (500, None), (204, None)]);
    let delivery_id = delivery["id"].as_str().unwrap();
    let retried = f.app.post(&format!("/v1/providers/webhooks/{id}/deliveries/{delivery_id}/retry"), Some(&key), json!({})).await;
    assert_eq!(retried.status, StatusCode::ACCEPTED, "{}", retried.body);
    assert_eq!(retried.body["status"], "pending");
    receiver.wait_for("/flaky", 4, Duration::from_secs(5)).await;
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let d = f.app.get(&format!("/v1/providers/webhooks/{id}/deliveries"), Some(&key)).await.body["data"][0].clone();
        if d["status"] == "succeeded" {
            assert_eq!(d["attempts"], 4);
            assert_eq!(d["last_status_code"], 204);
            break;
        }
        assert!(Instant::now() < deadline, "the retried delivery did not succeed: {d}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let other = f.app.create_provider("Other");
    assert_problem(
        &f.app.post(&format!("/v1/providers/webhooks/{id}/deliveries/{delivery_id}/retry"), Some(&other.key), json!({})).await,
        404,
        "not_found",
    );
    assert_problem(&f.app.post(&format!("/v1/providers/webhooks/{id}/deliveries/{}/retry", uuid()), Some(&key), json!({})).await, 404, "not_found");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_after_is_honoured_and_410_disables_the_endpoint() {
    let receiver = Receiver::start().await;
    receiver.script("/busy", vec![(503, Some(1)), (200, None)]);
    receiver.script("/gone", vec![(410, None)]);
    let f = Fixture::new_with(webhook_settings("100ms,2s")).await;
    let key = f.provider.key.clone();
    create_endpoint(&f.app, &key, &receiver.url("/busy"), &["deposit.completed"]).await;
    let gone = create_endpoint(&f.app, &key, &receiver.url("/gone"), &["deposit.completed"]).await;
    f.app.wallet_deposit(&f.provider, &f.token_id, "0x00000000000000000000000000000000000000d3", 9).await;

    let got = receiver.wait_for("/busy", 2, Duration::from_secs(5)).await;
    let gap = got[1].at - got[0].at;
    assert!(gap >= Duration::from_millis(950), "Retry-After: 1 waits a second, not the scheduled 100 ms: {gap:?}");

    receiver.wait_for("/gone", 1, Duration::from_secs(5)).await;
    let id = gone["id"].as_str().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let e = f.app.get(&format!("/v1/providers/webhooks/{id}"), Some(&key)).await.body;
        if e["enabled"] == false {
            assert_eq!(e["disabled_reason"], "gone");
            break;
        }
        assert!(Instant::now() < deadline, "410 did not disable the endpoint: {e}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let log = f.app.get(&format!("/v1/providers/webhooks/{id}/deliveries"), Some(&key)).await.body;
    assert_eq!(log["data"][0]["status"], "failed");
    assert_eq!(log["data"][0]["attempts"], 1);
    assert_eq!(log["data"][0]["last_status_code"], 410);

    // A disabled endpoint gets no new deliveries; enabled again, it does.
    f.app.wallet_deposit(&f.provider, &f.token_id, "0x00000000000000000000000000000000000000d3", 1).await;
    receiver.wait_for("/busy", 3, Duration::from_secs(5)).await;
    assert_eq!(f.app.get(&format!("/v1/providers/webhooks/{id}/deliveries"), Some(&key)).await.body["pagination"]["total"], 1);
    receiver.script("/gone", vec![(200, None)]);
    let enabled = f.app.put(&format!("/v1/providers/webhooks/{id}"), Some(&key), json!({ "enabled": true })).await.body;
    assert_eq!(enabled["enabled"], true);
    assert_eq!(enabled["disabled_reason"], Value::Null);
    f.app.wallet_deposit(&f.provider, &f.token_id, "0x00000000000000000000000000000000000000d3", 2).await;
    receiver.wait_for("/gone", 2, Duration::from_secs(5)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_rotation_deliveries_carry_both_signatures() {
    let receiver = Receiver::start().await;
    let f = Fixture::new_with(webhook_settings("1s")).await;
    let key = f.provider.key.clone();
    let endpoint = create_endpoint(&f.app, &key, &receiver.url("/hook"), &["deposit.completed"]).await;
    let old = endpoint["secret"].as_str().unwrap().to_string();
    let rotated = f.app.post(&format!("/v1/providers/webhooks/{}/rotate-secret", endpoint["id"].as_str().unwrap()), Some(&key), json!({})).await;
    assert_eq!(rotated.status, StatusCode::OK, "{}", rotated.body);
    let new = rotated.body["secret"].as_str().unwrap().to_string();
    assert!(new.starts_with("whsec_") && new != old);
    f.app.wallet_deposit(&f.provider, &f.token_id, "0x00000000000000000000000000000000000000d4", 3).await;
    let got = receiver.wait_for("/hook", 1, Duration::from_secs(5)).await;
    let signatures: Vec<&str> = got[0].header("webhook-signature").split(' ').collect();
    assert_eq!(signatures.len(), 2, "{signatures:?}");
    assert!(verifies(&new, &got[0]) && verifies(&old, &got[0]));
}

/// kill -9 while deliveries wait: after a restart every event arrives, none missing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_service_delivers_every_event_after_its_restart() {
    // The receiver is down at first: its port is taken now and served only after the kill.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);
    let db = TestDatabase::create();
    create_database(&db.url).await;
    let provider = cli_on(&db.url, &["provider", "create", "--name", "Acme"]);
    let key = provider["api_key"].as_str().unwrap().to_string();
    let token = cli_on(&db.url, &["token", "create", "--symbol", "USDC", "--name", "USDC", "--decimals", "6"]);
    let token_id = token["token_id"].as_str().unwrap().to_string();
    let flags = ["--webhook-allow-private", "--webhook-retry-schedule", "1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s"];
    let server = ServeProcess::start_flags(&db.url, &flags).await;
    let client = reqwest::Client::new();
    let r = client
        .post(format!("{}/v1/providers/webhooks", server.base))
        .bearer_auth(&key)
        .json(&json!({ "url": format!("http://{address}/hook"), "event_types": ["*"] }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::CREATED);
    let mut sent = std::collections::BTreeSet::new();
    for i in 0..40 {
        let r = client
            .post(format!("{}/v1/providers/treasury/deposits", server.base))
            .bearer_auth(&key)
            .json(&json!({ "token_id": token_id, "amount": (i + 1).to_string(), "reference": format!("r{i}") }))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::CREATED);
        let receipt: Value = r.json().await.unwrap();
        sent.insert(receipt["deposit_id"].as_str().unwrap().to_string());
    }
    server.crash();

    let receiver = Receiver::on(tokio::net::TcpListener::bind(address).await.unwrap()).await;
    let _server = ServeProcess::start_flags(&db.url, &flags).await;
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let got = receiver.received("/hook");
        let events: std::collections::BTreeMap<String, Value> =
            got.iter().map(|r| (r.header("webhook-id").to_string(), r.json())).collect();
        let delivered: std::collections::BTreeSet<String> =
            events.values().map(|e| e["data"]["deposit_id"].as_str().unwrap().to_string()).collect();
        if delivered == sent {
            assert_eq!(events.len(), sent.len(), "one webhook-id per event");
            break;
        }
        assert!(delivered.is_subset(&sent), "only the deposits made were delivered");
        assert!(Instant::now() < deadline, "{} of {} events delivered after the restart", delivered.len(), sent.len());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpoint_subscribed_to_market_finalized_gets_the_end_of_a_dispute_window() {
    let receiver = Receiver::start().await;
    let f = Fixture::new_with(webhook_settings("1s")).await;
    let key = f.provider.key.clone();
    create_endpoint(&f.app, &key, &receiver.url("/final"), &["market.finalized"]).await;
    let market = f.market(2).await;
    let t = f.trader(10 * ONE_TOKEN).await;
    assert_eq!(bet_on(&f.app, &id_of(&market), outcome(&market, 0), &t, ONE_TOKEN).await.status, StatusCode::OK);
    let body = json!({ "winning_outcome_id": outcome(&market, 0), "resolver_wallet_id": "ops", "dispute_window_seconds": 1 });
    let resolved = f.app.post(&format!("/v1/providers/markets/{}/resolve", id_of(&market)), Some(&key), body).await;
    assert_eq!(resolved.status, StatusCode::OK, "{}", resolved.body);
    let got = receiver.wait_for("/final", 1, Duration::from_secs(8)).await;
    let event = got[0].json();
    assert_eq!((&event["type"], &event["market_id"], &event["seq"]), (&json!("market.finalized"), &market["id"], &json!(4)));
    assert_eq!(event["data"]["final_at"], resolved.body["final_at"]);
    assert_eq!(event["data"]["winning_outcome_id"], outcome(&market, 0));
    // Only what it subscribed to: not the trade, not the resolution.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    assert_eq!(receiver.received("/final").len(), 1);
}
