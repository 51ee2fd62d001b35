//! Cut points: where in the log the power goes, what the disk model leaves each time, and
//! the checks of what SQLite and `hanson audit` make of it.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{mpsc, Arc, Mutex};

use crate::disk::{CutDraw, CutStats, Disk, Rand};
use crate::oplog::{Log, Op};
use crate::record::{Ack, Recording, DB_NAME};

/// Why a cut point was chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Why {
    /// Anywhere in the log after trading began.
    Random,
    /// Just before a sync returned (the cut leaves it undone) or just after.
    BeforeSync,
    AfterSync,
    /// While a checkpoint copies the WAL into the database file (after one of its writes).
    InCheckpoint,
    /// Just before or after the sync of the database file that ends a checkpoint.
    AroundCheckpointSync,
    /// Just after the WAL header that starts the WAL over (before or after its sync).
    AroundWalRestart,
}

#[derive(Clone, Debug)]
pub(crate) struct Cut {
    /// The records that happened: the first `at`.
    pub at: usize,
    pub why: Why,
    pub mode: &'static str,
    pub draw: CutDraw,
    pub seed: u64,
}

/// What the log's records are, for choosing cut points.
pub(crate) struct Landmarks {
    pub trading_from: usize,
    pub syncs: Vec<usize>,
    pub db_writes: Vec<usize>,
    pub db_syncs: Vec<usize>,
    pub wal_headers: Vec<usize>,
    /// Checkpoints during trading: (first write to the database file, its sync).
    pub checkpoints: Vec<(usize, usize)>,
}

