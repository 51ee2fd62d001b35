//! PostgreSQL backend: a blocking client (`client`, tokio-postgres on a runtime of each
//! connection's own) on long-lived reader threads (reads) and tokio's blocking threads
//! (writes), a small pool of connections, one transaction per store call.
//!
//! Several `hanson serve` processes may share one database. Writes run in READ COMMITTED and
//! lock the rows they read-then-change (`Conn::lock_clause` is ` FOR UPDATE` here), so money
//! moves serialize per account and market. A write that loses a race is run again from the
//! start in a fresh transaction (the op closure is `Clone`, so each attempt gets its own copy):
//! serialization failures, deadlocks, and unique violations, which under READ COMMITTED are
//! what a concurrent get-or-create (a first deposit creating a wallet, an idempotent reference
//! used twice at once) looks like; the retry then finds the row the winner committed.
//! Reads run in one REPEATABLE READ READ ONLY snapshot, begun with their first statement and
//! ended without waiting for the COMMIT's answer (`client`).

pub mod admin;
mod batch;
mod client;
pub mod leader;
mod numeric;

use std::collections::HashMap;
use std::error::Error as StdError;
use std::str::FromStr;
use std::sync::{mpsc, Arc, LazyLock, Mutex};
use std::time::{Duration, Instant};

use ::postgres::error::SqlState;
use ::postgres::types::{to_sql_checked, IsNull, ToSql, Type};
use ::postgres::fallible_iterator::FallibleIterator;
use ::postgres::{NoTls, Statement};
use client::{Client, ConnectError};
use tokio_postgres::Config;
use bytes::BytesMut;
use tokio::sync::Semaphore;

use super::hot::HotRows;
use super::readers::{self, ReadQueue};
use super::sql::{value_rows, Conn, Dialect, Param, Row, Value};
use super::settings::StoreOptions;
use crate::error::{Error, Result};

pub use numeric::PgMoney;

/// One file per migrations/sqlite file, same number, same tables and columns.
const MIGRATIONS: &[(i64, &str)] = &[
    (1, include_str!("../../migrations/postgres/0001_foundation.sql")),
    (2, include_str!("../../migrations/postgres/0002_auth.sql")),
    (3, include_str!("../../migrations/postgres/0003_trading.sql")),
    (4, include_str!("../../migrations/postgres/0004_lean_indexes.sql")),
    (5, include_str!("../../migrations/postgres/0005_price_volume_totals.sql")),
    (6, include_str!("../../migrations/postgres/0006_market_search.sql")),
    (7, include_str!("../../migrations/postgres/0007_market_sort_indexes.sql")),
    (8, concat!(include_str!("../../migrations/postgres/0008_price_candles.sql"), include_str!("../../migrations/price_candles_backfill.sql"))),
    (9, include_str!("../../migrations/postgres/0009_market_set_version.sql")),
    (10, include_str!("../../migrations/postgres/0010_market_filter_sort_indexes.sql")),
    (11, include_str!("../../migrations/postgres/0011_search_revisions.sql")),
    (12, include_str!("../../migrations/postgres/0012_events.sql")),
    (13, include_str!("../../migrations/postgres/0013_webhooks.sql")),
    (14, include_str!("../../migrations/postgres/0014_search_versions.sql")),
    (15, include_str!("../../migrations/postgres/0015_trade_record_keys.sql")),
    (16, include_str!("../../migrations/postgres/0016_market_rows_without_volume_indexes.sql")),
    (17, include_str!("../../migrations/postgres/0017_positions_by_pair_only.sql")),
    (18, include_str!("../../migrations/postgres/0018_append_only_records_without_primary_keys.sql")),
];

/// Key of the advisory lock that serializes migrations of nodes starting at the same time.
const MIGRATION_LOCK: i64 = 0x6861_6e73_6f6e; // "hanson"
/// Attempts of a write that keeps losing races before its last error is returned.
const WRITE_ATTEMPTS: u32 = 5;
/// Prepared statements kept per connection (the store issues a few dozen distinct ones).
const STATEMENT_CACHE: usize = 256;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

const BEGIN_WRITE: &str = "BEGIN ISOLATION LEVEL READ COMMITTED";
const BEGIN_READ: &str = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";
/// Plans each statement once per connection (`Conn::plan_once`).
const PLAN_ONCE: &str = "SET LOCAL plan_cache_mode = force_generic_plan";
/// `BEGIN_READ` and `PLAN_ONCE` in one message.
static BEGIN_READ_PLANNED_ONCE: LazyLock<String> = LazyLock::new(|| format!("{BEGIN_READ}; {PLAN_ONCE}"));
/// A connection given back to the pool more recently than this is trusted to be alive: a
/// read's BEGIN then rides with its first statement rather than going first on its own.
const TRUSTED_IDLE: Duration = Duration::from_secs(1);

/// What a listening connection tells its caller.
pub enum Notice<'a> {
    /// Listening (again): notifications sent before now were missed.
    Connected,
    Payload(&'a str),
    /// A second passed with nothing.
    Idle,
}

#[derive(Clone)]
pub struct PostgresBackend {
    pool: Arc<Pool>,
    /// The trade batcher's queue (see `batch`).
    trades: mpsc::Sender<Box<dyn batch::Member>>,
    /// Reads wait here for a reader thread (`run_reader`).
    reads: mpsc::Sender<ReadJob>,
}

