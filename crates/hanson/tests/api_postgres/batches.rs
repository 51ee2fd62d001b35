//! PostgreSQL trade batches (`store::postgres::batch`): trades submitted together share
//! transactions, and one that fails fails alone, whether it is refused before writing, fails
//! after writing, or its deferred write is refused at the batch's end. Its batch mates are
//! committed, each once.

use std::collections::BTreeSet;

use hanson::error::Error;
use hanson::store::sql::Param;
use hanson::store::trading::TradeKeys;
use hanson::store::{Store, Undo};

use crate::helpers::TestDatabase;

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
                    .write_trade(keys(i), Undo::WholeBatch, move |c| {
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
