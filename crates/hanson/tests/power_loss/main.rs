//! Power cuts on the SQLite write path: does every trade the service acknowledged survive
//! one, and is what is left a sound database?
//!
//! Record and replay. `tools/powercut/shim.c`, an LD_PRELOAD library, runs under the real
//! `hanson serve` (debug or release binary as built for this test) and appends every change
//! the process makes to the database's directory to an operation log, with its data: opens,
//! writes, truncations, syncs, unlinks and renames. Nothing in the service changes for it:
//! SQLite's unix VFS and the flusher call libc, so its write path runs whole — the writer's
//! group commits, `wal_writes`' gathered WAL writes, the flusher's `fdatasync` before each
//! reply, the checkpointer and the WAL's restarts. The harness sets up a provider, markets
//! and wallets as the README does (reusing hanson-bench's `api.rs`), then trades with
//! several concurrent clients until the WAL has been checkpointed and started over, noting
//! for every acknowledged trade the log's length when its answer arrived. The server is then
//! killed.
//!
//! Why a shim and not a test VFS inside the service: the flusher's `fdatasync`, the sync every
//! acknowledgement waits for, is made through `std::fs` on a descriptor of its own, outside
//! SQLite, where no SQLite VFS sees it; and a VFS under `wal_writes` would need a test-only
//! switch in the service. The shim needs neither and sees exactly what reaches the kernel.
//! It serialises the recorded calls under one lock so that the log's order is theirs (a sync
//! runs outside it, so writes go on during a sync as they would); that slows them a little.
//!
//! Then for each cut point k (random ones, and ones placed just before and after syncs,
//! inside checkpoints and around WAL restarts), `disk.rs` rebuilds the directory as a power
//! cut after the log's first k records would leave it (its doc says how the model treats
//! synced and unsynced data, torn sectors, creation, unlink, rename and `-shm`), and the
//! rebuilt database is checked with SQLite's own VFS:
//! - every trade acknowledged when the log was at most k long is in `trades`;
//! - `PRAGMA integrity_check` is `ok`;
//! - `hanson audit` exits 0.
//!
//! The test fails naming the cut point, its draw and the missing trades if any check fails,
//! and also if the run did not exercise what it is for: acknowledged trades before most
//! cuts, checkpoints and WAL restarts during trading, cut points inside checkpoints, and cuts
//! that lost unsynced data.
//!
//! Sizes (environment): HANSON_POWER_CUTS cut points per recorded run (200);
//! HANSON_POWER_RUNS recorded runs (1); HANSON_POWER_RESTARTS WAL restarts each run trades
//! through (2); HANSON_POWER_SEED chooses the cut points and their draws (random; the same
//! seed on the same log replays them exactly); HANSON_POWER_KEEP=DIR keeps the log and each
//! failing cut's directory there; HANSON_POWER_FAULT=skip-flusher-sync makes the shim drop
//! the flusher's syncs, a broken service the test must catch (the second test does so on
//! every run with HANSON_POWER_FAULT_CUTS cut points, 40). How to run the long one:
//! crates/hanson-bench/README.md, "Power cuts".

#[allow(dead_code)]
#[path = "../../../hanson-bench/src/api.rs"]
mod api;
#[allow(dead_code)]
#[path = "../../../hanson-bench/src/env.rs"]
mod env;
#[allow(dead_code)]
#[path = "../../../hanson-bench/src/rng.rs"]
mod rng;

mod cuts;
mod disk;
mod oplog;
mod record;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cuts::{Landmarks, Verdict, Why};
use record::Plan;

const BIN: &str = env!("CARGO_BIN_EXE_hanson");

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(v) if !v.is_empty() => v.parse().unwrap_or_else(|_| panic!("{name}={v} is not valid")),
        _ => default,
    }
}

