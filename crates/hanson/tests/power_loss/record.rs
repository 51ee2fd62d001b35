//! The recorded run: `hanson serve` under the shim, set up and traded on over HTTP by
//! concurrent clients, each acknowledged trade noted with the log's length when its answer
//! arrived.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::api::{self, Api, Market, MarketSpec, Provider, Session, ONE_TOKEN};
use crate::oplog::Progress;

pub(crate) const DB_NAME: &str = "hanson.db";

/// What the recorded run is asked for.
pub(crate) struct Plan {
    pub clients: usize,
    pub wallets_per_client: usize,
    pub markets: usize,
    /// Trade until the WAL has started over this many times after trading began (each
    /// restart follows a checkpoint that copied it whole) ...
    pub wal_restarts: usize,
    /// ... and at least this many trades were acknowledged ...
    pub min_trades: usize,
    /// ... or give up trading after this long (the checks then say what was missed).
    pub max_time: Duration,
    /// POWERCUT_FAULT for the shim.
    pub fault: Option<String>,
}

/// A trade the service acknowledged.
#[derive(Clone, Debug)]
pub(crate) struct Ack {
    pub trade_id: String,
    pub kind: &'static str,
    /// The log's length in bytes when the answer had arrived.
    pub log_len: u64,
}

pub(crate) struct Recording {
    pub log: PathBuf,
    /// The directory when the server started: (name, inode, bytes), all of it synced.
    pub base: Vec<(String, u64, Vec<u8>)>,
    pub acks: Vec<Ack>,
    /// The log's length when trading began.
    pub trading_from: u64,
    pub refused: usize,
    pub refusals: Vec<String>,
    pub trading_seconds: f64,
    pub wal_headers_while_trading: usize,
}

/// `hanson serve` under the shim.
struct Server {
    child: Child,
    base: String,
}

impl Server {
    fn launch(bin: &Path, shim: &Path, dir: &Path, log: &Path, url: &str, fault: Option<&str>, stderr: &Path) -> Server {
        let mut cmd = Command::new(bin);
        cmd.args(["serve", "--listen", "127.0.0.1:0", "--database-url", url, "--auth-rate-per-ip", "0"])
            .env("LD_PRELOAD", shim)
            .env("POWERCUT_DIR", dir)
            .env("POWERCUT_LOG", log)
            .env_remove("POWERCUT_FAULT")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(stderr).expect("server log"));
        if let Some(fault) = fault {
            cmd.env("POWERCUT_FAULT", fault);
        }
        let mut child = cmd.spawn().expect("start hanson serve");
        let mut out = BufReader::new(child.stdout.take().expect("stdout"));
        let mut first = String::new();
        out.read_line(&mut first).expect("read the server's first line");
        let Some(address) = first.trim().strip_prefix("listening on ") else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("hanson serve did not start ({first:?}): {}", std::fs::read_to_string(stderr).unwrap_or_default());
        };
        let base = address.to_string();
        std::thread::spawn(move || {
            let mut sink = Vec::new();
            let _ = out.read_to_end(&mut sink);
        });
        Server { child, base }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // SIGKILL: the power cut itself needs nothing from a clean shutdown.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn cli(bin: &Path, url: &str, args: &[&str]) -> Value {
    let out = Command::new(bin).args(args).args(["--database-url", url]).output().expect("run hanson");
    assert!(out.status.success(), "hanson {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("JSON from hanson")
}

/// Syncs every file of `dir` and the directory, then reads them: the run's starting point.
/// Creates the database as the README does: `hanson serve` starts on it (only `serve`
/// creates one) and is stopped once it listens.
fn create_database(bin: &Path, url: &str, log: &Path) {
    let stderr = std::fs::File::create(log).expect("log");
    let mut child = Command::new(bin)
        .args(["serve", "--listen", "127.0.0.1:0", "--database-url", url])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .expect("spawn hanson serve");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut line).expect("read");
    assert!(line.starts_with("listening on "), "hanson serve did not start: {}", std::fs::read_to_string(log).unwrap_or_default());
    // It prints the line once the database is migrated; how it then ends does not matter
    // (its WAL is checkpointed below).
    child.kill().expect("kill hanson serve");
    child.wait().expect("wait");
}

fn durable_base(dir: &Path) -> Vec<(String, u64, Vec<u8>)> {
    use std::os::unix::fs::MetadataExt;
    let mut base = Vec::new();
    for entry in std::fs::read_dir(dir).expect("read dir") {
        let entry = entry.expect("entry");
        let name = entry.file_name().to_string_lossy().into_owned();
        let meta = entry.metadata().expect("metadata");
        if !meta.is_file() || name.ends_with("-shm") {
            continue;
        }
        let file = std::fs::OpenOptions::new().read(true).write(true).open(entry.path()).expect("open");
        file.sync_all().expect("sync");
        base.push((name, meta.ino(), std::fs::read(entry.path()).expect("read")));
    }
    std::fs::File::open(dir).expect("open dir").sync_all().expect("sync dir");
    base.sort();
    base
}

