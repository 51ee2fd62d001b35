//! The test harness: a real server on a random port over real HTTP, on a fresh database
//! per test, of the backend whose module expanded this support (`super::BACKEND`): SQLite, or
//! PostgreSQL at `HANSON_TEST_POSTGRES_URL` (default `postgres://postgres@127.0.0.1:5432/postgres`).

use std::collections::BTreeSet;
use std::sync::Mutex;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use tokio::net::TcpListener;

use super::library::{self, Settings};
use super::process::cli_on;
use crate::contract;

pub(crate) const ONE_TOKEN: u128 = 1_000_000_000_000_000_000;

pub(crate) struct TestApp {
    pub base: String,
    pub database_url: String,
    pub client: reqwest::Client,
    /// The (operation, status) pairs whose answers were checked against the OpenAPI document.
    pub checked: Mutex<BTreeSet<contract::openapi::Checked>>,
    _db: TestDatabase,
}

/// Each backend's module constructs one of these (its `BACKEND`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Backend {
    Sqlite,
    Postgres,
}

pub(crate) const DEFAULT_POSTGRES_URL: &str = "postgres://postgres@127.0.0.1:5432/postgres";

/// A fresh, empty database for one test, deleted when dropped.
pub(crate) struct TestDatabase {
    pub url: String,
    cleanup: Cleanup,
}

enum Cleanup {
    Sqlite(#[allow(dead_code)] tempfile::TempDir),
    Postgres { admin_url: String, name: String },
}

impl TestDatabase {
    pub(crate) fn create() -> TestDatabase {
        Self::create_at(None)
    }

    /// [`create`](Self::create), on PostgreSQL through `admin_url` when given (a server a test
    /// started itself) instead of `HANSON_TEST_POSTGRES_URL`.
    pub(crate) fn create_at(admin_url: Option<&str>) -> TestDatabase {
        match super::BACKEND {
            Backend::Sqlite => {
                let dir = tempfile::tempdir().expect("temp dir");
                let url = format!("sqlite://{}", dir.path().join("hanson.db").display());
                TestDatabase { url, cleanup: Cleanup::Sqlite(dir) }
            }
            Backend::Postgres => {
                let admin_url = admin_url.map(str::to_string).unwrap_or_else(|| {
                    std::env::var("HANSON_TEST_POSTGRES_URL").unwrap_or_else(|_| DEFAULT_POSTGRES_URL.to_string())
                });
                let name = format!("hanson_test_{}", uuid::Uuid::new_v4().simple());
                if let Err(e) = library::postgres_admin(&admin_url, format!("CREATE DATABASE {name}")) {
                    panic!(
                        "cannot create a test database through {admin_url}: {e}\n\
                         The PostgreSQL tests need a server at 127.0.0.1:5432 with trust auth for user \
                         postgres, or HANSON_TEST_POSTGRES_URL naming an admin connection."
                    );
                }
                TestDatabase { url: library::with_database(&admin_url, &name), cleanup: Cleanup::Postgres { admin_url, name } }
            }
        }
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        if let Cleanup::Postgres { admin_url, name } = &self.cleanup {
            // FORCE: the test's server still holds pooled connections to it.
            let _ = library::postgres_admin(admin_url, format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
        }
    }
}

pub(crate) struct Response {
    pub status: StatusCode,
    pub body: Value,
    pub headers: reqwest::header::HeaderMap,
}

#[derive(Clone)]
pub(crate) struct Provider {
    pub id: String,
    pub key: String,
}

impl TestApp {
    pub(crate) async fn spawn() -> TestApp {
        Self::spawn_with(Settings::default()).await
    }

    pub(crate) async fn spawn_with(settings: impl Into<Settings>) -> TestApp {
        Self::spawn_at(None, settings).await
    }

    /// [`spawn_with`](Self::spawn_with) on a database made through `admin_url` (see
    /// [`TestDatabase::create_at`]).
    pub(crate) async fn spawn_at(admin_url: Option<&str>, settings: impl Into<Settings>) -> TestApp {
        let settings = settings.into();
        let db = TestDatabase::create_at(admin_url);
        let database_url = db.url.clone();
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let base = format!("http://{}", listener.local_addr().unwrap());
        library::serve(listener, &database_url, settings, Default::default(), std::future::pending());
        contract::load(&base).await;
        TestApp { base, database_url, client: reqwest::Client::new(), checked: Mutex::default(), _db: db }
    }

