use std::process::Command;

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::helpers::*;
use crate::users::*;

// mpmath references (80 digits) for a 2-outcome market, liquidity 1000e18, fees 1% + 1%:
// a 10e18 bet on outcome 0, then selling half of its shares.
const SHARES: u128 = 19_533_879_041_493_486_047;
const HALF: u128 = SHARES / 2;
const SELL_PROCEEDS: &str = "4908265072462901584";
const SELL_FEE: &str = "98165301449258032";
const SELL_NET: &str = "4810099771013643552";

pub struct Trader {
    pub wallet: TestWallet,
    pub session: Session,
    pub wallet_id: String,
}

/// A market with funded, logged-in traders.
pub struct Arena {
    pub f: Fixture,
    pub market: Value,
    pub traders: Vec<Trader>,
}

impl Arena {
    pub async fn new(traders: usize, funds: u128) -> Arena {
        let f = Fixture::new().await;
        let market = f.market(2).await;
        let mut list = Vec::new();
        for _ in 0..traders {
            list.push(f.trader(funds).await);
        }
        Arena { f, market, traders: list }
    }

    pub fn market_id(&self) -> &str {
        self.market["id"].as_str().unwrap()
    }

    pub fn outcome(&self, i: usize) -> &str {
        self.market["outcomes"][i]["id"].as_str().unwrap()
    }

    pub async fn bet(&self, t: &Trader, outcome: usize, amount: u128) -> Response {
        bet_on(&self.f.app, self.market_id(), self.outcome(outcome), t, amount).await
    }

    pub async fn sell_shares(&self, t: &Trader, outcome: usize, shares: u128) -> Response {
        let body = json!({ "session_id": t.session.session_id, "outcome_id": self.outcome(outcome), "shares_amount": shares.to_string() });
        self.f.app.post(&format!("/v1/markets/{}/sell", self.market_id()), Some(&t.session.access_token), body).await
    }

    pub async fn detail(&self) -> Value {
        self.f.app.get(&format!("/v1/markets/{}", self.market_id()), None).await.body
    }

    pub async fn balance(&self, t: &Trader) -> u128 {
        let p = self.f.app.get("/v1/auth/profile", Some(&t.session.access_token)).await.body;
        p["balances"].as_array().unwrap().iter().find(|b| b["token_id"] == self.f.token_id.as_str()).map_or(0, |b| b["balance"].as_str().unwrap().parse().unwrap())
    }

    pub async fn holdings(&self, t: &Trader) -> Value {
        self.f.app.post("/v1/markets/holdings/search", Some(&t.session.access_token), json!({})).await.body
    }

    pub async fn resolve(&self, winner: usize) -> Response {
        let body = json!({ "winning_outcome_id": self.outcome(winner), "resolver_wallet_id": "resolver-1", "resolution_source": "official feed", "resolution_data": { "score": "2-1" } });
        self.f.app.post(&format!("/v1/providers/markets/{}/resolve", self.market_id()), Some(&self.f.provider.key), body).await
    }

    pub async fn cancel(&self) -> Response {
        let body = json!({ "canceller_wallet_id": "ops-1", "cancellation_source": "ops", "reason": "venue flooded", "cancellation_data": { "ticket": "42" } });
        self.f.app.post(&format!("/v1/providers/markets/{}/cancel", self.market_id()), Some(&self.f.provider.key), body).await
    }

    /// Everything a rejected request must leave untouched.
    pub async fn snapshot(&self) -> Value {
        let mut balances = Vec::new();
        for t in &self.traders {
            balances.push(self.balance(t).await.to_string());
            balances.push(self.holdings(t).await.to_string());
        }
        let trades = self.f.app.post("/v1/markets/positions/search", None, json!({ "filters": { "market_id": self.market_id() } })).await.body;
        json!({ "market": self.detail().await, "balances": balances, "trades": trades["pagination"], "treasury": self.f.treasury_balance().await })
    }
}

pub async fn bet_on(app: &TestApp, market_id: &str, outcome_id: &str, t: &Trader, amount: u128) -> Response {
    let body = json!({ "session_id": t.session.session_id, "outcome_id": outcome_id, "amount": amount.to_string() });
    app.post(&format!("/v1/markets/{market_id}/bet"), Some(&t.session.access_token), body).await
}

impl Fixture {
    /// A wallet funded with `funds` that has logged in.
    pub async fn trader(&self, funds: u128) -> Trader {
        let wallet = TestWallet::random();
        let wallet_id = self.app.fund_wallet(&self.provider, &self.token_id, &wallet.address, funds).await;
        let session = login(&self.app, &self.provider.id, &wallet).await;
        Trader { wallet, session, wallet_id }
    }
}

/// Runs `hanson audit` on the test's database: (passed, report).
pub fn audit(app: &TestApp) -> (bool, String) {
    let out = Command::new(BIN).args(["audit", "--database-url", &app.database_url]).output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned())
}

fn wei(v: &Value) -> u128 {
    v.as_str().unwrap_or_else(|| panic!("not a wei string: {v}")).parse().unwrap()
}

