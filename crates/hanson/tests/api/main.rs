//! Black-box tests of the HTTP API over real HTTP, each on SQLite and on PostgreSQL.
//!
//! One test binary. [`api_tests!`] below is the one list of the API test modules; `sqlite.rs`
//! and `postgres.rs` each set their `BACKEND` and expand it, so every test runs once per
//! backend and is named after it: `sqlite::trading::bets::...`, `postgres::trading::bets::...`
//! (`cargo test -p hanson --test api sqlite::` runs the SQLite half alone). A new test module
//! goes in that list and nowhere else. PostgreSQL-only modules are declared in `postgres.rs`
//! and live in `postgres/`.
//!
//! Each test gets a fresh database: a temporary SQLite file, or on PostgreSQL a database of its
//! own created through `HANSON_TEST_POSTGRES_URL` (default
//! `postgres://postgres@127.0.0.1:5432/postgres`) and dropped after it.
//!
//! - `support/`: what the tests share, per backend (its `app.rs` spawns servers on the
//!   backend's databases): the app and fixture, wallets, the trader arena, the SSE and
//!   WebSocket clients, the webhook receiver, `hanson serve` processes, and `library.rs`, every
//!   use of the library's internals outside the white-box PostgreSQL tests.
//! - `contract/`: the documents the server publishes, checked against what it sends: every HTTP
//!   answer against the OpenAPI document, every stream event and webhook body against the
//!   AsyncAPI document. Backend-independent, so declared once here: each document is fetched
//!   from the first server a test starts and compiled once per process.

// Each backend's module declares the same test files: they run once per backend.
#![allow(clippy::duplicate_mod)]

mod contract;

/// The API test modules, declared once and expanded inside each backend's module (`sqlite.rs`,
/// `postgres.rs`), whose `BACKEND` constant they and `support` read as `super::BACKEND`.
///
/// Paths are relative to this directory: a `#[path]` is needed because a plain `mod x;` in
/// `sqlite.rs` would look for `sqlite/x.rs`.
macro_rules! api_tests {
    () => {
        #[path = "support/mod.rs"]
        mod support;

        #[path = "auth.rs"]
        mod auth;
        #[path = "backup.rs"]
        mod backup;
        #[path = "cli.rs"]
        mod cli;
        #[path = "command_line.rs"]
        mod command_line;
        #[path = "concurrency.rs"]
        mod concurrency;
        #[path = "connections.rs"]
        mod connections;
        #[path = "crash.rs"]
        mod crash;
        #[path = "errors.rs"]
        mod errors;
        #[path = "fixtures.rs"]
        mod fixtures;
        #[path = "history.rs"]
        mod history;
        #[path = "hostile.rs"]
        mod hostile;
        #[path = "market_data/mod.rs"]
        mod market_data;
        #[path = "markets.rs"]
        mod markets;
        #[path = "metrics.rs"]
        mod metrics;
        #[path = "money.rs"]
        mod money;
        #[path = "openapi.rs"]
        mod openapi;
        #[path = "operations.rs"]
        mod operations;
        #[path = "previews.rs"]
        mod previews;
        #[path = "proxies.rs"]
        mod proxies;
        #[path = "schema.rs"]
        mod schema;
        #[path = "share.rs"]
        mod share;
        #[path = "siwe.rs"]
        mod siwe;
        #[path = "streams/mod.rs"]
        mod streams;
        #[path = "trading/mod.rs"]
        mod trading;
        #[path = "webhooks.rs"]
        mod webhooks;
    };
}

mod postgres;
mod sqlite;
