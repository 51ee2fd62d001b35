//! Live events in this process: every committed event reaches the subscribers of its market
//! stream and of its wallet's user stream here. Writes hand their events to one distributor
//! task and go on: the cost of many subscribers is never on a trade's path. The distributor
//! sends each market's events as one batch per round (one wake-up and one write per
//! subscriber for a whole group commit), through one broadcast channel per watched market
//! (and per watched wallet).
//!
//! A market's channel is gapless and in `seq` order: events published out of order
//! (concurrent PostgreSQL writes answer in any order; other nodes' events arrive by NOTIFY)
//! wait for the missing ones, which are read from the log if they do not come. Each
//! subscriber reads at its own pace; one that the channel's ring overtakes reads what it
//! missed from the log, and one more than `lag_limit` events behind is disconnected.

pub(crate) mod background;
pub(crate) mod ticker;
pub mod webhook_sender;

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::{broadcast, mpsc, watch, Notify};

use crate::domain::event::Published;
use crate::domain::ids::{MarketId, WalletId};
use crate::domain::time::now_micros;
use crate::domain::views::{market_detail, MarketDetail};
use crate::error::{Error, Result};
use crate::store::{event_log as log, markets, Publisher, Store};

/// Batches a market's channel keeps for slow subscribers; one overtaken reads the log.
const MARKET_BUFFER: usize = 256;
/// Events of one wallet waiting for a slow user stream.
const WALLET_BUFFER: usize = 1_024;
/// How long an out-of-order event waits for the missing ones before they are read from the log.
const GAP_WAIT: Duration = Duration::from_millis(20);

#[derive(Debug, Clone, Copy)]
pub struct StreamSettings {
    /// Comment lines (`: ping`) and WebSocket pings this often.
    pub ping_interval: Duration,
    /// Open streams (SSE and WebSocket), in all and per client IP.
    pub max_streams: usize,
    pub max_streams_per_ip: usize,
    /// A subscriber more than this many events behind its market is disconnected (10,000 by
    /// default, `docs/streams.md`).
    pub lag_limit: i64,
    /// The most often a market's ticker sends (`--ticker-interval-ms`, 250 ms by default).
    pub ticker_interval: Duration,
    /// What the event log keeps, and how often it is pruned (`docs/streams.md`, "Retention").
    pub retention: crate::store::event_log::Retention,
    pub prune_every: Duration,
}

impl Default for StreamSettings {
    fn default() -> Self {
        StreamSettings {
            ping_interval: Duration::from_secs(15),
            max_streams: 8_000,
            max_streams_per_ip: 200,
            lag_limit: 10_000,
            ticker_interval: Duration::from_millis(250),
            retention: Default::default(),
            prune_every: Duration::from_secs(60),
        }
    }
}

/// A market event ready to send: the event and its SSE frame, built once for every subscriber.
pub(crate) struct Delivery {
    pub(crate) event: Published,
    pub(crate) sse: Bytes,
}

impl Delivery {
    fn new(event: Published) -> Delivery {
        let sse = sse_frame(&event.kind, event.seq, &event.envelope);
        Delivery { event, sse }
    }

    /// Whether the market's stream ends with this event.
    pub(crate) fn settles(&self) -> bool {
        crate::domain::event::ends_market_stream(&self.event.kind, &self.event.envelope)
    }

    fn seq(&self) -> i64 {
        self.event.seq.unwrap_or(0)
    }
}

/// Consecutive events of one market sent together, with their SSE frames joined once.
pub(crate) struct Batch {
    pub(crate) deliveries: Vec<Arc<Delivery>>,
    pub(crate) sse: Bytes,
}

impl Batch {
    fn new(deliveries: Vec<Arc<Delivery>>) -> Batch {
        let sse = joined_frames(&deliveries);
        Batch { deliveries, sse }
    }

    fn first_seq(&self) -> i64 {
        self.deliveries.first().map_or(0, |d| d.seq())
    }

    fn last_seq(&self) -> i64 {
        self.deliveries.last().map_or(0, |d| d.seq())
    }
}

/// The SSE frames of `deliveries`, one after the other (a single one is shared, not copied).
pub(crate) fn joined_frames(deliveries: &[Arc<Delivery>]) -> Bytes {
    if let [only] = deliveries {
        return only.sse.clone();
    }
    let mut joined = bytes::BytesMut::with_capacity(deliveries.iter().map(|d| d.sse.len()).sum());
    deliveries.iter().for_each(|d| joined.extend_from_slice(&d.sse));
    joined.freeze()
}

