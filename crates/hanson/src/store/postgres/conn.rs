//! A pooled connection inside one transaction, as the store's `Conn`: statements prepared
//! once per connection, and a trade batch's writes held back to go with its COMMIT.

use ::postgres::types::{ToSql, Type};
use ::postgres::Statement;

use super::types::{args, array_insert, array_values, as_param, column, natural_type, owned, ArrayRows};
use super::{pg_error, BEGIN_READ_PLANNED_ONCE, PLAN_ONCE, STATEMENT_CACHE};
use super::{Failure, PooledClient};
use crate::error::{Error, Result};
use crate::store::sql::{Conn, Dialect, Param, Row, Value};

pub(crate) struct PgConn<'c> {
    pub(super) pc: &'c mut PooledClient,
    pub(super) failure: Option<Failure>,
    /// Statements run that may have changed rows (anything but a plain SELECT).
    pub(super) writes: u64,
    /// A trade batch's writes from `exec_later`, sent with its COMMIT.
    pub(super) later: Vec<Later>,
    /// A trade batch's connection (`for_batch`).
    pub(super) holds_writes: bool,
}

/// A statement `exec_later` kept.
pub(super) enum Later {
    /// With its parameters, as given.
    Statement { sql: String, params: Vec<Value> },
    /// Rows of placeholders, as one array parameter per column.
    Rows(ArrayRows),
}

impl<'c> PgConn<'c> {
    pub(super) fn new(pc: &'c mut PooledClient) -> Self {
        PgConn { pc, failure: None, writes: 0, later: Vec::new(), holds_writes: false }
    }

    /// A trade batch's connection: `exec_later` holds writes back for its COMMIT.
    pub(super) fn for_batch(pc: &'c mut PooledClient) -> Self {
        PgConn { holds_writes: true, ..PgConn::new(pc) }
    }

    /// Grows with every statement that may have changed rows.
    pub(super) fn changes(&self) -> u64 {
        self.writes
    }

    /// Sends the writes `exec_later` kept, bound to prepared statements, and then `last` (a
    /// trade batch's COMMIT), in one round trip. Returns the first statement's error: the
    /// server runs none after it, and `last` then ends the transaction without committing.
    pub(super) fn send_later_then(&mut self, last: &str) -> std::result::Result<(), ::postgres::Error> {
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
    pub(super) fn prepared(&mut self, sql: &str, types: Vec<Type>) -> std::result::Result<Statement, ::postgres::Error> {
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
    pub(super) fn fail(&mut self, e: ::postgres::Error) -> Error {
        if self.failure.is_none() {
            self.failure = Some(Failure { code: e.code().cloned() });
        }
        pg_error(&e)
    }

    pub(super) fn statement(&mut self, sql: &str, params: &[Param<'_>]) -> Result<Statement> {
        self.prepared(sql, params.iter().map(natural_type).collect()).map_err(|e| self.fail(e))
    }
}

pub(super) fn converted(row: &::postgres::Row) -> Result<Row> {
    (0..row.len()).map(|i| column(row, i)).collect::<Result<Vec<_>>>().map(Row)
}

impl Conn for PgConn<'_> {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
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
        if !self.holds_writes {
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