/// A read, run by a reader thread on the pool.
struct ReadJob {
    queued: Instant,
    run: Box<dyn FnOnce(&Pool) + Send>,
}

struct Pool {
    config: Config,
    /// host:port/dbname, for error messages (never the password).
    target: String,
    statement_timeout_ms: u64,
    idle: Mutex<Vec<PooledClient>>,
    /// One permit per live connection: a holder takes an idle client or opens a new one.
    permits: Arc<Semaphore>,
}

struct PooledClient {
    client: Client,
    /// Prepared statements by their text, then by their parameter types. Looked up by the
    /// text as borrowed, without copying it: a trade batch looks up some twenty a batch.
    statements: HashMap<String, Vec<(Vec<Type>, Statement)>, foldhash::fast::RandomState>,
    /// When it was last given back to the pool.
    idle_since: Instant,
}

/// The SQLSTATE of the first statement that failed inside a transaction.
struct Failure {
    code: Option<SqlState>,
}

pub struct PgConn<'c> {
    pc: &'c mut PooledClient,
    failure: Option<Failure>,
    /// A trade batch's (see `batch`).
    hot: Option<HotRows>,
    /// Statements run that may have changed rows (anything but a plain SELECT).
    writes: u64,
    /// A trade batch's writes from `exec_later`, sent with its COMMIT.
    later: Vec<Later>,
}

/// A statement `exec_later` kept.
enum Later {
    /// With its parameters, as given.
    Statement { sql: String, params: Vec<Value> },
    /// Rows of placeholders, as one array parameter per column.
    Rows(ArrayRows),
}

/// A multi-row INSERT (or upsert), or a `WITH v(columns) AS (VALUES ...)` list, whose rows
/// are all placeholders, sent as `INSERT INTO t (columns) SELECT ... FROM unnest($1::type[],
/// ...)` (or `WITH v(columns) AS (SELECT ... FROM unnest(...)) ...`): one statement text
/// whatever the number of rows, so it is prepared once per connection, and its values go
/// as binary arrays. The same rows as VALUES cost PostgreSQL a parse, analysis and plan of
/// every placeholder. Plain INSERTs into the same table and columns are merged into one.
struct ArrayRows {
    /// `INSERT INTO t (columns)` or `WITH v(columns) AS (`.
    head: String,
    /// What follows the rows (an ON CONFLICT clause, the rest of a WITH); such statements
    /// are not merged.
    tail: String,
    columns: Vec<ArrayColumn>,
}

struct ArrayColumn {
    /// The array's SQL type, from the first value that is not NULL.
    ty: Option<&'static str>,
    values: Vec<Value>,
}

fn pg_error(e: &::postgres::Error) -> Error {
    match e.as_db_error() {
        Some(db) if is_unavailable(db.code()) => Error::Unavailable(format!("postgres {}: {}", db.code().code(), db.message())),
        Some(db) => Error::internal(format!("postgres {}: {}", db.code().code(), db.message())),
        // No answer from the server at all: the connection is gone or never came up.
        None if e.is_closed() || std::error::Error::source(e).is_some_and(|s| s.is::<std::io::Error>()) => {
            Error::Unavailable(format!("postgres: {e}"))
        }
        None => Error::internal(format!("postgres: {e}")),
    }
}

/// The server is shutting down, starting up or out of connections, or a statement ran past
/// the statement timeout (a long wait for a busy market's lock, say): the transaction rolled
/// back, and the same request can succeed shortly.
fn is_unavailable(code: &SqlState) -> bool {
    code.code().starts_with("08")
        || *code == SqlState::QUERY_CANCELED
        || *code == SqlState::ADMIN_SHUTDOWN
        || *code == SqlState::CRASH_SHUTDOWN
        || *code == SqlState::CANNOT_CONNECT_NOW
        || *code == SqlState::TOO_MANY_CONNECTIONS
}

/// Races another transaction can make us lose, by name; running the op again resolves them.
fn retry_cause(code: Option<&SqlState>) -> Option<&'static str> {
    match code {
        Some(c) if *c == SqlState::T_R_SERIALIZATION_FAILURE => Some("serialization"),
        Some(c) if *c == SqlState::T_R_DEADLOCK_DETECTED => Some("deadlock"),
        Some(c) if *c == SqlState::UNIQUE_VIOLATION => Some("unique"),
        _ => None,
    }
}

/// Counts a transaction on a pooled connection for `/metrics` while it runs.
struct InUse;

impl InUse {
    fn start() -> InUse {
        crate::metrics::metrics().pool_in_use.inc();
        InUse
    }
}

impl Drop for InUse {
    fn drop(&mut self) {
        crate::metrics::metrics().pool_in_use.dec();
    }
}

/// A pool permit, the wait for it since `waiting` recorded.
async fn permit(pool: &Pool, waiting: Instant) -> Result<tokio::sync::OwnedSemaphorePermit> {
    let permit = pool.permits.clone().acquire_owned().await.map_err(Error::internal)?;
    crate::metrics::metrics().pool_wait_seconds.observe(waiting.elapsed().as_secs_f64());
    Ok(permit)
}

fn describe_target(config: &Config) -> String {
    use ::postgres::config::Host;
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(h)) => h.clone(),
        #[cfg(unix)]
        Some(Host::Unix(p)) => p.display().to_string(),
        None => "localhost".into(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let db = config.get_dbname().or(config.get_user()).unwrap_or("?");
    format!("{host}:{port}/{db}")
}

