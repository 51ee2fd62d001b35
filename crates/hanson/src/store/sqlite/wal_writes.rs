//! The writer's WAL writes, gathered. SQLite writes each WAL frame as two `pwrite`s (its
//! 24-byte header, then the page), so a group commit of some 300 pages in many_markets made
//! some 600 system calls, each dirtying one or two pages of the kernel's cache: a sixth of
//! the writer thread's time (`perf`, `docs/performance.md`). No crate offers this, so the
//! writer's connection opens its files through this VFS, a thin layer over SQLite's own.
//!
//! The layer holds the frames SQLite writes in order in memory and passes them on in a few
//! large writes when the commit's last frame comes (its header carries the database size),
//! before that frame itself, which is written through as SQLite wrote it. So when SQLite publishes the
//! commit to readers (after its last frame), every frame of it is in the file, as before, and
//! the flusher's fsync after COMMIT covers them all. A failed write fails the commit as it
//! would have. Any other use of the WAL file (a read, a sync, a size, a truncation, another
//! write) first writes what is held. Frames held when the writer gives up the WAL's write lock
//! belong to a transaction that did not commit (pages spilled, then rolled back) and are
//! dropped, so they cannot land over another connection's frames.

use std::ffi::{c_int, c_void, CStr};
use std::sync::OnceLock;

use rusqlite::ffi;

/// The VFS's registered name.
pub(crate) const NAME: &str = "hanson-wal";
const NAME_C: &CStr = c"hanson-wal";
/// A WAL frame's header (`walWriteOneFrame`).
const FRAME_HEADER: usize = 24;
/// The WAL's write lock is the first of its wal-index locks (`WAL_WRITE_LOCK`).
const WAL_WRITE_LOCK: c_int = 0;
/// Held frames are written once they reach this size, commit or not.
const MAX_HELD: usize = 8 << 20;
/// The most one write passes on.
const WRITE_CHUNK: usize = 64 << 10;

/// One open file: SQLite's own file object follows it in the same allocation.
#[repr(C)]
struct Layered {
    base: ffi::sqlite3_file,
    real: *mut ffi::sqlite3_file,
    /// A WAL file: its database's file. A database file: its WAL, while that is open.
    other: *mut Layered,
    wal: bool,
    /// Frames written in order and not yet passed on, starting at `held_from`.
    held: Vec<u8>,
    held_from: i64,
    /// `held` ends with a frame header whose page has not come yet.
    header_held: bool,
}

/// `Layered` rounded up so that the file object after it is aligned.
const LAYER: usize = size_of::<Layered>().div_ceil(16) * 16;

/// Registers the VFS (once) over SQLite's default one.
pub(crate) fn register() -> rusqlite::Result<()> {
    static REGISTERED: OnceLock<c_int> = OnceLock::new();
    let rc = *REGISTERED.get_or_init(|| unsafe {
        let default = ffi::sqlite3_vfs_find(std::ptr::null());
        if default.is_null() {
            return ffi::SQLITE_ERROR;
        }
        let vfs = Box::new(ffi::sqlite3_vfs {
            szOsFile: (LAYER as c_int) + (*default).szOsFile,
            pNext: std::ptr::null_mut(),
            zName: NAME_C.as_ptr(),
            pAppData: default.cast(),
            xOpen: Some(open),
            ..*default
        });
        ffi::sqlite3_vfs_register(Box::leak(vfs), 0)
    });
    match rc {
        ffi::SQLITE_OK => Ok(()),
        rc => Err(rusqlite::Error::SqliteFailure(ffi::Error::new(rc), Some("registering the WAL-writes VFS".into()))),
    }
}

static METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 3,
    xClose: Some(close),
    xRead: Some(read),
    xWrite: Some(write),
    xTruncate: Some(truncate),
    xSync: Some(sync),
    xFileSize: Some(file_size),
    xLock: Some(lock),
    xUnlock: Some(unlock),
    xCheckReservedLock: Some(check_reserved_lock),
    xFileControl: Some(file_control),
    xSectorSize: Some(sector_size),
    xDeviceCharacteristics: Some(device_characteristics),
    xShmMap: Some(shm_map),
    xShmLock: Some(shm_lock),
    xShmBarrier: Some(shm_barrier),
    xShmUnmap: Some(shm_unmap),
    xFetch: Some(fetch),
    xUnfetch: Some(unfetch),
};

