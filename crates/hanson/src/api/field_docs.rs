//! Descriptions of the document's schema fields that their types' doc comments leave without
//! one: most fields mean the same wherever they appear (`market_id`, `created_at`), so they are
//! described once here by name, and the few whose meaning depends on their schema by
//! (schema, field). A field's own doc comment always wins; a test walks the served document
//! and fails on any field still without a description.

use serde_json::Value;

/// (schema, field, description): where a field's meaning depends on its schema.
const BY_SCHEMA: &[(&str, &str, &str)] = &[
    ("Envelope", "type", "The event's type (this webhook's name)."),
    ("Envelope", "seq", "The event's place in its market's stream (gapless, from 1); null for events of no market."),
    ("Envelope", "market_id", "The market the event belongs to; null for events of no market (deposits, withdrawals, webhook.test)."),
    ("Delivery", "id", "The delivery's id."),
    ("Delivery", "status", "pending (an attempt is due at next_attempt_at), succeeded or failed (no attempt left)."),
    ("Delivery", "created_at", "When the delivery was queued."),
    ("Delivery", "updated_at", "When its last attempt ended."),
    ("Endpoint", "id", "The webhook endpoint's id."),
    ("Endpoint", "description", "The provider's note on the endpoint."),
    ("EndpointInput", "description", "A note on the endpoint, for the provider."),
    ("EndpointPatch", "description", "A new note on the endpoint (absent: unchanged)."),
    ("Holding", "id", "The position's id."),
    ("Holding", "status", "active, closed, won, lost, claimed or refunded."),
    ("Holding", "created_at", "When the position was opened (its first buy)."),
    ("Holding", "updated_at", "When the position last changed."),
    ("MarketCommon", "id", "The market's id."),
    ("MarketCommon", "status", "The market's lifecycle status."),
    ("MarketCommon", "description", "The market's description: what it is about and how it resolves."),
    ("MarketHeader", "id", "The market's id."),
    ("MarketHeader", "status", "The market's lifecycle status."),
    ("MarketHeader", "description", "The market's description."),
    ("OutcomeView", "id", "The outcome's id."),
    ("OutcomeView", "description", "The outcome's description, if any."),
    ("OutcomeInput", "description", "The outcome's description (optional)."),
    ("OutcomeUpdateInput", "description", "A new description (absent: unchanged)."),
    ("CreateMarketInput", "description", "What the market is about and how it resolves."),
    ("UpdateMarketInput", "description", "A new description (absent: unchanged)."),
    ("PreviewToken", "id", "The token's id."),
    ("Token", "id", "The token's id."),
    ("TokenRef", "id", "The token's id."),
    ("ProviderRef", "id", "The provider's id."),
    ("WalletTransfer", "id", "The transfer's id."),
    ("Health", "status", "\"ok\" from /healthz, \"ready\" from /readyz."),
    ("Cancellation", "status", "The market's status after the cancellation: cancelled."),
    ("ClaimReceipt", "status", "The position's status after the claim: claimed."),
    ("FilledTrade", "status", "The position's status after the trade."),
    ("HoldingsFilters", "status", "Only positions in this status."),
    ("Resolution", "status", "The market's status after the resolution: resolved."),
    ("MarketFilters", "status", "Only markets in this status."),
    ("TradeRecord", "amount", "The trade's gross amount in wei: net_amount plus fee."),
    ("Transferred", "amount", "The amount moved."),
    ("TreasuryDepositInput", "amount", "The amount to credit to the provider's treasury."),
    ("WalletTransferInput", "amount", "The amount to credit to (deposit) or debit from (withdrawal) the wallet."),
    ("FieldError", "field", "The request field that failed, by its name in the body (or the query or path parameter)."),
    ("FieldError", "message", "What is wrong with it."),
    ("MarketCreated", "message", "A confirmation for people."),
    ("MarketUpdated", "message", "A confirmation for people."),
    ("Message", "message", "A confirmation for people."),
    ("OutcomeChanged", "message", "A confirmation for people."),
    ("NonceGrant", "message", "The exact text the wallet signs (EIP-191 personal_sign) to log in with this nonce."),
    ("Problem", "title", "A short summary of the problem type."),
    ("OutcomeView", "title", "The outcome's title."),
    ("MarketCreated", "outcomes", "The market's outcomes, in outcome_index order."),
    ("MarketCreated", "market", "The market created."),
    ("MarketUpdated", "market", "The market as it is now."),
    ("OutcomeChanged", "outcome", "The outcome as it is now."),
    ("TradeRecord", "price", "The average price per share of the trade, a decimal string in [0, 1]."),
    ("PricePoint", "price", "The outcome's price at that time (the last in the bucket with an interval), a decimal string in [0, 1]."),
    ("TradeRecord", "shares", "Shares bought or sold."),
    ("Holding", "shares", "Shares held now."),
    ("Endpoint", "event_types", "The event types delivered to it; [\"*\"] is every type."),
    ("EndpointPatch", "event_types", "New event types (absent: unchanged)."),
    ("Endpoint", "enabled", "Whether deliveries are sent (a disabled endpoint queues nothing)."),
    ("EndpointPatch", "enabled", "Enable or disable the endpoint (absent: unchanged)."),
];