impl PostgresBackend {
    /// Listens on `channel` with a connection of its own (outside the pool), telling `deliver`
    /// of the connection, of each notification in commit order, and of each second without
    /// one. Returns when `deliver` returns false, or with an error when the connection fails.
    pub fn listen(&self, channel: &str, mut deliver: impl FnMut(Notice<'_>) -> bool) -> Result<()> {
        let mut client = ::postgres::Config::from(self.pool.config.clone())
            .connect(NoTls)
            .map_err(|e| Error::Unavailable(format!("cannot connect to PostgreSQL at {}: {}", self.pool.target, pg_error(&e))))?;
        client.batch_execute(&format!("LISTEN {channel}")).map_err(|e| pg_error(&e))?;
        if !deliver(Notice::Connected) {
            return Ok(());
        }
        loop {
            let next = client.notifications().timeout_iter(Duration::from_secs(1)).next();
            let go_on = match next {
                Ok(Some(n)) => deliver(Notice::Payload(n.payload())),
                Ok(None) if client.is_closed() => {
                    return Err(Error::Unavailable("the PostgreSQL listener connection closed".into()));
                }
                Ok(None) => deliver(Notice::Idle),
                Err(e) => return Err(Error::Unavailable(format!("PostgreSQL listener: {}", pg_error(&e)))),
            };
            if !go_on {
                return Ok(());
            }
        }
    }

    /// Parses the URL, connects and migrates; fails with a readable error, never a panic.
    pub fn open(url: &str, options: &StoreOptions) -> Result<Self> {
        // The parser's messages never echo the URL, so a password cannot leak through them.
        let mut config = Config::from_str(url)
            .map_err(|e| Error::internal(format!("invalid PostgreSQL URL: {e}")))?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        if config.get_application_name().is_none() {
            config.application_name("hanson");
        }
        let max = options.max_connections.clamp(1, Semaphore::MAX_PERMITS);
        let pool = Arc::new(Pool {
            target: describe_target(&config),
            config,
            statement_timeout_ms: options.statement_timeout_ms,
            idle: Mutex::new(Vec::new()),
            permits: Arc::new(Semaphore::new(max)),
        });
        // The sync client drives its own runtime, which must not run inside an async context
        // (`Store::open` is called from one); a plain thread is always safe.
        let worker = pool.clone();
        std::thread::spawn(move || worker.migrate())
            .join()
            .map_err(|_| Error::internal("PostgreSQL migration thread panicked"))??;
        let trades = batch::start(pool.clone())?;
        let reader_pool = pool.clone();
        let reads = readers::start("pg-reader", max, move |queue| run_reader(&reader_pool, queue))?;
        Ok(PostgresBackend { pool, trades, reads })
    }

    /// Runs `op` in one READ COMMITTED transaction, again from the start if it loses a race.
    pub async fn write<T, F>(&self, op: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut dyn Conn) -> Result<T> + Clone + Send + 'static,
    {
        let pool = self.pool.clone();
        let permit = permit(&pool, Instant::now()).await?;
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let _in_use = InUse::start();
            pool.write_retrying(op)
        })
        .await
        .map_err(|e| Error::internal(format!("write task failed: {e}")))?
    }

    /// Runs a trade in the next trade batch (see `batch`); resolves once it is committed.
    pub async fn write_batched<T, F>(&self, keys: super::trading::TradeKeys, op: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut dyn Conn) -> Result<T> + Clone + Send + 'static,
    {
        batch::submit(&self.trades, keys, op).await
    }

    /// Runs `op` on one REPEATABLE READ READ ONLY snapshot, on a reader thread.
    pub async fn read<T, F>(&self, op: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut dyn Conn) -> Result<T> + Send + 'static,
    {
        let (reply, answer) = tokio::sync::oneshot::channel();
        let run = Box::new(move |pool: &Pool| {
            let _ = reply.send(pool.transaction(true, op).0);
        });
        let job = ReadJob { queued: Instant::now(), run };
        self.reads.send(job).map_err(|_| Error::internal("the PostgreSQL readers stopped"))?;
        answer.await.map_err(|_| Error::internal("a PostgreSQL reader dropped a read"))?
    }
}

/// Runs read jobs until every handle is gone, each under a pool permit (one reader per
/// pooled connection). Reads queue for a reader rather than for a permit, so a reader takes
/// the next one without sleeping: a blocking task a read woke a parked thread for each
/// (PostgreSQL price_history: ten context switches a request in the service).
fn run_reader(pool: &Pool, queue: &ReadQueue<ReadJob>) {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread().build() else { return };
    while let Some(job) = queue.next() {
        // The wait recorded is the read's, from its queueing.
        let Ok(_permit) = runtime.block_on(permit(pool, job.queued)) else { return };
        let _in_use = InUse::start();
        (job.run)(pool);
    }
}

/// A few milliseconds, growing and jittered so racing writers stop colliding.
fn backoff(attempt: u32) {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let ms = (1u64 << attempt.min(6)) + u64::from(nanos % 4);
    std::thread::sleep(Duration::from_millis(ms));
}

