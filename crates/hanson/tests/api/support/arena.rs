//! The trader arena: funded, logged-in wallets trading on a fixture's markets, alone or many at
//! once, through the test's server or another node; and the checks that the books stay exact
//! (trade records in order, replayed through the market maker, and `hanson audit`).

use std::sync::Arc;

use reqwest::StatusCode;
use serde_json::{json, Value};

use super::app::{Fixture, Response, TestApp};
use super::library;
use super::process::audit_on;
use super::wallet::{login, login_at, Session, TestWallet};

/// A wallet funded with the fixture's token that has logged in.
pub(crate) struct Trader {
    pub wallet: TestWallet,
    pub session: Session,
    pub wallet_id: String,
}

impl Fixture {
    /// A wallet funded with `funds` that has logged in.
    pub(crate) async fn trader(&self, funds: u128) -> Trader {
        let wallet = TestWallet::random();
        let wallet_id = self.app.fund_wallet(&self.provider, &self.token_id, &wallet.address, funds).await;
        let session = login(&self.app, &self.provider.id, &wallet).await;
        Trader { wallet, session, wallet_id }
    }

    /// `count` traders funded with `funds` each, shared for concurrent tasks. (Twenty logins
    /// from one address need the login rate limit lifted: `Limits { auth_per_ip: Rule::OFF }`.)
    pub(crate) async fn traders(&self, count: usize, funds: u128) -> Vec<Arc<Trader>> {
        let mut traders = Vec::with_capacity(count);
        for _ in 0..count {
            traders.push(Arc::new(self.trader(funds).await));
        }
        traders
    }

    /// `count` traders funded with `funds` each, logged in through the server at `base`.
    pub(crate) async fn traders_at(&self, client: &reqwest::Client, base: &str, count: usize, funds: u128) -> Vec<Arc<Trader>> {
        let mut traders = Vec::with_capacity(count);
        for _ in 0..count {
            let wallet = TestWallet::random();
            let wallet_id = self.app.fund_wallet(&self.provider, &self.token_id, &wallet.address, funds).await;
            let session = login_at(client, base, &self.provider.id, &wallet).await;
            traders.push(Arc::new(Trader { wallet, session, wallet_id }));
        }
        traders
    }
}

/// A market with funded, logged-in traders.
pub(crate) struct Arena {
    pub f: Fixture,
    pub market: Value,
    pub traders: Vec<Trader>,
}

impl Arena {
    pub(crate) async fn new(traders: usize, funds: u128) -> Arena {
        let f = Fixture::new().await;
        let market = f.market(2).await;
        let mut list = Vec::new();
        for _ in 0..traders {
            list.push(f.trader(funds).await);
        }
        Arena { f, market, traders: list }
    }

    pub(crate) fn market_id(&self) -> &str {
        self.market["id"].as_str().unwrap()
    }

    pub(crate) fn outcome(&self, i: usize) -> &str {
        self.market["outcomes"][i]["id"].as_str().unwrap()
    }

    pub(crate) async fn bet(&self, t: &Trader, outcome: usize, amount: u128) -> Response {
        bet_on(&self.f.app, self.market_id(), self.outcome(outcome), t, amount).await
    }

    pub(crate) async fn sell_shares(&self, t: &Trader, outcome: usize, shares: u128) -> Response {
        sell_on(&self.f.app, &self.market, outcome, t, shares).await
    }

    pub(crate) async fn detail(&self) -> Value {
        self.f.app.get(&format!("/v1/markets/{}", self.market_id()), None).await.body
    }

    pub(crate) async fn balance(&self, t: &Trader) -> u128 {
        let p = self.f.app.get("/v1/auth/profile", Some(&t.session.access_token)).await.body;
        p["balances"].as_array().unwrap().iter().find(|b| b["token_id"] == self.f.token_id.as_str()).map_or(0, |b| b["balance"].as_str().unwrap().parse().unwrap())
    }

    pub(crate) async fn holdings(&self, t: &Trader) -> Value {
        self.f.app.post("/v1/markets/holdings/search", Some(&t.session.access_token), json!({})).await.body
    }

    pub(crate) async fn resolve(&self, winner: usize) -> Response {
        resolve_on(&self.f, &self.market, winner).await
    }

    pub(crate) async fn cancel(&self) -> Response {
        cancel_on(&self.f, &self.market).await
    }

    /// Everything a rejected request must leave untouched.
    pub(crate) async fn snapshot(&self) -> Value {
        let mut balances = Vec::new();
        for t in &self.traders {
            balances.push(self.balance(t).await.to_string());
            balances.push(self.holdings(t).await.to_string());
        }
        let trades = self.f.app.post("/v1/markets/positions/search", None, json!({ "filters": { "market_id": self.market_id() } })).await.body;
        json!({ "market": self.detail().await, "balances": balances, "trades": trades["pagination"], "treasury": self.f.treasury_balance().await })
    }
}

/// A market's id (of a market detail).
pub(crate) fn id_of(market: &Value) -> String {
    market["id"].as_str().unwrap().to_string()
}

/// The id of a market detail's outcome `i`.
pub(crate) fn outcome(market: &Value, i: usize) -> &str {
    market["outcomes"][i]["id"].as_str().unwrap()
}

