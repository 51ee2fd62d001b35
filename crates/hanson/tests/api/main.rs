//! Black-box tests of the HTTP API over real HTTP, on SQLite.
//!
//! `tests/api_postgres/main.rs` runs these same modules on PostgreSQL: a new test module
//! goes in both module lists.

mod helpers;

const BACKEND: helpers::Backend = helpers::Backend::Sqlite;

mod auth;
mod backup;
mod cli;
mod concurrency;
mod connections;
mod crash;
mod errors;
mod history;
mod hostile;
mod markets;
mod metrics;
mod money;
mod openapi;
mod previews;
mod proxies;
mod schema;
mod streams;
mod trading;
mod users;
mod webhooks;
