//! Bulk seeding for load tests and demos (`hanson seed`): data sets that would take too long
//! through the API (100,000 markets, 1,000,000 price points), written straight into the
//! tables in large transactions.
//!
//! Markets mirror what `market_edits::create_market` writes: the `markets` row, its
//! `outcomes`, the pool account and a `market_funding` transfer from the provider's treasury
//! (debited in the same transaction), so `hanson audit` still balances. Settled markets
//! (resolved, cancelled) also get the `surplus` transfer that returned their whole pool to
//! the treasury, as a settlement without positions does. Statements are multi-row INSERTs
//! with literal values (generated ids, numbers and the caller's words, quotes escaped),
//! money as canonical decimal strings, which both SQLite's TEXT and PostgreSQL's NUMERIC(78,0)
//! take exactly.

use std::sync::Arc;

use super::accounts;
use super::history::points::rebuild_price_candles;
use super::sql::Param;
use super::Store;
use crate::domain::ledger::{pool_account, treasury_account};
use crate::domain::time::{now_micros, Micros};
use crate::error::{Error, Result};

const HOUR: i64 = 3_600_000_000;
const DAY: i64 = 24 * HOUR;
const MARKETS_PER_TRANSACTION: usize = 2_000;
const ROWS_PER_STATEMENT: usize = 500;
/// One token of 18 decimals.
const ONE_TOKEN: u128 = 1_000_000_000_000_000_000;

