//! Bets and sells: the amounts against an exact reference, every rule that refuses a trade
//! (and changes nothing), idempotency keys, logged-out sessions, positions closed and reopened.

use reqwest::StatusCode;
use serde_json::{json, Value};

use super::support::*;

// mpmath references (80 digits) for a 2-outcome market, liquidity 1000e18, fees 1% + 1%:
// a 10e18 bet on outcome 0, then selling half of its shares.
const SHARES: u128 = 19_533_879_041_493_486_047;

const HALF: u128 = SHARES / 2;

const SELL_PROCEEDS: &str = "4908265072462901584";

const SELL_FEE: &str = "98165301449258032";

const SELL_NET: &str = "4810099771013643552";

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
    let past = library::now_micros() - 1_000_000;
    library::change_elsewhere(&a.f.app.database_url, &format!("UPDATE markets SET ends_at = {past} WHERE id = '{}'", a.market_id()));
    assert_problem(&a.bet(t, 0, ONE_TOKEN).await, 409, "market_not_open");
    let (ok, report) = audit(&a.f.app);
    assert!(ok, "{report}");
}