#[tokio::test]
async fn bet_and_sell_match_the_reference_and_move_money_exactly() {
    let a = Arena::new(1, 100 * ONE_TOKEN).await;
    let t = &a.traders[0];
    let r = a.bet(t, 0, 10 * ONE_TOKEN).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let b = &r.body;
    assert!(b["bet_id"].is_string());
    assert_eq!(b["market_id"], a.market_id());
    assert_eq!(b["outcome_id"], a.outcome(0));
    assert_eq!(b["session_id"], t.session.session_id);
    assert_eq!(b["amount"], "10000000000000000000");
    assert_eq!(wei(&b["shares_purchased"]), SHARES);
    assert_eq!(b["average_price"], "0.501692468719757634");
    assert_eq!(b["transaction_fee"], "200000000000000000");
    assert_eq!(b["net_amount"], "9800000000000000000");
    assert_eq!(b["balance_before"], (100 * ONE_TOKEN).to_string());
    assert_eq!(b["balance_after"], (90 * ONE_TOKEN).to_string(), "the fee is part of amount");
    assert_eq!(wei(&b["net_amount"]), wei(&b["amount"]) - wei(&b["transaction_fee"]));
    assert_eq!(b["status"], "confirmed");
    assert!(b["created_at"].as_str().unwrap().ends_with('Z'));

    let d = a.detail().await;
    assert_eq!(d["total_pool"], (1000 * ONE_TOKEN + 98 * ONE_TOKEN / 10).to_string());
    assert_eq!(d["total_volume"], "10000000000000000000");
    assert_eq!(wei(&d["outcomes"][0]["total_shares"]), SHARES);
    assert_eq!(d["outcomes"][0]["total_volume"], "10000000000000000000");
    assert_eq!(d["outcomes"][1]["total_volume"], "0");
    assert_eq!(d["outcomes"][0]["current_price"], "0.503384911583593991");
    assert_eq!(d["outcomes"][1]["current_price"], "0.496615088416406009");
    // Fees: creator floor(fee * 1/2), platform the rest.
    let creator = a.f.app.get(&format!("/v1/providers/wallets/{CREATOR_ADDRESS}"), Some(&a.f.provider.key)).await.body;
    assert_eq!(creator["balances"][0]["balance"], (1 + ONE_TOKEN / 10).to_string());

    let preview = a.f.app.post("/v1/markets/sell-preview", None, json!({ "outcome_id": a.outcome(0), "shares_amount": HALF.to_string() })).await;
    assert_eq!(preview.status, StatusCode::OK, "{}", preview.body);
    assert_eq!(wei(&preview.body["estimated_shares"]), HALF);
    assert_eq!(preview.body["estimated_proceeds"], SELL_PROCEEDS);
    assert_eq!(preview.body["estimated_fee"], SELL_FEE);
    assert_eq!(preview.body["estimated_net_proceeds"], SELL_NET);
    assert_eq!(preview.body["average_price"], "0.502538698231606774");
    assert_eq!(preview.body["new_outcome_price"], "0.501692475183767580");
    assert!(preview.body["price_impact"].as_str().unwrap().starts_with('-'), "selling lowers the price: {}", preview.body);

    let s = a.sell_shares(t, 0, HALF).await;
    assert_eq!(s.status, StatusCode::OK, "{}", s.body);
    let s = &s.body;
    assert!(s["transaction_id"].is_string());
    assert_eq!(s["session_id"], t.session.session_id);
    assert_eq!(wei(&s["shares_sold"]), HALF);
    assert_eq!(s["proceeds"], SELL_PROCEEDS);
    assert_eq!(s["transaction_fee"], SELL_FEE);
    assert_eq!(s["net_proceeds"], SELL_NET);
    assert_eq!(s["average_price"], "0.502538698231606774");
    assert_eq!(wei(&s["balance_after"]), wei(&s["balance_before"]) + wei(&s["net_proceeds"]));
    assert_eq!(wei(&s["balance_before"]), 90 * ONE_TOKEN);
    assert_eq!(s["status"], "confirmed");

    let d = a.detail().await;
    assert_eq!(d["outcomes"][0]["current_price"], "0.501692475183767580");
    assert_eq!(d["outcomes"][1]["current_price"], "0.498307524816232420");
    assert_eq!(wei(&d["total_pool"]), 1000 * ONE_TOKEN + 98 * ONE_TOKEN / 10 - 4_908_265_072_462_901_584);
    assert_eq!(wei(&d["total_volume"]), 10 * ONE_TOKEN + 4_908_265_072_462_901_584);

    // Average-cost basis: half the shares sold removes ceil(9.8e18 * HALF / SHARES) = 4.9e18.
    let h = a.holdings(t).await;
    assert_eq!(h["pagination"]["total"], 1);
    let p = &h["data"][0];
    assert_eq!(wei(&p["shares"]), SHARES - HALF);
    assert_eq!(p["total_invested"], "4900000000000000000");
    assert_eq!(p["average_cost"], "0.501692468719757634");
    assert_eq!(p["current_price"], "0.501692475183767580");
    assert_eq!(p["status"], "active");
    assert_eq!(p["position_type"], "long");
    assert_eq!(p["is_claimable"], false);
    assert_eq!(p["market_id"], a.market_id());
    assert_eq!(p["outcome_id"], a.outcome(0));
    assert_eq!(p["wallet_id"], t.wallet_id);
    let value = wei(&p["current_value"]);
    // floor(shares x price), with the price good to 1e-33: within one wei of the decimal product.
    let shown = (SHARES - HALF) as f64 * 0.501_692_475_183_767_6;
    assert!((value as f64 - shown).abs() < 1e4, "{value} vs {shown}");
    assert_eq!(p["unrealized_pnl"], json!((value as i128 - 4_900_000_000_000_000_000i128).to_string()));
    assert!(audit(&a.f.app).0);
}

#[tokio::test]
async fn sell_by_target_proceeds_gives_at_least_the_target_net() {
    let a = Arena::new(1, 100 * ONE_TOKEN).await;
    let t = &a.traders[0];
    assert_eq!(a.bet(t, 1, 20 * ONE_TOKEN).await.status, StatusCode::OK);
    let target = 3 * ONE_TOKEN;
    let body = json!({ "session_id": t.session.session_id, "outcome_id": a.outcome(1), "target_proceeds": target.to_string() });
    let preview = a.f.app.post("/v1/markets/sell-preview", None, json!({ "outcome_id": a.outcome(1), "target_proceeds": target.to_string() })).await;
    let r = a.f.app.post(&format!("/v1/markets/{}/sell", a.market_id()), Some(&t.session.access_token), body).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let net = wei(&r.body["net_proceeds"]);
    assert!(net >= target, "{net} < {target}");
    assert_eq!(r.body["shares_sold"], preview.body["estimated_shares"]);
    assert_eq!(r.body["net_proceeds"], preview.body["estimated_net_proceeds"]);
    // One share fewer would not have reached the target: check with a shares preview.
    let fewer = wei(&r.body["shares_sold"]) - 1;
    let check = a.f.app.post("/v1/markets/sell-preview", None, json!({ "outcome_id": a.outcome(1), "shares_amount": fewer.to_string() })).await;
    assert!(wei(&check.body["estimated_net_proceeds"]) < target, "{}", check.body);
}

#[tokio::test]
async fn rule_failures_change_nothing() {
    let a = Arena::new(2, 50 * ONE_TOKEN).await;
    let (t, other) = (&a.traders[0], &a.traders[1]);
    assert_eq!(a.bet(t, 0, 5 * ONE_TOKEN).await.status, StatusCode::OK);
    let before = a.snapshot().await;
    let market_path = format!("/v1/markets/{}/bet", a.market_id());
    let sell_path = format!("/v1/markets/{}/sell", a.market_id());
    let bet = |amount: Value| json!({ "session_id": t.session.session_id, "outcome_id": a.outcome(0), "amount": amount });

    assert_problem(&a.bet(t, 0, 46 * ONE_TOKEN).await, 422, "insufficient_balance");
    // A funded wallet asking for more than it holds.
    let poor = a.f.trader(2_000).await;
    assert_problem(&a.bet(&poor, 0, 5_000).await, 422, "insufficient_balance");
    assert_problem(&a.bet(t, 0, 999).await, 422, "bet_below_minimum");
    assert_problem(&a.bet(t, 0, 100 * ONE_TOKEN + 1).await, 422, "bet_above_maximum");
    for bad in [json!("-5"), json!("1.5"), json!("1e18"), json!("0100"), json!("9".repeat(80)), json!(5000), json!("")] {
        let r = a.f.app.post(&market_path, Some(&t.session.access_token), bet(bad.clone())).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{bad}: {}", r.body);
        let code = r.body["code"].as_str().unwrap();
        assert!(code == "validation_failed" || code == "amount_too_large", "{bad}: {code}");
        assert_eq!(r.body["errors"][0]["field"], "amount");
    }
    let mismatch = a.f.app.post(&market_path, Some(&t.session.access_token), json!({ "session_id": other.session.session_id, "outcome_id": a.outcome(0), "amount": "5000" })).await;
    assert_problem(&mismatch, 403, "session_mismatch");
    let unknown_outcome = a.f.app.post(&market_path, Some(&t.session.access_token), json!({ "session_id": t.session.session_id, "outcome_id": uuid(), "amount": "5000" })).await;
    assert_problem(&unknown_outcome, 422, "unknown_outcome");
    let unknown_market = a.f.app.post(&format!("/v1/markets/{}/bet", uuid()), Some(&t.session.access_token), bet(json!("5000"))).await;
    assert_problem(&unknown_market, 404, "not_found");
    let no_token = a.f.app.post(&market_path, None, bet(json!("5000"))).await;
    assert_problem(&no_token, 401, "unauthenticated");
    let api_key = a.f.app.post(&market_path, Some(&a.f.provider.key), bet(json!("5000"))).await;
    assert_problem(&api_key, 401, "unauthenticated");

    let sell = |body: Value| {
        let app = &a.f.app;
        let path = sell_path.clone();
        let token = t.session.access_token.clone();
        async move { app.post(&path, Some(&token), body).await }
    };
    let sid = t.session.session_id.clone();
    assert_field_error(&sell(json!({ "session_id": sid, "outcome_id": a.outcome(0), "shares_amount": "10", "target_proceeds": "10" })).await, "shares_amount");
    assert_field_error(&sell(json!({ "session_id": sid, "outcome_id": a.outcome(0) })).await, "shares_amount");
    assert_problem(&sell(json!({ "session_id": sid, "outcome_id": a.outcome(0), "shares_amount": (100 * ONE_TOKEN).to_string() })).await, 422, "insufficient_shares");
    assert_problem(&sell(json!({ "session_id": sid, "outcome_id": a.outcome(1), "shares_amount": "1000" })).await, 422, "insufficient_shares");
    assert_problem(&sell(json!({ "session_id": sid, "outcome_id": a.outcome(0), "target_proceeds": (1000 * ONE_TOKEN).to_string() })).await, 422, "insufficient_shares");
    assert_field_error(&sell(json!({ "session_id": sid, "outcome_id": a.outcome(0), "shares_amount": 1000 })).await, "shares_amount");

    // Another wallet's position is invisible to it.
    let position_id = a.holdings(t).await["data"][0]["id"].as_str().unwrap().to_string();
    let foreign = a.f.app.post(&format!("/v1/markets/positions/{position_id}/claim"), Some(&other.session.access_token), json!({ "session_id": other.session.session_id })).await;
    assert_problem(&foreign, 404, "not_found");
    let early = a.f.app.post(&format!("/v1/markets/positions/{position_id}/claim"), Some(&t.session.access_token), json!({ "session_id": t.session.session_id })).await;
    assert_problem(&early, 409, "not_claimable");

    let mut after = a.snapshot().await;
    // The poor trader's wallet was created after the first snapshot; compare the rest.
    assert_eq!(after["market"], before["market"]);
    assert_eq!(after["trades"], before["trades"]);
    assert_eq!(after["treasury"], before["treasury"]);
    after["market"] = Value::Null;
    assert_eq!(after["balances"], before["balances"]);
    assert!(audit(&a.f.app).0);
}

