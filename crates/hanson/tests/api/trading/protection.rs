//! Trade protection: every price bound at its exact edge, a limit fill checked against the
//! market maker, a stale preview losing to a concurrent trade (409, nothing changed), and a
//! replayed Idempotency-Key answering its stored response after the price moved.

use reqwest::StatusCode;
use serde_json::{json, Value};

use super::support::*;

/// A price decimal string (18 digits) as units of 10^-36.
fn raw_price(text: &str) -> u128 {
    let (int, frac) = text.split_once('.').unwrap();
    assert_eq!(int, "0", "{text}");
    format!("{frac:0<36}").parse().unwrap()
}

fn shares_of(detail: &Value) -> Vec<u128> {
    detail["outcomes"].as_array().unwrap().iter().map(|o| wei(&o["total_shares"])).collect()
}

async fn bet_with(a: &Arena, t: &Trader, outcome: usize, amount: u128, bounds: Value) -> Response {
    let mut body = json!({ "session_id": t.session.session_id, "outcome_id": a.outcome(outcome), "amount": amount.to_string() });
    body.as_object_mut().unwrap().extend(bounds.as_object().unwrap().clone());
    a.f.app.post(&format!("/v1/markets/{}/bet", a.market_id()), Some(&t.session.access_token), body).await
}

async fn bet_preview(a: &Arena, outcome: usize, amount: u128, bounds: Value) -> Response {
    let mut body = json!({ "outcome_id": a.outcome(outcome), "amount": amount.to_string() });
    body.as_object_mut().unwrap().extend(bounds.as_object().unwrap().clone());
    a.f.app.post("/v1/markets/bet-preview", None, body).await
}

async fn sell_with(a: &Arena, t: &Trader, outcome: usize, body: Value) -> Response {
    let mut full = json!({ "session_id": t.session.session_id, "outcome_id": a.outcome(outcome) });
    full.as_object_mut().unwrap().extend(body.as_object().unwrap().clone());
    a.f.app.post(&format!("/v1/markets/{}/sell", a.market_id()), Some(&t.session.access_token), full).await
}

/// A 409 price_moved whose current_price is the outcome's price as the market shows it now.
async fn assert_moved(a: &Arena, r: &Response, outcome: usize) {
    assert_problem(r, 409, "price_moved");
    let now = a.detail().await;
    assert_eq!(r.body["current_price"], now["outcomes"][outcome]["current_price"], "{}", r.body);
}

#[tokio::test]
async fn bet_bounds_hold_at_their_exact_edges() {
    let a = Arena::new(1, 100 * ONE_TOKEN).await;
    let t = &a.traders[0];
    a.bet(t, 1, 3 * ONE_TOKEN).await;
    let preview = bet_preview(&a, 0, 10 * ONE_TOKEN, json!({})).await;
    assert_eq!(preview.status, StatusCode::OK, "{}", preview.body);
    assert_eq!(preview.body["unfilled_amount"], "0");
    let shares = wei(&preview.body["estimated_shares"]);

    let before = a.snapshot().await;
    let over = json!({ "min_shares": (shares + 1).to_string() });
    assert_moved(&a, &bet_preview(&a, 0, 10 * ONE_TOKEN, over.clone()).await, 0).await;
    assert_moved(&a, &bet_with(&a, t, 0, 10 * ONE_TOKEN, over).await, 0).await;
    assert_eq!(a.snapshot().await, before, "a missed bound changes nothing");

    let edge = bet_with(&a, t, 0, 10 * ONE_TOKEN, json!({ "min_shares": shares.to_string() })).await;
    assert_eq!(edge.status, StatusCode::OK, "{}", edge.body);
    assert_eq!((wei(&edge.body["shares_purchased"]), &edge.body["unfilled_amount"]), (shares, &json!("0")));
    // "0" bounds nothing.
    let zero = bet_with(&a, t, 0, ONE_TOKEN, json!({ "min_shares": "0" })).await;
    assert_eq!(zero.status, StatusCode::OK, "{}", zero.body);

    for bad in [json!("1"), json!("0"), json!("0.0"), json!("1.5"), json!("abc"), json!(0.5), json!("0.1234567890123456789")] {
        let r = bet_with(&a, t, 0, ONE_TOKEN, json!({ "max_price": bad })).await;
        assert_field_error(&r, "max_price");
    }
    assert_field_error(&bet_with(&a, t, 0, ONE_TOKEN, json!({ "min_shares": "-1" })).await, "min_shares");
}

