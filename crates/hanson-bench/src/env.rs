//! The world around a run: the database (a fresh SQLite file or PostgreSQL database, or one the
//! user names), the `hanson serve` process, and the `hanson` administrative commands.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub type BoxError = Box<dyn std::error::Error + Send + Sync>;
pub type Result<T> = std::result::Result<T, BoxError>;

pub const DEFAULT_POSTGRES_ADMIN_URL: &str = "postgres://postgres@127.0.0.1:5432/postgres";

/// A database for one scenario, removed when dropped if the bench created it.
pub struct Database {
    pub url: String,
    cleanup: Cleanup,
}

enum Cleanup {
    None,
    SqliteDir(PathBuf),
    Postgres { admin_url: String, name: String },
}

pub fn backend_of(url: &str) -> &'static str {
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        "postgres"
    } else {
        "sqlite"
    }
}

use hanson::store::postgres::admin::with_database;

fn postgres_admin(admin_url: &str, sql: String) -> Result<()> {
    hanson::store::postgres::admin::execute(admin_url, sql).map_err(Into::into)
}

impl Database {
    /// A fresh SQLite file in a new temp directory.
    pub fn fresh_sqlite() -> Result<Database> {
        let dir = std::env::temp_dir().join(format!("hanson-bench-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir)?;
        let url = format!("sqlite://{}", dir.join("hanson.db").display());
        Ok(Database { url, cleanup: Cleanup::SqliteDir(dir) })
    }

    /// A fresh database `hanson_bench_<uuid>` created through `admin_url`, dropped afterwards.
    pub fn fresh_postgres(admin_url: &str) -> Result<Database> {
        let name = format!("hanson_bench_{}", uuid::Uuid::new_v4().simple());
        postgres_admin(admin_url, format!("CREATE DATABASE {name}"))
            .map_err(|e| format!("cannot create database {name} through the admin URL: {e}"))?;
        Ok(Database {
            url: with_database(admin_url, &name),
            cleanup: Cleanup::Postgres { admin_url: admin_url.to_string(), name },
        })
    }

    /// A database the user named; left as it is.
    pub fn existing(url: &str) -> Database {
        Database { url: url.to_string(), cleanup: Cleanup::None }
    }

    /// The temp directory of a fresh SQLite database (the server log goes there too).
    pub fn scratch_dir(&self) -> PathBuf {
        match &self.cleanup {
            Cleanup::SqliteDir(dir) => dir.clone(),
            _ => std::env::temp_dir(),
        }
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        match &self.cleanup {
            Cleanup::None => {}
            Cleanup::SqliteDir(dir) => {
                let _ = std::fs::remove_dir_all(dir);
            }
            Cleanup::Postgres { admin_url, name } => {
                if let Err(e) = postgres_admin(admin_url, format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")) {
                    eprintln!("warning: could not drop database {name}: {e}");
                }
            }
        }
    }
}

/// A `hanson serve` process this bench started.
pub struct Server {
    child: Child,
    pub base: String,
    pub log: PathBuf,
}

impl Server {
    pub fn launch(bin: &Path, database_url: &str, log_dir: &Path) -> Result<Server> {
        let log = log_dir.join(format!("hanson-serve-{}.log", uuid::Uuid::new_v4().simple()));
        let log_file = std::fs::File::create(&log)?;
        let mut child = Command::new(bin)
            .args(["serve", "--listen", "127.0.0.1:0", "--database-url", database_url, "--auth-rate-per-ip", "0"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log_file)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", bin.display()))?;
        let stdout = child.stdout.take().expect("piped stdout");
        let mut reader = BufReader::new(stdout);
        let mut first = String::new();
        reader.read_line(&mut first)?;
        let Some(address) = first.trim().strip_prefix("listening on ") else {
            let _ = child.kill();
            let _ = child.wait();
            let log_text = std::fs::read_to_string(&log).unwrap_or_default();
            return Err(format!("hanson serve did not start (first line {first:?}); its log:\n{log_text}").into());
        };
        let base = address.to_string();
        // Keep draining stdout so the server never blocks on a full pipe.
        std::thread::spawn(move || {
            let mut sink = Vec::new();
            let _ = reader.read_to_end(&mut sink);
        });
        Ok(Server { child, base, log })
    }

    /// None while running; the exit status once it has died.
    pub fn exited(&mut self) -> Option<String> {
        match self.child.try_wait() {
            Ok(Some(status)) => Some(status.to_string()),
            Ok(None) => None,
            Err(e) => Some(format!("unknown ({e})")),
        }
    }

    /// SIGTERM (graceful shutdown), then SIGKILL after 10 s.
    pub fn stop(mut self) {
        if self.exited().is_some() {
            return;
        }
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if self.exited().is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Runs `hanson ARGS --database-url URL` and parses its JSON output.
pub fn cli_json(bin: &Path, database_url: &str, args: &[&str]) -> Result<serde_json::Value> {
    let out = Command::new(bin).args(args).args(["--database-url", database_url]).output()?;
    if !out.status.success() {
        return Err(format!("hanson {args:?} failed: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    Ok(serde_json::from_slice(&out.stdout)?)
}

/// `hanson audit`: (passed, its report).
pub fn audit(bin: &Path, database_url: &str) -> Result<(bool, String)> {
    let out = Command::new(bin).args(["audit", "--database-url", database_url]).output()?;
    let mut report = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() && report.is_empty() {
        report = String::from_utf8_lossy(&out.stderr).trim().to_string();
    }
    Ok((out.status.success(), report))
}