/// Builds the shim with the C compiler Rust links with.
fn build_shim(work: &Path) -> PathBuf {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools/powercut/shim.c");
    let out = work.join("powercut.so");
    let mut last = String::new();
    for cc in ["cc", "gcc", "clang"] {
        match std::process::Command::new(cc)
            .args(["-shared", "-fPIC", "-O2", "-o"])
            .arg(&out)
            .arg(&source)
            .args(["-ldl", "-lpthread"])
            .output()
        {
            Ok(o) if o.status.success() => return out,
            Ok(o) => last = format!("{cc}: {}", String::from_utf8_lossy(&o.stderr)),
            Err(e) => last = format!("{cc}: {e}"),
        }
    }
    panic!("cannot build {}: {last}", source.display());
}

fn scratch_root() -> PathBuf {
    if let Ok(dir) = std::env::var("HANSON_POWER_CUT_DIR") {
        return PathBuf::from(dir);
    }
    // Rebuilt directories are written and read once: memory-backed if the machine has it.
    let shm = Path::new("/dev/shm");
    if shm.is_dir() && tempfile::tempdir_in(shm).is_ok() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    }
}

fn describe(v: &Verdict) -> String {
    let mut s = format!(
        "cut point {} ({:?}, {} keep={:.2} tear={:.2} names={:.2}, seed {:#x}): {} trades acknowledged before it, {} volatile sectors of which {} dropped and {} torn, {} directory changes dropped",
        v.cut.at,
        v.cut.why,
        v.cut.mode,
        v.cut.draw.keep,
        v.cut.draw.tear,
        v.cut.draw.names_kept,
        v.cut.seed,
        v.acked,
        v.stats.volatile_sectors,
        v.stats.dropped_sectors,
        v.stats.torn_sectors,
        v.stats.dropped_name_changes
    );
    if !v.missing.is_empty() {
        let shown: Vec<String> =
            v.missing.iter().take(5).map(|a| format!("{} {} (acknowledged at log byte {})", a.kind, a.trade_id, a.log_len)).collect();
        s += &format!(
            "\n    LOST {} acknowledged trade(s): {}{}",
            v.missing.len(),
            shown.join(", "),
            if v.missing.len() > 5 { ", ..." } else { "" }
        );
    }
    if v.integrity != ["ok"] {
        s += &format!("\n    integrity_check: {:?}", v.integrity.iter().take(5).collect::<Vec<_>>());
    }
    if !v.audit_ok {
        s += &format!("\n    audit failed: {}", v.audit);
    }
    if let Some(e) = &v.error {
        s += &format!("\n    {e}");
    }
    if let Some(kept) = &v.kept {
        s += &format!("\n    kept in {}", kept.display());
    }
    s
}

/// One recorded run and its cut points: the figures, and the cut points that failed.
struct Outcome {
    seed: u64,
    count: usize,
    acks: usize,
    refusals: Vec<String>,
    checkpoints: usize,
    wal_restarts: usize,
    verdicts: Vec<Verdict>,
    in_checkpoint: usize,
    summary: String,
}

impl Outcome {
    fn failed(&self) -> Vec<&Verdict> {
        self.verdicts.iter().filter(|v| v.failed()).collect()
    }

    fn lost(&self) -> usize {
        self.verdicts.iter().map(|v| v.missing.len()).sum()
    }

    fn failure_report(&self) -> String {
        let failed = self.failed();
        format!(
            "{} of {} cut points failed ({} acknowledged trades lost); seed {:#x}; first:\n  {}",
            failed.len(),
            self.verdicts.len(),
            self.lost(),
            self.seed,
            failed.iter().take(5).map(|v| describe(v)).collect::<Vec<_>>().join("\n  ")
        )
    }

