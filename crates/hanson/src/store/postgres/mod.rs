//! PostgreSQL backend: a blocking client (`client`, tokio-postgres on a runtime of each
//! connection's own) on long-lived reader threads (reads) and tokio's blocking threads
//! (writes), a small pool of connections (`pool`), one transaction per store call.
//!
//! Several `hanson serve` processes may share one database. Writes run in READ COMMITTED and
//! lock the rows they read-then-change (`Conn::lock_clause` is ` FOR UPDATE` here), so money
//! moves serialize per account and market. A write that loses a race is run again from the
//! start in a fresh transaction (the op closure is `Clone`, so each attempt gets its own copy):
//! serialization failures, deadlocks, and unique violations, which under READ COMMITTED are
//! what a concurrent get-or-create (a first deposit creating a wallet, an idempotent reference
//! used twice at once) looks like; the retry then finds the row the winner committed.
//! Reads run in one REPEATABLE READ READ ONLY snapshot, begun with their first statement and
//! ended without waiting for the COMMIT's answer (`client`). Bets and sells run in trade
//! batches (`batch`).

pub mod admin;
mod batch;
mod client;
mod conn;
pub(crate) mod leader;
mod numeric;
mod pool;
mod types;

use std::str::FromStr;
use std::sync::{mpsc, Arc, LazyLock, Mutex};
use std::time::{Duration, Instant};

use ::postgres::error::SqlState;
use ::postgres::fallible_iterator::FallibleIterator;
use ::postgres::types::Type;
use ::postgres::{NoTls, Statement};
use client::Client;
use std::collections::HashMap;
use tokio::sync::Semaphore;
use tokio_postgres::Config;

use crate::error::{Error, Result};
use crate::store::batch::{BatchRows, TradeKeys};
use crate::store::readers::{self, ReadQueue};
use crate::store::settings::StoreOptions;
use crate::store::sql::Conn;
use pool::Pool;

/// One file per migrations/sqlite file, same number, same tables and columns.
const MIGRATIONS: &[(i64, &str)] = &[
    (1, include_str!("../../../migrations/postgres/0001_foundation.sql")),
    (2, include_str!("../../../migrations/postgres/0002_auth.sql")),
    (3, include_str!("../../../migrations/postgres/0003_trading.sql")),
    (4, include_str!("../../../migrations/postgres/0004_lean_indexes.sql")),
    (5, include_str!("../../../migrations/postgres/0005_price_volume_totals.sql")),
    (6, include_str!("../../../migrations/postgres/0006_market_search.sql")),
    (7, include_str!("../../../migrations/postgres/0007_market_sort_indexes.sql")),
    (
        8,
        concat!(
            include_str!("../../../migrations/postgres/0008_price_candles.sql"),
            include_str!("../../../migrations/price_candles_backfill_0008.sql")
        ),
    ),
    (9, include_str!("../../../migrations/postgres/0009_market_set_version.sql")),
    (10, include_str!("../../../migrations/postgres/0010_market_filter_sort_indexes.sql")),
    (11, include_str!("../../../migrations/postgres/0011_search_revisions.sql")),
    (12, include_str!("../../../migrations/postgres/0012_events.sql")),
    (13, include_str!("../../../migrations/postgres/0013_webhooks.sql")),
    (14, include_str!("../../../migrations/postgres/0014_search_versions.sql")),
    (15, include_str!("../../../migrations/postgres/0015_trade_record_keys.sql")),
    (16, include_str!("../../../migrations/postgres/0016_market_rows_without_volume_indexes.sql")),
    (17, include_str!("../../../migrations/postgres/0017_positions_by_pair_only.sql")),
    (18, include_str!("../../../migrations/postgres/0018_append_only_records_without_primary_keys.sql")),
    (19, include_str!("../../../migrations/postgres/0019_market_operations.sql")),
    (
        20,
        concat!(
            include_str!("../../../migrations/postgres/0020_market_data.sql"),
            include_str!("../../../migrations/price_candles_backfill.sql")
        ),
    ),
    (21, include_str!("../../../migrations/postgres/0021_siwe_nonces.sql")),
    (22, include_str!("../../../migrations/postgres/0022_webhook_deliveries_ended.sql")),
    (23, include_str!("../../../migrations/postgres/0023_webhook_deliveries_endpoint_due.sql")),
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
pub(crate) enum Notice<'a> {
    /// Listening (again): notifications sent before now were missed.
    Connected,
    Payload(&'a str),
    /// A second passed with nothing.
    Idle,
}

#[derive(Clone)]
pub(crate) struct PostgresBackend {
    pool: Arc<Pool>,
    /// The trade batcher's queue (see `batch`).
    trades: mpsc::Sender<Box<dyn batch::Member>>,
    /// Reads wait here for a reader thread (`run_reader`).
    reads: mpsc::Sender<ReadJob>,
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

/// A read, run by a reader thread on the pool.
struct ReadJob {
    queued: Instant,
    run: Box<dyn FnOnce(&Pool) + Send>,
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
    pub(crate) fn listen(&self, channel: &str, mut deliver: impl FnMut(Notice<'_>) -> bool) -> Result<()> {
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
    pub(crate) fn open(url: &str, options: &StoreOptions) -> Result<Self> {
        // The parser's messages never echo the URL, so a password cannot leak through them.
        let mut config = Config::from_str(url).map_err(|e| Error::internal(format!("invalid PostgreSQL URL: {e}")))?;
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
        std::thread::spawn(move || worker.migrate()).join().map_err(|_| Error::internal("PostgreSQL migration thread panicked"))??;
        let trades = batch::start(pool.clone())?;
        let reader_pool = pool.clone();
        let reads = readers::start("pg-reader", max, move |queue| run_reader(&reader_pool, queue))?;
        Ok(PostgresBackend { pool, trades, reads })
    }

    /// Runs `op` in one READ COMMITTED transaction, again from the start if it loses a race.
    pub(crate) async fn write<T, F>(&self, op: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut dyn Conn, Option<&mut BatchRows>) -> Result<T> + Clone + Send + 'static,
    {
        let pool = self.pool.clone();
        let permit = permit(&pool, Instant::now()).await?;
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let _in_use = InUse::start();
            pool.write_retrying(move |c| op(c, None))
        })
        .await
        .map_err(|e| Error::internal(format!("write task failed: {e}")))?
    }

    /// Runs a trade in the next trade batch (see `batch`); resolves once it is committed.
    pub(crate) async fn write_batched<T, F>(&self, keys: TradeKeys, op: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut dyn Conn, Option<&mut BatchRows>) -> Result<T> + Clone + Send + 'static,
    {
        batch::submit(&self.trades, keys, op).await
    }

    /// Runs `op` on one REPEATABLE READ READ ONLY snapshot, on a reader thread.
    pub(crate) async fn read<T, F>(&self, op: F) -> Result<T>
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
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
    let ms = (1u64 << attempt.min(6)) + u64::from(nanos % 4);
    std::thread::sleep(Duration::from_millis(ms));
}
