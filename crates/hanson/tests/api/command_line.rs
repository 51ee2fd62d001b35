//! The command line's rules, on the real binary: only `serve` creates a database, each
//! command names the one it uses, errors are plain sentences with exit codes (2 for a mistake
//! in the command line, 1 for a failure), `serve` binds before it creates anything and holds
//! its SQLite file alone, `audit` and `backup` leave a file they only read as they found it,
//! a first start says how to create a provider, and `serve --demo` runs a demo exchange.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{json, Value};

use super::support::*;

fn hanson(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN).args(args).current_dir(dir).env_remove("HANSON_DATABASE_URL").stdin(Stdio::null()).output().unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

#[tokio::test]
async fn commands_other_than_serve_refuse_a_missing_database_and_create_none() {
    if BACKEND == Backend::Postgres {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().canonicalize().unwrap().join("hanson.db");
    let path = path.display();
    let market = uuid();
    let commands: &[&[&str]] = &[
        &["audit"],
        &["backup", "--to", "copy.db"],
        &["provider", "create", "--name", "Acme"],
        &["provider", "rotate-key", "6f1c1d7e-0000-4000-8000-000000000000"],
        &["token", "create", "--symbol", "USDC", "--name", "USD Coin", "--decimals", "6"],
        &["seed", "markets", "--count", "1", "--token-id", "t", "--provider", "p:w", "--liquidity", "1000"],
        &["seed", "price-points", "--market-id", &market, "--count", "2"],
    ];
    for args in commands {
        let out = hanson(dir.path(), args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        assert_eq!(
            stderr(&out),
            format!(
                "database: {path}\nerror: there is no database at {path}: only `hanson serve` creates one (give --database-url or HANSON_DATABASE_URL)\n"
            ),
            "{args:?}"
        );
        assert!(out.stdout.is_empty(), "{args:?}");
        assert_eq!(files_in(dir.path()), Vec::<String>::new(), "{args:?} left a file");
    }
}

#[tokio::test]
async fn a_file_that_is_not_a_hanson_database_is_refused_and_left_alone() {
    if BACKEND == Backend::Postgres {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().canonicalize().unwrap().join("notes.db");
    std::fs::write(&text, "not a database").unwrap();
    let out = hanson(dir.path(), &["audit", "--database-url", &format!("sqlite://{}", text.display())]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        format!("database: {0}\nerror: {0} is not a Hanson database (file is not a database)\n", text.display())
    );
    assert_eq!(std::fs::read_to_string(&text).unwrap(), "not a database");
    // An empty file is an empty SQLite database, but not a Hanson one: nothing is created in it.
    let empty = dir.path().canonicalize().unwrap().join("empty.db");
    std::fs::write(&empty, "").unwrap();
    let out = hanson(dir.path(), &["provider", "create", "--name", "Acme", "--database-url", &format!("sqlite://{}", empty.display())]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).ends_with(&format!("error: {} is not a Hanson database (it has no schema_migrations table)\n", empty.display())));
    assert_eq!(std::fs::metadata(&empty).unwrap().len(), 0);
    assert_eq!(files_in(dir.path()), ["empty.db", "notes.db"]);
}

#[tokio::test]
async fn errors_are_plain_sentences_with_exit_codes() {
    let app = TestApp::spawn().await;
    let dir = tempfile::tempdir().unwrap();
    let url = app.database_url.as_str();
    let run = |args: &[&str]| hanson(dir.path(), args);
    // Mistakes in the command line: exit 2.
    let cases: &[(&[&str], &str)] = &[
        (&["token", "create", "--symbol", "X", "--name", "Y", "--decimals", "40", "--database-url", url], "error: --decimals: must be at most 36\n"),
        (&["provider", "create", "--name", "  ", "--database-url", url], "error: --name: must not be empty\n"),
        (&["sign", "--private-key", "0x12", "--nonce", "n"], "error: --private-key: must be 0x followed by 64 hex digits\n"),
        (
            &["audit", "--database-url", "mysql://db"],
            "database: mysql://db\nerror: --database-url: the scheme \"mysql\" is not supported: expected sqlite://PATH or postgres://...\n",
        ),
    ];
    for (args, expected) in cases {
        let out = run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert_eq!(stderr(&out), *expected, "{args:?}");
    }
    // clap's own usage errors exit 2 as well.
    let out = run(&["provider", "create", "--nam", "x"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).starts_with("error: unexpected argument '--nam' found"), "{}", stderr(&out));
    // Failures: exit 1, a sentence, never debug text or "internal".
    let missing = "6f1c1d7e-0000-4000-8000-000000000000";
    let out = run(&["provider", "rotate-key", missing, "--database-url", url]);
    assert_eq!(out.status.code(), Some(1));
    let shown = database_shown(url);
    assert_eq!(stderr(&out), format!("database: {shown}\nerror: there is no provider \"{missing}\" in this database\n"));
    // An argument naming nothing: a mistake in the command line.
    let out = run(&["seed", "price-points", "--market-id", missing, "--count", "2", "--database-url", url]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(stderr(&out), format!("database: {shown}\nerror: --market-id: must name a market with two outcomes\n"));
}

/// How the commands name a test database on stderr: a file by its path, a URL without the
/// password.
fn database_shown(url: &str) -> String {
    if let Some(path) = url.strip_prefix("sqlite://") {
        return path.to_string();
    }
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme_end), Some(at)) if at > scheme_end => format!("{}://***{}", &url[..scheme_end], &url[at..]),
        _ => url.to_string(),
    }
}

