//! Operating flags of `hanson serve`: metrics on an address of their own, and the event log's
//! retention shortened so that pruning runs.

use reqwest::StatusCode;

use super::support::library::Db;
use super::support::*;

async fn get_text(client: &reqwest::Client, url: &str) -> (StatusCode, String) {
    let r = client.get(url).send().await.unwrap();
    (r.status(), r.text().await.unwrap())
}

#[tokio::test]
async fn metrics_listen_serves_metrics_apart_from_the_api() {
    let db = TestDatabase::create();
    let client = reqwest::Client::new();
    // Both: the API's address keeps /metrics unless told otherwise.
    let both = ServeProcess::start_flags(&db.url, &["--metrics-listen", "127.0.0.1:0"]).await;
    let metrics_url = both.metrics_url().await;
    assert!(metrics_url.starts_with("http://127.0.0.1:") && metrics_url.ends_with("/metrics"), "{metrics_url}");
    assert_ne!(metrics_url, format!("{}/metrics", both.base));
    let (status, text) = get_text(&client, &metrics_url).await;
    assert_eq!(status, 200);
    assert!(text.contains("# TYPE hanson_http_requests counter"), "{text}");
    assert_eq!(get_text(&client, &format!("{}/metrics", both.base)).await.0, 200);
    // The metrics address serves nothing else.
    let base = metrics_url.trim_end_matches("/metrics");
    for path in ["/healthz", "/v1/markets", "/"] {
        assert_eq!(get_text(&client, &format!("{base}{path}")).await.0, 404, "{path}");
    }
    drop(both);

    let apart = ServeProcess::start_flags(&db.url, &["--metrics-listen", "127.0.0.1:0", "--no-public-metrics"]).await;
    let metrics_url = apart.metrics_url().await;
    let r = client.get(format!("{}/metrics", apart.base)).send().await.unwrap();
    assert_eq!(r.status(), 404);
    assert_eq!(r.headers()["content-type"], "application/problem+json");
    assert_eq!(r.json::<serde_json::Value>().await.unwrap()["code"], "not_found");
    let (status, text) = get_text(&client, &metrics_url).await;
    assert_eq!(status, 200);
    // The API's requests are counted and shown on the metrics address.
    assert!(text.contains("hanson_http_requests_total{route=\"/metrics\",method=\"GET\",status=\"404\"} 1"), "{text}");
}

#[tokio::test]
async fn a_shortened_retention_prunes_the_event_log() {
    let arena = Arena::new(1, 100 * ONE_TOKEN).await;
    let trader = &arena.traders[0];
    for i in 0..6 {
        let r = arena.bet(trader, i % 2, ONE_TOKEN).await;
        assert_eq!(r.status, 200, "{}", r.body);
    }
    let db = Db::open(&arena.f.app.database_url);
    let market = arena.market_id().to_string();
    let count = || {
        let (db, market) = (db.clone(), market.clone());
        async move { db.int("SELECT count(*) FROM events WHERE market_id = $1", &[(&market).into()]).await }
    };
    let before = count().await;
    assert!(before >= 7, "market.created and six trades at least: {before}");
    let last = db.int("SELECT max(seq) FROM events WHERE market_id = $1", &[(&market).into()]).await;
    // A second server on the database, keeping only each market's last 2 events of any age.
    let flags = ["--event-retention-secs", "0", "--event-retention-events", "2", "--event-prune-every-secs", "1", "--metrics-listen", "127.0.0.1:0"];
    let pruner = ServeProcess::start_flags(&arena.f.app.database_url, &flags).await;
    let mut left = before;
    for _ in 0..300 {
        left = count().await;
        if left == 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(left, 2, "seqs {} and {last} are kept", last - 1);
    assert_eq!(db.int("SELECT min(seq) FROM events WHERE market_id = $1", &[(&market).into()]).await, last - 1);
    let (_, text) = get_text(&reqwest::Client::new(), &pruner.metrics_url().await).await;
    let pruned: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("hanson_event_log_pruned_total "))
        .unwrap_or_else(|| panic!("no pruning counter: {text}"))
        .parse()
        .unwrap();
    assert!(pruned >= (before - 2) as u64, "{pruned} pruned, {before} before");
    // The books are untouched by pruning.
    let (ok, report) = audit_on(&arena.f.app.database_url);
    assert!(ok, "{report}");
}