pub(crate) async fn record(bin: &Path, shim: &Path, work: &Path, plan: &Plan) -> Recording {
    let dir = work.join("db");
    std::fs::create_dir_all(&dir).expect("db dir");
    let log = work.join("ops.log");
    let url = format!("sqlite://{}", dir.join(DB_NAME).display());

    // The CLI's part of the README's setup, before the server: the shim records only it.
    create_database(bin, &url, &work.join("create.log"));
    let token_id = api::create_token(bin, &url).expect("token create");
    let created = cli(bin, &url, &["provider", "create", "--name", "power-cut"]);
    // The CLI leaves its WAL behind; copied into the database and removed (as the last
    // connection's close does), the server starts as after a clean shutdown and creates the
    // WAL itself, inside the recording.
    {
        let conn = rusqlite::Connection::open(dir.join(DB_NAME)).expect("open the database");
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(())).expect("checkpoint");
    }
    assert!(!dir.join(format!("{DB_NAME}-wal")).exists(), "the WAL outlived its last connection");
    let base = durable_base(&dir);

    let server = Server::launch(bin, shim, &dir, &log, &url, plan.fault.as_deref(), &work.join("serve.log"));
    let api = Api::new(&server.base);
    let provider_key = created["api_key"].as_str().expect("api_key").to_string();
    api.post_ok(
        "/v1/providers/treasury/deposits",
        Some(&provider_key),
        &json!({ "token_id": token_id, "amount": (1_000_000 * ONE_TOKEN).to_string(), "reference": "power-cut-treasury" }),
    )
    .await
    .expect("treasury deposit");
    let creator = api::deposit(&api, &provider_key, &token_id, api::CREATOR_ADDRESS, 1).await.expect("creator wallet");
    let provider =
        Provider { id: created["provider_id"].as_str().expect("provider_id").to_string(), key: provider_key, creator_wallet_id: creator };
    let mut markets = Vec::new();
    for i in 0..plan.markets {
        let spec = MarketSpec {
            question: format!("Power cut market {i}?"),
            category: "science",
            outcomes: 2 + i % 3,
            liquidity: 1000 * ONE_TOKEN,
            max_bet: 1000 * ONE_TOKEN,
        };
        markets.push(api::create_market(&api, &provider, &token_id, spec).await.expect("create market"));
    }
    let markets = Arc::new(markets);
    let wallets = plan.clients * plan.wallets_per_client;
    let sessions = api::new_traders(&api, &provider, &token_id, 10_000 * ONE_TOKEN, wallets, plan.clients).await.expect("traders");

    let trading_from = std::fs::metadata(&log).expect("log").len();
    let mut progress = Progress::default();
    progress.update(&log, DB_NAME).expect("read log");
    let headers_before = progress.wal_headers;
    let stop = Arc::new(AtomicBool::new(false));
    let acked = Arc::new(AtomicUsize::new(0));
    let acks = Arc::new(Mutex::new(Vec::new()));
    let refusals = Arc::new(Mutex::new(Vec::new()));
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for (c, wallets) in sessions.chunks(plan.wallets_per_client).enumerate() {
        let client = Client::new(&server.base, markets.clone(), wallets.to_vec(), c as u64);
        let (stop, acked, acks, refusals, log) = (stop.clone(), acked.clone(), acks.clone(), refusals.clone(), log.clone());
        tasks.spawn(async move { client.run(&log, &stop, &acked, &acks, &refusals).await });
    }
    let mut wal_headers_while_trading;
    loop {
        tokio::time::sleep(Duration::from_millis(200)).await;
        progress.update(&log, DB_NAME).expect("read log");
        wal_headers_while_trading = progress.wal_headers - headers_before;
        let enough = wal_headers_while_trading >= plan.wal_restarts && acked.load(Ordering::Relaxed) >= plan.min_trades;
        if enough || started.elapsed() > plan.max_time {
            break;
        }
    }
    stop.store(true, Ordering::Relaxed);
    while tasks.join_next().await.is_some() {}
    let trading_seconds = started.elapsed().as_secs_f64();
    drop(server);
    let acks = std::mem::take(&mut *acks.lock().unwrap());
    let refusals = std::mem::take(&mut *refusals.lock().unwrap());
    Recording { log, base, acks, trading_from, refused: refusals.len(), refusals, trading_seconds, wal_headers_while_trading }
}