/// `event: <type>`, `id: <seq>` when there is one, one `data:` line.
pub(crate) fn sse_frame(kind: &str, seq: Option<i64>, data: &str) -> Bytes {
    let mut frame = String::with_capacity(data.len() + kind.len() + 32);
    frame.push_str("event: ");
    frame.push_str(kind);
    if let Some(seq) = seq {
        frame.push_str("\nid: ");
        frame.push_str(&seq.to_string());
    }
    frame.push_str("\ndata: ");
    frame.push_str(data);
    frame.push_str("\n\n");
    Bytes::from(frame)
}

struct MarketFeed {
    tx: broadcast::Sender<Arc<Batch>>,
    order: Mutex<Order>,
    /// The last seq sent, for subscribers to tell how far behind they are.
    sent_through: AtomicI64,
}

#[derive(Default)]
struct Order {
    /// The last seq sent; None until the feed knows where the log stands.
    last: Option<i64>,
    /// Events ahead of a gap, by seq.
    pending: BTreeMap<i64, Published>,
    filling: bool,
}

pub struct Hub {
    /// Reads only: the log, for gaps and resumes.
    store: Store,
    markets: Mutex<HashMap<MarketId, Arc<MarketFeed>>>,
    wallets: Mutex<HashMap<WalletId, broadcast::Sender<Arc<Published>>>>,
    settings: StreamSettings,
    open: AtomicUsize,
    open_per_ip: Mutex<HashMap<IpAddr, usize>>,
    /// Signalled when the last open stream ends.
    all_ended: Notify,
    closing: watch::Sender<bool>,
    /// Gap fills are spawned here, also from the PostgreSQL listener's thread.
    runtime: tokio::runtime::Handle,
    /// Events for the distributor.
    inbox: mpsc::UnboundedSender<Vec<Published>>,
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Where a market subscription starts.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Start {
    Snapshot,
    /// Resume after this seq.
    After(i64),
}

/// What a new subscriber is sent first.
pub(crate) enum First {
    Snapshot { seq: i64, market: Box<MarketDetail> },
    Replay(Vec<Published>),
}

/// A subscriber's place in a market's stream.
pub(crate) struct MarketSubscription {
    pub(crate) first: First,
    live: broadcast::Receiver<Arc<Batch>>,
    feed: Arc<MarketFeed>,
    hub: Arc<Hub>,
    market_id: MarketId,
    /// The last seq this subscriber was given.
    last_sent: i64,
}

/// What a subscriber gets next.
pub(crate) enum Live {
    /// A batch exactly as sent to everyone (its frames shared).
    Batch(Arc<Batch>),
    /// Events of its own: a batch it had partly seen, or the log's events it missed.
    Events(Vec<Arc<Delivery>>),
    /// More than the lag limit behind: the subscriber is disconnected.
    TooFarBehind,
    /// The hub is gone.
    Closed,
}

impl MarketSubscription {
    /// The events after the last ones this subscriber was given, in order, without a gap.
    pub(crate) async fn next(&mut self) -> Live {
        loop {
            let batch = match self.live.recv().await {
                Ok(batch) => batch,
                // Overtaken by the ring: the next batch received is the oldest kept, and
                // what lies between is read from the log below.
                Err(RecvError::Lagged(_)) => continue,
                Err(RecvError::Closed) => return Live::Closed,
            };
            if batch.last_seq() <= self.last_sent {
                continue;
            }
            if self.feed.sent_through.load(Ordering::Acquire) - self.last_sent > self.hub.settings.lag_limit {
                return Live::TooFarBehind;
            }
            if batch.first_seq() == self.last_sent + 1 {
                self.last_sent = batch.last_seq();
                return Live::Batch(batch);
            }
            let mut events = Vec::new();
            if batch.first_seq() > self.last_sent + 1 {
                let (id, after, before) = (self.market_id.clone(), self.last_sent, batch.first_seq());
                match self.hub.store.read(move |c| log::market_events(c, &id, after, Some(before), i64::MAX)).await {
                    Ok(missed) if missed.len() as i64 == before - after - 1 => {
                        events.extend(missed.into_iter().map(|e| Arc::new(Delivery::new(e))));
                    }
                    // Pruned meanwhile, or unreadable: the subscriber resumes from the log.
                    _ => return Live::TooFarBehind,
                }
            }
            events.extend(batch.deliveries.iter().filter(|d| d.seq() > self.last_sent).cloned());
            self.last_sent = batch.last_seq();
            return Live::Events(events);
        }
    }
}

/// One open stream, counted against the limits until dropped.
pub(crate) struct StreamPermit {
    hub: Arc<Hub>,
    ip: IpAddr,
}

impl Drop for StreamPermit {
    fn drop(&mut self) {
        if self.hub.open.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.hub.all_ended.notify_waiters();
        }
        let mut per_ip = lock(&self.hub.open_per_ip);
        if let Some(n) = per_ip.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                per_ip.remove(&self.ip);
            }
        }
        crate::metrics::metrics().open_streams.dec();
    }
}