/// (field, description): what a field means wherever it appears.
const BY_NAME: &[(&str, &str)] = &[
    ("access_token", "A JWT for the user routes: `Authorization: Bearer <access_token>`."),
    ("alt_evm_address", "For an alt-network login: the EVM address the account is linked to; otherwise null."),
    ("amount", "An amount in wei (integer decimal string)."),
    ("attempts", "Attempts made so far."),
    ("average_cost", "Average price paid per share held, a decimal string."),
    ("average_price", "Average price per share of the trade, a decimal string in [0, 1]."),
    ("balance", "The balance in wei."),
    ("balance_after", "The wallet's balance of the token after this change, in wei."),
    ("balance_before", "The wallet's balance of the token before this change, in wei."),
    ("balances", "One balance per token held."),
    ("bet_id", "The bet's id (its trade record)."),
    ("cancellation_data", "Free-form strings the provider records with the cancellation."),
    ("cancellation_source", "Where the reason for cancelling comes from (free text)."),
    ("cancelled_at", "When the market was cancelled; null if it was not."),
    ("canceller_wallet_id", "Who cancelled, as the provider names them (free text)."),
    ("category", "The market's category (metadata.category)."),
    ("claim_id", "The claim's id."),
    ("claimed_amount", "Paid out by the claim, in wei."),
    ("claimed_at", "When the claim was made."),
    ("closes_at", "When trading closes (the market's ends_at)."),
    ("created_at", "When it was created."),
    (
        "creator_fee_percentage",
        "The creator's fee, percent of each trade's gross amount (at most 4 decimals; with the platform fee at most 50).",
    ),
    ("creator_wallet_id", "The wallet that earns the creator fee."),
    ("current_price", "The outcome's price now, a decimal string in [0, 1]."),
    ("current_value", "What the shares held would be worth at the current price, in wei."),
    ("data", "The items of this page."),
    ("decimals", "Digits after the point in token units: 1 token = 10^decimals wei."),
    ("deposit_id", "The deposit's id."),
    ("description", "A description for people."),
    ("detail", "What happened, for people: the one sentence to show."),
    ("direction", "asc or desc (default desc)."),
    ("enabled", "Whether it is on."),
    ("ends_at", "When trading closes."),
    ("estimated_fee", "The fee the trade would pay, in wei."),
    ("estimated_net_proceeds", "Proceeds after the fee, in wei."),
    ("estimated_proceeds", "Proceeds before the fee, in wei."),
    ("estimated_shares", "Shares the trade would buy or sell."),
    ("event_type", "The event's type, e.g. trade.executed."),
    ("event_types", "Event types, e.g. trade.executed; [\"*\"] is every type."),
    ("expires_at", "When it stops being valid."),
    ("fee", "The fee paid, in wei (creator and platform fees together)."),
    ("field", "The field to sort by (a documented whitelist per search)."),
    ("filters", "Filters, all of which must match (absent: none)."),
    ("final_at", "When the market's result became final (after its dispute window); null before."),
    ("from_date", "From this time, inclusive."),
    ("game_id", "The provider's own reference for the market (free text)."),
    ("hash_algo", "The hash the alt key signs with."),
    ("id", "This object's id."),
    ("images", "Image URLs by name."),
    ("interval", "1m, 5m, 15m, 1h, 4h or 1d: one point per bucket; absent: raw points."),
    ("is_claimable", "Whether POST /v1/markets/positions/{id}/claim would pay out now."),
    ("key_id", "The alt key's index on its account."),
    ("last_error", "Why the last attempt failed, if it did."),
    ("last_status_code", "The HTTP status the last attempt got, if any."),
    ("liquidity", "The market's liquidity in wei: the most the market maker can lose, funded by the treasury."),
    ("market", "The market."),
    ("market_id", "The market's id."),
    ("max_bet_amount", "The largest gross bet amount accepted, in wei (inclusive)."),
    ("max_price", "A limit: the outcome's price after the bet may not exceed it."),
    ("max_shares", "The most shares the sale may sell to reach target_proceeds."),
    ("message", "A message for people."),
    ("metadata", "Free-form strings: category, resolution_source and any of the provider's own."),
    ("min_bet_amount", "The smallest gross bet amount accepted, in wei (inclusive)."),
    ("min_price", "A limit: the outcome's price after the sale may not fall below it."),
    ("min_proceeds", "The least net proceeds accepted: less is 409 price_moved and nothing changes."),
    ("min_shares", "The fewest shares accepted: fewer is 409 price_moved and nothing changes."),
    ("minimum_bet", "The smallest gross bet amount accepted, in wei (same as min_bet_amount)."),
    ("name", "The name, for people."),
    ("net_amount", "The amount less the fee, in wei: what bought the shares, or what a sale paid out."),
    ("net_proceeds", "Proceeds after the fee, paid to the wallet, in wei."),
    ("new_outcome_price", "The outcome's price after the trade, a decimal string in [0, 1]."),
    ("next_attempt_at", "When the next attempt is due; null when none is."),
    ("nonce", "The single-use login nonce from POST /v1/auth/nonce (valid five minutes)."),
    ("original_positions", "The positions refunded."),
    ("outcome", "The outcome."),
    ("outcome_id", "The outcome's id."),
    ("outcome_index", "The outcome's place in its market, from 0."),
    ("outcomes", "The market's outcomes, in outcome_index order."),
    ("page", "The page number, from 1."),
    ("pagination", "Which page, and how large (absent: page 1 of 20)."),
    ("paused_at", "When trading was paused; null if it is not paused."),
    ("payout_ratio", "What one winning share pays, a decimal string (1 unless the pool fell short)."),
    ("per_page", "Items per page, 1 to 100."),
    ("platform_fee_percentage", "The platform's fee, percent of each trade's gross amount (at most 4 decimals)."),
    ("position_id", "The position's id."),
    ("position_type", "Only positions of this kind."),
    ("positions_refunded", "How many positions were refunded."),
    ("positions_updated", "How many positions were settled."),
    ("price", "A price, a decimal string in [0, 1]."),
    ("price_impact", "How far the trade moves the outcome's price, a decimal string."),
    ("pricing_method", "How prices are made: lmsr, the only one."),
    ("proceeds", "Proceeds before the fee, in wei."),
    ("provider", "The provider (tenant) the market belongs to."),
    ("provider_id", "The provider's (tenant's) id."),
    ("public_key", "The alt key's public key, hex."),
    ("question", "The market's question."),
    ("reason", "Why the market was cancelled."),
    ("reference", "The provider's reference for the transfer (unique per provider)."),
    ("refresh_token", "The token that gets a new access token from POST /v1/auth/refresh while the session lasts."),
    ("refund_amount", "Refunded to the wallet, in wei."),
    ("refund_ratio", "The share of their cost basis positions got back, a decimal string (1 unless the pool fell short)."),
    ("resolution_data", "Free-form strings the provider records with the result."),
    ("resolution_source", "Where the result comes from (free text, e.g. a URL)."),
    ("resolved_at", "When the market was resolved; null if it was not."),
    ("resolver_wallet_id", "Who resolved, as the provider names them (free text)."),
    ("revoked", "Whether the alt key is revoked (a revoked key cannot log in)."),
    ("session_id", "The login session's id; trades must name the session of their access token."),
    ("shares", "Shares, in wei of shares (a winning share pays 1 wei)."),
    ("shares_claimed", "Shares the claim paid out."),
    ("shares_purchased", "Shares the bet bought."),
    ("shares_sold", "Shares the sale sold."),
    ("sign_algo", "The signature algorithm of the alt key."),
    ("sort", "The order of the results (absent: newest first)."),
    ("starts_at", "When trading opens."),
    ("status", "The status."),
    ("symbol", "The token's symbol, e.g. USDC."),
    ("tags", "The market's tags."),
    ("timestamp", "When the price was set."),
    ("title", "The title."),
    ("to_date", "Up to this time, inclusive."),
    ("token", "The token the amounts are in."),
    ("token_id", "The token's id."),
    ("total", "Items in all pages."),
    ("total_invested", "What the position cost, fees included, in wei (less what sales took out)."),
    ("total_pages", "Pages in all (0 when there are no items)."),
    ("total_pool", "Money in the market's pool, in wei."),
    ("total_refund_amount", "Refunded in all, in wei."),
    ("total_shares", "Shares of the outcome held by everyone."),
    ("total_volume", "Gross amount traded in all, in wei."),
    ("transaction_fee", "The fee the trade paid, in wei."),
    ("transaction_id", "The trade's id (its trade record)."),
    ("transaction_type", "buy or sell."),
    ("unrealized_pnl", "Current value less total invested, in wei (negative is a loss)."),
    ("updated_at", "When it last changed."),
    ("url", "Where the deliveries are POSTed."),
    ("user_refunds", "One entry per wallet refunded."),
    ("volume", "Gross amount traded (summed over the bucket with an interval), in wei."),
    ("wallet_address", "The wallet's address (EVM: 0x + 40 hex digits)."),
    ("wallet_id", "The wallet's id."),
    ("wallet_type", "evm or an alt network."),
    ("winning_outcome_id", "The outcome that won; null until the market is resolved."),
    ("winning_pool", "Shares of the winning outcome, which the pool pays out."),
];