fn quoted(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

fn money(v: u128) -> String {
    format!("'{v}'")
}

/// A small, fast PRNG (xorshift64*) for the seeded data's spread; seeded from the OS.
struct Rng(u64);

impl Rng {
    fn new() -> Rng {
        let mut seed = [0u8; 8];
        let _ = getrandom::fill(&mut seed);
        Rng(u64::from_le_bytes(seed) | 1)
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in 0..n (n > 0).
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// Uniform in lo..=hi.
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

/// One transaction's worth of statements plus the treasury debits they imply.
struct Batch {
    statements: Vec<String>,
    /// (treasury account id, amount to take out)
    debits: Vec<(String, u128)>,
}

async fn apply(store: &Store, batch: Batch) -> Result<()> {
    let batch = Arc::new(batch);
    store
        .write(move |c| {
            for sql in &batch.statements {
                c.exec(sql, &[])?;
            }
            for (account, debit) in &batch.debits {
                let balance = accounts::stored_balances(c, &[account.as_str()])?.first().map_or(0, |(_, b)| *b);
                let after = balance.checked_sub(*debit).ok_or_else(|| {
                    Error::rule("insufficient_treasury", format!("treasury {account} holds {balance}, seeding needs {debit}"))
                })?;
                c.exec("UPDATE accounts SET balance = $1 WHERE id = $2", &[Param::Money(after), Param::Text(account)])?;
            }
            Ok(())
        })
        .await
}

fn chunked_insert(out: &mut Vec<String>, head: &str, rows: &[String]) {
    for chunk in rows.chunks(ROWS_PER_STATEMENT) {
        out.push(format!("{head} VALUES {}", chunk.join(",")));
    }
}

/// Markets to seed: spread over `providers` (each a provider id and its creator wallet's id),
/// denominated in `token_id`, each funded with `liquidity` from its provider's treasury.
#[derive(Debug, Clone)]
pub(crate) struct MarketSeed {
    pub(crate) providers: Vec<(String, String)>,
    pub(crate) token_id: String,
    pub(crate) liquidity: u128,
    pub(crate) count: usize,
    /// Each market's `metadata.category` is one of these.
    pub(crate) categories: Vec<String>,
}

const SUBJECTS: &[&str] =
    &["Bitcoin", "the home team", "Acme Corp", "the incumbent", "the challenger", "Team Rocket", "the city", "Ethereum"];
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

/// Inserts the markets of `seed`: 70% active, 15% closed (ended, not settled), 10% resolved,
/// 5% cancelled, created over the last 90 days, with 2, 3 or 4 outcomes.
pub(crate) async fn seed_markets(store: &Store, seed: &MarketSeed) -> Result<()> {
    if seed.providers.is_empty() || seed.categories.is_empty() {
        return Err(Error::invalid("provider", "seeding needs at least one provider and one category"));
    }
    let b: Vec<u128> = (2..=4)
        .map(|n| lmsr::liquidity_parameter(seed.liquidity, n).map_err(|_| Error::invalid("liquidity", "too small for four outcomes")))
        .collect::<Result<_>>()?;
    let now = now_micros();
    let mut rng = Rng::new();
    let mut done = 0;
    while done < seed.count {
        let n = MARKETS_PER_TRANSACTION.min(seed.count - done);
        let (mut markets, mut outcomes, mut accounts, mut transfers) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut debits = vec![0u128; seed.providers.len()];
        for i in done..done + n {
            let provider = i % seed.providers.len();
            let (provider_id, creator_wallet_id) = &seed.providers[provider];
            let id = uuid::Uuid::new_v4().to_string();
            let category = rng.pick(&seed.categories).clone();
            let roll = rng.below(100);
            let status = match roll {
                0..=69 => "active",
                70..=84 => "closed",
                85..=94 => "resolved",
                _ => "cancelled",
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
            let description = format!("Seeded market {i}: a {category} question, resolved from seed.example.com.");
            let metadata = serde_json::json!({ "category": category, "resolution_source": "seed.example.com" }).to_string();
            let stored_status = if status == "closed" { "active" } else { status };
            let (winner, settled_at, payout, resolver, settlement) = if settled {
                let winner = if status == "resolved" { quoted(&outcome_ids[0]) } else { "NULL".into() };
                (winner, ends_at.to_string(), money(1), quoted("seed"), quoted("{\"seeded\":true}"))
            } else {
                ("NULL".into(), "NULL".into(), "NULL".into(), "NULL".into(), "NULL".into())
            };
            let updated_at = if settled { ends_at } else { created_at };
            // A market whose closing time passed had its market.closed announced then.
            let announced = i64::from(status != "active");
            markets.push(format!(
                "({id},{provider},NULL,{question},{question_lower},{description},{description_lower},{category},{source},{tags},'{{}}',{metadata},'lmsr',{token},{min_bet},{max_bet},{liquidity},{b},{created_at},{ends_at},{creator},10000,10000,{stored_status},'0',0,{winner},{settled_at},{created_at},{updated_at},{payout},{payout},{resolver},{settlement},{announced})",
                id = quoted(&id),
                provider = quoted(provider_id),
                question_lower = quoted(&question.to_lowercase()),
                question = quoted(&question),
                description_lower = quoted(&description.to_lowercase()),
                description = quoted(&description),
                category = quoted(&category),
                source = quoted("seed.example.com"),
                tags = quoted("[\"seeded\"]"),
                metadata = quoted(&metadata),
                token = quoted(&seed.token_id),
                min_bet = money(1000),
                max_bet = money(100 * ONE_TOKEN),
                liquidity = money(seed.liquidity),
                b = money(b[n_outcomes - 2]),
                creator = quoted(creator_wallet_id),
                stored_status = quoted(stored_status),
            ));
            for (k, oid) in outcome_ids.iter().enumerate() {
                let title = match (n_outcomes, k) {
                    (2, 0) => "Yes".to_string(),
                    (2, _) => "No".to_string(),
                    _ => format!("Option {}", char::from(b'A' + k as u8)),
                };
                outcomes.push(format!("({},{},{k},{},'','{{}}','0','0')", quoted(oid), quoted(&id), quoted(&title)));
            }
            let pool = pool_account(&id);
            let treasury = treasury_account(provider_id, &seed.token_id);
            let pool_balance = if settled { 0 } else { seed.liquidity };
            accounts.push(format!("({},'pool',{},{},{})", quoted(&pool), quoted(&id), quoted(&seed.token_id), money(pool_balance)));
            let token = quoted(&seed.token_id);
            transfers.push(format!(
                "('market_funding',{},{},{token},{},{},{created_at})",
                quoted(&treasury),
                quoted(&pool),
                money(seed.liquidity),
                quoted(&id)
            ));
            if settled {
                transfers.push(format!(
                    "('surplus',{},{},{token},{},{},{ends_at})",
                    quoted(&pool),
                    quoted(&treasury),
                    money(seed.liquidity),
                    quoted(&id)
                ));
            } else {
                debits[provider] += seed.liquidity;
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
            .map(|((provider_id, _), d)| (treasury_account(provider_id, &seed.token_id), d))
            .collect();
        apply(store, Batch { statements, debits }).await?;
        done += n;
    }
    Ok(())
}

/// Price points to seed into one two-outcome market.
#[derive(Debug, Clone)]
pub(crate) struct PriceSeed {
    pub(crate) market_id: String,
    pub(crate) count: usize,
    pub(crate) days: i64,
}

/// Inserts `count` price points into the market (count / 2 instants, one point per outcome
/// each, as a trade records them), spread evenly over `days` days ending a minute ago: a
/// random walk of outcome 0's price (the other is its complement), volume on one outcome per
/// instant; then rebuilds the candles. Returns the first and last instants.
pub(crate) async fn seed_price_points(store: &Store, seed: &PriceSeed) -> Result<(Micros, Micros)> {
    const ROWS_PER_INSERT: usize = 5_000;
    const INSERTS_PER_TRANSACTION: usize = 10;
    const SCALE: u128 = lmsr::PRICE_SCALE;
    let id = seed.market_id.clone();
    let outcomes: Vec<String> = store
        .read(move |c| {
            c.query("SELECT id FROM outcomes WHERE market_id = $1 ORDER BY outcome_index", &[Param::Text(&id)])?
                .iter()
                .map(|r| r.text(0))
                .collect()
        })
        .await?;
    let [o0, o1] = <[String; 2]>::try_from(outcomes).map_err(|_| Error::invalid("market_id", "must name a market with two outcomes"))?;
    let instants = (seed.count / 2).max(1) as i64;
    let to = now_micros() - 60_000_000;
    let from = to - seed.days.max(1) * DAY;
    let step = ((to - from) / instants).max(1);
    let mut rng = Rng::new();
    let mut ppm: i64 = 500_000; // outcome 0's price in millionths
    let (m, o0, o1) = (quoted(&seed.market_id), quoted(&o0), quoted(&o1));
    let mut rows = Vec::with_capacity(ROWS_PER_INSERT);
    let mut statements = Vec::new();
    // Each point carries its outcome's running volume total, as trades write it.
    let head = "INSERT INTO price_points (market_id, outcome_id, price, volume, cum_volume, at)";
    let (mut total0, mut total1) = (0u128, 0u128);
    let (mut first, mut last) = (Micros::MAX, Micros::MIN);
    for k in 0..instants {
        let at = from + k * step + rng.below((step / 2).max(1) as u64) as i64;
        first = first.min(at);
        last = last.max(at);
        ppm = (ppm + rng.range(0, 4_000) as i64 - 2_000).clamp(20_000, 980_000);
        let p0 = ppm as u128 * (SCALE / 1_000_000);
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
                apply(store, Batch { statements: std::mem::take(&mut statements), debits: Vec::new() }).await?;
            }
        }
    }
    if !rows.is_empty() {
        statements.push(format!("{head} VALUES {}", rows.join(",")));
    }
    if !statements.is_empty() {
        apply(store, Batch { statements, debits: Vec::new() }).await?;
    }
    store.write(|c| rebuild_price_candles(c)).await?;
    Ok((first, last))
}

/// Trades to seed into one market: `count` buys spread over `wallets` new wallets.
#[derive(Debug, Clone)]
pub(crate) struct TradeSeed {
    pub(crate) market_id: String,
    pub(crate) wallets: usize,
    pub(crate) count: usize,
    pub(crate) days: i64,
}

/// What [`seed_trades`] wrote.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TradesSeeded {
    pub(crate) first: Micros,
    pub(crate) last: Micros,
    pub(crate) volume: u128,
}

/// Inserts `wallets` new wallets of the market's provider and `count` buys by them: buy i by
/// wallet i % wallets on outcome (i + i / wallets) % outcomes (each round of the wallets moves
/// one outcome on), each of `TRADE_AMOUNT` at price 1/outcomes without
/// fee, spread evenly over `days` days ending a minute ago, with the positions, outcome and
/// market totals they imply. The money moves as one `wallet_deposit` and one `bet` transfer per
/// wallet, so `hanson audit` balances. Outcomes get (nearly) the same shares, so prices stay
/// (nearly) where they were and no price points are added: this is data for reading
/// (leaderboards, exports), not a price series.
pub(crate) async fn seed_trades(store: &Store, seed: &TradeSeed) -> Result<TradesSeeded> {
    const TRADE_AMOUNT: u128 = ONE_TOKEN / 1_000;
    const TRADES_PER_TRANSACTION: usize = 50_000;
    if seed.wallets == 0 || seed.count < seed.wallets {
        return Err(Error::invalid("wallets", "must be at least one and at most --count"));
    }
    let id = seed.market_id.clone();
    let (provider_id, token_id, outcomes) = store
        .read(move |c| {
            let m = c
                .query_opt("SELECT provider_id, token_id FROM markets WHERE id = $1 AND status = 'active'", &[Param::Text(&id)])?
                .ok_or_else(|| Error::invalid("market_id", "must name an active market"))?;
            let outcomes: Vec<String> = c
                .query("SELECT id FROM outcomes WHERE market_id = $1 ORDER BY outcome_index", &[Param::Text(&id)])?
                .iter()
                .map(|r| r.text(0))
                .collect::<Result<_>>()?;
            Ok((m.text(0)?, m.text(1)?, outcomes))
        })
        .await?;
    let n = outcomes.len() as u128;
    let shares = TRADE_AMOUNT * n;
    let price = lmsr::Price::from_raw(lmsr::PRICE_SCALE / n).to_string();
    let now = now_micros();
    let to = now - 60_000_000;
    let from = to - seed.days.max(1) * DAY;
    let step = ((to - from) / seed.count as i64).max(1);
    let mut rng = Rng::new();
    let wallets: Vec<(String, String)> = (0..seed.wallets)
        .map(|_| {
            let address = format!("0x{:016x}{:016x}{:08x}", rng.next(), rng.next(), rng.next() as u32);
            (uuid::Uuid::new_v4().to_string(), address)
        })
        .collect();
    // The wallets and their accounts first: trades refer to them.
    let (mut wallet_rows, mut accounts) = (Vec::new(), Vec::new());
    for (wallet_id, address) in &wallets {
        wallet_rows.push(format!("({},{},{},'evm',NULL,{from})", quoted(wallet_id), quoted(&provider_id), quoted(address)));
        let account = crate::domain::ledger::wallet_account(wallet_id, &token_id);
        accounts.push(format!("({},'wallet',{},{},'0')", quoted(&account), quoted(wallet_id), quoted(&token_id)));
    }
    let mut statements = Vec::new();
    chunked_insert(
        &mut statements,
        "INSERT INTO wallets (id, provider_id, address, wallet_type, alt_evm_address, created_at)",
        &wallet_rows,
    );
    chunked_insert(&mut statements, "INSERT INTO accounts (id, kind, owner_id, token_id, balance)", &accounts);
    apply(store, Batch { statements, debits: Vec::new() }).await?;
    // Buys per wallet and outcome, for the positions and the transfers.
    let mut held = vec![0u64; seed.wallets * outcomes.len()];
    let m = quoted(&seed.market_id);
    let mut done = 0;
    while done < seed.count {
        let k = TRADES_PER_TRANSACTION.min(seed.count - done);
        let mut rows = Vec::with_capacity(k);
        for i in done..done + k {
            let (w, o) = (i % seed.wallets, (i + i / seed.wallets) % outcomes.len());
            held[w * outcomes.len() + o] += 1;
            let at = from + i as i64 * step;
            let (wallet_id, address) = &wallets[w];
            rows.push(format!(
                "({},{m},{},{},{},'seed','buy',{},{},'0',{},{},{at})",
                quoted(&uuid::Uuid::new_v4().to_string()),
                quoted(&outcomes[o]),
                quoted(wallet_id),
                quoted(address),
                money(TRADE_AMOUNT),
                money(TRADE_AMOUNT),
                money(shares),
                quoted(&price),
            ));
        }
        let mut statements = Vec::new();
        chunked_insert(
            &mut statements,
            "INSERT INTO trades (id, market_id, outcome_id, wallet_id, wallet_address, session_id, transaction_type, amount, \
             net_amount, fee, shares, price, created_at)",
            &rows,
        );
        apply(store, Batch { statements, debits: Vec::new() }).await?;
        done += k;
    }
    let (mut transfers, mut positions) = (Vec::new(), Vec::new());
    let pool = pool_account(&seed.market_id);
    for (w, (wallet_id, _)) in wallets.iter().enumerate() {
        let account = crate::domain::ledger::wallet_account(wallet_id, &token_id);
        let bought: u128 = held[w * outcomes.len()..(w + 1) * outcomes.len()].iter().map(|&t| u128::from(t)).sum::<u128>() * TRADE_AMOUNT;
        transfers.push(format!("('wallet_deposit',NULL,{},{},{},NULL,{from})", quoted(&account), quoted(&token_id), money(bought)));
        transfers.push(format!("('bet',{},{},{},{},NULL,{from})", quoted(&account), quoted(&pool), quoted(&token_id), money(bought)));
        for (o, outcome) in outcomes.iter().enumerate() {
            let buys = u128::from(held[w * outcomes.len() + o]);
            if buys > 0 {
                positions.push(format!(
                    "({},{m},{},{},{},{},'active',{from},{to})",
                    quoted(&uuid::Uuid::new_v4().to_string()),
                    quoted(outcome),
                    quoted(wallet_id),
                    money(buys * shares),
                    money(buys * TRADE_AMOUNT),
                ));
            }
        }
    }
    let mut statements = Vec::new();
    chunked_insert(
        &mut statements,
        "INSERT INTO transfers (kind, from_account, to_account, token_id, amount, reference_id, created_at)",
        &transfers,
    );
    chunked_insert(
        &mut statements,
        "INSERT INTO positions (id, market_id, outcome_id, wallet_id, shares, total_invested, status, created_at, updated_at)",
        &positions,
    );
    let volume = seed.count as u128 * TRADE_AMOUNT;
    let per_outcome: Vec<(String, u128)> = outcomes
        .iter()
        .enumerate()
        .map(|(o, id)| (id.clone(), (0..seed.wallets).map(|w| u128::from(held[w * outcomes.len() + o])).sum()))
        .collect();
    let (market_id, count) = (seed.market_id.clone(), seed.count as i64);
    store
        .write(move |c| {
            for sql in &statements {
                c.exec(sql, &[])?;
            }
            // Totals are added in Rust: money columns hold integers beyond SQL's 64 bits.
            for (outcome, buys) in &per_outcome {
                let r = c.query_one("SELECT total_shares, total_volume FROM outcomes WHERE id = $1", &[Param::Text(outcome)])?;
                let (total_shares, total_volume) = (r.money(0)? + buys * shares, r.money(1)? + buys * TRADE_AMOUNT);
                c.exec(
                    "UPDATE outcomes SET total_shares = $1, total_volume = $2 WHERE id = $3",
                    &[Param::Money(total_shares), Param::Money(total_volume), Param::Text(outcome)],
                )?;
            }
            let r = c.query_one("SELECT total_volume, trade_count FROM markets WHERE id = $1", &[Param::Text(&market_id)])?;
            c.exec(
                "UPDATE markets SET total_volume = $1, trade_count = $2 WHERE id = $3",
                &[Param::Money(r.money(0)? + volume), Param::Int(r.int(1)? + count), Param::Text(&market_id)],
            )?;
            let balance = accounts::stored_balances(c, &[pool.as_str()])?.first().map_or(0, |(_, b)| *b);
            c.exec("UPDATE accounts SET balance = $1 WHERE id = $2", &[Param::Money(balance + volume), Param::Text(&pool)])?;
            Ok(())
        })
        .await?;
    Ok(TradesSeeded { first: from, last: from + (seed.count as i64 - 1) * step, volume })
}