#[tokio::test]
async fn a_limit_bet_fills_exactly_to_its_limit_as_the_market_maker_prices_it() {
    let a = Arena::new(2, 200 * ONE_TOKEN).await;
    let (t, other) = (&a.traders[0], &a.traders[1]);
    a.bet(other, 1, 7 * ONE_TOKEN).await;
    let d = a.detail().await;
    let (b, q) = (wei(&d["b"]), shares_of(&d));
    let limit = "0.52";
    let l = raw_price(limit);
    let requested = 100 * ONE_TOKEN;

    let preview = bet_preview(&a, 0, requested, json!({ "max_price": limit })).await;
    assert_eq!(preview.status, StatusCode::OK, "{}", preview.body);
    let filled = wei(&preview.body["amount"]);
    assert!(0 < filled && filled < requested, "{}", preview.body);
    assert_eq!(wei(&preview.body["unfilled_amount"]), requested - filled);

    // The reference: the fill's price after is within the limit, and one wei more is not.
    let net = |gross: u128| gross - library::fees(&d, gross).1;
    let bought = library::lmsr_buy(b, &q, 0, net(filled));
    let bought_more = library::lmsr_buy(b, &q, 0, net(filled + 1));
    assert_eq!(wei(&preview.body["estimated_shares"]), bought);
    assert!(library::lmsr_prices(b, &[q[0] + bought, q[1]])[0] <= l);
    assert!(library::lmsr_prices(b, &[q[0] + bought_more, q[1]])[0] >= l, "the fill stopped short of the limit");

    let r = bet_with(&a, t, 0, requested, json!({ "max_price": limit })).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!((wei(&r.body["amount"]), wei(&r.body["unfilled_amount"]), wei(&r.body["shares_purchased"])), (filled, requested - filled, bought));
    assert_eq!(wei(&r.body["balance_before"]) - wei(&r.body["balance_after"]), filled, "only the fill is paid");
    assert!(raw_price(r.body["new_outcome_price"].as_str().unwrap()) <= l);
    let trades = trades_in_order(&a.f.app, a.market_id()).await;
    assert_eq!(wei(&trades.last().unwrap()["amount"]), filled, "the record shows the fill");

    // Now at the limit: the same bet fills nothing.
    assert_moved(&a, &bet_with(&a, t, 0, requested, json!({ "max_price": limit })).await, 0).await;
    // A limit the whole amount stays under fills it all.
    let r = bet_with(&a, t, 0, ONE_TOKEN, json!({ "max_price": "0.9" })).await;
    assert_eq!((r.status, &r.body["amount"], &r.body["unfilled_amount"]), (StatusCode::OK, &json!(ONE_TOKEN.to_string()), &json!("0")));
    // Balance and maximum are judged on the requested amount.
    let poor = a.f.trader(50 * ONE_TOKEN).await;
    let r = bet_with(&a, &poor, 1, 60 * ONE_TOKEN, json!({ "max_price": "0.49" })).await;
    assert_problem(&r, 422, "insufficient_balance");
    let r = bet_with(&a, t, 1, 101 * ONE_TOKEN, json!({ "max_price": "0.49" })).await;
    assert_problem(&r, 422, "bet_above_maximum");
    let (ok, report) = audit(&a.f.app);
    assert!(ok, "{report}");
}

