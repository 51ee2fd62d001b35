//! PostgreSQL only: several nodes (each its own server and Store) on one database, exact
//! NUMERIC money on the wire, and clean errors for bad database URLs.

use std::process::Command;

use reqwest::StatusCode;
use serde_json::json;
use tokio::net::TcpListener;

use hanson::store::sql::{Param, Value};
use hanson::store::Store;

use super::support::*;

/// Another node: its own Store (pool) and server on the same database.
async fn node(database_url: &str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    library::serve(listener, database_url, Settings::default(), Default::default(), std::future::pending());
    base
}

#[tokio::test]
async fn nodes_starting_together_migrate_once() {
    let db = TestDatabase::create();
    let opened: Vec<_> = (0..4)
        .map(|_| {
            let url = db.url.clone();
            std::thread::spawn(move || Store::open(&url).map(drop).map_err(|e| e.to_string()))
        })
        .collect();
    for handle in opened {
        handle.join().unwrap().expect("every node opens");
    }
    // Numbers are reserved per change, so the files may skip one: count them, and take the highest.
    let numbers: Vec<i64> = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/migrations/postgres"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy()[..4].parse().unwrap())
        .collect();
    let (files, last) = (numbers.len() as i64, *numbers.iter().max().unwrap());
    let store = Store::open(&db.url).unwrap();
    let row =
        store.read(|c| c.query_one("SELECT count(*), count(DISTINCT version), max(version) FROM schema_migrations", &[])).await.unwrap();
    assert_eq!(row.0, vec![Value::Int(files), Value::Int(files), Value::Int(last)]);
}

#[tokio::test]
async fn two_nodes_share_one_database() {
    let app = TestApp::spawn().await;
    let other = node(&app.database_url).await;
    let provider = app.create_provider("Acme");
    let token_id = app.create_token("USDC");
    app.fund_treasury(&provider, &token_id, 5 * ONE_TOKEN).await;

    // What one node wrote, the other reads.
    let treasury = json_of(app.client.get(format!("{other}/v1/providers/treasury")).bearer_auth(&provider.key)).await;
    assert_eq!(treasury["balances"][0]["balance"], (5 * ONE_TOKEN).to_string());

    // Concurrent first deposits into one new wallet through both nodes: the wallet and its
    // account are created once and no deposit is lost.
    let address = "0x00000000000000000000000000000000000000d1";
    let deposits = (0..24u128).map(|i| {
        let base = if i % 2 == 0 { app.base.clone() } else { other.clone() };
        let request = app
            .client
            .post(format!("{base}/v1/providers/wallets/deposits"))
            .bearer_auth(&provider.key)
            .json(&json!({ "wallet_address": address, "token_id": token_id, "amount": (i + 1).to_string(), "reference": uuid() }));
        async move { request.send().await.unwrap() }
    });
    let responses = futures_join_all(deposits).await;
    let mut wallet_ids: Vec<String> = Vec::new();
    for r in responses {
        assert_eq!(r.status(), StatusCode::CREATED);
        let body: serde_json::Value = r.json().await.unwrap();
        wallet_ids.push(body["wallet_id"].as_str().unwrap().to_string());
    }
    wallet_ids.dedup();
    assert_eq!(wallet_ids.len(), 1, "one wallet: {wallet_ids:?}");

    // The same reference sent to both nodes at once is applied exactly once.
    let reference = uuid();
    let replays = (0..8).map(|i| {
        let base = if i % 2 == 0 { app.base.clone() } else { other.clone() };
        let request = app
            .client
            .post(format!("{base}/v1/providers/wallets/deposits"))
            .bearer_auth(&provider.key)
            .json(&json!({ "wallet_address": address, "token_id": token_id, "amount": "1000", "reference": reference }));
        async move { request.send().await.unwrap() }
    });
    let statuses: Vec<StatusCode> = futures_join_all(replays).await.iter().map(|r| r.status()).collect();
    assert_eq!(statuses.iter().filter(|s| **s == StatusCode::CREATED).count(), 1, "{statuses:?}");
    assert!(statuses.iter().all(|s| *s == StatusCode::CREATED || *s == StatusCode::OK), "{statuses:?}");

    let expected: u128 = (1..=24u128).sum::<u128>() + 1000;
    for base in [&app.base, &other] {
        let wallet = json_of(app.client.get(format!("{base}/v1/providers/wallets/{address}")).bearer_auth(&provider.key)).await;
        assert_eq!(wallet["balances"][0]["balance"], expected.to_string(), "{wallet}");
    }

    // A rotated key stops working on every node at once.
    let rotated = app.cli(&["provider", "rotate-key", &provider.id]);
    for base in [&app.base, &other] {
        let old = app.client.get(format!("{base}/v1/providers/treasury")).bearer_auth(&provider.key).send().await.unwrap();
        assert_eq!(old.status(), StatusCode::UNAUTHORIZED);
        let new =
            app.client.get(format!("{base}/v1/providers/treasury")).bearer_auth(rotated["api_key"].as_str().unwrap()).send().await.unwrap();
        assert_eq!(new.status(), StatusCode::OK);
    }
}

