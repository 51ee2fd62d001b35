//! The disk model: what a power cut leaves of the recorded directory.
//!
//! As SQLite's crash VFS (`src/test6.c`) and CrashMonkey model it:
//! - A file's contents: what its last sync made durable, then the changes made since
//!   (writes, truncations, fallocate extensions), which the cut keeps or loses. A sync
//!   (`fsync` or `fdatasync`: both make the data and the file's size durable) makes durable
//!   every change made to that file before the sync was called; changes made while it ran
//!   stay volatile until the next one.
//! - Each volatile write is cut into 512-byte sectors (of the file's offsets); each sector's
//!   part of it is kept or lost on its own, and a kept one may be torn: only a prefix of it
//!   reached the disk, the old bytes after it. Writes to one sector apply in order, so a
//!   later write kept over an earlier lost one still wins. Each volatile truncation or
//!   extension is kept or lost on its own too. A kept write past the end extends the file
//!   (with zeros in any gap). Each cut draws how likely a sector is to be kept (from none to
//!   all: a cut that keeps all is a process crash) and how likely a kept one is torn.
//! - The directory: which names link which files. Creating a file (an open that made it),
//!   `unlink` and `rename` change it at once for the running process but are durable only
//!   once the directory itself is synced (`fsync` of the directory, as SQLite does after
//!   creating a WAL and the flusher does for a new WAL); a cut keeps an in-order prefix of
//!   the volatile ones (a journaling file system commits metadata in order), possibly none.
//!   A file whose name the cut does not keep is gone, its data with it; an unlinked file
//!   whose unlink is lost is back with whatever its data was.
//! - The `-shm` file is not recorded nor rebuilt: it is shared memory, rebuilt by SQLite from
//!   the WAL when the first connection opens it.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use crate::oplog::{Log, Op};

pub(crate) const SECTOR: u64 = 512;
const O_TRUNC: u32 = 0o1000;

/// A change not yet made durable, by the record that made it.
#[derive(Clone, Debug)]
enum Change {
    Write { offset: u64, record: usize },
    SetSize(u64),
    Extend(u64),
}

struct File {
    ino: u64,
    durable: Vec<u8>,
    volatile: Vec<(usize, Change)>,
}

#[derive(Clone, Debug)]
enum NameChange {
    Link(String, usize),
    Unlink(String),
    Rename(String, String),
}

/// The disk as the log has left it after some records.
pub(crate) struct Disk {
    files: Vec<File>,
    /// Files by their real inode number (the latest file to have it).
    by_ino: HashMap<u64, usize>,
    names: BTreeMap<String, usize>,
    durable_names: BTreeMap<String, usize>,
    volatile_names: Vec<(usize, NameChange)>,
    applied: usize,
}

/// How a cut treats the volatile changes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CutDraw {
    /// Chance that a volatile sector (or truncation) reaches the disk.
    pub keep: f64,
    /// Chance that a kept sector is torn.
    pub tear: f64,
    /// Share of the volatile directory changes kept, the earliest first.
    pub names_kept: f64,
}

/// What a cut did with the volatile changes.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct CutStats {
    pub volatile_sectors: u64,
    pub dropped_sectors: u64,
    pub torn_sectors: u64,
    pub dropped_name_changes: usize,
}

/// A tiny deterministic PRNG (splitmix64), so that a seed replays a cut exactly.
pub(crate) struct Rand(u64);

impl Rand {
    pub(crate) fn new(seed: u64) -> Rand {
        Rand(seed)
    }
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }
    pub(crate) fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

impl Disk {
    /// The directory as it was when recording began, all of it durable: (name, inode, bytes).
    pub(crate) fn new(base: Vec<(String, u64, Vec<u8>)>) -> Disk {
        let mut disk = Disk {
            files: Vec::new(),
            by_ino: HashMap::new(),
            names: BTreeMap::new(),
            durable_names: BTreeMap::new(),
            volatile_names: Vec::new(),
            applied: 0,
        };
        for (name, ino, bytes) in base {
            let id = disk.files.len();
            disk.files.push(File { ino, durable: bytes, volatile: Vec::new() });
            disk.by_ino.insert(ino, id);
            disk.names.insert(name.clone(), id);
            disk.durable_names.insert(name, id);
        }
        disk
    }

    /// Records applied so far.
    pub(crate) fn applied(&self) -> usize {
        self.applied
    }

