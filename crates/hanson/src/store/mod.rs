//! Storage: the SQL and its two backends. [`Store`] is the one entry point: each change of
//! money or market state is one call that runs in one transaction on the chosen backend and
//! returns a typed result, its events published once the commit is durable. The operations
//! themselves are written once, against [`sql::Conn`], in the submodules.

pub mod audit;
pub mod auth;
pub mod events;
pub mod webhooks;
pub mod history;
pub mod hot;
pub mod idempotency;
pub mod ledger;
pub mod markets;
pub mod positions;
pub mod postgres;
mod readers;
pub mod settings;
pub mod shared_read;
pub mod sql;
pub mod sqlite;
pub mod trading;
pub mod tenants;

use std::sync::Arc;

use tracing::Instrument;

use crate::domain::event::{Event, Published};
use crate::domain::time::now_micros;
use crate::error::{Error, Result};
pub use settings::{StoreOptions, Undo};
use sql::{Conn, Dialect, Param, Row};

#[derive(Clone)]
pub enum Backend {
    Sqlite(sqlite::SqliteBackend),
    Postgres(self::postgres::PostgresBackend),
}

/// Receives the events of each write after its commit is durable, in the order the writes
/// answered. It must not block: it runs on the path of the write's response.
pub trait Publisher: Send + Sync {
    fn publish(&self, events: Vec<Published>);
}

/// Drops every event: nothing subscribes.
pub struct Discard;

impl Publisher for Discard {
    fn publish(&self, _events: Vec<Published>) {}
}

#[derive(Clone)]
pub struct Store {
    backend: Backend,
    publisher: Arc<dyn Publisher>,
    /// This process among the nodes sharing a database (see `events::record`).
    node: Arc<str>,
    candle_keys: Arc<history::CandleKeys>,
}

/// A DEBUG span per store call, named by the function that made the call (the closure's
/// type names it, e.g. `hanson::api::trading::place_bet::{{closure}}`): nothing to pass at
/// each call site, and nearly free while DEBUG is off.
fn operation_span<F>(kind: &'static str) -> tracing::Span {
    tracing::debug_span!("store", kind, op = std::any::type_name::<F>())
}

/// The connection a write's operation sees: the backend's, plus the events it emits.
struct Emitting<'c> {
    conn: &'c mut dyn Conn,
    events: Vec<Event>,
}