#[tokio::test]
async fn markets_outside_their_window_or_settled_refuse_trades() {
    let f = Fixture::new().await;
    let t = f.trader(10 * ONE_TOKEN).await;
    let mut early = f.market_body(2);
    early["starts_at"] = json!(iso(3600));
    early["ends_at"] = json!(iso(7200));
    let early = f.create_market(early).await.body;
    let r = bet_on(&f.app, early["market"]["id"].as_str().unwrap(), early["outcomes"][0]["id"].as_str().unwrap(), &t, 5000).await;
    assert_problem(&r, 409, "market_not_open");

    let mut ending = f.market_body(2);
    ending["starts_at"] = json!(iso(-60));
    ending["ends_at"] = json!(iso(2));
    let ending = f.create_market(ending).await.body;
    tokio::time::sleep(std::time::Duration::from_millis(2200)).await;
    let r = bet_on(&f.app, ending["market"]["id"].as_str().unwrap(), ending["outcomes"][0]["id"].as_str().unwrap(), &t, 5000).await;
    assert_problem(&r, 409, "market_not_open");
    // A closed market can still be resolved.
    let resolved = f.app.post(&format!("/v1/providers/markets/{}/resolve", ending["market"]["id"].as_str().unwrap()), Some(&f.provider.key),
        json!({ "winning_outcome_id": ending["outcomes"][1]["id"], "resolver_wallet_id": "r" })).await;
    assert_eq!(resolved.status, StatusCode::OK, "{}", resolved.body);
    let r = bet_on(&f.app, ending["market"]["id"].as_str().unwrap(), ending["outcomes"][0]["id"].as_str().unwrap(), &t, 5000).await;
    assert_problem(&r, 409, "market_not_open");

    let live = f.market(2).await;
    let cancel = f.app.post(&format!("/v1/providers/markets/{}/cancel", live["id"].as_str().unwrap()), Some(&f.provider.key),
        json!({ "canceller_wallet_id": "c", "reason": "test" })).await;
    assert_eq!(cancel.status, StatusCode::OK, "{}", cancel.body);
    let r = bet_on(&f.app, live["id"].as_str().unwrap(), live["outcomes"][0]["id"].as_str().unwrap(), &t, 5000).await;
    assert_problem(&r, 409, "market_not_open");
    assert_eq!(f.app.get("/v1/auth/profile", Some(&t.session.access_token)).await.body["balances"][0]["balance"], (10 * ONE_TOKEN).to_string());
    // Settled markets cannot be settled again or edited.
    let again = f.app.post(&format!("/v1/providers/markets/{}/resolve", live["id"].as_str().unwrap()), Some(&f.provider.key),
        json!({ "winning_outcome_id": live["outcomes"][0]["id"], "resolver_wallet_id": "r" })).await;
    assert_problem(&again, 409, "market_settled");
    let edit = f.app.put(&format!("/v1/providers/markets/{}", live["id"].as_str().unwrap()), Some(&f.provider.key), json!({ "question": "Changed?" })).await;
    assert_problem(&edit, 409, "market_settled");
}

#[tokio::test]
async fn another_tenants_market_is_forbidden() {
    let f = Fixture::new().await;
    let market = f.market(2).await;
    let other = f.app.create_provider("Other Co");
    let wallet = TestWallet::random();
    f.app.fund_wallet(&other, &f.token_id, &wallet.address, ONE_TOKEN).await;
    let session = login(&f.app, &other.id, &wallet).await;
    let t = Trader { wallet, session, wallet_id: String::new() };
    let r = bet_on(&f.app, market["id"].as_str().unwrap(), market["outcomes"][0]["id"].as_str().unwrap(), &t, 5000).await;
    assert_problem(&r, 403, "wrong_provider");
}

