//! Upgrades: databases written by release 0.1.0 (`tests/fixtures/v0.1.0/`, a SQLite file and a
//! PostgreSQL dump with every kind of row) are migrated by this build, pass the audit, and
//! answer a set of reads exactly as 0.1.0 answered them.
//!
//! `write_fixtures` (ignored) made them: `HANSON_WRITE_FIXTURES=1 cargo test -p hanson --test
//! api -- --ignored fixtures::write_fixtures`, on each backend. Run it again only to add a
//! release's fixtures, never to make a failing upgrade pass.

use std::path::PathBuf;

use reqwest::StatusCode;
use serde_json::{json, Value};

use super::support::library::{postgres_admin, PublicUrl, SenderSettings};
use super::support::*;

const RELEASE: &str = "v0.1.0";

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(RELEASE)
}

fn backend_name() -> &'static str {
    match BACKEND {
        Backend::Sqlite => "sqlite",
        Backend::Postgres => "postgres",
    }
}

/// Fields that change with the clock rather than with the data: left out of the comparison.
const CLOCK_FIELDS: [&str; 3] = ["volume_24h", "price_change_24h", "server_time"];

fn without_clock_fields(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|k, _| !CLOCK_FIELDS.contains(&k.as_str()));
            map.values_mut().for_each(without_clock_fields);
        }
        Value::Array(items) => items.iter_mut().for_each(without_clock_fields),
        _ => {}
    }
}

/// The reads whose answers must not change: (method, path, body) with the provider's key.
fn reads(answers: &Value) -> Vec<(String, String, Option<Value>)> {
    let mut reads = vec![
        ("GET".to_string(), "/v1/tokens".to_string(), None),
        ("GET".into(), "/v1/providers/treasury".into(), None),
        ("POST".into(), "/v1/markets/search".into(), Some(json!({}))),
    ];
    for id in answers["markets"].as_array().unwrap() {
        let id = id.as_str().unwrap();
        reads.push(("GET".into(), format!("/v1/markets/{id}"), None));
        reads.push(("POST".into(), "/v1/markets/positions/search".into(), Some(json!({ "filters": { "market_id": id } }))));
    }
    for address in answers["wallets"].as_array().unwrap() {
        reads.push(("GET".into(), format!("/v1/providers/wallets/{}", address.as_str().unwrap()), None));
    }
    reads
}

/// The answer of the server at `base` to a read, the provider's key sent on provider routes.
async fn answer(client: &reqwest::Client, base: &str, key: &str, (method, path, body): &(String, String, Option<Value>)) -> Value {
    let mut request = client.request(method.parse().unwrap(), format!("{base}{path}"));
    if path.starts_with("/v1/providers/") {
        request = request.bearer_auth(key);
    }
    if let Some(body) = body {
        request = request.json(body);
    }
    let r = request.send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK, "{method} {path}");
    let mut body: Value = r.json().await.unwrap();
    without_clock_fields(&mut body);
    body
}

async fn ok(r: Response) -> Value {
    assert!(r.status.is_success(), "{}", r.body);
    r.body
}

