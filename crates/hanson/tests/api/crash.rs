//! Crash safety: the real `hanson serve` process is killed with SIGKILL while concurrent bets
//! are in flight, then restarted on the same database. Every bet the service acknowledged
//! (a 200 with its receipt) is there exactly once, nothing it refused or never received is,
//! a retry with the same Idempotency-Key replays instead of trading again, and the audit is
//! clean.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{json, Value};

use super::support::*;

const TRADERS: usize = 8;
const ROUNDS: usize = 2;
/// How long bets run before the kill.
const LOAD: Duration = Duration::from_millis(1500);

/// `hanson audit` on the database: it must pass.
fn assert_audit_ok(database_url: &str, when: &str) {
    let out = Command::new(BIN).args(["audit", "--database-url", database_url]).output().unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && report.starts_with("audit ok"),
        "audit {when} failed ({:?}): {report}{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// One bet as sent, and what became of it.
#[derive(Debug, Clone)]
struct Bet {
    trader: usize,
    outcome: usize,
    /// Unique across the test, so a trade record names the bet it came from.
    amount: u128,
    key: String,
    round: usize,
    fate: Fate,
}

#[derive(Debug, Clone)]
enum Fate {
    /// 200 with a receipt: acknowledged.
    Acked { bet_id: String, receipt: Value },
    /// Answered with another status: must not have traded.
    Refused { status: u16, body: Value },
    /// No (complete) answer: may or may not have committed.
    Unknown { error: String },
}

impl Bet {
    fn body(&self, traders: &[Trader], outcomes: &[String]) -> Value {
        json!({ "session_id": traders[self.trader].session.session_id, "outcome_id": outcomes[self.outcome], "amount": self.amount.to_string() })
    }
}

struct Market {
    base: String,
    id: String,
    outcomes: Vec<String>,
    traders: Vec<Trader>,
}

async fn send_bet(client: &reqwest::Client, m: &Market, bet: &Bet) -> Result<(StatusCode, bool, Value), String> {
    let r = client
        .post(format!("{}/v1/markets/{}/bet", m.base, m.id))
        .bearer_auth(&m.traders[bet.trader].session.access_token)
        .header("Idempotency-Key", &bet.key)
        .json(&bet.body(&m.traders, &m.outcomes))
        .send()
        .await
        .map_err(|e| format!("{e:?}"))?;
    let status = r.status();
    let replayed = r.headers().get("idempotent-replayed").is_some_and(|v| v == "true");
    let text = r.text().await.map_err(|e| format!("body: {e:?}"))?;
    let body = serde_json::from_str(&text).map_err(|e| format!("{e}: {text}"))?;
    Ok((status, replayed, body))
}

/// Every trade record of the market, page by page.
async fn trades(client: &reqwest::Client, base: &str, market_id: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let mut total = None;
    for page in 1.. {
        let r = client
            .post(format!("{base}/v1/markets/positions/search"))
            .json(&json!({
                "filters": { "market_id": market_id },
                "sort": { "field": "created_at", "direction": "asc" },
                "pagination": { "page": page, "per_page": 100 },
            }))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::OK);
        let body: Value = r.json().await.unwrap();
        total = body["pagination"]["total"].as_u64();
        let data = body["data"].as_array().unwrap().clone();
        let done = data.len() < 100;
        out.extend(data);
        if done {
            break;
        }
    }
    assert_eq!(total, Some(out.len() as u64), "the pages hold exactly the total");
    out
}

