//! `GET /v1/openapi.json` (OpenAPI 3.1) and the `/docs` viewer. Operations are listed in one
//! table; the document is built from it once.

use std::sync::OnceLock;

use axum::response::Html;
use axum::Json;
use serde_json::{json, Map, Value};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Access {
    Public,
    Provider,
    User,
}

struct Operation {
    method: &'static str,
    path: &'static str,
    tag: &'static str,
    summary: &'static str,
    access: Access,
    request: Option<&'static str>,
    success: (u16, &'static str),
    /// Error statuses besides the ones every route can return (400/413/415/429/500).
    errors: &'static [u16],
}

const OPERATIONS: &[Operation] = &[
    Operation { method: "post", path: "/v1/markets/search", tag: "Public", summary: "Search markets", access: Access::Public, request: Some("MarketSearchRequest"), success: (200, "MarketPage"), errors: &[422] },
    Operation { method: "get", path: "/v1/markets/{market_id}", tag: "Public", summary: "Get market details", access: Access::Public, request: None, success: (200, "MarketDetail"), errors: &[404] },
    Operation { method: "post", path: "/v1/markets/bet-preview", tag: "Public", summary: "Preview a bet (same code as a trade; changes nothing)", access: Access::Public, request: Some("BetPreviewRequest"), success: (200, "BetPreview"), errors: &[409, 422] },
    Operation { method: "post", path: "/v1/markets/sell-preview", tag: "Public", summary: "Preview a sale by shares_amount or by target_proceeds (exactly one)", access: Access::Public, request: Some("SellPreviewRequest"), success: (200, "SellPreview"), errors: &[409, 422] },
    Operation { method: "post", path: "/v1/markets/positions/search", tag: "Public", summary: "Search trade records (every trade, public)", access: Access::Public, request: Some("TradeSearchRequest"), success: (200, "TradePage"), errors: &[422] },
    Operation { method: "post", path: "/v1/markets/price-history/search", tag: "Public", summary: "Search price history, raw or bucketed by interval (last price, summed volume; empty buckets omitted)", access: Access::Public, request: Some("PriceHistorySearchRequest"), success: (200, "PricePage"), errors: &[422] },
    Operation { method: "post", path: "/v1/markets/{market_id}/bet", tag: "Trading", summary: "Place a bet: the wallet pays amount (fee + net_amount); net_amount buys shares", access: Access::User, request: Some("BetRequest"), success: (200, "Bet"), errors: &[401, 403, 404, 409, 422] },
    Operation { method: "post", path: "/v1/markets/{market_id}/sell", tag: "Trading", summary: "Sell shares by shares_amount, or the fewest shares whose net proceeds reach target_proceeds", access: Access::User, request: Some("SellRequest"), success: (200, "Sale"), errors: &[401, 403, 404, 409, 422] },
    Operation { method: "post", path: "/v1/markets/holdings/search", tag: "Trading", summary: "The caller's positions, valued at current prices", access: Access::User, request: Some("HoldingsSearchRequest"), success: (200, "PositionPage"), errors: &[401, 422] },
    Operation { method: "post", path: "/v1/markets/positions/{position_id}/claim", tag: "Trading", summary: "Claim a won position: 1 wei per winning share unit", access: Access::User, request: Some("ClaimRequest"), success: (200, "Claim"), errors: &[401, 403, 404, 409, 422] },
    Operation { method: "post", path: "/v1/providers/markets/{market_id}/resolve", tag: "Provider", summary: "Resolve: winners become claimable; the surplus returns to the treasury at once", access: Access::Provider, request: Some("ResolveRequest"), success: (200, "Resolution"), errors: &[401, 404, 409, 422] },
    Operation { method: "post", path: "/v1/providers/markets/{market_id}/cancel", tag: "Provider", summary: "Cancel: open positions are refunded their cost basis (pro rata if the pool is short)", access: Access::Provider, request: Some("CancelRequest"), success: (200, "Cancellation"), errors: &[401, 404, 409, 422] },
    Operation { method: "get", path: "/v1/tokens", tag: "Public", summary: "List tokens", access: Access::Public, request: None, success: (200, "TokenList"), errors: &[] },
    Operation { method: "post", path: "/v1/providers/markets", tag: "Provider", summary: "Create a market; liquidity moves from the treasury into the market pool", access: Access::Provider, request: Some("CreateMarketRequest"), success: (201, "CreateMarketResponse"), errors: &[401, 422] },
    Operation { method: "put", path: "/v1/providers/markets/{market_id}", tag: "Provider", summary: "Update a market (partial: only fields present change)", access: Access::Provider, request: Some("UpdateMarketRequest"), success: (200, "UpdateMarketResponse"), errors: &[401, 404, 409, 422] },
    Operation { method: "post", path: "/v1/providers/markets/{market_id}/outcomes", tag: "Provider", summary: "Add an outcome (before trades: b is recomputed; after trades: the treasury funds the extra worst-case loss)", access: Access::Provider, request: Some("OutcomeRequest"), success: (201, "OutcomeResponse"), errors: &[401, 404, 409, 422] },
    Operation { method: "put", path: "/v1/providers/markets/{market_id}/outcomes/{outcome_id}", tag: "Provider", summary: "Update an outcome (partial)", access: Access::Provider, request: Some("OutcomeRequest"), success: (200, "OutcomeResponse"), errors: &[401, 404, 409, 422] },
    Operation { method: "get", path: "/v1/providers/treasury", tag: "Money", summary: "Treasury balances", access: Access::Provider, request: None, success: (200, "Treasury"), errors: &[401] },
    Operation { method: "post", path: "/v1/providers/treasury/deposits", tag: "Money", summary: "Deposit into the treasury (idempotent by reference: a replay answers 200 with the original body)", access: Access::Provider, request: Some("TreasuryDepositRequest"), success: (201, "TreasuryDeposit"), errors: &[401, 409, 422] },
    Operation { method: "post", path: "/v1/providers/wallets/deposits", tag: "Money", summary: "Deposit into a wallet, creating it in the provider's tenant (idempotent by reference)", access: Access::Provider, request: Some("WalletTransferRequest"), success: (201, "WalletTransfer"), errors: &[401, 409, 422] },
    Operation { method: "post", path: "/v1/providers/wallets/withdrawals", tag: "Money", summary: "Withdraw from a wallet (idempotent by reference)", access: Access::Provider, request: Some("WalletTransferRequest"), success: (201, "WalletTransfer"), errors: &[401, 409, 422] },
    Operation { method: "get", path: "/v1/providers/wallets/{wallet_address}", tag: "Money", summary: "Look up a wallet and its balances (address case-insensitive)", access: Access::Provider, request: None, success: (200, "Wallet"), errors: &[401, 404] },
    Operation { method: "post", path: "/v1/auth/nonce", tag: "Auth", summary: "Issue a login nonce (single use, 5 minutes, bound to provider and address)", access: Access::Public, request: Some("NonceRequest"), success: (200, "Nonce"), errors: &[404, 422] },
    Operation { method: "post", path: "/v1/auth/login", tag: "Auth", summary: "Log in with an EIP-191 signature, or an alt-network account key (wallet_type alt)", access: Access::Public, request: Some("LoginRequest"), success: (200, "Tokens"), errors: &[401, 422] },
    Operation { method: "post", path: "/v1/auth/refresh", tag: "Auth", summary: "Rotate the refresh token and get a new access token (reusing a spent token revokes the session)", access: Access::Public, request: Some("RefreshRequest"), success: (200, "Tokens"), errors: &[401, 422] },
    Operation { method: "get", path: "/v1/auth/profile", tag: "Auth", summary: "The logged-in wallet, its session and balances", access: Access::User, request: None, success: (200, "Profile"), errors: &[401] },
    Operation { method: "post", path: "/v1/auth/logout", tag: "Auth", summary: "Revoke the session: its access and refresh tokens stop working at once", access: Access::User, request: None, success: (200, "Message"), errors: &[401] },
    Operation { method: "put", path: "/v1/providers/alt-keys/{wallet_address}/{key_id}", tag: "Auth", summary: "Create or replace an alt-network account key in the provider's registry", access: Access::Provider, request: Some("AltKeyRequest"), success: (200, "AltKey"), errors: &[401, 422] },
    Operation { method: "get", path: "/healthz", tag: "Operations", summary: "The process is up", access: Access::Public, request: None, success: (200, "Status"), errors: &[] },
    Operation { method: "get", path: "/readyz", tag: "Operations", summary: "The database is reachable", access: Access::Public, request: None, success: (200, "Status"), errors: &[] },
    Operation { method: "get", path: "/v1/openapi.json", tag: "Operations", summary: "This document", access: Access::Public, request: None, success: (200, "OpenApiDocument"), errors: &[] },
    Operation { method: "get", path: "/docs", tag: "Operations", summary: "Interactive viewer of this document (HTML)", access: Access::Public, request: None, success: (200, "Html"), errors: &[] },
];

const COMMON_ERRORS: &[u16] = &[400, 413, 415, 429, 500];

fn error_description(status: u16) -> &'static str {
    match status {
        400 => "Malformed JSON (code malformed_json)",
        401 => "Missing or invalid credentials (code unauthenticated)",
        403 => "Authenticated but not allowed",
        404 => "Unknown or not visible to the caller (code not_found)",
        409 => "State conflict (e.g. market_not_open, market_settled, reference_reused)",
        413 => "Body over 65,536 bytes (code payload_too_large)",
        415 => "Body not declared as application/json (code unsupported_media_type)",
        422 => "Validation (validation_failed with errors[]) or a rule such as amount_too_large, unknown_token, bet_below_minimum",
        429 => "Rate limited (code rate_limited, with Retry-After)",
        _ => "Internal error; only the request id is returned (code internal)",
    }
}