#[tokio::test]
async fn resolution_pays_winners_exactly_and_returns_the_surplus() {
    let a = Arena::new(6, 100 * ONE_TOKEN).await;
    let amounts = [7, 3, 11, 5, 2, 9];
    for (i, t) in a.traders.iter().enumerate() {
        let r = a.bet(t, i % 2, amounts[i] * ONE_TOKEN).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    }
    // Trade both ways: two traders sell part of what they bought.
    for (i, t) in a.traders[..2].iter().enumerate() {
        let shares = wei(&a.holdings(t).await["data"][0]["shares"]);
        let r = a.sell_shares(t, i % 2, shares / 3).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    }
    let treasury_before = wei(&json!(a.f.treasury_balance().await));
    let d = a.detail().await;
    let pool = wei(&d["total_pool"]);
    let winning_shares = wei(&d["outcomes"][0]["total_shares"]);

    let r = a.resolve(0).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let b = &r.body;
    assert_eq!(b["market_id"], a.market_id());
    assert_eq!(b["winning_outcome_id"], a.outcome(0));
    assert_eq!(wei(&b["total_pool"]), pool);
    assert_eq!(wei(&b["winning_pool"]), winning_shares);
    assert_eq!(b["payout_ratio"], "1");
    assert_eq!(b["positions_updated"], 6);
    assert_eq!(b["resolution_source"], "official feed");
    assert_eq!(b["resolver_wallet_id"], "resolver-1");
    assert_eq!(b["status"], "resolved");
    assert!(b["resolved_at"].is_string());
    assert_eq!(wei(&json!(a.f.treasury_balance().await)), treasury_before + pool - winning_shares, "the surplus returns at once");
    let d = a.detail().await;
    assert_eq!(d["status"], "resolved");
    assert_eq!(d["resolution_source"], "official feed");
    assert_eq!(wei(&d["total_pool"]), winning_shares);

    for (i, t) in a.traders.iter().enumerate() {
        let h = a.holdings(t).await;
        let p = &h["data"][0];
        let before = a.balance(t).await;
        let claim = a.f.app.post(&format!("/v1/markets/positions/{}/claim", p["id"].as_str().unwrap()), Some(&t.session.access_token), json!({ "session_id": t.session.session_id })).await;
        if i % 2 == 0 {
            assert_eq!(p["status"], "won");
            assert_eq!(p["is_claimable"], true);
            assert_eq!(claim.status, StatusCode::OK, "{}", claim.body);
            let c = &claim.body;
            assert!(c["claim_id"].is_string());
            assert_eq!(c["position_id"], p["id"]);
            assert_eq!(c["market_id"], a.market_id());
            assert_eq!(c["outcome_id"], a.outcome(0));
            assert_eq!(c["session_id"], t.session.session_id);
            assert_eq!(c["shares_claimed"], p["shares"]);
            assert_eq!(c["claimed_amount"], p["shares"], "one wei per winning share");
            assert_eq!(c["payout_ratio"], "1");
            assert_eq!(wei(&c["balance_before"]), before);
            assert_eq!(wei(&c["balance_after"]), before + wei(&p["shares"]));
            assert_eq!(c["status"], "completed");
            let twice = a.f.app.post(&format!("/v1/markets/positions/{}/claim", p["id"].as_str().unwrap()), Some(&t.session.access_token), json!({ "session_id": t.session.session_id })).await;
            assert_problem(&twice, 409, "already_claimed");
            assert_eq!(a.holdings(t).await["data"][0]["status"], "claimed");
        } else {
            assert_eq!(p["status"], "lost");
            assert_eq!(p["current_value"], "0");
            assert_problem(&claim, 409, "not_claimable");
            assert_eq!(a.balance(t).await, before);
        }
    }
    assert_eq!(a.detail().await["total_pool"], "0", "every winner claimed");
    let (ok, report) = audit(&a.f.app);
    assert!(ok, "{report}");
    assert!(report.starts_with("audit ok"), "{report}");
}

#[tokio::test]
async fn cancellation_refunds_cost_basis_in_full() {
    let a = Arena::new(4, 100 * ONE_TOKEN).await;
    for (i, t) in a.traders.iter().enumerate() {
        assert_eq!(a.bet(t, i % 2, (i as u128 + 1) * ONE_TOKEN).await.status, StatusCode::OK);
    }
    let treasury_before = wei(&json!(a.f.treasury_balance().await));
    let pool = wei(&a.detail().await["total_pool"]);
    let mut bases = Vec::new();
    for t in &a.traders {
        bases.push(wei(&a.holdings(t).await["data"][0]["total_invested"]));
    }
    let balances: Vec<u128> = futures_balances(&a).await;
    let r = a.cancel().await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let b = &r.body;
    assert_eq!(b["market_id"], a.market_id());
    assert!(b["cancelled_at"].is_string());
    assert_eq!(wei(&b["total_refund_amount"]), bases.iter().sum::<u128>());
    assert_eq!(b["positions_refunded"], 4);
    assert_eq!(b["refund_ratio"], "1");
    assert_eq!(b["cancellation_source"], "ops");
    assert_eq!(b["reason"], "venue flooded");
    assert_eq!(b["cancellation_data"], json!({ "ticket": "42" }));
    assert_eq!(b["status"], "cancelled");
    let refunds = b["user_refunds"].as_array().unwrap();
    assert_eq!(refunds.len(), 4);
    for (i, t) in a.traders.iter().enumerate() {
        let entry = refunds.iter().find(|r| r["wallet_id"] == t.wallet_id.as_str()).unwrap();
        assert_eq!(wei(&entry["refund_amount"]), bases[i]);
        assert_eq!(entry["original_positions"], 1);
        assert_eq!(a.balance(t).await, balances[i] + bases[i]);
        assert_eq!(a.holdings(t).await["data"][0]["status"], "refunded");
    }
    assert_eq!(wei(&json!(a.f.treasury_balance().await)), treasury_before + pool - bases.iter().sum::<u128>());
    assert_eq!(a.detail().await["total_pool"], "0");
    let (ok, report) = audit(&a.f.app);
    assert!(ok, "{report}");
}

async fn futures_balances(a: &Arena) -> Vec<u128> {
    let mut out = Vec::new();
    for t in &a.traders {
        out.push(a.balance(t).await);
    }
    out
}

#[tokio::test]
async fn cancellation_with_a_short_pool_scales_refunds_pro_rata() {
    let f = Fixture::new().await;
    let mut body = f.market_body(2);
    body["liquidity"] = json!(ONE_TOKEN.to_string());
    body["creator_fee_percentage"] = json!(0);
    body["platform_fee_percentage"] = json!(0);
    let created = f.create_market(body).await.body;
    let market_id = created["market"]["id"].as_str().unwrap().to_string();
    let yes = created["outcomes"][0]["id"].as_str().unwrap().to_string();
    let no = created["outcomes"][1]["id"].as_str().unwrap().to_string();
    let early = f.trader(100 * ONE_TOKEN).await;
    let others = [f.trader(100 * ONE_TOKEN).await, f.trader(100 * ONE_TOKEN).await, f.trader(100 * ONE_TOKEN).await];
    // The early trader twice buys cheap and sells after others bought dear: the profit it
    // takes out of the pool comes from holders whose full cost basis is still owed on
    // cancellation, so the remaining cost bases exceed the pool.
    let sell_all = |outcome: String| {
        let app = &f.app;
        let early = &early;
        let market_id = market_id.clone();
        async move {
            let h = app.post("/v1/markets/holdings/search", Some(&early.session.access_token), json!({ "filters": { "outcome_id": outcome, "status": "active" } })).await.body;
            let shares = h["data"][0]["shares"].as_str().unwrap().to_string();
            let r = app.post(&format!("/v1/markets/{market_id}/sell"), Some(&early.session.access_token),
                json!({ "session_id": early.session.session_id, "outcome_id": outcome, "shares_amount": shares })).await;
            assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        }
    };
    assert_eq!(bet_on(&f.app, &market_id, &yes, &early, 5 * ONE_TOKEN).await.status, StatusCode::OK);
    assert_eq!(bet_on(&f.app, &market_id, &yes, &others[0], 30 * ONE_TOKEN).await.status, StatusCode::OK);
    sell_all(yes.clone()).await;
    assert_eq!(bet_on(&f.app, &market_id, &no, &others[1], 60 * ONE_TOKEN).await.status, StatusCode::OK);
    assert_eq!(bet_on(&f.app, &market_id, &yes, &early, 5 * ONE_TOKEN).await.status, StatusCode::OK);
    assert_eq!(bet_on(&f.app, &market_id, &yes, &others[2], 60 * ONE_TOKEN).await.status, StatusCode::OK);
    sell_all(yes.clone()).await;

    let pool = wei(&f.app.get(&format!("/v1/markets/{market_id}"), None).await.body["total_pool"]);
    let mut bases = Vec::new();
    for t in &others {
        let h = f.app.post("/v1/markets/holdings/search", Some(&t.session.access_token), json!({})).await.body;
        bases.push(wei(&h["data"][0]["total_invested"]));
    }
    let owed: u128 = bases.iter().sum();
    assert!(owed > pool, "the scenario needs a short pool: owed {owed}, pool {pool}");

    let r = f.app.post(&format!("/v1/providers/markets/{market_id}/cancel"), Some(&f.provider.key), json!({ "canceller_wallet_id": "c", "reason": "void" })).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let ratio = r.body["refund_ratio"].as_str().unwrap();
    assert!(ratio.starts_with("0."), "{ratio}");
    let mut paid = 0u128;
    for (t, basis) in others.iter().zip(&bases) {
        let expected = hanson::domain::num::mul_div(*basis, pool, owed, hanson::domain::num::Rounding::Down).unwrap();
        let entry = r.body["user_refunds"].as_array().unwrap().iter().find(|e| e["wallet_id"] == t.wallet_id.as_str()).unwrap().clone();
        assert_eq!(wei(&entry["refund_amount"]), expected);
        paid += expected;
    }
    assert_eq!(r.body["positions_refunded"], 3, "the early trader's closed positions hold nothing");
    assert_eq!(wei(&r.body["total_refund_amount"]), paid);
    assert!(pool - paid < 2, "only rounding dust returns to the treasury");
    let (ok, report) = audit(&f.app);
    assert!(ok, "{report}");
}