    fn file_of(&self, ino: u64, record: usize) -> usize {
        *self.by_ino.get(&ino).unwrap_or_else(|| panic!("record {record} changes inode {ino}, which no open of the directory named"))
    }

    /// Applies the next record of the log.
    pub(crate) fn apply(&mut self, log: &Log) {
        let record = self.applied;
        match &log.ops[record] {
            Op::Open { ino, flags, name } => {
                let existing = self.names.get(name).copied().filter(|&id| self.files[id].ino == *ino);
                match existing {
                    Some(id) => {
                        if flags & O_TRUNC != 0 {
                            self.files[id].volatile.push((record, Change::SetSize(0)));
                        }
                    }
                    None => {
                        assert!(!self.names.contains_key(name), "record {record}: {name} was replaced behind the recording");
                        let id = self.files.len();
                        self.files.push(File { ino: *ino, durable: Vec::new(), volatile: Vec::new() });
                        self.by_ino.insert(*ino, id);
                        self.names.insert(name.clone(), id);
                        self.volatile_names.push((record, NameChange::Link(name.clone(), id)));
                    }
                }
            }
            Op::Write { ino, offset, .. } => {
                let id = self.file_of(*ino, record);
                self.files[id].volatile.push((record, Change::Write { offset: *offset, record }));
            }
            Op::Truncate { ino, size } => {
                let id = self.file_of(*ino, record);
                self.files[id].volatile.push((record, Change::SetSize(*size)));
            }
            Op::Extend { ino, size } => {
                let id = self.file_of(*ino, record);
                self.files[id].volatile.push((record, Change::Extend(*size)));
            }
            Op::Sync { dir: true, before, .. } => {
                let before = *before;
                let split = self.volatile_names.partition_point(|(r, _)| *r < before);
                for (_, change) in self.volatile_names.drain(..split) {
                    apply_name_change(&mut self.durable_names, &change);
                }
            }
            Op::Sync { ino, before, dir: false } => {
                let id = self.file_of(*ino, record);
                let file = &mut self.files[id];
                let split = file.volatile.partition_point(|(r, _)| *r < *before);
                let made_durable: Vec<_> = file.volatile.drain(..split).collect();
                for (_, change) in made_durable {
                    apply_whole(&mut file.durable, &change, log);
                }
            }
            Op::Unlink { name } => {
                // The file stays reachable by its inode (an open descriptor may still
                // write or sync it) until a new file takes that number.
                self.names.remove(name).unwrap_or_else(|| panic!("record {record} unlinks {name}, which is not there"));
                self.volatile_names.push((record, NameChange::Unlink(name.clone())));
            }
            Op::Rename { from, to } => {
                let id = self.names.remove(from).unwrap_or_else(|| panic!("record {record} renames {from}, which is not there"));
                self.names.insert(to.clone(), id);
                self.volatile_names.push((record, NameChange::Rename(from.clone(), to.clone())));
            }
            Op::Unsupported(what) => panic!("record {record}: the recorded process did something the model cannot follow: {what}"),
        }
        self.applied += 1;
    }

    /// The directory a power cut now would leave, written into `out` (which exists and is empty).
    pub(crate) fn cut(&self, log: &Log, draw: CutDraw, rand: &mut Rand, out: &Path) -> std::io::Result<CutStats> {
        let mut stats = CutStats::default();
        let mut names = self.durable_names.clone();
        let kept_names = ((draw.names_kept * self.volatile_names.len() as f64).round() as usize).min(self.volatile_names.len());
        stats.dropped_name_changes = self.volatile_names.len() - kept_names;
        for (_, change) in &self.volatile_names[..kept_names] {
            apply_name_change(&mut names, change);
        }
        for (name, &id) in &names {
            let file = &self.files[id];
            let mut bytes = file.durable.clone();
            for (_, change) in &file.volatile {
                match change {
                    Change::Write { offset, record } => {
                        let Op::Write { data, .. } = &log.ops[*record] else { unreachable!() };
                        let data = log.data(data);
                        let end = offset + data.len() as u64;
                        let mut at = *offset;
                        while at < end {
                            let sector_end = ((at / SECTOR) + 1) * SECTOR;
                            let to = sector_end.min(end);
                            let part = &data[(at - offset) as usize..(to - offset) as usize];
                            stats.volatile_sectors += 1;
                            if rand.unit() < draw.keep {
                                if part.len() > 1 && rand.unit() < draw.tear {
                                    stats.torn_sectors += 1;
                                    let prefix = 1 + rand.below(part.len() as u64 - 1) as usize;
                                    put(&mut bytes, at, &part[..prefix]);
                                } else {
                                    put(&mut bytes, at, part);
                                }
                            } else {
                                stats.dropped_sectors += 1;
                            }
                            at = to;
                        }
                    }
                    Change::SetSize(_) | Change::Extend(_) => {
                        stats.volatile_sectors += 1;
                        if rand.unit() < draw.keep {
                            apply_size(&mut bytes, change);
                        } else {
                            stats.dropped_sectors += 1;
                        }
                    }
                }
            }
            std::fs::write(out.join(name), &bytes)?;
        }
        Ok(stats)
    }
}

