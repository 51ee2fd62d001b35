//! Hostile input: page arithmetic at the edges of i64 and NUL characters in bodies and
//! paths are refused with problem+json and change nothing, on both backends.

use reqwest::StatusCode;
use serde_json::json;

use super::support::*;

#[tokio::test]
async fn pages_whose_offset_overflows_are_refused() {
    let f = Fixture::new().await;
    f.market(2).await;
    for (route, page, per_page) in [
        ("/v1/markets/positions/search", i64::MAX, 2),
        ("/v1/markets/positions/search", 2_305_843_009_213_693_953, 8),
        ("/v1/markets/search", i64::MAX, 100),
        ("/v1/markets/price-history/search", 4_611_686_018_427_387_905, 3),
    ] {
        let mut body = json!({ "pagination": { "page": page, "per_page": per_page } });
        if route.contains("price-history") {
            body["filters"] = json!({ "market_id": uuid() });
        }
        let r = f.app.post(route, None, body).await;
        assert_problem(&r, 422, "validation_failed");
        assert_field_error(&r, "pagination.page");
    }
    // The last page (as documented, i64::MAX / 100, so that its offset fits at 100 per page)
    // is a valid, empty page at any page size; one more is refused at any page size.
    let last = i64::MAX / 100;
    for per_page in [1, 100] {
        let r = f.app.post("/v1/markets/search", None, json!({ "pagination": { "page": last, "per_page": per_page } })).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        assert_eq!(r.body["data"], json!([]));
        assert_eq!(r.body["pagination"]["total"], 1);
        let r = f.app.post("/v1/markets/search", None, json!({ "pagination": { "page": last + 1, "per_page": per_page } })).await;
        assert_problem(&r, 422, "validation_failed");
        assert_field_error(&r, "pagination.page");
    }
    let documented = &contract::openapi::document()["components"]["schemas"]["PaginationInput"]["properties"]["page"]["maximum"];
    assert_eq!(documented.as_i64(), Some(last));
}

#[tokio::test]
async fn nul_characters_are_refused_everywhere_and_change_nothing() {
    let f = Fixture::new().await;
    let treasury_before = f.treasury_balance().await;
    let mut market = f.market_body(2);
    market["question"] = json!("Will it\u{0}rain?");
    let r = f.create_market(market).await;
    assert_problem(&r, 422, "validation_failed");
    assert_field_error(&r, "question");
    let mut market = f.market_body(2);
    market["outcomes"][1]["title"] = json!("No\u{0}");
    let r = f.create_market(market).await;
    assert_field_error(&r, "outcomes[1].title");
    assert_eq!(f.treasury_balance().await, treasury_before, "no market was funded");
    let r = f.app.post("/v1/markets/search", None, json!({ "filters": { "search_query": "a\u{0}b" } })).await;
    assert_problem(&r, 422, "validation_failed");
    assert_field_error(&r, "filters.search_query");
    let r = f.app.post("/v1/markets/search", None, json!({ "filters": { "category\u{0}": "x" } })).await;
    assert_problem(&r, 422, "validation_failed");
    let deposit = json!({ "token_id": format!("{}\u{0}", f.token_id), "amount": "5", "reference": "nul-1" });
    let r = f.app.post("/v1/providers/treasury/deposits", Some(&f.provider.key), deposit).await;
    assert_field_error(&r, "token_id");
    let deposit = json!({ "token_id": f.token_id, "amount": "5", "reference": "nul\u{0}2" });
    let r = f.app.post("/v1/providers/treasury/deposits", Some(&f.provider.key), deposit).await;
    assert_field_error(&r, "reference");
    assert_eq!(f.treasury_balance().await, treasury_before, "no deposit was booked");
    let nonce = json!({ "wallet_address": "0x00000000000000000000000000000000000000a1", "provider_id": f.provider.id, "x": ["\u{0}"] });
    let r = f.app.post("/v1/auth/nonce", None, nonce).await;
    assert_field_error(&r, "x[0]");
    for path in ["/v1/markets/%00", "/v1/markets/a%00b", "/v1/providers/wallets/%00"] {
        let r = f.app.get(path, Some(&f.provider.key)).await;
        assert_problem(&r, 404, "not_found");
    }
    let r = f.app.post("/v1/markets/%00/bet", None, json!({})).await;
    assert_problem(&r, 404, "not_found");
}

#[tokio::test]
async fn paths_that_do_not_decode_are_404_problems() {
    let f = Fixture::new().await;
    for path in ["/v1/markets/%FF", "/v1/markets/a%C3%28b"] {
        assert_problem(&f.app.get(path, None).await, 404, "not_found");
    }
    let r = f.app.get("/v1/providers/wallets/%FE%FF", Some(&f.provider.key)).await;
    assert_problem(&r, 404, "not_found");
}

