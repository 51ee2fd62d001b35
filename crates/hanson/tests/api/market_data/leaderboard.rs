//! Leaderboards against the contract's formula, computed here from the trade records and the
//! traders' own holdings after bets, sales, a claim, an unclaimed win, refunds and open
//! positions: profit = sells' net proceeds + claims + refunds + current value of open
//! positions - bets' gross amounts; volume = the trades' amounts.

use std::collections::BTreeMap;

use reqwest::StatusCode;
use serde_json::{json, Value};

use super::super::support::{assert_field_error, assert_problem, bet_on, cancel_on, outcome, resolve_on, sell_on, trades_in_order, wei, Fixture, Trader};

const ONE: u128 = 1_000_000_000_000_000_000;

/// Profit (signed), volume, trades and address of a wallet.
type Standing = (i128, u128, i64, String);
/// Standings by wallet id.
type Expected = BTreeMap<String, Standing>;

async fn add_trades(f: &Fixture, market_id: &str, expected: &mut Expected) {
    for t in trades_in_order(&f.app, market_id).await {
        let e = expected.entry(t["wallet_id"].as_str().unwrap().to_string()).or_insert((0, 0, 0, t["wallet_address"].as_str().unwrap().to_string()));
        e.1 += wei(&t["amount"]);
        e.2 += 1;
        if t["transaction_type"] == "buy" {
            e.0 -= wei(&t["amount"]) as i128;
        } else {
            e.0 += wei(&t["net_amount"]) as i128;
        }
    }
}

async fn add_holdings(f: &Fixture, t: &Trader, markets: &[&str], expected: &mut Expected) {
    let holdings = f.app.post("/v1/markets/holdings/search", Some(&t.session.access_token), json!({ "pagination": { "per_page": 100 } })).await.body;
    for h in holdings["data"].as_array().unwrap().iter().filter(|h| markets.contains(&h["market_id"].as_str().unwrap())) {
        let paid = h["claimed_amount"].as_str().map_or(0, |a| a.parse::<u128>().unwrap());
        expected.get_mut(&t.wallet_id).unwrap().0 += (paid + wei(&h["current_value"])) as i128;
    }
}

fn rows(expected: &Expected, by_profit: bool) -> Vec<Value> {
    let mut list: Vec<(&String, &Standing)> = expected.iter().collect();
    list.sort_by(|a, b| {
        let order = if by_profit { b.1 .0.cmp(&a.1 .0) } else { b.1 .1.cmp(&a.1 .1) };
        order.then_with(|| a.0.cmp(b.0))
    });
    list.iter()
        .enumerate()
        .map(|(i, (id, (profit, volume, trades, address)))| json!({ "rank": i + 1, "wallet_id": id, "wallet_address": address, "profit": profit.to_string(), "volume": volume.to_string(), "trades": trades }))
        .collect()
}

#[tokio::test]
async fn leaderboards_follow_the_formula_after_bets_sales_claims_and_refunds() {
    let f = Fixture::new().await;
    let traders = [f.trader(1_000 * ONE).await, f.trader(1_000 * ONE).await, f.trader(1_000 * ONE).await];
    let (won, cancelled, open) = (f.market(2).await, f.market(2).await, f.market(3).await);
    let id = |m: &Value| m["id"].as_str().unwrap().to_string();
    let bet = |m: &Value, i: usize, t: usize, amount: u128| {
        let (app, market_id, outcome_id, trader) = (&f.app, id(m), outcome(m, i).to_string(), &traders[t]);
        async move {
            let r = bet_on(app, &market_id, &outcome_id, trader, amount).await;
            assert_eq!(r.status, StatusCode::OK, "{}", r.body);
            r.body
        }
    };
    let first = bet(&won, 0, 0, 10 * ONE).await;
    bet(&won, 1, 1, 20 * ONE).await;
    let r = sell_on(&f.app, &won, 0, &traders[0], wei(&first["shares_purchased"]) / 3).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    bet(&won, 0, 2, 5 * ONE).await;
    bet(&cancelled, 1, 1, 7 * ONE).await;
    bet(&cancelled, 0, 2, 3 * ONE).await;
    bet(&open, 2, 0, 4 * ONE).await;
    bet(&open, 1, 1, 4 * ONE).await;
    assert_eq!(resolve_on(&f, &won, 0).await.status, StatusCode::OK);
    assert_eq!(cancel_on(&f, &cancelled).await.status, StatusCode::OK);
    // The first trader claims; the third leaves its win unclaimed (valued at its payout).
    let holdings = f.app.post("/v1/markets/holdings/search", Some(&traders[0].session.access_token), json!({ "filters": { "market_id": id(&won) } })).await.body;
    let position = holdings["data"][0]["id"].as_str().unwrap().to_string();
    let claim = f.app.post(&format!("/v1/markets/positions/{position}/claim"), Some(&traders[0].session.access_token), json!({ "session_id": traders[0].session.session_id })).await;
    assert_eq!(claim.status, StatusCode::OK, "{}", claim.body);

    let mut market = Expected::new();
    add_trades(&f, &id(&won), &mut market).await;
    let mut provider = Expected::new();
    for m in [&won, &cancelled, &open] {
        add_trades(&f, &id(m), &mut provider).await;
    }
    for t in &traders {
        add_holdings(&f, t, &[&id(&won)], &mut market).await;
        add_holdings(&f, t, &[&id(&won), &id(&cancelled), &id(&open)], &mut provider).await;
    }
    assert!(market.values().any(|e| e.0 < 0) && market.values().any(|e| e.0 > 0), "{market:?}");

    for (by, by_profit) in [("profit", true), ("volume", false)] {
        let r = f.app.get(&format!("/v1/markets/{}/leaderboard?by={by}", id(&won)), None).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        assert_eq!(r.body["data"], json!(rows(&market, by_profit)), "market by {by}");
        assert_eq!(r.body["pagination"]["total"], 3);
        let path = format!("/v1/providers/{}/leaderboard?token_id={}&by={by}", f.provider.id, f.token_id);
        let r = f.app.get(&path, None).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        assert_eq!(r.body["data"], json!(rows(&provider, by_profit)), "provider by {by}");
    }
    // Pages of one row, and profit as the default order.
    let r = f.app.get(&format!("/v1/markets/{}/leaderboard?per_page=1&page=2", id(&won)), None).await;
    assert_eq!(r.body["data"], json!([rows(&market, true)[1]]));

    assert_field_error(&f.app.get(&format!("/v1/providers/{}/leaderboard", f.provider.id), None).await, "token_id");
    assert_field_error(&f.app.get(&format!("/v1/markets/{}/leaderboard?by=luck", id(&won)), None).await, "by");
    assert_problem(&f.app.get("/v1/markets/nope/leaderboard", None).await, 404, "not_found");
    assert_problem(&f.app.get("/v1/providers/nope/leaderboard?token_id=x", None).await, 404, "not_found");
    // A token without markets: an empty board.
    let r = f.app.get(&format!("/v1/providers/{}/leaderboard?token_id=other", f.provider.id), None).await;
    assert_eq!((r.status, r.body["data"].clone()), (StatusCode::OK, json!([])));
}
