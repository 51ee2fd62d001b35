//! What callers choose about the store: connection settings, and how a failed write is undone.

/// How a failed write is undone when it runs in one transaction with others: SQLite's group
/// commit, or (for `WholeBatch`) PostgreSQL's trade batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Undo {
    /// In a savepoint of its own: a failure at any point undoes this write alone. SQLite
    /// copies every page the write touches into the savepoint's journal first.
    Savepoint,
    /// For writes that make every check before their first change (trades): no savepoint.
    /// If one fails after changing rows all the same (a storage error, a panic), or the
    /// copies the batch keeps in memory (`hot`), the whole batch is rolled back: on SQLite
    /// every write in it fails; on PostgreSQL each runs again alone (`postgres::batch`).
    WholeBatch,
}

/// Connection settings. SQLite ignores them: it has one writer thread and its own readers.
#[derive(Debug, Clone)]
pub struct StoreOptions {
    /// Most PostgreSQL connections this process opens.
    pub max_connections: usize,
    /// PostgreSQL `statement_timeout` in milliseconds (0 = none).
    pub statement_timeout_ms: u64,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions { max_connections: 16, statement_timeout_ms: 5_000 }
    }
}
