use reqwest::StatusCode;
use serde_json::{json, Value};

use super::support::*;

const B_TWO_OUTCOMES: &str = "1442695040888963407359"; // floor(1000e18 / ln 2)
const B_THREE_OUTCOMES: &str = "910239226626837393614"; // floor(1000e18 / ln 3)

#[tokio::test]
async fn create_market_returns_the_spec_shape_and_funds_the_pool() {
    let f = Fixture::new().await;
    let before = f.treasury_balance().await;
    assert_eq!(before, (1_000_000 * ONE_TOKEN).to_string());
    let body = f.market_body(2);
    let r = f.create_market(body.clone()).await;
    assert_eq!(r.status, StatusCode::CREATED);
    let m = &r.body["market"];
    assert_eq!(m["question"], "Will the home team win?");
    assert_eq!(m["description"], "Resolves on the final whistle.");
    assert_eq!(m["status"], "active");
    assert!(m["id"].as_str().unwrap().len() == 36);
    for field in ["created_at", "starts_at", "ends_at"] {
        assert!(m[field].as_str().unwrap().ends_with('Z'), "{field}");
    }
    assert_eq!(r.body["message"], "Market created");
    let outcomes = r.body["outcomes"].as_array().unwrap();
    assert_eq!(outcomes.len(), 2);
    for (i, o) in outcomes.iter().enumerate() {
        assert_eq!(o["title"], format!("Outcome {i}"));
        assert_eq!(o["current_price"], "0.500000000000000000");
        assert_eq!(o["total_shares"], "0");
        assert_eq!(o["outcome_index"], i);
    }
    assert_eq!(f.treasury_balance().await, (999_000 * ONE_TOKEN).to_string());

    let id = m["id"].as_str().unwrap();
    let d = f.app.get(&format!("/v1/markets/{id}"), None).await;
    assert_eq!(d.status, StatusCode::OK);
    let d = d.body;
    assert_eq!(d["id"], id);
    assert_eq!(d["category"], "sports");
    assert_eq!(d["resolution_source"], "league.example.com");
    assert_eq!(d["status"], "active");
    assert_eq!(d["total_pool"], (1000 * ONE_TOKEN).to_string());
    assert_eq!(d["total_volume"], "0");
    assert_eq!(d["minimum_bet"], "1000");
    assert_eq!(d["min_bet_amount"], "1000");
    assert_eq!(d["max_bet_amount"], (100 * ONE_TOKEN).to_string());
    assert_eq!(d["liquidity"], (1000 * ONE_TOKEN).to_string());
    assert_eq!(d["b"], B_TWO_OUTCOMES);
    assert_eq!(d["pricing_method"], "lmsr");
    assert_eq!(d["game_id"], "game-42");
    assert_eq!(d["tags"], json!(["football", "league"]));
    assert_eq!(d["images"], body["images"]);
    assert_eq!(d["metadata"], body["metadata"]);
    assert_eq!(d["creator_wallet_id"], f.creator_wallet_id);
    assert_eq!(d["creator_fee_percentage"], json!(1));
    assert_eq!(d["platform_fee_percentage"], json!(1));
    assert_eq!(d["closes_at"], d["ends_at"]);
    assert_eq!(d["token"], json!({ "id": f.token_id, "symbol": "USDC", "name": "USDC token", "decimals": 18 }));
    assert_eq!(d["provider"], json!({ "id": f.provider.id, "name": "Acme Games" }));
    let outcome = &d["outcomes"][1];
    assert_eq!(outcome["id"], outcomes[1]["id"]);
    assert_eq!(outcome["total_volume"], "0");
    assert_eq!(outcome["description"], "Outcome number 1");
    assert_eq!(outcome["current_price"], "0.500000000000000000");
}

#[tokio::test]
async fn sixty_four_outcomes_start_at_one_sixty_fourth() {
    let f = Fixture::new().await;
    let d = f.market(64).await;
    let outcomes = d["outcomes"].as_array().unwrap();
    assert_eq!(outcomes.len(), 64);
    for o in outcomes {
        assert_eq!(o["current_price"], "0.015625000000000000");
    }
}