unsafe extern "C" fn open(
    vfs: *mut ffi::sqlite3_vfs,
    name: ffi::sqlite3_filename,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    let default = (*vfs).pAppData.cast::<ffi::sqlite3_vfs>();
    let Some(real_open) = (*default).xOpen else { return ffi::SQLITE_ERROR };
    let layered = (flags & (ffi::SQLITE_OPEN_MAIN_DB | ffi::SQLITE_OPEN_WAL)) != 0;
    if !layered {
        // Journals and temporary files: SQLite's own object, in place.
        return real_open(default, name, file, flags, out_flags);
    }
    let real = file.cast::<u8>().add(LAYER).cast::<ffi::sqlite3_file>();
    (*file).pMethods = std::ptr::null();
    let Ok(real_size) = usize::try_from((*default).szOsFile) else { return ffi::SQLITE_ERROR };
    std::ptr::write_bytes(real.cast::<u8>(), 0, real_size);
    let rc = real_open(default, name, real, flags, out_flags);
    if rc != ffi::SQLITE_OK {
        // SQLite closes only a file whose methods are set; its own object may need closing.
        if let Some(real_close) = (*real).pMethods.as_ref().and_then(|m| m.xClose) {
            real_close(real);
        }
        return rc;
    }
    let wal = flags & ffi::SQLITE_OPEN_WAL != 0;
    let mut other = std::ptr::null_mut();
    if wal {
        let db = ffi::sqlite3_database_file_object(name);
        if !db.is_null() && std::ptr::eq((*db).pMethods, &METHODS) {
            other = db.cast::<Layered>();
        }
    }
    let layer = file.cast::<Layered>();
    layer.write(Layered {
        base: ffi::sqlite3_file { pMethods: &METHODS },
        real,
        other,
        wal,
        held: Vec::new(),
        held_from: 0,
        header_held: false,
    });
    if !other.is_null() {
        (*other).other = layer;
    }
    ffi::SQLITE_OK
}

unsafe fn layer<'a>(file: *mut ffi::sqlite3_file) -> &'a mut Layered {
    &mut *file.cast::<Layered>()
}

unsafe fn methods(layer: &Layered) -> &ffi::sqlite3_io_methods {
    &*(*layer.real).pMethods
}

impl Layered {
    /// Writes the held frames where they belong.
    unsafe fn write_held(&mut self) -> c_int {
        if self.held.is_empty() {
            return ffi::SQLITE_OK;
        }
        let Some(real_write) = methods(self).xWrite else { return ffi::SQLITE_IOERR_WRITE };
        let mut rc = ffi::SQLITE_OK;
        let mut offset = self.held_from;
        // SQLite's own write takes at most 128 KiB at once (`seekAndWriteFd`).
        for chunk in self.held.chunks(WRITE_CHUNK) {
            rc = real_write(self.real, chunk.as_ptr().cast(), chunk.len() as c_int, offset);
            if rc != ffi::SQLITE_OK {
                break;
            }
            offset += chunk.len() as i64;
        }
        self.drop_held();
        rc
    }

    fn drop_held(&mut self) {
        self.held.clear();
        self.header_held = false;
    }

    /// Holds `data` if it continues the frames held; false if it must be written through.
    fn hold(&mut self, data: &[u8], offset: i64) -> bool {
        let follows = self.held.is_empty() || offset == self.held_from + self.held.len() as i64;
        if !follows {
            return false;
        }
        if self.header_held {
            // The page of the held header.
            self.held.extend_from_slice(data);
            self.header_held = false;
            return true;
        }
        // A frame header; the commit's last frame says how many pages the database has.
        let commits = data.len() == FRAME_HEADER && data[4..8] != [0; 4];
        if data.len() != FRAME_HEADER || commits {
            return false;
        }
        if self.held.is_empty() {
            self.held_from = offset;
        }
        self.held.extend_from_slice(data);
        self.header_held = true;
        true
    }
}

unsafe extern "C" fn close(file: *mut ffi::sqlite3_file) -> c_int {
    let layer = layer(file);
    let written = if layer.wal { layer.write_held() } else { ffi::SQLITE_OK };
    if !layer.other.is_null() {
        (*layer.other).other = std::ptr::null_mut();
    }
    let closed = match methods(layer).xClose {
        Some(real_close) => real_close(layer.real),
        None => ffi::SQLITE_OK,
    };
    std::ptr::drop_in_place(&mut layer.held);
    if written != ffi::SQLITE_OK {
        written
    } else {
        closed
    }
}

