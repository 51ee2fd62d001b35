//! The small SQL surface every backend provides. Store operations are written once against
//! [`Conn`]; placeholders are `$1, $2, ...` in every dialect.

use crate::error::{Error, Result};

#[derive(Debug, Clone, Copy)]
pub enum Param<'a> {
    Null,
    Int(i64),
    Text(&'a str),
    /// An exact money or share amount (TEXT in SQLite, NUMERIC(78,0) in PostgreSQL).
    Money(u128),
    Blob(&'a [u8]),
}

impl<'a> From<&'a str> for Param<'a> {
    fn from(s: &'a str) -> Self {
        Param::Text(s)
    }
}
impl<'a> From<&'a String> for Param<'a> {
    fn from(s: &'a String) -> Self {
        Param::Text(s)
    }
}
impl From<i64> for Param<'_> {
    fn from(v: i64) -> Self {
        Param::Int(v)
    }
}
impl<'a> From<Option<&'a str>> for Param<'a> {
    fn from(v: Option<&'a str>) -> Self {
        v.map_or(Param::Null, Param::Text)
    }
}
impl<'a> From<&'a Option<String>> for Param<'a> {
    fn from(v: &'a Option<String>) -> Self {
        v.as_deref().map_or(Param::Null, Param::Text)
    }
}
impl From<Option<i64>> for Param<'_> {
    fn from(v: Option<i64>) -> Self {
        v.map_or(Param::Null, Param::Int)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Text(String),
    Money(u128),
    Blob(Vec<u8>),
}

#[derive(Debug, Clone)]
pub struct Row(pub Vec<Value>);

fn column_error(i: usize, want: &str, got: &Value) -> Error {
    Error::internal(format!("column {i}: expected {want}, found {got:?}"))
}

impl Row {
    pub fn text(&self, i: usize) -> Result<String> {
        match &self.0[i] {
            Value::Text(s) => Ok(s.clone()),
            other => Err(column_error(i, "text", other)),
        }
    }

    pub fn opt_text(&self, i: usize) -> Result<Option<String>> {
        match &self.0[i] {
            Value::Null => Ok(None),
            _ => self.text(i).map(Some),
        }
    }

    pub fn int(&self, i: usize) -> Result<i64> {
        match &self.0[i] {
            Value::Int(v) => Ok(*v),
            other => Err(column_error(i, "integer", other)),
        }
    }

    pub fn opt_int(&self, i: usize) -> Result<Option<i64>> {
        match &self.0[i] {
            Value::Null => Ok(None),
            _ => self.int(i).map(Some),
        }
    }

    pub fn money(&self, i: usize) -> Result<u128> {
        match &self.0[i] {
            Value::Money(v) => Ok(*v),
            Value::Text(s) => s.parse().map_err(|_| column_error(i, "amount", &self.0[i])),
            Value::Int(v) if *v >= 0 => Ok(*v as u128),
            other => Err(column_error(i, "amount", other)),
        }
    }

    pub fn opt_money(&self, i: usize) -> Result<Option<u128>> {
        match &self.0[i] {
            Value::Null => Ok(None),
            _ => self.money(i).map(Some),
        }
    }

    pub fn blob(&self, i: usize) -> Result<Vec<u8>> {
        match &self.0[i] {
            Value::Blob(b) => Ok(b.clone()),
            other => Err(column_error(i, "blob", other)),
        }
    }
}

/// `$first, $first+1, ...`: `count` placeholders.
pub(crate) fn placeholders(first: usize, count: usize) -> String {
    let mut out = String::with_capacity(count * 5);
    push_placeholders(&mut out, first, count);
    out
}

/// Statements are built on every call of the hot paths; one buffer, no formatting machinery
/// (`write!`'s own work showed in the PostgreSQL batch thread's profile).
fn push_placeholders(out: &mut String, first: usize, count: usize) {
    let mut number = itoa::Buffer::new();
    for i in first..first + count {
        if i > first {
            out.push_str(", ");
        }
        out.push('$');
        out.push_str(number.format(i));
    }
}

/// An `IN (...)` list of `ids` as `$1, $2, ...` and its parameters. The list is padded to a
/// power of two by repeating its last id, so that a few statement shapes serve every length
/// and stay prepared instead of being parsed again for each new length. `ids` must not be
/// empty: `IN ()` is no SQL.
pub(crate) fn id_list<S: AsRef<str>>(ids: &[S]) -> (String, Vec<Param<'_>>) {
    let padded = ids.len().next_power_of_two();
    let params = ids
        .iter()
        .map(|id| Param::Text(id.as_ref()))
        .chain(ids.last().map(|id| Param::Text(id.as_ref())).into_iter().cycle().take(padded - ids.len()));
    (placeholders(1, padded), params.collect())
}

