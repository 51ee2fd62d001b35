//! Setup over the real API, exactly as the README walkthrough does it: provider and token via
//! the CLI, treasury and wallet deposits, markets, and wallets that log in with a real EIP-191
//! signature (nonce -> personal_sign -> login).

use std::path::Path;
use std::sync::Arc;

use serde_json::{json, Value};

use crate::env::{cli_json, Result};

pub(crate) const ONE_TOKEN: u128 = 1_000_000_000_000_000_000;

#[derive(Clone)]
pub(crate) struct Api {
    pub base: String,
    pub http: reqwest::Client,
}

impl Api {
    pub(crate) fn new(base: &str) -> Api {
        let http = reqwest::Client::builder().tcp_nodelay(true).timeout(std::time::Duration::from_secs(120)).build().expect("HTTP client");
        Api { base: base.trim_end_matches('/').to_string(), http }
    }

    pub(crate) async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        bearer: Option<&str>,
        body: Option<&Value>,
    ) -> Result<(u16, Value)> {
        let mut req = self.http.request(method, format!("{}{path}", self.base));
        if let Some(token) = bearer {
            req = req.bearer_auth(token);
        }
        if let Some(body) = body {
            req = req.json(body);
        }
        let res = req.send().await?;
        let status = res.status().as_u16();
        let bytes = res.bytes().await?;
        let value = if bytes.is_empty() { Value::Null } else { serde_json::from_slice(&bytes).unwrap_or(Value::Null) };
        Ok((status, value))
    }

    /// POST that must answer 2xx; returns the body.
    pub(crate) async fn post_ok(&self, path: &str, bearer: Option<&str>, body: &Value) -> Result<Value> {
        let (status, value) = self.call(reqwest::Method::POST, path, bearer, Some(body)).await?;
        if !(200..300).contains(&status) {
            return Err(format!("POST {path} answered {status}: {value}").into());
        }
        Ok(value)
    }

    pub(crate) async fn get_ok(&self, path: &str, bearer: Option<&str>) -> Result<Value> {
        let (status, value) = self.call(reqwest::Method::GET, path, bearer, None).await?;
        if !(200..300).contains(&status) {
            return Err(format!("GET {path} answered {status}: {value}").into());
        }
        Ok(value)
    }
}

#[derive(Clone)]
pub(crate) struct Provider {
    pub id: String,
    pub key: String,
    pub creator_wallet_id: String,
}

pub(crate) const CREATOR_ADDRESS: &str = "0x00000000000000000000000000000000000000c1";

pub(crate) fn create_token(bin: &Path, database_url: &str) -> Result<String> {
    let out = cli_json(bin, database_url, &["token", "create", "--symbol", "USDC", "--name", "USD Coin", "--decimals", "18"])?;
    Ok(out["token_id"].as_str().ok_or("token create printed no token_id")?.to_string())
}

/// A provider (CLI), its treasury funded with `treasury` wei, and a creator wallet.
pub(crate) async fn create_provider(
    api: &Api,
    bin: &Path,
    database_url: &str,
    name: &str,
    token_id: &str,
    treasury: u128,
) -> Result<Provider> {
    let out = cli_json(bin, database_url, &["provider", "create", "--name", name])?;
    let id = out["provider_id"].as_str().ok_or("provider create printed no provider_id")?.to_string();
    let key = out["api_key"].as_str().ok_or("provider create printed no api_key")?.to_string();
    api.post_ok(
        "/v1/providers/treasury/deposits",
        Some(&key),
        &json!({ "token_id": token_id, "amount": treasury.to_string(), "reference": uuid::Uuid::new_v4().to_string() }),
    )
    .await?;
    let wallet = deposit(api, &key, token_id, CREATOR_ADDRESS, 1).await?;
    Ok(Provider { id, key, creator_wallet_id: wallet })
}

/// A provider deposit into a wallet (creating it); returns the wallet id.
pub(crate) async fn deposit(api: &Api, key: &str, token_id: &str, address: &str, amount: u128) -> Result<String> {
    let body = json!({ "wallet_address": address, "token_id": token_id, "amount": amount.to_string(), "reference": uuid::Uuid::new_v4().to_string() });
    let out = api.post_ok("/v1/providers/wallets/deposits", Some(key), &body).await?;
    Ok(out["wallet_id"].as_str().ok_or("deposit answered no wallet_id")?.to_string())
}

pub(crate) fn iso(micros: i64) -> String {
    hanson::domain::time::format_micros(micros)
}

