//! Bulk seeding straight into the database through `hanson::store::Store`, for data sets that
//! would take too long through the API (100,000 markets, 1,000,000 price points).
//!
//! Markets mirror what `store::markets::create_market` writes: the `markets` row, its
//! `outcomes`, the pool account `pool:<market>` and a `market_funding` transfer from the
//! provider's treasury (whose balance is debited in the same transaction), so `hanson audit`
//! still balances. Settled markets (resolved, cancelled) also get the `surplus` transfer that
//! returned their whole pool to the treasury, as a settlement without positions does.
//! Statements are multi-row INSERTs with literal values (only generated ids, numbers and fixed
//! words; quotes are escaped anyway), written as canonical decimal strings so both SQLite's TEXT
//! and PostgreSQL's NUMERIC(78,0) columns take them exactly.

use std::sync::Arc;
use std::time::Instant;

use hanson::store::sql::{Conn, Param};
use hanson::store::Store;

use crate::api::{Market, Provider, ONE_TOKEN};
use crate::env::Result;
use crate::rng::Rng;
use crate::workers::CATEGORIES;

const HOUR: i64 = 3_600_000_000;
const DAY: i64 = 24 * HOUR;
const MARKETS_PER_TRANSACTION: usize = 2_000;
const ROWS_PER_STATEMENT: usize = 500;

fn q(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

fn money(v: u128) -> String {
    format!("'{v}'")
}

/// One transaction's worth of statements plus the treasury debits it implies.
struct Batch {
    statements: Vec<String>,
    /// (treasury account id, amount to take out)
    debits: Vec<(String, u128)>,
}

async fn apply(store: &Store, batch: Batch) -> Result<()> {
    let batch = Arc::new(batch);
    store
        .write(move |c: &mut dyn Conn| {
            for sql in &batch.statements {
                c.exec(sql, &[])?;
            }
            for (account, debit) in &batch.debits {
                let lock = c.lock_clause();
                let row = c.query_one(&format!("SELECT balance FROM accounts WHERE id = $1{lock}"), &[Param::Text(account)])?;
                let balance = row.money(0)?;
                let after = balance.checked_sub(*debit).ok_or_else(|| {
                    hanson::error::Error::internal(format!("treasury {account} holds {balance}, seeding needs {debit}"))
                })?;
                c.exec("UPDATE accounts SET balance = $1 WHERE id = $2", &[Param::Money(after), Param::Text(account)])?;
            }
            Ok(())
        })
        .await?;
    Ok(())
}

/// Runs VACUUM ANALYZE on PostgreSQL after a bulk load. Autovacuum would do both within a
/// minute or so (an insert-only table is vacuumed once a fifth of it is new); until it has,
/// the planner has no statistics and no visibility map, so it sorts whole tables instead of
/// walking an index (a category page sorted by volume took 80 ms before and 0.3 ms after).
/// Doing it now measures the steady state from the first request. SQLite is left as the
/// service leaves it (it never runs ANALYZE itself).
fn vacuum_analyze(database_url: &str) -> Result<()> {
    if crate::env::backend_of(database_url) == "postgres" {
        hanson::store::postgres::admin::execute(database_url, "VACUUM ANALYZE".into())?;
    }
    Ok(())
}

fn chunked_insert(out: &mut Vec<String>, head: &str, rows: &[String]) {
    for chunk in rows.chunks(ROWS_PER_STATEMENT) {
        out.push(format!("{head} VALUES {}", chunk.join(",")));
    }
}

pub struct SearchSeed<'a> {
    pub providers: &'a [Provider],
    pub token_id: &'a str,
    pub liquidity: u128,
    /// The LMSR b of `liquidity` for 2, 3 and 4 outcomes (read from markets created through
    /// the API, so the seeded ones match what the service computes).
    pub b: [u128; 3],
}

const SUBJECTS: &[&str] = &["Bitcoin", "the home team", "Acme Corp", "the incumbent", "the challenger", "Team Rocket", "the city", "Ethereum"];
const PREDICATES: &[&str] = &[
    "win the final",
    "close above its record price",
    "win the election",
    "see rain on launch day",
    "top the league",
    "break the record",
    "launch before the deadline",
    "reach a new price high",
];

