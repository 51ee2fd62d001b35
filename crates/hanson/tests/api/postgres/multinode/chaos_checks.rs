//! What the chaos tests check of the service's own work across each fault: a market whose
//! close, and a resolution whose dispute window's end, fall inside the fault, and the webhooks
//! of every event, each once (`docs/api.md`, "Webhooks", "Market operations", "Lifecycle and
//! settlement").

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::json;

use super::support::library::Db;
use super::*;

/// Lets a node deliver to the test's loopback receiver and retry within a second.
pub(super) const WEBHOOK_FLAGS: [&str; 3] = ["--webhook-allow-private", "--webhook-retry-schedule", "1s"];

/// The fixture's in-process server: out of the trade lead, and a sender like the nodes'.
pub(super) fn fixture_settings() -> Settings {
    Settings { forward_trades: false, ..webhook_settings("1s") }
}

/// Each test starts its fault 1 s after `Watched::start` and holds it 3 to 5 s (or, killed,
/// for good): the close and the end of the window fall inside.
const CLOSES_IN: Duration = Duration::from_millis(2_500);
const DISPUTE_WINDOW_SECONDS: i64 = 2;
/// A killed node can have sent this many attempts to one endpoint without recording them
/// (`docs/api.md`, "Webhooks": at most 16 in flight per endpoint and node).
const IN_FLIGHT_PER_ENDPOINT: usize = 16;
const HOOK: &str = "/chaos";

/// A receiver with an endpoint for every event, a market that closes and a resolution that
/// becomes final during the fault.
pub(super) struct Watched {
    receiver: Receiver,
    endpoint_id: String,
    /// The log's last position before the endpoint: every later event is delivered to it.
    after_position: i64,
    closing: String,
    finalizing: String,
    /// When the setup ended and the load began: the times printed are from then.
    began: i64,
}

/// An event id, its type and market, from the log or a webhook.
type Seen = (String, String, Option<String>);

impl Watched {
    /// Made last in the setup, just before the load and the fault; `t` bets on the market
    /// that is then resolved.
    pub(super) async fn start(f: &Fixture, t: &Trader) -> Watched {
        let db = Db::open(&f.app.database_url);
        let after_position = db.int("SELECT COALESCE(max(position), 0) FROM events", &[]).await;
        let receiver = Receiver::start().await;
        let endpoint = create_endpoint(&f.app, &f.provider.key, &receiver.url(HOOK), &["*"]).await;

        let mut body = f.market_body(2);
        let closes_at = time::OffsetDateTime::now_utc() + CLOSES_IN;
        body["starts_at"] = json!(iso(-60));
        body["ends_at"] = json!(closes_at.format(&time::format_description::well_known::Rfc3339).unwrap());
        let r = f.create_market(body).await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
        let closing = r.body["market"]["id"].as_str().unwrap().to_string();

        let market = f.market(2).await;
        let finalizing = id_of(&market);
        let r = bet_on(&f.app, &finalizing, outcome(&market, 0), t, ONE_TOKEN).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        let body = json!({ "winning_outcome_id": outcome(&market, 0), "resolver_wallet_id": "ops", "dispute_window_seconds": DISPUTE_WINDOW_SECONDS });
        let r = f.app.post(&format!("/v1/providers/markets/{finalizing}/resolve"), Some(&f.provider.key), body).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);