impl Pool {
    /// Runs `op` in one READ COMMITTED transaction, again from the start if it loses a race.
    fn write_retrying<T>(&self, op: impl FnOnce(&mut dyn Conn) -> Result<T> + Clone) -> Result<T> {
        let mut attempt = 1;
        loop {
            let (result, retry) = self.transaction(false, op.clone());
            match result {
                Err(e) if retry.is_some() && attempt < WRITE_ATTEMPTS => {
                    let cause = retry.unwrap_or_default();
                    crate::metrics::metrics().write_retries.get_or_create(&[("cause", cause)]).inc();
                    tracing::debug!(attempt, cause, error = %e, "retrying a write that lost a race");
                    backoff(attempt);
                    attempt += 1;
                }
                other => return other,
            }
        }
    }

    fn connect(&self) -> Result<PooledClient> {
        let mut client = Client::connect(&self.config).map_err(|e| {
            let why = match e {
                ConnectError::Runtime(e) => e.to_string(),
                ConnectError::Postgres(e) => pg_error(&e).to_string(),
            };
            Error::Unavailable(format!("cannot connect to PostgreSQL at {}: {why}", self.target))
        })?;
        // Bounds how long one statement (and so one pooled connection) can be held.
        client
            .batch_execute(&format!("SET statement_timeout = {}; SET standard_conforming_strings = on", self.statement_timeout_ms))
            .map_err(|e| pg_error(&e))?;
        Ok(PooledClient { client, statements: HashMap::default(), idle_since: Instant::now() })
    }

    /// A client inside a fresh transaction. An idle client whose connection died (server
    /// restart, idle timeout) is dropped and the next one tried; the op has not run yet. With
    /// `with_next` (a read's, a trade batch's), BEGIN is sent with the first statement instead,
    /// on a new connection or one given back within `TRUSTED_IDLE` (one round trip of the two
    /// or three a read makes).
    fn begin(&self, begin: &'static str, with_next: bool) -> Result<PooledClient> {
        loop {
            let idle = self.idle.lock().map_err(Error::internal)?.pop();
            let fresh = idle.is_none();
            let mut pc = match idle {
                Some(pc) => pc,
                None => self.connect()?,
            };
            if with_next && (fresh || pc.idle_since.elapsed() < TRUSTED_IDLE) {
                pc.client.begin_with_next(begin);
                return Ok(pc);
            }
            match pc.client.batch_execute(begin) {
                Ok(()) => return Ok(pc),
                Err(e) if fresh || !(pc.client.is_closed() || e.is_closed()) => {
                    let err = pg_error(&e);
                    self.give_back(pc, false);
                    return Err(err);
                }
                Err(_) => drop(pc),
            }
        }
    }

    /// Returns a client to the pool unless its connection or transaction state is unknown.
    fn give_back(&self, mut pc: PooledClient, healthy: bool) {
        if healthy && !pc.client.is_closed() {
            pc.idle_since = Instant::now();
            if let Ok(mut idle) = self.idle.lock() {
                idle.push(pc);
            }
        }
    }

    /// Runs `op` in a read-only transaction (`read`) or a write one, ended by COMMIT
    /// (ROLLBACK on any error). Returns the result and, when the failure was a lost race
    /// worth running the op again for, which race.
    fn transaction<T>(&self, read: bool, op: impl FnOnce(&mut dyn Conn) -> Result<T>) -> (Result<T>, Option<&'static str>) {
        let mut pc = match self.begin(if read { BEGIN_READ } else { BEGIN_WRITE }, read) {
            Ok(pc) => pc,
            Err(e) => return (Err(e), None),
        };
        let mut conn = PgConn::new(&mut pc, None);
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| op(&mut conn)))
            .unwrap_or_else(|_| Err(Error::internal("store operation panicked")));
        let failure = conn.failure.take();
        // A connection lost before COMMIT was sent committed nothing: safe to run again.
        let retry = failure
            .as_ref()
            .and_then(|f| retry_cause(f.code.as_ref()))
            .or_else(|| pc.client.is_closed().then_some("connection"));
        let outcome = match (result, failure) {
            // PostgreSQL aborts the whole transaction on a failed statement, and COMMIT would
            // then silently roll back: an op that swallowed an error cannot succeed here.
            (Ok(_), Some(_)) => Err(Error::internal("a statement failed inside the transaction and its error was ignored")),
            (result, _) => result,
        };
        if read {
            // A read's COMMIT ends its snapshot whatever happened in it; its answer is not
            // waited for. A connection that died is found by the next request on it.
            pc.client.end_read_unanswered("COMMIT");
            self.give_back(pc, true);
            return (outcome, retry);
        }
        if let Ok(value) = outcome {
            return match pc.client.batch_execute("COMMIT") {
                Ok(()) => {
                    self.give_back(pc, true);
                    (Ok(value), None)
                }
                Err(e) => {
                    let retry = retry_cause(e.code());
                    let healthy = pc.client.batch_execute("ROLLBACK").is_ok();
                    self.give_back(pc, healthy);
                    (Err(pg_error(&e)), retry)
                }
            };
        }
        let healthy = pc.client.batch_execute("ROLLBACK").is_ok();
        self.give_back(pc, healthy);
        (outcome, retry)
    }

    fn migrate(&self) -> Result<()> {
        let mut pc = self.connect()?;
        let now = crate::domain::time::now_micros();
        let run = |client: &mut Client| -> std::result::Result<(), ::postgres::Error> {
            // A long migration on another node must not trip our statement timeout.
            client.batch_execute(&format!(
                "BEGIN; SET LOCAL statement_timeout = 0; SELECT pg_advisory_xact_lock({MIGRATION_LOCK}); \
                 CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, applied_at BIGINT NOT NULL)"
            ))?;
            let applied = client.prepare_typed("SELECT count(*) FROM schema_migrations WHERE version = $1", &[Type::INT8])?;
            for (version, sql) in MIGRATIONS {
                let count: i64 = client.query(&applied, &[version])?.first().map_or(0, |row| row.get(0));
                if count == 0 {
                    client.batch_execute(sql)?;
                    client.batch_execute(&format!(
                        "INSERT INTO schema_migrations (version, applied_at) VALUES ({version}, {now})"
                    ))?;
                }
            }
            client.batch_execute("COMMIT")
        };
        run(&mut pc.client)
            .map_err(|e| Error::internal(format!("migrating PostgreSQL at {}: {}", self.target, pg_error(&e))))?;
        self.give_back(pc, true);
        Ok(())
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        let idle = match self.idle.get_mut() {
            Ok(idle) => std::mem::take(idle),
            Err(poisoned) => std::mem::take(poisoned.into_inner()),
        };
        if idle.is_empty() {
            return;
        }
        // Closing a client blocks on its own runtime, which panics inside an async context
        // (the last Store clone is often dropped in one): close them on a plain thread.
        let (done, wait) = mpsc::channel();
        let closer = std::thread::Builder::new().name("pg-close".into()).spawn(move || {
            drop(idle);
            let _ = done.send(());
        });
        if closer.is_ok() {
            let _ = wait.recv_timeout(Duration::from_secs(2));
        }
    }
}