#[tokio::test]
async fn serve_binds_before_it_creates_the_database() {
    if BACKEND == Backend::Postgres {
        return;
    }
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = taken.local_addr().unwrap().to_string();
    let dir = tempfile::tempdir().unwrap();
    let out = hanson(dir.path(), &["serve", "--listen", &address]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).starts_with(&format!("error: cannot listen on {address}: ")), "{}", stderr(&out));
    assert_eq!(files_in(dir.path()), Vec::<String>::new());
}

#[tokio::test]
async fn a_second_serve_on_the_same_sqlite_file_refuses_naming_it() {
    if BACKEND == Backend::Postgres {
        return;
    }
    let db = TestDatabase::create();
    let log = tempfile::NamedTempFile::new().unwrap();
    let first = ServeProcess::start(&db.url, log.path()).await;
    let dir = tempfile::tempdir().unwrap();
    let out = hanson(dir.path(), &["serve", "--listen", "127.0.0.1:0", "--database-url", &db.url]);
    assert_eq!(out.status.code(), Some(1));
    let path = database_shown(&db.url);
    assert_eq!(stderr(&out), format!("error: another `hanson serve` is using {path}: stop it first (several nodes need PostgreSQL)\n"));
    // The administrative commands still work beside the one server, which keeps serving.
    let provider = cli_on(&db.url, &["provider", "create", "--name", "Beside"]);
    let key = provider["api_key"].as_str().unwrap();
    let treasury = reqwest::Client::new().get(format!("{}/v1/providers/treasury", first.base)).bearer_auth(key).send().await.unwrap();
    assert_eq!(treasury.status(), StatusCode::OK);
    // Once it has stopped, the file is free again.
    first.crash();
    let again = ServeProcess::start(&db.url, log.path()).await;
    drop(again);
}

