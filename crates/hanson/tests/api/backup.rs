//! `hanson backup --to FILE`: an online, consistent copy of a SQLite database taken while the
//! service writes to it, on which `hanson audit` passes. On PostgreSQL it refuses and points
//! at pg_dump.

use std::process::Command;

use reqwest::StatusCode;
use serde_json::json;

use super::support::*;

#[tokio::test]
async fn a_backup_taken_while_serving_is_consistent_and_audits_clean() {
    let f = Fixture::new().await;
    let market = f.market(2).await;
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("copy.db");
    let target_text = target.to_str().unwrap();
    if BACKEND == Backend::Postgres {
        let output = Command::new(BIN).args(["backup", "--to", target_text, "--database-url", &f.app.database_url]).output().unwrap();
        assert!(!output.status.success());
        assert!(String::from_utf8_lossy(&output.stderr).contains("pg_dump"), "{}", String::from_utf8_lossy(&output.stderr));
        assert!(!target.exists());
        return;
    }
    // Deposits keep committing while the copy is taken.
    let writer = {
        let (base, key, token) = (f.app.base.clone(), f.provider.key.clone(), f.token_id.clone());
        tokio::spawn(async move {
            let client = reqwest::Client::new();
            for i in 0..50 {
                let body = json!({ "token_id": token, "amount": "1", "reference": format!("during-backup-{i}") });
                let r = client.post(format!("{base}/v1/providers/treasury/deposits")).bearer_auth(&key).json(&body).send().await.unwrap();
                assert_eq!(r.status(), StatusCode::CREATED);
            }
        })
    };
    let out = f.app.cli(&["backup", "--to", target_text]);
    writer.await.unwrap();
    assert_eq!(out["backup"], target_text);
    assert!(out["bytes"].as_u64().unwrap() > 0);
    let url = format!("sqlite://{target_text}");
    let audit = Command::new(BIN).args(["audit", "--database-url", &url]).output().unwrap();
    assert!(audit.status.success(), "{}", String::from_utf8_lossy(&audit.stdout));
    assert!(String::from_utf8_lossy(&audit.stdout).starts_with("audit ok"));
    // The copy serves: the market is there.
    let copy = library::Db::open(&url);
    let found = copy.market_question(market["id"].as_str().unwrap()).await;
    assert_eq!(found, Some("Will the home team win?".to_string()));
    // An existing file is never overwritten.
    let again = Command::new(BIN).args(["backup", "--to", target_text, "--database-url", &f.app.database_url]).output().unwrap();
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("already exists"));
}
