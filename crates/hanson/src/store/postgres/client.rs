//! A blocking PostgreSQL client that can pipeline. It is what the `postgres` crate's client
//! is, tokio-postgres on a single-threaded runtime of the connection's own, plus
//! [`Client::query_all`]: several statements sent before any answer is read, one round trip
//! for all of them. A trade batch reads its markets, sessions and positions that way; one
//! round trip each made the reads a quarter of a batch on the hot market. A read's BEGIN
//! rides with its first statement and its COMMIT is not waited for: a read of one statement
//! is one round trip, not three.

use std::future::Future;

use ::postgres::types::ToSql;
use ::postgres::{Error, NoTls, Row, Statement};
use tokio::runtime::Runtime;

type Result<T, E = Error> = std::result::Result<T, E>;

pub(super) struct Client {
    runtime: Runtime,
    inner: tokio_postgres::Client,
    /// A simple statement to send in the same round trip as the next request.
    ahead: Option<&'static str>,
}

impl Client {
    pub(super) fn connect(config: &tokio_postgres::Config) -> Result<Client, ConnectError> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(ConnectError::Runtime)?;
        let (inner, connection) = runtime.block_on(config.connect(NoTls)).map_err(ConnectError::Postgres)?;
        // Runs whenever this client waits for an answer (`block_on`), which is the only time
        // the connection has anything to do.
        runtime.spawn(connection);
        Ok(Client { runtime, inner, ahead: None })
    }

    /// Sends `sql` (simple protocol) in the same round trip as the next request, whose call
    /// returns its error first. Only for a BEGIN whose next request only reads (a read's, a
    /// trade batch's): should it fail, that runs outside a transaction, and the caller then
    /// ends with the error before writing anything.
    pub(super) fn begin_with_next(&mut self, sql: &'static str) {
        self.ahead = Some(sql);
    }

    /// Replaces a read's BEGIN still waiting for the next request by `with`; false if none
    /// waits (it was sent).
    pub(super) fn amend_waiting_begin(&mut self, with: &'static str) -> bool {
        match &mut self.ahead {
            Some(waiting) => {
                *waiting = with;
                true
            }
            None => false,
        }
    }

    /// Sends `sql` (simple protocol) and returns before its answer, which the next request
    /// reads past. Only for a read-only transaction's COMMIT, which cannot fail (an aborted
    /// one rolls back): the server ends the transaction now, and the round trip is saved.
    /// Nothing is sent if the transaction's BEGIN is still waiting for a request.
    pub(super) fn end_read_unanswered(&mut self, sql: &str) {
        if self.ahead.take().is_some() {
            return;
        }
        let inner = &self.inner;
        self.runtime.block_on(async {
            let mut answer = std::pin::pin!(inner.batch_execute(sql));
            // The first poll queues the request and wakes the connection task; the yield lets
            // that task write it to the socket before this returns.
            std::future::poll_fn(|cx| {
                let _ = answer.as_mut().poll(cx);
                std::task::Poll::Ready(())
            })
            .await;
            tokio::task::yield_now().await;
        });
    }

    pub(super) fn batch_execute(&mut self, sql: &str) -> Result<(), Error> {
        run(&self.runtime, &self.inner, self.ahead.take(), self.inner.batch_execute(sql))
    }

    pub(super) fn prepare_typed(&mut self, sql: &str, types: &[::postgres::types::Type]) -> Result<Statement, Error> {
        run(&self.runtime, &self.inner, self.ahead.take(), self.inner.prepare_typed(sql, types))
    }

    pub(super) fn execute(&mut self, stmt: &Statement, params: &[&(dyn ToSql + Sync)]) -> Result<u64, Error> {
        run(&self.runtime, &self.inner, self.ahead.take(), self.inner.execute(stmt, params))
    }

    pub(super) fn query(&mut self, stmt: &Statement, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>, Error> {
        run(&self.runtime, &self.inner, self.ahead.take(), self.inner.query(stmt, params))
    }

    /// Runs the statements in order in one round trip and returns each one's rows. The
    /// server runs none after one that fails inside a transaction (it is then aborted); the
    /// first error is returned.
    pub(super) fn query_all(&mut self, queries: &[(&Statement, Vec<&(dyn ToSql + Sync)>)]) -> Result<Vec<Vec<Row>>, Error> {
        // Each query is sent when first polled, and `join_all` polls them in order before
        // waiting on any.
        let inner = &self.inner;
        let all = futures_util::future::join_all(queries.iter().map(|(stmt, params)| inner.query(*stmt, params)));
        let answers = run(&self.runtime, inner, self.ahead.take(), async { Ok(all.await) })?;
        answers.into_iter().collect()
    }

    /// Runs the statements in order and then `last` (simple protocol), in one round trip.
    /// Returns the first error; the server runs no statement after one that fails inside a
    /// transaction, and a COMMIT as `last` then rolls it back.
    pub(super) fn execute_all_then(&mut self, statements: &[(&Statement, Vec<&(dyn ToSql + Sync)>)], last: &str) -> Result<(), Error> {
        // Sent in the order polled, as in `query_all`: the statements, then `last`.
        let inner = &self.inner;
        let all = futures_util::future::join(
            futures_util::future::join_all(statements.iter().map(|(stmt, params)| inner.execute(*stmt, params))),
            inner.batch_execute(last),
        );
        let (executed, ended) = run(&self.runtime, inner, self.ahead.take(), async { Ok(all.await) })?;
        for result in executed {
            result?;
        }
        ended
    }

    pub(super) fn is_closed(&self) -> bool {
        self.inner.is_closed()
    }
}

/// Runs `request`, with the statement [`Client::begin_with_next`] kept, if any, sent
/// ahead of it in the same round trip; its error comes first.
fn run<T>(
    runtime: &Runtime,
    inner: &tokio_postgres::Client,
    ahead: Option<&str>,
    request: impl Future<Output = Result<T, Error>>,
) -> Result<T, Error> {
    match ahead {
        None => runtime.block_on(request),
        Some(ahead) => {
            // `join` polls its first future first: sent in this order.
            let (begun, answer) = runtime.block_on(futures_util::future::join(inner.batch_execute(ahead), request));
            begun?;
            answer
        }
    }
}

pub(super) enum ConnectError {
    Runtime(std::io::Error),
    Postgres(Error),
}
