use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use reqwest::StatusCode;
use serde_json::json;

use super::support::*;

/// The real binary: providers and tokens are created while it serves the same database,
/// a rotated key stops working at once, and SIGTERM shuts it down cleanly.
#[tokio::test]
async fn cli_works_while_the_server_runs_and_shutdown_is_clean() {
    let db = TestDatabase::create();
    let database_url = db.url.clone();
    let mut child = Command::new(BIN)
        .args(["serve", "--listen", "127.0.0.1:0", "--database-url", &database_url])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let base = line.trim().strip_prefix("listening on ").expect("listening line").to_string();
    let client = reqwest::Client::new();
    let cli = |args: &[&str]| {
        let out = Command::new(BIN).args(args).args(["--database-url", &database_url]).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };

    let provider = cli(&["provider", "create", "--name", "Live Co"]);
    assert_eq!(provider["name"], "Live Co");
    let key = provider["api_key"].as_str().unwrap().to_string();
    assert!(key.starts_with("hk_") && key.len() == 67);
    let provider_id = provider["provider_id"].as_str().unwrap().to_string();
    assert_eq!(uuid::Uuid::parse_str(&provider_id).unwrap().get_version_num(), 4);

    let token = cli(&["token", "create", "--symbol", "GLD", "--name", "Gold", "--decimals", "6"]);
    assert_eq!((token["symbol"].as_str(), token["name"].as_str(), token["decimals"].as_i64()), (Some("GLD"), Some("Gold"), Some(6)));
    let tokens: serde_json::Value = client.get(format!("{base}/v1/tokens")).send().await.unwrap().json().await.unwrap();
    assert_eq!(tokens["data"], json!([{ "id": token["token_id"], "symbol": "GLD", "name": "Gold", "decimals": 6 }]));

    let treasury = client.get(format!("{base}/v1/providers/treasury")).bearer_auth(&key).send().await.unwrap();
    assert_eq!(treasury.status(), StatusCode::OK);

    let rotated = cli(&["provider", "rotate-key", &provider_id]);
    assert_eq!(rotated["provider_id"], provider_id.as_str());
    let new_key = rotated["api_key"].as_str().unwrap();
    assert_ne!(new_key, key);
    let old = client.get(format!("{base}/v1/providers/treasury")).bearer_auth(&key).send().await.unwrap();
    assert_eq!(old.status(), StatusCode::UNAUTHORIZED);
    let new = client.get(format!("{base}/v1/providers/treasury")).bearer_auth(new_key).send().await.unwrap();
    assert_eq!(new.status(), StatusCode::OK);

    let unknown = Command::new(BIN).args(["provider", "rotate-key", &uuid(), "--database-url", &database_url]).output().unwrap();
    assert!(!unknown.status.success());

    // SIGTERM: the process exits 0 after finishing what it was doing.
    let killed = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    assert!(status.success(), "exit status {status:?}");
}
