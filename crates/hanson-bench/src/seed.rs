//! Bulk seeding through `hanson seed`, the service's own bulk loader, for data sets that would
//! take too long through the API (100,000 markets, 1,000,000 price points).

use std::path::Path;

use crate::api::{Market, Provider};
use crate::env::{cli_json, Result};
use crate::workers::CATEGORIES;

pub(crate) struct SearchSeed<'a> {
    pub providers: &'a [Provider],
    pub token_id: &'a str,
    pub liquidity: u128,
}

/// Inserts `count` markets spread over the providers (see `hanson seed markets`); returns the
/// seconds it took.
pub(crate) fn seed_markets(bin: &Path, database_url: &str, seed: &SearchSeed<'_>, count: usize) -> Result<f64> {
    let count = count.to_string();
    let liquidity = seed.liquidity.to_string();
    let categories = CATEGORIES.join(",");
    let providers: Vec<String> = seed.providers.iter().map(|p| format!("{}:{}", p.id, p.creator_wallet_id)).collect();
    let mut args =
        vec!["seed", "markets", "--count", &count, "--token-id", seed.token_id, "--liquidity", &liquidity, "--categories", &categories];
    for provider in &providers {
        args.extend(["--provider", provider.as_str()]);
    }
    let out = cli_json(bin, database_url, &args)?;
    out["seconds"].as_f64().ok_or_else(|| "hanson seed markets printed no seconds".into())
}

/// Inserts `count` price points into a 2-outcome market, spread over `days` days ending now
/// (see `hanson seed price-points`). Returns (first, last) timestamps and the seconds it took.
pub(crate) fn seed_price_points(bin: &Path, database_url: &str, market: &Market, count: usize, days: i64) -> Result<(i64, i64, f64)> {
    let (count, days) = (count.to_string(), days.to_string());
    let out = cli_json(bin, database_url, &["seed", "price-points", "--market-id", &market.id, "--count", &count, "--days", &days])?;
    let time = |field: &str| {
        out[field]
            .as_str()
            .and_then(hanson::domain::time::parse_timestamp)
            .ok_or_else(|| format!("hanson seed price-points printed no {field}"))
    };
    Ok((time("from")?, time("to")?, out["seconds"].as_f64().ok_or("hanson seed price-points printed no seconds")?))
}

/// Inserts `count` buys by `wallets` new wallets into the market (see `hanson seed trades`);
/// returns the seconds it took.
pub(crate) fn seed_trades(bin: &Path, database_url: &str, market: &Market, wallets: usize, count: usize, days: i64) -> Result<f64> {
    let (wallets, count, days) = (wallets.to_string(), count.to_string(), days.to_string());
    let out = cli_json(
        bin,
        database_url,
        &["seed", "trades", "--market-id", &market.id, "--wallets", &wallets, "--count", &count, "--days", &days],
    )?;
    out["seconds"].as_f64().ok_or_else(|| "hanson seed trades printed no seconds".into())
}