/// Inserts `count` markets spread over the providers: 70% active, 15% closed (ended, not
/// settled), 10% resolved, 5% cancelled; 10 categories; created over the last 90 days.
pub async fn seed_markets(database_url: &str, seed: &SearchSeed<'_>, count: usize) -> Result<f64> {
    let started = Instant::now();
    let store = Store::open(database_url)?;
    let now = hanson::domain::time::now_micros();
    let mut rng = Rng::new();
    let mut done = 0;
    while done < count {
        let n = MARKETS_PER_TRANSACTION.min(count - done);
        let (mut markets, mut outcomes, mut accounts, mut transfers) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut debits = vec![0u128; seed.providers.len()];
        for i in done..done + n {
            let p_index = i % seed.providers.len();
            let p = &seed.providers[p_index];
            let id = uuid::Uuid::new_v4().to_string();
            let category = *rng.pick(CATEGORIES);
            let roll = rng.unit();
            let status = if roll < 0.70 {
                "active"
            } else if roll < 0.85 {
                "closed"
            } else if roll < 0.95 {
                "resolved"
            } else {
                "cancelled"
            };
            let (created_at, ends_at) = if status == "active" {
                (now - rng.range(HOUR as u64, 90 * DAY as u64) as i64, now + rng.range(DAY as u64, 180 * DAY as u64) as i64)
            } else {
                let ends = now - rng.range(HOUR as u64, 30 * DAY as u64) as i64;
                (ends - rng.range(DAY as u64, 60 * DAY as u64) as i64, ends)
            };
            let settled = status == "resolved" || status == "cancelled";
            let n_outcomes = match rng.below(10) {
                0..=6 => 2,
                7 | 8 => 3,
                _ => 4,
            };
            let outcome_ids: Vec<String> = (0..n_outcomes).map(|_| uuid::Uuid::new_v4().to_string()).collect();
            let question = format!("Will {} {} in round {}?", rng.pick(SUBJECTS), rng.pick(PREDICATES), i % 997);
            let description = format!("Bench market {i}: a {category} question, resolved from bench.example.com.");
            let metadata = format!("{{\"category\":\"{category}\",\"resolution_source\":\"bench.example.com\"}}");
            let stored_status = if status == "closed" { "active" } else { status };
            let (winner, settled_at, payout, resolver, settlement) = if settled {
                let winner = if status == "resolved" { q(&outcome_ids[0]) } else { "NULL".into() };
                (winner, ends_at.to_string(), money(1), q("bench"), q("{\"seeded\":true}"))
            } else {
                ("NULL".into(), "NULL".into(), "NULL".into(), "NULL".into(), "NULL".into())
            };
            let updated_at = if settled { ends_at } else { created_at };
            // A market whose closing time passed had its market.closed announced then.
            let announced = i64::from(status != "active");
            markets.push(format!(
                "({id},{provider},NULL,{question},{question_lower},{description},{description_lower},{category},{source},{tags},'{{}}',{metadata},'lmsr',{token},{min_bet},{max_bet},{liquidity},{b},{created_at},{ends_at},{creator},10000,10000,{stored_status},'0',0,{winner},{settled_at},{created_at},{updated_at},{payout},{payout},{resolver},{settlement},{announced})",
                id = q(&id),
                provider = q(&p.id),
                question_lower = q(&question.to_lowercase()),
                question = q(&question),
                description_lower = q(&description.to_lowercase()),
                description = q(&description),
                category = q(category),
                source = q("bench.example.com"),
                tags = q("[\"bench\"]"),
                metadata = q(&metadata),
                token = q(seed.token_id),
                min_bet = money(1000),
                max_bet = money(100 * ONE_TOKEN),
                liquidity = money(seed.liquidity),
                b = money(seed.b[n_outcomes - 2]),
                creator = q(&p.creator_wallet_id),
                stored_status = q(stored_status),
            ));
            for (k, oid) in outcome_ids.iter().enumerate() {
                let title = match (n_outcomes, k) {
                    (2, 0) => "Yes".to_string(),
                    (2, _) => "No".to_string(),
                    _ => format!("Option {}", char::from(b'A' + k as u8)),
                };
                outcomes.push(format!("({},{},{k},{},'','{{}}','0','0')", q(oid), q(&id), q(&title)));
            }
            let pool = format!("pool:{id}");
            let treasury = format!("treasury:{}:{}", p.id, seed.token_id);
            let pool_balance = if settled { 0 } else { seed.liquidity };
            accounts.push(format!("({},'pool',{},{},{})", q(&pool), q(&id), q(seed.token_id), money(pool_balance)));
            transfers.push(format!(
                "('market_funding',{},{},{},{},{},{created_at})",
                q(&treasury),
                q(&pool),
                q(seed.token_id),
                money(seed.liquidity),
                q(&id)
            ));
            if settled {
                transfers.push(format!(
                    "('surplus',{},{},{},{},{},{ends_at})",
                    q(&pool),
                    q(&treasury),
                    q(seed.token_id),
                    money(seed.liquidity),
                    q(&id)
                ));
            } else {
                debits[p_index] += seed.liquidity;
            }
        }
        let mut statements = Vec::new();
        chunked_insert(
            &mut statements,
            "INSERT INTO markets (id, provider_id, game_id, question, question_lower, description, description_lower, \
             category, resolution_source, tags, images, metadata, pricing_method, token_id, min_bet, max_bet, liquidity, b, \
             starts_at, ends_at, creator_wallet_id, creator_fee, platform_fee, status, total_volume, trade_count, \
             winning_outcome_id, settled_at, created_at, updated_at, payout_num, payout_den, resolver_wallet_id, settlement, \
             close_announced)",
            &markets,
        );
        chunked_insert(
            &mut statements,
            "INSERT INTO outcomes (id, market_id, outcome_index, title, description, images, total_shares, total_volume)",
            &outcomes,
        );
        chunked_insert(&mut statements, "INSERT INTO accounts (id, kind, owner_id, token_id, balance)", &accounts);
        chunked_insert(
            &mut statements,
            "INSERT INTO transfers (kind, from_account, to_account, token_id, amount, reference_id, created_at)",
            &transfers,
        );
        let debits = seed
            .providers
            .iter()
            .zip(debits)
            .filter(|(_, d)| *d > 0)
            .map(|(p, d)| (format!("treasury:{}:{}", p.id, seed.token_id), d))
            .collect();
        apply(&store, Batch { statements, debits }).await?;
        done += n;
    }
    vacuum_analyze(database_url)?;
    Ok(started.elapsed().as_secs_f64())
}

