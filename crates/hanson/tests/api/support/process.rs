//! Real `hanson` processes: `hanson serve` on a random port, and the CLI against a database.

use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::Value;

use crate::contract;

pub(crate) const BIN: &str = env!("CARGO_BIN_EXE_hanson");

/// A `hanson serve` child process, killed (SIGKILL) when dropped, on panic too.
pub(crate) struct ServeProcess {
    child: Option<Child>,
    pub base: String,
    /// The server's log, when it keeps one of its own (see `start_flags`).
    own_log: Option<tempfile::NamedTempFile>,
    /// The stdout lines after the first.
    later_lines: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl ServeProcess {
    /// Starts `hanson serve` on a free port and waits until it answers `/healthz`.
    pub(crate) async fn start(database_url: &str, log: &Path) -> ServeProcess {
        Self::start_with(database_url, log, &[]).await
    }

    /// [`ServeProcess::start`] with extra `serve` flags and a log of its own.
    pub(crate) async fn start_flags(database_url: &str, extra: &[&str]) -> ServeProcess {
        let log = tempfile::NamedTempFile::new().expect("server log");
        let mut server = Self::start_with(database_url, log.path(), extra).await;
        server.own_log = Some(log);
        server
    }

    pub(crate) async fn start_with(database_url: &str, log: &Path, extra: &[&str]) -> ServeProcess {
        let stderr = std::fs::OpenOptions::new().create(true).append(true).open(log).expect("server log");
        let mut child = Command::new(BIN)
            .args(["serve", "--listen", "127.0.0.1:0", "--database-url", database_url, "--auth-rate-per-ip", "0"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("spawn hanson serve");
        // The first stdout line names the address; the rest is drained so the pipe never fills.
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let later_lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let kept = later_lines.clone();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            if let Some(Ok(first)) = lines.next() {
                let _ = tx.send(first);
            }
            for line in lines.map_while(Result::ok) {
                kept.lock().unwrap().push(line);
            }
        });
        let mut server = ServeProcess { child: Some(child), base: String::new(), own_log: None, later_lines };
        let line = tokio::task::spawn_blocking(move || rx.recv_timeout(Duration::from_secs(10))).await.unwrap();
        let line = line.unwrap_or_else(|_| panic!("hanson serve printed no address; its log:\n{}", read_log(log)));
        server.base = line.strip_prefix("listening on ").unwrap_or_else(|| panic!("unexpected first line {line:?}")).to_string();

        let client = reqwest::Client::new();
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match client.get(format!("{}/healthz", server.base)).send().await {
                Ok(r) if r.status() == StatusCode::OK => break,
                other => assert!(
                    Instant::now() < deadline,
                    "hanson serve not healthy within 10 s ({other:?}); its log:\n{}",
                    read_log(log)
                ),
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        contract::load(&server.base).await;
        server
    }

    /// The URL that the `metrics on URL` line names (`--metrics-listen`).
    pub(crate) async fn metrics_url(&self) -> String {
        for _ in 0..200 {
            let found = self.later_lines.lock().unwrap().iter().find_map(|l| l.strip_prefix("metrics on ").map(str::to_string));
            if let Some(url) = found {
                return url;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("hanson serve printed no metrics address")
    }

    /// The process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.as_ref().expect("running").id()
    }

    /// Sends `signal` (SIGSTOP, SIGCONT, ...) to the process.
    pub(crate) fn signal(&self, signal: libc::c_int) {
        // SAFETY: sends a signal to our own child process.
        assert_eq!(unsafe { libc::kill(self.pid() as libc::pid_t, signal) }, 0);
    }

    /// SIGTERM: a graceful shutdown.
    pub(crate) fn terminate(&self) {
        self.signal(libc::SIGTERM);
    }

    /// Waits for the process to end by itself.
    pub(crate) async fn exited_within(&mut self, within: Duration) -> std::process::ExitStatus {
        let child = self.child.as_mut().expect("running");
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "hanson serve still running {within:?} after SIGTERM");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// SIGKILL, and check that it really was the kill that ended the process.
    pub(crate) fn crash(mut self) {
        let mut child = self.child.take().unwrap();
        child.kill().expect("SIGKILL hanson serve");
        let status = child.wait().unwrap();
        assert_eq!(status.signal(), Some(libc::SIGKILL), "hanson serve ended by itself before the kill: {status:?}");
    }
}

impl Drop for ServeProcess {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

pub(crate) fn read_log(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let tail: Vec<&str> = text.lines().rev().take(40).collect();
    tail.into_iter().rev().collect::<Vec<_>>().join("\n")
}

/// Creates and migrates a fresh database the one way the command line allows: `hanson serve`
/// starts on it and is stopped (every other command refuses a missing database).
pub(crate) async fn create_database(database_url: &str) {
    let log = tempfile::NamedTempFile::new().expect("server log");
    let mut server = ServeProcess::start(database_url, log.path()).await;
    server.terminate();
    let status = server.exited_within(Duration::from_secs(30)).await;
    assert!(status.success(), "hanson serve exited with {status:?}; its log:\n{}", read_log(log.path()));
}

/// Runs the real `hanson` binary against `database_url` and parses its JSON.
pub(crate) fn cli_on(database_url: &str, args: &[&str]) -> Value {
    let output = Command::new(BIN).args(args).args(["--database-url", database_url]).output().expect("run hanson");
    assert!(output.status.success(), "hanson {args:?} failed: {}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).expect("CLI prints JSON")
}

/// Runs `hanson audit` on a database: (passed, report).
pub(crate) fn audit_on(database_url: &str) -> (bool, String) {
    let out = Command::new(BIN).args(["audit", "--database-url", database_url]).output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned())
}
