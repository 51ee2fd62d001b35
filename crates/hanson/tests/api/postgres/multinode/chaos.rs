//! Chaos between nodes, under load on two nodes of one PostgreSQL database, through cuttable
//! TCP proxies of the test code (`support/proxy.rs`): the follower cut from the database for
//! 5 s, the follower cut from the leader, the leader killed, and the database paused (SIGSTOP)
//! for 3 s, a private PostgreSQL the test starts itself (never the shared server). Each time nothing acknowledged is
//! lost or doubled, refusals are 503 problem+json with Retry-After (never a 500), the follower
//! takes bets again within 2 s of the heal, and its market stream resumes with every event
//! once, in order. A market closing and a resolution becoming final during the fault are
//! announced once, and every event reaches a webhook once (`chaos_checks.rs`). Each test
//! prints its figures (`docs/operations.md`, "Chaos between nodes").

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::Value;

use super::chaos_checks::{fixture_settings, Watched, WEBHOOK_FLAGS};
use super::support::proxy::CutProxy;
use super::*;

/// What the load saw: acknowledged bet ids, and the refusals by status and code.
#[derive(Default)]
struct Outcomes {
    acknowledged: Vec<String>,
    refused: Vec<(u16, String)>,
}

/// Bets through `base` until `stop`, recording each answer; any answer but 200 or a 503
/// problem+json with Retry-After fails the test.
async fn bet_until(
    client: reqwest::Client,
    base: String,
    market: Value,
    t: Arc<Trader>,
    stop: Arc<AtomicBool>,
    seen: Arc<Mutex<Outcomes>>,
) {
    let url = format!("{base}/v1/markets/{}/bet", market["id"].as_str().unwrap());
    let mut i = 0;
    while !stop.load(Ordering::SeqCst) {
        i += 1;
        let r =
            client.post(&url).bearer_auth(&t.session.access_token).json(&bet_body(&t.session, &market, i % 2, ONE_TOKEN / 10)).send().await;
        let r = r.unwrap_or_else(|e| panic!("{base}: the connection failed instead of an answer: {e}"));
        let status = r.status();
        let retry_after = r.headers().get("retry-after").cloned();
        let content_type = r.headers().get("content-type").cloned();
        let body: Value = r.json().await.unwrap_or(Value::Null);
        match status {
            StatusCode::OK => seen.lock().unwrap().acknowledged.push(body["bet_id"].as_str().unwrap().to_string()),
            StatusCode::SERVICE_UNAVAILABLE => {
                assert_eq!(content_type.as_ref().and_then(|v| v.to_str().ok()), Some("application/problem+json"), "{body}");
                assert!(retry_after.is_some(), "503 without Retry-After: {body}");
                seen.lock().unwrap().refused.push((503, body["code"].as_str().unwrap_or_default().to_string()));
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            other => panic!("{base}: {other} {body}"),
        }
    }
}

/// Follows a market's stream at `base`, reconnecting with Last-Event-ID whenever it ends or
/// is refused, and records the seq of every event (snapshots aside) until `stop`.
async fn follow(client: reqwest::Client, base: String, market_id: String, stop: Arc<AtomicBool>, seqs: Arc<Mutex<Vec<i64>>>) {
    let mut last: Option<i64> = None;
    while !stop.load(Ordering::SeqCst) {
        let mut request = client.get(format!("{base}/v1/markets/{market_id}/events")).header("accept", "text/event-stream");
        if let Some(seq) = last {
            request = request.header("last-event-id", seq.to_string());
        }
        let Ok(response) = request.send().await else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        if response.status() != StatusCode::OK {
            assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE, "the stream was refused otherwise");
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        }
        let mut response = response;
        let mut buffer = String::new();
        loop {
            let Ok(chunk) = tokio::time::timeout(Duration::from_millis(200), response.chunk()).await else {
                if stop.load(Ordering::SeqCst) {
                    return;
                }
                continue;
            };
            let Ok(Some(bytes)) = chunk else { break };
            buffer.push_str(&String::from_utf8_lossy(&bytes).replace('\r', ""));
            while let Some(end) = buffer.find("\n\n") {
                let frame: String = buffer.drain(..end + 2).collect();
                let event = frame.lines().find_map(|l| l.strip_prefix("event: "));
                let id = frame.lines().find_map(|l| l.strip_prefix("id: ")).and_then(|id| id.parse::<i64>().ok());
                match (event, id) {
                    (Some("snapshot"), Some(seq)) => last = last.or(Some(seq)),
                    (Some(_), Some(seq)) => {
                        seqs.lock().unwrap().push(seq);
                        last = Some(seq);
                    }
                    _ => {}
                }
            }
        }
    }
}

