//! The API tests on PostgreSQL: a database of its own per test, created through
//! `HANSON_TEST_POSTGRES_URL` (default `postgres://postgres@127.0.0.1:5432/postgres`) and
//! dropped after it. Then the PostgreSQL-only tests: trade batches, several nodes on one
//! database, NUMERIC on the wire, bad URLs, outages, plans that must outlive their statistics.

pub(crate) const BACKEND: support::Backend = support::Backend::Postgres;

api_tests!();

mod batches;
mod multinode;
mod nodes;
mod outage;
mod plans;
mod streams_multinode;
mod webhooks_multinode;
