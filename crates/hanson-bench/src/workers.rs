//! The clients of each scenario. Each owns one keep-alive HTTP connection (its own
//! `reqwest::Client`) and issues one request at a time.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use crate::api::{iso, Market, Session, ONE_TOKEN};
use crate::load::Sample;
use crate::rng::Rng;

pub(crate) fn client() -> reqwest::Client {
    reqwest::Client::builder().tcp_nodelay(true).pool_max_idle_per_host(1).timeout(Duration::from_secs(120)).build().expect("HTTP client")
}

/// "STATUS code" of a problem+json answer, or just the status.
fn error_key(status: u16, body: &[u8]) -> String {
    let code = serde_json::from_slice::<Value>(body).ok().and_then(|v| v["code"].as_str().map(str::to_string));
    match code {
        Some(code) => format!("{status} {code}"),
        None => status.to_string(),
    }
}

fn transport_key(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        "timeout".into()
    } else if e.is_connect() {
        "connect".into()
    } else {
        "transport".into()
    }
}

/// GET /healthz: the machine's HTTP ceiling with the same client count.
pub(crate) struct Healthz {
    http: reqwest::Client,
    url: String,
}

impl Healthz {
    pub(crate) fn new(base: &str) -> Healthz {
        Healthz { http: client(), url: format!("{base}/healthz") }
    }

    pub(crate) async fn step(self) -> (Self, Sample) {
        let sample = match exchange_vec(self.http.get(&self.url)).await {
            Ok(_) => Sample::ok("healthz"),
            Err(key) => Sample::err("healthz", key),
        };
        (self, sample)
    }
}

/// `GET /markets/{id}/card.png` over the markets in turn (each client starting at its own).
pub(crate) struct CardReader {
    http: reqwest::Client,
    base: String,
    markets: std::sync::Arc<Vec<String>>,
    next: usize,
}

impl CardReader {
    pub(crate) fn new(base: &str, markets: std::sync::Arc<Vec<String>>, start: usize) -> CardReader {
        CardReader { http: client(), base: base.to_string(), markets, next: start }
    }

    pub(crate) async fn step(mut self) -> (Self, Sample) {
        let market = &self.markets[self.next % self.markets.len()];
        self.next += 1;
        let sample = match exchange_vec(self.http.get(format!("{}/markets/{market}/card.png", self.base))).await {
            Ok(body) if body.starts_with(b"\x89PNG") => Sample::ok("card"),
            Ok(_) => Sample::err("card", "not_png".into()),
            Err(key) => Sample::err("card", key),
        };
        (self, sample)
    }
}

/// Sends and reads the whole body (so the connection is reused): Ok(body) on 2xx, Err(error
/// key) otherwise.
pub(crate) async fn exchange_vec(req: reqwest::RequestBuilder) -> Result<Vec<u8>, String> {
    let res = req.send().await.map_err(|e| transport_key(&e))?;
    let status = res.status().as_u16();
    let body = res.bytes().await.map_err(|e| transport_key(&e))?;
    if (200..300).contains(&status) {
        Ok(body.to_vec())
    } else {
        Err(error_key(status, &body))
    }
}

pub(crate) fn post_json(http: &reqwest::Client, url: &str, bearer: Option<&str>, body: &Value) -> reqwest::RequestBuilder {
    let mut req = http.post(url).header("content-type", "application/json").body(body.to_string());
    if let Some(token) = bearer {
        req = req.bearer_auth(token);
    }
    req
}

/// Bets and sells over a slice of wallets that only this client uses, so it knows exactly
/// what each wallet holds and its sells never ask for more than that.
pub(crate) struct Trader {
    http: reqwest::Client,
    /// Per market: (bet URL, sell URL).
    urls: Arc<Vec<(String, String)>>,
    markets: Arc<Vec<Market>>,
    wallets: Vec<Session>,
    next_wallet: usize,
    /// Per wallet: ((market, outcome), shares held) for every position with shares.
    holdings: Vec<Vec<((usize, usize), u128)>>,
    rng: Rng,
    sell_share: f64,
}

impl Trader {
    pub(crate) fn new(base: &str, markets: Arc<Vec<Market>>, wallets: Vec<Session>, sell_share: f64) -> Trader {
        let urls =
            markets.iter().map(|m| (format!("{base}/v1/markets/{}/bet", m.id), format!("{base}/v1/markets/{}/sell", m.id))).collect();
        let holdings = vec![Vec::new(); wallets.len()];
        Trader { http: client(), urls: Arc::new(urls), markets, wallets, next_wallet: 0, holdings, rng: Rng::new(), sell_share }
    }

