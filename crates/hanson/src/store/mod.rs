//! Storage: the SQL and its two backends. [`Store`] is the one entry point: each change of
//! money or market state is one call that runs in one transaction on the chosen backend and
//! returns a typed result, its events published once the commit is durable. The operations
//! are written once, against [`sql::Conn`] (reads and table writes) or [`tx::Tx`] (writes that
//! emit events), in the submodules:
//! - tables: `accounts`, `positions`, `markets`, `history`, `event_log`, `sessions`,
//!   `idempotency`, `webhooks`, `tenants`, `auth`;
//! - the copies a batch of trades keeps in memory: `batch`;
//! - operations: `ledger` (transfers), `trading` (bets and sales, planned by the domain),
//!   `settlement`, `market_edits`, `closures`;
//! - backends: `sqlite`, `postgres`.

pub(crate) mod accounts;
pub(crate) mod audit;
pub(crate) mod auth;
pub(crate) mod batch;

pub(crate) mod closures;
pub mod event_log;
pub(crate) mod exports;
pub mod history;
pub(crate) mod idempotency;
pub(crate) mod leaderboard;
pub(crate) mod ledger;
pub(crate) mod market_edits;
pub(crate) mod markets;
pub mod positions;
pub mod postgres;
mod readers;
pub(crate) mod seed;
pub(crate) mod sessions;
pub(crate) mod settings;
pub(crate) mod settlement;
pub(crate) mod shared_read;
pub mod sql;
pub(crate) mod sqlite;
pub(crate) mod tenants;
pub(crate) mod trading;
pub mod tx;
pub(crate) mod webhooks;

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;
use tracing::Instrument;

use crate::domain::event::{Event, Published};
use crate::domain::time::now_micros;
use crate::error::{Error, Result};
use batch::BatchRows;
pub use batch::TradeKeys;
use idempotency::{IdempotencyKey, Prior};
pub use settings::StoreOptions;
use settings::Undo;
use sql::Conn;
use tx::Tx;

#[derive(Clone)]
pub(crate) enum Backend {
    Sqlite(sqlite::SqliteBackend),
    Postgres(postgres::PostgresBackend),
}

/// Receives the events of each write after its commit is durable, in the order the writes
/// answered. It must not block: it runs on the path of the write's response.
pub(crate) trait Publisher: Send + Sync {
    fn publish(&self, events: Vec<Published>);
}

/// Drops every event: nothing subscribes.
pub(crate) struct Discard;

impl Publisher for Discard {
    fn publish(&self, _events: Vec<Published>) {}
}

#[derive(Clone)]
pub struct Store {
    backend: Backend,
    publisher: Arc<dyn Publisher>,
    /// This process among the nodes sharing a database (see `event_log::write`).
    node: Arc<str>,
    candle_keys: Arc<history::candle_keys::CandleKeys>,
}

/// A DEBUG span per store call, named by the function that made the call (the closure's
/// type names it, e.g. `hanson::api::trading::place_bet::{{closure}}`): nothing to pass at
/// each call site, and nearly free while DEBUG is off.
fn operation_span<F>(kind: &'static str) -> tracing::Span {
    tracing::debug_span!("store", kind, op = std::any::type_name::<F>())
}