impl Hub {
    /// Call from within the runtime.
    pub fn new(store: Store, settings: StreamSettings) -> Arc<Hub> {
        let (inbox, mut incoming) = mpsc::unbounded_channel::<Vec<Published>>();
        let hub = Arc::new(Hub {
            store,
            markets: Mutex::default(),
            wallets: Mutex::default(),
            settings,
            open: AtomicUsize::new(0),
            open_per_ip: Mutex::default(),
            all_ended: Notify::new(),
            closing: watch::channel(false).0,
            runtime: tokio::runtime::Handle::current(),
            inbox,
        });
        // The distributor holds the hub weakly: it ends when the hub is dropped.
        let weak = Arc::downgrade(&hub);
        tokio::spawn(async move {
            while let Some(mut events) = incoming.recv().await {
                while let Ok(more) = incoming.try_recv() {
                    events.extend(more);
                }
                let Some(hub) = weak.upgrade() else { return };
                hub.distribute(events);
            }
        });
        hub
    }

    pub(crate) fn settings(&self) -> &StreamSettings {
        &self.settings
    }

    /// Counts a new stream from `ip`, or refuses it (429) at a limit.
    pub(crate) fn admit(self: &Arc<Self>, ip: IpAddr) -> Result<StreamPermit> {
        let mut per_ip = lock(&self.open_per_ip);
        let of_ip = per_ip.get(&ip).copied().unwrap_or(0);
        if of_ip >= self.settings.max_streams_per_ip || self.open.load(Ordering::Relaxed) >= self.settings.max_streams {
            return Err(Error::RateLimited { retry_after_secs: 5 });
        }
        per_ip.insert(ip, of_ip + 1);
        self.open.fetch_add(1, Ordering::Relaxed);
        crate::metrics::metrics().open_streams.inc();
        Ok(StreamPermit { hub: self.clone(), ip })
    }

    /// Resolves when the server shuts down: streams end then. A stream opened once shutdown
    /// has begun (a reconnect on a keep-alive connection not yet drained) sees it at once,
    /// instead of holding the exit until the grace runs out and being cut mid-chunk.
    pub fn closing(&self) -> watch::Receiver<bool> {
        let mut closing = self.closing.subscribe();
        if *closing.borrow() {
            closing.mark_changed();
        }
        closing
    }

    pub fn close(&self) {
        self.closing.send_replace(true);
    }

    /// Resolves once no stream is open. A WebSocket outlives its HTTP connection, so shutdown
    /// waits here for each one to send its close frame before the process exits.
    pub(crate) async fn streams_ended(&self) {
        loop {
            let notified = self.all_ended.notified();
            let mut notified = std::pin::pin!(notified);
            notified.as_mut().enable();
            if self.open.load(Ordering::Acquire) == 0 {
                return;
            }
            notified.await;
        }
    }

    fn feed(&self, market_id: &MarketId) -> Arc<MarketFeed> {
        lock(&self.markets)
            .entry(market_id.clone())
            .or_insert_with(|| {
                Arc::new(MarketFeed { tx: broadcast::channel(MARKET_BUFFER).0, order: Mutex::default(), sent_through: AtomicI64::new(0) })
            })
            .clone()
    }