/// Bets from every trader at once until the server stops answering, killed after `LOAD`.
async fn load_and_crash(server: ServeProcess, m: &Arc<Market>, round: usize, counter: &Arc<AtomicU64>) -> Vec<Bet> {
    let stop = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(Mutex::new(Vec::new()));
    let client = reqwest::Client::builder().timeout(Duration::from_secs(20)).build().unwrap();
    let mut tasks = tokio::task::JoinSet::new();
    for trader in 0..TRADERS {
        let (m, stop, sent, counter, client) = (m.clone(), stop.clone(), sent.clone(), counter.clone(), client.clone());
        tasks.spawn(async move {
            while !stop.load(Ordering::SeqCst) {
                let n = counter.fetch_add(1, Ordering::SeqCst);
                let amount = ONE_TOKEN / 100 + u128::from(n) * 1_000;
                let mut bet = Bet {
                    trader,
                    outcome: (n % 2) as usize,
                    amount,
                    key: format!("crash-{round}-{trader}-{n}"),
                    round,
                    fate: Fate::Unknown { error: String::new() },
                };
                let result = send_bet(&client, &m, &bet).await;
                let last = result.is_err();
                bet.fate = match result {
                    Ok((StatusCode::OK, false, body)) => match body["bet_id"].as_str() {
                        Some(id) => Fate::Acked { bet_id: id.to_string(), receipt: body },
                        None => panic!("a 200 without bet_id: {body}"),
                    },
                    Ok((status, replayed, body)) => {
                        assert!(!replayed, "a fresh key was replayed: {body}");
                        Fate::Refused { status: status.as_u16(), body }
                    }
                    Err(error) => Fate::Unknown { error },
                };
                sent.lock().unwrap().push(bet);
                if last {
                    // The server is gone: this trader's one in-flight bet is the unknown one.
                    break;
                }
            }
        });
    }
    tokio::time::sleep(LOAD).await;
    let before_kill = sent.lock().unwrap().len();
    if matches!(BACKEND, Backend::Postgres) {
        // The kill falls on trade batches: some carried more than one bet.
        let metrics = client.get(format!("{}/metrics", m.base)).send().await.unwrap().text().await.unwrap();
        let value = |name: &str| -> f64 {
            metrics.lines().find_map(|l| l.strip_prefix(name)).and_then(|v| v.trim().parse().ok()).unwrap_or(0.0)
        };
        let (trades, batches) = (value("hanson_postgres_trade_batch_size_sum "), value("hanson_postgres_trade_batch_size_count "));
        assert!(batches > 0.0 && trades > batches, "bets were not batched: {trades} in {batches} batches");
    }
    server.crash();
    stop.store(true, Ordering::SeqCst);
    while let Some(r) = tasks.join_next().await {
        r.unwrap();
    }
    let bets = std::mem::take(&mut *sent.lock().unwrap());
    assert!(before_kill > 0, "no bet was answered before the kill");
    bets
}

/// Checks the restarted service against everything sent so far; returns the number of
/// unknown bets found committed and the trades by amount (each names its bet).
async fn check(client: &reqwest::Client, m: &Market, bets: &[Bet]) -> (usize, BTreeMap<u128, String>) {
    let records = trades(client, &m.base, &m.id).await;
    let mut by_id: HashMap<&str, &Value> = HashMap::new();
    let mut by_amount: HashMap<u128, &Value> = HashMap::new();
    for t in &records {
        let id = t["id"].as_str().unwrap();
        assert!(by_id.insert(id, t).is_none(), "trade {id} listed twice");
        let amount: u128 = t["amount"].as_str().unwrap().parse().unwrap();
        assert!(by_amount.insert(amount, t).is_none(), "two trades of amount {amount}: a bet applied twice ({t})");
    }
    let mut acked = 0;
    let mut unknown = 0;
    let mut unknown_committed = 0;
    for bet in bets {
        let found = by_amount.get(&bet.amount);
        match &bet.fate {
            Fate::Acked { bet_id, .. } => {
                acked += 1;
                let t = found.unwrap_or_else(|| panic!("acknowledged bet {bet_id} ({bet:?}) lost in the crash"));
                assert_eq!(t["id"], bet_id.as_str(), "acknowledged bet recorded under another id: {t}");
                assert_eq!(t["wallet_id"], m.traders[bet.trader].wallet_id.as_str(), "{t}");
                assert_eq!(t["outcome_id"], m.outcomes[bet.outcome].as_str(), "{t}");
                assert_eq!(t["transaction_type"], "buy", "{t}");
            }
            Fate::Refused { status, body } => {
                assert!(found.is_none(), "a bet answered {status} ({body}) traded: {}", found.unwrap());
            }
            Fate::Unknown { .. } => {
                unknown += 1;
                if let Some(t) = found {
                    unknown_committed += 1;
                    assert_eq!(t["wallet_id"], m.traders[bet.trader].wallet_id.as_str(), "{t}");
                    assert_eq!(t["outcome_id"], m.outcomes[bet.outcome].as_str(), "{t}");
                }
            }
        }
    }
    assert_eq!(records.len(), acked + unknown_committed, "every trade comes from a bet that was sent: {records:?}");
    assert!(acked <= records.len() && records.len() <= acked + unknown);
    let committed = by_amount.iter().map(|(amount, t)| (*amount, t["id"].as_str().unwrap().to_string())).collect();
    (unknown_committed, committed)
}