impl Landmarks {
    pub(crate) fn find(log: &Log, recording: &Recording) -> Landmarks {
        let wal_name = format!("{DB_NAME}-wal");
        let mut role: HashMap<u64, &str> = HashMap::new();
        for (name, ino, _) in &recording.base {
            if *name == DB_NAME {
                role.insert(*ino, "db");
            } else if *name == wal_name {
                role.insert(*ino, "wal");
            }
        }
        let trading_from = log.records_at(recording.trading_from);
        let mut marks =
            Landmarks { trading_from, syncs: vec![], db_writes: vec![], db_syncs: vec![], wal_headers: vec![], checkpoints: vec![] };
        let mut checkpoint_from = None;
        for (i, op) in log.ops.iter().enumerate() {
            match op {
                Op::Open { ino, name, .. } => {
                    role.insert(
                        *ino,
                        if *name == DB_NAME {
                            "db"
                        } else if *name == wal_name {
                            "wal"
                        } else {
                            "other"
                        },
                    );
                }
                Op::Write { ino, offset, .. } => match role.get(ino) {
                    Some(&"db") => {
                        marks.db_writes.push(i);
                        checkpoint_from.get_or_insert(i);
                    }
                    Some(&"wal") if *offset == 0 => marks.wal_headers.push(i),
                    _ => {}
                },
                Op::Sync { ino, dir, .. } => {
                    marks.syncs.push(i);
                    if !dir && role.get(ino) == Some(&"db") {
                        marks.db_syncs.push(i);
                        if let Some(from) = checkpoint_from.take() {
                            if from >= trading_from {
                                marks.checkpoints.push((from, i));
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        marks
    }

    pub(crate) fn in_checkpoint(&self, at: usize) -> bool {
        self.checkpoints.iter().any(|&(from, sync)| from < at && at <= sync)
    }
}

fn draw_for(rand: &mut Rand) -> (&'static str, CutDraw) {
    let roll = rand.unit();
    let (mode, keep, tear) = if roll < 0.25 {
        // Only what was synced.
        ("synced-only", 0.0, 0.0)
    } else if roll < 0.65 {
        ("random", rand.unit(), 0.25)
    } else if roll < 0.85 {
        ("most", 0.9, 0.1)
    } else {
        // A process crash: every write reached the page cache.
        ("all-written", 1.0, 0.0)
    };
    let names_kept = match mode {
        "synced-only" => 0.0,
        "all-written" => 1.0,
        _ => rand.unit(),
    };
    (mode, CutDraw { keep, tear, names_kept })
}

/// `count` cut points, no point twice: 30% just before or after syncs; 30% around
/// checkpoints (each database sync that ends one, before and after, and each WAL header that
/// starts the WAL over, just after it is written and after its sync, as many as fit; the
/// rest just after one of a checkpoint's writes); the rest anywhere after trading began.
pub(crate) fn choose(log: &Log, marks: &Landmarks, count: usize, seed: u64) -> Vec<(usize, Why)> {
    let n = log.ops.len();
    let mut rand = Rand::new(seed);
    let mut chosen: BTreeSet<(usize, Why)> = BTreeSet::new();
    let mut taken: HashSet<usize> = HashSet::new();
    let mut add = |at: usize, why: Why, chosen: &mut BTreeSet<(usize, Why)>| {
        if at >= marks.trading_from && at <= n && taken.insert(at) {
            chosen.insert((at, why));
        }
    };
    let after_start = |v: &Vec<usize>| -> Vec<usize> { v.iter().copied().filter(|&s| s >= marks.trading_from).collect() };
    let (syncs, ckpt_writes, db_syncs, headers) =
        (after_start(&marks.syncs), after_start(&marks.db_writes), after_start(&marks.db_syncs), after_start(&marks.wal_headers));
    let share = count * 3 / 10;

    let mut tries = 0;
    while chosen.len() < share && !syncs.is_empty() && tries < share * 20 {
        tries += 1;
        let s = syncs[rand.below(syncs.len() as u64) as usize];
        if rand.below(2) == 0 {
            add(s, Why::BeforeSync, &mut chosen)
        } else {
            add(s + 1, Why::AfterSync, &mut chosen)
        }
    }

    let from = chosen.len();
    let mut exact: Vec<(usize, Why)> =
        db_syncs.iter().flat_map(|&d| [(d, Why::AroundCheckpointSync), (d + 1, Why::AroundCheckpointSync)]).collect();
    exact.extend(headers.iter().flat_map(|&h| (1..=3).map(move |i| (h + i, Why::AroundWalRestart))));
    for i in (1..exact.len()).rev() {
        exact.swap(i, rand.below(i as u64 + 1) as usize);
    }
    for (at, why) in exact.into_iter().take(share / 2) {
        add(at, why, &mut chosen);
    }
    let mut tries = 0;
    while chosen.len() - from < share && !ckpt_writes.is_empty() && tries < share * 20 {
        tries += 1;
        add(ckpt_writes[rand.below(ckpt_writes.len() as u64) as usize] + 1, Why::InCheckpoint, &mut chosen);
    }

    let span = (n - marks.trading_from.min(n)) as u64 + 1;
    let mut tries = 0;
    while chosen.len() < count && tries < count * 50 {
        tries += 1;
        add(marks.trading_from + rand.below(span) as usize, Why::Random, &mut chosen);
    }
    chosen.into_iter().collect()
}

/// What one cut point came to.
#[derive(Debug)]
pub(crate) struct Verdict {
    pub cut: Cut,
    pub stats: CutStats,
    /// Trades acknowledged before the cut.
    pub acked: usize,
    pub missing: Vec<Ack>,
    pub integrity: Vec<String>,
    pub audit_ok: bool,
    pub audit: String,
    pub error: Option<String>,
    pub kept: Option<PathBuf>,
}

impl Verdict {
    pub(crate) fn failed(&self) -> bool {
        !self.missing.is_empty() || self.integrity != ["ok"] || !self.audit_ok || self.error.is_some()
    }
}

/// Checks one rebuilt directory with SQLite's own VFS and `hanson audit`.
fn check(bin: &Path, dir: &Path, acked: &[Ack]) -> (Vec<Ack>, Vec<String>, bool, String, Option<String>) {
    let db = dir.join(DB_NAME);
    if !db.exists() {
        return (acked.to_vec(), vec![], false, String::new(), Some("the database file is gone".into()));
    }
    let read = (|| -> rusqlite::Result<(Vec<String>, HashSet<String>)> {
        let conn = rusqlite::Connection::open_with_flags(
            &db,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        let integrity = conn.prepare("PRAGMA integrity_check")?.query_map([], |r| r.get::<_, String>(0))?.collect::<Result<Vec<_>, _>>()?;
        let ids = conn.prepare("SELECT id FROM trades")?.query_map([], |r| r.get::<_, String>(0))?.collect::<Result<HashSet<_>, _>>()?;
        Ok((integrity, ids))
    })();
    let (integrity, ids, error) = match read {
        Ok((integrity, ids)) => (integrity, ids, None),
        Err(e) => (vec![], HashSet::new(), Some(format!("SQLite: {e}"))),
    };
    let missing = acked.iter().filter(|a| !ids.contains(&a.trade_id)).cloned().collect();
    let out =
        Command::new(bin).args(["audit", "--database-url", &format!("sqlite://{}", db.display())]).output().expect("run hanson audit");
    let mut audit = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() {
        audit.push_str(String::from_utf8_lossy(&out.stderr).trim());
    }
    (missing, integrity, out.status.success(), audit, error)
}

pub(crate) struct Run<'a> {
    pub bin: &'a Path,
    pub log: &'a Log,
    pub recording: &'a Recording,
    pub cuts: Vec<Cut>,
    /// Where the rebuilt directories go (each removed once checked, unless `keep`).
    pub scratch: &'a Path,
    pub keep: Option<&'a Path>,
    pub workers: usize,
}

/// Builds every cut's directory in one pass over the log and checks them on `workers`
/// threads as they come.
pub(crate) fn run(run: Run<'_>) -> Vec<Verdict> {
    let Run { bin, log, recording, mut cuts, scratch, keep, workers } = run;
    cuts.sort_by_key(|c| c.at);
    // Acknowledged trades in the order the log reached them.
    let mut acks: Vec<(usize, Ack)> = recording.acks.iter().map(|a| (log.records_at(a.log_len), a.clone())).collect();
    acks.sort_by_key(|(at, _)| *at);
    let acks: Arc<Vec<(usize, Ack)>> = Arc::new(acks);
    let (send, receive) = mpsc::sync_channel::<(Cut, CutStats, PathBuf)>(workers);
    let receive = Arc::new(Mutex::new(receive));
    let verdicts = Arc::new(Mutex::new(Vec::new()));
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let (receive, verdicts, acks) = (receive.clone(), verdicts.clone(), acks.clone());
            scope.spawn(move || loop {
                let next = receive.lock().unwrap().recv();
                let Ok((cut, stats, dir)) = next else { break };
                let before = acks.partition_point(|(at, _)| *at <= cut.at);
                let acked: Vec<Ack> = acks[..before].iter().map(|(_, a)| a.clone()).collect();
                let (missing, integrity, audit_ok, audit, error) = check(bin, &dir, &acked);
                let mut verdict = Verdict { cut, stats, acked: acked.len(), missing, integrity, audit_ok, audit, error, kept: None };
                if let (true, Some(keep)) = (verdict.failed(), keep) {
                    let to = keep.join(format!("cut-{}", verdict.cut.at));
                    let _ = std::fs::remove_dir_all(&to);
                    let _ = std::fs::create_dir_all(keep);
                    if std::fs::rename(&dir, &to).is_err() {
                        let _ = copy_dir(&dir, &to);
                    }
                    verdict.kept = Some(to);
                }
                let _ = std::fs::remove_dir_all(&dir);
                verdicts.lock().unwrap().push(verdict);
            });
        }
        let mut disk = Disk::new(recording.base.clone());
        for cut in cuts {
            while disk.applied() < cut.at {
                disk.apply(log);
            }
            let dir = scratch.join(format!("cut-{}", cut.at));
            std::fs::create_dir_all(&dir).expect("cut dir");
            let mut rand = Rand::new(cut.seed);
            let stats = disk.cut(log, cut.draw, &mut rand, &dir).expect("write the cut");
            send.send((cut, stats, dir)).expect("checkers alive");
        }
        drop(send);
    });
    let mut verdicts = std::mem::take(&mut *verdicts.lock().unwrap());
    verdicts.sort_by_key(|v| v.cut.at);
    verdicts
}

/// The cut points with their draws: modes and seeds from `seed` and the point.
pub(crate) fn plan(log: &Log, marks: &Landmarks, count: usize, seed: u64) -> Vec<Cut> {
    choose(log, marks, count, seed)
        .into_iter()
        .map(|(at, why)| {
            let mut rand = Rand::new(seed ^ (at as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let (mode, draw) = draw_for(&mut rand);
            Cut { at, why, mode, draw, seed: rand.next_u64() }
        })
        .collect()
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        std::fs::copy(entry.path(), to.join(entry.file_name()))?;
    }
    Ok(())
}
