//! Exports against what the API shows: the trades export equals the trade records in apply
//! order (CSV parsed as RFC 4180, and NDJSON), filtered by market and time; the ledger export
//! replays to every balance the provider's accounts hold (treasury, wallets, pools), so it
//! holds every transfer touching them, and nothing of another provider.

use std::collections::HashMap;

use reqwest::StatusCode;
use serde_json::{json, Value};

use super::super::support::{assert_field_error, assert_problem, bet_on, outcome, resolve_on, sell_on, wei, Fixture, CREATOR_ADDRESS};

const ONE: u128 = 1_000_000_000_000_000_000;
const TRADE_FIELDS: [&str; 12] =
    ["id", "market_id", "outcome_id", "wallet_id", "wallet_address", "transaction_type", "amount", "shares", "price", "fee", "net_amount", "created_at"];
const LEDGER_FIELDS: [&str; 10] = ["id", "created_at", "kind", "token_id", "amount", "from_account", "to_account", "market_id", "wallet_address", "reference"];

/// RFC 4180 records: quoted fields may hold commas, doubled quotes and line breaks.
fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let (mut records, mut record, mut field) = (Vec::new(), Vec::new(), String::new());
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    while let Some(ch) = chars.next() {
        match (quoted, ch) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') if field.is_empty() => quoted = true,
            (false, ',') => record.push(std::mem::take(&mut field)),
            (false, '\r') => {
                assert_eq!(chars.next(), Some('\n'), "a CR outside quotes ends a record with CRLF");
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
            }
            (false, c) => field.push(c),
        }
    }
    assert!(field.is_empty() && record.is_empty(), "the last record ends with CRLF");
    records
}

async fn export(f: &Fixture, what: &str, query: &str) -> reqwest::Response {
    let r = f.app.client.get(format!("{}/v1/providers/exports/{what}?{query}", f.app.base)).bearer_auth(&f.provider.key).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    r
}

/// The provider's trade records in apply order, from the public search.
async fn records(f: &Fixture, markets: &[String]) -> Vec<Value> {
    let r = f.app.post("/v1/markets/positions/search", None, json!({ "sort": { "field": "created_at", "direction": "asc" }, "pagination": { "per_page": 100 } })).await;
    r.body["data"].as_array().unwrap().iter().filter(|t| markets.iter().any(|m| t["market_id"] == m.as_str())).cloned().collect()
}

fn as_csv_rows(records: &[Value]) -> Vec<Vec<String>> {
    records.iter().map(|t| TRADE_FIELDS.iter().map(|f| t[*f].as_str().unwrap().to_string()).collect()).collect()
}

