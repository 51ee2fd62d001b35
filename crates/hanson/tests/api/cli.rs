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

/// `hanson seed`: generated markets spread over the provider, funded from its treasury, and a
/// month of price points; the API serves them and every invariant still holds.
#[tokio::test]
async fn seeded_markets_and_price_points_are_served_and_audit_clean() {
    let f = Fixture::new().await;
    let database_url = f.app.database_url.clone();
    let treasury_before = treasury_balance(&f).await;
    let seed = |args: &[&str]| {
        let out = Command::new(BIN).args(args).args(["--database-url", &database_url]).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let provider = format!("{}:{}", f.provider.id, f.creator_wallet_id);
    let liquidity = (1_000 * ONE_TOKEN).to_string();
    let seeded = seed(&["seed", "markets", "--count", "40", "--token-id", &f.token_id, "--provider", &provider, "--liquidity", &liquidity, "--categories", "alpha,beta"]);
    assert_eq!(seeded["markets"], 40);

    let found = f.app.post("/v1/markets/search", None, json!({ "pagination": { "per_page": 100 } })).await.body;
    assert_eq!(found["pagination"]["total"], 40);
    let markets = found["data"].as_array().unwrap();
    assert!(markets.iter().all(|m| ["alpha", "beta"].contains(&m["category"].as_str().unwrap())));
    // Each unsettled market holds its liquidity in its pool; the treasury paid exactly that.
    let unsettled = markets.iter().filter(|m| matches!(m["status"].as_str(), Some("active" | "closed"))).count() as u128;
    assert!(unsettled > 0);
    assert_eq!(treasury_before - treasury_balance(&f).await, unsettled * 1_000 * ONE_TOKEN);

    let market = f.market(2).await;
    let market_id = market["id"].as_str().unwrap();
    let points = seed(&["seed", "price-points", "--market-id", market_id, "--count", "600", "--days", "3"]);
    assert_eq!(points["price_points"], 600);
    let history = f.app.post("/v1/markets/price-history/search", None, json!({ "filters": { "market_id": market_id }, "pagination": { "per_page": 100 } })).await.body;
    assert_eq!(history["pagination"]["total"], 600);
    let (clean, report) = audit(&f.app);
    assert!(clean, "{report}");

    let refused = Command::new(BIN).args(["seed", "price-points", "--market-id", &uuid(), "--count", "10", "--database-url", &database_url]).output().unwrap();
    assert!(!refused.status.success());
}

/// `hanson seed trades`: buys by new wallets, round robin over wallets and outcomes, that the
/// leaderboard and the trade export read back exactly, with every invariant holding.
#[tokio::test]
async fn seeded_trades_feed_leaderboards_and_exports_and_audit_clean() {
    let f = Fixture::new().await;
    let database_url = f.app.database_url.clone();
    let market = f.market(2).await;
    let market_id = market["id"].as_str().unwrap();
    let out = Command::new(BIN)
        .args(["seed", "trades", "--market-id", market_id, "--wallets", "3", "--count", "7", "--days", "1", "--database-url", &database_url])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let seeded: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let milli = ONE_TOKEN / 1_000;
    assert_eq!((seeded["trades"].as_u64(), seeded["wallets"].as_u64()), (Some(7), Some(3)));
    assert_eq!(seeded["volume"], (7 * milli).to_string());

    // Wallet 0 made trades 0, 3 and 6; wallets 1 and 2 two each (ties ordered by wallet_id).
    let board = f.app.get(&format!("/v1/markets/{market_id}/leaderboard?by=volume"), None).await.body;
    let rows = board["data"].as_array().unwrap();
    let tallies: Vec<(u64, String, u64)> =
        rows.iter().map(|r| (r["rank"].as_u64().unwrap(), r["volume"].as_str().unwrap().to_string(), r["trades"].as_u64().unwrap())).collect();
    assert_eq!(tallies, vec![(1, (3 * milli).to_string(), 3), (2, (2 * milli).to_string(), 2), (3, (2 * milli).to_string(), 2)]);
    assert!(rows[1]["wallet_id"].as_str() < rows[2]["wallet_id"].as_str());

    let csv = f
        .app
        .client
        .get(format!("{}/v1/providers/exports/trades?format=csv&market_id={market_id}", f.app.base))
        .bearer_auth(&f.provider.key)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 8, "{csv}");
    assert!(lines[1..].iter().all(|l| l.contains(",buy,") && l.contains(&milli.to_string())), "{csv}");
    let (clean, report) = audit(&f.app);
    assert!(clean, "{report}");

    let refused = Command::new(BIN)
        .args(["seed", "trades", "--market-id", &uuid(), "--wallets", "1", "--count", "1", "--database-url", &database_url])
        .output()
        .unwrap();
    assert!(!refused.status.success());
}

async fn treasury_balance(f: &Fixture) -> u128 {
    let treasury = f.app.get("/v1/providers/treasury", Some(&f.provider.key)).await.body;
    treasury["balances"][0]["balance"].as_str().unwrap().parse().unwrap()
}

/// `hanson --version`: the release and the commit built, `unknown` outside a git checkout.
#[test]
fn version_names_the_release_and_the_commit() {
    let out = Command::new(BIN).arg("--version").output().expect("run hanson --version");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let head = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    let commit = head.as_deref().unwrap_or("unknown");
    assert_eq!(text, format!("hanson {} (commit {commit})\n", env!("CARGO_PKG_VERSION")));
    assert_eq!(env!("CARGO_PKG_VERSION"), "0.1.0");
}
