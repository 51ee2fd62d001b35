//! `GET /metrics` on a `hanson serve` process of its own (the counters are per process, so
//! the numbers here are exact): requests by route and status, latency, trades, and the
//! backend's commit or pool figures.

use reqwest::StatusCode;
use serde_json::{json, Value};

use super::support::*;

async fn send(client: &reqwest::Client, method: reqwest::Method, url: String, bearer: Option<&str>, body: Option<Value>) -> (StatusCode, Value) {
    let mut request = client.request(method, url);
    if let Some(token) = bearer {
        request = request.bearer_auth(token);
    }
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.expect("request");
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// The value of the sample `name{labels}` in an exposition, if present.
fn sample(text: &str, name: &str, labels: &str) -> Option<f64> {
    let prefix = if labels.is_empty() { format!("{name} ") } else { format!("{name}{{{labels}}} ") };
    text.lines().find_map(|line| line.strip_prefix(&prefix)).map(|v| v.trim().parse().expect("a number"))
}

/// A provider with a funded treasury, a token and a creator wallet, on a running server.
struct Venue {
    base: String,
    client: reqwest::Client,
    provider_id: String,
    key: String,
    token_id: String,
    creator_wallet_id: String,
}

impl Venue {
    async fn open(database_url: &str, base: &str, client: &reqwest::Client) -> Venue {
        let provider = cli_on(database_url, &["provider", "create", "--name", "Metrics"]);
        let token = cli_on(database_url, &["token", "create", "--symbol", "USDC", "--name", "USD Coin", "--decimals", "18"]);
        let (key, token_id) = (provider["api_key"].as_str().unwrap().to_string(), token["token_id"].as_str().unwrap().to_string());
        let post = reqwest::Method::POST;
        let deposit = json!({ "token_id": token_id, "amount": (100_000 * ONE_TOKEN).to_string(), "reference": "t-1" });
        assert_eq!(send(client, post.clone(), format!("{base}/v1/providers/treasury/deposits"), Some(&key), Some(deposit)).await.0, StatusCode::CREATED);
        let creator = json!({ "wallet_address": CREATOR_ADDRESS, "token_id": token_id, "amount": "1", "reference": "c-1" });
        let (_, creator) = send(client, post, format!("{base}/v1/providers/wallets/deposits"), Some(&key), Some(creator)).await;
        Venue {
            base: base.to_string(),
            client: client.clone(),
            provider_id: provider["provider_id"].as_str().unwrap().to_string(),
            key,
            token_id,
            creator_wallet_id: creator["wallet_id"].as_str().unwrap().to_string(),
        }
    }

    /// A new two-outcome market: its id and its first outcome's.
    async fn market(&self) -> (String, String) {
        let market = json!({
            "question": "Metrics?", "pricing_method": "lmsr", "token_id": self.token_id, "liquidity": (1000 * ONE_TOKEN).to_string(),
            "starts_at": iso(-60), "ends_at": iso(3600), "creator_wallet_id": self.creator_wallet_id, "creator_fee_percentage": 1,
            "outcomes": [{ "title": "Yes", "outcome_index": 0 }, { "title": "No", "outcome_index": 1 }],
        });
        let (status, market) = send(&self.client, reqwest::Method::POST, format!("{}/v1/providers/markets", self.base), Some(&self.key), Some(market)).await;
        assert_eq!(status, StatusCode::CREATED, "{market}");
        (market["market"]["id"].as_str().unwrap().to_string(), market["outcomes"][0]["id"].as_str().unwrap().to_string())
    }

    /// A new funded wallet, logged in: its access token and session id.
    async fn trader(&self) -> (String, String) {
        let (base, post) = (&self.base, reqwest::Method::POST);
        let wallet = TestWallet::random();
        let funds = json!({ "wallet_address": wallet.address, "token_id": self.token_id, "amount": (100 * ONE_TOKEN).to_string(), "reference": uuid() });
        assert_eq!(send(&self.client, post, format!("{base}/v1/providers/wallets/deposits"), Some(&self.key), Some(funds)).await.0, StatusCode::CREATED);
        let session = login_at(&self.client, base, &self.provider_id, &wallet).await;
        (session.access_token, session.session_id)
    }
}

#[tokio::test]
async fn metrics_count_requests_trades_and_commits() {
    let db = TestDatabase::create();
    let log = tempfile::NamedTempFile::new().unwrap();
    let server = ServeProcess::start(&db.url, log.path()).await;
    let base = server.base.clone();
    let client = reqwest::Client::new();
    let get = reqwest::Method::GET;
    let post = reqwest::Method::POST;
    for _ in 0..2 {
        assert_eq!(send(&client, get.clone(), format!("{base}/healthz"), None, None).await.0, StatusCode::OK);
    }
    for _ in 0..3 {
        assert_eq!(send(&client, post.clone(), format!("{base}/v1/markets/search"), None, Some(json!({}))).await.0, StatusCode::OK);
    }
    let bad = send(&client, post.clone(), format!("{base}/v1/markets/search"), None, Some(json!({ "pagination": { "page": 0 } }))).await;
    assert_eq!(bad.0, StatusCode::UNPROCESSABLE_ENTITY);

    // Two bets by one wallet.
    let venue = Venue::open(&db.url, &base, &client).await;
    let (market_id, outcome_id) = venue.market().await;
    let (token, session_id) = venue.trader().await;
    for _ in 0..2 {
        let bet = json!({ "session_id": session_id, "outcome_id": outcome_id, "amount": ONE_TOKEN.to_string() });
        let (status, body) = send(&client, post.clone(), format!("{base}/v1/markets/{market_id}/bet"), Some(&token), Some(bet)).await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }

    // Two open event streams, each past its snapshot.
    let mut streams = Vec::new();
    for _ in 0..2 {
        let mut stream = client.get(format!("{base}/v1/markets/{market_id}/events")).send().await.unwrap();
        assert_eq!(stream.status(), StatusCode::OK);
        let first = stream.chunk().await.unwrap().expect("the snapshot");
        assert!(first.starts_with(b"event: snapshot"));
        streams.push(stream);
    }

    let response = client.get(format!("{base}/metrics")).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert!(response.headers()["content-type"].to_str().unwrap().starts_with("text/plain"));
    let text = response.text().await.unwrap();
    assert_eq!(sample(&text, "hanson_open_streams", ""), Some(2.0), "{text}");
    drop(streams);
    let requests = "hanson_http_requests_total";
    // Two here, and the one with which ServeProcess::start waited for the server.
    assert_eq!(sample(&text, requests, r#"route="/healthz",method="GET",status="200""#), Some(3.0), "{text}");
    assert_eq!(sample(&text, requests, r#"route="/v1/markets/search",method="POST",status="200""#), Some(3.0));
    assert_eq!(sample(&text, requests, r#"route="/v1/markets/search",method="POST",status="422""#), Some(1.0));
    assert_eq!(sample(&text, requests, r#"route="/v1/markets/{market_id}/bet",method="POST",status="200""#), Some(2.0));
    let latency = "hanson_http_request_duration_seconds_count";
    assert_eq!(sample(&text, latency, r#"route="/v1/markets/search",method="POST""#), Some(4.0));
    assert_eq!(sample(&text, "hanson_trades_total", r#"kind="buy""#), Some(2.0));
    assert_eq!(sample(&text, "hanson_trades_total", r#"kind="sell""#), None, "no sale happened");
    match BACKEND_KIND {
        Backend::Sqlite => {
            let commits = sample(&text, "hanson_sqlite_commit_batch_size_count", "").expect("commits counted");
            // At least every write above (deposits, market, nonce, login, bets) was committed.
            assert!(commits >= 7.0, "{commits}");
            assert!(sample(&text, "hanson_sqlite_wal_bytes", "").expect("WAL size") > 0.0);
        }
        Backend::Postgres => {
            let transactions = sample(&text, "hanson_postgres_pool_wait_seconds_count", "").expect("pool waits");
            assert!(transactions >= 10.0, "{transactions}");
            assert_eq!(sample(&text, "hanson_postgres_connections_in_use", ""), Some(0.0), "none is running now");
            // The bets went one after the other: a batch each.
            assert_eq!(sample(&text, "hanson_postgres_trade_batch_size_count", ""), Some(2.0), "{text}");
            assert_eq!(sample(&text, "hanson_postgres_trade_batch_size_sum", ""), Some(2.0));
            // The phases split each batch's duration, every one of them measured.
            let phase = |name: &str| sample(&text, "hanson_postgres_trade_batch_phase_seconds_total", &format!(r#"phase="{name}""#));
            let phases = ["lock", "read", "run", "write"].map(|name| phase(name).unwrap_or_else(|| panic!("phase {name}: {text}")));
            assert!(phases[1..].iter().all(|seconds| *seconds > 0.0), "{phases:?}");
            let duration = sample(&text, "hanson_postgres_trade_batch_duration_seconds_sum", "").expect("batch durations");
            assert!((phases.iter().sum::<f64>() - duration).abs() < 1e-6, "{phases:?} against {duration}");
        }
    }
}

const BACKEND_KIND: Backend = BACKEND;

/// Trades on different markets share accounts (the platform's, the creator's, a wallet
/// trading both): with the accounts locked in id order, PostgreSQL never has to break a
/// deadlock between them, which it did after its 1 s deadlock timeout.
#[tokio::test]
async fn trades_sharing_accounts_across_markets_never_deadlock() {
    let db = TestDatabase::create();
    let log = tempfile::NamedTempFile::new().unwrap();
    let server = ServeProcess::start(&db.url, log.path()).await;
    let base = server.base.clone();
    let client = reqwest::Client::new();
    let venue = Venue::open(&db.url, &base, &client).await;
    let markets = [venue.market().await, venue.market().await, venue.market().await];
    let mut traders = Vec::new();
    for _ in 0..6 {
        traders.push(venue.trader().await);
    }
    let mut tasks = Vec::new();
    for (t, (token, session_id)) in traders.into_iter().enumerate() {
        let (client, base, markets) = (client.clone(), base.clone(), markets.clone());
        tasks.push(tokio::spawn(async move {
            for i in 0..30 {
                // Each wallet walks the markets in its own order.
                let (market_id, outcome_id) = &markets[(i + t) % markets.len()];
                let bet = json!({ "session_id": session_id, "outcome_id": outcome_id, "amount": "1000000000000000" });
                let url = format!("{base}/v1/markets/{market_id}/bet");
                let (status, body) = send(&client, reqwest::Method::POST, url, Some(&token), Some(bet)).await;
                assert_eq!(status, StatusCode::OK, "{body}");
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let text = client.get(format!("{base}/metrics")).send().await.unwrap().text().await.unwrap();
    assert_eq!(sample(&text, "hanson_trades_total", r#"kind="buy""#), Some(180.0));
    assert_eq!(sample(&text, "hanson_postgres_write_retries_total", r#"cause="deadlock""#), None, "{text}");
}

/// The search item of `market_id` on the first page of `provider_id`'s markets.
async fn searched(client: &reqwest::Client, base: &str, provider_id: &str, market_id: &str) -> Value {
    let query = json!({ "filters": { "provider_id": provider_id } });
    let (status, page) = send(client, reqwest::Method::POST, format!("{base}/v1/markets/search"), None, Some(query)).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    page["data"].as_array().unwrap().iter().find(|m| m["id"] == market_id).cloned().unwrap_or_else(|| panic!("{market_id} not in {page}"))
}

/// A node renders the markets it finds for search as it starts, and a search still shows a
/// warmed market as it is after a later trade.
#[tokio::test]
async fn a_starting_node_renders_the_markets_for_search() {
    let db = TestDatabase::create();
    let log = tempfile::NamedTempFile::new().unwrap();
    let client = reqwest::Client::new();
    let first = ServeProcess::start(&db.url, log.path()).await;
    let mut venue = Venue::open(&db.url, &first.base, &client).await;
    let mut markets = Vec::new();
    for _ in 0..3 {
        markets.push(venue.market().await);
    }
    let (market_id, outcome_id) = markets[0].clone();
    let before = searched(&client, &first.base, &venue.provider_id, &market_id).await;
    drop(first);

    let server = ServeProcess::start(&db.url, log.path()).await;
    let base = server.base.clone();
    venue.base = base.clone();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let text = client.get(format!("{base}/metrics")).send().await.unwrap().text().await.unwrap();
        if sample(&text, "hanson_search_rendered_markets", "") == Some(3.0) {
            assert!(sample(&text, "hanson_search_rendered_bytes", "").expect("bytes") > 0.0, "{text}");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the three markets not rendered within 10 s:\n{text}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(searched(&client, &base, &venue.provider_id, &market_id).await, before);

    let (token, session_id) = venue.trader().await;
    let bet = json!({ "session_id": session_id, "outcome_id": outcome_id, "amount": ONE_TOKEN.to_string() });
    let (status, body) = send(&client, reqwest::Method::POST, format!("{base}/v1/markets/{market_id}/bet"), Some(&token), Some(bet)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let after = searched(&client, &base, &venue.provider_id, &market_id).await;
    let (_, detail) = send(&client, reqwest::Method::GET, format!("{base}/v1/markets/{market_id}"), None, None).await;
    assert_ne!(after["total_volume"], before["total_volume"]);
    assert_eq!(after["total_volume"], detail["total_volume"]);
    for (searched, detailed) in after["outcomes"].as_array().unwrap().iter().zip(detail["outcomes"].as_array().unwrap()) {
        assert_eq!(searched["current_price"], detailed["current_price"]);
        assert_eq!(searched["total_shares"], detailed["total_shares"]);
    }
}
