//! The writer's group commit: what a failed job takes back, and what it spares.

use super::checkpoints::{CHECKPOINT_FRAMES, MAX_FRAMES};
use super::*;
use crate::error::{Error, Result};
use crate::store::batch::BatchRows;
use crate::store::settings::Undo;
use crate::store::sql::{Conn, Param};

async fn scratch_backend(dir: &tempfile::TempDir) -> SqliteBackend {
    let url = format!("sqlite://{}", dir.path().join("scratch.db").display());
    let backend = SqliteBackend::open(&url).expect("open");
    backend.write(Undo::Savepoint, |c, _| c.exec("CREATE TABLE scratch (name TEXT PRIMARY KEY)", &[])).await.expect("create");
    backend
}

fn insert(c: &mut dyn Conn, name: &str) -> Result<u64> {
    c.exec("INSERT INTO scratch (name) VALUES ($1)", &[Param::Text(name)])
}

async fn names(backend: &SqliteBackend) -> Vec<String> {
    backend.read(|c| c.query("SELECT name FROM scratch ORDER BY name", &[])?.iter().map(|r| r.text(0)).collect()).await.expect("read")
}

/// Submits `first` and then eight savepoint writes at once, so that they tend to share a
/// group commit; returns the result of `first` and those of the eight.
async fn with_batch_mates<F>(backend: &SqliteBackend, first: F) -> (Result<()>, Vec<Result<u64>>)
where
    F: FnOnce(&mut dyn Conn, Option<&mut BatchRows>) -> Result<()> + Send + 'static,
{
    let first = tokio::spawn({
        let backend = backend.clone();
        async move { backend.write(Undo::WholeBatch, first).await }
    });
    let mates: Vec<_> = (0..8)
        .map(|i| {
            let backend = backend.clone();
            tokio::spawn(async move { backend.write(Undo::Savepoint, move |c, _| insert(c, &format!("mate{i}"))).await })
        })
        .collect();
    let first = first.await.expect("task");
    let mut results = Vec::new();
    for mate in mates {
        results.push(mate.await.expect("task"));
    }
    (first, results)
}

#[tokio::test]
async fn a_write_without_savepoint_that_fails_after_writing_takes_its_whole_batch_back() {
    let dir = tempfile::tempdir().expect("temp dir");
    let backend = scratch_backend(&dir).await;
    let (spoiled, mates) = with_batch_mates(&backend, |c, _| {
        insert(c, "spoiled")?;
        Err(Error::rule("late_failure", "failed after writing"))
    })
    .await;
    assert!(matches!(spoiled, Err(Error::Rule { code: "late_failure", .. })), "{spoiled:?}");
    // Each batch mate either failed with nothing written or committed its row.
    let stored = names(&backend).await;
    for (i, result) in mates.iter().enumerate() {
        let name = format!("mate{i}");
        assert_eq!(result.is_ok(), stored.contains(&name), "{name}: {result:?} with {stored:?}");
    }
    assert!(!stored.contains(&"spoiled".to_string()), "{stored:?}");
    // The writer goes on.
    backend.write(Undo::WholeBatch, |c, _| insert(c, "after")).await.expect("write after");
    assert!(names(&backend).await.contains(&"after".to_string()));
}

#[tokio::test]
async fn a_write_without_savepoint_refused_before_writing_spares_its_batch() {
    let dir = tempfile::tempdir().expect("temp dir");
    let backend = scratch_backend(&dir).await;
    let (refused, mates) = with_batch_mates(&backend, |c, _| {
        c.query("SELECT name FROM scratch", &[])?;
        Err(Error::rule("refused", "checked before writing"))
    })
    .await;
    assert!(matches!(refused, Err(Error::Rule { code: "refused", .. })), "{refused:?}");
    assert!(mates.iter().all(|r| r.is_ok()), "{mates:?}");
    assert_eq!(names(&backend).await, (0..8).map(|i| format!("mate{i}")).collect::<Vec<_>>());
}

#[tokio::test]
async fn the_writer_keeps_the_wal_short_by_checkpointing_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let backend = scratch_backend(&dir).await;
    // 300 commits of over 100 fresh pages each (rows and their key index): over 30,000
    // frames without checkpoints.
    for commit in 0..300 {
        backend
            .write(Undo::Savepoint, move |c, _| {
                for row in 0..200 {
                    insert(c, &format!("{commit:03}-{row:03}-{}", "x".repeat(1000)))?;
                }
                Ok(())
            })
            .await
            .expect("write");
    }
    let wal = std::fs::metadata(dir.path().join("scratch.db-wal")).expect("wal").len();
    let frame = 4096 + 24;
    // Checkpoints come after a commit, so one commit may take the WAL past the bound.
    assert!(wal <= (MAX_FRAMES + CHECKPOINT_FRAMES) as u64 * frame, "the WAL grew to {wal} bytes");
    let count = backend.read(|c| c.query_one("SELECT count(*) FROM scratch", &[])?.int(0)).await.expect("count");
    assert_eq!(count, 60_000);
}

#[tokio::test]
async fn a_write_without_savepoint_that_fails_after_changing_kept_rows_takes_its_batch_back() {
    let dir = tempfile::tempdir().expect("temp dir");
    let backend = scratch_backend(&dir).await;
    // Hold the writer so that the next jobs queue up and share one batch.
    let blocker = tokio::spawn({
        let backend = backend.clone();
        async move {
            backend
                .write(Undo::Savepoint, |_, _| {
                    std::thread::sleep(std::time::Duration::from_millis(200));
                    Ok(())
                })
                .await
        }
    });
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    let (spoiled, mates) = with_batch_mates(&backend, |_, rows| {
        rows.expect("the writer keeps rows for trades").defer_events("node", Vec::new());
        Err(Error::rule("late_failure", "failed after changing a kept balance"))
    })
    .await;
    assert!(matches!(spoiled, Err(Error::Rule { code: "late_failure", .. })), "{spoiled:?}");
    // The blocker shared its batch, which was rolled back whole; the batch took no more
    // jobs after it.
    let blocker = blocker.await.expect("task");
    assert!(matches!(&blocker, Err(e) if e.to_string().contains("failed after writing")), "{blocker:?}");
    let stored = names(&backend).await;
    for (i, result) in mates.iter().enumerate() {
        let name = format!("mate{i}");
        assert_eq!(result.is_ok(), stored.contains(&name), "{name}: {result:?} with {stored:?}");
    }
}

#[tokio::test]
async fn only_writes_without_savepoint_see_kept_rows() {
    let dir = tempfile::tempdir().expect("temp dir");
    let backend = scratch_backend(&dir).await;
    assert!(backend.write(Undo::WholeBatch, |_, rows| Ok(rows.is_some())).await.expect("write"));
    assert!(!backend.write(Undo::Savepoint, |_, rows| Ok(rows.is_some())).await.expect("write"));
}
