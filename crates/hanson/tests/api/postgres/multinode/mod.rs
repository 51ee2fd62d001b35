//! PostgreSQL only. Two `hanson serve` processes on one PostgreSQL database: trades through
//! both land exactly once, the books balance, and a logout on one node is seen by the other at
//! once; each node's trades run under the batch lock in turns (`across_nodes.rs`), or (by
//! default) on the trade leader the others forward them to, and another node leads when the
//! leader dies (`forwarding.rs`).

use std::sync::Arc;

use reqwest::StatusCode;
use serde_json::Value;

use super::support;
use support::*;

mod across_nodes;
mod chaos;
mod chaos_checks;
mod forwarding;
mod market_operations;

/// A `hanson serve` node on the database with `extra` flags.
async fn node(database_url: &str, extra: &[&str]) -> ServeProcess {
    // 400 trades queue on one market's lock across both nodes; with the rest of the suite
    // running beside them a wait can pass the default 5 s statement timeout. These tests are
    // about exactly-once across nodes, not latency under that load.
    let flags: Vec<&str> = extra.iter().copied().chain(["--db-statement-timeout-ms", "60000"]).collect();
    ServeProcess::start_flags(database_url, &flags).await
}

/// A node that runs its own trades under the batch lock, as every node can.
async fn without_forwarding(database_url: &str) -> ServeProcess {
    node(database_url, &["--no-trade-forwarding"]).await
}

/// The TCP connections `node` holds to the node at `base`, in any state but closed: its
/// sockets (from `/proc/<pid>/fd`) whose remote port is the other node's.
fn connections_to(node: &ServeProcess, base: &str) -> usize {
    let port: u16 = base.rsplit(':').next().unwrap().parse().unwrap();
    let own: std::collections::HashSet<String> = std::fs::read_dir(format!("/proc/{}/fd", node.pid()))
        .unwrap()
        .filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
        .filter_map(|target| target.to_str()?.strip_prefix("socket:[")?.strip_suffix(']').map(str::to_string))
        .collect();
    ["tcp", "tcp6"]
        .iter()
        .filter_map(|table| std::fs::read_to_string(format!("/proc/{}/net/{table}", node.pid())).ok())
        .flat_map(|text| text.lines().skip(1).map(str::to_string).collect::<Vec<_>>())
        .filter(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let remote_port = fields[2].rsplit(':').next().and_then(|hex| u16::from_str_radix(hex, 16).ok());
            remote_port == Some(port) && fields[3] != "07" && own.contains(fields[9])
        })
        .count()
}

/// `name`'s sample with `labels` in a node's `/metrics` text.
fn sample(text: &str, name: &str, labels: &str) -> Option<f64> {
    let prefix = format!("{name}{{{labels}}} ");
    text.lines().find_map(|line| line.strip_prefix(&prefix)).map(|v| v.trim().parse().expect("a number"))
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

/// A leader and a follower on the fixture's database (the fixture's own server stays out of
/// the lead), a market of two outcomes, and wallets logged in through the follower.
struct TwoNodes {
    f: Fixture,
    client: reqwest::Client,
    leader: ServeProcess,
    follower: ServeProcess,
    market: Value,
    traders: Vec<Arc<Trader>>,
}

impl TwoNodes {
    async fn start(traders: usize) -> TwoNodes {
        let f = Fixture::new_with(Settings { forward_trades: false, ..Settings::default() }).await;
        let client = reqwest::Client::new();
        let leader = node(&f.app.database_url, &[]).await;
        until_leading(&client, &leader.base).await;
        let follower = node(&f.app.database_url, &[]).await;
        let market = f.market(2).await;
        let traders = f.traders_at(&client, &follower.base, traders, 100 * ONE_TOKEN).await;
        TwoNodes { f, client, leader, follower, market, traders }
    }

    /// Bets a token through the follower until one is forwarded (it reads who leads when it
    /// starts; until it has, it runs trades itself); returns how many bets that took.
    async fn until_forwarding(&self) -> usize {
        let t = &self.traders[0];
        let url = format!("{}/v1/markets/{}/bet", self.follower.base, self.market["id"].as_str().unwrap());
        let mut bets = 0;
        loop {
            let (status, body) =
                post(&self.client, url.clone(), &t.session.access_token, bet_body(&t.session, &self.market, 0, ONE_TOKEN)).await;
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
