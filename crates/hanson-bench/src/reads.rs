//! The `market_reads` scenario's client: price history, candles and leaderboards of one
//! market in equal shares, so each kind's p99 can be set against price history's in one run.

use crate::api::{iso, Market};
use crate::load::Sample;
use crate::rng::Rng;
use crate::workers::{client, exchange_vec, post_json, HistoryReader};

const MINUTE: i64 = 60_000_000;
/// The most buckets one candles request may ask for (the API answers 422 beyond).
pub(crate) const CANDLE_BUCKETS: i64 = 1_000;
/// Wallets holding positions in the market (seeded with `hanson seed trades`).
pub(crate) const LEADERBOARD_WALLETS: usize = 10_000;

pub(crate) struct MarketReader {
    history: HistoryReader,
    http: reqwest::Client,
    base: String,
    market_id: String,
    from: i64,
    to: i64,
    rng: Rng,
}

impl MarketReader {
    pub(crate) fn new(base: &str, market: &Market, from: i64, to: i64) -> MarketReader {
        MarketReader {
            history: HistoryReader::new(base, market, from, to),
            http: client(),
            base: base.to_string(),
            market_id: market.id.clone(),
            from,
            to,
            rng: Rng::new(),
        }
    }

    pub(crate) async fn step(mut self) -> (Self, Sample) {
        let roll = self.rng.below(3);
        let (kind, req) = match roll {
            0 => {
                let (_, body) = self.history.body();
                ("price_history", post_json(&self.http, &format!("{}/v1/markets/price-history/search", self.base), None, &body))
            }
            1 => {
                // 1-minute buckets, all outcomes, the widest range allowed, anywhere in the history.
                let span = (self.to - self.from - CANDLE_BUCKETS * MINUTE).max(1) as u64;
                let start = self.from + self.rng.below(span) as i64;
                let end = start + (CANDLE_BUCKETS - 1) * MINUTE;
                let url = format!("{}/v1/markets/{}/candles?interval=1m&start={}&end={}", self.base, self.market_id, iso(start), iso(end));
                ("candles", self.http.get(url))
            }
            _ => {
                let by = *self.rng.pick(&["profit", "volume"]);
                let pages = (LEADERBOARD_WALLETS as u64).div_ceil(100);
                let page = self.rng.range(1, pages);
                let url = format!("{}/v1/markets/{}/leaderboard?by={by}&page={page}&per_page=100", self.base, self.market_id);
                ("leaderboard", self.http.get(url))
            }
        };
        let sample = match exchange_vec(req).await {
            Ok(_) => Sample::ok(kind),
            Err(key) => Sample::err(kind, key),
        };
        (self, sample)
    }
}

/// Each read kind's p99 over price history's p99 in the same run (target: at most 2).
pub(crate) fn p99_ratios(main: &crate::load::RunStats) -> Vec<(&'static str, f64)> {
    let base = main.kind_percentiles("price_history").p99;
    ["candles", "leaderboard"].into_iter().map(|k| (k, main.kind_percentiles(k).p99 / base)).collect()
}