#[tokio::test]
async fn idempotency_keys_replay_instead_of_acting_twice() {
    let a = Arena::new(1, 100 * ONE_TOKEN).await;
    let t = &a.traders[0];
    let path = format!("/v1/markets/{}/bet", a.market_id());
    let body = json!({ "session_id": t.session.session_id, "outcome_id": a.outcome(0), "amount": ONE_TOKEN.to_string() });
    let send = |body: Value, key: &'static str| {
        let req = a.f.app.client.post(format!("{}{}", a.f.app.base, path)).bearer_auth(&t.session.access_token).header("Idempotency-Key", key).json(&body);
        async move { req.send().await.unwrap() }
    };
    let first = send(body.clone(), "bet-1").await;
    assert_eq!(first.status(), StatusCode::OK);
    assert!(first.headers().get("idempotent-replayed").is_none());
    let first: Value = first.json().await.unwrap();
    let second = send(body.clone(), "bet-1").await;
    assert_eq!(second.status(), StatusCode::OK);
    assert_eq!(second.headers()["idempotent-replayed"], "true");
    let second: Value = second.json().await.unwrap();
    assert_eq!(first, second);
    assert_eq!(a.balance(t).await, 99 * ONE_TOKEN, "executed once");
    let trades = a.f.app.post("/v1/markets/positions/search", None, json!({ "filters": { "market_id": a.market_id() } })).await.body;
    assert_eq!(trades["pagination"]["total"], 1);

    let mut other = body.clone();
    other["amount"] = json!((2 * ONE_TOKEN).to_string());
    let reused = send(other, "bet-1").await;
    assert_eq!(reused.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let reused: Value = reused.json().await.unwrap();
    assert_eq!(reused["code"], "idempotency_key_reused");
    assert_eq!(a.balance(t).await, 99 * ONE_TOKEN);

    // Provider operations take keys too.
    let deposit = json!({ "token_id": a.f.token_id, "amount": "5", "reference": "idem-dep" });
    let mk = |k: &'static str| a.f.app.client.post(format!("{}/v1/providers/treasury/deposits", a.f.app.base)).bearer_auth(&a.f.provider.key).header("Idempotency-Key", k).json(&deposit).send();
    let d1 = mk("dep-1").await.unwrap();
    assert_eq!(d1.status(), StatusCode::CREATED);
    let d2 = mk("dep-1").await.unwrap();
    assert_eq!(d2.status(), StatusCode::CREATED);
    assert_eq!(d2.headers()["idempotent-replayed"], "true");
}

#[tokio::test]
async fn trade_records_and_price_history_are_searchable() {
    let a = Arena::new(2, 100 * ONE_TOKEN).await;
    let (t0, t1) = (&a.traders[0], &a.traders[1]);
    for (t, outcome, amount) in [(t0, 0, 3), (t1, 1, 4), (t0, 0, 5)] {
        assert_eq!(a.bet(t, outcome, amount * ONE_TOKEN).await.status, StatusCode::OK);
    }
    let shares = wei(&a.holdings(t0).await["data"][0]["shares"]);
    assert_eq!(a.sell_shares(t0, 0, shares / 2).await.status, StatusCode::OK);

    let all = a.f.app.post("/v1/markets/positions/search", None, json!({ "filters": { "market_id": a.market_id() } })).await;
    assert_eq!(all.status, StatusCode::OK);
    assert_eq!(all.body["pagination"], json!({ "page": 1, "per_page": 20, "total": 4, "total_pages": 1 }));
    let first = &all.body["data"][0];
    assert_eq!(first["transaction_type"], "sell", "newest first");
    for field in ["id", "market_id", "outcome_id", "wallet_id", "wallet_address", "transaction_type", "amount", "shares", "price", "created_at"] {
        assert!(!first[field].is_null(), "{field}");
    }
    assert_eq!(first["wallet_address"], t0.wallet.address);
    let buys = a.f.app.post("/v1/markets/positions/search", None, json!({ "filters": { "market_id": a.market_id(), "transaction_type": "buy" }, "sort": { "field": "amount", "direction": "asc" } })).await.body;
    let amounts: Vec<&str> = buys["data"].as_array().unwrap().iter().map(|t| t["amount"].as_str().unwrap()).collect();
    assert_eq!(amounts, ["3000000000000000000", "4000000000000000000", "5000000000000000000"]);
    let mine = a.f.app.post("/v1/markets/positions/search", None, json!({ "filters": { "wallet_address": t1.wallet.address.to_uppercase().replace("0X", "0x") } })).await.body;
    assert_eq!(mine["pagination"]["total"], 1);
    let future = a.f.app.post("/v1/markets/positions/search", None, json!({ "filters": { "from_date": iso(3600) } })).await.body;
    assert_eq!(future["pagination"]["total"], 0);
    let past = a.f.app.post("/v1/markets/positions/search", None, json!({ "filters": { "from_date": iso(-3600), "to_date": iso(3600) } })).await.body;
    assert_eq!(past["pagination"]["total"], 4);
    let paged = a.f.app.post("/v1/markets/positions/search", None, json!({ "pagination": { "page": 2, "per_page": 3 } })).await.body;
    assert_eq!(paged["data"].as_array().unwrap().len(), 1);
    assert_eq!(paged["pagination"]["total_pages"], 2);
    assert_field_error(&a.f.app.post("/v1/markets/positions/search", None, json!({ "filters": { "transaction_type": "swap" } })).await, "filters.transaction_type");
    assert_field_error(&a.f.app.post("/v1/markets/positions/search", None, json!({ "filters": { "from_date": "yesterday" } })).await, "filters.from_date");

    // Raw price history: one point per outcome per trade.
    let raw = a.f.app.post("/v1/markets/price-history/search", None, json!({ "filters": { "market_id": a.market_id() }, "pagination": { "per_page": 100 } })).await;
    assert_eq!(raw.status, StatusCode::OK, "{}", raw.body);
    assert_eq!(raw.body["pagination"]["total"], 8);
    let newest = &raw.body["data"][0];
    for field in ["market_id", "outcome_id", "price", "volume", "timestamp"] {
        assert!(!newest[field].is_null(), "{field}");
    }
    let detail = a.detail().await;
    let latest_prices: Vec<&Value> = raw.body["data"].as_array().unwrap()[..2].iter().collect();
    for p in latest_prices {
        let outcome = detail["outcomes"].as_array().unwrap().iter().find(|o| o["id"] == p["outcome_id"]).unwrap();
        assert_eq!(p["price"], outcome["current_price"]);
    }
    // Hourly buckets: every trade happened within this hour or two, so at most 2 buckets per outcome,
    // each carrying the last price and summed volume.
    let hourly = a.f.app.post("/v1/markets/price-history/search", None, json!({ "filters": { "market_id": a.market_id(), "interval": "1h" }, "sort": { "field": "timestamp", "direction": "asc" } })).await.body;
    let buckets = hourly["data"].as_array().unwrap();
    assert!(buckets.len() == 2 || buckets.len() == 4, "{hourly}");
    let volume: u128 = buckets.iter().map(|b| wei(&b["volume"])).sum();
    assert_eq!(volume, wei(&detail["total_volume"]));
    for b in buckets {
        let ts = b["timestamp"].as_str().unwrap();
        assert!(ts.ends_with(":00:00.000000Z"), "bucket starts on the hour: {ts}");
    }
    // Buckets agree with the raw points aggregated here: last price and summed volume per
    // (outcome, minute), for the whole range and for a range starting at the second point.
    let mut raw_points = raw.body["data"].as_array().unwrap().clone();
    raw_points.reverse();
    for from in [None, Some(raw_points[2]["timestamp"].clone())] {
        let mut filters = json!({ "market_id": a.market_id(), "interval": "1m" });
        let mut points: Vec<&Value> = raw_points.iter().collect();
        if let Some(from) = &from {
            filters["from_date"] = from.clone();
            points.retain(|p| p["timestamp"].as_str().unwrap() >= from.as_str().unwrap());
        }
        let mut expected: Vec<(String, String, String, u128)> = Vec::new();
        for p in points {
            let ts = p["timestamp"].as_str().unwrap();
            let minute = format!("{}:00.000000Z", &ts[..16]);
            let outcome = p["outcome_id"].as_str().unwrap().to_string();
            match expected.iter_mut().find(|e| e.0 == minute && e.1 == outcome) {
                Some(e) => {
                    e.2 = p["price"].as_str().unwrap().to_string();
                    e.3 += wei(&p["volume"]);
                }
                None => expected.push((minute, outcome, p["price"].as_str().unwrap().to_string(), wei(&p["volume"]))),
            }
        }
        let got = a.f.app.post("/v1/markets/price-history/search", None, json!({ "filters": filters, "pagination": { "per_page": 100 } })).await.body;
        let got: Vec<(String, String, String, u128)> = got["data"].as_array().unwrap().iter().map(|b| (
            b["timestamp"].as_str().unwrap().to_string(), b["outcome_id"].as_str().unwrap().to_string(), b["price"].as_str().unwrap().to_string(), wei(&b["volume"]),
        )).collect();
        for e in &expected {
            assert!(got.contains(e), "missing bucket {e:?} in {got:?}");
        }
        assert_eq!(got.len(), expected.len());
    }
    assert_field_error(&a.f.app.post("/v1/markets/price-history/search", None, json!({ "filters": { "market_id": a.market_id(), "interval": "2h" } })).await, "filters.interval");
    assert_field_error(&a.f.app.post("/v1/markets/price-history/search", None, json!({})).await, "filters.market_id");
}

