use reqwest::StatusCode;
use serde_json::json;

use super::support::*;

// Reference values from mpmath at 80 digits (see crates/lmsr/tests/reference): a 2-outcome
// market with liquidity 1000e18 (b = 1442695040888963407359), 1% + 1% fees, a bet of 10e18.
const SHARES: &str = "19533879041493486047";

#[tokio::test]
async fn bet_preview_matches_the_reference_and_changes_nothing() {
    let f = Fixture::new().await;
    let d = f.market(2).await;
    let outcome_id = d["outcomes"][0]["id"].as_str().unwrap();
    let r = f.app.post("/v1/markets/bet-preview", None, json!({ "outcome_id": outcome_id, "amount": (10 * ONE_TOKEN).to_string() })).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body["outcome_id"], outcome_id);
    assert_eq!(r.body["amount"], "10000000000000000000");
    assert_eq!(r.body["estimated_fee"], "200000000000000000");
    assert_eq!(r.body["net_amount"], "9800000000000000000");
    assert_eq!(r.body["estimated_shares"], SHARES);
    assert_eq!(r.body["average_price"], "0.501692468719757634");
    assert_eq!(r.body["price_impact"], "0.003384937439515269");
    assert_eq!(r.body["new_outcome_price"], "0.503384911583593991");
    assert_eq!(r.body["current_price"], "0.500000000000000000");
    assert_eq!(r.body["market_id"], d["id"]);
    assert_eq!(r.body["token"], json!({ "id": f.token_id, "symbol": "USDC", "decimals": 18 }));
    let after = f.app.get(&format!("/v1/markets/{}", d["id"].as_str().unwrap()), None).await.body;
    assert_eq!(after, d, "a preview changes nothing");
}

#[tokio::test]
async fn previews_enforce_the_trading_rules() {
    let f = Fixture::new().await;
    let d = f.market(2).await;
    let outcome_id = d["outcomes"][0]["id"].as_str().unwrap();
    let preview = |amount: &str| {
        let body = json!({ "outcome_id": outcome_id, "amount": amount });
        let app = &f.app;
        async move { app.post("/v1/markets/bet-preview", None, body).await }
    };
    assert_problem(&preview("999").await, 422, "bet_below_minimum");
    assert_problem(&preview(&(100 * ONE_TOKEN + 1).to_string()).await, 422, "bet_above_maximum");
    assert_eq!(preview(&(100 * ONE_TOKEN).to_string()).await.status, StatusCode::OK, "bounds are inclusive");
    assert_eq!(preview("1000").await.status, StatusCode::OK);
    assert_field_error(&preview("1.5").await, "amount");
    let unknown = f.app.post("/v1/markets/bet-preview", None, json!({ "outcome_id": uuid(), "amount": "1000" })).await;
    assert_problem(&unknown, 422, "unknown_outcome");
    let missing = f.app.post("/v1/markets/bet-preview", None, json!({ "amount": "1000" })).await;
    assert_field_error(&missing, "outcome_id");

    // Before starts_at the market is not open.
    let mut body = f.market_body(2);
    body["starts_at"] = json!(iso(3600));
    body["ends_at"] = json!(iso(7200));
    let later = f.create_market(body).await;
    let later_outcome = later.body["outcomes"][0]["id"].as_str().unwrap();
    let r = f.app.post("/v1/markets/bet-preview", None, json!({ "outcome_id": later_outcome, "amount": "1000" })).await;
    assert_problem(&r, 409, "market_not_open");
}

#[tokio::test]
async fn sell_preview_needs_exactly_one_form_and_outstanding_shares() {
    let f = Fixture::new().await;
    let d = f.market(2).await;
    let outcome_id = d["outcomes"][0]["id"].as_str().unwrap();
    let both = f.app.post("/v1/markets/sell-preview", None, json!({ "outcome_id": outcome_id, "shares_amount": "10", "target_proceeds": "10" })).await;
    assert_field_error(&both, "shares_amount");
    let neither = f.app.post("/v1/markets/sell-preview", None, json!({ "outcome_id": outcome_id })).await;
    assert_field_error(&neither, "shares_amount");
    let bad = f.app.post("/v1/markets/sell-preview", None, json!({ "outcome_id": outcome_id, "shares_amount": "-3" })).await;
    assert_field_error(&bad, "shares_amount");
    // Nothing has been bought yet, so there is nothing to sell.
    let none = f.app.post("/v1/markets/sell-preview", None, json!({ "outcome_id": outcome_id, "shares_amount": "1000" })).await;
    assert_problem(&none, 422, "insufficient_shares");
    let target = f.app.post("/v1/markets/sell-preview", None, json!({ "outcome_id": outcome_id, "target_proceeds": "1000" })).await;
    assert_problem(&target, 422, "insufficient_shares");
}