/// Gives every property of every component schema a description ([`BY_SCHEMA`], then
/// [`BY_NAME`]) where it has none.
pub(crate) fn describe_fields(doc: &mut Value) {
    let Some(schemas) = doc.pointer_mut("/components/schemas").and_then(Value::as_object_mut) else { return };
    for (name, schema) in schemas.iter_mut() {
        describe_in(name, schema);
    }
    // The webhooks' bodies: the event envelope, inline per event type.
    if let Some(webhooks) = doc.get_mut("webhooks").and_then(Value::as_object_mut) {
        for webhook in webhooks.values_mut() {
            if let Some(body) = webhook.pointer_mut("/post/requestBody/content/application~1json/schema") {
                describe_in("Envelope", body);
            }
        }
    }
}

fn describe_in(schema_name: &str, schema: &mut Value) {
    let Some(object) = schema.as_object_mut() else { return };
    if let Some(properties) = object.get_mut("properties").and_then(Value::as_object_mut) {
        for (field, property) in properties.iter_mut() {
            let has = property.get("description").and_then(Value::as_str).is_some_and(|d| !d.is_empty());
            if !has {
                if let (Some(text), Some(property)) = (description(schema_name, field), property.as_object_mut()) {
                    property.insert("description".into(), Value::String(text.into()));
                }
            }
            describe_in(schema_name, property);
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(inner) = object.get_mut(key) {
            describe_in(schema_name, inner);
        }
    }
    for key in ["oneOf", "anyOf", "allOf"] {
        if let Some(list) = object.get_mut(key).and_then(Value::as_array_mut) {
            list.iter_mut().for_each(|inner| describe_in(schema_name, inner));
        }
    }
}

fn description(schema: &str, field: &str) -> Option<&'static str> {
    BY_SCHEMA
        .iter()
        .find(|(s, f, _)| *s == schema && *f == field)
        .map(|(_, _, d)| *d)
        .or_else(|| BY_NAME.iter().find(|(f, _)| *f == field).map(|(_, d)| *d))
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    /// Every field of the document has a description, and none here is left unused.
    #[test]
    fn every_field_is_described() {
        let doc = crate::api::openapi_json();
        let mut missing = Vec::new();
        walk_properties(doc, "", &mut |path, property| {
            if property.get("description").and_then(|d| d.as_str()).is_none_or(str::is_empty) {
                missing.push(path.to_string());
            }
        });
        assert!(missing.is_empty(), "fields without a description: {missing:#?}");
    }

    /// Calls `visit` with (path, property) for every property under `value`.
    fn walk_properties(value: &Value, path: &str, visit: &mut impl FnMut(&str, &Value)) {
        match value {
            Value::Object(map) => {
                if let Some(Value::Object(properties)) = map.get("properties") {
                    for (field, property) in properties {
                        let here = format!("{path}.{field}");
                        visit(&here, property);
                        walk_properties(property, &here, visit);
                    }
                }
                for (key, inner) in map {
                    if key != "properties" {
                        walk_properties(inner, &format!("{path}/{key}"), visit);
                    }
                }
            }
            Value::Array(items) => items.iter().enumerate().for_each(|(i, inner)| walk_properties(inner, &format!("{path}[{i}]"), visit)),
            _ => {}
        }
    }
}