/// `($1, ..., $columns), ($columns+1, ...), ...`: a multi-row VALUES list.
pub(crate) fn value_rows(rows: usize, columns: usize) -> String {
    let mut out = String::with_capacity(rows * (columns * 5 + 4));
    for r in 0..rows {
        if r > 0 {
            out.push_str(", ");
        }
        out.push('(');
        push_placeholders(&mut out, r * columns + 1, columns);
        out.push(')');
    }
    out
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

impl Dialect {
    /// An ORDER BY key that orders a money column numerically.
    pub(crate) fn money_order(self, column: &str, direction: &str) -> String {
        match self {
            // Canonical decimal strings order numerically by (length, text).
            Dialect::Sqlite => format!("length({column}) {direction}, {column} {direction}"),
            Dialect::Postgres => format!("{column} {direction}"),
        }
    }
}

/// An entity read from one result row, its columns in the order the query selects them.
pub trait FromRow: Sized {
    fn from_row(r: &Row) -> Result<Self>;
}

/// Every row of `sql`, as `T`.
pub fn query_as<T: FromRow>(c: &mut dyn Conn, sql: &str, params: &[Param<'_>]) -> Result<Vec<T>> {
    c.query(sql, params)?.iter().map(T::from_row).collect()
}

/// The first row of `sql`, if any, as `T`.
pub fn query_opt_as<T: FromRow>(c: &mut dyn Conn, sql: &str, params: &[Param<'_>]) -> Result<Option<T>> {
    c.query_opt(sql, params)?.map(|r| T::from_row(&r)).transpose()
}

/// One connection inside one transaction (the backend opened it; the caller commits).
pub trait Conn {
    fn dialect(&self) -> Dialect;
    /// Runs a statement; returns the number of rows changed.
    fn exec(&mut self, sql: &str, params: &[Param<'_>]) -> Result<u64>;
    fn query(&mut self, sql: &str, params: &[Param<'_>]) -> Result<Vec<Row>>;

    /// Runs a write whose row count nothing needs and whose rows nothing in this transaction
    /// reads before it ends. A PostgreSQL trade batch sends all of these in one round trip
    /// before its COMMIT; elsewhere it runs at once.
    fn exec_later(&mut self, sql: &str, params: &[Param<'_>]) -> Result<()> {
        self.exec(sql, params).map(|_| ())
    }

    /// Runs reads in order and returns each one's rows. PostgreSQL sends them all before
    /// reading an answer: one round trip instead of one each.
    fn query_all(&mut self, reads: &[(String, Vec<Param<'_>>)]) -> Result<Vec<Vec<Row>>> {
        reads.iter().map(|(sql, params)| self.query(sql, params)).collect()
    }

    fn query_opt(&mut self, sql: &str, params: &[Param<'_>]) -> Result<Option<Row>> {
        Ok(self.query(sql, params)?.into_iter().next())
    }

    fn query_one(&mut self, sql: &str, params: &[Param<'_>]) -> Result<Row> {
        self.query_opt(sql, params)?.ok_or_else(|| Error::internal(format!("expected one row: {sql}")))
    }

    /// Plans the statements this transaction runs from now on without their values, once
    /// per connection (PostgreSQL's generic plans; SQLite plans each cached statement once
    /// anyway). Only for statements whose plans do not depend on their values.
    fn plan_once(&mut self) -> Result<()> {
        Ok(())
    }

    /// `FOR UPDATE` where the dialect locks rows; SQLite's single writer already serializes.
    fn lock_clause(&self) -> &'static str {
        match self.dialect() {
            Dialect::Sqlite => "",
            Dialect::Postgres => " FOR UPDATE",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(params: &[Param<'_>]) -> Vec<String> {
        params
            .iter()
            .map(|p| match p {
                Param::Text(s) => s.to_string(),
                other => panic!("not text: {other:?}"),
            })
            .collect()
    }

    #[test]
    fn value_rows_number_placeholders_across_rows() {
        assert_eq!(value_rows(1, 1), "($1)");
        assert_eq!(value_rows(2, 3), "($1, $2, $3), ($4, $5, $6)");
        assert_eq!(placeholders(9, 3), "$9, $10, $11");
        assert_eq!(placeholders(98, 3), "$98, $99, $100");
        assert_eq!(value_rows(1, 1_000_000).rsplit(' ').next(), Some("$1000000)"));
    }

    #[test]
    fn id_lists_pad_to_a_power_of_two_with_their_last_id() {
        let (sql, params) = id_list(&["a", "b", "c"]);
        assert_eq!(sql, "$1, $2, $3, $4");
        assert_eq!(texts(&params), ["a", "b", "c", "c"]);
        let (sql, params) = id_list(&["a", "b", "c", "d"]);
        assert_eq!(sql, "$1, $2, $3, $4");
        assert_eq!(texts(&params), ["a", "b", "c", "d"]);
        let (sql, params) = id_list(&["a"]);
        assert_eq!(sql, "$1");
        assert_eq!(texts(&params), ["a"]);
        let five: Vec<String> = (0..5).map(|i| i.to_string()).collect();
        let (sql, params) = id_list(&five);
        assert_eq!(sql, "$1, $2, $3, $4, $5, $6, $7, $8");
        assert_eq!(texts(&params), ["0", "1", "2", "3", "4", "4", "4", "4"]);
    }
}