    /// Runs the real `hanson` binary against this test's database and parses its JSON.
    pub(crate) fn cli(&self, args: &[&str]) -> Value {
        cli_on(&self.database_url, args)
    }

    pub(crate) fn create_provider(&self, name: &str) -> Provider {
        let out = self.cli(&["provider", "create", "--name", name]);
        Provider { id: out["provider_id"].as_str().unwrap().into(), key: out["api_key"].as_str().unwrap().into() }
    }

    pub(crate) fn create_token(&self, symbol: &str) -> String {
        let out = self.cli(&["token", "create", "--symbol", symbol, "--name", &format!("{symbol} token"), "--decimals", "18"]);
        out["token_id"].as_str().unwrap().to_string()
    }

    /// Sends a request and checks the answer against the OpenAPI document (`contract::openapi`).
    pub(crate) async fn request(&self, method: Method, path: &str, bearer: Option<&str>, body: Option<Value>) -> Response {
        let mut req = self.client.request(method.clone(), format!("{}{}", self.base, path));
        if let Some(token) = bearer {
            req = req.bearer_auth(token);
        }
        if let Some(body) = body {
            req = req.json(&body);
        }
        let res = req.send().await.expect("request");
        let status = res.status();
        let headers = res.headers().clone();
        let text = res.text().await.unwrap();
        let body = if text.is_empty() { Value::Null } else { serde_json::from_str(&text).unwrap_or(Value::String(text)) };
        let content_type = headers.get("content-type").and_then(|v| v.to_str().ok());
        if let Some(checked) = contract::openapi::check(&method, path, status, content_type, &body) {
            self.checked.lock().unwrap().insert(checked);
        }
        Response { status, body, headers }
    }

    pub(crate) async fn get(&self, path: &str, bearer: Option<&str>) -> Response {
        self.request(Method::GET, path, bearer, None).await
    }

    pub(crate) async fn post(&self, path: &str, bearer: Option<&str>, body: Value) -> Response {
        self.request(Method::POST, path, bearer, Some(body)).await
    }

    pub(crate) async fn put(&self, path: &str, bearer: Option<&str>, body: Value) -> Response {
        self.request(Method::PUT, path, bearer, Some(body)).await
    }

    pub(crate) async fn fund_treasury(&self, p: &Provider, token_id: &str, amount: u128) {
        let r = self
            .post(
                "/v1/providers/treasury/deposits",
                Some(&p.key),
                json!({ "token_id": token_id, "amount": amount.to_string(), "reference": uuid() }),
            )
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{:?}", r.body);
    }

    /// Deposits into a wallet (creating it) and returns its id.
    pub(crate) async fn fund_wallet(&self, p: &Provider, token_id: &str, address: &str, amount: u128) -> String {
        self.wallet_deposit(p, token_id, address, amount).await["wallet_id"].as_str().unwrap().to_string()
    }

    /// Deposits into a wallet (creating it) and returns the deposit's answer.
    pub(crate) async fn wallet_deposit(&self, p: &Provider, token_id: &str, address: &str, amount: u128) -> Value {
        let r = self
            .post(
                "/v1/providers/wallets/deposits",
                Some(&p.key),
                json!({ "wallet_address": address, "token_id": token_id, "amount": amount.to_string(), "reference": uuid() }),
            )
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{:?}", r.body);
        r.body
    }
}

/// Sends a request built by hand (to another node, say) and returns its JSON body, checked
/// against the OpenAPI document like the `TestApp` helpers' answers.
pub(crate) async fn json_of(request: reqwest::RequestBuilder) -> Value {
    let (client, request) = request.build_split();
    let request = request.unwrap();
    let (method, path) = (request.method().clone(), request.url().path().to_string());
    let res = client.execute(request).await.unwrap();
    let status = res.status();
    let content_type = res.headers().get("content-type").and_then(|v| v.to_str().ok()).map(str::to_string);
    let body: Value = serde_json::from_str(&res.text().await.unwrap()).unwrap();
    contract::openapi::check(&method, &path, status, content_type.as_deref(), &body);
    body
}

pub(crate) fn uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

pub(crate) fn iso(offset_secs: i64) -> String {
    let t = time::OffsetDateTime::now_utc() + time::Duration::seconds(offset_secs);
    t.format(&time::format_description::well_known::Rfc3339).unwrap()
}

/// A provider with a funded treasury, a creator wallet and a token: ready to create markets.
pub(crate) struct Fixture {
    pub app: TestApp,
    pub provider: Provider,
    pub token_id: String,
    pub creator_wallet_id: String,
}

pub(crate) const CREATOR_ADDRESS: &str = "0x00000000000000000000000000000000000000c1";

impl Fixture {
    pub(crate) async fn new() -> Fixture {
        Self::new_with(Settings::default()).await
    }

