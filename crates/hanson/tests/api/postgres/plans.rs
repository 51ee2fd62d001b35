//! Statements planned once per connection (generic plans), without their values: a trade
//! batch's, whose plan lives until the table is analyzed again however much the table grows
//! meanwhile, and a price-history read's.

use hanson::domain::page::{Direction, PageRequest};
use hanson::store::event_log::{changed_seqs_read, current_seqs, current_seqs_read, first_kept_seq};
use hanson::store::history::{self, PriceQuery};
use hanson::store::positions::changed_positions_read;
use hanson::store::sql::{Conn, Dialect, Param, Row};
use hanson::store::Store;

use super::support::{Fixture, TestDatabase};

/// Events of the market after the statistics were taken.
const LATER_EVENTS: i64 = 20_000;

/// A market row `id` with no parents (the caller has set `session_replication_role = replica`),
/// for the batch's reads that join the markets' revisions.
const BARE_MARKET: &str = "INSERT INTO markets (id, provider_id, question, question_lower, description, description_lower, tags, \
    images, metadata, pricing_method, token_id, min_bet, max_bet, liquidity, b, starts_at, ends_at, creator_wallet_id, creator_fee, \
    platform_fee, status, total_volume, trade_count, created_at, updated_at) \
    VALUES ('m', 'p', 'q', 'q', '', '', '[]', '[]', '{}', 'lmsr', 't', 1, 1, 1, 1, 0, 0, 'c', 0, 0, 'active', 0, 0, 0, 0)";

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
            c.exec("SET LOCAL session_replication_role = replica", &[])?;
            c.exec(BARE_MARKET, &[])?;
            c.exec(
                "INSERT INTO events (id, type, created_at, envelope) SELECT 'u' || g, 'deposit', 0, '{}' FROM generate_series(1, 200) AS g",
                &[],
            )?;
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
            let mut rows = rows_read_from_events(c, "EXECUTE last_seqs('m')")?;
            c.exec("DEALLOCATE last_seqs", &[])?;
            // The batch's own read, of a market it has no copy of (revision -1).
            let (sql, _) = changed_seqs_read(&[("m", -1)]);
            c.exec(&format!("PREPARE changed_seqs(text, int8) AS {sql}"), &[])?;
            rows.extend(rows_read_from_events(c, "EXECUTE changed_seqs('m', -1)")?);
            let changed = c
                .query("EXECUTE changed_seqs('m', -1)", &[])?
                .iter()
                .map(|r| Ok((r.text(0)?, r.int(1)?)))
                .collect::<hanson::error::Result<Vec<_>>>()?;
            assert_eq!(changed, vec![("m".to_string(), LATER_EVENTS + 1)]);
            c.exec("DEALLOCATE changed_seqs", &[])?;
            Ok((rows, current_seqs(c, &["m"])?, first_kept_seq(c, "m")?))
        })
        .await
        .expect("plan the batch's read");
    assert_eq!(seqs, vec![("m".to_string(), LATER_EVENTS + 1)]);
    assert_eq!(first, Some(1));
    // One index entry read, not every event of the market, by either read.
    assert_eq!(rows, vec![1, 1], "rows read from events by the last-seq plans");
}

