//! Settlement: resolution pays winners exactly and returns the surplus, cancellation refunds
//! cost bases (pro rata when the pool is short), and a new outcome is funded by the treasury.

use reqwest::StatusCode;
use serde_json::{json, Value};

use super::support::*;

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
        let expected = library::mul_div_down(*basis, pool, owed);
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