unsafe extern "C" fn write(file: *mut ffi::sqlite3_file, data: *const c_void, amount: c_int, offset: i64) -> c_int {
    let layer = layer(file);
    if layer.wal {
        let Ok(len) = usize::try_from(amount) else { return ffi::SQLITE_IOERR_WRITE };
        let bytes = std::slice::from_raw_parts(data.cast::<u8>(), len);
        if layer.hold(bytes, offset) {
            if !layer.header_held && layer.held.len() >= MAX_HELD {
                return layer.write_held();
            }
            return ffi::SQLITE_OK;
        }
        let rc = layer.write_held();
        if rc != ffi::SQLITE_OK {
            return rc;
        }
    }
    match methods(layer).xWrite {
        Some(real_write) => real_write(layer.real, data, amount, offset),
        None => ffi::SQLITE_IOERR_WRITE,
    }
}

/// Writes what is held (a WAL file's), then passes the call to SQLite's own file object:
/// for the calls that read or change the file otherwise.
macro_rules! after_held {
    ($file:expr, $method:ident, $missing:expr $(, $arg:expr)*) => {{
        let layer = layer($file);
        if layer.wal {
            let rc = layer.write_held();
            if rc != ffi::SQLITE_OK {
                return rc;
            }
        }
        match methods(layer).$method {
            Some(real) => real(layer.real $(, $arg)*),
            None => $missing,
        }
    }};
}

unsafe extern "C" fn read(file: *mut ffi::sqlite3_file, data: *mut c_void, amount: c_int, offset: i64) -> c_int {
    after_held!(file, xRead, ffi::SQLITE_IOERR_READ, data, amount, offset)
}

unsafe extern "C" fn truncate(file: *mut ffi::sqlite3_file, size: i64) -> c_int {
    after_held!(file, xTruncate, ffi::SQLITE_IOERR_TRUNCATE, size)
}

unsafe extern "C" fn sync(file: *mut ffi::sqlite3_file, flags: c_int) -> c_int {
    after_held!(file, xSync, ffi::SQLITE_IOERR_FSYNC, flags)
}

unsafe extern "C" fn file_size(file: *mut ffi::sqlite3_file, size: *mut i64) -> c_int {
    after_held!(file, xFileSize, ffi::SQLITE_IOERR_FSTAT, size)
}

unsafe extern "C" fn file_control(file: *mut ffi::sqlite3_file, op: c_int, arg: *mut c_void) -> c_int {
    after_held!(file, xFileControl, ffi::SQLITE_NOTFOUND, op, arg)
}

unsafe extern "C" fn shm_lock(file: *mut ffi::sqlite3_file, offset: c_int, n: c_int, flags: c_int) -> c_int {
    let layer = layer(file);
    let releases_write_lock = flags & ffi::SQLITE_SHM_UNLOCK != 0 && offset <= WAL_WRITE_LOCK && WAL_WRITE_LOCK < offset + n;
    if releases_write_lock && !layer.other.is_null() {
        // A commit writes all it holds before its last frame: what is left did not commit.
        (*layer.other).drop_held();
    }
    match methods(layer).xShmLock {
        Some(real_shm_lock) => real_shm_lock(layer.real, offset, n, flags),
        None => ffi::SQLITE_IOERR_SHMLOCK,
    }
}

// The rest pass straight to SQLite's own file object.

unsafe extern "C" fn lock(file: *mut ffi::sqlite3_file, level: c_int) -> c_int {
    let layer = layer(file);
    methods(layer).xLock.map_or(ffi::SQLITE_IOERR_LOCK, |f| f(layer.real, level))
}

unsafe extern "C" fn unlock(file: *mut ffi::sqlite3_file, level: c_int) -> c_int {
    let layer = layer(file);
    methods(layer).xUnlock.map_or(ffi::SQLITE_IOERR_UNLOCK, |f| f(layer.real, level))
}

unsafe extern "C" fn check_reserved_lock(file: *mut ffi::sqlite3_file, out: *mut c_int) -> c_int {
    let layer = layer(file);
    methods(layer).xCheckReservedLock.map_or(ffi::SQLITE_IOERR_CHECKRESERVEDLOCK, |f| f(layer.real, out))
}

unsafe extern "C" fn sector_size(file: *mut ffi::sqlite3_file) -> c_int {
    let layer = layer(file);
    methods(layer).xSectorSize.map_or(4096, |f| f(layer.real))
}

unsafe extern "C" fn device_characteristics(file: *mut ffi::sqlite3_file) -> c_int {
    let layer = layer(file);
    methods(layer).xDeviceCharacteristics.map_or(0, |f| f(layer.real))
}

unsafe extern "C" fn shm_map(file: *mut ffi::sqlite3_file, region: c_int, size: c_int, extend: c_int, out: *mut *mut c_void) -> c_int {
    let layer = layer(file);
    match methods(layer) {
        m if m.iVersion >= 2 => m.xShmMap.map_or(ffi::SQLITE_IOERR_SHMMAP, |f| f(layer.real, region, size, extend, out)),
        _ => ffi::SQLITE_IOERR_SHMMAP,
    }
}

