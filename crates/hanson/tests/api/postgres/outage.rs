//! A database outage: while PostgreSQL refuses the service's connections, every request that
//! needs it is 503 problem+json with Retry-After (readiness too), nothing changes, and the
//! service recovers by itself once the database is back.

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::json;

use super::support::library::postgres_admin;
use super::support::*;

fn admin_url() -> String {
    std::env::var("HANSON_TEST_POSTGRES_URL").unwrap_or_else(|_| DEFAULT_POSTGRES_URL.to_string())
}

fn database_name(url: &str) -> String {
    let path = url.rsplit('/').next().unwrap_or_default();
    path.split('?').next().unwrap_or_default().to_string()
}

/// Refuses new connections to the test's database and ends the ones it has.
fn cut_off(name: &str) {
    postgres_admin(
        &admin_url(),
        format!(
            "ALTER DATABASE {name} ALLOW_CONNECTIONS false; \
             SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}' AND pid <> pg_backend_pid();"
        ),
    )
    .expect("cut off the test database");
}

fn restore(name: &str) {
    postgres_admin(&admin_url(), format!("ALTER DATABASE {name} ALLOW_CONNECTIONS true")).expect("restore the test database");
}

fn assert_unavailable(r: &Response) {
    assert_problem(r, 503, "service_unavailable");
    assert_eq!(r.headers.get("retry-after").and_then(|v| v.to_str().ok()), Some("1"), "{}", r.body);
    let text = r.body.to_string();
    assert!(!text.contains("postgres") && !text.contains("FATAL"), "no database message leaks: {text}");
}

#[tokio::test]
async fn an_outage_is_503_with_retry_after_and_the_service_recovers() {
    let f = Fixture::new().await;
    let market = f.market(2).await;
    let market_id = market["id"].as_str().unwrap().to_string();
    let treasury_before = f.treasury_balance().await;
    let name = database_name(&f.app.database_url);

    cut_off(&name);
    assert_unavailable(&f.app.get("/readyz", None).await);
    assert_unavailable(&f.app.get(&format!("/v1/markets/{market_id}"), None).await);
    assert_unavailable(&f.app.post("/v1/markets/search", None, json!({})).await);
    let deposit = json!({ "token_id": f.token_id, "amount": "5", "reference": "during-outage" });
    assert_unavailable(&f.app.post("/v1/providers/treasury/deposits", Some(&f.provider.key), deposit.clone()).await);
    // The process itself is up.
    assert_eq!(f.app.get("/healthz", None).await.status, StatusCode::OK);

    restore(&name);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let r = f.app.get("/readyz", None).await;
        if r.status == StatusCode::OK {
            assert_eq!(r.body["status"], "ready");
            break;
        }
        assert!(Instant::now() < deadline, "no recovery within 10 s: {}", r.body);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(f.treasury_balance().await, treasury_before, "the refused deposit changed nothing");
    let r = f.app.get(&format!("/v1/markets/{market_id}"), None).await;
    assert_eq!(r.status, StatusCode::OK);
    let r = f.app.post("/v1/providers/treasury/deposits", Some(&f.provider.key), deposit).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
}

/// The last statements of the service's connections to the test's database that have sat
/// idle inside a transaction for longer than `for_ms`, and how many connections it has.
fn stuck_in_transaction(name: &str, for_ms: u64) -> (Vec<String>, i64) {
    let (url, name) = (admin_url(), name.to_string());
    std::thread::spawn(move || {
        let mut client = postgres::Client::connect(&url, postgres::NoTls).expect("admin connection");
        let connections: i64 = client
            .query_one("SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND application_name = 'hanson'", &[&name])
            .expect("pg_stat_activity")
            .get(0);
        let stuck = client
            .query(
                "SELECT query FROM pg_stat_activity WHERE datname = $1 AND application_name = 'hanson' \
                 AND state = 'idle in transaction' AND state_change < now() - make_interval(secs => $2::float8 / 1000)",
                &[&name, &(for_ms as f64)],
            )
            .expect("pg_stat_activity");
        (stuck.iter().map(|r| r.get::<_, String>(0)).collect(), connections)
    })
    .join()
    .expect("admin thread")
}

/// A read's COMMIT is sent without waiting for its answer, yet it reaches the server at once:
/// no connection the service keeps between requests is left inside a transaction, whose
/// snapshot would hold back vacuum for as long as the connection idled.
#[tokio::test]
async fn reads_leave_no_connection_inside_a_transaction() {
    let f = Fixture::new().await;
    let market = f.market(2).await;
    let path = format!("/v1/markets/{}", market["id"].as_str().unwrap());
    // Concurrent reads, so that several pooled connections each end a read and then idle.
    for _ in 0..3 {
        let reads = (0..8).map(|_| f.app.get(&path, None));
        for r in futures_util::future::join_all(reads).await {
            assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        }
        let searches = (0..8).map(|_| f.app.post("/v1/markets/search", None, json!({})));
        for r in futures_util::future::join_all(searches).await {
            assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        }
    }
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let (stuck, connections) = stuck_in_transaction(&database_name(&f.app.database_url), 1_000);
    assert!(connections >= 3, "the reads ran on {connections} connection(s); the test needs several");
    assert!(stuck.is_empty(), "connections idle inside a transaction for over a second, last statements: {stuck:?}");
}
