//! `hanson serve --demo`: a demo exchange. On an empty database it creates a provider and a
//! token (as `hanson provider create` and `hanson token create` do), then, through the
//! server's own HTTP API like any integrator, funds the treasury and a few wallets and opens
//! markets; a demo trader then logs those wallets in and bets every few seconds.
//!
//! A database it made is resumed at the next start (with a new API key, since keys are
//! stored hashed); a database with other providers and no demo one is refused.

use std::time::Duration;

use serde_json::{json, Value};

use crate::api::extract::hash_api_key;
use crate::auth::generate_api_key;
use crate::domain::tenant::Token;
use crate::domain::time::now_micros;
use crate::error::{Error, Result};
use crate::store::{tenants, Store};

const PROVIDER_NAME: &str = "Hanson Demo";
const TOKEN_SYMBOL: &str = "DEMO";
/// One token in wei (the demo token has 18 decimals).
const ONE: u128 = 1_000_000_000_000_000_000;
const TRADERS: u8 = 4;
/// Time between two trades of the demo trader.
const TRADE_EVERY: Duration = Duration::from_secs(3);

/// (question, category, outcomes) of each demo market.
const MARKETS: &[(&str, &str, &[&str])] = &[
    ("Will it rain in Lisbon on the first Saturday of next month?", "weather", &["Yes", "No"]),
    ("Which team wins the city derby?", "sports", &["Home", "Draw", "Away"]),
    ("Will the new bridge open before the summer?", "politics", &["Yes", "No"]),
    ("Will a human-written novel top the bestseller list this year?", "culture", &["Yes", "No"]),
    ("Which language tops the next developer survey?", "tech", &["Rust", "Python", "TypeScript", "Go"]),
];

/// The demo's provider and token, ready to be set up and traded.
pub(super) struct Demo {
    base: String,
    provider_id: String,
    key: String,
    token_id: String,
    fresh: bool,
}

/// Creates the demo's provider and token, or finds them (with a new API key).
pub(super) async fn prepare(store: &Store, base: &str) -> Result<Demo> {
    let providers = store.read(tenants::providers).await?;
    let existing = providers.iter().find(|p| p.name == PROVIDER_NAME).map(|p| p.id.0.clone());
    if existing.is_none() && !providers.is_empty() {
        return Err(Error::Unavailable(format!(
            "--demo needs an empty database or one it made, and this one has other providers ({}): give another --database-url",
            providers.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(", ")
        )));
    }
    let key = generate_api_key();
    let hash = hash_api_key(&key);
    let fresh = existing.is_none();
    let provider_id = match existing {
        Some(id) => {
            let pid = id.clone();
            store.write(move |c| tenants::rotate_key(c, &pid, &hash, now_micros())).await?;
            id
        }
        None => {
            let id = uuid::Uuid::new_v4().to_string();
            let pid = id.clone();
            store.write(move |c| tenants::create_provider(c, &pid, PROVIDER_NAME, &hash, now_micros())).await?;
            id
        }
    };
    let tokens = store.read(tenants::tokens).await?;
    let token_id = match tokens.into_iter().find(|t| t.symbol == TOKEN_SYMBOL) {
        Some(token) => token.id,
        None => {
            let token =
                Token { id: uuid::Uuid::new_v4().to_string(), symbol: TOKEN_SYMBOL.into(), name: "Demo dollar".into(), decimals: 18 };
            let stored = token.clone();
            store.write(move |c| tenants::create_token(c, &stored, now_micros())).await?;
            token.id
        }
    };
    Ok(Demo { base: base.to_string(), provider_id, key, token_id, fresh })
}

impl Demo {
    /// Prints the provider, its API key and where to look, on stdout.
    pub(super) fn announce(&self) {
        let (base, key) = (&self.base, &self.key);
        println!("demo provider: {PROVIDER_NAME} ({})", self.provider_id);
        println!("demo API key: {key}");
        println!("open {base}/ for the markets, and {base}/console with the key above for the provider's console");
    }

