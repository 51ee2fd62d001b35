//! A blocking PostgreSQL client that can pipeline. It is what the `postgres` crate's client
//! is, tokio-postgres on a single-threaded runtime of the connection's own, plus
//! [`Client::query_all`]: several statements sent before any answer is read, one round trip
//! for all of them. A trade batch reads its markets, sessions and positions that way; one
//! round trip each made the reads a quarter of a batch on the hot market.

use ::postgres::types::ToSql;
use ::postgres::{Error, NoTls, Row, Statement};
use tokio::runtime::Runtime;

pub(super) struct Client {
    runtime: Runtime,
    inner: tokio_postgres::Client,
}

impl Client {
    pub(super) fn connect(config: &tokio_postgres::Config) -> std::result::Result<Client, ConnectError> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(ConnectError::Runtime)?;
        let (inner, connection) = runtime.block_on(config.connect(NoTls)).map_err(ConnectError::Postgres)?;
        // Runs whenever this client waits for an answer (`block_on`), which is the only time
        // the connection has anything to do.
        runtime.spawn(connection);
        Ok(Client { runtime, inner })
    }

    pub(super) fn batch_execute(&mut self, sql: &str) -> std::result::Result<(), Error> {
        self.runtime.block_on(self.inner.batch_execute(sql))
    }

    pub(super) fn prepare_typed(&mut self, sql: &str, types: &[::postgres::types::Type]) -> std::result::Result<Statement, Error> {
        self.runtime.block_on(self.inner.prepare_typed(sql, types))
    }

    pub(super) fn execute(&mut self, stmt: &Statement, params: &[&(dyn ToSql + Sync)]) -> std::result::Result<u64, Error> {
        self.runtime.block_on(self.inner.execute(stmt, params))
    }

    pub(super) fn query(&mut self, stmt: &Statement, params: &[&(dyn ToSql + Sync)]) -> std::result::Result<Vec<Row>, Error> {
        self.runtime.block_on(self.inner.query(stmt, params))
    }

    /// Runs the statements in order in one round trip and returns each one's rows. The
    /// server runs none after one that fails inside a transaction (it is then aborted); the
    /// first error is returned.
    pub(super) fn query_all(
        &mut self,
        queries: &[(&Statement, Vec<&(dyn ToSql + Sync)>)],
    ) -> std::result::Result<Vec<Vec<Row>>, Error> {
        let inner = &self.inner;
        // Each query is sent when first polled, and `join_all` polls them in order before
        // waiting on any.
        let answers = self
            .runtime
            .block_on(futures_util::future::join_all(queries.iter().map(|(stmt, params)| inner.query(*stmt, params))));
        answers.into_iter().collect()
    }

    /// Runs the statements in order and then `last` (simple protocol), in one round trip.
    /// Returns the first error; the server runs no statement after one that fails inside a
    /// transaction, and a COMMIT as `last` then rolls it back.
    pub(super) fn execute_all_then(
        &mut self,
        statements: &[(&Statement, Vec<&(dyn ToSql + Sync)>)],
        last: &str,
    ) -> std::result::Result<(), Error> {
        let inner = &self.inner;
        // Sent in the order polled, as in `query_all`: the statements, then `last`.
        let (executed, ended) = self.runtime.block_on(futures_util::future::join(
            futures_util::future::join_all(statements.iter().map(|(stmt, params)| inner.execute(*stmt, params))),
            inner.batch_execute(last),
        ));
        for result in executed {
            result?;
        }
        ended
    }

    pub(super) fn is_closed(&self) -> bool {
        self.inner.is_closed()
    }
}

pub(super) enum ConnectError {
    Runtime(std::io::Error),
    Postgres(Error),
}