unsafe extern "C" fn shm_barrier(file: *mut ffi::sqlite3_file) {
    let layer = layer(file);
    if let Some(f) = methods(layer).xShmBarrier.filter(|_| methods(layer).iVersion >= 2) {
        f(layer.real);
    }
}

unsafe extern "C" fn shm_unmap(file: *mut ffi::sqlite3_file, delete: c_int) -> c_int {
    let layer = layer(file);
    match methods(layer) {
        m if m.iVersion >= 2 => m.xShmUnmap.map_or(ffi::SQLITE_OK, |f| f(layer.real, delete)),
        _ => ffi::SQLITE_OK,
    }
}

unsafe extern "C" fn fetch(file: *mut ffi::sqlite3_file, offset: i64, amount: c_int, out: *mut *mut c_void) -> c_int {
    let layer = layer(file);
    match methods(layer) {
        m if m.iVersion >= 3 => m.xFetch.map_or_else(|| no_fetch(out), |f| f(layer.real, offset, amount, out)),
        _ => no_fetch(out),
    }
}

/// No mapping: SQLite reads the page instead.
unsafe fn no_fetch(out: *mut *mut c_void) -> c_int {
    *out = std::ptr::null_mut();
    ffi::SQLITE_OK
}

unsafe extern "C" fn unfetch(file: *mut ffi::sqlite3_file, offset: i64, page: *mut c_void) -> c_int {
    let layer = layer(file);
    match methods(layer) {
        m if m.iVersion >= 3 => m.xUnfetch.map_or(ffi::SQLITE_OK, |f| f(layer.real, offset, page)),
        _ => ffi::SQLITE_OK,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::{Connection, OpenFlags};

    fn open_layered(path: &std::path::Path) -> Connection {
        register().expect("register");
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags_and_vfs(path, flags, NAME).expect("open");
        conn.pragma_update(None, "journal_mode", "WAL").expect("wal");
        conn.pragma_update(None, "synchronous", "NORMAL").expect("synchronous");
        conn.pragma_update(None, "wal_autocheckpoint", 0).expect("no checkpoints");
        conn
    }

    /// A directory of its own and the database's path in it.
    fn scratch() -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("t.db");
        (dir, path)
    }

    fn count(conn: &Connection) -> i64 {
        conn.query_row("SELECT count(*) FROM t", [], |r| r.get(0)).expect("count")
    }

    /// The database and its WAL as the files hold them now, opened elsewhere: SQLite
    /// recovers the WAL from the file alone, checking every frame's checksum.
    fn recovered_copy(dir: &std::path::Path, path: &std::path::Path) -> Connection {
        let copy = dir.join("copy.db");
        std::fs::copy(path, &copy).expect("copy db");
        std::fs::copy(format!("{}-wal", path.display()), format!("{}-wal", copy.display())).expect("copy wal");
        Connection::open(&copy).expect("open copy")
    }

    fn assert_intact(conn: &Connection) {
        let check: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).expect("check");
        assert_eq!(check, "ok");
    }

    /// A writer with a small page cache, inside a transaction of 2,000 rows: more pages than
    /// the cache holds, so it has spilled frames into the WAL before it ends.
    fn writer_spilling(path: &std::path::Path) -> Connection {
        let writer = open_layered(path);
        writer.pragma_update(None, "cache_size", 10).expect("cache");
        writer.execute_batch("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)").expect("create");
        writer.execute_batch("BEGIN").expect("begin");
        for i in 0..2000 {
            writer.execute("INSERT INTO t (k, v) VALUES (?1, ?2)", (i, "y".repeat(500))).expect("insert");
        }
        writer
    }

    #[test]
    fn every_committed_frame_is_in_the_file_when_commit_returns() {
        let (dir, path) = scratch();
        let writer = open_layered(&path);
        writer.execute_batch("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)").expect("create");
        let reader = Connection::open(&path).expect("reader");
        // Commits of a few pages and of some 400 KiB, past what one write passes on.
        for batch in 0..20 {
            let rows = if batch % 2 == 0 { 5 } else { 300 };
            writer.execute_batch("BEGIN").expect("begin");
            for i in 0..rows {
                writer.execute("INSERT INTO t (k, v) VALUES (?1, ?2)", (batch * 1000 + i, "x".repeat(1000))).expect("insert");
            }
            writer.execute_batch("COMMIT").expect("commit");
            // Readers see each commit at once, from the WAL file.
            assert_eq!(count(&reader), (batch / 2 + 1) * 5 + (batch + 1) / 2 * 300);
        }
        let copy = recovered_copy(dir.path(), &path);
        assert_eq!(count(&copy), 3050);
        assert_intact(&copy);
    }

    #[test]
    fn a_transaction_that_spills_frames_before_it_commits_is_whole() {
        let (dir, path) = scratch();
        let writer = writer_spilling(&path);
        // Pages spilled earlier and changed again are written over their first frames.
        writer.execute("UPDATE t SET v = 'changed' WHERE k % 7 = 0", []).expect("update");
        writer.execute_batch("COMMIT").expect("commit");
        let copy = recovered_copy(dir.path(), &path);
        assert_eq!(count(&copy), 2000);
        let changed: i64 = copy.query_row("SELECT count(*) FROM t WHERE v = 'changed'", [], |r| r.get(0)).expect("changed");
        assert_eq!(changed, 286);
        assert_intact(&copy);
    }

    #[test]
    fn a_rolled_back_transaction_then_another_connections_commit_leave_the_database_whole() {
        let (dir, path) = scratch();
        let writer = writer_spilling(&path);
        writer.execute_batch("ROLLBACK").expect("rollback");
        // Another connection writes the WAL where the spilled frames went.
        let other = Connection::open(&path).expect("other");
        other
            .execute_batch("BEGIN; INSERT INTO t (k, v) VALUES (-1, 'other'); INSERT INTO t (k, v) VALUES (-2, 'other'); COMMIT")
            .expect("other commit");
        writer.execute("INSERT INTO t (k, v) VALUES (1, 'writer')", []).expect("writer commit");
        assert_eq!(count(&other), 3);
        let copy = recovered_copy(dir.path(), &path);
        let keys: Vec<i64> = copy
            .prepare("SELECT k FROM t ORDER BY k")
            .expect("prepare")
            .query_map([], |r| r.get(0))
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("keys");
        assert_eq!(keys, vec![-2, -1, 1]);
        assert_intact(&copy);
    }

    #[test]
    fn frames_held_when_the_write_lock_is_released_are_dropped_and_others_reach_the_file() {
        let (_dir, path) = scratch();
        let writer = open_layered(&path);
        writer.execute_batch("CREATE TABLE t (k INTEGER PRIMARY KEY)").expect("create");
        unsafe {
            let db = writer.handle();
            let (mut wal, mut main) = (std::ptr::null_mut::<ffi::sqlite3_file>(), std::ptr::null_mut::<ffi::sqlite3_file>());
            let schema = c"main".as_ptr();
            assert_eq!(ffi::sqlite3_file_control(db, schema, ffi::SQLITE_FCNTL_JOURNAL_POINTER, (&raw mut wal).cast()), ffi::SQLITE_OK);
            assert_eq!(ffi::sqlite3_file_control(db, schema, ffi::SQLITE_FCNTL_FILE_POINTER, (&raw mut main).cast()), ffi::SQLITE_OK);
            let (wal_methods, main_methods) = (&*(*wal).pMethods, &*(*main).pMethods);
            let size = || {
                let mut size = 0i64;
                assert_eq!(wal_methods.xFileSize.expect("size")(wal, &mut size), ffi::SQLITE_OK);
                size
            };
            let write = wal_methods.xWrite.expect("write");
            let frame = |at: i64| {
                let (header, page) = ([0u8; FRAME_HEADER], [7u8; 4096]);
                assert_eq!(write(wal, header.as_ptr().cast(), FRAME_HEADER as c_int, at), ffi::SQLITE_OK);
                assert_eq!(write(wal, page.as_ptr().cast(), 4096, at + FRAME_HEADER as i64), ffi::SQLITE_OK);
            };
            let end = size();
            // A frame that no commit followed, then the write lock taken and given up.
            frame(end);
            let shm_lock = main_methods.xShmLock.expect("shm lock");
            assert_eq!(shm_lock(main, WAL_WRITE_LOCK, 1, ffi::SQLITE_SHM_LOCK | ffi::SQLITE_SHM_EXCLUSIVE), ffi::SQLITE_OK);
            assert_eq!(shm_lock(main, WAL_WRITE_LOCK, 1, ffi::SQLITE_SHM_UNLOCK | ffi::SQLITE_SHM_EXCLUSIVE), ffi::SQLITE_OK);
            assert_eq!(size(), end);
            // Held frames are written before any other use of the file (here, its size).
            frame(end);
            assert_eq!(size(), end + (FRAME_HEADER + 4096) as i64);
        }
    }
}