    /// Subscribes to a market's stream from `start`. Unknown market: `NotFound`.
    pub(crate) async fn subscribe_market(self: &Arc<Self>, market_id: MarketId, start: Start) -> Result<MarketSubscription> {
        let feed = self.feed(&market_id);
        // Subscribed before the log is read: every event committed after the read is live.
        let live = feed.tx.subscribe();
        let id = market_id.clone();
        let read = self
            .store
            .read(move |c| {
                let Some(market) = markets::market(c, &id, false)? else { return Ok(None) };
                let seq = log::current_seq(c, &id)?;
                let replay = match start {
                    Start::After(after) if after <= seq => {
                        let events = log::market_events(c, &id, after, None, i64::MAX)?;
                        // Complete only if the log still holds every event after `after`.
                        let complete = after == seq || events.first().and_then(|e| e.seq) == Some(after + 1);
                        complete.then_some(events)
                    }
                    _ => None,
                };
                Ok(Some((market, seq, replay)))
            })
            .await;
        let (market, seq, replay) = match read {
            Ok(Some(found)) => found,
            Ok(None) | Err(_) => {
                drop(live);
                self.forget_if_unwatched(&market_id);
                return Err(read.err().unwrap_or(Error::NotFound));
            }
        };
        self.start_feed(&market_id, &feed, seq);
        let first = match replay {
            Some(events) => First::Replay(events),
            None => First::Snapshot { seq, market: Box::new(market_detail(&market, now_micros())?) },
        };
        Ok(MarketSubscription { first, live, feed, hub: self.clone(), market_id, last_sent: seq })
    }

    /// Subscribes to a wallet's events (the user stream reads its snapshot after this).
    pub(crate) fn subscribe_wallet(&self, wallet_id: &WalletId) -> broadcast::Receiver<Arc<Published>> {
        lock(&self.wallets).entry(wallet_id.clone()).or_insert_with(|| broadcast::channel(WALLET_BUFFER).0).subscribe()
    }

    fn forget_if_unwatched(&self, market_id: &MarketId) {
        let mut feeds = lock(&self.markets);
        if feeds.get(market_id).is_some_and(|f| f.tx.receiver_count() == 0) {
            feeds.remove(market_id);
        }
    }

    /// Drops the channels nobody listens to any more.
    pub(crate) fn sweep(&self) {
        lock(&self.markets).retain(|_, f| f.tx.receiver_count() > 0);
        lock(&self.wallets).retain(|_, tx| tx.receiver_count() > 0);
    }

    /// Sets where a new feed starts (the log's last seq, read after the feed existed).
    fn start_feed(self: &Arc<Self>, market_id: &MarketId, feed: &Arc<MarketFeed>, seq: i64) {
        let mut order = lock(&feed.order);
        if order.last.is_none() {
            order.last = Some(seq);
            feed.sent_through.store(seq, Ordering::Release);
            self.drain(market_id, feed, &mut order);
        }
    }

    /// Takes a market's events in: those that follow the last one sent go out as one batch.
    fn offer(self: &Arc<Self>, market_id: &MarketId, feed: &Arc<MarketFeed>, events: Vec<Published>) {
        let mut order = lock(&feed.order);
        for event in events {
            let Some(seq) = event.seq else { continue };
            if order.last.is_none_or(|last| seq > last) {
                order.pending.insert(seq, event);
            }
        }
        if order.last.is_some() {
            self.drain(market_id, feed, &mut order);
        }
    }

    /// Sends the pending events that follow the last one sent; a gap left is filled from the log.
    fn drain(self: &Arc<Self>, market_id: &MarketId, feed: &Arc<MarketFeed>, order: &mut Order) {
        let Some(mut last) = order.last else { return };
        let mut ready = Vec::new();
        while let Some(entry) = order.pending.first_entry() {
            let seq = *entry.key();
            if seq > last + 1 {
                break;
            }
            let event = entry.remove();
            if seq == last + 1 {
                last = seq;
                ready.push(Arc::new(Delivery::new(event)));
            }
        }
        order.last = Some(last);
        if !ready.is_empty() {
            feed.sent_through.store(last, Ordering::Release);
            // No receiver is not an error: the feed is dropped at the next sweep.
            let _ = feed.tx.send(Arc::new(Batch::new(ready)));
        }
        if !order.pending.is_empty() && !order.filling {
            order.filling = true;
            let (hub, market_id, feed) = (self.clone(), market_id.clone(), feed.clone());
            self.runtime.spawn(async move { hub.fill_gap(market_id, feed).await });
        }
    }

