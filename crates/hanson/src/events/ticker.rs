//! The ticker: a conflated feed of a market for pages and crowds. One task per watched market
//! follows its stream, keeps the state (status, prices, totals) and the trades since the last
//! tick, and at most every `ticker_interval` after a change serialises one tick into a watch
//! channel that every watcher (SSE or WebSocket) reads: one serialisation per tick, shared.
//! A slow watcher skips to the latest tick; the last state is never skipped, as a change
//! always schedules a tick.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use serde::Serialize;
use serde_json::Value;
use tokio::sync::watch;
use tokio::time::Instant;

use super::{lock, sse_frame, Delivery, First, Hub, Live, MarketSubscription, Start};
use crate::domain::ids::MarketId;
use crate::domain::time::now_micros;
use crate::domain::views::market_detail;
use crate::error::{Error, Result};
use crate::store::{markets, Store};

/// Trades a tick lists; older ones since the previous tick are only counted.
const RECENT_TRADES: usize = 10;

/// One tick, serialised once: its SSE frame and its WebSocket message.
pub(crate) struct Tick {
    pub(crate) sse: Bytes,
    pub(crate) ws: Arc<str>,
}

type Feed = Arc<watch::Sender<Arc<Tick>>>;

/// The tickers of the watched markets.
pub(crate) struct Tickers {
    hub: Arc<Hub>,
    store: Store,
    interval: Duration,
    feeds: Mutex<HashMap<MarketId, Feed>>,
}

#[derive(Serialize, Clone)]
struct TickerPrice {
    outcome_id: String,
    price: String,
}

#[derive(Serialize, Clone)]
struct TickerTrade {
    id: String,
    outcome_id: String,
    transaction_type: String,
    amount: String,
    shares: String,
    price: String,
    wallet_address: String,
    created_at: String,
}

#[derive(Serialize)]
struct TickerData<'a> {
    market_id: &'a str,
    seq: i64,
    status: &'a str,
    trading_paused: bool,
    prices: &'a [TickerPrice],
    total_volume: &'a str,
    total_pool: &'a str,
    trades: &'a VecDeque<TickerTrade>,
    trades_omitted: u64,
}

/// A market as its ticker shows it, and the trades since the last tick.
struct State {
    market_id: String,
    seq: i64,
    status: String,
    trading_paused: bool,
    prices: Vec<TickerPrice>,
    total_volume: String,
    total_pool: String,
    trades: VecDeque<TickerTrade>,
    omitted: u64,
    settled: bool,
}

fn text(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}

fn prices(list: &Value, id_field: &str, price_field: &str) -> Vec<TickerPrice> {
    list.as_array()
        .map(|items| items.iter().map(|p| TickerPrice { outcome_id: text(&p[id_field]), price: text(&p[price_field]) }).collect())
        .unwrap_or_default()
}

impl State {
    fn new(market_id: &MarketId) -> State {
        State {
            market_id: market_id.to_string(),
            seq: 0,
            status: String::new(),
            trading_paused: false,
            prices: Vec::new(),
            total_volume: "0".into(),
            total_pool: "0".into(),
            trades: VecDeque::new(),
            omitted: 0,
            settled: false,
        }
    }

    /// Takes the market's fields from its detail (a snapshot, or one read after an event
    /// that is not a trade).
    fn take_detail(&mut self, detail: &Value) {
        self.status = text(&detail["status"]);
        self.trading_paused = detail["trading_paused"].as_bool().unwrap_or(false);
        self.prices = prices(&detail["outcomes"], "id", "current_price");
        self.total_volume = text(&detail["total_volume"]);
        self.total_pool = text(&detail["total_pool"]);
    }

    /// Applies a trade's event; false for any other event (the market is read again).
    fn take_trade(&mut self, d: &Delivery) -> bool {
        if &*d.event.kind != "trade.created" {
            return false;
        }
        let Ok(envelope) = serde_json::from_str::<Value>(&d.event.envelope) else { return false };
        let (data, t) = (&envelope["data"], &envelope["data"]["trade"]);
        self.prices = prices(&data["prices"], "outcome_id", "price");
        self.total_volume = text(&data["total_volume"]);
        self.total_pool = text(&data["total_pool"]);
        if self.trades.len() == RECENT_TRADES {
            self.trades.pop_front();
            self.omitted += 1;
        }
        self.trades.push_back(TickerTrade {
            id: text(&t["id"]),
            outcome_id: text(&t["outcome_id"]),
            transaction_type: text(&t["transaction_type"]),
            amount: text(&t["amount"]),
            shares: text(&t["shares"]),
            price: text(&t["price"]),
            wallet_address: text(&t["wallet_address"]),
            created_at: text(&t["created_at"]),
        });
        true
    }

