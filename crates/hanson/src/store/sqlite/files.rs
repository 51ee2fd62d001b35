//! The database file as the command line meets it: only `serve` creates one, one `serve` at
//! a time holds it, and the commands that only read a file (audit, backup) leave it as they
//! found it, without `-wal` or `-shm` files beside it.

use std::fs::File;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};

use super::path_from_url;
use crate::error::{Error, Result};
use crate::store::sql::Conn;

/// The file a `sqlite:` URL names.
fn path_of(url: &str) -> Result<PathBuf> {
    path_from_url(url).ok_or_else(|| Error::invalid("database_url", format!("{url:?} names no file: expected sqlite://PATH")))
}

/// The path as the user should read it: absolute, from the current folder.
pub(crate) fn shown(path: &Path) -> String {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()).display().to_string()
}

/// The file of a database that must exist already (every command but `serve`): missing,
/// or not a Hanson database, it is refused, never created.
pub(crate) fn existing(url: &str) -> Result<PathBuf> {
    let path = path_of(url)?;
    let conn = open_plain(&path)?;
    drop(conn);
    Ok(path)
}

/// A read-write connection to an existing Hanson database that changes nothing by opening:
/// no migration, no journal mode set. Read-write, because only a read-write connection that
/// is the last to close removes the `-wal` and `-shm` files opening a WAL database makes.
fn open_plain(path: &Path) -> Result<Connection> {
    let file = shown(path);
    if !path.exists() {
        return Err(Error::Unavailable(format!(
            "there is no database at {file}: only `hanson serve` creates one (give --database-url or HANSON_DATABASE_URL)"
        )));
    }
    if !path.is_file() {
        return Err(Error::Unavailable(format!("{file} is not a database file")));
    }
    let not_hanson = |why: String| Error::Unavailable(format!("{file} is not a Hanson database ({why})"));
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX)
        .map_err(|e| Error::Unavailable(format!("cannot open {file}: {e}")))?;
    conn.busy_timeout(std::time::Duration::from_secs(10)).map_err(|e| not_hanson(e.to_string()))?;
    let tables: i64 = conn
        .query_row("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'", [], |r| r.get(0))
        .map_err(|e| not_hanson(e.to_string()))?;
    if tables == 0 {
        return Err(not_hanson("it has no schema_migrations table".into()));
    }
    Ok(conn)
}

/// Runs `op` in one read transaction on a connection of its own, closed before returning.
pub(crate) fn read_file<T>(url: &str, op: impl FnOnce(&mut dyn Conn) -> Result<T>) -> Result<T> {
    let conn = open_plain(&path_of(url)?)?;
    conn.execute_batch("BEGIN")?;
    let result = op(&mut super::conn::SqliteConn { conn: &conn });
    let _ = conn.execute_batch("COMMIT");
    close(conn)?;
    result
}

fn close(conn: Connection) -> Result<()> {
    conn.close().map_err(|(_, e)| Error::from(e))
}

/// Writes a consistent copy of the database at `url` to `target` (which must not exist) with
/// `VACUUM INTO`, from a read transaction of its own: it runs beside a serving writer and
/// copies the last commit before it began. Returns the copy's size in bytes.
pub(crate) fn backup(url: &str, target: &Path) -> Result<u64> {
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        return Err(Error::invalid("database_url", "backup copies SQLite databases; for PostgreSQL use pg_dump (see docs/operations.md)"));
    }
    let path = path_of(url)?;
    if target.exists() {
        return Err(Error::invalid("to", format!("{} already exists", shown(target))));
    }
    let target_text = target.to_str().ok_or_else(|| Error::invalid("to", "must be a UTF-8 path"))?;
    let conn = open_plain(&path)?;
    conn.execute("VACUUM INTO ?1", [target_text]).map_err(|e| Error::Unavailable(format!("cannot write {}: {e}", shown(target))))?;
    close(conn)?;
    Ok(std::fs::metadata(target).map_err(Error::internal)?.len())
}

/// Takes the file for this process's `serve` (creating it, empty, if missing): an exclusive
/// `flock` held until the process exits. SQLite's own locks are `fcntl` locks, which `flock`
/// does not touch; the descriptor is never closed, since closing any descriptor of the file
/// would drop this process's `fcntl` locks on it.
pub(crate) fn hold_for_serving(url: &str) -> Result<PathBuf> {
    let path = path_of(url)?;
    let file = File::options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| Error::Unavailable(format!("cannot open or create {}: {e}", shown(&path))))?;
    let fd = std::os::fd::AsRawFd::as_raw_fd(&file);
    // SAFETY: flock on a descriptor this function owns; it reads no memory.
    if unsafe { libc::flock(fd, libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let error = std::io::Error::last_os_error();
        if error.kind() == std::io::ErrorKind::WouldBlock {
            return Err(Error::Unavailable(format!(
                "another `hanson serve` is using {}: stop it first (several nodes need PostgreSQL)",
                shown(&path)
            )));
        }
        return Err(Error::Unavailable(format!("cannot lock {}: {error}", shown(&path))));
    }
    std::mem::forget(file);
    Ok(path)
}
