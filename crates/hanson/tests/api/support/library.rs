//! Every use of the `hanson` library's own items by the API tests, but for the white-box
//! PostgreSQL tests (`postgres/batches.rs`, `postgres/nodes.rs`, `postgres/plans.rs`), which
//! test the store itself: the server's configuration types, the in-process server, a direct
//! handle on the database ([`Db`]) and the few domain calculations the tests repeat. When the
//! library's public surface changes, this file is where the tests follow it.

use std::future::Future;

use serde_json::Value;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use hanson::store::sql::Param;
use hanson::store::Store;

// The server's configuration, as a program embedding it sets it.
pub(crate) use hanson::api::ratelimit::Rule;
pub(crate) use hanson::api::{Limits, Settings, MAX_HEAD_BYTES};
pub(crate) use hanson::server::ConnectionLimits;
pub(crate) use hanson::events::webhook_sender::SenderSettings;

// Session tokens, forged and read by the token attack tests.
pub(crate) use hanson::auth::jwt::Claims;

// The public URL that Sign-In with Ethereum messages name.
pub(crate) use hanson::domain::siwe::PublicUrl;

// Times are microseconds since the epoch.
pub(crate) use hanson::domain::time::{format_micros, now_micros, parse_timestamp, Micros};
/// The width of an hourly price candle.
pub(crate) use hanson::domain::candle::HOUR as CANDLE_HOUR;

