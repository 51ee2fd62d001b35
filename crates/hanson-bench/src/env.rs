//! The world around a run: the database (a fresh SQLite file or PostgreSQL database, or one the
//! user names), the `hanson serve` process, and the `hanson` administrative commands.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync>;
pub(crate) type Result<T> = std::result::Result<T, BoxError>;

pub(crate) const DEFAULT_POSTGRES_ADMIN_URL: &str = "postgres://postgres@127.0.0.1:5432/postgres";

/// A database for one scenario, removed when dropped if the bench created it.
pub(crate) struct Database {
    pub url: String,
    cleanup: Cleanup,
}

enum Cleanup {
    None,
    SqliteDir(PathBuf),
    Postgres { admin_url: String, name: String },
}

pub(crate) fn backend_of(url: &str) -> &'static str {
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        "postgres"
    } else {
        "sqlite"
    }
}

/// Runs statements on a fresh connection to `admin_url`, on a plain thread: the sync client
/// drives its own runtime and must not run inside tokio's.
fn postgres_admin(admin_url: &str, sql: String) -> Result<()> {
    let url = admin_url.to_string();
    std::thread::spawn(move || -> std::result::Result<(), String> {
        let mut client = postgres::Client::connect(&url, postgres::NoTls).map_err(|e| e.to_string())?;
        client.batch_execute(&sql).map_err(|e| e.to_string())
    })
    .join()
    .unwrap_or_else(|_| Err("PostgreSQL admin thread panicked".into()))
    .map_err(Into::into)
}

/// `admin_url` with its database name replaced by `name` (query string kept).
fn with_database(admin_url: &str, name: &str) -> String {
    let (base, query) = match admin_url.split_once('?') {
        Some((base, query)) => (base, format!("?{query}")),
        None => (admin_url, String::new()),
    };
    let authority = base.find("://").map_or(0, |i| i + 3);
    let base = match base[authority..].find('/') {
        Some(slash) => &base[..authority + slash],
        None => base,
    };
    format!("{base}/{name}{query}")
}