    pub(crate) async fn step(mut self) -> (Self, Sample) {
        let w = self.next_wallet % self.wallets.len();
        self.next_wallet += 1;
        if self.rng.unit() < self.sell_share && !self.holdings[w].is_empty() {
            // Sell half of one of this wallet's positions (any market it holds shares in).
            let i = self.rng.below(self.holdings[w].len() as u64) as usize;
            let ((m, o), shares) = self.holdings[w][i];
            let sell = if shares >= 2 { shares / 2 } else { shares };
            let sample = self.sell(w, m, o, sell).await;
            return (self, sample);
        }
        let m = self.rng.below(self.markets.len() as u64) as usize;
        let o = self.rng.below(self.markets[m].outcomes.len() as u64) as usize;
        let amount = u128::from(self.rng.range(ONE_TOKEN as u64 / 10, 5 * ONE_TOKEN as u64));
        let sample = self.bet(w, m, o, amount).await;
        (self, sample)
    }

    fn add_shares(&mut self, w: usize, key: (usize, usize), shares: u128) {
        let held = &mut self.holdings[w];
        match held.iter_mut().find(|(k, _)| *k == key) {
            Some((_, s)) => *s += shares,
            None if shares > 0 => held.push((key, shares)),
            None => {}
        }
    }

    fn remove_shares(&mut self, w: usize, key: (usize, usize), shares: u128) {
        let held = &mut self.holdings[w];
        if let Some(i) = held.iter().position(|(k, _)| *k == key) {
            held[i].1 = held[i].1.saturating_sub(shares);
            if held[i].1 == 0 {
                held.swap_remove(i);
            }
        }
    }

    async fn bet(&mut self, w: usize, m: usize, o: usize, amount: u128) -> Sample {
        let s = &self.wallets[w];
        let body = json!({ "session_id": s.session_id, "outcome_id": self.markets[m].outcomes[o], "amount": amount.to_string() });
        match exchange_vec(post_json(&self.http, &self.urls[m].0, Some(&s.access_token), &body)).await {
            Ok(bytes) => match shares_field(&bytes, "shares_purchased") {
                Some(shares) => {
                    self.add_shares(w, (m, o), shares);
                    Sample::ok("bet")
                }
                None => Sample::err("bet", "200 without shares_purchased".into()),
            },
            Err(key) => Sample::err("bet", key),
        }
    }

    async fn sell(&mut self, w: usize, m: usize, o: usize, shares: u128) -> Sample {
        let s = &self.wallets[w];
        let body = json!({ "session_id": s.session_id, "outcome_id": self.markets[m].outcomes[o], "shares_amount": shares.to_string() });
        match exchange_vec(post_json(&self.http, &self.urls[m].1, Some(&s.access_token), &body)).await {
            Ok(bytes) => match shares_field(&bytes, "shares_sold") {
                Some(sold) => {
                    self.remove_shares(w, (m, o), sold);
                    Sample::ok("sell")
                }
                None => Sample::err("sell", "200 without shares_sold".into()),
            },
            Err(key) => Sample::err("sell", key),
        }
    }
}

fn shares_field(body: &[u8], field: &str) -> Option<u128> {
    let v: Value = serde_json::from_slice(body).ok()?;
    v[field].as_str()?.parse().ok()
}

pub(crate) const CATEGORIES: &[&str] =
    &["sports", "politics", "crypto", "weather", "esports", "finance", "science", "entertainment", "tech", "culture"];
/// Words the seeded questions and descriptions contain, plus one that matches nothing.
pub(crate) const SEARCH_TERMS: &[&str] =
    &["bitcoin", "election", "final", "rain", "team", "launch", "record", "price", "league", "zzz-no-match"];

/// POST /v1/markets/search with a mix of filters, sorts and pages.
pub(crate) struct Searcher {
    http: reqwest::Client,
    url: String,
    providers: Arc<Vec<String>>,
    rng: Rng,
}

impl Searcher {
    pub(crate) fn new(base: &str, providers: Arc<Vec<String>>) -> Searcher {
        Searcher { http: client(), url: format!("{base}/v1/markets/search"), providers, rng: Rng::new() }
    }