#[tokio::test]
async fn holdings_show_only_the_callers_positions() {
    let a = Arena::new(2, 100 * ONE_TOKEN).await;
    let (t0, t1) = (&a.traders[0], &a.traders[1]);
    assert_eq!(a.bet(t0, 0, ONE_TOKEN).await.status, StatusCode::OK);
    assert_eq!(a.bet(t0, 1, 3 * ONE_TOKEN).await.status, StatusCode::OK);
    assert_eq!(a.bet(t1, 1, 2 * ONE_TOKEN).await.status, StatusCode::OK);
    let h0 = a.f.app.post("/v1/markets/holdings/search", Some(&t0.session.access_token), json!({ "sort": { "field": "current_value", "direction": "desc" } })).await.body;
    assert_eq!(h0["pagination"]["total"], 2);
    let values: Vec<u128> = h0["data"].as_array().unwrap().iter().map(|p| wei(&p["current_value"])).collect();
    assert!(values[0] >= values[1]);
    assert!(h0["data"].as_array().unwrap().iter().all(|p| p["wallet_id"] == t0.wallet_id.as_str()));
    let h1 = a.holdings(t1).await;
    assert_eq!(h1["pagination"]["total"], 1);
    let filtered = a.f.app.post("/v1/markets/holdings/search", Some(&t0.session.access_token), json!({ "filters": { "outcome_id": a.outcome(1), "status": "active", "position_type": "long" } })).await.body;
    assert_eq!(filtered["pagination"]["total"], 1);
    assert_problem(&a.f.app.post("/v1/markets/holdings/search", None, json!({})).await, 401, "unauthenticated");
    assert_field_error(&a.f.app.post("/v1/markets/holdings/search", Some(&t0.session.access_token), json!({ "filters": { "position_type": "short" } })).await, "filters.position_type");
}

#[tokio::test]
async fn adding_an_outcome_after_trades_is_funded_by_the_treasury() {
    let a = Arena::new(1, 100 * ONE_TOKEN).await;
    assert_eq!(a.bet(&a.traders[0], 0, 10 * ONE_TOKEN).await.status, StatusCode::OK);
    let before = a.detail().await;
    let treasury_before = wei(&json!(a.f.treasury_balance().await));
    let r = a.f.app.post(&format!("/v1/providers/markets/{}/outcomes", a.market_id()), Some(&a.f.provider.key), json!({ "title": "Draw", "outcome_index": 2 })).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let after = a.detail().await;
    assert_eq!(after["b"], before["b"], "b stays once trading started");
    let charged = treasury_before - wei(&json!(a.f.treasury_balance().await));
    assert!(charged > 0);
    assert_eq!(wei(&after["total_pool"]), wei(&before["total_pool"]) + charged);
    // Existing price ratios are kept: p0/p1 before equals p0/p1 after (to display precision).
    let ratio = |d: &Value| {
        let p = |i: usize| d["outcomes"][i]["current_price"].as_str().unwrap().parse::<f64>().unwrap();
        p(0) / p(1)
    };
    assert!((ratio(&before) - ratio(&after)).abs() < 1e-12);
    let (ok, report) = audit(&a.f.app);
    assert!(ok, "{report}");
}

#[tokio::test]
async fn a_logged_out_session_cannot_trade_or_replay() {
    let a = Arena::new(1, 10 * ONE_TOKEN).await;
    let t = &a.traders[0];
    let path = format!("/v1/markets/{}/bet", a.market_id());
    let body = json!({ "session_id": t.session.session_id, "outcome_id": a.outcome(0), "amount": ONE_TOKEN.to_string() });
    let keyed = |body: Value| a.f.app.client.post(format!("{}{}", a.f.app.base, path)).bearer_auth(&t.session.access_token).header("Idempotency-Key", "k-1").json(&body).send();
    assert_eq!(keyed(body.clone()).await.unwrap().status(), StatusCode::OK);
    assert_eq!(a.f.app.post("/v1/auth/logout", Some(&t.session.access_token), json!({})).await.status, StatusCode::OK);
    let fresh = a.bet(t, 0, ONE_TOKEN).await;
    assert_problem(&fresh, 401, "unauthenticated");
    let replay = keyed(body).await.unwrap();
    assert_eq!(replay.status(), StatusCode::UNAUTHORIZED, "no replay for a revoked session");
    let trades = a.f.app.post("/v1/markets/positions/search", None, json!({ "filters": { "market_id": a.market_id() } })).await.body;
    assert_eq!(trades["pagination"]["total"], 1);
}

