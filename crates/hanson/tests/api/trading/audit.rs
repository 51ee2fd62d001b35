//! `hanson audit` finds what the API cannot do: records that name another market's outcome
//! or no wallet, a candle width that covers no point, a record number taken twice.

use reqwest::StatusCode;

use super::support::library::Db;
use super::support::*;

#[tokio::test]
async fn the_audit_finds_trades_positions_and_points_that_name_another_markets_outcome_or_no_wallet() {
    let a = Arena::new(1, 100 * ONE_TOKEN).await;
    let r = a.bet(&a.traders[0], 0, ONE_TOKEN).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let trade_id = r.body["bet_id"].as_str().unwrap().to_string();
    let (ok, report) = audit(&a.f.app);
    assert!(ok, "{report}");

    let other = a.f.market(2).await;
    let stray = other["outcomes"][0]["id"].as_str().unwrap().to_string();
    let position_id = r.body["position_id"].as_str().unwrap().to_string();
    let (market, trade, position) = (a.market_id().to_string(), trade_id.clone(), position_id.clone());
    let db = Db::open(&a.f.app.database_url);
    let point = db.int("SELECT max(seq) FROM price_points WHERE market_id = $1", &[(&market).into()]).await;
    db.exec_all(vec![
        ("UPDATE trades SET outcome_id = $1 WHERE id = $2".into(), vec![(&stray).into(), (&trade).into()]),
        ("UPDATE positions SET outcome_id = $1 WHERE id = $2".into(), vec![(&stray).into(), (&position).into()]),
        ("UPDATE price_points SET outcome_id = $1 WHERE seq = $2".into(), vec![(&stray).into(), point.into()]),
    ])
    .await
    .unwrap();
    let stray = other["outcomes"][0]["id"].as_str().unwrap();
    let market = a.market_id();
    let mut expected = vec![
        format!("trade {trade_id}: outcome {stray} is not an outcome of its market {market}"),
        format!("position {position_id}: outcome {stray} is not an outcome of its market {market}"),
        format!("price point {point}: outcome {stray} is not an outcome of its market {market}"),
        // The position's shares went with it.
        format!("market {market} outcome {}: total_shares {} but positions hold 0", a.outcome(0), r.body["shares_purchased"].as_str().unwrap()),
    ];
    // Only PostgreSQL lets a trade name a wallet that does not exist (migration 0015).
    if BACKEND == Backend::Postgres {
        db.exec("UPDATE trades SET wallet_id = 'no-such-wallet' WHERE id = $1", &[(&trade_id).into()]).await.unwrap();
        expected.insert(1, format!("trade {trade_id}: wallet no-such-wallet does not exist"));
    }
    let (ok, report) = audit(&a.f.app);
    assert!(!ok, "{report}");
    let problems: Vec<&str> = report.lines().skip(1).map(|l| l.trim_start_matches("  - ")).collect();
    assert_eq!(problems, expected, "{report}");
}

/// Candles of every width must cover each of the market's price points once: a width whose
/// candles are all gone covers none.
#[tokio::test]
async fn the_audit_finds_a_candle_width_that_covers_no_price_point() {
    use super::support::library::CANDLE_HOUR as HOUR;
    let a = Arena::new(1, 100 * ONE_TOKEN).await;
    let r = a.bet(&a.traders[0], 0, ONE_TOKEN).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let (ok, report) = audit(&a.f.app);
    assert!(ok, "{report}");
    let db = Db::open(&a.f.app.database_url);
    db.exec("DELETE FROM price_candles WHERE market_id = $1 AND width = $2", &[a.market_id().into(), HOUR.into()]).await.unwrap();
    let (ok, report) = audit(&a.f.app);
    assert!(!ok, "{report}");
    let problems: Vec<&str> = report.lines().skip(1).map(|l| l.trim_start_matches("  - ")).collect();
    // One point for each of the market's two outcomes.
    assert_eq!(problems, vec![format!("market {}: candles {HOUR} µs wide cover 0 price points, not 2", a.market_id())], "{report}");
}

/// Transfers, trades and price points have no primary key on PostgreSQL (migration 0018):
/// the audit finds a number two records share. On SQLite the number is the rowid, and the
/// database itself refuses the duplicate.
#[tokio::test]
async fn the_audit_finds_a_transfer_trade_or_price_point_number_taken_twice() {
    let a = Arena::new(1, 100 * ONE_TOKEN).await;
    for outcome in [0, 1] {
        let r = a.bet(&a.traders[0], outcome, ONE_TOKEN).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    }
    let (ok, report) = audit(&a.f.app);
    assert!(ok, "{report}");
    let db = Db::open(&a.f.app.database_url);
    // Each table's newest record takes the number of its oldest, in one transaction; no
    // amount changes.
    let mut taken = Vec::new();
    let mut renumber = Vec::new();
    for (table, column) in [("transfers", "id"), ("trades", "seq"), ("price_points", "seq")] {
        let first = db.int(&format!("SELECT min({column}) FROM {table}"), &[]).await;
        let last = db.int(&format!("SELECT max({column}) FROM {table}"), &[]).await;
        renumber.push((format!("UPDATE {table} SET {column} = $1 WHERE {column} = $2"), vec![first.into(), last.into()]));
        taken.push(first);
    }
    let renumbered = db.exec_all(renumber).await.map(|()| taken);
    match BACKEND {
        Backend::Sqlite => assert!(renumbered.is_err(), "SQLite let two records share a rowid"),
        Backend::Postgres => {
            let taken = renumbered.expect("renumber the newest records");
            let (ok, report) = audit(&a.f.app);
            assert!(!ok, "{report}");
            let problems: Vec<&str> = report.lines().skip(1).map(|l| l.trim_start_matches("  - ")).collect();
            let expected: Vec<String> = ["transfer", "trade", "price point"]
                .iter()
                .zip(&taken)
                .map(|(record, number)| format!("{record} number {number} is taken by 2 records"))
                .collect();
            assert_eq!(problems, expected, "{report}");
        }
    }
}