async fn assert_rejected_without_change(f: &Fixture, body: Value, field: &str) {
    let r = f.create_market(body).await;
    assert_field_error(&r, field);
    assert_eq!(f.treasury_balance().await, (1_000_000 * ONE_TOKEN).to_string());
    let s = f.app.post("/v1/markets/search", None, json!({})).await;
    assert_eq!(s.body["pagination"]["total"], 0);
}

/// A change that spoils a valid request body.
type Spoil = Box<dyn Fn(&mut Value)>;

#[tokio::test]
async fn create_market_validation_errors_change_nothing() {
    let f = Fixture::new().await;
    let cases: Vec<(&str, Spoil)> = vec![
        ("question", Box::new(|b| b["question"] = json!("   "))),
        ("question", Box::new(|b| { b.as_object_mut().unwrap().remove("question"); })),
        ("outcomes", Box::new(|b| b["outcomes"] = json!([{ "title": "Only", "outcome_index": 0 }]))),
        ("outcomes", Box::new(|b| b["outcomes"] = json!((0..65).map(|i| json!({"title": "x", "outcome_index": i})).collect::<Vec<_>>()))),
        ("outcomes", Box::new(|b| b["outcomes"] = json!([{ "title": "A", "outcome_index": 0 }, { "title": "B", "outcome_index": 0 }]))),
        ("outcomes[1].title", Box::new(|b| b["outcomes"][1]["title"] = json!(""))),
        ("ends_at", Box::new(|b| b["ends_at"] = b["starts_at"].clone())),
        ("ends_at", Box::new(|b| b["ends_at"] = json!("tomorrow"))),
        ("min_bet_amount", Box::new(|b| { b["min_bet_amount"] = json!("500"); b["max_bet_amount"] = json!("400"); })),
        ("min_bet_amount", Box::new(|b| b["min_bet_amount"] = json!("-1"))),
        ("min_bet_amount", Box::new(|b| b["min_bet_amount"] = json!(1000))),
        ("liquidity", Box::new(|b| b["liquidity"] = json!("0"))),
        ("liquidity", Box::new(|b| b["liquidity"] = json!("1e21"))),
        ("liquidity", Box::new(|b| b["liquidity"] = json!("01000"))),
        ("liquidity", Box::new(|b| b["liquidity"] = json!("10.5"))),
        ("creator_fee_percentage", Box::new(|b| b["creator_fee_percentage"] = json!(49.5))),
        ("creator_fee_percentage", Box::new(|b| b["creator_fee_percentage"] = json!(1.00001))),
        ("platform_fee_percentage", Box::new(|b| b["platform_fee_percentage"] = json!(-1))),
        ("pricing_method", Box::new(|b| b["pricing_method"] = json!("cpmm"))),
        ("creator_wallet_id", Box::new(|b| b["creator_wallet_id"] = json!(uuid()))),
        ("metadata.category", Box::new(|b| b["metadata"]["category"] = json!(5))),
        ("question", Box::new(|b| b["question"] = json!(42))),
    ];
    for (field, mutate) in cases {
        let mut body = f.market_body(2);
        mutate(&mut body);
        assert_rejected_without_change(&f, body, field).await;
    }
}

#[tokio::test]
async fn create_market_rule_errors() {
    let f = Fixture::new().await;
    let mut body = f.market_body(2);
    body["token_id"] = json!(uuid());
    let r = f.create_market(body).await;
    assert_problem(&r, 422, "unknown_token");

    let mut body = f.market_body(2);
    body["liquidity"] = json!((2_000_000 * ONE_TOKEN).to_string());
    let r = f.create_market(body).await;
    assert_problem(&r, 422, "insufficient_treasury");
    assert_eq!(f.treasury_balance().await, (1_000_000 * ONE_TOKEN).to_string());

    let mut body = f.market_body(2);
    body["liquidity"] = json!("1000000000000000000000000000000000001");
    let r = f.create_market(body).await;
    assert_problem(&r, 422, "amount_too_large");
    assert_eq!(r.body["errors"][0]["field"], "liquidity");
}

