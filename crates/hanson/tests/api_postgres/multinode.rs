//! Two `hanson serve` processes on one PostgreSQL database: trades through both land exactly
//! once, the books balance, and a logout on one node is seen by the other at once; each
//! node's trades run under the batch lock in turns, or (by default) on the trade leader the
//! others forward them to, and another node leads when the leader dies.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::concurrency::{replay, trades_in_order};
use crate::helpers::*;
use crate::trading::{audit, Trader};
use crate::users::{login_message, Session, TestWallet};
use hanson::api::Settings;

/// A real `hanson serve` process, killed when dropped.
struct Node {
    child: Child,
    base: String,
}

impl Node {
    fn start(database_url: &str) -> Node {
        Node::start_with(database_url, &[])
    }

    /// A node that runs its own trades under the batch lock, as every node can.
    fn without_forwarding(database_url: &str) -> Node {
        Node::start_with(database_url, &["--no-trade-forwarding"])
    }

    fn start_with(database_url: &str, extra: &[&str]) -> Node {
        let mut child = Command::new(BIN)
            .args(["serve", "--listen", "127.0.0.1:0", "--database-url", database_url, "--auth-rate-per-ip", "0"])
            .args(extra)
            // 400 trades queue on one market's lock across both nodes; with the rest of the
            // suite running beside them a wait can pass the default 5 s statement timeout.
            // This test is about exactly-once across nodes, not latency under that load.
            .args(["--db-statement-timeout-ms", "60000"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start hanson serve");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let base = line.trim().strip_prefix("listening on ").expect("listening line").to_string();
        Node { child, base }
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Sends `signal` to a node, as `ServeProcess::terminate` does.
fn signal(node: &Node, signal: libc::c_int) {
    // SAFETY: sends a signal to our own child process.
    assert_eq!(unsafe { libc::kill(node.child.id() as libc::pid_t, signal) }, 0);
}

/// The TCP connections `node` holds to the node at `base`, in any state but closed: its
/// sockets (from `/proc/<pid>/fd`) whose remote port is the other node's.
fn connections_to(node: &Node, base: &str) -> usize {
    let port: u16 = base.rsplit(':').next().unwrap().parse().unwrap();
    let own: std::collections::HashSet<String> = std::fs::read_dir(format!("/proc/{}/fd", node.child.id()))
        .unwrap()
        .filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
        .filter_map(|target| target.to_str()?.strip_prefix("socket:[")?.strip_suffix(']').map(str::to_string))
        .collect();
    ["tcp", "tcp6"]
        .iter()
        .filter_map(|table| std::fs::read_to_string(format!("/proc/{}/net/{table}", node.child.id())).ok())
        .flat_map(|text| text.lines().skip(1).map(str::to_string).collect::<Vec<_>>())
        .filter(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let remote_port = fields[2].rsplit(':').next().and_then(|hex| u16::from_str_radix(hex, 16).ok());
            remote_port == Some(port) && fields[3] != "07" && own.contains(fields[9])
        })
        .count()
}

/// nonce -> sign -> login against one node.
async fn login_at(client: &reqwest::Client, base: &str, provider_id: &str, wallet: &TestWallet) -> Session {
    let nonce = json_of(client.post(format!("{base}/v1/auth/nonce")).json(&json!({ "wallet_address": wallet.address, "provider_id": provider_id }))).await;
    let nonce = nonce["nonce"].as_str().unwrap();
    let login = json!({ "provider_id": provider_id, "wallet_address": wallet.address, "signature": wallet.sign(&login_message(nonce)), "nonce": nonce });
    let body = json_of(client.post(format!("{base}/v1/auth/login")).json(&login)).await;
    Session::from_body(&body)
}

async fn post(client: &reqwest::Client, url: String, bearer: &str, body: Value) -> (StatusCode, Value) {
    let r = client.post(url).bearer_auth(bearer).json(&body).send().await.unwrap();
    (r.status(), r.json().await.unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_serve_processes_trade_one_market_exactly_once() {
    let limits = hanson::api::Limits { auth_per_ip: hanson::api::ratelimit::Rule::OFF, ..Default::default() };
    let f = Fixture::new_with(Settings { limits, forward_trades: false, ..Settings::default() }).await;
    let nodes = [Node::without_forwarding(&f.app.database_url), Node::without_forwarding(&f.app.database_url)];
    let hot = f.market(2).await;
    let side = f.market(3).await;
    let client = reqwest::Client::new();

    // Wallets log in through alternating nodes.
    let mut traders = Vec::new();
    for i in 0..20 {
        let wallet = TestWallet::random();
        let wallet_id = f.app.fund_wallet(&f.provider, &f.token_id, &wallet.address, 500 * ONE_TOKEN).await;
        let session = login_at(&client, &nodes[i % 2].base, &f.provider.id, &wallet).await;
        traders.push(Arc::new(Trader { wallet, session, wallet_id }));
    }
    // Opening positions so that sells have shares.
    for (i, t) in traders.iter().enumerate() {
        let market = if i % 4 == 0 { &side } else { &hot };
        let (status, body) = post(&client, format!("{}/v1/markets/{}/bet", nodes[i % 2].base, market["id"].as_str().unwrap()), &t.session.access_token,
            json!({ "session_id": t.session.session_id, "outcome_id": market["outcomes"][0]["id"], "amount": (3 * ONE_TOKEN).to_string() })).await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }

    let mut tasks = tokio::task::JoinSet::new();
    for n in 0..400usize {
        let t = traders[n % 20].clone();
        let base = nodes[n % 2].base.clone();
        let market = if n % 4 == 0 { side.clone() } else { hot.clone() };
        let client = client.clone();
        tasks.spawn(async move {
            let market_id = market["id"].as_str().unwrap();
            let (path, body) = if n % 5 == 4 {
                (format!("{base}/v1/markets/{market_id}/sell"), json!({
                    "session_id": t.session.session_id, "outcome_id": market["outcomes"][0]["id"], "shares_amount": (ONE_TOKEN / 50 + n as u128).to_string(),
                }))
            } else {
                (format!("{base}/v1/markets/{market_id}/bet"), json!({
                    "session_id": t.session.session_id, "outcome_id": market["outcomes"][n % 2]["id"], "amount": (ONE_TOKEN / 4 + n as u128 * 1_000_003).to_string(),
                }))
            };
            post(&client, path, &t.session.access_token, body).await
        });
    }
    let mut acknowledged = Vec::new();
    while let Some(joined) = tasks.join_next().await {
        let (status, body) = joined.unwrap();
        assert_eq!(status, StatusCode::OK, "{body}");
        let id = body["bet_id"].as_str().or(body["transaction_id"].as_str()).unwrap().to_string();
        acknowledged.push(id);
    }
    assert_eq!(acknowledged.len(), 400);

    // Every acknowledged trade is recorded exactly once, and replaying the records reproduces
    // each market's prices.
    let mut recorded = Vec::new();
    for market in [&hot, &side] {
        let id = market["id"].as_str().unwrap();
        let trades = trades_in_order(&f.app, id).await;
        let detail = f.app.get(&format!("/v1/markets/{id}"), None).await.body;
        replay(&detail, &trades);
        recorded.extend(trades.iter().map(|t| t["id"].as_str().unwrap().to_string()));
    }
    assert_eq!(recorded.len(), 420, "20 opening trades and 400 concurrent ones");
    let mut unique = recorded.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), recorded.len(), "no trade recorded twice");
    for id in &acknowledged {
        assert!(recorded.contains(id), "acknowledged trade {id} is missing");
    }
    let (passed, report) = audit(&f.app);
    assert!(passed, "{report}");

    // Logout through node A ends the session on node B at once.
    let t = &traders[0];
    let out = client.post(format!("{}/v1/auth/logout", nodes[0].base)).bearer_auth(&t.session.access_token).send().await.unwrap();
    assert_eq!(out.status(), StatusCode::OK);
    let profile = client.get(format!("{}/v1/auth/profile", nodes[1].base)).bearer_auth(&t.session.access_token).send().await.unwrap();
    assert_eq!(profile.status(), StatusCode::UNAUTHORIZED);
}

/// The volume order of a search on node B, by market id.
async fn volume_order(client: &reqwest::Client, base: &str, provider_id: &str) -> Vec<(String, String)> {
    let body = json!({
        "filters": { "provider_id": provider_id },
        "sort": { "field": "total_volume", "direction": "desc" },
        "pagination": { "page": 1, "per_page": 10 },
    });
    let page = json_of(client.post(format!("{base}/v1/markets/search")).json(&body)).await;
    page["data"].as_array().unwrap().iter().map(|m| (m["id"].as_str().unwrap().to_string(), m["total_volume"].as_str().unwrap().to_string())).collect()
}

/// Node B keeps volume-sorted search lists and renderings; a trade through node A must show in
/// B's next search at once, in its order and its totals (the data version both read).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_volume_search_on_one_node_shows_a_trade_through_the_other_at_once() {
    let f = Fixture::new().await;
    let nodes = [Node::start(&f.app.database_url), Node::start(&f.app.database_url)];
    let markets = [f.market(2).await, f.market(2).await, f.market(2).await];
    let id = |i: usize| markets[i]["id"].as_str().unwrap().to_string();
    let client = reqwest::Client::new();
    let wallet = TestWallet::random();
    f.app.fund_wallet(&f.provider, &f.token_id, &wallet.address, 500 * ONE_TOKEN).await;
    let session = login_at(&client, &nodes[0].base, &f.provider.id, &wallet).await;

    let before = volume_order(&client, &nodes[1].base, &f.provider.id).await;
    assert_eq!(before.len(), 3);
    assert!(before.iter().all(|(_, volume)| volume == "0"), "{before:?}");
    // Asked twice, so the second answer comes from what node B kept.
    assert_eq!(volume_order(&client, &nodes[1].base, &f.provider.id).await, before);

    for (market, amount) in [(1usize, 2 * ONE_TOKEN), (2, 5 * ONE_TOKEN), (1, 4 * ONE_TOKEN)] {
        let (status, body) = post(&client, format!("{}/v1/markets/{}/bet", nodes[0].base, id(market)), &session.access_token,
            json!({ "session_id": session.session_id, "outcome_id": markets[market]["outcomes"][0]["id"], "amount": amount.to_string() })).await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let after = volume_order(&client, &nodes[1].base, &f.provider.id).await;
    assert_eq!(after, vec![(id(1), (6 * ONE_TOKEN).to_string()), (id(2), (5 * ONE_TOKEN).to_string()), (id(0), "0".to_string())]);
}

/// `name`'s sample with `labels` in a node's `/metrics` text.
fn sample(text: &str, name: &str, labels: &str) -> Option<f64> {
    let prefix = format!("{name}{{{labels}}} ");
    text.lines().find_map(|line| line.strip_prefix(&prefix)).map(|v| v.trim().parse().expect("a number"))
}

/// Each node's batch thread keeps copies of the markets it traded on, their event numbers and
/// the positions on them. Trades on one market by one wallet, through the test's server and
/// two nodes in turn, with a market update between them: each batch sees what the others
/// wrote, so the balance runs on from trade to trade, the shares held add up, every event
/// number is taken once (no node's batch failed and ran its trades again), and the books balance.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn trades_through_three_servers_in_turn_each_see_what_the_others_wrote() {
    let f = Fixture::new_with(Settings { forward_trades: false, ..Settings::default() }).await;
    let nodes = [Node::without_forwarding(&f.app.database_url), Node::without_forwarding(&f.app.database_url)];
    let bases = [f.app.base.clone(), nodes[0].base.clone(), nodes[1].base.clone()];
    let market = f.market(2).await;
    let market_id = market["id"].as_str().unwrap();
    let outcome = market["outcomes"][0]["id"].as_str().unwrap();
    let client = reqwest::Client::new();
    let wallet = TestWallet::random();
    f.app.fund_wallet(&f.provider, &f.token_id, &wallet.address, 100 * ONE_TOKEN).await;
    let session = login_at(&client, &bases[1], &f.provider.id, &wallet).await;

    let mut balance = 100 * ONE_TOKEN;
    let mut held: u128 = 0;
    for step in 0..12usize {
        if step == 6 {
            let r = f.app.put(&format!("/v1/providers/markets/{market_id}"), Some(&f.provider.key), json!({ "question": "Renamed between trades?" })).await;
            assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        }
        let base = &bases[step % 3];
        let (status, body) = if step % 4 == 3 {
            let shares = held / 3;
            let r = post(&client, format!("{base}/v1/markets/{market_id}/sell"), &session.access_token,
                json!({ "session_id": session.session_id, "outcome_id": outcome, "shares_amount": shares.to_string() })).await;
            held -= shares;
            r
        } else {
            let r = post(&client, format!("{base}/v1/markets/{market_id}/bet"), &session.access_token,
                json!({ "session_id": session.session_id, "outcome_id": outcome, "amount": (ONE_TOKEN + step as u128).to_string() })).await;
            held += r.1["shares_purchased"].as_str().map_or(0, |s| s.parse::<u128>().unwrap());
            r
        };
        assert_eq!(status, StatusCode::OK, "step {step}: {body}");
        assert_eq!(body["balance_before"], balance.to_string(), "step {step}: {body}");
        balance = body["balance_after"].as_str().unwrap().parse().unwrap();
    }

    let holdings = f.app.post("/v1/markets/holdings/search", Some(&session.access_token), json!({ "filters": { "outcome_id": outcome } })).await.body;
    assert_eq!(holdings["pagination"]["total"], 1, "{holdings}");
    assert_eq!(holdings["data"][0]["shares"], held.to_string(), "{holdings}");
    let trades = trades_in_order(&f.app, market_id).await;
    assert_eq!(trades.len(), 12);
    replay(&f.app.get(&format!("/v1/markets/{market_id}"), None).await.body, &trades);
    // The nodes' own counts (the test's server shares its metrics with the other tests).
    for base in &bases[1..] {
        let text = client.get(format!("{base}/metrics")).send().await.unwrap().text().await.unwrap();
        assert_eq!(sample(&text, "hanson_postgres_write_retries_total", r#"cause="batch""#), None, "{base}: {text}");
    }
    let (passed, report) = audit(&f.app);
    assert!(passed, "{report}");
}

async fn metrics_of(client: &reqwest::Client, base: &str) -> String {
    client.get(format!("{base}/metrics")).send().await.unwrap().text().await.unwrap()
}

/// The trades a node committed itself, bets and sells.
fn committed_trades(text: &str) -> f64 {
    ["buy", "sell"].iter().filter_map(|kind| sample(text, "hanson_trades_total", &format!(r#"kind="{kind}""#))).sum()
}

/// Waits up to 10 s for the node at `base` to lead the trades.
async fn until_leading(client: &reqwest::Client, base: &str) {
    for _ in 0..100 {
        let text = metrics_of(client, base).await;
        if text.lines().any(|line| line == "hanson_trade_leader 1") {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("{base} never took the trade lead");
}

fn bet_body(session: &Session, market: &Value, outcome: usize, amount: u128) -> Value {
    json!({ "session_id": session.session_id, "outcome_id": market["outcomes"][outcome]["id"], "amount": amount.to_string() })
}

/// Wallets funded with 100 tokens each, logged in through `base`.
async fn traders_at(f: &Fixture, client: &reqwest::Client, base: &str, count: usize) -> Vec<Arc<Trader>> {
    let mut traders = Vec::new();
    for _ in 0..count {
        let wallet = TestWallet::random();
        let wallet_id = f.app.fund_wallet(&f.provider, &f.token_id, &wallet.address, 100 * ONE_TOKEN).await;
        let session = login_at(client, base, &f.provider.id, &wallet).await;
        traders.push(Arc::new(Trader { wallet, session, wallet_id }));
    }
    traders
}

/// A leader and a follower on the fixture's database (the fixture's own server stays out of
/// the lead), a market of two outcomes, and wallets logged in through the follower.
struct TwoNodes {
    f: Fixture,
    client: reqwest::Client,
    leader: Node,
    follower: Node,
    market: Value,
    traders: Vec<Arc<Trader>>,
}

impl TwoNodes {
    async fn start(traders: usize) -> TwoNodes {
        let f = Fixture::new_with(Settings { forward_trades: false, ..Settings::default() }).await;
        let client = reqwest::Client::new();
        let leader = Node::start(&f.app.database_url);
        until_leading(&client, &leader.base).await;
        let follower = Node::start(&f.app.database_url);
        let market = f.market(2).await;
        let traders = traders_at(&f, &client, &follower.base, traders).await;
        TwoNodes { f, client, leader, follower, market, traders }
    }

    /// Bets a token through the follower until one is forwarded (it reads who leads when it
    /// starts; until it has, it runs trades itself); returns how many bets that took.
    async fn until_forwarding(&self) -> usize {
        let t = &self.traders[0];
        let url = format!("{}/v1/markets/{}/bet", self.follower.base, self.market["id"].as_str().unwrap());
        let mut bets = 0;
        loop {
            let (status, body) = post(&self.client, url.clone(), &t.session.access_token, bet_body(&t.session, &self.market, 0, ONE_TOKEN)).await;
            assert_eq!(status, StatusCode::OK, "{body}");
            bets += 1;
            if forwarded(&self.client, &self.follower.base).await >= 1.0 {
                return bets;
            }
            assert!(bets < 50, "the follower never forwarded a trade");
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    }
}

/// The trades `base` has forwarded to the leader and had answered.
async fn forwarded(client: &reqwest::Client, base: &str) -> f64 {
    sample(&metrics_of(client, base).await, "hanson_trades_forwarded_total", r#"outcome="forwarded""#).unwrap_or(0.0)
}

/// Checks that every acknowledged trade on the market is recorded, none twice, that replaying
/// the records reproduces its prices, and that the books balance; returns how many are recorded.
async fn recorded_once(f: &Fixture, market_id: &str, acknowledged: &[String]) -> usize {
    let trades = trades_in_order(&f.app, market_id).await;
    let mut recorded: Vec<String> = trades.iter().map(|t| t["id"].as_str().unwrap().to_string()).collect();
    for id in acknowledged {
        assert!(recorded.contains(id), "acknowledged trade {id} is missing");
    }
    recorded.sort();
    recorded.dedup();
    assert_eq!(recorded.len(), trades.len(), "no trade recorded twice");
    replay(&f.app.get(&format!("/v1/markets/{market_id}"), None).await.body, &trades);
    let (passed, report) = audit(&f.app);
    assert!(passed, "{report}");
    trades.len()
}

/// With forwarding (the default), the first node takes the trade lead and the second sends it
/// its bets and sells: each is answered as the leader answered it (request id and idempotency
/// key included), runs on the leader alone, and is recorded exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_follower_forwards_its_trades_to_the_leader_exactly_once() {
    let nodes = TwoNodes::start(8).await;
    let opening = nodes.until_forwarding().await;
    let TwoNodes { f, client, leader, follower, market, traders } = nodes;
    let market_id = market["id"].as_str().unwrap().to_string();
    let bet_url = |base: &str| format!("{base}/v1/markets/{market_id}/bet");

    // Answered as the leader answers: the client's request id, and its idempotency key kept
    // by the leader (the same key straight to the leader replays the forwarded bet).
    let t = &traders[1];
    let keyed = |base: &str| {
        client.post(bet_url(base)).bearer_auth(&t.session.access_token).header("Idempotency-Key", "forwarded-once").json(&bet_body(&t.session, &market, 1, 2 * ONE_TOKEN))
    };
    let through_follower = keyed(&follower.base).header("x-request-id", "forwarded-request-1").send().await.unwrap();
    assert_eq!(through_follower.status(), StatusCode::OK);
    assert_eq!(through_follower.headers()["x-request-id"], "forwarded-request-1");
    let first: Value = through_follower.json().await.unwrap();
    let mut acknowledged_extra = Vec::new();
    let again: Value = keyed(&leader.base).send().await.unwrap().json().await.unwrap();
    assert_eq!(again["bet_id"], first["bet_id"], "{again}");
    assert_eq!(again["balance_after"], first["balance_after"], "{again}");

    // A request already carrying a key (here a wrong one) is not sent on again: it runs where
    // it arrived, so a URL leading back to a follower cannot make a loop.
    let before = committed_trades(&metrics_of(&client, &follower.base).await);
    let (status, body) = {
        let r = client.post(bet_url(&follower.base)).bearer_auth(&t.session.access_token).header("hanson-forward-key", "0".repeat(64))
            .json(&bet_body(&t.session, &market, 0, ONE_TOKEN)).send().await.unwrap();
        (r.status(), r.json::<Value>().await.unwrap())
    };
    assert_eq!(status, StatusCode::OK, "{body}");
    acknowledged_extra.push(body["bet_id"].as_str().unwrap().to_string());
    assert_eq!(committed_trades(&metrics_of(&client, &follower.base).await), before + 1.0);

    let follower_committed = committed_trades(&metrics_of(&client, &follower.base).await);
    let forwarded_before = forwarded(&client, &follower.base).await;
    let mut tasks = tokio::task::JoinSet::new();
    for n in 0..80usize {
        let (t, client, market) = (traders[n % 8].clone(), client.clone(), market.clone());
        let base = if n % 4 == 0 { leader.base.clone() } else { follower.base.clone() };
        tasks.spawn(async move {
            let url = format!("{base}/v1/markets/{}/bet", market["id"].as_str().unwrap());
            post(&client, url, &t.session.access_token, bet_body(&t.session, &market, n % 2, ONE_TOKEN / 8 + n as u128 * 1_000_003)).await
        });
    }
    let mut acknowledged = vec![first["bet_id"].as_str().unwrap().to_string()];
    acknowledged.append(&mut acknowledged_extra);
    while let Some(joined) = tasks.join_next().await {
        let (status, body) = joined.unwrap();
        assert_eq!(status, StatusCode::OK, "{body}");
        acknowledged.push(body["bet_id"].as_str().unwrap().to_string());
    }
    // The 60 through the follower ran on the leader.
    let text = metrics_of(&client, &follower.base).await;
    assert_eq!(sample(&text, "hanson_trades_forwarded_total", r#"outcome="forwarded""#), Some(forwarded_before + 60.0), "{text}");
    assert_eq!(committed_trades(&text), follower_committed, "{text}");
    assert!(text.lines().any(|line| line == "hanson_trade_leader 0"), "{text}");

    assert_eq!(recorded_once(&f, &market_id, &acknowledged).await, opening + 2 + 80);
}

/// A follower closes a kept-alive connection to the leader once it has gone unused for half a
/// second, long before the leader's idle timeout (60 s here, 1 s at the least) would close it:
/// no trade is sent on a connection the leader is closing, to be lost unread and answered 503.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_follower_closes_its_idle_connections_to_the_leader_before_the_leader_would() {
    let nodes = TwoNodes::start(1).await;
    nodes.until_forwarding().await;
    let TwoNodes { client, leader, follower, market, traders, .. } = &nodes;
    let t = &traders[0];
    let bet = || post(client, format!("{}/v1/markets/{}/bet", follower.base, market["id"].as_str().unwrap()), &t.session.access_token, bet_body(&t.session, market, 0, ONE_TOKEN / 8));

    // A trade every 100 ms keeps a connection open.
    let before = forwarded(client, &follower.base).await;
    let mut held = Vec::new();
    for _ in 0..10 {
        assert_eq!(bet().await.0, StatusCode::OK);
        held.push(connections_to(&follower, &leader.base));
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(forwarded(client, &follower.base).await, before + 10.0);
    assert!(held.iter().all(|&n| n >= 1), "{held:?}");

    // Unused, it is closed by the follower: the leader would wait 60 s.
    let quiet = std::time::Instant::now();
    while connections_to(&follower, &leader.base) > 0 {
        assert!(quiet.elapsed() < std::time::Duration::from_secs(5), "the follower kept an idle connection to the leader");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// The leader takes a forwarded request's client address, and skips the rate limits the
/// forwarding node applied, only with its own key: a client sending the headers itself is
/// limited as any other.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn only_the_leaders_own_key_lifts_the_rate_limits() {
    let f = Fixture::new_with(Settings { forward_trades: false, ..Settings::default() }).await;
    let client = reqwest::Client::new();
    let leader = Node::start_with(&f.app.database_url, &["--rate-per-ip", "0.01", "--burst-per-ip", "2"]);
    until_leading(&client, &leader.base).await;
    let observer = hanson::store::Store::open(&f.app.database_url).unwrap();
    let stored = observer.read(|c| c.query_one("SELECT value FROM settings WHERE name = 'trade_leader'", &[])?.text(0)).await.unwrap();
    let stored: Value = serde_json::from_str(&stored).unwrap();
    assert_eq!(stored["url"], leader.base.as_str());
    let key = stored["key"].as_str().unwrap().to_string();
    assert_eq!(key.len(), 64);

    let status_with = |key: String| {
        let request = client.get(format!("{}/healthz", leader.base)).header("hanson-forward-key", key).header("hanson-client-ip", "203.0.113.9");
        async move { request.send().await.unwrap().status() }
    };
    // A burst of 2 (of which the waiting for the lead took some): a forged key earns nothing.
    let forged = "0".repeat(64);
    let mut statuses = Vec::new();
    for _ in 0..3 {
        statuses.push(status_with(forged.clone()).await);
    }
    assert_eq!(statuses.last(), Some(&StatusCode::TOO_MANY_REQUESTS), "{statuses:?}");
    // The leader's key: the forwarding node limited the client already.
    for _ in 0..5 {
        assert_eq!(status_with(key.clone()).await, StatusCode::OK);
    }
    assert_eq!(client.get(format!("{}/healthz", leader.base)).send().await.unwrap().status(), StatusCode::TOO_MANY_REQUESTS);
}

/// The leader is killed (SIGKILL) while a follower forwards it trades: every trade the
/// follower acknowledged is recorded exactly once, the others fail with 503 (their outcome
/// unknown to the follower), never 500, the follower takes the lead, and the books balance.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn when_the_leader_dies_a_follower_leads_and_no_acknowledged_trade_is_lost() {
    let TwoNodes { f, client, mut leader, follower, market, traders } = TwoNodes::start(8).await;
    let market_id = market["id"].as_str().unwrap().to_string();

    let mut tasks = tokio::task::JoinSet::new();
    for (w, t) in traders.iter().enumerate() {
        let (t, client, market, base) = (t.clone(), client.clone(), market.clone(), follower.base.clone());
        tasks.spawn(async move {
            let mut answers = Vec::new();
            for n in 0..40u128 {
                let url = format!("{base}/v1/markets/{}/bet", market["id"].as_str().unwrap());
                answers.push(post(&client, url, &t.session.access_token, bet_body(&t.session, &market, w % 2, ONE_TOKEN / 4 + n)).await);
                tokio::time::sleep(std::time::Duration::from_millis(15)).await;
            }
            answers
        });
    }
    // Each wallet's 40 bets take over 600 ms. The follower is frozen across the kill, so
    // that the connections it holds to the leader are counted with none opened after.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    signal(&follower, libc::SIGSTOP);
    let held = connections_to(&follower, &leader.base);
    leader.child.kill().unwrap();
    leader.child.wait().unwrap();
    signal(&follower, libc::SIGCONT);
    let killed_at = std::time::Instant::now();

    let mut acknowledged = Vec::new();
    let mut failed = 0;
    while let Some(joined) = tasks.join_next().await {
        for (status, body) in joined.unwrap() {
            match status {
                StatusCode::OK => acknowledged.push(body["bet_id"].as_str().unwrap().to_string()),
                StatusCode::SERVICE_UNAVAILABLE => {
                    assert_eq!(body["code"], "outcome_unknown", "{body}");
                    failed += 1;
                }
                other => panic!("{other}: {body}"),
            }
        }
    }
    // A trade can fail only on a connection to the dead leader (a new one is refused and the
    // trade runs here), and a connection carries one request at a time and is dropped when
    // it fails: those in flight at the kill, and those sent on a kept-alive connection before
    // the follower read that it had closed.
    assert!(held >= 1 && failed <= held, "{failed} failed, {held} connections to the leader at the kill");
    until_leading(&client, &follower.base).await;
    // The kill fell among the trades: some reached no leader, or got no answer.
    let text = metrics_of(&client, &follower.base).await;
    let after_kill = ["run_here", "failed"].iter().filter_map(|o| sample(&text, "hanson_trades_forwarded_total", &format!(r#"outcome="{o}""#))).sum::<f64>();
    assert!(after_kill >= 1.0, "{text}");
    assert_eq!(sample(&text, "hanson_trades_forwarded_total", r#"outcome="failed""#).unwrap_or(0.0), failed as f64);
    assert!(killed_at.elapsed() < std::time::Duration::from_secs(10));
    let (status, body) = post(&client, format!("{}/v1/markets/{market_id}/bet", follower.base), &traders[0].session.access_token, bet_body(&traders[0].session, &market, 0, ONE_TOKEN)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    acknowledged.push(body["bet_id"].as_str().unwrap().to_string());

    let recorded = recorded_once(&f, &market_id, &acknowledged).await;
    assert!(recorded <= acknowledged.len() + failed, "{recorded} recorded");
}