/// A leader and a follower with a market, bets running through them, and a stream followed on
/// the follower.
struct Chaos {
    f: Fixture,
    client: reqwest::Client,
    /// None once killed.
    leader: Option<ServeProcess>,
    follower: ServeProcess,
    market: Value,
    market_id: String,
    traders: Vec<Arc<Trader>>,
    stop: Arc<AtomicBool>,
    seen: Arc<Mutex<Outcomes>>,
    seqs: Arc<Mutex<Vec<i64>>>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
    stream: Option<tokio::task::JoinHandle<()>>,
    watched: Watched,
}

impl Chaos {
    /// The follower reaches the database through `db_proxy` and the leader through
    /// `leader_proxy` (the leader advertises the proxy's address), when given.
    /// The database is made through `admin_url` when given (a private PostgreSQL).
    async fn start(db_proxy: Option<&CutProxy>, leader_proxy: Option<&CutProxy>, admin_url: Option<&str>) -> Chaos {
        let f = Fixture::new_at(admin_url, fixture_settings()).await;
        let client = reqwest::Client::new();
        let advertise = leader_proxy.map(|p| format!("http://{}", p.addr));
        let mut leader_flags: Vec<&str> = advertise.as_deref().map(|a| vec!["--advertise-url", a]).unwrap_or_default();
        leader_flags.extend(WEBHOOK_FLAGS);
        let leader = node(&f.app.database_url, &leader_flags).await;
        if let Some(proxy) = leader_proxy {
            proxy.retarget(leader.base.trim_start_matches("http://").parse().unwrap());
        }
        until_leading(&client, &leader.base).await;
        let follower_db = match db_proxy {
            Some(proxy) => format!("postgres://postgres@{}/{}", proxy.addr, f.app.database_url.rsplit_once('/').unwrap().1),
            None => f.app.database_url.clone(),
        };
        let follower = node(&follower_db, &WEBHOOK_FLAGS).await;
        let market = f.market(2).await;
        let market_id = market["id"].as_str().unwrap().to_string();
        let traders = f.traders_at(&client, &follower.base, 4, 1_000 * ONE_TOKEN).await;
        let (stop, seen, seqs) = (Arc::new(AtomicBool::new(false)), Arc::default(), Arc::new(Mutex::new(Vec::new())));
        let stream = tokio::spawn(follow(client.clone(), follower.base.clone(), market_id.clone(), stop.clone(), Arc::clone(&seqs)));
        let watched = Watched::start(&f, &traders[0]).await;
        Chaos {
            f,
            client,
            leader: Some(leader),
            follower,
            market,
            market_id,
            traders,
            stop,
            seen,
            seqs,
            tasks: Vec::new(),
            stream: Some(stream),
            watched,
        }
    }

    /// Bets from every trader, through the follower, and through the leader too if `both`.
    fn load(&mut self, both: bool) {
        for (i, t) in self.traders.iter().enumerate() {
            let base = match &self.leader {
                Some(leader) if both && i % 2 == 1 => &leader.base,
                _ => &self.follower.base,
            };
            let (client, market, stop, seen) = (self.client.clone(), self.market.clone(), self.stop.clone(), self.seen.clone());
            self.tasks.push(tokio::spawn(bet_until(client, base.clone(), market, t.clone(), stop, seen)));
        }
    }