/// One trading client: its own keep-alive connection and wallets, one request at a time,
/// bets and (a fifth of the time) sells of half a position it holds.
struct Client {
    http: reqwest::Client,
    base: String,
    markets: Arc<Vec<Market>>,
    wallets: Vec<Session>,
    /// Per wallet: ((market, outcome), shares).
    holdings: Vec<Vec<((usize, usize), u128)>>,
    rand: crate::disk::Rand,
}

impl Client {
    fn new(base: &str, markets: Arc<Vec<Market>>, wallets: Vec<Session>, seed: u64) -> Client {
        let http = reqwest::Client::builder().tcp_nodelay(true).timeout(Duration::from_secs(60)).build().expect("client");
        let holdings = vec![Vec::new(); wallets.len()];
        Client {
            http,
            base: base.to_string(),
            markets,
            wallets,
            holdings,
            rand: crate::disk::Rand::new(seed.wrapping_mul(7919).wrapping_add(1)),
        }
    }

    async fn run(mut self, log: &Path, stop: &AtomicBool, acked: &AtomicUsize, acks: &Mutex<Vec<Ack>>, refusals: &Mutex<Vec<String>>) {
        let mut turn = 0usize;
        while !stop.load(Ordering::Relaxed) {
            let w = turn % self.wallets.len();
            turn += 1;
            let selling = self.rand.unit() < 0.2 && !self.holdings[w].is_empty();
            let (kind, m, o, body) = if selling {
                let i = self.rand.below(self.holdings[w].len() as u64) as usize;
                let ((m, o), shares) = self.holdings[w][i];
                let sell = if shares >= 2 { shares / 2 } else { shares };
                (
                    "sell",
                    m,
                    o,
                    json!({ "session_id": self.wallets[w].session_id, "outcome_id": self.markets[m].outcomes[o], "shares_amount": sell.to_string() }),
                )
            } else {
                let m = self.rand.below(self.markets.len() as u64) as usize;
                let o = self.rand.below(self.markets[m].outcomes.len() as u64) as usize;
                let amount = ONE_TOKEN / 10 + u128::from(self.rand.below(5 * ONE_TOKEN as u64));
                (
                    "bet",
                    m,
                    o,
                    json!({ "session_id": self.wallets[w].session_id, "outcome_id": self.markets[m].outcomes[o], "amount": amount.to_string() }),
                )
            };
            let url = format!("{}/v1/markets/{}/{kind}", self.base, self.markets[m].id);
            let sent = self.http.post(url).bearer_auth(&self.wallets[w].access_token).json(&body).send().await;
            let answer = match sent {
                Ok(res) => {
                    let status = res.status().as_u16();
                    res.bytes().await.map(|b| (status, b)).map_err(|e| e.to_string())
                }
                Err(e) => Err(e.to_string()),
            };
            // The log's length as soon as the answer is in: every sync the acknowledgement
            // waited for was recorded before the server sent it.
            let log_len = std::fs::metadata(log).map(|m| m.len()).unwrap_or(u64::MAX);
            match answer {
                Ok((200, bytes)) => {
                    let v: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
                    let (id_field, shares_field) = if selling { ("transaction_id", "shares_sold") } else { ("bet_id", "shares_purchased") };
                    let id = v[id_field].as_str().unwrap_or_else(|| panic!("a 200 {kind} without {id_field}: {v}")).to_string();
                    let shares: u128 = v[shares_field].as_str().and_then(|s| s.parse().ok()).unwrap_or(0);
                    if selling {
                        remove_shares(&mut self.holdings[w], (m, o), shares);
                    } else {
                        add_shares(&mut self.holdings[w], (m, o), shares);
                    }
                    acks.lock().unwrap().push(Ack { trade_id: id, kind, log_len });
                    acked.fetch_add(1, Ordering::Relaxed);
                }
                Ok((status, bytes)) => refusals.lock().unwrap().push(format!("{kind} {status}: {}", String::from_utf8_lossy(&bytes))),
                Err(e) => refusals.lock().unwrap().push(format!("{kind}: {e}")),
            }
        }
    }
}

fn add_shares(held: &mut Vec<((usize, usize), u128)>, key: (usize, usize), shares: u128) {
    match held.iter_mut().find(|(k, _)| *k == key) {
        Some((_, s)) => *s += shares,
        None if shares > 0 => held.push((key, shares)),
        None => {}
    }
}

fn remove_shares(held: &mut Vec<((usize, usize), u128)>, key: (usize, usize), shares: u128) {
    if let Some(i) = held.iter().position(|(k, _)| *k == key) {
        held[i].1 = held[i].1.saturating_sub(shares);
        if held[i].1 == 0 {
            held.swap_remove(i);
        }
    }
}