    /// Waits briefly for the events missing before the pending ones, then reads them.
    async fn fill_gap(self: Arc<Self>, market_id: MarketId, feed: Arc<MarketFeed>) {
        tokio::time::sleep(GAP_WAIT).await;
        loop {
            let gap = {
                let mut order = lock(&feed.order);
                match (order.last, order.pending.keys().next().copied()) {
                    (Some(last), Some(next)) if next > last + 1 => Some((last, next)),
                    _ => {
                        order.filling = false;
                        None
                    }
                }
            };
            let Some((last, next)) = gap else { return };
            let id = market_id.clone();
            match self.store.read(move |c| log::market_events(c, &id, last, Some(next), i64::MAX)).await {
                Ok(events) => {
                    lock(&feed.order).filling = false;
                    self.offer(&market_id, &feed, events);
                    return;
                }
                Err(e) => {
                    tracing::warn!(error = %e, market_id = %market_id, "reading missed events failed; retrying");
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
            }
        }
    }

    /// Reads every watched market's events after the last one sent (after missing other
    /// nodes' notifications).
    pub(crate) async fn catch_up(self: &Arc<Self>) {
        let feeds: Vec<(MarketId, Arc<MarketFeed>, i64)> =
            lock(&self.markets).iter().filter_map(|(id, f)| lock(&f.order).last.map(|last| (id.clone(), f.clone(), last))).collect();
        for (market_id, feed, last) in feeds {
            let id = market_id.clone();
            match self.store.read(move |c| log::market_events(c, &id, last, None, i64::MAX)).await {
                Ok(events) => self.offer(&market_id, &feed, events),
                Err(e) => tracing::warn!(error = %e, market_id = %market_id, "catching up with the log failed"),
            }
        }
    }

    /// Events by their log positions (another node's notification). None are read while this
    /// node has no subscriber: `deliver` would drop them all, and a subscriber that comes
    /// later reads the log after subscribing.
    pub(crate) async fn read_positions(&self, positions: Vec<i64>) -> Result<Vec<Published>> {
        if lock(&self.markets).is_empty() && lock(&self.wallets).is_empty() {
            return Ok(Vec::new());
        }
        self.store.read(move |c| log::at_positions(c, &positions)).await
    }

    /// Hands events committed here or on another node to the distributor; never blocks.
    /// Events nobody watches are dropped here, sparing the distributor a wake-up per write
    /// (a subscriber that comes later reads the log after subscribing, so it misses nothing).
    pub(crate) fn deliver(&self, mut events: Vec<Published>) {
        {
            let markets = lock(&self.markets);
            let wallets = lock(&self.wallets);
            events.retain(|e| {
                e.market_id.as_ref().is_some_and(|m| markets.contains_key(m))
                    || e.wallet_id.as_ref().is_some_and(|w| wallets.contains_key(w))
            });
        }
        if !events.is_empty() {
            // Fails only when the distributor is gone with the hub.
            let _ = self.inbox.send(events);
        }
    }

    /// Sends one round of events: wallet events one by one, each market's as one batch.
    fn distribute(self: &Arc<Self>, events: Vec<Published>) {
        let mut by_market: Vec<(MarketId, Vec<Published>)> = Vec::new();
        for event in events {
            if let Some(wallet_id) = &event.wallet_id {
                if let Some(tx) = lock(&self.wallets).get(wallet_id) {
                    let _ = tx.send(Arc::new(event.clone()));
                }
            }
            if let Some(market_id) = &event.market_id {
                match by_market.iter_mut().find(|(id, _)| id == market_id) {
                    Some((_, list)) => list.push(event),
                    None => by_market.push((market_id.clone(), vec![event])),
                }
            }
        }
        for (market_id, events) in by_market {
            let feed = lock(&self.markets).get(&market_id).cloned();
            if let Some(feed) = feed {
                self.offer(&market_id, &feed, events);
            }
        }
    }
}

/// The store's publisher: hands each durable write's events to the hub, and wakes this
/// node's webhook sender (the write may have created deliveries).
pub(crate) struct HubPublisher {
    pub(crate) hub: Arc<Hub>,
    pub(crate) webhooks: Arc<crate::events::webhook_sender::Wake>,
}

impl Publisher for HubPublisher {
    fn publish(&self, events: Vec<Published>) {
        self.webhooks.after_commit();
        self.hub.deliver(events);
    }
}