/// Re-sends bets with their Idempotency-Key: an acknowledged one replays its receipt, an
/// unknown one replays if it committed and trades now if it did not. Afterwards every bet is
/// acknowledged (or refused).
async fn retry(client: &reqwest::Client, m: &Market, bets: &mut [Bet], committed: &BTreeMap<u128, String>) {
    for bet in bets.iter_mut() {
        match &bet.fate {
            Fate::Acked { bet_id, receipt } => {
                let (status, replayed, body) = send_bet(client, m, bet).await.expect("replay");
                assert_eq!(status, StatusCode::OK, "{body}");
                assert!(replayed, "an acknowledged bet's key did not replay: {body}");
                assert_eq!(body["bet_id"], bet_id.as_str());
                assert_eq!(&body, receipt, "the replay is the original receipt");
            }
            Fate::Refused { .. } => {}
            Fate::Unknown { .. } => {
                let (status, replayed, body) = send_bet(client, m, bet).await.expect("retry");
                assert_eq!(status, StatusCode::OK, "{body}");
                let bet_id = body["bet_id"].as_str().unwrap().to_string();
                match committed.get(&bet.amount) {
                    Some(id) => {
                        assert!(replayed, "a bet committed before the crash traded again on retry: {body}");
                        assert_eq!(&bet_id, id);
                    }
                    None => assert!(!replayed, "a bet with no trade replayed a receipt: {body}"),
                }
                bet.fate = Fate::Acked { bet_id, receipt: body };
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn acknowledged_bets_survive_a_kill_9_exactly_once() {
    let db = TestDatabase::create();
    let url = db.url.clone();
    let logs = tempfile::tempdir().unwrap();
    let log: PathBuf = logs.path().join("serve.log");

    create_database(&url).await;
    let provider = cli_on(&url, &["provider", "create", "--name", "Crash Games"]);
    let (provider_id, key) = (provider["provider_id"].as_str().unwrap(), provider["api_key"].as_str().unwrap());
    let token = cli_on(&url, &["token", "create", "--symbol", "USDC", "--name", "USDC token", "--decimals", "18"]);
    let token_id = token["token_id"].as_str().unwrap();

    let mut server = ServeProcess::start(&url, &log).await;
    let client = reqwest::Client::new();
    let base = server.base.clone();
    let deposit = |address: &str, amount: u128| {
        post(&client, format!("{base}/v1/providers/wallets/deposits"), key, json!({
            "wallet_address": address, "token_id": token_id, "amount": amount.to_string(), "reference": uuid(),
        }))
    };
    let (status, body) = post(&client, format!("{base}/v1/providers/treasury/deposits"), key, json!({
        "token_id": token_id, "amount": (1_000_000 * ONE_TOKEN).to_string(), "reference": uuid(),
    }))
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (status, creator) = deposit("0x00000000000000000000000000000000000000c1", 1).await;
    assert_eq!(status, StatusCode::CREATED, "{creator}");
    let (status, market) = post(&client, format!("{base}/v1/providers/markets"), key, json!({
        "question": "Will the service survive a crash?",
        "description": "Resolves on restart.",
        "pricing_method": "lmsr",
        "token_id": token_id,
        "min_bet_amount": "1000",
        "max_bet_amount": (100 * ONE_TOKEN).to_string(),
        "liquidity": (1000 * ONE_TOKEN).to_string(),
        "starts_at": iso(-3600),
        "ends_at": iso(86_400),
        "creator_wallet_id": creator["wallet_id"],
        "creator_fee_percentage": 1,
        "platform_fee_percentage": 1,
        "outcomes": [{ "title": "Yes", "outcome_index": 0 }, { "title": "No", "outcome_index": 1 }],
    }))
    .await;
    assert_eq!(status, StatusCode::CREATED, "{market}");
    let r = client.get(format!("{base}/v1/markets/{}", market["market"]["id"].as_str().unwrap())).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let market: Value = r.json().await.unwrap();
    let mut traders = Vec::new();
    for _ in 0..TRADERS {
        let wallet = TestWallet::random();
        let (status, funded) = deposit(&wallet.address, 10_000 * ONE_TOKEN).await;
        assert_eq!(status, StatusCode::CREATED, "{funded}");
        let session = login_at(&client, &base, provider_id, &wallet).await;
        traders.push(Trader { wallet, session, wallet_id: funded["wallet_id"].as_str().unwrap().to_string() });
    }
    let mut m = Arc::new(Market {
        base: base.clone(),
        id: market["id"].as_str().unwrap().to_string(),
        outcomes: market["outcomes"].as_array().unwrap().iter().map(|o| o["id"].as_str().unwrap().to_string()).collect(),
        traders,
    });
    assert_eq!(m.outcomes.len(), 2, "{market}");

    let counter = Arc::new(AtomicU64::new(0));
    let mut all: Vec<Bet> = Vec::new();
    let mut summary = Vec::new();
    for round in 0..ROUNDS {
        let mut bets = load_and_crash(server, &m, round, &counter).await;
        // The crash image itself, before any restart.
        assert_audit_ok(&url, &format!("after kill {round}"));

        server = ServeProcess::start(&url, &log).await;
        let mut market = Arc::try_unwrap(m).ok().expect("load tasks are done");
        market.base = server.base.clone();
        m = Arc::new(market);

        all.append(&mut bets);
        let (committed_unknown, committed) = check(&client, &m, &all).await;
        let this_round = |f: fn(&Fate) -> bool| all.iter().filter(|b| b.round == round && f(&b.fate)).count();
        let (acked, refused, unknown) = (
            this_round(|f| matches!(f, Fate::Acked { .. })),
            this_round(|f| matches!(f, Fate::Refused { .. })),
            this_round(|f| matches!(f, Fate::Unknown { .. })),
        );
        // Cut mid-request (in flight at the kill) or refused a connection (sent after it).
        let cut = this_round(|f| matches!(f, Fate::Unknown { error } if !error.contains("ConnectionRefused")));
        summary.push(format!(
            "round {round}: {acked} acknowledged, {refused} refused, {unknown} unanswered ({cut} cut in flight) of which {committed_unknown} committed"
        ));
        assert!(acked > 0, "{}", summary.last().unwrap());
        for b in all.iter().filter(|b| matches!(b.fate, Fate::Refused { .. })) {
            eprintln!("refused: {b:?}");
        }

        // Retries with the same keys: replays for what committed, one trade for what did not.
        retry(&client, &m, &mut all, &committed).await;
        assert_eq!(check(&client, &m, &all).await.0, 0, "after the retries every bet is acknowledged");
        let expected = all.iter().filter(|b| matches!(b.fate, Fate::Acked { .. })).count();
        assert_eq!(trades(&client, &m.base, &m.id).await.len(), expected, "the replays added no trade");
        assert_audit_ok(&url, &format!("after restart {round}"));
    }
    eprintln!("{:?} crash test: {}", BACKEND, summary.join("; "));
    drop(server);
}