#[tokio::test]
async fn exports_hold_the_trade_records_and_the_ledger_in_order() {
    let f = Fixture::new().await;
    let traders = [f.trader(1_000 * ONE).await, f.trader(1_000 * ONE).await];
    let (a, b) = (f.market(2).await, f.market(3).await);
    let ids = [a["id"].as_str().unwrap().to_string(), b["id"].as_str().unwrap().to_string()];
    let bought = bet_on(&f.app, &ids[0], outcome(&a, 0), &traders[0], 10 * ONE).await.body;
    bet_on(&f.app, &ids[1], outcome(&b, 2), &traders[1], 3 * ONE).await;
    bet_on(&f.app, &ids[0], outcome(&a, 1), &traders[1], 6 * ONE).await;
    assert_eq!(sell_on(&f.app, &a, 0, &traders[0], wei(&bought["shares_purchased"]) / 2).await.status, StatusCode::OK);
    assert_eq!(resolve_on(&f, &a, 1).await.status, StatusCode::OK);
    // Another provider's deposit shows in no export.
    let other = f.app.create_provider("Other Games");
    f.app.fund_treasury(&other, &f.token_id, 5 * ONE).await;
    let all = records(&f, &ids).await;
    assert_eq!(all.len(), 4);

    // Trades as CSV: a header, then the records in apply order; NDJSON: the records themselves.
    let r = export(&f, "trades", "format=csv").await;
    assert_eq!(r.headers()["content-type"], "text/csv; charset=utf-8");
    assert_eq!(r.headers()["content-disposition"], "attachment; filename=\"trades.csv\"");
    let csv = parse_csv(&r.text().await.unwrap());
    assert_eq!(csv[0], TRADE_FIELDS);
    assert_eq!(csv[1..], as_csv_rows(&all));
    let r = export(&f, "trades", "format=ndjson").await;
    assert_eq!(r.headers()["content-type"], "application/x-ndjson");
    let lines: Vec<Value> = r.text().await.unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines, all);
    // Filters: one market; from the third trade's time on.
    let only_a: Vec<Value> = all.iter().filter(|t| t["market_id"] == ids[0].as_str()).cloned().collect();
    let csv = parse_csv(&export(&f, "trades", &format!("market_id={}", ids[0])).await.text().await.unwrap());
    assert_eq!(csv[1..], as_csv_rows(&only_a));
    let from = all[2]["created_at"].as_str().unwrap().to_string();
    let csv = parse_csv(&export(&f, "trades", &format!("from={from}")).await.text().await.unwrap());
    assert_eq!(csv[1..], as_csv_rows(&all[2..]));

    // The ledger replays to every balance of the provider's accounts.
    let text = export(&f, "ledger", "").await.text().await.unwrap();
    let csv = parse_csv(&text);
    assert_eq!(csv[0], LEDGER_FIELDS);
    let ndjson: Vec<Value> = export(&f, "ledger", "format=ndjson").await.text().await.unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(ndjson.len(), csv.len() - 1);
    let mut balances: HashMap<String, i128> = HashMap::new();
    let mut last_id = 0u64;
    for (row, json) in csv[1..].iter().zip(&ndjson) {
        let cells: Vec<Value> = row.iter().map(|c| if c.is_empty() { Value::Null } else { json!(c) }).collect();
        assert_eq!(cells, LEDGER_FIELDS.iter().map(|f| json[*f].clone()).collect::<Vec<_>>(), "CSV and NDJSON rows agree (null is an empty field)");
        let id: u64 = row[0].parse().unwrap();
        assert!(id > last_id, "ledger rows by id");
        last_id = id;
        let amount: i128 = row[4].parse().unwrap();
        if !row[5].is_empty() {
            *balances.entry(row[5].clone()).or_default() -= amount;
        }
        if !row[6].is_empty() {
            *balances.entry(row[6].clone()).or_default() += amount;
        }
        assert!(!row.iter().any(|c| c.contains(&other.id)), "another provider's row: {row:?}");
    }
    let treasury = format!("treasury:{}:{}", f.provider.id, f.token_id);
    assert_eq!(balances[&treasury].to_string(), f.treasury_balance().await);
    for address in [traders[0].wallet.address.as_str(), traders[1].wallet.address.as_str(), CREATOR_ADDRESS] {
        let w = f.app.get(&format!("/v1/providers/wallets/{address}"), Some(&f.provider.key)).await.body;
        let account = format!("wallet:{}:{}", w["wallet_id"].as_str().unwrap(), f.token_id);
        assert_eq!(balances.get(&account).copied().unwrap_or(0).to_string(), w["balances"][0]["balance"].as_str().unwrap(), "{address}");
    }
    for id in &ids {
        let detail = f.app.get(&format!("/v1/markets/{id}"), None).await.body;
        assert_eq!(balances[&format!("pool:{id}")].to_string(), detail["total_pool"].as_str().unwrap());
    }
    // A market's rows name it; wallets' rows their address.
    assert!(ndjson.iter().any(|t| t["kind"] == "market_funding" && t["market_id"] == ids[0].as_str()));
    assert!(ndjson.iter().any(|t| t["wallet_address"] == traders[0].wallet.address.to_lowercase().as_str()));

    assert_field_error(&f.app.get("/v1/providers/exports/trades?format=xlsx", Some(&f.provider.key)).await, "format");
    assert_field_error(&f.app.get("/v1/providers/exports/ledger?from=yesterday", Some(&f.provider.key)).await, "from");
    assert_problem(&f.app.get(&format!("/v1/providers/exports/trades?market_id={}", ids[0]), Some(&other.key)).await, 404, "not_found");
    assert_problem(&f.app.get("/v1/providers/exports/trades", None).await, 401, "unauthenticated");
}