/// Positions of other wallets when the batch's plan is made.
const YOUNG_POSITIONS: i64 = 150;
/// Positions of the one wallet after the batch's plan was made.
const WALLET_POSITIONS: i64 = 2_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batchs_positions_read_probes_each_pair_under_a_plan_made_on_a_young_table() {
    let db = TestDatabase::create();
    let store = Store::open(&db.url).expect("open the store");
    let plan = store
        .write(|c| {
            // Planned once while the table is young, as a batch's early read: the pairs' index,
            // two ids a key, already has a root above its leaves, and an index leading with
            // the wallet alone would not yet, so that its probe would look cheaper.
            c.exec("SET LOCAL session_replication_role = replica", &[])?;
            c.exec(
                &format!(
                    "INSERT INTO positions (id, market_id, outcome_id, wallet_id, shares, total_invested, status, created_at, updated_at) \
                     SELECT gen_random_uuid(), 'm', gen_random_uuid(), gen_random_uuid(), 1, 1, 'active', g, g FROM generate_series(1, {YOUNG_POSITIONS}) AS g"
                ),
                &[],
            )?;
            c.exec("SET LOCAL plan_cache_mode = force_generic_plan", &[])?;
            c.exec(BARE_MARKET, &[])?;
            let (sql, _) = changed_positions_read(&[("w", "o1", "m", -1)]);
            c.exec(&format!("PREPARE positions_of(text, text, text, int8) AS {sql}"), &[])?;
            c.exec("EXECUTE positions_of('w', 'o1', 'm', -1)", &[])?;
            // Then the wallet holds many positions (their parents do not matter here).
            c.exec(
                &format!(
                    "INSERT INTO positions (id, market_id, outcome_id, wallet_id, shares, total_invested, status, created_at, updated_at) \
                     SELECT 'p' || g, 'm', 'o' || g, 'w', 1, 1, 'active', g, g FROM generate_series(1, {WALLET_POSITIONS}) AS g"
                ),
                &[],
            )?;
            let plan = c.query("EXPLAIN (ANALYZE, TIMING OFF) EXECUTE positions_of('w', 'o1', 'm', -1)", &[])?;
            c.exec("DEALLOCATE positions_of", &[])?;
            plan.iter().map(|line| line.text(0)).collect::<hanson::error::Result<Vec<String>>>()
        })
        .await
        .expect("plan the batch's positions read");
    let scans: Vec<&String> = plan.iter().filter(|line| line.contains(" on positions")).collect();
    assert_eq!(scans.len(), 1, "one scan of positions in {plan:#?}");
    assert!(scans[0].contains("Index Scan using positions_wallet_id_outcome_id_key on positions"), "the pair's index in {plan:#?}");
    assert!(scans[0].contains("rows=1 loops=1)"), "one position found in {plan:#?}");
    // One index entry read, not every position of the wallet.
    assert!(!plan.iter().any(|line| line.contains("Rows Removed by Filter")), "positions filtered in {plan:#?}");
}

/// A price-history statement as run, its parameters as SQL types and literals.
type Recorded = (String, Vec<(&'static str, String)>);

/// Runs the store's statements on `inner` and keeps each one's text and arguments.
struct Recording<'c> {
    inner: &'c mut dyn Conn,
    statements: Vec<Recorded>,
}

impl Recording<'_> {
    fn record(&mut self, sql: &str, params: &[Param<'_>]) {
        let literal = |p: &Param<'_>| match p {
            Param::Int(i) => ("bigint", i.to_string()),
            Param::Text(s) => ("text", format!("'{}'", s.replace('\'', "''"))),
            other => panic!("no price-history statement takes {other:?}"),
        };
        self.statements.push((sql.to_string(), params.iter().map(literal).collect()));
    }
}

