use reqwest::StatusCode;
use serde_json::json;

use super::support::*;

const ADDRESS: &str = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed";

#[tokio::test]
async fn treasury_deposits_are_idempotent_by_reference() {
    let app = TestApp::spawn().await;
    let p = app.create_provider("Acme");
    let token = app.create_token("USDC");
    let body = json!({ "token_id": token, "amount": "1000000000000000000000", "reference": "tx-1" });
    let first = app.post("/v1/providers/treasury/deposits", Some(&p.key), body.clone()).await;
    assert_eq!(first.status, StatusCode::CREATED);
    assert_eq!(first.body["token_id"], token);
    assert_eq!(first.body["amount"], "1000000000000000000000");
    assert_eq!(first.body["reference"], "tx-1");
    assert_eq!(first.body["balance_after"], "1000000000000000000000");
    assert!(first.body["deposit_id"].is_string() && first.body["created_at"].is_string());

    let replay = app.post("/v1/providers/treasury/deposits", Some(&p.key), body).await;
    assert_eq!(replay.status, StatusCode::OK);
    assert_eq!(replay.body, first.body);

    let conflict = app
        .post("/v1/providers/treasury/deposits", Some(&p.key), json!({ "token_id": token, "amount": "5", "reference": "tx-1" }))
        .await;
    assert_problem(&conflict, 409, "reference_reused");

    let second = app
        .post("/v1/providers/treasury/deposits", Some(&p.key), json!({ "token_id": token, "amount": "5", "reference": "tx-2" }))
        .await;
    assert_eq!(second.body["balance_after"], "1000000000000000000005");

    let t = app.get("/v1/providers/treasury", Some(&p.key)).await;
    assert_eq!(t.status, StatusCode::OK);
    assert_eq!(
        t.body,
        json!({ "provider_id": p.id, "balances": [{ "token_id": token, "symbol": "USDC", "decimals": 18, "balance": "1000000000000000000005" }] })
    );
    // Another provider's treasury is its own.
    let other = app.create_provider("Other");
    let t = app.get("/v1/providers/treasury", Some(&other.key)).await;
    assert_eq!(t.body["balances"], json!([]));
}

#[tokio::test]
async fn wallet_deposits_create_the_wallet_and_withdrawals_debit_it() {
    let app = TestApp::spawn().await;
    let p = app.create_provider("Acme");
    let token = app.create_token("USDC");
    let r = app
        .post("/v1/providers/wallets/deposits", Some(&p.key), json!({ "wallet_address": ADDRESS, "token_id": token, "amount": "700", "reference": "d-1" }))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let wallet_id = r.body["wallet_id"].as_str().unwrap().to_string();
    assert_eq!(r.body["wallet_address"], ADDRESS.to_lowercase());
    assert_eq!(r.body["token_id"], token);
    assert_eq!(r.body["amount"], "700");
    assert_eq!(r.body["reference"], "d-1");
    assert_eq!(r.body["balance_after"], "700");
    assert!(r.body["id"].is_string() && r.body["created_at"].is_string());

    let w = app
        .post("/v1/providers/wallets/withdrawals", Some(&p.key), json!({ "wallet_address": ADDRESS.to_lowercase(), "token_id": token, "amount": "200", "reference": "w-1" }))
        .await;
    assert_eq!(w.status, StatusCode::CREATED, "{}", w.body);
    assert_eq!(w.body["wallet_id"], wallet_id);
    assert_eq!(w.body["balance_after"], "500");

    let too_much = app
        .post("/v1/providers/wallets/withdrawals", Some(&p.key), json!({ "wallet_address": ADDRESS, "token_id": token, "amount": "501", "reference": "w-2" }))
        .await;
    assert_problem(&too_much, 422, "insufficient_balance");
    let unknown_wallet = app
        .post("/v1/providers/wallets/withdrawals", Some(&p.key), json!({ "wallet_address": "0x0000000000000000000000000000000000000001", "token_id": token, "amount": "1", "reference": "w-3" }))
        .await;
    assert_problem(&unknown_wallet, 422, "insufficient_balance");

    let lookup = app.get(&format!("/v1/providers/wallets/{}", ADDRESS.to_uppercase().replace("0X", "0x")), Some(&p.key)).await;
    assert_eq!(lookup.status, StatusCode::OK);
    assert_eq!(
        lookup.body,
        json!({
            "wallet_id": wallet_id,
            "wallet_address": ADDRESS.to_lowercase(),
            "wallet_type": "evm",
            "balances": [{ "token_id": token, "symbol": "USDC", "decimals": 18, "balance": "500" }],
        })
    );
    // Wallets belong to a tenant: another provider does not see this one.
    let other = app.create_provider("Other");
    assert_problem(&app.get(&format!("/v1/providers/wallets/{ADDRESS}"), Some(&other.key)).await, 404, "not_found");

    let alt = app
        .post("/v1/providers/wallets/deposits", Some(&p.key), json!({ "wallet_address": "0x01CF0E2F2F715450", "token_id": token, "amount": "1", "reference": "d-2" }))
        .await;
    assert_eq!(alt.status, StatusCode::CREATED);
    let alt_lookup = app.get("/v1/providers/wallets/0x01cf0e2f2f715450", Some(&p.key)).await;
    assert_eq!(alt_lookup.body["wallet_type"], "alt");
}

