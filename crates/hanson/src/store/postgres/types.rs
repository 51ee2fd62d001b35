//! Values on the wire: parameters as their natural PostgreSQL types, columns back as the
//! store's values, and rows of placeholders sent as one array per column.

use std::error::Error as StdError;

use ::postgres::types::{to_sql_checked, IsNull, ToSql, Type};
use bytes::BytesMut;

use super::numeric::PgMoney;
use super::pg_error;
use crate::error::{Error, Result};
use crate::store::sql::{value_rows, Param, Value};

/// A multi-row INSERT (or upsert), or a `WITH v(columns) AS (VALUES ...)` list, whose rows
/// are all placeholders, sent as `INSERT INTO t (columns) SELECT ... FROM unnest($1::type[],
/// ...)` (or `WITH v(columns) AS (SELECT ... FROM unnest(...)) ...`): one statement text
/// whatever the number of rows, so it is prepared once per connection, and its values go
/// as binary arrays. The same rows as VALUES cost PostgreSQL a parse, analysis and plan of
/// every placeholder. Plain INSERTs into the same table and columns are merged into one.
pub(super) struct ArrayRows {
    /// `INSERT INTO t (columns)` or `WITH v(columns) AS (`.
    pub(super) head: String,
    /// What follows the rows (an ON CONFLICT clause, the rest of a WITH); such statements
    /// are not merged.
    pub(super) tail: String,
    pub(super) columns: Vec<ArrayColumn>,
}

pub(super) struct ArrayColumn {
    /// The array's SQL type, from the first value that is not NULL.
    pub(super) ty: Option<&'static str>,
    pub(super) values: Vec<Value>,
}

/// A parameter kept past the call that bound it.
pub(super) fn owned(p: &Param<'_>) -> Value {
    match *p {
        Param::Null => Value::Null,
        Param::Int(v) => Value::Int(v),
        Param::Text(s) => Value::Text(s.to_string()),
        Param::Money(m) => Value::Money(m),
        Param::Blob(b) => Value::Blob(b.to_vec()),
    }
}

pub(super) fn as_param(v: &Value) -> Param<'_> {
    match v {
        Value::Null => Param::Null,
        Value::Int(v) => Param::Int(*v),
        Value::Text(s) => Param::Text(s),
        Value::Money(m) => Param::Money(*m),
        Value::Blob(b) => Param::Blob(b),
    }
}

/// The type a parameter is prepared with; NULL is left for the server to infer.
pub(super) fn natural_type(p: &Param<'_>) -> Type {
    match p {
        Param::Null => Type::UNKNOWN,
        Param::Int(_) => Type::INT8,
        Param::Text(_) => Type::TEXT,
        Param::Money(_) => Type::NUMERIC,
        Param::Blob(_) => Type::BYTEA,
    }
}

pub(super) fn is_text(ty: &Type) -> bool {
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
pub(super) fn column(row: &::postgres::Row, i: usize) -> Result<Value> {
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

/// `(head, column count, tail)` of `<lead>name(columns)<between>VALUES <rows><tail>` whose
/// rows are the placeholders of `params` in order (as `value_rows` writes them): the head
/// runs up to `VALUES`, so the rows can be put back in another form between head and tail.
pub(super) fn placeholder_rows<'s>(sql: &'s str, lead: &str, between: &str, params: usize) -> Option<(&'s str, usize, &'s str)> {
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
pub(super) fn array_insert(sql: &str, params: usize) -> Option<(&str, usize, &str)> {
    placeholder_rows(sql, "INSERT INTO ", " ", params)
        .filter(|(_, _, tail)| !tail.contains('$') && !tail.contains("RETURNING") && !tail.contains(';'))
}

/// [`placeholder_rows`] of `WITH v(columns) AS (VALUES <rows>) <tail>` whose tail takes no
/// parameter: the head is `WITH v(columns) AS (`, the tail starts at the `)` closing the rows.
pub(super) fn array_values(sql: &str, params: usize) -> Option<(&str, usize, &str)> {
    placeholder_rows(sql, "WITH ", " AS (", params).filter(|(_, _, tail)| tail.starts_with(')') && !tail.contains('$'))
}

impl ArrayRows {
    /// The rows of `params`, `columns` values each; None if a column mixes types.
    pub(super) fn new(head: &str, tail: &str, columns: usize, params: &[Param<'_>]) -> Option<ArrayRows> {
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
    pub(super) fn merge(&mut self, other: ArrayRows) -> std::result::Result<(), ArrayRows> {
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
    pub(super) fn sql(&self) -> String {
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
    pub(super) fn arrays(&self) -> Vec<Vec<Param<'_>>> {
        self.columns.iter().filter(|c| c.ty.is_some()).map(|c| c.values.iter().map(as_param).collect()).collect()
    }
}

pub(super) fn args<'a>(params: &'a [Param<'a>]) -> Vec<&'a (dyn ToSql + Sync)> {
    params.iter().map(|p| p as &(dyn ToSql + Sync)).collect()
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
            format!(
                "{:?}",
                vec![
                    vec![Param::Text("it's"), Param::Text("b")],
                    vec![Param::Money(u128::MAX), Param::Money(1)],
                    vec![Param::Blob(&[0, 0xff]), Param::Null],
                ]
            )
        );
        let other_table = ArrayRows::new("INSERT INTO u (a, b, c, d)", "", 4, &second).unwrap();
        assert!(rows.merge(other_table).is_err());
        let mixed = [Param::Int(1), Param::Text("x")];
        assert!(ArrayRows::new("INSERT INTO t (a)", "", 1, &mixed).is_none());
    }
}