    /// Fails unless the run exercised what it is for.
    fn assert_exercised(&self) {
        let n = self.verdicts.len();
        let with_acks = self.verdicts.iter().filter(|v| v.acked > 0).count();
        let dropping = self.verdicts.iter().filter(|v| v.stats.dropped_sectors > 0).count();
        assert!(
            self.acks >= 100,
            "only {} trades were acknowledged; refusals: {:?}",
            self.acks,
            self.refusals.iter().take(5).collect::<Vec<_>>()
        );
        assert!(n * 10 >= self.count * 9, "only {n} of {} cut points could be placed", self.count);
        assert!(
            self.checkpoints >= 1 && self.wal_restarts >= 1,
            "no checkpoint and WAL restart while trading ({} checkpoints, {} WAL headers)",
            self.checkpoints,
            self.wal_restarts
        );
        assert!(with_acks * 10 >= n * 8, "only {with_acks} of {n} cut points came after an acknowledged trade");
        assert!(dropping * 5 >= n, "only {dropping} of {n} cut points dropped unsynced data");
        assert!(self.in_checkpoint >= 1, "no cut point fell inside a checkpoint");
        assert!(self.verdicts.iter().any(|v| v.cut.why == Why::AroundWalRestart), "no cut point around a WAL restart");
    }
}

/// HANSON_POWER_SEED, or a random seed.
fn seed() -> u64 {
    env_or("HANSON_POWER_SEED", {
        let mut b = [0u8; 8];
        getrandom::fill(&mut b).expect("randomness");
        u64::from_le_bytes(b)
    })
}