impl Conn for Recording<'_> {
    fn dialect(&self) -> Dialect {
        self.inner.dialect()
    }

    fn exec(&mut self, sql: &str, params: &[Param<'_>]) -> hanson::error::Result<u64> {
        self.record(sql, params);
        self.inner.exec(sql, params)
    }

    fn query(&mut self, sql: &str, params: &[Param<'_>]) -> hanson::error::Result<Vec<Row>> {
        self.record(sql, params);
        self.inner.query(sql, params)
    }
}

/// Price-history reads plan their statements once per connection, without their values
/// (`Conn::plan_once`). Under statistics of one market holding every point, where a market
/// id matches the whole table as far as such a plan can tell, none may read a history table
/// whole: a plan that did (the candle count with the width as a parameter) took 10 ms
/// against 0.2 ms for an index walk over a month of candles.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn price_history_plans_made_without_values_read_no_history_table_whole() {
    const MINUTE: i64 = 60_000_000;
    const HOUR: i64 = 60 * MINUTE;
    const DAY: i64 = 24 * HOUR;
    const MINUTES: i64 = 30 * 24 * 60;
    let f = Fixture::new().await;
    let market = f.market(2).await;
    let market_id = market["id"].as_str().unwrap().to_string();
    let outcome_id = market["outcomes"][0]["id"].as_str().unwrap().to_string();
    // Whole days, so that the month's points fall in 30 day buckets.
    let start = (hanson::domain::time::now_micros() / DAY - 31) * DAY;
    let store = Store::open(&f.app.database_url).expect("open the store");
    let seeded = market_id.clone();
    store
        .write(move |c| {
            // A point per outcome every minute for 30 days, each trading 1,000 wei.
            c.exec(
                &format!(
                    "INSERT INTO price_points (market_id, outcome_id, price, volume, cum_volume, at) \
                     SELECT o.market_id, o.id, 500000000000000000, 1000, 1000 * g, {start} + g * {MINUTE} \
                     FROM generate_series(CAST(0 AS BIGINT), {}) AS g, outcomes o WHERE o.market_id = $1",
                    MINUTES - 1
                ),
                &[Param::Text(&seeded)],
            )?;
            history::points::rebuild_price_candles(c)?;
            c.exec("ANALYZE price_points", &[])?;
            c.exec("ANALYZE price_candles", &[])?;
            c.exec("ANALYZE outcomes", &[]).map(|_| ())
        })
        .await
        .expect("seed a month of points");

    let query =
        |market: bool, interval: Option<i64>, window: Option<(i64, i64)>, page: i64, per_page: i64, direction: Direction| PriceQuery {
            market_id: market.then(|| market_id.clone()),
            outcome_id: (!market).then(|| outcome_id.clone()),
            from: window.map(|w| w.0),
            to: window.map(|w| w.1),
            interval,
            page: PageRequest { page, per_page },
            direction,
        };
    let week = Some((start + 3 * HOUR + 17 * MINUTE, start + (7 * 24 + 3) * HOUR + 17 * MINUTE));
    let day = Some((start + 5 * HOUR + 30 * MINUTE, start + 29 * HOUR + 30 * MINUTE));
    let queries = [
        query(true, Some(HOUR), None, 8, 100, Direction::Desc),
        query(false, Some(HOUR), week, 2, 100, Direction::Desc),
        query(true, Some(DAY), None, 1, 20, Direction::Asc),
        query(true, Some(5 * MINUTE), day, 3, 100, Direction::Desc),
        query(true, None, day, 20, 90, Direction::Desc),
        query(false, None, None, 30, 100, Direction::Desc),
        query(false, None, None, 30, 100, Direction::Asc),
    ];
    let (statements, totals) = store
        .read(move |c| {
            let mut recording = Recording { inner: c, statements: Vec::new() };
            // Twice: the first pass keeps the hourly candle keys that the second one pages by.
            let keys = history::candle_keys::CandleKeys::default();
            let mut totals = Vec::new();
            for _ in 0..2 {
                totals.push(
                    queries
                        .iter()
                        .map(|q| history::price_history(&mut recording, q, Some(&keys)).map(|p| p.pagination.total))
                        .collect::<hanson::error::Result<Vec<_>>>()?,
                );
            }
            Ok((recording.statements, totals))
        })
        .await
        .expect("read the pages");
    // Hours and days of both outcomes; an outcome's whole hours and its partial ends; 5
    // minute buckets of a day; the points of a day and of a month.
    let expected = vec![2 * 720, 7 * 24 + 1, 2 * 30, 2 * (24 * 12 + 1), 2 * 24 * 60 + 2, MINUTES, MINUTES];
    assert_eq!(totals, vec![expected.clone(), expected]);
    assert!(statements.iter().any(|(sql, _)| sql.contains("AS last_start")), "no page by kept keys among {statements:#?}");
    // The outcome's market is looked up once, then kept.
    let outcome_lookups = statements.iter().filter(|(sql, _)| sql.contains("FROM outcomes WHERE id")).count();
    assert_eq!(outcome_lookups, 1, "outcome lookups among {statements:#?}");
    // The raw pages past their first hundred points seek through the candles' point counts.
    assert!(statements.iter().any(|(sql, _)| sql.contains("SUM(points) OVER")), "no raw seek among {statements:#?}");
    // Hourly pages before the last hour come from the kept candles after a check alone, and
    // raw pages count the minutes of settled hours from the minute candles they kept.
    assert!(
        statements.iter().any(|(sql, _)| sql.starts_with("SELECT (SELECT start") && sql.ends_with("AS last_outcome")),
        "no check-only page among {statements:#?}"
    );
    assert!(statements.iter().any(|(sql, _)| sql.contains("minutes.*")), "no minutes of settled hours read among {statements:#?}");

    let whole_reads = store
        .read(move |c| {
            c.exec("SET LOCAL plan_cache_mode = force_generic_plan", &[])?;
            let mut whole_reads = Vec::new();
            for (i, (sql, args)) in statements.iter().enumerate() {
                let (types, arguments) = if args.is_empty() {
                    (String::new(), String::new())
                } else {
                    let types: Vec<&str> = args.iter().map(|a| a.0).collect();
                    let literals: Vec<&str> = args.iter().map(|a| a.1.as_str()).collect();
                    (format!("({})", types.join(", ")), format!("({})", literals.join(", ")))
                };
                c.exec(&format!("PREPARE history_{i}{types} AS {sql}"), &[])?;
                for line in c.query(&format!("EXPLAIN EXECUTE history_{i}{arguments}"), &[])? {
                    let line = line.text(0)?;
                    if line.contains("Seq Scan on price_") {
                        whole_reads.push(format!("{line} in {sql}"));
                    }
                }
                c.exec(&format!("DEALLOCATE history_{i}"), &[])?;
            }
            Ok(whole_reads)
        })
        .await
        .expect("plan the statements without their values");
    assert_eq!(whole_reads, Vec::<String>::new());
}