/// What a keyed write answers: what it did now (as its body's type: a write without a key
/// never goes through JSON values), or the stored answer of the first time.
pub(crate) enum Answer<B> {
    Fresh(u16, B),
    Replay(u16, Value),
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
            let backend = postgres::PostgresBackend::open(url, options)?;
            return Ok(Store::with_backend(Backend::Postgres(backend)));
        }
        let scheme = url.split("://").next().unwrap_or(url);
        Err(Error::invalid("database_url", format!("the scheme {scheme:?} is not supported: expected sqlite://PATH or postgres://...")))
    }

    /// Opens a database that must exist already (every command but `serve`): a SQLite file
    /// that is missing or holds no Hanson schema is refused, never created.
    pub fn open_existing(url: &str) -> Result<Store> {
        if url.starts_with("sqlite:") {
            sqlite::existing(url)?;
        }
        Self::open(url)
    }

    fn with_backend(backend: Backend) -> Store {
        Store { backend, publisher: Arc::new(Discard), node: Arc::from(crate::domain::ids::new_id()), candle_keys: Arc::default() }
    }

    /// Hands every later write's events to `publisher` (the store starts with one that
    /// discards them).
    pub(crate) fn set_publisher(&mut self, publisher: Arc<dyn Publisher>) {
        self.publisher = publisher;
    }

    /// This process's name in other nodes' event notifications.
    pub(crate) fn node(&self) -> &str {
        &self.node
    }

    /// The hourly candle keys price-history reads keep between requests.
    pub(crate) fn candle_keys(&self) -> Arc<history::candle_keys::CandleKeys> {
        self.candle_keys.clone()
    }

    pub(crate) fn backend(&self) -> &Backend {
        &self.backend
    }

    /// Runs `op` in one write transaction; returns once it is durable.
    ///
    /// `op` is `Clone` because PostgreSQL may run it again from the start, on a copy, when its
    /// transaction loses a race with another node (see `postgres`); capture owned values that
    /// are `Clone`. SQLite runs it exactly once.
    pub async fn write<T, F>(&self, op: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Tx<'_>) -> Result<T> + Clone + Send + 'static,
    {
        self.write_as(Undo::Savepoint, None, op).await
    }

    /// A bet or a sale, which names the rows it reads first (`keys`). On PostgreSQL it runs
    /// in a trade batch, which reads those rows for all its trades at once; on SQLite in the
    /// group commit. It runs without a savepoint: it must make every check before its first
    /// write, and if it fails after writing all the same, the whole batch is rolled back (on
    /// SQLite every write in it fails; on PostgreSQL each runs again alone).
    pub async fn trade<T, F>(&self, keys: TradeKeys, op: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Tx<'_>) -> Result<T> + Clone + Send + 'static,
    {
        self.write_as(Undo::WholeBatch, Some(keys), op).await
    }

    /// A state-changing request, run once per `Idempotency-Key` (`key`): `authorize` runs
    /// first in the transaction (a replay is served only to a caller still allowed to make
    /// the request) and hands what it found to `op`, which returns the whole answer (status
    /// and body), stored with the key so that a retry replays exactly what the first request
    /// answered. A bet or sale names the rows it reads first (`trade`): on PostgreSQL it runs
    /// in a trade batch. Without a key it runs without a savepoint (every check comes before
    /// its first write; a failure after it takes back the whole group commit); with one, the
    /// key's record is written after it and may fail, so it takes a savepoint.
    pub(crate) async fn write_once<A, G, B, F>(
        &self,
        key: Option<IdempotencyKey>,
        trade: Option<TradeKeys>,
        authorize: A,
        op: F,
    ) -> Result<Answer<B>>
    where
        A: FnOnce(&mut Tx<'_>) -> Result<G> + Clone + Send + 'static,
        B: Serialize + Send + 'static,
        F: FnOnce(&mut Tx<'_>, G) -> Result<(u16, B)> + Clone + Send + 'static,
    {
        let Some(key) = key else {
            let op = move |tx: &mut Tx<'_>| {
                let granted = authorize(tx)?;
                let (status, body) = op(tx, granted)?;
                Ok(Answer::Fresh(status, body))
            };
            return match trade {
                Some(keys) => self.trade(keys, op).await,
                None => self.write(op).await,
            };
        };
        let now = now_micros();
        let keyed = move |tx: &mut Tx<'_>| {
            let granted = authorize(tx)?;
            match idempotency::lookup(tx, &key, now)? {
                Prior::Replay { status, body } => Ok(Answer::Replay(status, body)),
                Prior::None => {
                    let (status, body) = op(tx, granted)?;
                    let stored = serde_json::to_value(&body).map_err(Error::internal)?;
                    idempotency::save(tx, &key, status, &stored, now)?;
                    Ok(Answer::Fresh(status, body))
                }
            }
        };
        self.write_as(Undo::Savepoint, trade, keyed).await
    }

    async fn write_as<T, F>(&self, undo: Undo, keys: Option<TradeKeys>, op: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Tx<'_>) -> Result<T> + Clone + Send + 'static,
    {
        let node = self.node.clone();
        let op = move |c: &mut dyn Conn, rows: Option<&mut BatchRows>| {
            let mut tx = Tx::new(c, rows);
            let value = op(&mut tx)?;
            let trades: Vec<&'static str> = tx
                .events()
                .iter()
                .filter_map(|e| match e {
                    Event::TradeCreated(t) => Some(t.trade.transaction_type.as_str()),
                    _ => None,
                })
                .collect();
            let published = tx.finish(&node, now_micros())?;
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
                    .write_as(Undo::WholeBatch, None, |c| {
                        c.emit(closing_of("spoiler"));
                        c.exec("INSERT INTO schema_migrations (version, applied_at) VALUES (999999, 0)", &[])?;
                        Err::<(), _>(Error::rule("late_failure", "failed after writing"))
                    })
                    .await
            }
        });
        let mates: Vec<_> = (0..8)
            .map(|i| {
                let store = store.clone();
                tokio::spawn(async move {
                    store
                        .write(move |c| {
                            let _: () = c.emit(closing_of(&format!("mate{i}")));
                            Ok(())
                        })
                        .await
                })
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
        let kept: BTreeSet<String> =
            store.read(|c| c.query("SELECT market_id FROM events", &[])?.iter().map(|r| r.text(0)).collect()).await.expect("read the log");
        assert_eq!(kept, answered_ok);
    }
}
