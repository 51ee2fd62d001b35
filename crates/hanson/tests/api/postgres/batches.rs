//! PostgreSQL trade batches (`store::postgres::batch`): trades submitted together share
//! transactions, and one that fails fails alone, whether it is refused before writing, fails
//! after writing, or its deferred write is refused at the batch's end. Its batch mates are
//! committed, each once.

use std::collections::BTreeSet;

use hanson::error::Error;
use hanson::store::sql::Param;
use hanson::store::{Store, TradeKeys};

use super::support::TestDatabase;

const TRADES: usize = 60;

fn keys(i: usize) -> TradeKeys {
    // Keys that name nothing: the batch reads no row ahead for them.
    TradeKeys { session_id: format!("s{i}"), wallet_id: format!("w{i}"), market_id: "m".into(), outcome_id: "o".into() }
}

/// Batches rolled back and run again trade by trade, in this process so far.
fn batches_run_again() -> u64 {
    hanson::metrics::metrics().write_retries.get_or_create(&[("cause", "batch")]).get()
}

#[derive(Debug, PartialEq)]
enum Fate {
    Committed,
    RefusedBeforeWriting,
    FailedAfterWriting,
    RefusedAtTheEnd,
}

fn fate(i: usize) -> Fate {
    match i % 10 {
        3 => Fate::RefusedBeforeWriting,
        7 => Fate::FailedAfterWriting,
        9 => Fate::RefusedAtTheEnd,
        _ => Fate::Committed,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trade_that_fails_in_a_batch_fails_alone() {
    let db = TestDatabase::create();
    let store = Store::open(&db.url).expect("open the store");
    store
        .write(|c| {
            c.exec("CREATE TABLE scratch (name TEXT PRIMARY KEY)", &[])?;
            c.exec("INSERT INTO scratch (name) VALUES ('taken')", &[]).map(|_| ())
        })
        .await
        .expect("create the scratch table");
    let before = batches_run_again();
    let writes: Vec<_> = (0..TRADES)
        .map(|i| {
            let store = store.clone();
            tokio::spawn(async move {
                store
                    .trade(keys(i), move |c| {
                        let name = format!("t{i}");
                        match fate(i) {
                            Fate::RefusedBeforeWriting => return Err(Error::rule("refused", "refused before writing")),
                            Fate::FailedAfterWriting => {
                                c.exec("INSERT INTO scratch (name) VALUES ($1)", &[Param::Text(&name)])?;
                                return Err(Error::rule("late", "failed after writing"));
                            }
                            // A deferred write the database refuses when the batch sends it.
                            Fate::RefusedAtTheEnd => c.exec_later("INSERT INTO scratch (name) VALUES ($1)", &[Param::Text("taken")])?,
                            Fate::Committed => c.exec_later("INSERT INTO scratch (name) VALUES ($1)", &[Param::Text(&name)])?,
                        }
                        Ok(i)
                    })
                    .await
            })
        })
        .collect();
    for (i, write) in writes.into_iter().enumerate() {
        let result = write.await.expect("write task");
        match fate(i) {
            Fate::Committed => assert_eq!(result.ok(), Some(i), "trade {i}"),
            Fate::RefusedBeforeWriting => assert!(matches!(result, Err(Error::Rule { code: "refused", .. })), "trade {i}: {result:?}"),
            Fate::FailedAfterWriting => assert!(matches!(result, Err(Error::Rule { code: "late", .. })), "trade {i}: {result:?}"),
            Fate::RefusedAtTheEnd => assert!(result.is_err(), "trade {i} wrote a taken name: {result:?}"),
        }
    }
    let stored: BTreeSet<String> = store
        .read(|c| c.query("SELECT name FROM scratch", &[])?.iter().map(|r| r.text(0)).collect())
        .await
        .expect("read the scratch table");
    let mut expected: BTreeSet<String> = (0..TRADES).filter(|i| fate(*i) == Fate::Committed).map(|i| format!("t{i}")).collect();
    expected.insert("taken".into());
    assert_eq!(stored, expected);
    assert!(batches_run_again() > before, "no batch was rolled back and run again trade by trade");
}

/// Key of the trade batches' advisory lock (`store::postgres::batch`).
const TRADE_BATCH_LOCK: i64 = 0x0068_616e_736f_6e01;

async fn submit_wave(store: &Store, wave: &str, count: usize) -> Vec<tokio::task::JoinHandle<Result<(), Error>>> {
    (0..count)
        .map(|i| {
            let store = store.clone();
            let name = format!("{wave}{i}");
            tokio::spawn(async move {
                store
                    .trade(keys(i), move |c| {
                        c.exec_later("INSERT INTO scratch (name, xid) VALUES ($1, pg_current_xact_id()::text)", &[Param::Text(&name)])
                    })
                    .await
            })
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trades_arriving_while_another_nodes_batch_holds_the_lock_join_the_waiting_batch() {
    let db = TestDatabase::create();
    let store = Store::open(&db.url).expect("open the store");
    store
        .write(|c| c.exec("CREATE TABLE scratch (name TEXT PRIMARY KEY, xid TEXT NOT NULL)", &[]).map(|_| ()))
        .await
        .expect("create the scratch table");
    // Another node's batch: the batch lock, held for a while.
    let (locked, is_locked) = std::sync::mpsc::channel();
    let url = db.url.clone();
    let holder = std::thread::spawn(move || {
        let mut other_node = postgres::Client::connect(&url, postgres::NoTls).expect("connect as another node");
        let mut batch = other_node.transaction().expect("BEGIN");
        batch.execute("SELECT pg_advisory_xact_lock($1)", &[&TRADE_BATCH_LOCK]).expect("take the batch lock");
        locked.send(()).expect("say the lock is held");
        std::thread::sleep(std::time::Duration::from_millis(600));
        batch.commit().expect("COMMIT");
    });
    is_locked.recv().expect("the other node took the lock");
    let mut waves = submit_wave(&store, "a", 20).await;
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    waves.extend(submit_wave(&store, "b", 20).await);
    for write in waves {
        write.await.expect("write task").expect("a trade that waited for the lock");
    }
    holder.join().expect("the other node's batch");
    // Then with the lock free again: the next batches take it first, then their trades.
    for write in submit_wave(&store, "c", 20).await.into_iter().chain(submit_wave(&store, "d", 5).await) {
        write.await.expect("write task").expect("a trade after the wait");
    }
    let rows: Vec<(String, String)> = store
        .read(|c| c.query("SELECT name, xid FROM scratch", &[])?.iter().map(|r| Ok((r.text(0)?, r.text(1)?))).collect())
        .await
        .expect("read the scratch table");
    let names: BTreeSet<&str> = rows.iter().map(|(name, _)| name.as_str()).collect();
    let expected: BTreeSet<String> =
        ["a", "b", "c"].iter().flat_map(|w| (0..20).map(move |i| format!("{w}{i}"))).chain((0..5).map(|i| format!("d{i}"))).collect();
    assert_eq!(names, expected.iter().map(String::as_str).collect(), "every trade committed once");
    assert_eq!(rows.len(), 65);
    // The trades that arrived while the batch waited for the lock, the first wave's and the
    // second's, joined it: one transaction.
    let waited: BTreeSet<&str> =
        rows.iter().filter(|(name, _)| name.starts_with('a') || name.starts_with('b')).map(|(_, xid)| xid.as_str()).collect();
    assert_eq!(waited.len(), 1, "the trades that waited for the lock ran in {} transactions", waited.len());
}