/// A wei string as a number.
pub(crate) fn wei(v: &Value) -> u128 {
    v.as_str().unwrap_or_else(|| panic!("not a wei string: {v}")).parse().unwrap()
}

/// The body of a bet of `amount` on outcome `i` of a market detail.
pub(crate) fn bet_body(session: &Session, market: &Value, i: usize, amount: u128) -> Value {
    json!({ "session_id": session.session_id, "outcome_id": market["outcomes"][i]["id"], "amount": amount.to_string() })
}

pub(crate) async fn bet_on(app: &TestApp, market_id: &str, outcome_id: &str, t: &Trader, amount: u128) -> Response {
    let body = json!({ "session_id": t.session.session_id, "outcome_id": outcome_id, "amount": amount.to_string() });
    app.post(&format!("/v1/markets/{market_id}/bet"), Some(&t.session.access_token), body).await
}

/// Sells `shares` of outcome `i` of a market detail.
pub(crate) async fn sell_on(app: &TestApp, market: &Value, i: usize, t: &Trader, shares: u128) -> Response {
    let body = json!({ "session_id": t.session.session_id, "outcome_id": outcome(market, i), "shares_amount": shares.to_string() });
    app.post(&format!("/v1/markets/{}/sell", market["id"].as_str().unwrap()), Some(&t.session.access_token), body).await
}

/// Resolves a market (detail) for outcome `winner`, by its provider.
pub(crate) async fn resolve_on(f: &Fixture, market: &Value, winner: usize) -> Response {
    let body = json!({ "winning_outcome_id": outcome(market, winner), "resolver_wallet_id": "resolver-1", "resolution_source": "official feed", "resolution_data": { "score": "2-1" } });
    f.app.post(&format!("/v1/providers/markets/{}/resolve", market["id"].as_str().unwrap()), Some(&f.provider.key), body).await
}

/// Cancels a market (detail), by its provider.
pub(crate) async fn cancel_on(f: &Fixture, market: &Value) -> Response {
    let body = json!({ "canceller_wallet_id": "ops-1", "cancellation_source": "ops", "reason": "venue flooded", "cancellation_data": { "ticket": "42" } });
    f.app.post(&format!("/v1/providers/markets/{}/cancel", market["id"].as_str().unwrap()), Some(&f.provider.key), body).await
}

/// POSTs `body` with a bearer token to any server: the status and the JSON body (null if none).
pub(crate) async fn post(client: &reqwest::Client, url: String, bearer: &str, body: Value) -> (StatusCode, Value) {
    let r = client.post(url).bearer_auth(bearer).json(&body).send().await.expect("request");
    (r.status(), r.json().await.unwrap_or(Value::Null))
}

/// A bet of `amount` on outcome `i` through the server at `base`; it must be placed: its receipt.
pub(crate) async fn bet_at(client: &reqwest::Client, base: &str, market: &Value, i: usize, t: &Trader, amount: u128) -> Value {
    let url = format!("{base}/v1/markets/{}/bet", market["id"].as_str().unwrap());
    let (status, body) = post(client, url, &t.session.access_token, bet_body(&t.session, market, i, amount)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

/// All trade records of a market in the order they were applied.
pub(crate) async fn trades_in_order(app: &TestApp, market_id: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for page in 1.. {
        let r = app
            .post("/v1/markets/positions/search", None, json!({
                "filters": { "market_id": market_id },
                "sort": { "field": "created_at", "direction": "asc" },
                "pagination": { "page": page, "per_page": 100 },
            }))
            .await;
        let data = r.body["data"].as_array().unwrap().clone();
        let done = data.len() < 100;
        out.extend(data);
        if done {
            break;
        }
    }
    out
}

/// Replays trade records through the engine from an empty market and checks every trade and
/// the final prices reproduce exactly.
pub(crate) fn replay(detail: &Value, trades: &[Value]) {
    let b = wei(&detail["b"]);
    let outcomes: Vec<&str> = detail["outcomes"].as_array().unwrap().iter().map(|o| o["id"].as_str().unwrap()).collect();
    let mut q = vec![0u128; outcomes.len()];
    for t in trades {
        let i = outcomes.iter().position(|o| *o == t["outcome_id"].as_str().unwrap()).unwrap();
        let (amount, shares) = (wei(&t["amount"]), wei(&t["shares"]));
        match t["transaction_type"].as_str().unwrap() {
            "buy" => {
                let net = amount - library::fees(detail, amount).1;
                assert_eq!(lmsr::buy(b, &q, i, net).unwrap().shares, shares, "trade {}", t["id"]);
                q[i] += shares;
            }
            _ => {
                assert_eq!(lmsr::sell(b, &q, i, shares).unwrap().proceeds, amount, "trade {}", t["id"]);
                q[i] -= shares;
            }
        }
    }
    let prices = lmsr::prices(b, &q).unwrap();
    for (i, o) in detail["outcomes"].as_array().unwrap().iter().enumerate() {
        assert_eq!(wei(&o["total_shares"]), q[i]);
        assert_eq!(o["current_price"], prices[i].to_string());
    }
}

/// Runs `hanson audit` on the test's database: (passed, report).
pub(crate) fn audit(app: &TestApp) -> (bool, String) {
    audit_on(&app.database_url)
}