/// Inserts `count` price points into one 2-outcome market (count / 2 instants, one point per
/// outcome each, as a trade records them), spread evenly over `days` days ending now: a random
/// walk of the price of outcome 0 (the other is its complement), volume on one outcome per
/// instant. Returns (first, last) timestamps and the seconds it took.
pub async fn seed_price_points(database_url: &str, market: &Market, count: usize, days: i64) -> Result<(i64, i64, f64)> {
    const ROWS_PER_INSERT: usize = 5_000;
    const INSERTS_PER_TRANSACTION: usize = 10;
    const SCALE: u128 = 1_000_000_000_000_000_000_000_000_000_000_000_000; // 10^36: price 1
    if market.outcomes.len() != 2 {
        return Err("price history seeding expects a 2-outcome market".into());
    }
    let started = Instant::now();
    let store = Store::open(database_url)?;
    let now = hanson::domain::time::now_micros();
    let instants = (count / 2).max(1) as i64;
    let to = now - 60_000_000;
    let from = to - days * DAY;
    let step = ((to - from) / instants).max(1);
    let mut rng = Rng::new();
    let mut ppm: i64 = 500_000; // outcome 0 price in millionths
    let (m, o0, o1) = (q(&market.id), q(&market.outcomes[0]), q(&market.outcomes[1]));
    let mut rows = Vec::with_capacity(ROWS_PER_INSERT);
    let mut statements = Vec::new();
    // Each point carries its outcome's running volume total, as trades write it.
    let head = "INSERT INTO price_points (market_id, outcome_id, price, volume, cum_volume, at)";
    let (mut total0, mut total1) = (0u128, 0u128);
    let (mut first, mut last) = (i64::MAX, i64::MIN);
    for k in 0..instants {
        let at = from + k * step + rng.below((step / 2).max(1) as u64) as i64;
        first = first.min(at);
        last = last.max(at);
        ppm = (ppm + rng.range(0, 4_000) as i64 - 2_000).clamp(20_000, 980_000);
        let p0 = ppm as u128 * 1_000_000_000_000_000_000_000_000_000_000; // x 10^30
        let volume = u128::from(rng.range(ONE_TOKEN as u64 / 10, 5 * ONE_TOKEN as u64));
        let (v0, v1) = if rng.below(2) == 0 { (volume, 0) } else { (0, volume) };
        total0 += v0;
        total1 += v1;
        rows.push(format!("({m},{o0},{},{},{},{at})", money(p0), money(v0), money(total0)));
        rows.push(format!("({m},{o1},{},{},{},{at})", money(SCALE - p0), money(v1), money(total1)));
        if rows.len() >= ROWS_PER_INSERT {
            statements.push(format!("{head} VALUES {}", rows.join(",")));
            rows.clear();
            if statements.len() >= INSERTS_PER_TRANSACTION {
                apply(&store, Batch { statements: std::mem::take(&mut statements), debits: Vec::new() }).await?;
            }
        }
    }
    if !rows.is_empty() {
        statements.push(format!("{head} VALUES {}", rows.join(",")));
    }
    if !statements.is_empty() {
        apply(&store, Batch { statements, debits: Vec::new() }).await?;
    }
    store.write(hanson::store::history::rebuild_price_candles).await?;
    vacuum_analyze(database_url)?;
    Ok((first, last, started.elapsed().as_secs_f64()))
}
