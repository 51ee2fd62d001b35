//! The service's own event work: announcing closed markets, finalizing resolutions whose
//! dispute window ended, pruning the log, and on PostgreSQL hearing other nodes' events. All
//! of it stops when the hub closes.

use std::sync::Arc;
use std::time::Duration;

use super::Hub;
use crate::domain::time::now_micros;
use crate::store::event_log::{self as log, Notified, Retention};
use crate::store::postgres::Notice;
use crate::store::{closures, settlement};
use crate::store::{Backend, Store};

/// Checks for markets due a `market.closed` this often (announced within 5 s of the close, `docs/streams.md`).
const CLOSE_CHECK: Duration = Duration::from_secs(1);
/// Starts the work; `store` publishes to `hub`.
pub(crate) fn start(hub: &Arc<Hub>, store: Store) {
    listen(hub, &store);
    let hub = hub.clone();
    let (retention, prune_every) = (hub.settings().retention, hub.settings().prune_every);
    tokio::spawn(async move {
        let mut closing = hub.closing();
        let mut ticks = tokio::time::interval(CLOSE_CHECK);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut last_prune = tokio::time::Instant::now();
        loop {
            tokio::select! {
                _ = ticks.tick() => {}
                _ = closing.changed() => break,
            }
            if *closing.borrow() {
                break;
            }
            if let Err(e) = announce_closures(&store).await {
                tracing::warn!(error = %e, "announcing closed markets failed");
            }
            if let Err(e) = finalize_resolutions(&store).await {
                tracing::warn!(error = %e, "finalizing resolutions failed");
            }
            if last_prune.elapsed() >= prune_every {
                last_prune = tokio::time::Instant::now();
                if let Err(e) = prune(&store, retention).await {
                    tracing::warn!(error = %e, "pruning the event log failed");
                }
                hub.sweep();
            }
        }
    });
}

async fn announce_closures(store: &Store) -> crate::error::Result<()> {
    let now = now_micros();
    // A read first: the write (and on SQLite a group commit) only when one is due.
    if store.read(move |c| closures::closures_due(c, now)).await? {
        while store.write(move |c| closures::announce_closures(c, now)).await? == closures::CLOSURES_PER_WRITE {}
    }
    Ok(())
}

/// Makes final every resolution whose dispute window has ended (within a check of its
/// `final_at`, `docs/api.md`); on several nodes each is finalized by the one whose row update
/// wins (`settlement::finalize`).
async fn finalize_resolutions(store: &Store) -> crate::error::Result<()> {
    let now = now_micros();
    for market_id in store.read(move |c| settlement::finalizations_due(c, now)).await? {
        store.write(move |c| settlement::finalize(c, &market_id, now)).await?;
    }
    Ok(())
}

async fn prune(store: &Store, retention: Retention) -> crate::error::Result<()> {
    let long = store.read(move |c| log::long_logs(c, &retention)).await?;
    let deleted = store.write(move |c| log::prune(c, now_micros(), &retention, &long)).await?;
    crate::metrics::metrics().event_log_pruned.inc_by(deleted);
    let deliveries = store.write(|c| crate::store::webhooks::prune(c, now_micros(), crate::domain::webhook::DELIVERIES_KEPT)).await?;
    tracing::debug!(deleted, deliveries, "pruned the event log and ended webhook deliveries");
    Ok(())
}

/// Hears other nodes' events on a thread of its own (the driver is blocking) and delivers
/// them; after each (re)connection every watched market catches up from the log. The thread
/// holds the hub weakly and ends with it.
fn listen(hub: &Arc<Hub>, store: &Store) {
    let Backend::Postgres(pg) = store.backend().clone() else { return };
    let runtime = tokio::runtime::Handle::current();
    let closing = hub.closing();
    let hub = Arc::downgrade(hub);
    let node = store.node().to_string();
    let stopped = move || *closing.borrow() || closing.has_changed().is_err();
    let spawned = std::thread::Builder::new().name("hanson-events".into()).spawn(move || {
        while !stopped() {
            let result = pg.listen(log::CHANNEL, |notice| {
                let Some(hub) = hub.upgrade().filter(|_| !stopped()) else { return false };
                match notice {
                    Notice::Connected => runtime.block_on(hub.catch_up()),
                    // This node published its own events as it committed them.
                    Notice::Payload(payload) => match log::parse_notice(payload, &node) {
                        None => {}
                        Some(Notified::Events(events)) => hub.deliver(events),
                        Some(Notified::Positions(positions)) => match runtime.block_on(hub.read_positions(positions)) {
                            Ok(events) => hub.deliver(events),
                            Err(e) => tracing::warn!(error = %e, "reading another node's events failed"),
                        },
                    },
                    Notice::Idle => {}
                }
                true
            });
            if let Err(e) = result {
                tracing::warn!(error = %e, "listening for other nodes' events failed; reconnecting");
                std::thread::sleep(Duration::from_secs(1));
            }
        }
    });
    if let Err(e) = spawned {
        tracing::error!(error = %e, "cannot start the event listener thread");
    }
}