fn path_parameters(path: &str) -> Vec<Value> {
    path.split('/')
        .filter_map(|seg| seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
        .map(|name| json!({ "name": name, "in": "path", "required": true, "schema": { "type": "string" } }))
        .collect()
}

fn schema_ref(name: &str) -> Value {
    json!({ "$ref": format!("#/components/schemas/{name}") })
}

fn operation_json(op: &Operation) -> Value {
    let mut responses = Map::new();
    let success_content = if op.success.1 == "Html" {
        json!({ "text/html": { "schema": { "type": "string" } } })
    } else {
        json!({ "application/json": { "schema": schema_ref(op.success.1) } })
    };
    responses.insert(op.success.0.to_string(), json!({ "description": "Success", "content": success_content }));
    if op.success.1 == "TreasuryDeposit" || op.success.1 == "WalletTransfer" {
        responses.insert("200".into(), json!({ "description": "Replay of an earlier identical request (same reference)", "content": { "application/json": { "schema": schema_ref(op.success.1) } } }));
    }
    let request_errors = if op.request.is_some() { COMMON_ERRORS } else { &[429, 500] };
    for status in op.errors.iter().chain(request_errors) {
        responses.insert(status.to_string(), json!({ "$ref": format!("#/components/responses/E{status}") }));
    }
    let mut o = json!({
        "tags": [op.tag],
        "summary": op.summary,
        "operationId": format!("{}_{}", op.method, op.path.trim_start_matches('/').replace(['/', '{', '}', '-', '.'], "_")),
        "responses": responses,
    });
    let mut params = path_parameters(op.path);
    if op.method == "post" && op.access != Access::Public && op.request.is_some() && !op.path.ends_with("/search") {
        params.push(json!({
            "name": "Idempotency-Key", "in": "header", "required": false, "schema": { "type": "string", "maxLength": 255 },
            "description": "Same key and body within 24 hours replays the stored response (header idempotent-replayed: true); another body is 422 idempotency_key_reused",
        }));
    }
    if !params.is_empty() {
        o["parameters"] = Value::Array(params);
    }
    if let Some(req) = op.request {
        o["requestBody"] = json!({ "required": true, "content": { "application/json": { "schema": schema_ref(req) } } });
    }
    match op.access {
        Access::Provider => o["security"] = json!([{ "providerKey": [] }]),
        Access::User => o["security"] = json!([{ "userToken": [] }]),
        Access::Public => {}
    }
    o
}

fn wei() -> Value {
    json!({ "type": "string", "pattern": "^(0|[1-9][0-9]*)$", "description": "Integer amount in wei (or share units), decimal digits, no leading zeros; inputs at most 10^36" })
}
fn decimal() -> Value {
    json!({ "type": "string", "pattern": "^-?[0-9]+\\.[0-9]{18}$", "description": "Plain decimal with 18 fractional digits" })
}
fn timestamp() -> Value {
    json!({ "type": "string", "format": "date-time" })
}
fn text() -> Value {
    json!({ "type": "string" })
}
fn nullable_text() -> Value {
    json!({ "type": ["string", "null"] })
}
fn object(required: &[&str], properties: Value) -> Value {
    json!({ "type": "object", "required": required, "properties": properties })
}
fn images() -> Value {
    json!({ "type": "object", "additionalProperties": { "type": "string" }, "description": "Named image URLs" })
}
fn percentage() -> Value {
    json!({ "type": "number", "minimum": 0, "description": "Percent, at most 4 fractional digits; creator + platform <= 50" })
}

fn schemas() -> Value {
    let outcome = object(
        &["id", "title", "description", "images", "outcome_index", "current_price", "total_shares"],
        json!({ "id": text(), "title": text(), "description": text(), "images": images(), "outcome_index": { "type": "integer" }, "current_price": decimal(), "total_shares": wei(), "total_volume": wei() }),
    );
    let token_ref = object(&["id", "symbol", "name"], json!({ "id": text(), "symbol": text(), "name": text(), "decimals": { "type": "integer" } }));
    let market_summary_props = json!({
        "id": text(), "question": text(), "description": text(), "category": nullable_text(),
        "status": { "type": "string", "enum": ["active", "closed", "resolved", "cancelled"] },
        "total_pool": wei(), "total_volume": wei(),
        "outcomes": { "type": "array", "items": schema_ref("Outcome") },
        "token": schema_ref("TokenRef"),
        "provider": object(&["id", "name"], json!({ "id": text(), "name": text() })),
        "created_at": timestamp(), "closes_at": timestamp(),
    });
    let mut detail_props = market_summary_props.clone();
    for (k, v) in [
        ("resolution_source", nullable_text()), ("minimum_bet", wei()), ("game_id", nullable_text()),
        ("tags", json!({ "type": "array", "items": text() })), ("images", images()), ("metadata", json!({ "type": "object" })),
        ("pricing_method", json!({ "const": "lmsr" })), ("min_bet_amount", wei()), ("max_bet_amount", wei()),
        ("liquidity", wei()), ("b", wei()), ("creator_wallet_id", text()), ("creator_fee_percentage", percentage()),
        ("platform_fee_percentage", percentage()), ("starts_at", timestamp()), ("ends_at", timestamp()),
        ("updated_at", timestamp()), ("winning_outcome_id", nullable_text()),
        ("resolved_at", json!({ "type": ["string", "null"], "format": "date-time" })),
        ("cancelled_at", json!({ "type": ["string", "null"], "format": "date-time" })),
    ] {
        detail_props[k] = v;
    }
    let outcome_request = json!({ "type": "object", "properties": { "title": text(), "description": text(), "images": images(), "outcome_index": { "type": "integer", "minimum": 0 } } });
    let token_preview = object(&["id", "symbol", "decimals"], json!({ "id": text(), "symbol": text(), "decimals": { "type": "integer" } }));
    let balance = object(&["token_id", "symbol", "decimals", "balance"], json!({ "token_id": text(), "symbol": text(), "decimals": { "type": "integer" }, "balance": wei() }));
    json!({
        "Problem": object(&["type", "title", "status", "detail", "code"], json!({
            "type": text(), "title": text(), "status": { "type": "integer" }, "detail": text(), "code": text(),
            "errors": { "type": "array", "items": object(&["field", "message"], json!({ "field": text(), "message": text() })) },
            "request_id": text(),
        })),
        "Pagination": object(&["page", "per_page", "total", "total_pages"], json!({ "page": { "type": "integer" }, "per_page": { "type": "integer" }, "total": { "type": "integer" }, "total_pages": { "type": "integer" } })),
        "PaginationRequest": json!({ "type": "object", "properties": { "page": { "type": "integer", "minimum": 1, "default": 1 }, "per_page": { "type": "integer", "minimum": 1, "maximum": 100, "default": 20 } } }),
        "Outcome": outcome,
        "TokenRef": token_ref,
        "Token": object(&["id", "symbol", "name", "decimals"], json!({ "id": text(), "symbol": text(), "name": text(), "decimals": { "type": "integer" } })),
        "TokenList": object(&["data"], json!({ "data": { "type": "array", "items": schema_ref("Token") } })),
        "MarketSummary": object(&["id", "question", "description", "status", "total_pool", "total_volume", "outcomes", "token", "provider", "created_at", "closes_at"], market_summary_props),
        "MarketDetail": object(&["id", "question", "status", "outcomes", "token", "minimum_bet", "b"], detail_props),
        "MarketPage": object(&["data", "pagination"], json!({ "data": { "type": "array", "items": schema_ref("MarketSummary") }, "pagination": schema_ref("Pagination") })),
        "MarketSearchRequest": json!({ "type": "object", "properties": {
            "filters": { "type": "object", "properties": { "provider_id": text(), "token_id": text(), "status": { "type": "string", "enum": ["active", "closed", "resolved", "cancelled"] }, "category": text(), "search_query": { "type": "string", "description": "Case-insensitive match on question and description" } } },
            "pagination": schema_ref("PaginationRequest"),
            "sort": { "type": "object", "properties": { "field": { "type": "string", "enum": ["created_at", "closes_at", "total_volume", "question"], "default": "created_at" }, "direction": { "type": "string", "enum": ["asc", "desc"], "default": "desc" } } },
        } }),
        "CreateMarketRequest": object(&["question", "token_id", "liquidity", "ends_at", "creator_wallet_id", "outcomes"], json!({
            "game_id": text(), "question": text(), "description": text(), "tags": { "type": "array", "items": text() }, "images": images(),
            "pricing_method": { "const": "lmsr" }, "token_id": text(), "min_bet_amount": wei(), "max_bet_amount": wei(), "liquidity": wei(),
            "starts_at": timestamp(), "ends_at": timestamp(), "creator_wallet_id": text(),
            "creator_fee_percentage": percentage(), "platform_fee_percentage": percentage(),
            "metadata": { "type": "object", "properties": { "category": text(), "resolution_source": text() } },
            "outcomes": { "type": "array", "minItems": 2, "maxItems": 64, "items": object(&["title", "outcome_index"], json!({ "title": text(), "description": text(), "images": images(), "outcome_index": { "type": "integer", "minimum": 0 } })) },
        })),
        "CreateMarketResponse": object(&["market", "outcomes", "message"], json!({
            "market": object(&["id", "question", "description", "status", "created_at", "starts_at", "ends_at"], json!({ "id": text(), "question": text(), "description": text(), "status": text(), "created_at": timestamp(), "starts_at": timestamp(), "ends_at": timestamp() })),
            "outcomes": { "type": "array", "items": schema_ref("Outcome") },
            "message": text(),
        })),
        "UpdateMarketRequest": json!({ "type": "object", "properties": { "question": text(), "description": text(), "tags": { "type": "array", "items": text() }, "images": images(), "min_bet_amount": wei(), "max_bet_amount": wei(), "ends_at": timestamp(), "creator_fee_percentage": percentage(), "metadata": { "type": "object" } } }),
        "UpdateMarketResponse": object(&["market", "message"], json!({
            "market": object(&["id", "question", "description", "status", "updated_at"], json!({ "id": text(), "question": text(), "description": text(), "status": text(), "updated_at": timestamp() })),
            "message": text(),
        })),
        "OutcomeRequest": outcome_request,
        "OutcomeResponse": object(&["outcome", "message"], json!({ "outcome": schema_ref("Outcome"), "message": text() })),
        "BetPreviewRequest": object(&["outcome_id", "amount"], json!({ "outcome_id": text(), "amount": wei() })),
        "BetPreview": object(&["outcome_id", "amount", "estimated_shares", "average_price", "price_impact", "new_outcome_price", "market_id", "token"], json!({
            "outcome_id": text(), "amount": wei(), "estimated_shares": wei(), "average_price": decimal(), "price_impact": decimal(),
            "new_outcome_price": decimal(), "current_price": decimal(), "estimated_fee": wei(), "net_amount": wei(), "market_id": text(), "token": token_preview.clone(),
        })),
        "SellPreviewRequest": object(&["outcome_id"], json!({ "outcome_id": text(), "shares_amount": wei(), "target_proceeds": wei() })),
        "SellPreview": object(&["outcome_id", "estimated_shares", "estimated_proceeds", "average_price", "price_impact", "new_outcome_price", "market_id", "token"], json!({
            "outcome_id": text(), "estimated_shares": wei(), "estimated_proceeds": wei(), "estimated_fee": wei(), "estimated_net_proceeds": wei(),
            "average_price": decimal(), "price_impact": decimal(), "new_outcome_price": decimal(), "current_price": decimal(), "market_id": text(), "token": token_preview,
        })),
        "Balance": balance,
        "Treasury": object(&["provider_id", "balances"], json!({ "provider_id": text(), "balances": { "type": "array", "items": schema_ref("Balance") } })),
        "TreasuryDepositRequest": object(&["token_id", "amount", "reference"], json!({ "token_id": text(), "amount": wei(), "reference": text() })),
        "TreasuryDeposit": object(&["deposit_id", "token_id", "amount", "reference", "balance_after", "created_at"], json!({ "deposit_id": text(), "token_id": text(), "amount": wei(), "reference": text(), "balance_after": wei(), "created_at": timestamp() })),
        "WalletTransferRequest": object(&["wallet_address", "token_id", "amount", "reference"], json!({ "wallet_address": text(), "token_id": text(), "amount": wei(), "reference": text() })),
        "WalletTransfer": object(&["id", "wallet_id", "wallet_address", "token_id", "amount", "reference", "balance_after", "created_at"], json!({ "id": text(), "wallet_id": text(), "wallet_address": text(), "token_id": text(), "amount": wei(), "reference": text(), "balance_after": wei(), "created_at": timestamp() })),
        "Wallet": object(&["wallet_id", "wallet_address", "wallet_type", "balances"], json!({ "wallet_id": text(), "wallet_address": text(), "wallet_type": { "type": "string", "enum": ["evm", "alt"] }, "balances": { "type": "array", "items": schema_ref("Balance") } })),
        "Status": object(&["status"], json!({ "status": text() })),
        "TradeSearchRequest": json!({ "type": "object", "properties": {
            "filters": { "type": "object", "properties": { "market_id": text(), "outcome_id": text(), "wallet_address": text(), "transaction_type": { "type": "string", "enum": ["buy", "sell"] }, "from_date": timestamp(), "to_date": timestamp() } },
            "pagination": schema_ref("PaginationRequest"),
            "sort": { "type": "object", "properties": { "field": { "type": "string", "enum": ["created_at", "amount", "shares"], "default": "created_at" }, "direction": { "type": "string", "enum": ["asc", "desc"], "default": "desc" } } },
        } }),
        "Trade": object(&["id", "market_id", "outcome_id", "wallet_id", "wallet_address", "transaction_type", "amount", "shares", "price", "created_at"], json!({
            "id": text(), "market_id": text(), "outcome_id": text(), "wallet_id": text(), "wallet_address": text(),
            "transaction_type": { "type": "string", "enum": ["buy", "sell"] }, "amount": wei(), "shares": wei(), "price": decimal(),
            "fee": wei(), "net_amount": wei(), "created_at": timestamp(),
        })),
        "TradePage": object(&["data", "pagination"], json!({ "data": { "type": "array", "items": schema_ref("Trade") }, "pagination": schema_ref("Pagination") })),
        "PriceHistorySearchRequest": json!({ "type": "object", "properties": {
            "filters": { "type": "object", "description": "market_id or outcome_id is required", "properties": { "market_id": text(), "outcome_id": text(), "from_date": timestamp(), "to_date": timestamp(), "interval": { "type": "string", "enum": ["1m", "5m", "15m", "1h", "4h", "1d"] } } },
            "pagination": schema_ref("PaginationRequest"),
            "sort": { "type": "object", "properties": { "field": { "const": "timestamp" }, "direction": { "type": "string", "enum": ["asc", "desc"], "default": "desc" } } },
        } }),
        "PricePoint": object(&["market_id", "outcome_id", "price", "volume", "timestamp"], json!({ "market_id": text(), "outcome_id": text(), "price": decimal(), "volume": wei(), "timestamp": timestamp() })),
        "PricePage": object(&["data", "pagination"], json!({ "data": { "type": "array", "items": schema_ref("PricePoint") }, "pagination": schema_ref("Pagination") })),
        "BetRequest": object(&["session_id", "outcome_id", "amount"], json!({ "session_id": text(), "outcome_id": text(), "amount": wei() })),
        "Bet": object(&["bet_id", "market_id", "outcome_id", "session_id", "amount", "shares_purchased", "average_price", "transaction_fee", "net_amount", "balance_before", "balance_after", "created_at", "status"], json!({
            "bet_id": text(), "market_id": text(), "outcome_id": text(), "session_id": text(), "amount": wei(), "shares_purchased": wei(),
            "average_price": decimal(), "transaction_fee": wei(), "net_amount": wei(), "balance_before": wei(),
            "balance_after": { "type": "string", "description": "balance_before - amount (the fee is part of amount)" },
            "position_id": text(), "new_outcome_price": decimal(), "created_at": timestamp(), "status": { "const": "confirmed" },
        })),
        "SellRequest": object(&["session_id", "outcome_id"], json!({ "session_id": text(), "outcome_id": text(), "shares_amount": wei(), "target_proceeds": wei() })),
        "Sale": object(&["transaction_id", "market_id", "outcome_id", "session_id", "shares_sold", "proceeds", "average_price", "transaction_fee", "net_proceeds", "balance_before", "balance_after", "created_at", "status"], json!({
            "transaction_id": text(), "market_id": text(), "outcome_id": text(), "session_id": text(), "shares_sold": wei(), "proceeds": wei(),
            "average_price": decimal(), "transaction_fee": wei(), "net_proceeds": wei(), "balance_before": wei(), "balance_after": wei(),
            "position_id": text(), "new_outcome_price": decimal(), "created_at": timestamp(), "status": { "const": "confirmed" },
        })),
        "HoldingsSearchRequest": json!({ "type": "object", "properties": {
            "filters": { "type": "object", "properties": { "market_id": text(), "outcome_id": text(), "status": { "type": "string", "enum": ["active", "closed", "won", "lost", "claimed", "refunded"] }, "position_type": { "const": "long" } } },
            "pagination": schema_ref("PaginationRequest"),
            "sort": { "type": "object", "properties": { "field": { "type": "string", "enum": ["created_at", "updated_at", "current_value", "shares", "total_invested"], "default": "created_at" }, "direction": { "type": "string", "enum": ["asc", "desc"], "default": "desc" } } },
        } }),
        "Position": object(&["id", "market_id", "outcome_id", "wallet_id", "shares", "average_cost", "total_invested", "current_price", "current_value", "unrealized_pnl", "status", "position_type", "is_claimable", "created_at", "updated_at"], json!({
            "id": text(), "market_id": text(), "outcome_id": text(), "wallet_id": text(), "shares": wei(), "average_cost": decimal(), "total_invested": wei(),
            "current_price": decimal(), "current_value": wei(), "unrealized_pnl": { "type": "string", "pattern": "^-?(0|[1-9][0-9]*)$" },
            "status": { "type": "string", "enum": ["active", "closed", "won", "lost", "claimed", "refunded"] }, "position_type": { "const": "long" },
            "is_claimable": { "type": "boolean" }, "claimed_amount": { "type": ["string", "null"] }, "created_at": timestamp(), "updated_at": timestamp(),
        })),
        "PositionPage": object(&["data", "pagination"], json!({ "data": { "type": "array", "items": schema_ref("Position") }, "pagination": schema_ref("Pagination") })),
        "ClaimRequest": object(&["session_id"], json!({ "session_id": text() })),
        "Claim": object(&["claim_id", "position_id", "market_id", "outcome_id", "session_id", "shares_claimed", "claimed_amount", "payout_ratio", "balance_before", "balance_after", "claimed_at", "status"], json!({
            "claim_id": text(), "position_id": text(), "market_id": text(), "outcome_id": text(), "session_id": text(), "shares_claimed": wei(),
            "claimed_amount": wei(), "payout_ratio": text(), "balance_before": wei(), "balance_after": wei(), "claimed_at": timestamp(), "status": { "const": "completed" },
        })),
        "ResolveRequest": object(&["winning_outcome_id", "resolver_wallet_id"], json!({ "winning_outcome_id": text(), "resolver_wallet_id": text(), "resolution_source": text(), "resolution_data": { "type": "object", "additionalProperties": { "type": "string" } } })),
        "Resolution": object(&["market_id", "winning_outcome_id", "resolved_at", "total_pool", "winning_pool", "payout_ratio", "positions_updated", "resolution_source", "resolver_wallet_id", "status"], json!({
            "market_id": text(), "winning_outcome_id": text(), "resolved_at": timestamp(), "total_pool": wei(), "winning_pool": wei(), "payout_ratio": text(),
            "positions_updated": { "type": "integer" }, "resolution_source": nullable_text(), "resolver_wallet_id": text(), "resolution_data": { "type": "object" }, "status": { "const": "resolved" },
        })),
        "CancelRequest": object(&["canceller_wallet_id", "reason"], json!({ "canceller_wallet_id": text(), "cancellation_source": text(), "reason": text(), "cancellation_data": { "type": "object", "additionalProperties": { "type": "string" } } })),
        "Cancellation": object(&["market_id", "cancelled_at", "total_refund_amount", "positions_refunded", "user_refunds", "cancellation_source", "reason", "cancellation_data", "status"], json!({
            "market_id": text(), "cancelled_at": timestamp(), "total_refund_amount": wei(), "positions_refunded": { "type": "integer" },
            "user_refunds": { "type": "array", "items": object(&["wallet_id", "refund_amount", "original_positions"], json!({ "wallet_id": text(), "refund_amount": wei(), "original_positions": { "type": "integer" } })) },
            "refund_ratio": text(), "canceller_wallet_id": text(), "cancellation_source": text(), "reason": text(), "cancellation_data": { "type": "object" }, "status": { "const": "cancelled" },
        })),
        "Message": object(&["message"], json!({ "message": text() })),
        "NonceRequest": object(&["wallet_address", "provider_id"], json!({ "wallet_address": { "type": "string", "description": "EVM address (0x + 40 hex, EIP-55 checked when mixed-case) or alt account address (0x + 16 hex)" }, "provider_id": { "type": "string", "format": "uuid" } })),
        "Nonce": object(&["nonce", "message", "expires_at"], json!({ "nonce": text(), "message": { "type": "string", "description": "The exact text to sign" }, "expires_at": timestamp() })),
        "LoginRequest": object(&["provider_id", "wallet_address", "signature", "nonce"], json!({
            "provider_id": { "type": "string", "format": "uuid" }, "wallet_address": text(),
            "signature": { "type": "string", "description": "EVM: 0x + 65 bytes hex (v in 0,1,27,28; high-s rejected). Alt: 64 bytes r||s hex without 0x" },
            "nonce": text(), "wallet_type": { "type": "string", "enum": ["evm", "alt"], "default": "evm" },
            "alt_evm_address": text(), "key_id": { "type": "integer", "minimum": 0 },
        })),
        "RefreshRequest": object(&["refresh_token", "provider_id"], json!({ "refresh_token": text(), "provider_id": { "type": "string", "format": "uuid" } })),
        "Tokens": object(&["access_token", "refresh_token", "token_type", "expires_in", "session_id"], json!({ "access_token": text(), "refresh_token": text(), "token_type": { "const": "Bearer" }, "expires_in": { "type": "integer", "description": "Seconds" }, "session_id": text() })),
        "Profile": object(&["wallet_id", "wallet_address", "wallet_type", "alt_evm_address", "provider_id", "session_id", "balances", "created_at"], json!({
            "wallet_id": text(), "wallet_address": text(), "wallet_type": { "type": "string", "enum": ["evm", "alt"] }, "alt_evm_address": nullable_text(),
            "provider_id": text(), "session_id": text(), "balances": { "type": "array", "items": schema_ref("Balance") }, "created_at": timestamp(),
        })),
        "AltKeyRequest": object(&["public_key", "sign_algo", "hash_algo"], json!({ "public_key": { "type": "string", "description": "64 bytes X||Y hex without 0x" }, "sign_algo": { "type": "string", "enum": ["ECDSA_P256", "ECDSA_secp256k1"] }, "hash_algo": { "type": "string", "enum": ["SHA2_256", "SHA3_256"] }, "revoked": { "type": "boolean", "default": false } })),
        "AltKey": object(&["wallet_address", "key_id", "public_key", "sign_algo", "hash_algo", "revoked"], json!({ "wallet_address": text(), "key_id": { "type": "integer" }, "public_key": text(), "sign_algo": text(), "hash_algo": text(), "revoked": { "type": "boolean" } })),
        "OpenApiDocument": json!({ "type": "object" }),
    })
}

pub fn build() -> Value {
    let mut paths = Map::new();
    for op in OPERATIONS {
        let entry = paths.entry(op.path.to_string()).or_insert_with(|| json!({}));
        entry[op.method] = operation_json(op);
    }
    let mut responses = Map::new();
    for status in [400u16, 401, 403, 404, 409, 413, 415, 422, 429, 500] {
        let mut r = json!({ "description": error_description(status), "content": { "application/problem+json": { "schema": schema_ref("Problem") } } });
        if status == 429 {
            r["headers"] = json!({ "Retry-After": { "schema": { "type": "integer" }, "description": "Seconds to wait" } });
        }
        responses.insert(format!("E{status}"), r);
    }
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Hanson prediction markets API",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Prediction markets priced by an exact LMSR market maker. All amounts are integer wei carried as decimal strings. Every error is RFC 9457 application/problem+json with a stable `code`. Every response carries `x-request-id`.",
        },
        "servers": [{ "url": "/" }],
        "tags": [{ "name": "Public" }, { "name": "Trading" }, { "name": "Provider" }, { "name": "Money" }, { "name": "Auth" }, { "name": "Operations" }],
        "paths": paths,
        "components": {
            "schemas": schemas(),
            "responses": responses,
            "securitySchemes": {
                "providerKey": { "type": "http", "scheme": "bearer", "description": "Provider API key (hk_...), created with `hanson provider create`" },
                "userToken": { "type": "http", "scheme": "bearer", "bearerFormat": "JWT", "description": "Access token from POST /v1/auth/login" },
            },
        },
    })
}

fn cached() -> &'static Value {
    static DOCUMENT: OnceLock<Value> = OnceLock::new();
    DOCUMENT.get_or_init(build)
}

pub async fn document() -> Json<Value> {
    Json(cached().clone())
}

pub async fn viewer() -> Html<&'static str> {
    Html(include_str!("docs.html"))
}