    /// How long after `since` the follower took a bet (every refusal until then a 503).
    async fn back_after(&self, since: Instant) -> Duration {
        let t = &self.traders[0];
        let url = format!("{}/v1/markets/{}/bet", self.follower.base, self.market_id);
        loop {
            let (status, body) =
                post(&self.client, url.clone(), &t.session.access_token, bet_body(&t.session, &self.market, 0, ONE_TOKEN / 10)).await;
            if status == StatusCode::OK {
                self.seen.lock().unwrap().acknowledged.push(body["bet_id"].as_str().unwrap().to_string());
                return since.elapsed();
            }
            assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
            assert!(since.elapsed() < Duration::from_secs(30), "the follower never recovered: {body}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Stops the load, lets the stream catch up with the log, and checks everything.
    async fn finish(mut self, fault: &str, back: Duration) {
        tokio::time::sleep(Duration::from_secs(1)).await;
        self.stop.store(true, Ordering::SeqCst);
        for task in std::mem::take(&mut self.tasks) {
            task.await.unwrap();
        }
        let db = super::support::library::Db::open(&self.f.app.database_url);
        let last = db.int("SELECT max(seq) FROM events WHERE market_id = $1", &[(&self.market_id).into()]).await;
        // The stream follows on until it has the log's last event.
        self.stop.store(false, Ordering::SeqCst);
        for _ in 0..300 {
            if self.seqs.lock().unwrap().last().is_some_and(|s| *s >= last) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        self.stop.store(true, Ordering::SeqCst);
        self.stream.take().unwrap().await.unwrap();
        // Before the audit (`recorded_once`), so that it sees the resolution final.
        self.watched.settle(&db).await;

        let outcomes = std::mem::take(&mut *self.seen.lock().unwrap());
        let codes: std::collections::BTreeSet<&str> = outcomes.refused.iter().map(|(_, c)| c.as_str()).collect();
        let unknown = outcomes.refused.iter().filter(|(_, c)| c == "outcome_unknown").count();
        let recorded = recorded_once(&self.f, &self.market_id, &outcomes.acknowledged).await;
        assert!(recorded >= outcomes.acknowledged.len() && recorded <= outcomes.acknowledged.len() + unknown, "{recorded} recorded");
        let seqs = self.seqs.lock().unwrap().clone();
        let first = *seqs.first().expect("the stream saw events");
        assert_eq!(seqs, (first..=last).collect::<Vec<_>>(), "every event once, in order, across the fault");
        let once = self.watched.check(&db, self.leader.is_none()).await;
        println!(
            "chaos/{fault}: {} acknowledged, {} refused with 503 {codes:?}, {recorded} recorded, back {:.2} s after the heal, \
             stream seqs {first}..={last} without a gap; {once}",
            outcomes.acknowledged.len(),
            outcomes.refused.len(),
            back.as_secs_f64()
        );
        assert!(back <= Duration::from_secs(2), "back {back:?} after the heal");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_node_cut_from_the_database_for_5_s_loses_nothing_and_recovers() {
    let proxy = CutProxy::start("127.0.0.1:5432".parse().unwrap()).await;
    let mut chaos = Chaos::start(Some(&proxy), None, None).await;
    chaos.load(true);
    tokio::time::sleep(Duration::from_secs(1)).await;
    proxy.cut();
    tokio::time::sleep(Duration::from_secs(5)).await;
    proxy.heal();
    let back = chaos.back_after(Instant::now()).await;
    assert!(!chaos.seen.lock().unwrap().refused.is_empty(), "the cut refused some bets");
    chaos.finish("cut-node-from-database-5s", back).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_follower_cut_from_the_leader_loses_nothing_and_recovers() {
    let proxy = CutProxy::start("127.0.0.1:9".parse().unwrap()).await;
    let mut chaos = Chaos::start(None, Some(&proxy), None).await;
    chaos.load(true);
    tokio::time::sleep(Duration::from_secs(1)).await;
    let forwarded_before = forwarded(&chaos.client, &chaos.follower.base).await;
    assert!(forwarded_before >= 1.0, "the follower forwards to the leader before the cut");
    proxy.cut();
    tokio::time::sleep(Duration::from_secs(5)).await;
    proxy.heal();
    let back = chaos.back_after(Instant::now()).await;
    chaos.finish("cut-follower-from-leader-5s", back).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn killing_the_leader_loses_nothing_and_the_follower_leads() {
    let mut chaos = Chaos::start(None, None, None).await;
    // The leader's own clients lose their connections with it: the load runs on the follower.
    chaos.load(false);
    tokio::time::sleep(Duration::from_secs(1)).await;
    chaos.leader.take().unwrap().crash();
    let killed = Instant::now();
    let back = chaos.back_after(killed).await;
    until_leading(&chaos.client, &chaos.follower.base).await;
    chaos.finish("kill-leader", back).await;
}

/// A PostgreSQL server of the test's own (initdb and pg_ctl, on a free port, trust auth), so
/// that pausing it touches nobody else; stopped and deleted when dropped.
struct PrivatePostgres {
    dir: tempfile::TempDir,
    port: u16,
}

/// Runs a PostgreSQL program as the postgres user when root (initdb refuses root).
fn as_postgres(program: &str, args: &[&str]) -> std::io::Result<std::process::Output> {
    // SAFETY: geteuid reads the process's effective user id; it cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    let mut command = if root { std::process::Command::new("runuser") } else { std::process::Command::new(program) };
    if root {
        command.args(["-u", "postgres", "--", program]);
    }
    command.args(args).output()
}

impl PrivatePostgres {
    /// None when initdb or pg_ctl cannot be run here.
    fn start() -> Option<PrivatePostgres> {
        let dir = tempfile::tempdir().ok()?;
        // SAFETY: as in `as_postgres`.
        let root = unsafe { libc::geteuid() } == 0;
        if root && !std::process::Command::new("chown").args(["postgres", dir.path().to_str()?]).output().ok()?.status.success() {
            return None;
        }
        let data = dir.path().join("data");
        let out = as_postgres("initdb", &["-D", data.to_str()?, "-A", "trust", "-U", "postgres"]).ok()?;
        if !out.status.success() {
            return None;
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0").ok()?.local_addr().ok()?.port();
        let options = format!("-p {port} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200", dir.path().display());
        let log = dir.path().join("log");
        let out = as_postgres("pg_ctl", &["-D", data.to_str()?, "-o", &options, "-l", log.to_str()?, "-w", "start"]).ok()?;
        out.status.success().then_some(PrivatePostgres { dir, port })
    }

    fn admin_url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// The postmaster and every process it started.
    fn processes(&self) -> Vec<i32> {
        let pid_file = std::fs::read_to_string(self.dir.path().join("data/postmaster.pid")).expect("postmaster.pid");
        let postmaster: i32 = pid_file.lines().next().unwrap().trim().parse().unwrap();
        let mut all = vec![postmaster];
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else { continue };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
            // The parent pid is the second field after the command's closing parenthesis.
            let ppid = stat.rsplit_once(") ").and_then(|(_, rest)| rest.split(' ').nth(1)).and_then(|p| p.parse::<i32>().ok());
            if ppid == Some(postmaster) {
                all.push(pid);
            }
        }
        all
    }

    fn signal_all(&self, signal: libc::c_int) {
        for pid in self.processes() {
            // SAFETY: kill only sends a signal to a process of this test's own server.
            unsafe { libc::kill(pid, signal) };
        }
    }
}

impl Drop for PrivatePostgres {
    fn drop(&mut self) {
        self.signal_all(libc::SIGCONT);
        let data = self.dir.path().join("data");
        let _ = as_postgres("pg_ctl", &["-D", data.to_str().unwrap_or_default(), "-m", "immediate", "-w", "stop"]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_database_paused_for_3_s_loses_nothing_and_recovers() {
    let Some(pg) = PrivatePostgres::start() else {
        eprintln!("skipped: initdb and pg_ctl cannot start a private PostgreSQL here");
        return;
    };
    let admin_url = pg.admin_url();
    let mut chaos = Chaos::start(None, None, Some(&admin_url)).await;
    chaos.load(true);
    tokio::time::sleep(Duration::from_secs(1)).await;
    pg.signal_all(libc::SIGSTOP);
    tokio::time::sleep(Duration::from_secs(3)).await;
    pg.signal_all(libc::SIGCONT);
    let back = chaos.back_after(Instant::now()).await;
    chaos.finish("pause-database-3s", back).await;
    drop(pg);
}