/// Every field of a search item equals the (uncached) detail view's.
fn assert_summary_of(item: &Value, detail: &Value) {
    for (key, value) in item.as_object().unwrap() {
        match key.as_str() {
            "outcomes" | "token" | "provider" => {
                let nested: Vec<(&Value, &Value)> = match value {
                    Value::Array(outcomes) => outcomes.iter().zip(detail[key].as_array().unwrap()).collect(),
                    one => vec![(one, &detail[key])],
                };
                assert_eq!(value.as_array().map_or(1, Vec::len), detail[key].as_array().map_or(1, Vec::len), "{key} of {}", item["id"]);
                for (part, whole) in nested {
                    for (k, v) in part.as_object().unwrap() {
                        assert_eq!(v, &whole[k], "{key}.{k} of {}", item["id"]);
                    }
                }
            }
            _ => assert_eq!(value, &detail[key], "{key} of {}", item["id"]),
        }
    }
}

/// Searches under each sort, checks each item against its detail view and the order against
/// the details; returns the items by market id.
async fn search_matches_details(app: &TestApp, context: &str) -> std::collections::HashMap<String, Value> {
    let mut items = std::collections::HashMap::new();
    for (field, direction) in [("created_at", "desc"), ("total_volume", "desc"), ("total_volume", "asc"), ("closes_at", "asc")] {
        let body = json!({ "sort": { "field": field, "direction": direction }, "pagination": { "per_page": 100 } });
        let r = app.post("/v1/markets/search", None, body).await;
        assert_eq!(r.status, StatusCode::OK, "{context}: {}", r.body);
        let data = r.body["data"].as_array().unwrap().clone();
        assert_eq!(r.body["pagination"]["total"], data.len(), "{context}");
        let mut keys = Vec::new();
        for item in &data {
            let id = item["id"].as_str().unwrap();
            let detail = app.get(&format!("/v1/markets/{id}"), None).await.body;
            assert_summary_of(item, &detail);
            let key = match field {
                "total_volume" => format!("{:0>40}", wei(&detail["total_volume"])),
                "closes_at" => detail["closes_at"].as_str().unwrap().to_string(),
                _ => detail["created_at"].as_str().unwrap().to_string(),
            };
            keys.push((key, id.to_string()));
            items.insert(id.to_string(), item.clone());
        }
        let mut sorted = keys.clone();
        sorted.sort();
        if direction == "desc" {
            sorted.reverse();
        }
        assert_eq!(keys, sorted, "{context}: order by {field} {direction}");
    }
    items
}

#[tokio::test]
async fn search_pages_show_every_change_to_their_markets() {
    let a = Arena::new(1, 1_000 * ONE_TOKEN).await;
    let other = a.f.market(3).await;
    let other_id = other["id"].as_str().unwrap();
    let (app, t) = (&a.f.app, &a.traders[0]);
    let first = search_matches_details(app, "fresh").await;
    assert_eq!(first.len(), 2);

    assert_eq!(a.bet(t, 0, 10 * ONE_TOKEN).await.status, StatusCode::OK);
    let after_bet = search_matches_details(app, "after a bet").await;
    assert_ne!(after_bet[a.market_id()]["total_volume"], first[a.market_id()]["total_volume"]);
    assert_ne!(after_bet[a.market_id()]["outcomes"][0]["current_price"], first[a.market_id()]["outcomes"][0]["current_price"]);

    let outcome = other["outcomes"][2]["id"].as_str().unwrap();
    let r = bet_on(app, other_id, outcome, t, 20 * ONE_TOKEN).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    search_matches_details(app, "after a bet moving the volume order").await;

    let position = |h: Value| h["data"].as_array().unwrap().iter().find(|p| p["market_id"] == a.market_id()).unwrap().clone();
    let held = wei(&position(a.holdings(t).await)["shares"]);
    let r = a.sell_shares(t, 0, held / 2).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    search_matches_details(app, "after a sell").await;

    let path = format!("/v1/providers/markets/{}/outcomes/{}", a.market_id(), a.outcome(1));
    let r = app.put(&path, Some(&a.f.provider.key), json!({ "title": "Away side" })).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(search_matches_details(app, "after an outcome edit").await[a.market_id()]["outcomes"][1]["title"], "Away side");

    // A claim drains the pool without touching the market row.
    assert_eq!(a.resolve(0).await.status, StatusCode::OK);
    let resolved = search_matches_details(app, "after resolution").await;
    assert_eq!(resolved[a.market_id()]["status"], "resolved");
    let position_id = position(a.holdings(t).await)["id"].clone();
    let claim = app.post(&format!("/v1/markets/positions/{}/claim", position_id.as_str().unwrap()), Some(&t.session.access_token), json!({ "session_id": t.session.session_id })).await;
    assert_eq!(claim.status, StatusCode::OK, "{}", claim.body);
    let claimed = search_matches_details(app, "after a claim").await;
    assert_ne!(claimed[a.market_id()]["total_pool"], resolved[a.market_id()]["total_pool"]);

    // The end passing turns the status to closed with no write at all.
    let soon = (time::OffsetDateTime::now_utc() + time::Duration::milliseconds(1500)).format(&time::format_description::well_known::Rfc3339).unwrap();
    let r = app.put(&format!("/v1/providers/markets/{other_id}"), Some(&a.f.provider.key), json!({ "ends_at": soon })).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(search_matches_details(app, "before the end").await[other_id]["status"], "active");
    tokio::time::sleep(std::time::Duration::from_millis(1700)).await;
    assert_eq!(search_matches_details(app, "after the end").await[other_id]["status"], "closed");
}

#[tokio::test]
async fn a_position_sold_out_closes_and_a_new_bet_reopens_it() {
    let a = Arena::new(1, 100 * ONE_TOKEN).await;
    let t = &a.traders[0];
    let first = a.bet(t, 0, 10 * ONE_TOKEN).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.body);
    let shares = wei(&first.body["shares_purchased"]);
    let sold = a.sell_shares(t, 0, shares).await;
    assert_eq!(sold.status, StatusCode::OK, "{}", sold.body);
    let closed = &a.holdings(t).await["data"][0];
    assert_eq!((closed["status"].as_str(), closed["shares"].as_str(), closed["total_invested"].as_str()), (Some("closed"), Some("0"), Some("0")));

    let again = a.bet(t, 0, 10 * ONE_TOKEN).await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.body);
    assert_eq!(again.body["position_id"], first.body["position_id"]);
    let reopened = &a.holdings(t).await["data"][0];
    assert_eq!(reopened["status"], "active");
    assert_eq!(reopened["shares"], again.body["shares_purchased"]);
    assert_eq!(reopened["total_invested"], again.body["net_amount"]);
    // Resolution finds it active again.
    let resolved = a.resolve(0).await;
    assert_eq!(resolved.status, StatusCode::OK, "{}", resolved.body);
    assert_eq!(resolved.body["positions_updated"], 1);
    assert_eq!(a.holdings(t).await["data"][0]["status"], "won");
    assert!(audit(&a.f.app).0);
}