/// The type a parameter is prepared with; NULL is left for the server to infer.
fn natural_type(p: &Param<'_>) -> Type {
    match p {
        Param::Null => Type::UNKNOWN,
        Param::Int(_) => Type::INT8,
        Param::Text(_) => Type::TEXT,
        Param::Money(_) => Type::NUMERIC,
        Param::Blob(_) => Type::BYTEA,
    }
}

fn is_text(ty: &Type) -> bool {
    <&str as ToSql>::accepts(ty)
}

impl ToSql for Param<'_> {
    /// Binds to the parameter type the server settled on; types are checked here, per value.
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> std::result::Result<IsNull, Box<dyn StdError + Sync + Send>> {
        let mismatch = || format!("cannot bind {self:?} to a {ty} parameter").into();
        match *self {
            Param::Null => Ok(IsNull::Yes),
            Param::Int(v) if *ty == Type::INT8 => v.to_sql(ty, out),
            Param::Int(v) if *ty == Type::INT4 => i32::try_from(v)?.to_sql(ty, out),
            Param::Int(v) if *ty == Type::INT2 => i16::try_from(v)?.to_sql(ty, out),
            Param::Int(v) if *ty == Type::BOOL => (v != 0).to_sql(ty, out),
            Param::Int(v) if *ty == Type::NUMERIC => PgMoney(u128::try_from(v)?).to_sql(ty, out),
            Param::Money(m) if *ty == Type::NUMERIC => PgMoney(m).to_sql(ty, out),
            Param::Money(m) if *ty == Type::INT8 => i64::try_from(m)?.to_sql(ty, out),
            Param::Money(m) if is_text(ty) => m.to_string().as_str().to_sql(ty, out),
            Param::Text(s) if is_text(ty) => s.to_sql(ty, out),
            Param::Blob(b) if *ty == Type::BYTEA => b.to_sql(ty, out),
            _ => Err(mismatch()),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

/// One column of a result row as a [`Value`].
fn column(row: &::postgres::Row, i: usize) -> Result<Value> {
    fn get<'a, T: ::postgres::types::FromSql<'a>>(row: &'a ::postgres::Row, i: usize) -> Result<Option<T>> {
        row.try_get::<_, Option<T>>(i).map_err(|e| Error::internal(format!("column {i}: {}", pg_error(&e))))
    }
    let ty = row.columns()[i].type_();
    let value = if *ty == Type::INT8 {
        get::<i64>(row, i)?.map(Value::Int)
    } else if *ty == Type::INT4 {
        get::<i32>(row, i)?.map(|v| Value::Int(v.into()))
    } else if *ty == Type::INT2 {
        get::<i16>(row, i)?.map(|v| Value::Int(v.into()))
    } else if *ty == Type::BOOL {
        get::<bool>(row, i)?.map(|v| Value::Int(v.into()))
    } else if *ty == Type::NUMERIC {
        get::<PgMoney>(row, i)?.map(|v| Value::Money(v.0))
    } else if *ty == Type::BYTEA {
        get::<Vec<u8>>(row, i)?.map(Value::Blob)
    } else if *ty == Type::FLOAT8 {
        get::<f64>(row, i)?.map(|v| Value::Text(v.to_string()))
    } else if *ty == Type::FLOAT4 {
        get::<f32>(row, i)?.map(|v| Value::Text(v.to_string()))
    } else if is_text(ty) {
        get::<String>(row, i)?.map(Value::Text)
    } else {
        return Err(Error::internal(format!("column {i} has unsupported type {ty}")));
    };
    Ok(value.unwrap_or(Value::Null))
}

impl<'c> PgConn<'c> {
    fn new(pc: &'c mut PooledClient, hot: Option<HotRows>) -> Self {
        PgConn { pc, failure: None, hot, writes: 0, later: Vec::new() }
    }

    /// Grows with every change: statements that may have changed rows, and changes to the
    /// kept rows.
    fn changes(&self) -> u64 {
        self.writes + self.hot.as_ref().map_or(0, HotRows::changes)
    }

    /// Sends the writes `exec_later` kept, bound to prepared statements, and then `last` (a
    /// trade batch's COMMIT), in one round trip. Returns the first statement's error: the
    /// server runs none after it, and `last` then ends the transaction without committing.
    fn send_later_then(&mut self, last: &str) -> std::result::Result<(), ::postgres::Error> {
        let later = std::mem::take(&mut self.later);
        let mut statements = Vec::with_capacity(later.len());
        for l in &later {
            let stmt = match l {
                Later::Statement { sql, params } => {
                    let types = params.iter().map(|v| natural_type(&as_param(v))).collect();
                    self.prepared(sql, types)?
                }
                Later::Rows(rows) => self.prepared(&rows.sql(), Vec::new())?,
            };
            statements.push(stmt);
        }
        let bound: Vec<Vec<Param<'_>>> = later
            .iter()
            .map(|l| match l {
                Later::Statement { params, .. } => params.iter().map(as_param).collect(),
                Later::Rows(_) => Vec::new(),
            })
            .collect();
        let arrays: Vec<Vec<Vec<Param<'_>>>> =
            later.iter().map(|l| if let Later::Rows(rows) = l { rows.arrays() } else { Vec::new() }).collect();
        let queries: Vec<(&Statement, Vec<&(dyn ToSql + Sync)>)> = statements
            .iter()
            .zip(bound.iter().zip(&arrays))
            .map(|(stmt, (params, arrays))| {
                let args: Vec<&(dyn ToSql + Sync)> = match arrays.is_empty() {
                    true => params.iter().map(|p| p as &(dyn ToSql + Sync)).collect(),
                    false => arrays.iter().map(|a| a as &(dyn ToSql + Sync)).collect(),
                };
                (stmt, args)
            })
            .collect();
        self.pc.client.execute_all_then(&queries, last)
    }

    /// The prepared statement for `sql` (parameter types as given; an empty list lets the
    /// server infer them), from this connection's cache.
    fn prepared(&mut self, sql: &str, types: Vec<Type>) -> std::result::Result<Statement, ::postgres::Error> {
        let kept = self.pc.statements.get(sql).and_then(|typed| typed.iter().find(|(t, _)| *t == types));
        if let Some((_, stmt)) = kept {
            return Ok(stmt.clone());
        }
        let stmt = self.pc.client.prepare_typed(sql, &types)?;
        if self.pc.statements.len() >= STATEMENT_CACHE {
            self.pc.statements.clear();
        }
        self.pc.statements.entry(sql.to_string()).or_default().push((types, stmt.clone()));
        Ok(stmt)
    }

    /// Records the first failure (it decides retry and rollback) and converts it.
    fn fail(&mut self, e: ::postgres::Error) -> Error {
        if self.failure.is_none() {
            self.failure = Some(Failure { code: e.code().cloned() });
        }
        pg_error(&e)
    }

    fn statement(&mut self, sql: &str, params: &[Param<'_>]) -> Result<Statement> {
        self.prepared(sql, params.iter().map(natural_type).collect()).map_err(|e| self.fail(e))
    }
}

/// A parameter kept past the call that bound it.
fn owned(p: &Param<'_>) -> Value {
    match *p {
        Param::Null => Value::Null,
        Param::Int(v) => Value::Int(v),
        Param::Text(s) => Value::Text(s.to_string()),
        Param::Money(m) => Value::Money(m),
        Param::Blob(b) => Value::Blob(b.to_vec()),
    }
}

fn as_param(v: &Value) -> Param<'_> {
    match v {
        Value::Null => Param::Null,
        Value::Int(v) => Param::Int(*v),
        Value::Text(s) => Param::Text(s),
        Value::Money(m) => Param::Money(*m),
        Value::Blob(b) => Param::Blob(b),
    }
}

/// `(head, column count, tail)` of `<lead>name(columns)<between>VALUES <rows><tail>` whose
/// rows are the placeholders of `params` in order (as `value_rows` writes them): the head
/// runs up to `VALUES`, so the rows can be put back in another form between head and tail.
fn placeholder_rows<'s>(sql: &'s str, lead: &str, between: &str, params: usize) -> Option<(&'s str, usize, &'s str)> {
    let rest = sql.strip_prefix(lead)?;
    let open = rest.find('(')?;
    let close = open + rest[open..].find(')')?;
    if rest[..open].trim_end().contains(' ') {
        return None;
    }
    let columns = rest[open + 1..close].split(',').count();
    let rows = rest[close + 1..].strip_prefix(between)?.strip_prefix("VALUES ")?;
    if params == 0 || !params.is_multiple_of(columns) {
        return None;
    }
    let tail = rows.strip_prefix(value_rows(params / columns, columns).as_str())?;
    let head = &sql[..sql.len() - rows.len() - "VALUES ".len()];
    Some((head.trim_end(), columns, tail))
}

/// [`placeholder_rows`] of `INSERT INTO t (columns) VALUES <rows> <tail>` whose tail takes
/// no parameter and returns nothing.
fn array_insert(sql: &str, params: usize) -> Option<(&str, usize, &str)> {
    placeholder_rows(sql, "INSERT INTO ", " ", params)
        .filter(|(_, _, tail)| !tail.contains('$') && !tail.contains("RETURNING") && !tail.contains(';'))
}

/// [`placeholder_rows`] of `WITH v(columns) AS (VALUES <rows>) <tail>` whose tail takes no
/// parameter: the head is `WITH v(columns) AS (`, the tail starts at the `)` closing the rows.
fn array_values(sql: &str, params: usize) -> Option<(&str, usize, &str)> {
    placeholder_rows(sql, "WITH ", " AS (", params).filter(|(_, _, tail)| tail.starts_with(')') && !tail.contains('$'))
}

impl ArrayRows {
    /// The rows of `params`, `columns` values each; None if a column mixes types.
    fn new(head: &str, tail: &str, columns: usize, params: &[Param<'_>]) -> Option<ArrayRows> {
        let mut rows = ArrayRows {
            head: head.to_string(),
            tail: tail.to_string(),
            columns: (0..columns).map(|_| ArrayColumn { ty: None, values: Vec::with_capacity(params.len() / columns) }).collect(),
        };
        for (i, param) in params.iter().enumerate() {
            let column = &mut rows.columns[i % columns];
            let ty = match param {
                Param::Null => None,
                Param::Int(_) => Some("int8[]"),
                Param::Money(_) => Some("numeric[]"),
                Param::Text(_) => Some("text[]"),
                Param::Blob(_) => Some("bytea[]"),
            };
            match (column.ty, ty) {
                (Some(a), Some(b)) if a != b => return None,
                (None, Some(b)) => column.ty = Some(b),
                _ => {}
            }
            column.values.push(owned(param));
        }
        Some(rows)
    }

    /// Appends `other`'s rows if it inserts into the same columns with the same types.
    fn merge(&mut self, other: ArrayRows) -> std::result::Result<(), ArrayRows> {
        let same = self.tail.is_empty()
            && other.tail.is_empty()
            && self.head == other.head
            && self.columns.iter().zip(&other.columns).all(|(a, b)| a.ty.is_none() || b.ty.is_none() || a.ty == b.ty);
        if !same {
            return Err(other);
        }
        for (mine, theirs) in self.columns.iter_mut().zip(other.columns) {
            mine.ty = mine.ty.or(theirs.ty);
            mine.values.extend(theirs.values);
        }
        Ok(())
    }

    /// A column of NULLs only has no array: its values are a plain NULL, which takes the
    /// column's type.
    fn sql(&self) -> String {
        let mut arrays = Vec::new();
        let mut values = Vec::new();
        for column in &self.columns {
            match column.ty {
                Some(ty) => {
                    arrays.push(format!("${}::{ty}", arrays.len() + 1));
                    values.push(format!("c{}", arrays.len()));
                }
                None => values.push("NULL".into()),
            }
        }
        let names = (1..=arrays.len()).map(|i| format!("c{i}")).collect::<Vec<_>>().join(", ");
        format!("{} SELECT {} FROM unnest({}) AS rows({names}){}", self.head, values.join(", "), arrays.join(", "), self.tail)
    }

    /// The parameters of [`ArrayRows::sql`]: an array per column that is not all NULL.
    fn arrays(&self) -> Vec<Vec<Param<'_>>> {
        self.columns.iter().filter(|c| c.ty.is_some()).map(|c| c.values.iter().map(as_param).collect()).collect()
    }
}

fn converted(row: &::postgres::Row) -> Result<Row> {
    (0..row.len()).map(|i| column(row, i)).collect::<Result<Vec<_>>>().map(Row)
}

fn args<'a>(params: &'a [Param<'a>]) -> Vec<&'a (dyn ToSql + Sync)> {
    params.iter().map(|p| p as &(dyn ToSql + Sync)).collect()
}

impl Conn for PgConn<'_> {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn hot(&mut self) -> Option<&mut HotRows> {
        self.hot.as_mut()
    }

    /// Rides with the read's BEGIN when that still waits for the first statement.
    fn plan_once(&mut self) -> Result<()> {
        if self.pc.client.amend_waiting_begin(&BEGIN_READ_PLANNED_ONCE) {
            return Ok(());
        }
        self.pc.client.batch_execute(PLAN_ONCE).map_err(|e| self.fail(e))
    }

    fn exec(&mut self, sql: &str, params: &[Param<'_>]) -> Result<u64> {
        let stmt = self.statement(sql, params)?;
        self.writes += 1;
        match self.pc.client.execute(&stmt, &args(params)) {
            Ok(n) => Ok(n),
            Err(e) => Err(self.fail(e)),
        }
    }

    /// Kept for `send_later_then` in a trade batch, which has no other use for the round trip.
    fn exec_later(&mut self, sql: &str, params: &[Param<'_>]) -> Result<()> {
        if self.hot.is_none() {
            return self.exec(sql, params).map(|_| ());
        }
        self.writes += 1;
        let inserted = array_insert(sql, params.len()).and_then(|(head, columns, tail)| ArrayRows::new(head, tail, columns, params));
        // A NULL column of rows a WITH names would have no type: such lists stay as given.
        let listed = || {
            array_values(sql, params.len())
                .and_then(|(head, columns, tail)| ArrayRows::new(head, tail, columns, params))
                .filter(|rows| rows.columns.iter().all(|c| c.ty.is_some()))
        };
        if let Some(mut rows) = inserted.or_else(listed) {
            for kept in &mut self.later {
                if let Later::Rows(kept) = kept {
                    match kept.merge(rows) {
                        Ok(()) => return Ok(()),
                        Err(back) => rows = back,
                    }
                }
            }
            self.later.push(Later::Rows(rows));
            return Ok(());
        }
        self.later.push(Later::Statement { sql: sql.to_string(), params: params.iter().map(owned).collect() });
        Ok(())
    }

    fn query(&mut self, sql: &str, params: &[Param<'_>]) -> Result<Vec<Row>> {
        let stmt = self.statement(sql, params)?;
        if !sql.trim_start().starts_with("SELECT") {
            self.writes += 1;
        }
        let rows = match self.pc.client.query(&stmt, &args(params)) {
            Ok(rows) => rows,
            Err(e) => return Err(self.fail(e)),
        };
        rows.iter().map(converted).collect()
    }

    fn query_all(&mut self, reads: &[(String, Vec<Param<'_>>)]) -> Result<Vec<Vec<Row>>> {
        let mut statements = Vec::with_capacity(reads.len());
        for (sql, params) in reads {
            if !sql.trim_start().starts_with("SELECT") {
                self.writes += 1;
            }
            statements.push(self.statement(sql, params)?);
        }
        let queries: Vec<_> = statements.iter().zip(reads).map(|(stmt, (_, params))| (stmt, args(params))).collect();
        let answers = match self.pc.client.query_all(&queries) {
            Ok(answers) => answers,
            Err(e) => return Err(self.fail(e)),
        };
        answers.iter().map(|rows| rows.iter().map(converted).collect()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_inserts_of_placeholder_rows_are_sent_as_arrays() {
        let insert = "INSERT INTO t (a, b) VALUES ($1, $2), ($3, $4)";
        assert_eq!(array_insert(insert, 4), Some(("INSERT INTO t (a, b)", 2, "")));
        assert_eq!(array_insert(insert, 6), None);
        let upsert = "INSERT INTO t (a) VALUES ($1) ON CONFLICT (a) DO NOTHING";
        assert_eq!(array_insert(upsert, 1), Some(("INSERT INTO t (a)", 1, " ON CONFLICT (a) DO NOTHING")));
        assert_eq!(array_insert("INSERT INTO t (a) VALUES ($1) ON CONFLICT (a) DO UPDATE SET a = $2", 1), None);
        assert_eq!(array_insert("INSERT INTO t (a) VALUES ($1) RETURNING a", 1), None);
        assert_eq!(array_insert("INSERT INTO t (a, b) VALUES ($1, 'x')", 1), None);
        assert_eq!(array_insert("INSERT INTO t (a) SELECT a FROM u", 0), None);
        assert_eq!(array_insert("UPDATE t SET a = $1", 1), None);
    }

    #[test]
    fn only_with_lists_of_placeholder_rows_are_sent_as_arrays() {
        let update = "WITH v(id, n) AS (VALUES ($1, $2), ($3, $4)) UPDATE t SET n = v.n FROM v WHERE t.id = v.id";
        assert_eq!(array_values(update, 4), Some(("WITH v(id, n) AS (", 2, ") UPDATE t SET n = v.n FROM v WHERE t.id = v.id")));
        assert_eq!(array_values(update, 2), None);
        assert_eq!(array_values("WITH v(id) AS (VALUES ($1)) UPDATE t SET n = $2 FROM v", 1), None);
        assert_eq!(array_values("WITH v(id) AS (VALUES ($1), ('x')) UPDATE t SET n = 1 FROM v", 1), None);
        assert_eq!(array_values("WITH written AS (INSERT INTO t (a) VALUES ($1)) SELECT 1", 1), None);
        let params = [Param::Text("a"), Param::Money(5), Param::Text("b"), Param::Money(6)];
        let (head, columns, tail) = array_values(update, 4).unwrap();
        assert_eq!(
            ArrayRows::new(head, tail, columns, &params).unwrap().sql(),
            "WITH v(id, n) AS ( SELECT c1, c2 FROM unnest($1::text[], $2::numeric[]) AS rows(c1, c2)) UPDATE t SET n = v.n FROM v WHERE t.id = v.id"
        );
    }

    #[test]
    fn array_rows_bind_a_column_per_array_and_merge_by_table_and_types() {
        let params = [Param::Text("it's"), Param::Money(u128::MAX), Param::Null, Param::Blob(&[0, 0xff])];
        let second = [Param::Text("b"), Param::Money(1), Param::Null, Param::Null];
        let mut rows = ArrayRows::new("INSERT INTO t (a, b, c, d)", "", 4, &params).unwrap();
        assert!(rows.merge(ArrayRows::new("INSERT INTO t (a, b, c, d)", "", 4, &second).unwrap()).is_ok());
        assert_eq!(
            rows.sql(),
            "INSERT INTO t (a, b, c, d) SELECT c1, c2, NULL, c3 FROM unnest($1::text[], $2::numeric[], $3::bytea[]) AS rows(c1, c2, c3)"
        );
        assert_eq!(
            format!("{:?}", rows.arrays()),
            format!("{:?}", vec![
                vec![Param::Text("it's"), Param::Text("b")],
                vec![Param::Money(u128::MAX), Param::Money(1)],
                vec![Param::Blob(&[0, 0xff]), Param::Null],
            ])
        );
        let other_table = ArrayRows::new("INSERT INTO u (a, b, c, d)", "", 4, &second).unwrap();
        assert!(rows.merge(other_table).is_err());
        let mixed = [Param::Int(1), Param::Text("x")];
        assert!(ArrayRows::new("INSERT INTO t (a)", "", 1, &mixed).is_none());
    }
}
