//! Storage. [`Store`] is the one entry point: each method that changes money or market state
//! is one call that runs in one transaction on the chosen backend. The operations themselves
//! are written once, against [`sql::Conn`], in the submodules.

pub mod auth;
pub mod ledger;
pub mod markets;
pub mod sql;
pub mod sqlite;
pub mod tenants;

use crate::error::{Error, Result};
use sql::Conn;

#[derive(Clone)]
pub enum Backend {
    Sqlite(sqlite::SqliteBackend),
}

#[derive(Clone)]
pub struct Store {
    backend: Backend,
}

impl Store {
    /// Opens the database named by `url` (`sqlite://PATH`), applying migrations.
    pub fn open(url: &str) -> Result<Store> {
        if url.starts_with("sqlite:") {
            return Ok(Store { backend: Backend::Sqlite(sqlite::SqliteBackend::open(url)?) });
        }
        Err(Error::internal(format!("unsupported database URL scheme: {url}")))
    }

    /// Runs `op` in one write transaction; returns once it is durable.
    pub async fn write<T, F>(&self, op: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut dyn Conn) -> Result<T> + Send + 'static,
    {
        match &self.backend {
            Backend::Sqlite(b) => b.write(op).await,
        }
    }

    /// Runs `op` on one consistent read snapshot.
    pub async fn read<T, F>(&self, op: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut dyn Conn) -> Result<T> + Send + 'static,
    {
        match &self.backend {
            Backend::Sqlite(b) => b.read(op).await,
        }
    }

    pub async fn ping(&self) -> Result<()> {
        self.read(|c| c.query_one("SELECT 1", &[]).map(|_| ())).await
    }
}