#[tokio::test]
async fn audit_and_backup_leave_no_wal_or_shm_files_on_a_file_they_only_read() {
    if BACKEND == Backend::Postgres {
        return;
    }
    let f = Fixture::new().await;
    f.market(2).await;
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("copy.db");
    f.app.cli(&["backup", "--to", copy.to_str().unwrap()]);
    assert_eq!(files_in(dir.path()), ["copy.db"]);
    let copy_url = format!("sqlite://{}", copy.display());
    let out = hanson(dir.path(), &["audit", "--database-url", &copy_url]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("audit ok: "), "{}", String::from_utf8_lossy(&out.stdout));
    assert_eq!(stderr(&out), format!("database: {}\n", copy.display()));
    assert_eq!(files_in(dir.path()), ["copy.db"]);
    let second = dir.path().join("second.db");
    let out = hanson(dir.path(), &["backup", "--to", second.to_str().unwrap(), "--database-url", &copy_url]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(files_in(dir.path()), ["copy.db", "second.db"]);
    let (clean, report) = audit_on(&format!("sqlite://{}", second.display()));
    assert!(clean, "{report}");
    assert_eq!(files_in(dir.path()), ["copy.db", "second.db"]);
}

#[tokio::test]
async fn a_first_start_without_providers_logs_how_to_create_one() {
    let db = TestDatabase::create();
    let log = tempfile::NamedTempFile::new().unwrap();
    let server = ServeProcess::start(&db.url, log.path()).await;
    let text = read_until(log.path(), "no providers yet");
    let hint = format!(
        "no providers yet: create one with `hanson provider create --name NAME --database-url {}` (it prints the API key for {}/console), \
         or try a demo exchange with `hanson serve --demo`",
        database_url_shown(&db.url),
        server.base
    );
    assert!(text.contains(&hint), "{text}");
    assert!(text.contains(&format!("database={}", database_shown(&db.url))), "{text}");
}

/// A database URL as the log shows it: PostgreSQL's without the password.
fn database_url_shown(url: &str) -> String {
    match url.starts_with("sqlite:") {
        true => url.to_string(),
        false => database_shown(url),
    }
}

/// The log once it holds `needle` (the server writes it just after its first line).
fn read_until(log: &Path, needle: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        if text.contains(needle) || Instant::now() > deadline {
            return text;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `hanson serve --demo` with its stdout lines (the first names the address).
struct Demo {
    child: std::process::Child,
    lines: std::sync::mpsc::Receiver<String>,
    base: String,
}

impl Demo {
    fn start(dir: &Path, database_url: Option<&str>) -> Demo {
        let mut command = Command::new(BIN);
        command.args(["serve", "--demo", "--listen", "127.0.0.1:0"]).current_dir(dir).env_remove("HANSON_DATABASE_URL");
        if let Some(url) = database_url {
            command.args(["--database-url", url]);
        }
        let mut child = command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let first = lines.recv_timeout(Duration::from_secs(20)).expect("a listening line");
        let base = first.strip_prefix("listening on ").expect("listening line").to_string();
        Demo { child, lines, base }
    }

    fn line(&self) -> String {
        self.lines.recv_timeout(Duration::from_secs(10)).expect("a line")
    }

    /// (provider id, API key) from the lines after the first.
    fn announced(&self) -> (String, String) {
        let provider = self.line();
        let id = provider.strip_prefix("demo provider: Hanson Demo (").and_then(|s| s.strip_suffix(')')).expect("provider line").to_string();
        let key = self.line().strip_prefix("demo API key: ").expect("key line").to_string();
        let base = &self.base;
        assert_eq!(self.line(), format!("open {base}/ for the markets, and {base}/console with the key above for the provider's console"));
        (id, key)
    }
}

impl Drop for Demo {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test]
async fn serve_demo_runs_a_live_exchange_and_resumes_it() {
    let dir = tempfile::tempdir().unwrap();
    // SQLite: the default file hanson-demo.db in the current folder; PostgreSQL: a fresh database.
    let db = (BACKEND == Backend::Postgres).then(TestDatabase::create);
    let url = db.as_ref().map(|db| db.url.clone());
    let demo = Demo::start(dir.path(), url.as_deref());
    let (provider_id, key) = demo.announced();
    let client = reqwest::Client::new();
    let treasury: Value = client.get(format!("{}/v1/providers/treasury", demo.base)).bearer_auth(&key).send().await.unwrap().json().await.unwrap();
    assert_eq!(treasury["provider_id"], provider_id.as_str());
    // The markets, and trades on them from the demo trader within a few seconds.
    let deadline = Instant::now() + Duration::from_secs(30);
    let (markets, trades) = loop {
        let search = |path: &'static str, body: Value| {
            let request = client.post(format!("{}{path}", demo.base)).json(&body).send();
            async move { request.await.unwrap().json::<Value>().await.unwrap() }
        };
        let markets = search("/v1/markets/search", json!({ "pagination": { "per_page": 100 } })).await;
        let trades = search("/v1/markets/positions/search", json!({})).await;
        if trades["pagination"]["total"].as_u64().unwrap_or(0) >= 2 || Instant::now() > deadline {
            break (markets, trades);
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    let mut questions: Vec<&str> = markets["data"].as_array().unwrap().iter().map(|m| m["question"].as_str().unwrap()).collect();
    questions.sort();
    assert_eq!(
        questions,
        [
            "Which language tops the next developer survey?",
            "Which team wins the city derby?",
            "Will a human-written novel top the bestseller list this year?",
            "Will it rain in Lisbon on the first Saturday of next month?",
            "Will the new bridge open before the summer?",
        ]
    );
    assert!(trades["pagination"]["total"].as_u64().unwrap() >= 2, "no demo trades: {trades}");
    drop(demo);
    if BACKEND == Backend::Sqlite {
        assert!(files_in(dir.path()).contains(&"hanson-demo.db".to_string()), "{:?}", files_in(dir.path()));
    }
    let url = url.unwrap_or_else(|| format!("sqlite://{}", dir.path().join("hanson-demo.db").display()));
    let (clean, report) = audit_on(&url);
    assert!(clean, "{report}");

    // Started again on the same database: the same provider and markets, a new key.
    let again = Demo::start(dir.path(), Some(&url));
    let (same_id, new_key) = again.announced();
    assert_eq!(same_id, provider_id);
    assert_ne!(new_key, key);
    let old = client.get(format!("{}/v1/providers/treasury", again.base)).bearer_auth(&key).send().await.unwrap();
    assert_eq!(old.status(), StatusCode::UNAUTHORIZED);
    let markets: Value = client.post(format!("{}/v1/markets/search", again.base)).json(&json!({})).send().await.unwrap().json().await.unwrap();
    assert_eq!(markets["pagination"]["total"], 5);
    drop(again);

    // A database with other providers and no demo is refused.
    let other = TestApp::spawn().await;
    other.create_provider("Acme");
    let out = hanson(dir.path(), &["serve", "--demo", "--listen", "127.0.0.1:0", "--database-url", &other.database_url]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).ends_with(
            "error: --demo needs an empty database or one it made, and this one has other providers (Acme): give another --database-url\n"
        ),
        "{}",
        stderr(&out)
    );
}