#[tokio::test]
#[ignore = "writes the release's fixture databases (HANSON_WRITE_FIXTURES=1)"]
async fn write_fixtures() {
    if std::env::var("HANSON_WRITE_FIXTURES").as_deref() != Ok("1") {
        return;
    }
    let schedule = "1h,1h".parse().unwrap();
    let f = Fixture::new_with(Settings {
        public_url: Some(PublicUrl::parse("https://markets.example.com").unwrap()),
        webhooks: SenderSettings { schedule, allow_private: true },
        limits: Limits { auth_per_ip: Rule::OFF, ..Limits::default() },
        ..Settings::default()
    })
    .await;
    let (app, key) = (&f.app, f.provider.key.clone());
    // A webhook endpoint nobody listens at: its deliveries stay pending.
    ok(app.post("/v1/providers/webhooks", Some(&key), json!({ "url": "http://127.0.0.1:9/hook", "event_types": ["*"] })).await).await;
    let alice = f.trader(50 * ONE_TOKEN).await;
    let bob = f.trader(50 * ONE_TOKEN).await;
    // Markets ending in 2100: their answers stay the same for any later build.
    let lasting = |outcomes| {
        let mut body = f.market_body(outcomes);
        body["ends_at"] = json!("2100-01-01T00:00:00Z");
        let f = &f;
        async move {
            let created = ok(f.create_market(body).await).await;
            f.app.get(&format!("/v1/markets/{}", created["market"]["id"].as_str().unwrap()), None).await.body
        }
    };
    let open = lasting(2).await;
    let resolved = lasting(3).await;
    let cancelled = lasting(2).await;
    let paused = lasting(2).await;
    let disputed = lasting(2).await;
    for m in [&open, &resolved, &cancelled, &paused, &disputed] {
        ok(bet_on(app, &id_of(m), outcome(m, 0), &alice, 3 * ONE_TOKEN).await).await;
        ok(bet_on(app, &id_of(m), outcome(m, 1), &bob, 2 * ONE_TOKEN).await).await;
    }
    ok(sell_on(app, &open, 0, &alice, ONE_TOKEN).await).await;
    // A bet with an idempotency key.
    let r = app
        .client
        .post(format!("{}/v1/markets/{}/bet", app.base, id_of(&open)))
        .bearer_auth(&bob.session.access_token)
        .header("idempotency-key", "fixture-bet-1")
        .json(&json!({ "session_id": bob.session.session_id, "outcome_id": outcome(&open, 1), "amount": ONE_TOKEN.to_string() }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    ok(resolve_on(&f, &resolved, 0).await).await;
    let positions = app.post("/v1/markets/holdings/search", Some(&alice.session.access_token), json!({ "filters": { "market_id": id_of(&resolved) } })).await;
    let position = positions.body["data"][0]["id"].as_str().unwrap().to_string();
    ok(app.post(&format!("/v1/markets/positions/{position}/claim"), Some(&alice.session.access_token), json!({ "session_id": alice.session.session_id })).await).await;
    ok(cancel_on(&f, &cancelled).await).await;
    ok(app.post(&format!("/v1/providers/markets/{}/pause", id_of(&paused)), Some(&key), json!({ "reason": "venue check" })).await).await;
    let body = json!({ "winning_outcome_id": outcome(&disputed, 1), "resolver_wallet_id": "resolver-1", "dispute_window_seconds": 1 });
    ok(app.post(&format!("/v1/providers/markets/{}/resolve", id_of(&disputed)), Some(&key), body).await).await;
    // Finalized by the server within a check of the window's end.
    for _ in 0..100 {
        if app.get(&format!("/v1/markets/{}", id_of(&disputed)), None).await.body["resolution_pending"] == false {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    // Money in and out, an alt-network key, sessions refreshed and ended, unused nonces.
    let withdrawal = json!({ "wallet_address": alice.wallet.address, "token_id": f.token_id, "amount": "1000", "reference": "w-1" });
    ok(app.post("/v1/providers/wallets/withdrawals", Some(&key), withdrawal).await).await;
    let public_key = "a".repeat(128);
    let alt = json!({ "public_key": public_key, "sign_algo": "ECDSA_P256", "hash_algo": "SHA3_256" });
    ok(app.put("/v1/providers/alt-keys/0x01cf0e2f2f715450/0", Some(&key), alt).await).await;
    ok(app.post("/v1/auth/refresh", None, json!({ "refresh_token": bob.session.refresh_token, "provider_id": f.provider.id })).await).await;
    ok(app.post("/v1/auth/logout", Some(&alice.session.access_token), json!({})).await).await;
    request_nonce(app, &f.provider.id, &bob.wallet.address).await;
    let siwe = json!({ "wallet_address": bob.wallet.address, "provider_id": f.provider.id, "message_format": "siwe" });
    ok(app.post("/v1/auth/nonce", None, siwe).await).await;

    let markets: Vec<String> = [&open, &resolved, &cancelled, &paused, &disputed].iter().map(|m| id_of(m)).collect();
    let mut answers = json!({
        "api_key": key,
        "markets": markets,
        "wallets": [alice.wallet.address, bob.wallet.address, CREATOR_ADDRESS],
    });
    let mut known = Vec::new();
    for read in reads(&answers) {
        known.push(json!({ "method": read.0, "path": read.1, "body": read.2, "answer": answer(&app.client, &app.base, &key, &read).await }));
    }
    answers["reads"] = Value::Array(known);
    let (audited, report) = audit_on(&app.database_url);
    assert!(audited, "{report}");
    std::fs::create_dir_all(dir()).unwrap();
    let answers_file = dir().join(format!("answers-{}.json", backend_name()));
    std::fs::write(&answers_file, serde_json::to_string_pretty(&answers).unwrap() + "\n").unwrap();
    match BACKEND {
        Backend::Sqlite => {
            let file = dir().join("hanson.sqlite");
            let _ = std::fs::remove_file(&file);
            app.cli(&["backup", "--to", file.to_str().unwrap()]);
        }
        Backend::Postgres => {
            let out = std::process::Command::new("pg_dump")
                .args(["--inserts", "--no-owner", "--no-privileges", "--dbname", &app.database_url])
                .output()
                .expect("pg_dump");
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            std::fs::write(dir().join("postgres.sql"), out.stdout).unwrap();
        }
    }
}

/// A database of the release, for this test: a copy of the SQLite file, or the dump restored
/// into a fresh PostgreSQL database.
fn restored(db: &TestDatabase) {
    match BACKEND {
        Backend::Sqlite => {
            let path = db.url.strip_prefix("sqlite://").unwrap();
            std::fs::copy(dir().join("hanson.sqlite"), path).expect("copy the SQLite fixture");
        }
        Backend::Postgres => {
            let dump = std::fs::read_to_string(dir().join("postgres.sql")).expect("the PostgreSQL fixture");
            // psql's meta-commands (`\restrict`) are for psql only: the statements run as they are.
            let sql: String = dump.lines().filter(|l| !l.starts_with('\\')).map(|l| format!("{l}\n")).collect();
            postgres_admin(&db.url, sql).expect("restore the PostgreSQL fixture");
        }
    }
}

#[tokio::test]
async fn release_databases_migrate_audit_clean_and_read_the_same() {
    let answers: Value =
        serde_json::from_str(&std::fs::read_to_string(dir().join(format!("answers-{}.json", backend_name()))).unwrap()).unwrap();
    let db = TestDatabase::create();
    restored(&db);
    // The real binary migrates it and serves it.
    let server = ServeProcess::start_flags(&db.url, &[]).await;
    let (audited, report) = audit_on(&db.url);
    assert!(audited, "{report}");
    let client = reqwest::Client::new();
    let key = answers["api_key"].as_str().unwrap();
    for read in answers["reads"].as_array().unwrap() {
        let request = (read["method"].as_str().unwrap().to_string(), read["path"].as_str().unwrap().to_string(), Some(read["body"].clone()).filter(|b| !b.is_null()));
        assert_eq!(answer(&client, &server.base, key, &request).await, read["answer"], "{} {}", request.0, request.1);
    }
}