#[tokio::test]
async fn provider_routes_require_the_owning_key() {
    let f = Fixture::new().await;
    let d = f.market(2).await;
    let id = d["id"].as_str().unwrap();
    let path = format!("/v1/providers/markets/{id}");
    let no_key = f.app.put(&path, None, json!({ "question": "Hijacked?" })).await;
    assert_problem(&no_key, 401, "unauthenticated");
    let bad_key = f.app.put(&path, Some("hk_0000"), json!({ "question": "Hijacked?" })).await;
    assert_problem(&bad_key, 401, "unauthenticated");
    let jwt_like = f.app.put(&path, Some("eyJhbGciOiJIUzI1NiJ9.e30.sig"), json!({ "question": "Hijacked?" })).await;
    assert_problem(&jwt_like, 401, "unauthenticated");
    let other = f.app.create_provider("Other Co");
    let foreign = f.app.put(&path, Some(&other.key), json!({ "question": "Hijacked?" })).await;
    assert_problem(&foreign, 404, "not_found");
    let foreign_outcome = f
        .app
        .post(&format!("{path}/outcomes"), Some(&other.key), json!({ "title": "Draw", "outcome_index": 2 }))
        .await;
    assert_problem(&foreign_outcome, 404, "not_found");
    let malformed = f.app.put("/v1/providers/markets/not-a-uuid", Some(&f.provider.key), json!({})).await;
    assert_problem(&malformed, 404, "not_found");
    let after = f.app.get(&format!("/v1/markets/{id}"), None).await.body;
    assert_eq!(after["question"], "Will the home team win?");
    assert_eq!(after["outcomes"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn update_market_is_partial_and_validated() {
    let f = Fixture::new().await;
    let d = f.market(2).await;
    let id = d["id"].as_str().unwrap();
    let path = format!("/v1/providers/markets/{id}");
    let new_end = iso(7 * 86_400);
    let r = f
        .app
        .put(&path, Some(&f.provider.key), json!({
            "question": "Will the away team win?",
            "min_bet_amount": "5000",
            "ends_at": new_end,
            "creator_fee_percentage": 2.5,
            "metadata": { "category": "esports", "resolution_source": "example.org" },
        }))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body["market"]["id"], id);
    assert_eq!(r.body["market"]["question"], "Will the away team win?");
    assert_eq!(r.body["market"]["description"], "Resolves on the final whistle.");
    assert_eq!(r.body["market"]["status"], "active");
    assert!(r.body["market"]["updated_at"].is_string());
    assert_eq!(r.body["message"], "Market updated");
    let after = f.app.get(&format!("/v1/markets/{id}"), None).await.body;
    // The search index follows the edit.
    let found = |q: &'static str| {
        let app = &f.app;
        async move { app.post("/v1/markets/search", None, json!({ "filters": { "search_query": q } })).await.body["pagination"]["total"].clone() }
    };
    assert_eq!(found("away team").await, 1);
    assert_eq!(found("home team").await, 0);
    assert_eq!(after["minimum_bet"], "5000");
    assert_eq!(after["category"], "esports");
    assert_eq!(after["resolution_source"], "example.org");
    assert_eq!(after["creator_fee_percentage"], json!(2.5));
    assert_eq!(after["tags"], d["tags"]);
    assert_eq!(after["description"], d["description"]);

    for (body, field) in [
        (json!({ "min_bet_amount": (200 * ONE_TOKEN).to_string() }), "min_bet_amount"),
        (json!({ "ends_at": iso(-7200) }), "ends_at"),
        (json!({ "creator_fee_percentage": 49.5 }), "creator_fee_percentage"),
        (json!({ "question": "" }), "question"),
        (json!({ "min_bet_amount": "abc" }), "min_bet_amount"),
    ] {
        let r = f.app.put(&path, Some(&f.provider.key), body).await;
        assert_field_error(&r, field);
    }
    let unchanged = f.app.get(&format!("/v1/markets/{id}"), None).await.body;
    assert_eq!(unchanged["question"], "Will the away team win?");
    assert_eq!(unchanged["minimum_bet"], "5000");
    let missing = f.app.put(&format!("/v1/providers/markets/{}", uuid()), Some(&f.provider.key), json!({})).await;
    assert_problem(&missing, 404, "not_found");
}

#[tokio::test]
async fn outcomes_can_be_added_before_trading_and_updated() {
    let f = Fixture::new().await;
    let d = f.market(2).await;
    let id = d["id"].as_str().unwrap();
    let r = f
        .app
        .post(
            &format!("/v1/providers/markets/{id}/outcomes"),
            Some(&f.provider.key),
            json!({ "title": "Draw", "description": "Level at full time", "images": { "logo": "https://example.com/d.png" }, "outcome_index": 2 }),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let o = &r.body["outcome"];
    assert_eq!(o["title"], "Draw");
    assert_eq!(o["description"], "Level at full time");
    assert_eq!(o["images"], json!({ "logo": "https://example.com/d.png" }));
    assert_eq!(o["outcome_index"], 2);
    assert_eq!(o["total_shares"], "0");
    assert_eq!(o["current_price"], "0.333333333333333333");
    assert_eq!(r.body["message"], "Outcome created");
    let after = f.app.get(&format!("/v1/markets/{id}"), None).await.body;
    assert_eq!(after["b"], B_THREE_OUTCOMES);
    for o in after["outcomes"].as_array().unwrap() {
        assert_eq!(o["current_price"], "0.333333333333333333");
    }
    // No extra funding before the first trade: the treasury paid only the liquidity.
    assert_eq!(f.treasury_balance().await, (999_000 * ONE_TOKEN).to_string());

    let duplicate = f
        .app
        .post(&format!("/v1/providers/markets/{id}/outcomes"), Some(&f.provider.key), json!({ "title": "Again", "outcome_index": 2 }))
        .await;
    assert_field_error(&duplicate, "outcome_index");
    let untitled = f
        .app
        .post(&format!("/v1/providers/markets/{id}/outcomes"), Some(&f.provider.key), json!({ "outcome_index": 3 }))
        .await;
    assert_field_error(&untitled, "title");

    let outcome_id = o["id"].as_str().unwrap();
    let path = format!("/v1/providers/markets/{id}/outcomes/{outcome_id}");
    let r = f.app.put(&path, Some(&f.provider.key), json!({ "title": "Tie" })).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body["outcome"]["title"], "Tie");
    assert_eq!(r.body["outcome"]["description"], "Level at full time");
    assert_eq!(r.body["outcome"]["outcome_index"], 2);
    assert_eq!(r.body["message"], "Outcome updated");
    let clash = f.app.put(&path, Some(&f.provider.key), json!({ "outcome_index": 0 })).await;
    assert_field_error(&clash, "outcome_index");
    let unknown = f.app.put(&format!("/v1/providers/markets/{id}/outcomes/{}", uuid()), Some(&f.provider.key), json!({ "title": "x" })).await;
    assert_problem(&unknown, 404, "not_found");
}

#[tokio::test]
async fn search_filters_sorts_and_paginates_exactly() {
    let f = Fixture::new().await;
    let other_token = f.app.create_token("DAI");
    f.app.fund_treasury(&f.provider, &other_token, 10_000 * ONE_TOKEN).await;
    let mut ids = Vec::new();
    for i in 0..7 {
        let mut body = f.market_body(2);
        body["question"] = json!(format!("Question {i} about {}", if i % 2 == 0 { "Rain" } else { "sun" }));
        body["metadata"]["category"] = json!(if i < 4 { "weather" } else { "sports" });
        if i == 6 {
            body["token_id"] = json!(other_token);
        }
        let r = f.create_market(body).await;
        assert_eq!(r.status, StatusCode::CREATED);
        ids.push(r.body["market"]["id"].as_str().unwrap().to_string());
    }
    let other = f.app.create_provider("Other Co");
    let other_token_treasury = f.app.create_token("EUR");
    f.app.fund_treasury(&other, &other_token_treasury, 10_000 * ONE_TOKEN).await;

    let all = f.app.post("/v1/markets/search", None, json!({})).await;
    assert_eq!(all.status, StatusCode::OK);
    assert_eq!(all.body["pagination"], json!({ "page": 1, "per_page": 20, "total": 7, "total_pages": 1 }));
    let listed: Vec<&str> = all.body["data"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap()).collect();
    let newest_first: Vec<&str> = ids.iter().rev().map(String::as_str).collect();
    assert_eq!(listed, newest_first, "default sort is newest first");
    let item = &all.body["data"][0];
    for field in ["id", "question", "description", "category", "status", "total_pool", "total_volume", "outcomes", "token", "provider", "created_at", "closes_at"] {
        assert!(!item[field].is_null(), "{field}");
    }
    assert_eq!(item["token"], json!({ "id": other_token, "symbol": "DAI", "name": "DAI token" }));
    assert_eq!(item["provider"], json!({ "id": f.provider.id, "name": "Acme Games" }));

    // Pages of 3 cover everything once, in order, both ways.
    for direction in ["asc", "desc"] {
        let mut paged = Vec::new();
        for page in 1..=3 {
            let body = json!({ "pagination": { "page": page, "per_page": 3 }, "sort": { "field": "created_at", "direction": direction } });
            let r = f.app.post("/v1/markets/search", None, body).await;
            assert_eq!(r.body["pagination"], json!({ "page": page, "per_page": 3, "total": 7, "total_pages": 3 }));
            paged.extend(r.body["data"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap().to_string()));
        }
        if direction == "desc" {
            paged.reverse();
        }
        assert_eq!(paged, ids, "{direction}");
    }
    let beyond = f.app.post("/v1/markets/search", None, json!({ "pagination": { "page": 4, "per_page": 3 } })).await;
    assert_eq!(beyond.body["data"], json!([]));
    assert_eq!(beyond.body["pagination"]["total"], 7);

    let count = |body: Value| {
        let app = &f.app;
        async move { app.post("/v1/markets/search", None, body).await.body["pagination"]["total"].as_i64().unwrap() }
    };
    assert_eq!(count(json!({ "filters": { "category": "weather" } })).await, 4);
    assert_eq!(count(json!({ "filters": { "search_query": "RAIN" } })).await, 4);
    assert_eq!(count(json!({ "filters": { "search_query": "whistle" } })).await, 7, "matches description");
    assert_eq!(count(json!({ "filters": { "search_query": "100%" } })).await, 0, "wildcards are literal");
    assert_eq!(count(json!({ "filters": { "token_id": other_token } })).await, 1);
    assert_eq!(count(json!({ "filters": { "provider_id": f.provider.id } })).await, 7);
    assert_eq!(count(json!({ "filters": { "provider_id": other.id } })).await, 0);
    assert_eq!(count(json!({ "filters": { "status": "active" } })).await, 7);
    assert_eq!(count(json!({ "filters": { "status": "resolved" } })).await, 0);
    assert_eq!(count(json!({ "filters": { "status": "active", "category": "sports", "search_query": "sun" } })).await, 1);
    let none = f.app.post("/v1/markets/search", None, json!({ "filters": { "category": "none" } })).await;
    assert_eq!(none.body["pagination"], json!({ "page": 1, "per_page": 20, "total": 0, "total_pages": 0 }));

    let by_question = f.app.post("/v1/markets/search", None, json!({ "sort": { "field": "question", "direction": "asc" }, "pagination": { "per_page": 1 } })).await;
    assert_eq!(by_question.body["data"][0]["id"], json!(ids[0]));

    for (body, field) in [
        (json!({ "pagination": { "page": 0 } }), "pagination.page"),
        (json!({ "pagination": { "per_page": 101 } }), "pagination.per_page"),
        (json!({ "pagination": { "per_page": 0 } }), "pagination.per_page"),
        (json!({ "sort": { "field": "liquidity" } }), "sort.field"),
        (json!({ "sort": { "direction": "up" } }), "sort.direction"),
        (json!({ "filters": { "status": "open" } }), "filters.status"),
        (json!({ "pagination": { "page": "2" } }), "pagination.page"),
    ] {
        let r = f.app.post("/v1/markets/search", None, body).await;
        assert_field_error(&r, field);
    }
}

#[tokio::test]
async fn closed_status_is_derived_from_ends_at() {
    let f = Fixture::new().await;
    let mut body = f.market_body(2);
    body["starts_at"] = json!(iso(-7200));
    body["ends_at"] = json!(iso(2));
    let r = f.create_market(body).await;
    let id = r.body["market"]["id"].as_str().unwrap().to_string();
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
    let d = f.app.get(&format!("/v1/markets/{id}"), None).await;
    assert_eq!(d.body["status"], "closed");
    let closed = f.app.post("/v1/markets/search", None, json!({ "filters": { "status": "closed" } })).await;
    assert_eq!(closed.body["pagination"]["total"], 1);
    assert_eq!(closed.body["data"][0]["status"], "closed");
}

#[tokio::test]
async fn unknown_market_is_404() {
    let f = Fixture::new().await;
    assert_problem(&f.app.get(&format!("/v1/markets/{}", uuid()), None).await, 404, "not_found");
    assert_problem(&f.app.get("/v1/markets/garbage", None).await, 404, "not_found");
}

async fn search_total(f: &Fixture, filters: Value) -> i64 {
    let r = f.app.post("/v1/markets/search", None, json!({ "filters": filters })).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    r.body["pagination"]["total"].as_i64().unwrap()
}

/// Search totals are cached per filter set; every change to the set of matching markets,
/// and the passing of a market's end, must show at once.
#[tokio::test]
async fn search_totals_follow_every_change_of_the_market_set() {
    let f = Fixture::new().await;
    let filters = [
        json!({}),
        json!({ "category": "sports" }),
        json!({ "category": "weather" }),
        json!({ "status": "active" }),
        json!({ "status": "closed" }),
        json!({ "status": "cancelled" }),
        json!({ "search_query": "flood" }),
    ];
    let mut expected = [0, 0, 0, 0, 0, 0, 0];
    let check = |expected: [i64; 7]| {
        let f = &f;
        let filters = &filters;
        async move {
            for (filter, want) in filters.iter().zip(expected) {
                assert_eq!(search_total(f, filter.clone()).await, want, "total for {filter}");
            }
        }
    };
    check(expected).await;

    let first = f.market(2).await;
    let id = first["id"].as_str().unwrap().to_string();
    expected = [1, 1, 0, 1, 0, 0, 0];
    check(expected).await;
    f.market(2).await;
    expected = [2, 2, 0, 2, 0, 0, 0];
    check(expected).await;

    // A category or text change moves the market between filter sets.
    let path = format!("/v1/providers/markets/{id}");
    let patch = json!({ "metadata": { "category": "weather" }, "description": "Called off if the pitch floods." });
    assert_eq!(f.app.put(&path, Some(&f.provider.key), patch).await.status, StatusCode::OK);
    expected = [2, 1, 1, 2, 0, 0, 1];
    check(expected).await;

    // The end passing turns active into closed with no write at all.
    let soon = (time::OffsetDateTime::now_utc() + time::Duration::milliseconds(1500)).format(&time::format_description::well_known::Rfc3339).unwrap();
    let r = f.app.put(&path, Some(&f.provider.key), json!({ "ends_at": soon })).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    check(expected).await;
    tokio::time::sleep(std::time::Duration::from_millis(1700)).await;
    expected = [2, 1, 1, 1, 1, 0, 1];
    check(expected).await;

    // Settling changes the stored status.
    let cancel = f.app.post(&format!("{path}/cancel"), Some(&f.provider.key), json!({ "canceller_wallet_id": "ops", "reason": "flooded" })).await;
    assert_eq!(cancel.status, StatusCode::OK, "{}", cancel.body);
    expected = [2, 1, 1, 1, 0, 1, 1];
    check(expected).await;
}

/// Ids of one search, all on one page.
async fn searched_ids(f: &Fixture, filters: &Value, field: &str, direction: &str) -> Vec<Value> {
    let body = json!({ "filters": filters, "sort": { "field": field, "direction": direction }, "pagination": { "per_page": 100 } });
    let r = f.app.post("/v1/markets/search", None, body).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    r.body["data"].as_array().unwrap().clone()
}

/// A filtered search lists exactly the markets of the unfiltered search, in the same sort,
/// that its filters admit, whichever of the two is asked first.
#[tokio::test]
async fn filtered_searches_keep_the_order_of_their_sort() {
    let f = Fixture::new().await;
    let other_token = f.app.create_token("DAI");
    f.app.fund_treasury(&f.provider, &other_token, 10_000 * ONE_TOKEN).await;
    // Ends in an order unrelated to creation; one market cancelled, one on another token.
    for (i, hours) in [5, 2, 9, 1, 7, 3, 8, 4].into_iter().enumerate() {
        let mut body = f.market_body(2);
        body["question"] = json!(format!("Question {i} about {}", if i % 3 == 0 { "Rain" } else { "sun" }));
        body["metadata"]["category"] = json!(if i % 2 == 0 { "weather" } else { "sports" });
        body["ends_at"] = json!(iso(hours * 3600));
        if i == 5 {
            body["token_id"] = json!(other_token);
        }
        let r = f.create_market(body).await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
        if i == 4 {
            let path = format!("/v1/providers/markets/{}/cancel", r.body["market"]["id"].as_str().unwrap());
            let cancel = f.app.post(&path, Some(&f.provider.key), json!({ "canceller_wallet_id": "ops", "reason": "test" })).await;
            assert_eq!(cancel.status, StatusCode::OK, "{}", cancel.body);
        }
    }
    let admits = |filters: &Value, m: &Value| {
        let text = filters["search_query"].as_str().map(str::to_lowercase);
        filters["category"].as_str().is_none_or(|c| m["category"] == c)
            && filters["status"].as_str().is_none_or(|s| m["status"] == s)
            && filters["token_id"].as_str().is_none_or(|t| m["token"]["id"] == t)
            && text.is_none_or(|t| {
                m["question"].as_str().unwrap().to_lowercase().contains(&t) || m["description"].as_str().unwrap().to_lowercase().contains(&t)
            })
    };
    let filter_sets = [
        json!({ "category": "weather" }),
        json!({ "status": "active" }),
        json!({ "status": "cancelled" }),
        json!({ "search_query": "rain" }),
        json!({ "token_id": other_token }),
        json!({ "category": "sports", "status": "active", "search_query": "sun" }),
    ];
    let mut sizes = Vec::new();
    for filters in &filter_sets {
        for (field, direction) in [("closes_at", "asc"), ("created_at", "desc"), ("closes_at", "desc"), ("total_volume", "asc")] {
            let filtered: Vec<Value> = searched_ids(&f, filters, field, direction).await.iter().map(|m| m["id"].clone()).collect();
            let all = searched_ids(&f, &json!({}), field, direction).await;
            assert_eq!(all.len(), 8);
            let expected: Vec<Value> = all.iter().filter(|m| admits(filters, m)).map(|m| m["id"].clone()).collect();
            assert_eq!(filtered, expected, "{filters} by {field} {direction}");
            if field == "closes_at" && direction == "asc" {
                sizes.push(filtered.len());
            }
        }
    }
    assert_eq!(sizes, [4, 7, 1, 3, 1, 3], "the filters select what the markets were made to match");
}
