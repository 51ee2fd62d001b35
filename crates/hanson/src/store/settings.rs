//! What callers choose about the store: connection settings, and how a failed write is undone.

/// How a failed write is undone when SQLite runs it in a group commit with others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Undo {
    /// In a savepoint of its own: a failure at any point undoes this write alone. SQLite
    /// copies every page the write touches into the savepoint's journal first.
    Savepoint,
    /// For writes that make every check before their first change: no savepoint. If one
    /// fails after changing rows all the same (a storage error, a panic), or the copies the
    /// group commit keeps in memory (`hot`), the whole group commit is rolled back and every
    /// write in it fails.
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