    pub(crate) fn body(&mut self) -> (&'static str, Value) {
        let r = &mut self.rng;
        let (kind, filters) = match r.below(6) {
            0 => ("no_filter", json!({})),
            1 => ("status", json!({ "status": *r.pick(&["active", "closed", "resolved", "cancelled"]) })),
            2 => ("category", json!({ "category": *r.pick(CATEGORIES) })),
            3 => ("search_query", json!({ "search_query": *r.pick(SEARCH_TERMS) })),
            4 => ("provider", json!({ "provider_id": r.pick(&self.providers) })),
            _ => ("category_status", json!({ "category": *r.pick(CATEGORIES), "status": "active" })),
        };
        let field = *r.pick(&["created_at", "closes_at", "total_volume"]);
        let direction = *r.pick(&["asc", "desc"]);
        let page = r.range(1, 50);
        let per_page = r.range(20, 100);
        (
            kind,
            json!({
                "filters": filters,
                "sort": { "field": field, "direction": direction },
                "pagination": { "page": page, "per_page": per_page },
            }),
        )
    }

    pub(crate) async fn step(mut self) -> (Self, Sample) {
        let (kind, body) = self.body();
        let sample = match exchange_vec(post_json(&self.http, &self.url, None, &body)).await {
            Ok(_) => Sample::ok(kind),
            Err(key) => Sample::err(kind, key),
        };
        (self, sample)
    }
}

/// POST /v1/markets/price-history/search over one heavily traded market.
pub(crate) struct HistoryReader {
    http: reqwest::Client,
    url: String,
    market_id: String,
    outcome_ids: Vec<String>,
    /// The seeded time span, microseconds.
    from: i64,
    to: i64,
    rng: Rng,
}

const HOUR: i64 = 3_600_000_000;
const DAY: i64 = 24 * HOUR;

impl HistoryReader {
    pub(crate) fn new(base: &str, market: &Market, from: i64, to: i64) -> HistoryReader {
        HistoryReader {
            http: client(),
            url: format!("{base}/v1/markets/price-history/search"),
            market_id: market.id.clone(),
            outcome_ids: market.outcomes.clone(),
            from,
            to,
            rng: Rng::new(),
        }
    }

    fn window(&mut self, width: i64) -> (String, String) {
        let span = (self.to - self.from - width).max(1) as u64;
        let start = self.from + self.rng.below(span) as i64;
        (iso(start), iso(start + width))
    }

    pub(crate) fn body(&mut self) -> (&'static str, Value) {
        let roll = self.rng.unit();
        let outcome = self.rng.pick(&self.outcome_ids).clone();
        if roll < 0.4 {
            // Hourly buckets over the whole history, paged 100 at a time.
            let buckets_per_outcome = ((self.to - self.from) / HOUR + 1) as u64;
            let pages = (buckets_per_outcome * self.outcome_ids.len() as u64).div_ceil(100).max(1);
            let page = self.rng.range(1, pages);
            (
                "1h_all",
                json!({ "filters": { "market_id": self.market_id, "interval": "1h" }, "pagination": { "page": page, "per_page": 100 } }),
            )
        } else if roll < 0.6 {
            // Hourly buckets of one outcome over a 7-day range.
            let (from, to) = self.window(7 * DAY);
            let page = self.rng.range(1, 2);
            (
                "1h_7d",
                json!({ "filters": { "outcome_id": outcome, "interval": "1h", "from_date": from, "to_date": to }, "pagination": { "page": page, "per_page": 100 } }),
            )
        } else if roll < 0.8 {
            // Raw points of a 1-day range, paged.
            let (from, to) = self.window(DAY);
            let (page, per_page) = (self.rng.range(1, 50), self.rng.range(20, 100));
            (
                "raw_1d",
                json!({ "filters": { "market_id": self.market_id, "from_date": from, "to_date": to }, "pagination": { "page": page, "per_page": per_page } }),
            )
        } else {
            // Raw points of one outcome, newest first, paged.
            let (page, per_page) = (self.rng.range(1, 50), self.rng.range(20, 100));
            let direction = *self.rng.pick(&["asc", "desc"]);
            (
                "raw_paged",
                json!({ "filters": { "outcome_id": outcome }, "sort": { "field": "timestamp", "direction": direction }, "pagination": { "page": page, "per_page": per_page } }),
            )
        }
    }

    pub(crate) async fn step(mut self) -> (Self, Sample) {
        let (kind, body) = self.body();
        let sample = match exchange_vec(post_json(&self.http, &self.url, None, &body)).await {
            Ok(_) => Sample::ok(kind),
            Err(key) => Sample::err(kind, key),
        };
        (self, sample)
    }
}
