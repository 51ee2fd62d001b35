//! The API tests on SQLite: a temporary database file per test.

pub(crate) const BACKEND: support::Backend = support::Backend::Sqlite;

api_tests!();
