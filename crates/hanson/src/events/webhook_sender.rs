//! The webhook sender: each node claims due deliveries (a lease, so one node makes each
//! attempt), posts them signed per Standard Webhooks, and records what became of them.
//!
//! One HTTP client (connections reused), a 10 s timeout, no redirects, at most 64 KiB of an
//! answer read. At most [`PER_ENDPOINT`] attempts per endpoint are in flight and endpoints at
//! that bound are left out of claims, so a slow endpoint cannot hold the others' places.
//!
//! The other parts of webhooks: `domain::webhook` (endpoints, URL rules, signatures, the
//! retry schedule), `store::webhooks` (endpoint and delivery rows, enqueued with their events)
//! and `api::webhooks` (a provider's routes).

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{mpsc, Notify};

use crate::domain::time::now_micros;
use crate::domain::webhook::{is_public, signature, AttemptOutcome, RetrySchedule};
use crate::store::webhooks::{self as stored, Claimed, Finished};
use crate::store::Store;

/// Attempts in flight on this node, in all and per endpoint.
const IN_FLIGHT: usize = 512;
const PER_ENDPOINT: usize = 16;
/// Claims per write.
const CLAIM_BATCH: usize = 256;
/// How long a claim keeps other nodes off an attempt: the timeout, with room to record it.
const LEASE: Duration = Duration::from_secs(20);
const TIMEOUT: Duration = Duration::from_secs(10);
/// What is read of an answer (and dropped): enough to reuse the connection.
const ANSWER_BYTES: usize = 64 * 1024;
/// Without a wake-up, due deliveries (retries, other nodes' leftovers) are looked for this often.
const POLL: Duration = Duration::from_millis(500);

/// Wakes this node's sender. A committed write wakes it only while an endpoint is enabled,
/// as the sender last saw (it looks every [`POLL`]) or this node just created or enabled one.
/// With none, a claim after every commit was about 240 empty write transactions a second under
/// the hot-market load on PostgreSQL, three for every trade batch (`pg_stat_statements`).
#[derive(Default)]
pub(crate) struct Wake {
    notify: Notify,
    endpoints: AtomicBool,
}

impl Wake {
    /// A delivery became due now (a retry, a test event), or an endpoint was enabled.
    pub(crate) fn now(&self) {
        self.endpoints.store(true, Ordering::Relaxed);
        self.notify.notify_one();
    }