pub(crate) struct MarketSpec<'a> {
    pub question: String,
    pub category: &'a str,
    pub outcomes: usize,
    pub liquidity: u128,
    pub max_bet: u128,
}

#[derive(Clone, Debug)]
pub(crate) struct Market {
    pub id: String,
    pub outcomes: Vec<String>,
}

pub(crate) async fn create_market(api: &Api, p: &Provider, token_id: &str, spec: MarketSpec<'_>) -> Result<Market> {
    let now = hanson::domain::time::now_micros();
    let body = json!({
        "question": spec.question,
        "description": "A market created by hanson-bench.",
        "pricing_method": "lmsr",
        "token_id": token_id,
        "min_bet_amount": "1000",
        "max_bet_amount": spec.max_bet.to_string(),
        "liquidity": spec.liquidity.to_string(),
        "starts_at": iso(now - 3_600_000_000),
        "ends_at": iso(now + 30 * 86_400_000_000),
        "creator_wallet_id": p.creator_wallet_id,
        "creator_fee_percentage": 1,
        "platform_fee_percentage": 1,
        "tags": ["bench"],
        "metadata": { "category": spec.category, "resolution_source": "bench.example.com" },
        "outcomes": (0..spec.outcomes).map(|i| json!({ "title": format!("Outcome {i}"), "outcome_index": i })).collect::<Vec<_>>(),
    });
    let created = api.post_ok("/v1/providers/markets", Some(&p.key), &body).await?;
    let id = created["market"]["id"].as_str().ok_or("create market answered no market.id")?.to_string();
    let detail = api.get_ok(&format!("/v1/markets/{id}"), None).await?;
    let outcomes = detail["outcomes"]
        .as_array()
        .ok_or("market detail without outcomes")?
        .iter()
        .map(|o| o["id"].as_str().unwrap_or_default().to_string())
        .collect();
    Ok(Market { id, outcomes })
}

#[derive(Clone)]
pub(crate) struct Session {
    pub access_token: String,
    pub session_id: String,
}

/// A random wallet: funded by a provider deposit, then logged in with a real signature.
pub(crate) async fn new_trader(api: &Api, p: &Provider, token_id: &str, funds: u128) -> Result<Session> {
    let (key, address) = loop {
        let key = crate::rng::key_bytes();
        if let Ok(address) = wallet_auth::evm_address_from_private_key(&key) {
            break (key, format!("0x{}", wallet_auth::to_hex(&address)));
        }
    };
    deposit(api, &p.key, token_id, &address, funds).await?;
    let nonce = api.post_ok("/v1/auth/nonce", None, &json!({ "wallet_address": address, "provider_id": p.id })).await?;
    let nonce = nonce["nonce"].as_str().ok_or("nonce answered no nonce")?.to_string();
    let message = format!("Sign this message to authenticate with nonce: {nonce}");
    let signature = wallet_auth::sign_personal(&key, message.as_bytes()).map_err(|e| format!("sign: {e:?}"))?;
    let login = api
        .post_ok(
            "/v1/auth/login",
            None,
            &json!({
                "provider_id": p.id,
                "wallet_address": address,
                "signature": format!("0x{}", wallet_auth::to_hex(&signature)),
                "nonce": nonce,
            }),
        )
        .await?;
    Ok(Session {
        access_token: login["access_token"].as_str().ok_or("login answered no access_token")?.to_string(),
        session_id: login["session_id"].as_str().ok_or("login answered no session_id")?.to_string(),
    })
}

/// `count` traders, `parallel` at a time.
pub(crate) async fn new_traders(
    api: &Api,
    p: &Provider,
    token_id: &str,
    funds: u128,
    count: usize,
    parallel: usize,
) -> Result<Vec<Session>> {
    let p = Arc::new(p.clone());
    let token_id: Arc<str> = token_id.into();
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..parallel.max(1) {
        let (api, p, token_id, next) = (api.clone(), p.clone(), token_id.clone(), next.clone());
        tasks.spawn(async move {
            let mut out = Vec::new();
            while next.fetch_add(1, std::sync::atomic::Ordering::SeqCst) < count {
                out.push(new_trader(&api, &p, &token_id, funds).await?);
            }
            Ok::<_, crate::env::BoxError>(out)
        });
    }
    let mut all = Vec::with_capacity(count);
    while let Some(r) = tasks.join_next().await {
        all.extend(r.map_err(|e| format!("trader task: {e}"))??);
    }
    Ok(all)
}