/// Records one run and checks `count` cut points of it; failing cut directories and the log
/// go to HANSON_POWER_KEEP/`name` if that is set.
fn power_cuts(name: &str, count: usize, restarts: usize, seed: u64, fault: Option<String>) -> Outcome {
    let started = Instant::now();
    let keep = std::env::var("HANSON_POWER_KEEP").ok().map(|k| PathBuf::from(k).join(name));
    eprintln!("{name}: {count} cut points, seed {seed:#x} (HANSON_POWER_SEED), fault {fault:?}");

    let work = tempfile::tempdir().expect("work dir");
    let shim = build_shim(work.path());
    let plan = Plan {
        clients: 8,
        wallets_per_client: 3,
        markets: 12,
        wal_restarts: restarts,
        min_trades: 300,
        max_time: Duration::from_secs(240),
        fault: fault.clone(),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let recording = runtime.block_on(record::record(Path::new(BIN), &shim, work.path(), &plan));
    drop(runtime);
    let recorded = started.elapsed();
    let log = oplog::Log::read(&recording.log).expect("read the log");
    if let Some(keep) = &keep {
        std::fs::create_dir_all(keep).expect("keep dir");
        std::fs::copy(&recording.log, keep.join("ops.log")).expect("keep the log");
    }
    let marks = Landmarks::find(&log, &recording);
    eprintln!(
        "recorded: {} acknowledged trades ({} refused) in {:.1} s of trading; log {} records, {:.1} MiB; {} syncs, {} checkpoints and {} WAL restarts while trading",
        recording.acks.len(),
        recording.refused,
        recording.trading_seconds,
        log.ops.len(),
        log.bytes.len() as f64 / (1 << 20) as f64,
        marks.syncs.iter().filter(|&&s| s >= marks.trading_from).count(),
        marks.checkpoints.len(),
        recording.wal_headers_while_trading,
    );

    let cut_plan = cuts::plan(&log, &marks, count, seed);
    let scratch = tempfile::tempdir_in(scratch_root()).expect("scratch dir");
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(1, 4);
    let verdicts = cuts::run(cuts::Run {
        bin: Path::new(BIN),
        log: &log,
        recording: &recording,
        cuts: cut_plan,
        scratch: scratch.path(),
        keep: keep.as_deref(),
        workers,
    });

    // The figures.
    let failed = verdicts.iter().filter(|v| v.failed()).count();
    let lost: usize = verdicts.iter().map(|v| v.missing.len()).sum();
    let checked: usize = verdicts.iter().map(|v| v.acked).sum();
    let with_acks = verdicts.iter().filter(|v| v.acked > 0).count();
    let dropping = verdicts.iter().filter(|v| v.stats.dropped_sectors > 0).count();
    let torn = verdicts.iter().filter(|v| v.stats.torn_sectors > 0).count();
    let in_checkpoint = verdicts.iter().filter(|v| marks.in_checkpoint(v.cut.at)).count();
    let mut by_why: BTreeMap<String, usize> = BTreeMap::new();
    let mut by_mode: BTreeMap<&str, usize> = BTreeMap::new();
    for v in &verdicts {
        *by_why.entry(format!("{:?}", v.cut.why)).or_default() += 1;
        *by_mode.entry(v.cut.mode).or_default() += 1;
    }
    let summary = format!(
        "checked {} cut points ({by_why:?}; {by_mode:?}): {checked} acknowledged trades looked up ({with_acks} cuts had some), {dropping} cuts dropped unsynced data, {torn} tore sectors, {in_checkpoint} fell inside a checkpoint; {failed} failed, {lost} acknowledged trades lost; {:.1} s ({:.1} s recording)",
        verdicts.len(),
        started.elapsed().as_secs_f64(),
        recorded.as_secs_f64(),
    );
    eprintln!("{summary}");
    for v in verdicts.iter().filter(|v| v.failed()) {
        eprintln!("  {}", describe(v));
    }
    Outcome {
        seed,
        count,
        acks: recording.acks.len(),
        refusals: recording.refusals,
        checkpoints: marks.checkpoints.len(),
        wal_restarts: recording.wal_headers_while_trading,
        verdicts,
        in_checkpoint,
        summary,
    }
}

#[test]
fn acknowledged_trades_survive_power_cuts() {
    let fault = std::env::var("HANSON_POWER_FAULT").ok().filter(|f| !f.is_empty());
    let (runs, cuts, restarts, seed) =
        (env_or("HANSON_POWER_RUNS", 1usize), env_or("HANSON_POWER_CUTS", 200), env_or("HANSON_POWER_RESTARTS", 2), seed());
    let mut outcomes = Vec::new();
    for run in 0..runs {
        let outcome = power_cuts(&format!("run-{run}"), cuts, restarts, seed.wrapping_add(run as u64), fault.clone());
        // A long run goes on past a failure, to count them all.
        if runs == 1 {
            assert!(outcome.failed().is_empty(), "{}", outcome.failure_report());
        }
        outcomes.push(outcome);
    }
    if runs > 1 {
        let failed: usize = outcomes.iter().map(|o| o.failed().len()).sum();
        let lost: usize = outcomes.iter().map(Outcome::lost).sum();
        let points: usize = outcomes.iter().map(|o| o.verdicts.len()).sum();
        let checked: usize = outcomes.iter().flat_map(|o| &o.verdicts).map(|v| v.acked).sum();
        let acks: usize = outcomes.iter().map(|o| o.acks).sum();
        eprintln!("{runs} runs: {acks} acknowledged trades, {points} cut points, {checked} trade look-ups; {failed} cut points failed, {lost} acknowledged trades lost");
        for outcome in &outcomes {
            assert!(outcome.failed().is_empty(), "{}", outcome.failure_report());
        }
    }
    for outcome in &outcomes {
        outcome.assert_exercised();
    }
}

/// The checker catches a service that loses acknowledged trades: here the flusher's syncs
/// do nothing (the shim drops them), as if it replied without syncing.
#[test]
fn a_flusher_that_does_not_sync_loses_acknowledged_trades_and_is_caught() {
    let outcome = power_cuts("fault", env_or("HANSON_POWER_FAULT_CUTS", 40), 1, seed(), Some("skip-flusher-sync".into()));
    assert!(
        outcome.lost() > 0,
        "no acknowledged trade was lost although the flusher never synced: the checker is blind ({})",
        outcome.summary
    );
    assert!(outcome.failed().iter().all(|v| v.error.is_none()), "{}", outcome.failure_report());
}