impl Database {
    /// A fresh SQLite file in a new temp directory.
    pub(crate) fn fresh_sqlite() -> Result<Database> {
        let dir = std::env::temp_dir().join(format!("hanson-bench-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir)?;
        let url = format!("sqlite://{}", dir.join("hanson.db").display());
        Ok(Database { url, cleanup: Cleanup::SqliteDir(dir) })
    }

    /// A fresh database `hanson_bench_<uuid>` created through `admin_url`, dropped afterwards.
    pub(crate) fn fresh_postgres(admin_url: &str) -> Result<Database> {
        let name = format!("hanson_bench_{}", uuid::Uuid::new_v4().simple());
        postgres_admin(admin_url, format!("CREATE DATABASE {name}"))
            .map_err(|e| format!("cannot create database {name} through the admin URL: {e}"))?;
        Ok(Database { url: with_database(admin_url, &name), cleanup: Cleanup::Postgres { admin_url: admin_url.to_string(), name } })
    }

    /// A database the user named; left as it is.
    pub(crate) fn existing(url: &str) -> Database {
        Database { url: url.to_string(), cleanup: Cleanup::None }
    }

    /// The temp directory of a fresh SQLite database (the server log goes there too).
    pub(crate) fn scratch_dir(&self) -> PathBuf {
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
pub(crate) struct Server {
    child: Child,
    pub base: String,
    pub log: PathBuf,
}

impl Server {
    /// `hanson serve` on a random port; `extra` are further `serve` flags.
    pub(crate) fn launch(bin: &Path, database_url: &str, log_dir: &Path, extra: &[&str]) -> Result<Server> {
        let log = log_dir.join(format!("hanson-serve-{}.log", uuid::Uuid::new_v4().simple()));
        let log_file = std::fs::File::create(&log)?;
        let mut child = Command::new(bin)
            .args(["serve", "--listen", "127.0.0.1:0", "--database-url", database_url, "--auth-rate-per-ip", "0"])
            .args(extra)
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

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// None while running; the exit status once it has died.
    pub(crate) fn exited(&mut self) -> Option<String> {
        match self.child.try_wait() {
            Ok(Some(status)) => Some(status.to_string()),
            Ok(None) => None,
            Err(e) => Some(format!("unknown ({e})")),
        }
    }

    /// SIGTERM (graceful shutdown), then SIGKILL after 10 s.
    pub(crate) fn stop(mut self) {
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
pub(crate) fn cli_json(bin: &Path, database_url: &str, args: &[&str]) -> Result<serde_json::Value> {
    let out = Command::new(bin).args(args).args(["--database-url", database_url]).output()?;
    if !out.status.success() {
        return Err(format!("hanson {args:?} failed: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    Ok(serde_json::from_slice(&out.stdout)?)
}

/// `hanson audit`: (passed, its report).
pub(crate) fn audit(bin: &Path, database_url: &str) -> Result<(bool, String)> {
    let out = Command::new(bin).args(["audit", "--database-url", database_url]).output()?;
    let mut report = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() && report.is_empty() {
        report = String::from_utf8_lossy(&out.stderr).trim().to_string();
    }
    Ok((out.status.success(), report))
}

/// The resident set size of a process in KiB (`VmRSS` of /proc/PID/status).
pub(crate) fn rss_kib(pid: u32) -> Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).map_err(|e| format!("cannot read /proc/{pid}/status: {e}"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .ok_or_else(|| format!("no VmRSS in /proc/{pid}/status").into())
}

/// Raises this process's soft open-file limit to the hard limit (a server launched later
/// inherits it) and checks that `needed` descriptors fit. Returns the soft limit now in force.
pub(crate) fn raise_fd_limit(needed: u64) -> Result<u64> {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit/setrlimit only read or write the struct passed by pointer.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return Err(format!("getrlimit(RLIMIT_NOFILE): {}", std::io::Error::last_os_error()).into());
    }
    if lim.rlim_cur < lim.rlim_max {
        let raised = libc::rlimit { rlim_cur: lim.rlim_max, rlim_max: lim.rlim_max };
        // SAFETY: as above.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            lim.rlim_cur = lim.rlim_max;
        }
    }
    #[allow(clippy::unnecessary_cast)] // rlim_t is not u64 on every target
    let soft = lim.rlim_cur as u64;
    if soft < needed {
        return Err(format!(
            "this run needs about {needed} open files but the limit is {soft} (hard {}); raise it (ulimit -n) or pass fewer --subscribers",
            lim.rlim_max
        )
        .into());
    }
    Ok(soft)
}

/// CPU time (user + system) of a process, or of this process's threads named `thread` (as
/// /proc shows thread names, at most 15 bytes), in seconds.
pub(crate) fn cpu_seconds(pid: u32, thread: Option<&str>) -> Option<f64> {
    fn ticks(stat: &str) -> Option<(String, u64)> {
        let open = stat.find('(')?;
        let close = stat.rfind(')')?;
        let comm = stat[open + 1..close].to_string();
        let fields: Vec<&str> = stat[close + 1..].split_whitespace().collect();
        // After the name: state is field 3, utime 14, stime 15.
        let utime: u64 = fields.get(11)?.parse().ok()?;
        let stime: u64 = fields.get(12)?.parse().ok()?;
        Some((comm, utime + stime))
    }
    // SAFETY: sysconf only reads a configuration value.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let hz = if hz > 0 { hz as f64 } else { 100.0 };
    let total = match thread {
        None => ticks(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)?.1,
        Some(name) => std::fs::read_dir(format!("/proc/{pid}/task"))
            .ok()?
            .filter_map(|e| e.ok())
            .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
            .filter_map(|s| ticks(&s))
            .filter(|(comm, _)| comm == name)
            .map(|(_, t)| t)
            .sum(),
    };
    Some(total as f64 / hz)
}
