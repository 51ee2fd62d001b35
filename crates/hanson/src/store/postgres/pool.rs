//! The connection pool: idle clients, one permit per live connection, transactions begun
//! (BEGIN sent with the first statement where that is safe) and given back.

use std::collections::HashMap;
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;
use tokio_postgres::Config;

use super::client::{Client, ConnectError};
use super::conn::PgConn;
use super::PooledClient;
use super::{backoff, pg_error, retry_cause, BEGIN_READ, BEGIN_WRITE, MIGRATIONS, MIGRATION_LOCK, TRUSTED_IDLE, WRITE_ATTEMPTS};
use crate::error::{Error, Result};
use crate::store::sql::Conn;
use ::postgres::types::Type;

pub(super) struct Pool {
    pub(super) config: Config,
    /// host:port/dbname, for error messages (never the password).
    pub(super) target: String,
    pub(super) statement_timeout_ms: u64,
    pub(super) idle: Mutex<Vec<PooledClient>>,
    /// One permit per live connection: a holder takes an idle client or opens a new one.
    pub(super) permits: Arc<Semaphore>,
}

impl Pool {
    /// Runs `op` in one READ COMMITTED transaction, again from the start if it loses a race.
    pub(super) fn write_retrying<T>(&self, op: impl FnOnce(&mut dyn Conn) -> Result<T> + Clone) -> Result<T> {
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

    pub(super) fn connect(&self) -> Result<PooledClient> {
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
    pub(super) fn begin(&self, begin: &'static str, with_next: bool) -> Result<PooledClient> {
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
    pub(super) fn give_back(&self, mut pc: PooledClient, healthy: bool) {
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
    pub(super) fn transaction<T>(&self, read: bool, op: impl FnOnce(&mut dyn Conn) -> Result<T>) -> (Result<T>, Option<&'static str>) {
        let mut pc = match self.begin(if read { BEGIN_READ } else { BEGIN_WRITE }, read) {
            Ok(pc) => pc,
            Err(e) => return (Err(e), None),
        };
        let mut conn = PgConn::new(&mut pc);
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| op(&mut conn)))
            .unwrap_or_else(|_| Err(Error::internal("store operation panicked")));
        let failure = conn.failure.take();
        // A connection lost before COMMIT was sent committed nothing: safe to run again.
        let retry = failure.as_ref().and_then(|f| retry_cause(f.code.as_ref())).or_else(|| pc.client.is_closed().then_some("connection"));
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

    pub(super) fn migrate(&self) -> Result<()> {
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
                    client.batch_execute(&format!("INSERT INTO schema_migrations (version, applied_at) VALUES ({version}, {now})"))?;
                }
            }
            client.batch_execute("COMMIT")
        };
        run(&mut pc.client).map_err(|e| Error::internal(format!("migrating PostgreSQL at {}: {}", self.target, pg_error(&e))))?;
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
