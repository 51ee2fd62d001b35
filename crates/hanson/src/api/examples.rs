//! An example request body for every operation that takes one, by operationId: what `/docs`
//! shows and its try-it starts from, and what generated clients may show. Each is valid
//! against its operation's schema (the API tests check it); ids in them are placeholders.

use serde_json::{json, Value};

const PROVIDER: &str = "6f1c1d7e-8a4b-4c2d-9e3f-0a1b2c3d4e5f";
const MARKET_OUTCOME: &str = "01a2344e-3dfe-75aa-9a0c-9f1403e79efc";
const SESSION: &str = "01a2344e-3e1b-7743-9ffa-dff9dde2fc82";
const TOKEN: &str = "3b6f0c1e-2a7d-4f4e-8b5a-1c2d3e4f5a6b";
const WALLET: &str = "0x2c7536e3605d9c16a7a3d7b1898e529396a65c23";
const MARKET: &str = "01a2344e-3dfe-75aa-9a0c-9f15c781833c";

fn example(operation_id: &str) -> Option<Value> {
    let ten_tokens = "10000000000000000000";
    Some(match operation_id {
        "nonce" => json!({ "wallet_address": WALLET, "provider_id": PROVIDER }),
        "login" => json!({
            "provider_id": PROVIDER,
            "wallet_address": WALLET,
            "nonce": "4f7d2c9a8b1e6f3a5d0c7b9e2a4f6d8c",
            "signature": format!("0x{}1b", "ab".repeat(64)),
        }),
        "refresh" => json!({ "provider_id": PROVIDER, "refresh_token": "rt_5c1f0e9d8b7a6c5d4e3f2a1b0c9d8e7f" }),
        "bet_preview" => json!({ "outcome_id": MARKET_OUTCOME, "amount": ten_tokens }),
        "sell_preview" => json!({ "outcome_id": MARKET_OUTCOME, "target_proceeds": "2000000000000000000" }),
        "place_bet" => json!({ "session_id": SESSION, "outcome_id": MARKET_OUTCOME, "amount": ten_tokens, "max_price": "0.65" }),
        "sell" => {
            json!({ "session_id": SESSION, "outcome_id": MARKET_OUTCOME, "shares_amount": "5000000000000000000", "min_proceeds": "2000000000000000000" })
        }
        "claim" => json!({ "session_id": SESSION }),
        "search_markets" => json!({
            "filters": { "status": "active", "category": "sports", "search_query": "home team" },
            "sort": { "field": "total_volume", "direction": "desc" },
            "pagination": { "page": 1, "per_page": 20 },
        }),
        "trade_records" => json!({
            "filters": { "market_id": MARKET, "transaction_type": "buy", "from_date": "2026-01-01T00:00:00Z" },
            "sort": { "field": "created_at", "direction": "desc" },
            "pagination": { "page": 1, "per_page": 50 },
        }),
        "holdings" => json!({ "filters": { "status": "active" }, "sort": { "field": "current_value", "direction": "desc" } }),
        "price_history" => json!({
            "filters": { "market_id": MARKET, "interval": "1h", "from_date": "2026-01-01T00:00:00Z", "to_date": "2026-01-02T00:00:00Z" },
            "pagination": { "per_page": 100 },
        }),
        "create_market" => json!({
            "question": "Will the home team win?",
            "description": "Resolves on the final whistle.",
            "pricing_method": "lmsr",
            "token_id": TOKEN,
            "min_bet_amount": "1000000000000000",
            "max_bet_amount": "100000000000000000000",
            "liquidity": "1000000000000000000000",
            "starts_at": "2026-01-01T00:00:00Z",
            "ends_at": "2026-06-01T00:00:00Z",
            "creator_wallet_id": "01a2344e-3e1b-7743-9ffa-dff9dde2fc83",
            "creator_fee_percentage": 1,
            "platform_fee_percentage": 1,
            "metadata": { "category": "sports", "resolution_source": "league.example.com" },
            "outcomes": [{ "title": "Yes", "outcome_index": 0 }, { "title": "No", "outcome_index": 1 }],
        }),
        "update_market" => {
            json!({ "description": "Resolves on the final whistle, extra time included.", "ends_at": "2026-06-02T00:00:00Z" })
        }
        "create_outcome" => json!({ "title": "Draw", "outcome_index": 2, "description": "Level after extra time." }),
        "update_outcome" => json!({ "title": "Draw (after extra time)" }),
        "pause_market" => json!({ "reason": "The match is delayed; trading resumes at kick-off." }),
        "resolve" => json!({
            "winning_outcome_id": MARKET_OUTCOME,
            "resolver_wallet_id": "ops",
            "resolution_source": "league.example.com",
            "resolution_data": { "score": "2-1" },
            "dispute_window_seconds": 3600,
        }),
        "cancel" => {
            json!({ "canceller_wallet_id": "ops", "reason": "The match was abandoned.", "cancellation_source": "league.example.com" })
        }
        "treasury_deposit" => json!({ "token_id": TOKEN, "amount": "5000000000000000000000", "reference": "bank-tx-1" }),
        "wallet_deposit" => {
            json!({ "wallet_address": WALLET, "token_id": TOKEN, "amount": "50000000000000000000", "reference": "user-dep-1" })
        }
        "wallet_withdrawal" => {
            json!({ "wallet_address": WALLET, "token_id": TOKEN, "amount": "20000000000000000000", "reference": "user-wd-1" })
        }
        "put_alt_key" => json!({ "public_key": "cd".repeat(64), "sign_algo": "ECDSA_P256", "hash_algo": "SHA3_256" }),
        "create_endpoint" => json!({
            "url": "https://hooks.example.com/hanson",
            "event_types": ["trade.created", "market.resolved"],
            "description": "Settlement service",
        }),
        "update_endpoint" => json!({ "enabled": false }),
        _ => return None,
    })
}

/// Sets `example` on every JSON request body whose operation has one here.
pub(crate) fn add_request_examples(doc: &mut Value) {
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else { return };
    for item in paths.values_mut().filter_map(Value::as_object_mut) {
        for operation in item.values_mut() {
            let Some(id) = operation.get("operationId").and_then(Value::as_str).map(str::to_string) else { continue };
            let Some(media) = operation.pointer_mut("/requestBody/content/application~1json").and_then(Value::as_object_mut) else {
                continue;
            };
            if let Some(example) = example(&id) {
                media.insert("example".into(), example);
            }
        }
    }
}
