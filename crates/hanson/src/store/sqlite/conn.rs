//! A SQLite connection as the store's `Conn`: `$n` placeholders translated, statements
//! cached, money as decimal text.

use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, ToSql};

use crate::error::Result;
use crate::store::sql::{Conn, Dialect, Param, Row, Value};

pub(crate) struct SqliteConn<'c> {
    pub(super) conn: &'c Connection,
}

/// Runs a fixed statement through the prepared-statement cache (execute_batch re-parses).
pub(super) fn run_cached(conn: &Connection, sql: &str) -> Result<()> {
    conn.prepare_cached(sql)?.execute([])?;
    Ok(())
}

/// Runs `f` on `sql` with `$1` written as `?1` (store SQL is in PostgreSQL's placeholder
/// style), in a buffer reused across statements of this thread.
pub(super) fn translated<T>(sql: &str, f: impl FnOnce(&str) -> T) -> T {
    thread_local! {
        static BUFFER: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
    }
    if !sql.contains('$') {
        return f(sql);
    }
    BUFFER.with(|buffer| match buffer.try_borrow_mut() {
        Ok(mut buffer) => {
            buffer.clear();
            for (i, part) in sql.split('$').enumerate() {
                if i > 0 {
                    buffer.push('?');
                }
                buffer.push_str(part);
            }
            f(&buffer)
        }
        // Only if `f` itself translated another statement.
        Err(_) => f(&sql.replace('$', "?")),
    })
}

impl ToSql for Param<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        use rusqlite::types::Value as V;
        Ok(match self {
            Param::Null => ToSqlOutput::Owned(V::Null),
            Param::Int(v) => ToSqlOutput::Owned(V::Integer(*v)),
            Param::Text(s) => ToSqlOutput::Borrowed(ValueRef::Text(s.as_bytes())),
            Param::Money(m) => ToSqlOutput::Owned(V::Text(m.to_string())),
            Param::Blob(b) => ToSqlOutput::Borrowed(ValueRef::Blob(b)),
        })
    }
}

impl SqliteConn<'_> {
    /// Rows changed so far on this connection.
    pub(super) fn changes(&self) -> u64 {
        self.conn.total_changes()
    }
}

impl Conn for SqliteConn<'_> {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn exec(&mut self, sql: &str, params: &[Param<'_>]) -> Result<u64> {
        let mut stmt = translated(sql, |sql| self.conn.prepare_cached(sql))?;
        let changed = stmt.execute(rusqlite::params_from_iter(params.iter()))?;
        Ok(changed as u64)
    }

    fn query(&mut self, sql: &str, params: &[Param<'_>]) -> Result<Vec<Row>> {
        let mut stmt = translated(sql, |sql| self.conn.prepare_cached(sql))?;
        let columns = stmt.column_count();
        let mut rows = stmt.query(rusqlite::params_from_iter(params.iter()))?;
        let mut out = Vec::new();
        while let Some(row) = rows.next()? {
            let mut values = Vec::with_capacity(columns);
            for i in 0..columns {
                values.push(match row.get_ref(i)? {
                    ValueRef::Null => Value::Null,
                    ValueRef::Integer(v) => Value::Int(v),
                    ValueRef::Real(v) => Value::Text(v.to_string()),
                    ValueRef::Text(t) => Value::Text(match std::str::from_utf8(t) {
                        Ok(text) => text.to_owned(),
                        Err(_) => String::from_utf8_lossy(t).into_owned(),
                    }),
                    ValueRef::Blob(b) => Value::Blob(b.to_vec()),
                });
            }
            out.push(Row(values));
        }
        Ok(out)
    }
}