impl Conn for Emitting<'_> {
    fn dialect(&self) -> Dialect {
        self.conn.dialect()
    }

    fn exec(&mut self, sql: &str, params: &[Param<'_>]) -> Result<u64> {
        self.conn.exec(sql, params)
    }

    fn query(&mut self, sql: &str, params: &[Param<'_>]) -> Result<Vec<Row>> {
        self.conn.query(sql, params)
    }

    fn exec_later(&mut self, sql: &str, params: &[Param<'_>]) -> Result<()> {
        self.conn.exec_later(sql, params)
    }

    fn hot(&mut self) -> Option<&mut hot::HotRows> {
        self.conn.hot()
    }

    fn emit(&mut self, event: Event) -> Result<()> {
        self.events.push(event);
        Ok(())
    }

    fn lock_clause(&self) -> &'static str {
        self.conn.lock_clause()
    }
}

impl Store {
    /// Opens the database named by `url` (`sqlite://PATH` or `postgres://...`), applying
    /// migrations, with default [`StoreOptions`].
    pub fn open(url: &str) -> Result<Store> {
        Self::open_with(url, &StoreOptions::default())
    }

    pub fn open_with(url: &str, options: &StoreOptions) -> Result<Store> {
        if url.starts_with("sqlite:") {
            return Ok(Store::with_backend(Backend::Sqlite(sqlite::SqliteBackend::open(url)?)));
        }
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            let backend = self::postgres::PostgresBackend::open(url, options)?;
            return Ok(Store::with_backend(Backend::Postgres(backend)));
        }
        let scheme = url.split("://").next().unwrap_or(url);
        Err(Error::internal(format!(
            "unsupported database URL scheme {scheme:?}: expected sqlite:// or postgres://"
        )))
    }

    fn with_backend(backend: Backend) -> Store {
        Store { backend, publisher: Arc::new(Discard), node: Arc::from(crate::domain::ids::new_id()), candle_keys: Arc::default() }
    }

    /// Hands every later write's events to `publisher` (the store starts with one that
    /// discards them).
    pub fn set_publisher(&mut self, publisher: Arc<dyn Publisher>) {
        self.publisher = publisher;
    }

    /// This process's name in other nodes' event notifications.
    pub fn node(&self) -> &str {
        &self.node
    }

    /// The hourly candle keys price-history reads keep between requests.
    pub fn candle_keys(&self) -> Arc<history::CandleKeys> {
        self.candle_keys.clone()
    }

    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    /// Runs `op` in one write transaction; returns once it is durable.
    ///
    /// `op` is `Clone` because PostgreSQL may run it again from the start, on a copy, when its
    /// transaction loses a race with another node (see `postgres.rs`); capture owned values
    /// that are `Clone`. SQLite runs it exactly once.
    pub async fn write<T, F>(&self, op: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut dyn Conn) -> Result<T> + Clone + Send + 'static,
    {
        self.write_with(Undo::Savepoint, op).await
    }

    /// [`Store::write`], saying how a failure of `op` is undone.
    pub async fn write_with<T, F>(&self, undo: Undo, op: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut dyn Conn) -> Result<T> + Clone + Send + 'static,
    {
        self.write_as(undo, None, op).await
    }

    /// A bet or a sale: `keys` name the rows it reads first. On PostgreSQL it runs in a
    /// trade batch, which reads those rows for all its trades at once (`trading::preload`)
    /// and runs a trade that fails after writing again alone (`postgres::batch`); on SQLite it
    /// runs in the group commit as `undo` says.
    pub async fn write_trade<T, F>(&self, keys: trading::TradeKeys, undo: Undo, op: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut dyn Conn) -> Result<T> + Clone + Send + 'static,
    {
        self.write_as(undo, Some(keys), op).await
    }

    async fn write_as<T, F>(&self, undo: Undo, keys: Option<trading::TradeKeys>, op: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut dyn Conn) -> Result<T> + Clone + Send + 'static,
    {
        let node = self.node.clone();
        let op = move |c: &mut dyn Conn| {
            let mut conn = Emitting { conn: c, events: Vec::new() };
            let value = op(&mut conn)?;
            let Emitting { events, .. } = conn;
            let trades: Vec<&'static str> = events
                .iter()
                .filter_map(|e| match e {
                    Event::TradeCreated(t) => Some(t.trade.transaction_type.as_str()),
                    _ => None,
                })
                .collect();
            let published = events::record(c, events, &node, now_micros())?;
            Ok((value, published, trades))
        };
        let write = async {
            match &self.backend {
                Backend::Sqlite(b) => b.write(undo, op).await,
                Backend::Postgres(b) => match keys {
                    Some(keys) => b.write_batched(keys, op).await,
                    None => b.write(op).await,
                },
            }
        };
        let (value, published, trades) = write.instrument(operation_span::<F>("write")).await?;
        // The commit is durable here: the backends answer only after it is.
        for kind in trades {
            crate::metrics::metrics().trades.get_or_create(&[("kind", kind)]).inc();
        }
        if !published.is_empty() {
            self.publisher.publish(published);
        }
        Ok(value)
    }

    /// Runs `op` on one consistent read snapshot.
    pub async fn read<T, F>(&self, op: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut dyn Conn) -> Result<T> + Send + 'static,
    {
        let read = async {
            match &self.backend {
                Backend::Sqlite(b) => b.read(op).await,
                Backend::Postgres(b) => b.read(op).await,
            }
        };
        read.instrument(operation_span::<F>("read")).await
    }

    pub async fn ping(&self) -> Result<()> {
        self.read(|c| c.query_one("SELECT 1", &[]).map(|_| ())).await
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::sync::Mutex;

    use super::*;

    struct Capture(Mutex<Vec<Published>>);

    impl Publisher for Capture {
        fn publish(&self, events: Vec<Published>) {
            self.0.lock().unwrap().extend(events);
        }
    }

    /// A market event (kept in the log) that needs no market row.
    fn closing_of(market: &str) -> Event {
        Event::MarketClosed { market_id: crate::domain::ids::MarketId(market.to_string()), closes_at: 0 }
    }

    /// A write that fails after writing takes its SQLite group commit back: neither its
    /// events nor those of its batch mates are published or kept; every write that answered
    /// success has its events in the log and published, once.
    #[tokio::test]
    async fn a_rolled_back_batch_publishes_and_keeps_no_event() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut store = Store::open(&format!("sqlite://{}", dir.path().join("events.db").display())).expect("open");
        let capture = Arc::new(Capture(Mutex::default()));
        store.set_publisher(capture.clone());
        let spoiler = tokio::spawn({
            let store = store.clone();
            async move {
                store
                    .write_with(Undo::WholeBatch, |c| {
                        c.emit(closing_of("spoiler"))?;
                        c.exec("INSERT INTO schema_migrations (version, applied_at) VALUES (999999, 0)", &[])?;
                        Err::<(), _>(Error::rule("late_failure", "failed after writing"))
                    })
                    .await
            }
        });
        let mates: Vec<_> = (0..8)
            .map(|i| {
                let store = store.clone();
                tokio::spawn(async move { store.write(move |c| c.emit(closing_of(&format!("mate{i}")))).await })
            })
            .collect();
        assert!(matches!(spoiler.await.expect("task"), Err(Error::Rule { code: "late_failure", .. })));
        let mut answered_ok = BTreeSet::new();
        for (i, mate) in mates.into_iter().enumerate() {
            if mate.await.expect("task").is_ok() {
                answered_ok.insert(format!("mate{i}"));
            }
        }
        let published: Vec<String> =
            capture.0.lock().unwrap().iter().map(|e| e.market_id.as_ref().expect("a market event").to_string()).collect();
        assert_eq!(published.iter().cloned().collect::<BTreeSet<_>>(), answered_ok);
        assert_eq!(published.len(), answered_ok.len(), "each published once: {published:?}");
        let kept: BTreeSet<String> = store
            .read(|c| c.query("SELECT market_id FROM events", &[])?.iter().map(|r| r.text(0)).collect())
            .await
            .expect("read the log");
        assert_eq!(kept, answered_ok);
    }
}