#[tokio::test]
async fn bad_money_requests_change_nothing() {
    let app = TestApp::spawn().await;
    let p = app.create_provider("Acme");
    let token = app.create_token("USDC");
    app.fund_wallet(&p, &token, ADDRESS, 100).await;
    let bad_amounts = [json!("-1"), json!("1.5"), json!("1e3"), json!("007"), json!(" 7"), json!(7), json!("0"), json!(null)];
    for amount in bad_amounts {
        let r = app
            .post("/v1/providers/wallets/deposits", Some(&p.key), json!({ "wallet_address": ADDRESS, "token_id": token, "amount": amount, "reference": uuid() }))
            .await;
        assert_field_error(&r, "amount");
    }
    let huge = app
        .post("/v1/providers/wallets/deposits", Some(&p.key), json!({ "wallet_address": ADDRESS, "token_id": token, "amount": "9".repeat(80), "reference": uuid() }))
        .await;
    assert_problem(&huge, 422, "amount_too_large");
    let checksum = app
        .post("/v1/providers/wallets/deposits", Some(&p.key), json!({ "wallet_address": "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD", "token_id": token, "amount": "1", "reference": uuid() }))
        .await;
    assert_field_error(&checksum, "wallet_address");
    let unknown_token = app
        .post("/v1/providers/wallets/deposits", Some(&p.key), json!({ "wallet_address": ADDRESS, "token_id": uuid(), "amount": "1", "reference": uuid() }))
        .await;
    assert_problem(&unknown_token, 422, "unknown_token");
    let no_reference = app
        .post("/v1/providers/wallets/deposits", Some(&p.key), json!({ "wallet_address": ADDRESS, "token_id": token, "amount": "1" }))
        .await;
    assert_field_error(&no_reference, "reference");
    let unauthenticated = app
        .post("/v1/providers/wallets/deposits", None, json!({ "wallet_address": ADDRESS, "token_id": token, "amount": "1", "reference": uuid() }))
        .await;
    assert_problem(&unauthenticated, 401, "unauthenticated");
    let lookup = app.get(&format!("/v1/providers/wallets/{ADDRESS}"), Some(&p.key)).await;
    assert_eq!(lookup.body["balances"][0]["balance"], "100");
}

#[tokio::test]
async fn tokens_are_listed_publicly() {
    let app = TestApp::spawn().await;
    let usdc = app.create_token("USDC");
    let dai = app.create_token("DAI");
    let r = app.get("/v1/tokens", None).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(
        r.body,
        json!({ "data": [
            { "id": dai, "symbol": "DAI", "name": "DAI token", "decimals": 18 },
            { "id": usdc, "symbol": "USDC", "name": "USDC token", "decimals": 18 },
        ] })
    );
}