/// Serves the API on `listener` from the database at `database_url` until `shutdown`, in this
/// process (a task of the caller's runtime).
pub(crate) fn serve(
    listener: TcpListener,
    database_url: &str,
    settings: impl Into<Settings>,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> JoinHandle<Result<(), String>> {
    let store = Store::open(database_url).expect("open store");
    let settings = settings.into();
    tokio::spawn(async move { hanson::server::run_with(listener, store, settings, limits, shutdown).await.map_err(|e| e.to_string()) })
}

/// [`serve`] with default settings from a pool of at most `max_connections` connections.
pub(crate) fn serve_with_pool(listener: TcpListener, database_url: &str, max_connections: usize) {
    let options = hanson::store::StoreOptions { max_connections, ..hanson::store::StoreOptions::default() };
    let store = Store::open_with(database_url, &options).expect("open store");
    tokio::spawn(hanson::server::run(listener, store, Settings::default(), std::future::pending()));
}

/// Runs `sql` through a PostgreSQL admin connection at `admin_url`.
pub(crate) fn postgres_admin(admin_url: &str, sql: impl Into<String>) -> Result<(), String> {
    hanson::store::postgres::admin::execute(admin_url, sql.into())
}

/// `admin_url` naming database `name` instead.
pub(crate) fn with_database(admin_url: &str, name: &str) -> String {
    hanson::store::postgres::admin::with_database(admin_url, name)
}

/// Runs `sql` on the test's database from a connection of its own, as another process would.
pub(crate) fn change_elsewhere(database_url: &str, sql: &str) {
    match database_url.strip_prefix("sqlite://") {
        Some(path) => {
            let conn = rusqlite::Connection::open(path).expect("open the database");
            conn.busy_timeout(std::time::Duration::from_secs(10)).expect("busy timeout");
            conn.execute_batch(sql).expect("change the database");
        }
        None => postgres_admin(database_url, sql).expect("change the database"),
    }
}

/// A session token for `claims`, signed with `secret`.
pub(crate) fn forge(claims: &Claims, secret: &str) -> String {
    hanson::auth::jwt::JwtKey::new(secret.as_bytes()).encode(claims)
}

/// The claims of a session token, read without checking it.
pub(crate) fn claims_of(token: &str) -> Claims {
    use base64::Engine;
    let payload = token.split('.').nth(1).unwrap();
    serde_json::from_slice(&base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap()
}

/// A market detail's fee percentage `field` (`creator_fee_percentage`, ...) in the library's units.
fn fee_units(detail: &Value, field: &str) -> u32 {
    hanson::domain::fees::parse_percentage(&detail[field].to_string()).unwrap_or_else(|| panic!("{field}: {}", detail[field]))
}

/// The fees of a `gross` bet on the market of `detail`: (the creator's share, the total).
pub(crate) fn fees(detail: &Value, gross: u128) -> (u128, u128) {
    let split = hanson::domain::fees::split_fee(gross, fee_units(detail, "creator_fee_percentage"), fee_units(detail, "platform_fee_percentage"));
    (split.creator, split.total)
}

/// The exact LMSR prices (units of 10^-36) of a market with liquidity parameter `b` and
/// outstanding shares `q`, from the market maker the server runs (itself checked against a
/// high-precision reference in `crates/lmsr/tests/differential.rs`).
pub(crate) fn lmsr_prices(b: u128, q: &[u128]) -> Vec<u128> {
    lmsr::prices(b, q).expect("prices").iter().map(|p| p.raw()).collect()
}

/// The shares a bet of net `amount` buys of `outcome` on that market.
pub(crate) fn lmsr_buy(b: u128, q: &[u128], outcome: usize, amount: u128) -> u128 {
    lmsr::buy(b, q, outcome, amount).map_or(0, |buy| buy.shares)
}

/// floor(a * b / d), exactly.
pub(crate) fn mul_div_down(a: u128, b: u128, d: u128) -> u128 {
    hanson::domain::num::mul_div(a, b, d, hanson::domain::num::Rounding::Down).expect("mul_div")
}

/// A stream hub on the database, and its `closing` receivers taken before and after
/// `close()` (the hub is returned to keep them alive).
pub(crate) fn closed_hub(database_url: &str) -> (impl Sized, tokio::sync::watch::Receiver<bool>, tokio::sync::watch::Receiver<bool>) {
    let hub = hanson::events::Hub::new(Store::open(database_url).unwrap(), Default::default());
    let before = hub.closing();
    hub.close();
    let after = hub.closing();
    (hub, before, after)
}

/// An argument of a [`Db`] statement (`$1`, `$2`, ...).
#[derive(Debug, Clone)]
pub(crate) enum Arg {
    Text(String),
    Int(i64),
}

impl From<&str> for Arg {
    fn from(text: &str) -> Arg {
        Arg::Text(text.to_string())
    }
}

impl From<&String> for Arg {
    fn from(text: &String) -> Arg {
        Arg::Text(text.clone())
    }
}

impl From<i64> for Arg {
    fn from(int: i64) -> Arg {
        Arg::Int(int)
    }
}

fn params(args: &[Arg]) -> Vec<Param<'_>> {
    args.iter()
        .map(|a| match a {
            Arg::Text(t) => Param::Text(t),
            Arg::Int(i) => Param::Int(*i),
        })
        .collect()
}

/// The test's database opened directly (a store of its own, as another node's), for what the
/// API cannot do: break rows on purpose, age them, prune the event log, write price points
/// at chosen instants.
#[derive(Clone)]
pub(crate) struct Db {
    store: Store,
}

impl Db {
    pub(crate) fn open(database_url: &str) -> Db {
        Db { store: Store::open(database_url).expect("open the store") }
    }

    /// Runs one statement in a write transaction of its own: the rows it changed.
    pub(crate) async fn exec(&self, sql: &str, args: &[Arg]) -> Result<u64, String> {
        let (sql, args) = (sql.to_string(), args.to_vec());
        self.store.write(move |c| c.exec(&sql, &params(&args))).await.map_err(|e| e.to_string())
    }

    /// Runs statements in one write transaction: all of them, or (on the first error) none.
    pub(crate) async fn exec_all(&self, statements: Vec<(String, Vec<Arg>)>) -> Result<(), String> {
        self.store
            .write(move |c| statements.iter().try_for_each(|(sql, args)| c.exec(sql, &params(args)).map(drop)))
            .await
            .map_err(|e| e.to_string())
    }

    /// The first column of the one row `sql` reads, as an integer.
    pub(crate) async fn int(&self, sql: &str, args: &[Arg]) -> i64 {
        let (sql, args) = (sql.to_string(), args.to_vec());
        self.store.read(move |c| c.query_one(&sql, &params(&args))?.int(0)).await.unwrap_or_else(|e| panic!("{e}"))
    }

    /// The first column of the one row `sql` reads, as text.
    pub(crate) async fn text(&self, sql: &str, args: &[Arg]) -> String {
        let (sql, args) = (sql.to_string(), args.to_vec());
        self.store.read(move |c| c.query_one(&sql, &params(&args))?.text(0)).await.unwrap_or_else(|e| panic!("{e}"))
    }

    /// The event log's current seq of each market (unknown ones included, as 0), as the trade
    /// batches read them ahead.
    pub(crate) async fn current_seqs(&self, market_ids: &[String]) -> Vec<(String, i64)> {
        let ids = market_ids.to_vec();
        self.store
            .read(move |c| hanson::store::event_log::current_seqs(c, &ids.iter().map(String::as_str).collect::<Vec<_>>()))
            .await
            .unwrap()
    }

    /// Prunes the event log down to the last `keep_last` events of each market, whatever their
    /// age (as the pruner would): how many events went.
    pub(crate) async fn prune_events(&self, keep_last: i64) -> u64 {
        let retention = hanson::store::event_log::Retention { keep_for: 0, keep_last };
        let long = self.store.read(move |c| hanson::store::event_log::long_logs(c, &retention)).await.expect("long logs");
        let now = now_micros();
        self.store.write(move |c| hanson::store::event_log::prune(c, now, &retention, &long)).await.expect("prune")
    }

    /// The question of a market as the store reads it, if there is the market.
    pub(crate) async fn market_question(&self, market_id: &str) -> Option<String> {
        let id = market_id.to_string();
        self.store
            .read(move |c| c.query_opt("SELECT question FROM markets WHERE id = $1", &[Param::Text(&id)])?.map(|r| r.text(0)).transpose())
            .await
            .unwrap()
    }

    /// Records one instant's price points of a market, as a trade does: each point is
    /// (outcome id, price, volume, the outcome's running volume before it).
    pub(crate) async fn record_prices(&self, market_id: &str, at: Micros, points: Vec<(String, u128, u128, u128)>) {
        let market_id = market_id.to_string();
        self.store
            .write(move |c| {
                let points: Vec<hanson::store::history::points::NewPricePoint<'_>> = points
                    .iter()
                    .map(|(o, price, volume, before)| hanson::store::history::points::NewPricePoint { outcome_id: o, price: *price, volume: *volume, total_before: *before })
                    .collect();
                hanson::store::history::points::record_prices(c, &market_id, &points, at)
            })
            .await
            .unwrap();
    }

    /// Rebuilds every price candle from the raw points, as after a bulk load.
    pub(crate) async fn rebuild_price_candles(&self) {
        self.store.write(|c| hanson::store::history::points::rebuild_price_candles(c)).await.unwrap();
    }
}