#[tokio::test]
async fn the_audit_finds_trades_positions_and_points_that_name_another_markets_outcome_or_no_wallet() {
    use hanson::store::sql::Param;
    let a = Arena::new(1, 100 * ONE_TOKEN).await;
    let r = a.bet(&a.traders[0], 0, ONE_TOKEN).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let trade_id = r.body["bet_id"].as_str().unwrap().to_string();
    let (ok, report) = audit(&a.f.app);
    assert!(ok, "{report}");

    let other = a.f.market(2).await;
    let stray = other["outcomes"][0]["id"].as_str().unwrap().to_string();
    let position_id = r.body["position_id"].as_str().unwrap().to_string();
    let (market, trade, position) = (a.market_id().to_string(), trade_id.clone(), position_id.clone());
    let store = hanson::store::Store::open(&a.f.app.database_url).unwrap();
    let point: i64 = store
        .write(move |c| {
            c.exec("UPDATE trades SET outcome_id = $1 WHERE id = $2", &[Param::Text(&stray), Param::Text(&trade)])?;
            c.exec("UPDATE positions SET outcome_id = $1 WHERE id = $2", &[Param::Text(&stray), Param::Text(&position)])?;
            let seq = c.query_one("SELECT max(seq) FROM price_points WHERE market_id = $1", &[Param::Text(&market)])?.int(0)?;
            c.exec("UPDATE price_points SET outcome_id = $1 WHERE seq = $2", &[Param::Text(&stray), Param::Int(seq)])?;
            Ok(seq)
        })
        .await
        .unwrap();
    let stray = other["outcomes"][0]["id"].as_str().unwrap();
    let market = a.market_id();
    let mut expected = vec![
        format!("trade {trade_id}: outcome {stray} is not an outcome of its market {market}"),
        format!("position {position_id}: outcome {stray} is not an outcome of its market {market}"),
        format!("price point {point}: outcome {stray} is not an outcome of its market {market}"),
        // The position's shares went with it.
        format!("market {market} outcome {}: total_shares {} but positions hold 0", a.outcome(0), r.body["shares_purchased"].as_str().unwrap()),
    ];
    // Only PostgreSQL lets a trade name a wallet that does not exist (migration 0015).
    if crate::BACKEND == Backend::Postgres {
        let trade = trade_id.clone();
        store.write(move |c| c.exec("UPDATE trades SET wallet_id = 'no-such-wallet' WHERE id = $1", &[Param::Text(&trade)])).await.unwrap();
        expected.insert(1, format!("trade {trade_id}: wallet no-such-wallet does not exist"));
    }
    let (ok, report) = audit(&a.f.app);
    assert!(!ok, "{report}");
    let problems: Vec<&str> = report.lines().skip(1).map(|l| l.trim_start_matches("  - ")).collect();
    assert_eq!(problems, expected, "{report}");
}

/// Candles of every width must cover each of the market's price points once: a width whose
/// candles are all gone covers none.
#[tokio::test]
async fn the_audit_finds_a_candle_width_that_covers_no_price_point() {
    use hanson::domain::candle::HOUR;
    use hanson::store::sql::Param;
    let a = Arena::new(1, 100 * ONE_TOKEN).await;
    let r = a.bet(&a.traders[0], 0, ONE_TOKEN).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let (ok, report) = audit(&a.f.app);
    assert!(ok, "{report}");
    let store = hanson::store::Store::open(&a.f.app.database_url).unwrap();
    let market = a.market_id().to_string();
    store
        .write(move |c| c.exec("DELETE FROM price_candles WHERE market_id = $1 AND width = $2", &[Param::Text(&market), Param::Int(HOUR)]))
        .await
        .unwrap();
    let (ok, report) = audit(&a.f.app);
    assert!(!ok, "{report}");
    let problems: Vec<&str> = report.lines().skip(1).map(|l| l.trim_start_matches("  - ")).collect();
    // One point for each of the market's two outcomes.
    assert_eq!(problems, vec![format!("market {}: candles {HOUR} µs wide cover 0 price points, not 2", a.market_id())], "{report}");
}

/// Transfers, trades and price points have no primary key on PostgreSQL (migration 0018):
/// the audit finds a number two records share. On SQLite the number is the rowid, and the
/// database itself refuses the duplicate.
#[tokio::test]
async fn the_audit_finds_a_transfer_trade_or_price_point_number_taken_twice() {
    use hanson::store::sql::Param;
    let a = Arena::new(1, 100 * ONE_TOKEN).await;
    for outcome in [0, 1] {
        let r = a.bet(&a.traders[0], outcome, ONE_TOKEN).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    }
    let (ok, report) = audit(&a.f.app);
    assert!(ok, "{report}");
    let store = hanson::store::Store::open(&a.f.app.database_url).unwrap();
    // Each table's newest record takes the number of its oldest; no amount changes.
    let renumbered = store
        .write(|c| {
            let mut taken = Vec::new();
            for (table, column) in [("transfers", "id"), ("trades", "seq"), ("price_points", "seq")] {
                let first = c.query_one(&format!("SELECT min({column}) FROM {table}"), &[])?.int(0)?;
                let last = c.query_one(&format!("SELECT max({column}) FROM {table}"), &[])?.int(0)?;
                c.exec(&format!("UPDATE {table} SET {column} = $1 WHERE {column} = $2"), &[Param::Int(first), Param::Int(last)])?;
                taken.push(first);
            }
            Ok(taken)
        })
        .await;
    match crate::BACKEND {
        Backend::Sqlite => assert!(renumbered.is_err(), "SQLite let two records share a rowid"),
        Backend::Postgres => {
            let taken = renumbered.expect("renumber the newest records");
            let (ok, report) = audit(&a.f.app);
            assert!(!ok, "{report}");
            let problems: Vec<&str> = report.lines().skip(1).map(|l| l.trim_start_matches("  - ")).collect();
            let expected: Vec<String> = ["transfer", "trade", "price point"]
                .iter()
                .zip(&taken)
                .map(|(record, number)| format!("{record} number {number} is taken by 2 records"))
                .collect();
            assert_eq!(problems, expected, "{report}");
        }
    }
}

/// Runs `sql` on the test's database from a connection of its own, as another process would.
fn change_elsewhere(app: &TestApp, sql: &str) {
    match crate::BACKEND {
        Backend::Sqlite => {
            let path = app.database_url.strip_prefix("sqlite://").expect("a sqlite:// URL");
            let conn = rusqlite::Connection::open(path).expect("open the database");
            conn.busy_timeout(std::time::Duration::from_secs(10)).expect("busy timeout");
            conn.execute_batch(sql).expect("change the database");
        }
        Backend::Postgres => hanson::store::postgres::admin::execute(&app.database_url, sql.to_string()).expect("change the database"),
    }
}

/// A writer that carries markets and balances from one commit to the next (SQLite's) still
/// sees every change made to them between its commits: by a write that is not a trade, and
/// by another connection to the database.
#[tokio::test]
async fn a_trade_sees_its_market_and_balance_as_changed_since_the_last_trade() {
    let a = Arena::new(1, 3 * ONE_TOKEN).await;
    let t = &a.traders[0];
    assert_eq!(a.bet(t, 0, ONE_TOKEN).await.status, StatusCode::OK);
    // A deposit after the first trade pays for a bet the balance left by it could not.
    a.f.app.fund_wallet(&a.f.provider, &a.f.token_id, &t.wallet.address, 5 * ONE_TOKEN).await;
    let r = a.bet(t, 1, 4 * ONE_TOKEN).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body["balance_after"], (3 * ONE_TOKEN).to_string());
    // A third outcome, added through the API: the next trade can bet on it.
    let r = a.f.app.post(&format!("/v1/providers/markets/{}/outcomes", a.market_id()), Some(&a.f.provider.key), json!({ "title": "Draw", "outcome_index": 2 })).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let draw = a.detail().await["outcomes"][2]["id"].as_str().expect("the new outcome").to_string();
    let r = bet_on(&a.f.app, a.market_id(), &draw, t, ONE_TOKEN).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(a.bet(t, 1, ONE_TOKEN).await.status, StatusCode::OK);
    // The market's end moved into the past by another connection: trading stops at once.
    let past = hanson::domain::time::now_micros() - 1_000_000;
    change_elsewhere(&a.f.app, &format!("UPDATE markets SET ends_at = {past} WHERE id = '{}'", a.market_id()));
    assert_problem(&a.bet(t, 0, ONE_TOKEN).await, 409, "market_not_open");
    let (ok, report) = audit(&a.f.app);
    assert!(ok, "{report}");
}
