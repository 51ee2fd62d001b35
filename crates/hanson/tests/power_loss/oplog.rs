//! The operation log that `tools/powercut/shim.c` appends to: one record per change to a file
//! of the recorded directory, in the order the changes took effect.

use std::io::Read;
use std::ops::Range;
use std::path::Path;

/// One record. Inodes are the real ones (`st_ino`); data are ranges of the log's bytes.
#[derive(Debug, Clone)]
pub(crate) enum Op {
    Open {
        ino: u64,
        flags: u32,
        name: String,
    },
    Write {
        ino: u64,
        offset: u64,
        data: Range<usize>,
    },
    Truncate {
        ino: u64,
        size: u64,
    },
    /// Makes durable what the file (or, `dir`, the directory) was given by the first
    /// `before` records.
    Sync {
        ino: u64,
        before: usize,
        dir: bool,
    },
    Unlink {
        name: String,
    },
    Rename {
        from: String,
        to: String,
    },
    /// The file grows to at least `size` (fallocate).
    Extend {
        ino: u64,
        size: u64,
    },
    Unsupported(String),
}

pub(crate) struct Log {
    pub bytes: Vec<u8>,
    pub ops: Vec<Op>,
    /// The log's length in bytes after each record.
    pub ends: Vec<u64>,
}

const HEADER: usize = 16;

fn u16_at(b: &[u8], at: usize) -> usize {
    u16::from_le_bytes([b[at], b[at + 1]]) as usize
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

fn name_at(b: &[u8], at: usize) -> (String, usize) {
    let len = u16_at(b, at);
    (String::from_utf8_lossy(&b[at + 2..at + 2 + len]).into_owned(), at + 2 + len)
}

/// The record starting at `at` of `bytes` and its length, or None if it is not whole yet.
pub(crate) fn parse_one(bytes: &[u8], at: usize) -> Option<(Op, usize)> {
    if bytes.len() < at + HEADER {
        return None;
    }
    let len = u32_at(bytes, at) as usize;
    assert!(len >= HEADER, "a log record of {len} bytes at {at}");
    if bytes.len() < at + len {
        return None;
    }
    let kind = bytes[at + 4];
    let ino = u64_at(bytes, at + 8);
    let body = at + HEADER;
    let op = match kind {
        1 => Op::Open { ino, flags: u32_at(bytes, body), name: name_at(bytes, body + 4).0 },
        2 => Op::Write { ino, offset: u64_at(bytes, body), data: body + 8..at + len },
        3 => Op::Truncate { ino, size: u64_at(bytes, body) },
        4 => Op::Sync { ino, before: u64_at(bytes, body) as usize, dir: bytes[body + 8] != 0 },
        5 => Op::Unlink { name: name_at(bytes, body).0 },
        6 => {
            let (from, next) = name_at(bytes, body);
            Op::Rename { from, to: name_at(bytes, next).0 }
        }
        7 => Op::Extend { ino, size: u64_at(bytes, body) },
        8 => Op::Unsupported(name_at(bytes, body).0),
        other => panic!("unknown log record kind {other} at {at}"),
    };
    Some((op, len))
}

impl Log {
    pub(crate) fn read(path: &Path) -> std::io::Result<Log> {
        let mut bytes = Vec::new();
        std::fs::File::open(path)?.read_to_end(&mut bytes)?;
        let (mut ops, mut ends) = (Vec::new(), Vec::new());
        let mut at = 0;
        while let Some((op, len)) = parse_one(&bytes, at) {
            at += len;
            ops.push(op);
            ends.push(at as u64);
        }
        assert_eq!(at, bytes.len(), "the log ends inside a record");
        Ok(Log { bytes, ops, ends })
    }

    /// How many records a log `len` bytes long held (whole ones).
    pub(crate) fn records_at(&self, len: u64) -> usize {
        self.ends.partition_point(|&end| end <= len)
    }

    pub(crate) fn data(&self, range: &Range<usize>) -> &[u8] {
        &self.bytes[range.clone()]
    }
}

/// Reads a log as it grows and counts what the harness waits for: WAL headers written (the
/// WAL's start and each restart after a checkpoint) and syncs of the database file (each
/// checkpoint's end).
#[derive(Default)]
pub(crate) struct Progress {
    read: usize,
    pending: Vec<u8>,
    wal_inos: Vec<u64>,
    db_inos: Vec<u64>,
    pub wal_headers: usize,
    pub db_syncs: usize,
}

impl Progress {
    pub(crate) fn update(&mut self, path: &Path, db_name: &str) -> std::io::Result<()> {
        use std::io::{Seek, SeekFrom};
        let mut file = std::fs::File::open(path)?;
        file.seek(SeekFrom::Start(self.read as u64))?;
        let mut more = Vec::new();
        file.read_to_end(&mut more)?;
        self.read += more.len();
        self.pending.extend_from_slice(&more);
        let mut at = 0;
        while let Some((op, len)) = parse_one(&self.pending, at) {
            at += len;
            match op {
                Op::Open { ino, name, .. } if name == format!("{db_name}-wal") => self.wal_inos.push(ino),
                Op::Open { ino, name, .. } if name == db_name => self.db_inos.push(ino),
                Op::Write { ino, offset: 0, .. } if self.wal_inos.contains(&ino) => self.wal_headers += 1,
                Op::Sync { ino, dir: false, .. } if self.db_inos.contains(&ino) => self.db_syncs += 1,
                _ => {}
            }
        }
        self.pending.drain(..at);
        Ok(())
    }
}