    /// Sets the exchange up (first start only) and trades until the process ends.
    pub(super) async fn run(self) {
        let client = Client { http: reqwest::Client::new(), base: self.base.clone() };
        if self.fresh {
            if let Err(e) = self.set_up(&client).await {
                tracing::error!(error = %e, "the demo exchange could not be set up");
                return;
            }
            tracing::info!(markets = MARKETS.len(), traders = TRADERS, "demo exchange set up");
        }
        let mut trader = Trader { demo: &self, client: &client, sessions: Vec::new(), random: Random::new() };
        loop {
            if let Err(e) = trader.trade().await {
                tracing::debug!(error = %e, "a demo trade failed");
            }
            tokio::time::sleep(TRADE_EVERY).await;
        }
    }

    async fn set_up(&self, client: &Client) -> Result<()> {
        let key = Some(self.key.as_str());
        let amount = (1_000_000 * ONE).to_string();
        client
            .post(
                "/v1/providers/treasury/deposits",
                key,
                json!({ "token_id": self.token_id, "amount": amount, "reference": "demo-treasury" }),
            )
            .await?;
        let creator = self.deposit(client, &creator_address(), 1, "demo-creator").await?;
        let creator_id = creator["wallet_id"].as_str().unwrap_or_default().to_string();
        for (i, (question, category, outcomes)) in MARKETS.iter().enumerate() {
            let outcomes: Vec<Value> =
                outcomes.iter().enumerate().map(|(i, title)| json!({ "title": title, "outcome_index": i })).collect();
            let now = crate::domain::time::format_micros(now_micros());
            let ends = crate::domain::time::format_micros(now_micros() + 365 * 86_400 * 1_000_000);
            let body = json!({
                "question": question,
                "description": "A market of the demo exchange (`hanson serve --demo`): its traders are robots.",
                "pricing_method": "lmsr",
                "token_id": self.token_id,
                "min_bet_amount": (ONE / 1000).to_string(),
                "max_bet_amount": (1_000 * ONE).to_string(),
                "liquidity": (1_000 * ONE).to_string(),
                "starts_at": now,
                "ends_at": ends,
                "creator_wallet_id": creator_id,
                "creator_fee_percentage": 1,
                "platform_fee_percentage": 1,
                "metadata": { "category": category, "resolution_source": "demo" },
                "outcomes": outcomes,
            });
            client.post("/v1/providers/markets", key, body).await.map_err(|e| Error::internal(format!("market {i}: {e}")))?;
        }
        for n in 0..TRADERS {
            self.deposit(client, &trader_address(n)?, 10_000, &format!("demo-trader-{n}")).await?;
        }
        Ok(())
    }

    async fn deposit(&self, client: &Client, address: &str, tokens: u128, reference: &str) -> Result<Value> {
        let reference = format!("{reference}-{}", uuid::Uuid::new_v4().simple());
        let body =
            json!({ "wallet_address": address, "token_id": self.token_id, "amount": (tokens * ONE).to_string(), "reference": reference });
        client.post("/v1/providers/wallets/deposits", Some(&self.key), body).await
    }
}

fn creator_address() -> String {
    "0x00000000000000000000000000000000000dE770".to_lowercase()
}

/// The demo traders' keys: fixed, so a resumed demo logs the same wallets in.
fn trader_key(n: u8) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(format!("hanson demo trader {n}").as_bytes()).into()
}

fn trader_address(n: u8) -> Result<String> {
    let address = wallet_auth::evm_address_from_private_key(&trader_key(n)).map_err(|_| Error::internal("demo key"))?;
    Ok(wallet_auth::to_checksum_address(&address))
}

/// The server's API over HTTP, JSON in and out.
struct Client {
    http: reqwest::Client,
    base: String,
}

impl Client {
    async fn send(&self, request: reqwest::RequestBuilder, bearer: Option<&str>, body: Option<Value>) -> Result<Value> {
        let mut request = request;
        if let Some(bearer) = bearer {
            request = request.bearer_auth(bearer);
        }
        if let Some(body) = body {
            request = request.header("content-type", "application/json").body(body.to_string());
        }
        let response = request.send().await.map_err(Error::internal)?;
        let status = response.status();
        let bytes = response.bytes().await.map_err(Error::internal)?;
        let value: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        if !status.is_success() {
            return Err(Error::internal(format!("{status}: {}", value["detail"].as_str().unwrap_or_default())));
        }
        Ok(value)
    }

