//! Statements whose plans must not depend on fresh statistics. A trade batch plans each
//! statement once per connection (generic plans), and that plan lives until the table is
//! analyzed again, however much the table grows meanwhile.

use hanson::store::events::{current_seqs, current_seqs_read, first_kept_seq};
use hanson::store::sql::Conn;
use hanson::store::Store;

use crate::helpers::TestDatabase;

/// Events of the market after the statistics were taken.
const LATER_EVENTS: i64 = 20_000;

/// The `rows=` of every `actual` figure on the plan lines that read `events`.
fn rows_read_from_events(c: &mut dyn Conn, sql: &str) -> hanson::error::Result<Vec<i64>> {
    let mut rows = Vec::new();
    for line in c.query(&format!("EXPLAIN (ANALYZE, TIMING OFF) {sql}"), &[])? {
        let line = line.text(0)?;
        if !line.contains(" on events") {
            continue;
        }
        let actual = line.split("(actual").nth(1).unwrap_or_else(|| panic!("no actual figures on {line:?}"));
        let count = actual.split("rows=").nth(1).and_then(|r| r.split(' ').next()).and_then(|r| r.parse().ok());
        rows.push(count.unwrap_or_else(|| panic!("no row count on {line:?}")));
    }
    Ok(rows)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_markets_last_seq_is_one_index_step_under_statistics_of_a_young_log() {
    let db = TestDatabase::create();
    let store = Store::open(&db.url).expect("open the store");
    // Statistics taken while the log held mostly events of no market (deposits) and one of
    // market m, then m's log grows: the batch's cached plan estimates one event of m.
    store
        .write(|c| {
            c.exec("INSERT INTO events (id, type, created_at, envelope) SELECT 'u' || g, 'deposit', 0, '{}' FROM generate_series(1, 200) AS g", &[])?;
            c.exec("INSERT INTO events (id, market_id, seq, type, created_at, envelope) VALUES ('m1', 'm', 1, 'trade', 0, '{}')", &[])?;
            c.exec("ANALYZE events", &[])?;
            c.exec(
                &format!(
                    "INSERT INTO events (id, market_id, seq, type, created_at, envelope) \
                     SELECT 'm' || g, 'm', g, 'trade', 0, '{{}}' FROM generate_series(2, {}) AS g",
                    LATER_EVENTS + 1
                ),
                &[],
            )
            .map(|_| ())
        })
        .await
        .expect("fill the log");
    let (rows, seqs, first) = store
        .write(|c| {
            c.exec("SET LOCAL plan_cache_mode = force_generic_plan", &[])?;
            let (sql, _) = current_seqs_read(&["m"]);
            c.exec(&format!("PREPARE last_seqs(text) AS {sql}"), &[])?;
            let rows = rows_read_from_events(c, "EXECUTE last_seqs('m')")?;
            c.exec("DEALLOCATE last_seqs", &[])?;
            Ok((rows, current_seqs(c, &["m"])?, first_kept_seq(c, "m")?))
        })
        .await
        .expect("plan the batch's read");
    assert_eq!(seqs, vec![("m".to_string(), LATER_EVENTS + 1)]);
    assert_eq!(first, Some(1));
    // One index entry read, not every event of the market.
    assert_eq!(rows, vec![1], "rows read from events by the last-seq plan");
}