#[tokio::test]
async fn sell_bounds_hold_at_their_exact_edges() {
    let a = Arena::new(1, 200 * ONE_TOKEN).await;
    let t = &a.traders[0];
    let r = a.bet(t, 0, 100 * ONE_TOKEN).await;
    let held = wei(&r.body["shares_purchased"]);
    let sell_preview = |body: Value| {
        let mut full = json!({ "outcome_id": a.outcome(0) });
        full.as_object_mut().unwrap().extend(body.as_object().unwrap().clone());
        a.f.app.post("/v1/markets/sell-preview", None, full)
    };

    // min_proceeds: the net proceeds exactly, and one wei more.
    let p = sell_preview(json!({ "shares_amount": (held / 4).to_string() })).await;
    let net = wei(&p.body["estimated_net_proceeds"]);
    let before = a.snapshot().await;
    let over = json!({ "shares_amount": (held / 4).to_string(), "min_proceeds": (net + 1).to_string() });
    assert_moved(&a, &sell_preview(over.clone()).await, 0).await;
    assert_moved(&a, &sell_with(&a, t, 0, over).await, 0).await;
    assert_eq!(a.snapshot().await, before);
    let r = sell_with(&a, t, 0, json!({ "shares_amount": (held / 4).to_string(), "min_proceeds": net.to_string() })).await;
    assert_eq!((r.status, wei(&r.body["net_proceeds"]), &r.body["unfilled_shares"]), (StatusCode::OK, net, &json!("0")));

    // max_shares with a target: the shares it needs, and one fewer.
    let target = ONE_TOKEN;
    let p = sell_preview(json!({ "target_proceeds": target.to_string() })).await;
    let needed = wei(&p.body["estimated_shares"]);
    let fewer = json!({ "target_proceeds": target.to_string(), "max_shares": (needed - 1).to_string() });
    assert_moved(&a, &sell_with(&a, t, 0, fewer).await, 0).await;
    let r = sell_with(&a, t, 0, json!({ "target_proceeds": target.to_string(), "max_shares": needed.to_string() })).await;
    assert_eq!((r.status, wei(&r.body["shares_sold"])), (StatusCode::OK, needed), "{}", r.body);

    // min_price: sells the most shares that keep the price at or above it.
    let d = a.detail().await;
    let (b, q) = (wei(&d["b"]), shares_of(&d));
    let rest = wei(&a.holdings(t).await["data"][0]["shares"]);
    let limit = "0.51";
    let p = sell_preview(json!({ "shares_amount": rest.to_string(), "min_price": limit })).await;
    assert_eq!(p.status, StatusCode::OK, "{}", p.body);
    let sold = wei(&p.body["estimated_shares"]);
    assert!(0 < sold && sold < rest, "{}", p.body);
    assert_eq!(wei(&p.body["unfilled_shares"]), rest - sold);
    assert!(library::lmsr_prices(b, &[q[0] - sold, q[1]])[0] >= raw_price(limit));
    assert!(library::lmsr_prices(b, &[q[0] - sold - 1, q[1]])[0] <= raw_price(limit));
    let r = sell_with(&a, t, 0, json!({ "shares_amount": rest.to_string(), "min_price": limit })).await;
    assert_eq!((r.status, wei(&r.body["shares_sold"]), wei(&r.body["unfilled_shares"])), (StatusCode::OK, sold, rest - sold), "{}", r.body);

    // A bound of the other way of selling is 422.
    let wrong = sell_with(&a, t, 0, json!({ "shares_amount": "1", "max_shares": "5" })).await;
    assert_field_error(&wrong, "max_shares");
    let wrong = sell_with(&a, t, 0, json!({ "target_proceeds": "1", "min_price": "0.4" })).await;
    assert_field_error(&wrong, "min_price");
    let wrong = sell_with(&a, t, 0, json!({ "target_proceeds": "1", "min_proceeds": "1" })).await;
    assert_field_error(&wrong, "min_proceeds");
    let (ok, report) = audit(&a.f.app);
    assert!(ok, "{report}");
}

#[tokio::test]
async fn a_stale_preview_loses_to_a_concurrent_trade_and_changes_nothing() {
    let a = Arena::new(2, 100 * ONE_TOKEN).await;
    let (slow, fast) = (&a.traders[0], &a.traders[1]);
    let preview = bet_preview(&a, 0, 10 * ONE_TOKEN, json!({})).await;
    let quoted = wei(&preview.body["estimated_shares"]);
    // The quote went stale: another bet on the same outcome moved the price first.
    let r = a.bet(fast, 0, 20 * ONE_TOKEN).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let before = a.snapshot().await;
    let r = bet_with(&a, slow, 0, 10 * ONE_TOKEN, json!({ "min_shares": quoted.to_string() })).await;
    assert_moved(&a, &r, 0).await;
    assert_eq!(r.body["current_price"], before["market"]["outcomes"][0]["current_price"]);
    assert_eq!(a.snapshot().await, before, "the refused bet changed nothing");
}

#[tokio::test]
async fn a_replayed_key_answers_its_stored_response_after_the_price_moved() {
    let a = Arena::new(2, 100 * ONE_TOKEN).await;
    let (t, other) = (&a.traders[0], &a.traders[1]);
    let preview = bet_preview(&a, 0, 10 * ONE_TOKEN, json!({})).await;
    let shares = wei(&preview.body["estimated_shares"]);
    let body = json!({
        "session_id": t.session.session_id, "outcome_id": a.outcome(0), "amount": (10 * ONE_TOKEN).to_string(),
        "min_shares": shares.to_string(), "max_price": "0.9",
    });
    let path = format!("{}/v1/markets/{}/bet", a.f.app.base, a.market_id());
    let send = || a.f.app.client.post(&path).bearer_auth(&t.session.access_token).header("Idempotency-Key", "bounded-1").json(&body).send();
    let first = send().await.unwrap();
    assert_eq!(first.status(), StatusCode::OK);
    let receipt: Value = first.json().await.unwrap();
    assert_eq!(a.bet(other, 0, 30 * ONE_TOKEN).await.status, StatusCode::OK);
    // The same bet now would miss min_shares; its key replays what it answered.
    let again = send().await.unwrap();
    assert_eq!(again.status(), StatusCode::OK);
    assert_eq!(again.headers().get("idempotent-replayed").and_then(|v| v.to_str().ok()), Some("true"));
    assert_eq!(again.json::<Value>().await.unwrap(), receipt);
    assert_eq!(trades_in_order(&a.f.app, a.market_id()).await.len(), 2, "the replay traded nothing");
}