    async fn post(&self, path: &str, bearer: Option<&str>, body: Value) -> Result<Value> {
        self.send(self.http.post(format!("{}{path}", self.base)), bearer, Some(body)).await
    }

    async fn get(&self, path: &str, bearer: Option<&str>) -> Result<Value> {
        self.send(self.http.get(format!("{}{path}", self.base)), bearer, None).await
    }
}

/// A logged-in demo wallet.
struct Session {
    address: String,
    access_token: String,
    session_id: String,
}

struct Trader<'a> {
    demo: &'a Demo,
    client: &'a Client,
    sessions: Vec<Session>,
    random: Random,
}

impl Trader<'_> {
    async fn log_in(&mut self) -> Result<()> {
        self.sessions.clear();
        for n in 0..TRADERS {
            let address = trader_address(n)?;
            let nonce = self
                .client
                .post("/v1/auth/nonce", None, json!({ "wallet_address": address, "provider_id": self.demo.provider_id }))
                .await?;
            let nonce = nonce["nonce"].as_str().unwrap_or_default().to_string();
            let message = crate::domain::session::login_message(&nonce);
            let signature = wallet_auth::sign_personal(&trader_key(n), message.as_bytes()).map_err(|_| Error::internal("demo key"))?;
            let body = json!({
                "provider_id": self.demo.provider_id,
                "wallet_address": address,
                "signature": format!("0x{}", wallet_auth::to_hex(&signature)),
                "nonce": nonce,
            });
            let login = self.client.post("/v1/auth/login", None, body).await?;
            self.sessions.push(Session {
                address,
                access_token: login["access_token"].as_str().unwrap_or_default().to_string(),
                session_id: login["session_id"].as_str().unwrap_or_default().to_string(),
            });
        }
        Ok(())
    }

    /// One trade: mostly a bet of 1 to 25 tokens, sometimes a sale, on a random open market
    /// of the demo provider.
    async fn trade(&mut self) -> Result<()> {
        if self.sessions.is_empty() {
            self.log_in().await?;
        }
        let search = json!({ "filters": { "status": "active" }, "pagination": { "per_page": 100 } });
        let found = self.client.post("/v1/markets/search", None, search).await?;
        let markets: Vec<&Value> = found["data"]
            .as_array()
            .map(|all| all.iter().filter(|m| m["provider"]["id"] == self.demo.provider_id.as_str()).collect())
            .unwrap_or_default();
        if markets.is_empty() {
            return Ok(());
        }
        let market_id = markets[self.random.below(markets.len())]["id"].as_str().unwrap_or_default().to_string();
        let market = self.client.get(&format!("/v1/markets/{market_id}"), None).await?;
        let outcomes = market["outcomes"].as_array().cloned().unwrap_or_default();
        if outcomes.is_empty() {
            return Ok(());
        }
        let outcome_id = outcomes[self.random.below(outcomes.len())]["id"].as_str().unwrap_or_default().to_string();
        let who = self.random.below(self.sessions.len());
        let session = &self.sessions[who];
        let tokens = 1 + self.random.below(25) as u128;
        let selling = self.random.below(5) == 0;
        let (path, body) = match selling {
            true => (
                "sell",
                json!({ "session_id": session.session_id, "outcome_id": outcome_id, "target_proceeds": (tokens * ONE / 2).to_string() }),
            ),
            false => ("bet", json!({ "session_id": session.session_id, "outcome_id": outcome_id, "amount": (tokens * ONE).to_string() })),
        };
        let traded = self.client.post(&format!("/v1/markets/{market_id}/{path}"), Some(&session.access_token), body).await;
        if let Err(Error::Internal(why)) = &traded {
            if why.starts_with("401") {
                self.sessions.clear();
            } else if why.contains("balance") {
                let address = session.address.clone();
                self.demo.deposit(self.client, &address, 1_000, "demo-top-up").await?;
            }
        }
        traded.map(drop)
    }
}

/// A small xorshift generator: the demo's choices need no cryptographic randomness.
struct Random(u64);

impl Random {
    fn new() -> Random {
        let mut seed = [0u8; 8];
        let _ = getrandom::fill(&mut seed);
        Random(u64::from_le_bytes(seed) | 1)
    }

    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
}