fn apply_name_change(names: &mut BTreeMap<String, usize>, change: &NameChange) {
    match change {
        NameChange::Link(name, id) => {
            names.insert(name.clone(), *id);
        }
        NameChange::Unlink(name) => {
            names.remove(name);
        }
        NameChange::Rename(from, to) => {
            if let Some(id) = names.remove(from) {
                names.insert(to.clone(), id);
            }
        }
    }
}

fn put(bytes: &mut Vec<u8>, at: u64, data: &[u8]) {
    let at = at as usize;
    if bytes.len() < at + data.len() {
        bytes.resize(at + data.len(), 0);
    }
    bytes[at..at + data.len()].copy_from_slice(data);
}

fn apply_size(bytes: &mut Vec<u8>, change: &Change) {
    match change {
        Change::SetSize(size) => bytes.resize(*size as usize, 0),
        Change::Extend(size) => {
            if (bytes.len() as u64) < *size {
                bytes.resize(*size as usize, 0);
            }
        }
        Change::Write { .. } => unreachable!(),
    }
}

/// A change as a sync makes it durable: whole.
fn apply_whole(bytes: &mut Vec<u8>, change: &Change, log: &Log) {
    match change {
        Change::Write { offset, record } => {
            let Op::Write { data, .. } = &log.ops[*record] else { unreachable!() };
            put(bytes, *offset, log.data(data));
        }
        other => apply_size(bytes, other),
    }
}

#[cfg(test)]
mod tests {
    //! The model on hand-made logs, as the shim would write them.
    use super::*;

    #[derive(Default)]
    struct LogBuilder {
        bytes: Vec<u8>,
    }

    impl LogBuilder {
        fn record(&mut self, op: u8, ino: u64, body: &[u8]) -> &mut Self {
            self.bytes.extend_from_slice(&(16 + body.len() as u32).to_le_bytes());
            self.bytes.extend_from_slice(&[op, 0, 0, 0]);
            self.bytes.extend_from_slice(&ino.to_le_bytes());
            self.bytes.extend_from_slice(body);
            self
        }
        fn open(&mut self, ino: u64, name: &str) -> &mut Self {
            let mut body = 0o102u32.to_le_bytes().to_vec();
            body.extend_from_slice(&(name.len() as u16).to_le_bytes());
            body.extend_from_slice(name.as_bytes());
            self.record(1, ino, &body)
        }
        fn write(&mut self, ino: u64, offset: u64, data: &[u8]) -> &mut Self {
            let mut body = offset.to_le_bytes().to_vec();
            body.extend_from_slice(data);
            self.record(2, ino, &body)
        }
        fn sync(&mut self, ino: u64, before: u64, dir: bool) -> &mut Self {
            let mut body = before.to_le_bytes().to_vec();
            body.push(u8::from(dir));
            self.record(4, ino, &body)
        }
        fn unlink(&mut self, name: &str) -> &mut Self {
            let mut body = (name.len() as u16).to_le_bytes().to_vec();
            body.extend_from_slice(name.as_bytes());
            self.record(5, 0, &body)
        }
        fn log(&self) -> Log {
            let (mut ops, mut ends, mut at) = (Vec::new(), Vec::new(), 0);
            while let Some((op, len)) = crate::oplog::parse_one(&self.bytes, at) {
                at += len;
                ops.push(op);
                ends.push(at as u64);
            }
            Log { bytes: self.bytes.clone(), ops, ends }
        }
    }