    /// Serialises the state as a tick and starts the next one's trades afresh.
    fn tick(&mut self) -> Arc<Tick> {
        let data = TickerData {
            market_id: &self.market_id,
            seq: self.seq,
            status: &self.status,
            trading_paused: self.trading_paused,
            prices: &self.prices,
            total_volume: &self.total_volume,
            total_pool: &self.total_pool,
            trades: &self.trades,
            trades_omitted: self.omitted,
        };
        let json = serde_json::to_string(&data).unwrap_or_else(|_| "{}".into());
        self.trades.clear();
        self.omitted = 0;
        let ws = format!("{{\"type\":\"ticker\",{}", json.strip_prefix('{').unwrap_or("}"));
        Arc::new(Tick { sse: sse_frame("ticker", Some(self.seq), &json), ws: ws.into() })
    }
}

impl Tickers {
    pub(crate) fn new(hub: Arc<Hub>, store: Store, interval: Duration) -> Arc<Tickers> {
        Arc::new(Tickers { hub, store, interval, feeds: Mutex::default() })
    }

    /// The market's ticks, the current one first; an unknown market is `NotFound`.
    pub(crate) async fn watch(self: &Arc<Self>, market_id: MarketId) -> Result<watch::Receiver<Arc<Tick>>> {
        if let Some(feed) = lock(&self.feeds).get(&market_id) {
            return Ok(feed.subscribe());
        }
        let mut sub = self.hub.subscribe_market(market_id.clone(), Start::Snapshot).await?;
        let mut state = State::new(&market_id);
        let First::Snapshot { seq, market } = std::mem::replace(&mut sub.first, First::Replay(Vec::new())) else {
            return Err(Error::internal("a ticker's subscription started without a snapshot"));
        };
        state.seq = seq;
        state.take_detail(&serde_json::to_value(&*market).map_err(Error::internal)?);
        let (tx, rx) = watch::channel(state.tick());
        let feed = Arc::new(tx);
        lock(&self.feeds).insert(market_id.clone(), feed.clone());
        tokio::spawn(self.clone().run(market_id, sub, state, feed));
        Ok(rx)
    }

    async fn refresh(&self, market_id: &MarketId, state: &mut State) {
        let id = market_id.clone();
        let read = self.store.read(move |c| markets::market(c, &id, false)).await;
        if let Ok(Some(m)) = read {
            if let Ok(detail) = market_detail(&m, now_micros()).map(|d| serde_json::to_value(&d)) {
                state.take_detail(&detail.unwrap_or_default());
            }
        }
    }

    /// Removes the market's feed if it is `feed` and nobody watches it; whether it did.
    fn forget(&self, market_id: &MarketId, feed: &Feed, always: bool) -> bool {
        let mut feeds = lock(&self.feeds);
        if !always && feed.receiver_count() > 0 {
            return false;
        }
        if feeds.get(market_id).is_some_and(|f| Arc::ptr_eq(f, feed)) {
            feeds.remove(market_id);
        }
        true
    }

    async fn run(self: Arc<Self>, market_id: MarketId, mut sub: MarketSubscription, mut state: State, feed: Feed) {
        let mut last_tick = Instant::now();
        let mut dirty = false;
        loop {
            tokio::select! {
                biased;
                _ = feed.closed() => {
                    if self.forget(&market_id, &feed, false) {
                        return;
                    }
                }
                _ = tokio::time::sleep_until(last_tick + self.interval), if dirty => {
                    feed.send_replace(state.tick());
                    last_tick = Instant::now();
                    dirty = false;
                    if state.settled {
                        // Watchers read this last tick, then see the feed closed.
                        self.forget(&market_id, &feed, true);
                        return;
                    }
                }
                next = sub.next(), if !state.settled => {
                    let deliveries = match next {
                        Live::Batch(batch) => batch.deliveries.clone(),
                        Live::Events(events) => events,
                        Live::TooFarBehind => match self.hub.subscribe_market(market_id.clone(), Start::Snapshot).await {
                            Ok(fresh) => {
                                sub = fresh;
                                if let First::Snapshot { seq, .. } = sub.first {
                                    state.seq = seq;
                                }
                                self.refresh(&market_id, &mut state).await;
                                dirty = true;
                                continue;
                            }
                            Err(_) => Vec::new(),
                        },
                        Live::Closed => {
                            self.forget(&market_id, &feed, true);
                            return;
                        }
                    };
                    let mut stale = false;
                    for d in &deliveries {
                        state.seq = state.seq.max(d.event.seq.unwrap_or(0));
                        state.settled |= d.settles();
                        stale |= !state.take_trade(d);
                    }
                    if stale {
                        self.refresh(&market_id, &mut state).await;
                    }
                    dirty |= !deliveries.is_empty();
                }
            }
        }
    }
}