    pub(crate) async fn new_with(settings: impl Into<Settings>) -> Fixture {
        Self::new_at(None, settings).await
    }

    /// [`new_with`](Self::new_with) on a database made through `admin_url`.
    pub(crate) async fn new_at(admin_url: Option<&str>, settings: impl Into<Settings>) -> Fixture {
        let app = TestApp::spawn_at(admin_url, settings).await;
        let provider = app.create_provider("Acme Games");
        let token_id = app.create_token("USDC");
        app.fund_treasury(&provider, &token_id, 1_000_000 * ONE_TOKEN).await;
        let creator_wallet_id = app.fund_wallet(&provider, &token_id, CREATOR_ADDRESS, 1).await;
        Fixture { app, provider, token_id, creator_wallet_id }
    }

    pub(crate) fn market_body(&self, outcomes: usize) -> Value {
        json!({
            "game_id": "game-42",
            "question": "Will the home team win?",
            "description": "Resolves on the final whistle.",
            "tags": ["football", "league"],
            "images": { "banner": "https://example.com/b.png", "thumbnail": "https://example.com/t.png" },
            "pricing_method": "lmsr",
            "token_id": self.token_id,
            "min_bet_amount": "1000",
            "max_bet_amount": (100 * ONE_TOKEN).to_string(),
            "liquidity": (1000 * ONE_TOKEN).to_string(),
            "starts_at": iso(-3600),
            "ends_at": iso(86_400),
            "creator_wallet_id": self.creator_wallet_id,
            "creator_fee_percentage": 1,
            "platform_fee_percentage": 1,
            "metadata": { "resolution_source": "league.example.com", "category": "sports" },
            "outcomes": (0..outcomes).map(|i| json!({
                "title": format!("Outcome {i}"),
                "description": format!("Outcome number {i}"),
                "outcome_index": i,
            })).collect::<Vec<_>>(),
        })
    }

    pub(crate) async fn create_market(&self, body: Value) -> Response {
        self.app.post("/v1/providers/markets", Some(&self.provider.key), body).await
    }

    /// Creates a market from `market_body(outcomes)` and returns its detail.
    pub(crate) async fn market(&self, outcomes: usize) -> Value {
        let r = self.create_market(self.market_body(outcomes)).await;
        assert_eq!(r.status, StatusCode::CREATED, "{:?}", r.body);
        let id = r.body["market"]["id"].as_str().unwrap();
        self.app.get(&format!("/v1/markets/{id}"), None).await.body
    }

    /// Creates a market from `market_body(2)` that started a minute ago and ends in
    /// `ends_in_secs`, and returns its detail.
    pub(crate) async fn ending_market(&self, ends_in_secs: i64) -> Value {
        let mut body = self.market_body(2);
        body["starts_at"] = json!(iso(-60));
        body["ends_at"] = json!(iso(ends_in_secs));
        let r = self.create_market(body).await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
        let id = r.body["market"]["id"].as_str().unwrap();
        let r = self.app.get(&format!("/v1/markets/{id}"), None).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        r.body
    }

    pub(crate) async fn treasury_balance(&self) -> String {
        let r = self.app.get("/v1/providers/treasury", Some(&self.provider.key)).await;
        r.body["balances"][0]["balance"].as_str().unwrap().to_string()
    }
}

/// Asserts a problem+json response with the given status and code.
pub(crate) fn assert_problem(r: &Response, status: u16, code: &str) {
    assert_eq!(r.status.as_u16(), status, "body: {}", r.body);
    assert_eq!(
        r.headers.get("content-type").and_then(|v| v.to_str().ok()),
        Some("application/problem+json"),
        "body: {}",
        r.body
    );
    assert_eq!(r.body["code"], code, "body: {}", r.body);
    assert_eq!(r.body["status"], status);
    assert!(r.body["title"].is_string() && r.body["detail"].is_string() && r.body["type"].is_string());
}

/// Asserts a 422 naming `field` among its errors.
pub(crate) fn assert_field_error(r: &Response, field: &str) {
    assert_problem(r, 422, "validation_failed");
    let fields: Vec<&str> = r.body["errors"].as_array().unwrap().iter().map(|e| e["field"].as_str().unwrap()).collect();
    assert!(fields.contains(&field), "expected an error on {field}, got {fields:?}");
}