/// A node allowed one pooled connection (`--db-max-connections 1`): reads queued for the
/// reader thread and writes waiting for the permit that reader holds all finish, exactly,
/// and the node never opens a second pooled connection.
#[tokio::test]
async fn one_pooled_connection_serves_concurrent_reads_and_writes() {
    let app = TestApp::spawn().await;
    let provider = app.create_provider("Acme");
    let token_id = app.create_token("USDC");
    app.fund_treasury(&provider, &token_id, 5 * ONE_TOKEN).await;
    let url = format!("{}?application_name=hanson_one_connection", app.database_url);
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    library::serve_with_pool(listener, &url, 1);

    let address = "0x00000000000000000000000000000000000000d2";
    let requests = (0..48u128).map(|i| {
        let request = match i % 3 {
            0 => app
                .client
                .post(format!("{base}/v1/providers/wallets/deposits"))
                .json(&json!({ "wallet_address": address, "token_id": token_id, "amount": (i + 1).to_string(), "reference": uuid() })),
            1 => app.client.get(format!("{base}/v1/providers/treasury")),
            _ => app.client.post(format!("{base}/v1/markets/search")).json(&json!({})),
        };
        let request = request.bearer_auth(&provider.key);
        async move { request.send().await.unwrap().status() }
    });
    for (i, status) in futures_join_all(requests).await.into_iter().enumerate() {
        let expected = if i % 3 == 0 { StatusCode::CREATED } else { StatusCode::OK };
        assert_eq!(status, expected, "request {i}");
    }
    // Deposits of 1, 4, 7, ... 46 wei.
    let deposited: u128 = (0..48u128).filter(|i| i % 3 == 0).map(|i| i + 1).sum();
    let wallet = json_of(app.client.get(format!("{base}/v1/providers/wallets/{address}")).bearer_auth(&provider.key)).await;
    assert_eq!(wallet["balances"][0]["balance"], deposited.to_string(), "{wallet}");

    // The pool's connections, apart from the node's event listener.
    let observer = Store::open(&app.database_url).unwrap();
    let pooled = observer
        .read(|c| {
            c.query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'hanson_one_connection' AND query NOT LIKE 'LISTEN%'",
                &[],
            )
        })
        .await
        .unwrap();
    assert_eq!(pooled.0, vec![Value::Int(1)]);
}

/// Runs the futures concurrently (tokio tasks) and returns their outputs in order.
async fn futures_join_all<F>(futures: impl IntoIterator<Item = F>) -> Vec<F::Output>
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    let handles: Vec<_> = futures.into_iter().map(tokio::spawn).collect();
    let mut out = Vec::with_capacity(handles.len());
    for h in handles {
        out.push(h.await.unwrap());
    }
    out
}

#[tokio::test]
async fn amounts_cross_the_wire_exactly() {
    let app = TestApp::spawn().await;
    let store = Store::open(&app.database_url).unwrap();
    let mut values: Vec<u128> = vec![0, 1, 9_999, 10_000, 10_001, 99_990_000, u128::MAX, u128::MAX - 1];
    values.extend((0..=38).map(|k| 10u128.pow(k)));
    values.extend((1..=38).map(|k| 10u128.pow(k) - 1));
    for v in values {
        // PostgreSQL's own text rendering of the NUMERIC we sent, and the NUMERIC read back.
        let row = store.read(move |c| c.query_one("SELECT $1, $2::text", &[Param::Money(v), Param::Money(v)])).await.unwrap();
        assert_eq!(row.0, vec![Value::Money(v), Value::Text(v.to_string())], "{v}");
    }
    let read = |sql: &'static str| store.read(move |c| c.query_one(sql, &[]).map(|r| r.0));
    assert_eq!(read("SELECT 2.000::numeric").await.unwrap(), vec![Value::Money(2)]);
    assert!(read("SELECT (-1)::numeric").await.is_err());
    assert!(read("SELECT 1.5::numeric").await.is_err());
    assert!(read("SELECT 'NaN'::numeric").await.is_err());
    assert!(read("SELECT 340282366920938463463374607431768211456::numeric").await.is_err());
}

#[tokio::test]
async fn bad_database_urls_fail_cleanly() {
    let refused = Store::open("postgres://postgres@127.0.0.1:1/hanson").err().expect("refused");
    assert!(refused.to_string().contains("cannot connect to PostgreSQL at 127.0.0.1:1/hanson"), "{refused}");
    let missing = Store::open("postgres://postgres@127.0.0.1:5432/hanson_no_such_database").err().expect("missing");
    assert!(missing.to_string().contains("does not exist"), "{missing}");
    let malformed = Store::open("postgres://postgres@127.0.0.1:notaport/hanson").err().expect("malformed");
    assert!(malformed.to_string().contains("invalid PostgreSQL URL"), "{malformed}");

    let out = Command::new(BIN)
        .args(["provider", "create", "--name", "X", "--database-url", "postgres://postgres:secret@127.0.0.1:1/hanson"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.starts_with("database: postgres://***@127.0.0.1:1/hanson\nerror: ")
            && !stderr.contains("panicked")
            && !stderr.contains("secret"),
        "{stderr}"
    );
}