        let endpoint_id = endpoint["id"].as_str().unwrap().to_string();
        Watched { receiver, endpoint_id, after_position, closing, finalizing, began: super::support::library::now_micros() }
    }

    /// The events the endpoint is owed: the log's after it was created.
    async fn log(&self, db: &Db) -> Vec<Seen> {
        let text = db
            .text(
                "SELECT COALESCE(string_agg(id || ' ' || type || ' ' || COALESCE(market_id, '-'), ',' ORDER BY position), '') \
                 FROM events WHERE position > $1 AND type <> 'webhook.test'",
                &[self.after_position.into()],
            )
            .await;
        text.split(',')
            .filter(|row| !row.is_empty())
            .map(|row| {
                let mut fields = row.split(' ').map(str::to_string);
                let (id, kind, market) = (fields.next().unwrap(), fields.next().unwrap(), fields.next().unwrap());
                (id, kind, (market != "-").then_some(market))
            })
            .collect()
    }

    /// What the receiver got: (webhook-id, type, market) of each request, in order.
    fn received(&self) -> Vec<Seen> {
        let received = self.receiver.received(HOOK);
        let seen = received.iter().map(|r| {
            let body = r.json();
            assert_eq!(body["id"].as_str(), Some(r.header("webhook-id")), "the webhook-id is the event's id");
            (r.header("webhook-id").to_string(), body["type"].as_str().unwrap().to_string(), body["market_id"].as_str().map(str::to_string))
        });
        seen.collect()
    }

    async fn pending(&self, db: &Db) -> i64 {
        let sql = "SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'pending'";
        db.int(sql, &[(&self.endpoint_id).into()]).await
    }

    /// Waits (bounded) for the close, the finalization, and every delivery to end: none
    /// pending, so none is still to be attempted (a killed node's lease ends after 20 s), and
    /// each event of the log received.
    pub(super) async fn settle(&self, db: &Db) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let log = self.log(db).await;
            let closed = log.iter().any(|(_, kind, m)| kind == "market.closed" && m.as_ref() == Some(&self.closing));
            let finalized = log.iter().any(|(_, kind, m)| kind == "market.finalized" && m.as_ref() == Some(&self.finalizing));
            let received: BTreeSet<String> = self.received().into_iter().map(|(id, _, _)| id).collect();
            let missing = log.iter().filter(|(id, _, _)| !received.contains(id)).count();
            let pending = self.pending(db).await;
            if closed && finalized && missing == 0 && pending == 0 {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "within 60 s of the heal: closed {closed}, finalized {finalized}, {missing} of {} events not received, {pending} deliveries pending",
                log.len()
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Checks that each event of the log was delivered once, and that the watched market
    /// closed and the resolution became final once each. `killed`: a node was killed, and what
    /// it had sent without recording is sent again. Returns the figures to print.
    pub(super) async fn check(&self, db: &Db, killed: bool) -> String {
        let log = self.log(db).await;
        let received = self.received();
        let mut per_id: BTreeMap<&str, usize> = BTreeMap::new();
        for (id, _, _) in &received {
            *per_id.entry(id).or_default() += 1;
        }
        let logged: BTreeSet<&str> = log.iter().map(|(id, _, _)| id.as_str()).collect();
        assert_eq!(logged.len(), log.len(), "an event id twice in the log");
        let missing: Vec<&&str> = logged.iter().filter(|id| !per_id.contains_key(**id)).collect();
        assert!(missing.is_empty(), "{} events of the log never delivered: {missing:?}", missing.len());
        let unknown: Vec<&&str> = per_id.keys().filter(|id| !logged.contains(**id)).collect();
        assert!(unknown.is_empty(), "webhooks of events the log lacks: {unknown:?}");

        let endpoint = [(&self.endpoint_id).into()];
        let sql = "SELECT COALESCE(string_agg(event_id, ','), '') FROM webhook_deliveries WHERE endpoint_id = $1";
        let rows: Vec<String> = db.text(sql, &endpoint).await.split(',').filter(|id| !id.is_empty()).map(str::to_string).collect();
        let rows_of: BTreeSet<&str> = rows.iter().map(String::as_str).collect();
        assert_eq!(rows.len(), rows_of.len(), "two delivery rows for one event");
        assert!(
            rows_of == logged,
            "the delivery rows are not the log's events: {:?}",
            rows_of.symmetric_difference(&logged).collect::<Vec<_>>()
        );
        let sql = "SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = $1 AND status <> 'succeeded'";
        assert_eq!(db.int(sql, &endpoint).await, 0, "every delivery succeeded");

        let duplicated: Vec<(&str, usize)> = per_id.iter().filter(|(_, n)| **n > 1).map(|(id, n)| (*id, *n)).collect();
        let duplicates: usize = duplicated.iter().map(|(_, n)| n - 1).sum();
        if !duplicated.is_empty() {
            let kinds: Vec<(&str, &str, usize)> = duplicated
                .iter()
                .map(|(id, n)| (*id, received.iter().find(|(r, _, _)| r == id).map_or("", |(_, kind, _)| kind.as_str()), *n))
                .collect();
            println!("webhooks received more than once (id, type, times): {kinds:?}");
        }
        if killed {
            // At least once: an attempt the killed node made but had not recorded is made again
            // once its lease ends (`docs/api.md`, "Webhooks").
            assert!(duplicated.iter().all(|(_, n)| *n == 2), "an event sent more than twice: {duplicated:?}");
            assert!(duplicates <= IN_FLIGHT_PER_ENDPOINT, "{duplicates} duplicates, more than a node has in flight");
        } else {
            assert_eq!(duplicates, 0, "webhooks sent twice though no node died: {duplicated:?}");
        }

        let mut at = Vec::new();
        for (kind, market) in [("market.closed", &self.closing), ("market.finalized", &self.finalizing)] {
            let is = |(_, k, m): &&Seen| k == kind && m.as_ref() == Some(market);
            let logged: Vec<&str> = log.iter().filter(is).map(|(id, _, _)| id.as_str()).collect();
            assert_eq!(logged.len(), 1, "{kind} of {market} in the log: {logged:?}");
            let got: BTreeSet<&str> = received.iter().filter(is).map(|(id, _, _)| id.as_str()).collect();
            assert_eq!(got, BTreeSet::from([logged[0]]), "{kind} of {market}: one event delivered");
            // When, to see that it fell inside the fault (from 1 s on).
            let created = db.int("SELECT created_at FROM events WHERE id = $1", &[logged[0].into()]).await;
            at.push((created - self.began) as f64 / 1e6);
        }
        format!(
            "webhooks: {} events delivered, {duplicates} duplicates; market.closed once (at {:.1} s), market.finalized once (at {:.1} s)",
            log.len(),
            at[0],
            at[1]
        )
    }
}