    /// A write committed events, which may have created deliveries.
    pub(crate) fn after_commit(&self) {
        if self.endpoints.load(Ordering::Relaxed) {
            self.notify.notify_one();
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct SenderSettings {
    pub schedule: RetrySchedule,
    /// `--webhook-allow-private`: `http` and loopback or private addresses are allowed.
    pub allow_private: bool,
}

/// Resolves endpoint hosts to public addresses only: the check made at creation holds at
/// send time too, whatever the name resolves to by then.
struct PublicOnly;

impl reqwest::dns::Resolve for PublicOnly {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        Box::pin(async move {
            let addrs = tokio::net::lookup_host((name.as_str(), 0)).await?;
            let public: Vec<SocketAddr> = addrs.filter(|a| is_public(a.ip())).collect();
            if public.is_empty() {
                return Err(format!("{} resolves to no public address", name.as_str()).into());
            }
            Ok(Box::new(public.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// Whether a URL may be sent to now: its scheme, and its address if it is one.
fn refusal(url: &str, allow_private: bool) -> Option<String> {
    let parsed = match url::Url::parse(url) {
        Ok(parsed) => parsed,
        Err(_) => return Some("the URL does not parse".into()),
    };
    if parsed.scheme() != "https" && !(allow_private && parsed.scheme() == "http") {
        return Some("only https URLs are sent to".into());
    }
    let ip = match parsed.host() {
        Some(url::Host::Ipv4(ip)) => Some(IpAddr::V4(ip)),
        Some(url::Host::Ipv6(ip)) => Some(IpAddr::V6(ip)),
        _ => None,
    };
    match ip {
        Some(ip) if !allow_private && !is_public(ip) => Some(format!("{ip} is not a public address")),
        _ => None,
    }
}

pub(crate) fn client(allow_private: bool) -> reqwest::Client {
    let builder = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(TIMEOUT)
        .connect_timeout(TIMEOUT)
        .pool_max_idle_per_host(PER_ENDPOINT)
        .user_agent(concat!("hanson-webhooks/", env!("CARGO_PKG_VERSION")));
    let builder = if allow_private { builder } else { builder.dns_resolver(Arc::new(PublicOnly)) };
    builder.build().expect("the webhook HTTP client builds")
}

/// A random number in [-1, 1] for the retry jitter.
fn jitter() -> f64 {
    let r = getrandom::u64().unwrap_or(0);
    (r as f64 / u64::MAX as f64) * 2.0 - 1.0
}

/// One attempt: POST the envelope with the Standard Webhooks headers.
async fn attempt(client: &reqwest::Client, claimed: &Claimed, allow_private: bool) -> AttemptOutcome {
    let Some(body) = &claimed.body else {
        return AttemptOutcome::Failed { error: "the event is no longer kept".into() };
    };
    if let Some(error) = refusal(&claimed.url, allow_private) {
        return AttemptOutcome::Failed { error };
    }
    let timestamp = now_micros() / 1_000_000;
    let secrets: Vec<&str> = claimed.secrets.iter().map(String::as_str).collect();
    let request = client
        .post(&claimed.url)
        .header("content-type", "application/json")
        .header("webhook-id", &claimed.event_id)
        .header("webhook-timestamp", timestamp.to_string())
        .header("webhook-signature", signature(&secrets, &claimed.event_id, timestamp, body.as_bytes()))
        .body(body.clone());
    let mut response = match request.send().await {
        Ok(response) => response,
        Err(e) => return AttemptOutcome::Failed { error: describe(&e) },
    };
    let status = response.status().as_u16();
    let retry_after = response
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_secs);
    let mut read = 0;
    while let Ok(Some(chunk)) = response.chunk().await {
        read += chunk.len();
        if read >= ANSWER_BYTES {
            break;
        }
    }
    if (200..300).contains(&status) {
        AttemptOutcome::Succeeded { status }
    } else {
        AttemptOutcome::Refused { status, retry_after }
    }
}

fn describe(e: &reqwest::Error) -> String {
    let what = if e.is_timeout() {
        "timed out after 10 s".to_string()
    } else if e.is_connect() {
        "could not connect".to_string()
    } else {
        "the request failed".to_string()
    };
    let mut cause = String::new();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        cause = s.to_string();
        source = s.source();
    }
    let text = if cause.is_empty() { what } else { format!("{what}: {cause}") };
    text.chars().take(500).collect()
}

/// Attempts in flight, per endpoint.
#[derive(Default)]
struct InFlight {
    per_endpoint: HashMap<String, usize>,
    total: usize,
}

/// Starts the sender of this node; `wake` is notified after writes that may have created
/// deliveries. It runs until the process ends: an attempt cut off by a stop is made again
/// once its lease ends.
pub(crate) fn start(store: Store, settings: SenderSettings, wake: Arc<Wake>) {
    let client = client(settings.allow_private);
    let in_flight = Arc::new(Mutex::new(InFlight::default()));
    let (done_tx, done_rx) = mpsc::unbounded_channel::<Finished>();
    let freed = Arc::new(Notify::new());
    tokio::spawn(record_finished(store.clone(), done_rx, in_flight.clone(), freed.clone()));
    tokio::spawn(async move {
        loop {
            let claimed = match claim(&store, &in_flight).await {
                Ok(claimed) => claimed,
                Err(e) => {
                    tracing::warn!(error = %e, "claiming webhook deliveries failed");
                    tokio::time::sleep(POLL).await;
                    continue;
                }
            };
            let full = claimed.len() == CLAIM_BATCH;
            if !claimed.is_empty() {
                wake.endpoints.store(true, Ordering::Relaxed);
            }
            for delivery in claimed {
                let client = client.clone();
                let done = done_tx.clone();
                let schedule = settings.schedule.clone();
                let allow_private = settings.allow_private;
                tokio::spawn(async move {
                    let outcome = attempt(&client, &delivery, allow_private).await;
                    let attempts = delivery.attempts + 1;
                    let next = schedule.next(&outcome, attempts, delivery.manual, now_micros(), jitter());
                    let _ = done.send(Finished {
                        delivery_id: delivery.delivery_id,
                        endpoint_id: delivery.endpoint_id,
                        attempts,
                        outcome,
                        next,
                    });
                });
            }
            if !full {
                tokio::select! {
                    _ = wake.notify.notified() => {}
                    _ = freed.notified() => {}
                    _ = tokio::time::sleep(POLL) => {
                        // Endpoints other nodes enabled or this one's deleted; on an error
                        // commits go on waking the sender.
                        let enabled = store.read(stored::any_enabled_endpoint).await.unwrap_or(true);
                        wake.endpoints.store(enabled, Ordering::Relaxed);
                    }
                }
            }
        }
    });
}

/// Claims what this node has room for, leaving out endpoints at their bound.
async fn claim(store: &Store, in_flight: &Mutex<InFlight>) -> crate::error::Result<Vec<Claimed>> {
    let (room, busy) = {
        let state = in_flight.lock().expect("in-flight lock");
        let busy: Vec<String> = state.per_endpoint.iter().filter(|(_, n)| **n >= PER_ENDPOINT).map(|(e, _)| e.clone()).collect();
        (IN_FLIGHT.saturating_sub(state.total).min(CLAIM_BATCH), busy)
    };
    if room == 0 {
        return Ok(Vec::new());
    }
    let now = now_micros();
    let lease_until = now + LEASE.as_micros() as i64;
    let claimed = store.write(move |c| stored::claim_due(c, now, lease_until, room as i64, PER_ENDPOINT as i64, &busy)).await?;
    // Over an endpoint's bound within one claim: keep its first PER_ENDPOINT in all, give the
    // rest back (their lease is cleared) for a later claim.
    let mut kept = Vec::with_capacity(claimed.len());
    let mut returned = Vec::new();
    {
        let mut state = in_flight.lock().expect("in-flight lock");
        for delivery in claimed {
            let count = state.per_endpoint.entry(delivery.endpoint_id.clone()).or_default();
            if *count >= PER_ENDPOINT {
                returned.push(delivery.delivery_id);
                continue;
            }
            *count += 1;
            state.total += 1;
            kept.push(delivery);
        }
    }
    if !returned.is_empty() {
        store.write(move |c| stored::release(c, &returned)).await?;
    }
    Ok(kept)
}

/// Writes finished attempts in batches, then frees their places.
async fn record_finished(store: Store, mut done: mpsc::UnboundedReceiver<Finished>, in_flight: Arc<Mutex<InFlight>>, freed: Arc<Notify>) {
    let mut batch = Vec::new();
    while done.recv_many(&mut batch, 1_000).await > 0 {
        let finished = std::mem::take(&mut batch);
        let write = finished.clone();
        loop {
            let write = write.clone();
            match store.write(move |c| stored::finish(c, &write, now_micros())).await {
                Ok(()) => break,
                Err(e) => {
                    // The attempts were made; their outcome must be kept (else they are made again).
                    tracing::warn!(error = %e, "recording webhook attempts failed; trying again");
                    tokio::time::sleep(POLL).await;
                }
            }
        }
        {
            let mut state = in_flight.lock().expect("in-flight lock");
            for f in &finished {
                if let Some(count) = state.per_endpoint.get_mut(&f.endpoint_id) {
                    *count -= 1;
                    if *count == 0 {
                        state.per_endpoint.remove(&f.endpoint_id);
                    }
                }
                state.total -= 1;
            }
        }
        freed.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_https_and_public_addresses_unless_private_is_allowed() {
        assert!(refusal("http://example.com/hook", false).is_some());
        assert!(refusal("https://127.0.0.1/hook", false).is_some());
        assert!(refusal("https://[::1]/hook", false).is_some());
        assert!(refusal("https://10.0.0.8/hook", false).is_some());
        assert_eq!(refusal("https://1.1.1.1/hook", false), None);
        assert_eq!(refusal("https://example.com/hook", false), None);
        assert_eq!(refusal("http://127.0.0.1:9000/hook", true), None);
    }
}
