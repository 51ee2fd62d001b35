//! The black-box API suite of `tests/api/` again, on PostgreSQL: a fresh database per test,
//! created through `HANSON_TEST_POSTGRES_URL` (default
//! `postgres://postgres@127.0.0.1:5432/postgres`) and dropped after it.
//!
//! Keep this module list equal to the one in `tests/api/main.rs`: a new test module goes in
//! both files (here as `#[path = "../api/<file>.rs"] mod <name>;`).

#[path = "../api/helpers.rs"]
mod helpers;

const BACKEND: helpers::Backend = helpers::Backend::Postgres;

#[path = "../api/auth.rs"]
mod auth;
#[path = "../api/backup.rs"]
mod backup;
#[path = "../api/cli.rs"]
mod cli;
#[path = "../api/concurrency.rs"]
mod concurrency;
#[path = "../api/connections.rs"]
mod connections;
#[path = "../api/crash.rs"]
mod crash;
#[path = "../api/errors.rs"]
mod errors;
#[path = "../api/history.rs"]
mod history;
#[path = "../api/hostile.rs"]
mod hostile;
#[path = "../api/markets.rs"]
mod markets;
#[path = "../api/metrics.rs"]
mod metrics;
#[path = "../api/money.rs"]
mod money;
#[path = "../api/openapi.rs"]
mod openapi;
#[path = "../api/previews.rs"]
mod previews;
#[path = "../api/proxies.rs"]
mod proxies;
#[path = "../api/schema.rs"]
mod schema;
#[path = "../api/streams.rs"]
mod streams;
#[path = "../api/trading.rs"]
mod trading;
#[path = "../api/users.rs"]
mod users;
#[path = "../api/webhooks.rs"]
mod webhooks;

// PostgreSQL only: trade batches, several nodes on one database, NUMERIC on the wire, bad
// URLs, outages, plans that must outlive their statistics.
mod batches;
mod multinode;
mod nodes;
mod outage;
mod plans;
mod streams_multinode;
mod webhooks_multinode;