/// Sends `head` and the first half of `body`, waits, sends the rest and then a second
/// request on the same connection; returns every status line the server wrote back.
async fn statuses_on_one_connection(base: &str, head: &str, body: &[u8]) -> Vec<String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let address = base.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let half = body.len() / 2;
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(&body[..half]).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    // A server that already answered and closed makes these writes or the reads below fail.
    let _ = stream.write_all(&body[half..]).await;
    let _ = stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: hanson\r\n\r\n").await;
    let mut received = Vec::new();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(5);
    let mut buf = [0u8; 4096];
    loop {
        let text = String::from_utf8_lossy(&received).to_string();
        if text.matches("HTTP/1.1 ").count() >= 2 {
            break;
        }
        match tokio::time::timeout_at(deadline, stream.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => received.extend_from_slice(&buf[..n]),
            _ => break,
        }
    }
    let text = String::from_utf8_lossy(&received).to_string();
    // A body need not end with a newline: status lines are found anywhere in the stream.
    text.match_indices("HTTP/1.1 ").map(|(i, _)| text[i + 9..i + 12].to_string()).collect()
}

#[tokio::test]
async fn early_rejections_keep_the_connection_alive() {
    let f = Fixture::new().await;
    let body = format!("{{\"session_id\":\"s\",\"outcome_id\":\"o\",\"amount\":\"1\",\"pad\":\"{}\"}}", "x".repeat(30_000));
    let market = uuid();
    // 401: no credentials.
    let head = format!(
        "POST /v1/markets/{market}/bet HTTP/1.1\r\nHost: hanson\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    assert_eq!(statuses_on_one_connection(&f.app.base, &head, body.as_bytes()).await, ["401", "200"]);
    // 415: not JSON.
    let head = format!(
        "POST /v1/markets/search HTTP/1.1\r\nHost: hanson\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    assert_eq!(statuses_on_one_connection(&f.app.base, &head, body.as_bytes()).await, ["415", "200"]);
}

#[tokio::test]
async fn arrays_are_refused_where_objects_belong() {
    let f = Fixture::new().await;
    for (body, field) in [
        (json!({ "pagination": [1, 2] }), "pagination"),
        (json!({ "sort": ["question", "asc"] }), "sort"),
        (json!({ "filters": ["sports"] }), "filters"),
    ] {
        let r = f.app.post("/v1/markets/search", None, body).await;
        assert_problem(&r, 422, "validation_failed");
        assert_field_error(&r, field);
    }
    let treasury_before = f.treasury_balance().await;
    let mut market = f.market_body(2);
    market["outcomes"] = json!([["Yes", "", {}, 0], ["No", "", {}, 1]]);
    let r = f.create_market(market).await;
    assert_problem(&r, 422, "validation_failed");
    assert_field_error(&r, "outcomes[0]");
    assert_eq!(f.treasury_balance().await, treasury_before, "no market was created");
    // Objects still read as before, numbers exactly.
    let r = f.app.post("/v1/markets/search", None, json!({ "pagination": { "page": 1, "per_page": 5 }, "sort": { "field": "question", "direction": "asc" } })).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body["pagination"]["per_page"], 5);
}

#[tokio::test]
async fn settlement_may_not_name_another_providers_wallet() {
    let f = Fixture::new().await;
    let other = f.app.create_provider("Other Games");
    let other_wallet = f.app.fund_wallet(&other, &f.token_id, "0x00000000000000000000000000000000000000d2", 1).await;
    let market = f.market(2).await;
    let (id, winner) = (market["id"].as_str().unwrap(), market["outcomes"][0]["id"].as_str().unwrap());
    let resolve = |resolver: &str| json!({ "winning_outcome_id": winner, "resolver_wallet_id": resolver });
    let r = f.app.post(&format!("/v1/providers/markets/{id}/resolve"), Some(&f.provider.key), resolve(&other_wallet)).await;
    assert_problem(&r, 422, "validation_failed");
    assert_field_error(&r, "resolver_wallet_id");
    let cancel = json!({ "canceller_wallet_id": other_wallet, "reason": "test" });
    let r = f.app.post(&format!("/v1/providers/markets/{id}/cancel"), Some(&f.provider.key), cancel).await;
    assert_field_error(&r, "canceller_wallet_id");
    assert_eq!(f.app.get(&format!("/v1/markets/{id}"), None).await.body["status"], "active", "nothing was settled");
    // Its own wallet, or a label, is fine.
    let r = f.app.post(&format!("/v1/providers/markets/{id}/resolve"), Some(&f.provider.key), resolve(&f.creator_wallet_id)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body["resolver_wallet_id"], f.creator_wallet_id.as_str());
}