    const NOTHING: CutDraw = CutDraw { keep: 0.0, tear: 0.0, names_kept: 0.0 };
    const EVERYTHING: CutDraw = CutDraw { keep: 1.0, tear: 0.0, names_kept: 1.0 };

    /// The directory a cut after the first `at` records leaves: name -> bytes.
    fn cut(base: Vec<(String, u64, Vec<u8>)>, log: &Log, at: usize, draw: CutDraw) -> (BTreeMap<String, Vec<u8>>, CutStats) {
        let mut disk = Disk::new(base);
        while disk.applied() < at {
            disk.apply(log);
        }
        let dir = tempfile::tempdir().unwrap();
        let stats = disk.cut(log, draw, &mut Rand::new(7), dir.path()).unwrap();
        let files = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap())
            .map(|e| (e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path()).unwrap()))
            .collect();
        (files, stats)
    }

    #[test]
    fn a_sync_makes_durable_only_what_was_written_before_it_was_called() {
        let base = vec![("f".to_string(), 1, vec![b'a'; 1024])];
        let mut b = LogBuilder::default();
        // 0: write b; 1: a sync called before it returned 0 (covers record 0);
        // 2: write c; 3: a sync called before record 2 returns: it does not cover it.
        b.write(1, 0, &[b'b'; 512]).sync(1, 1, false).write(1, 512, &[b'c'; 512]).sync(1, 2, false);
        let log = b.log();
        let (files, stats) = cut(base.clone(), &log, 4, NOTHING);
        assert_eq!(files["f"], [vec![b'b'; 512], vec![b'a'; 512]].concat());
        assert_eq!((stats.volatile_sectors, stats.dropped_sectors), (1, 1));
        let (files, _) = cut(base.clone(), &log, 4, EVERYTHING);
        assert_eq!(files["f"], [vec![b'b'; 512], vec![b'c'; 512]].concat());
        // Before the first sync returned, nothing of it is durable.
        let (files, _) = cut(base, &log, 1, NOTHING);
        assert_eq!(files["f"], vec![b'a'; 1024]);
    }

    #[test]
    fn a_new_file_is_there_only_once_its_directory_is_synced() {
        let mut b = LogBuilder::default();
        b.open(9, "new").write(9, 0, b"data").sync(9, 2, false).sync(0, 3, true);
        let log = b.log();
        let (files, _) = cut(vec![], &log, 3, NOTHING);
        assert!(!files.contains_key("new"), "{files:?}");
        let (files, _) = cut(vec![], &log, 4, NOTHING);
        assert_eq!(files["new"], b"data");
    }

    #[test]
    fn an_unlink_is_undone_by_a_cut_before_the_directory_sync() {
        let base = vec![("old".to_string(), 3, b"kept".to_vec())];
        let mut b = LogBuilder::default();
        b.unlink("old").sync(0, 1, true);
        let log = b.log();
        assert_eq!(cut(base.clone(), &log, 1, NOTHING).0["old"], b"kept");
        assert!(!cut(base, &log, 2, NOTHING).0.contains_key("old"));
    }

    #[test]
    fn volatile_writes_are_kept_lost_or_torn_sector_by_sector() {
        let base = vec![("f".to_string(), 1, vec![0u8; 4096])];
        let mut b = LogBuilder::default();
        b.write(1, 0, &[1u8; 4096]);
        let log = b.log();
        let (files, stats) = cut(base.clone(), &log, 1, CutDraw { keep: 0.5, tear: 0.0, names_kept: 0.0 });
        assert_eq!(stats.volatile_sectors, 8);
        let kept: Vec<bool> = files["f"].chunks(512).map(|s| s.iter().all(|&x| x == 1)).collect();
        assert!(files["f"].chunks(512).all(|s| s.iter().all(|&x| x == 1) || s.iter().all(|&x| x == 0)));
        assert_eq!(kept.iter().filter(|&&k| !k).count() as u64, stats.dropped_sectors);
        let (files, stats) = cut(base, &log, 1, CutDraw { keep: 1.0, tear: 1.0, names_kept: 0.0 });
        assert_eq!(stats.torn_sectors, 8);
        for sector in files["f"].chunks(512) {
            let new = sector.iter().take_while(|&&x| x == 1).count();
            assert!((1..512).contains(&new) && sector[new..].iter().all(|&x| x == 0), "a torn sector is a prefix of the new bytes");
        }
    }
}
