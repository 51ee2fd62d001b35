//! Webhook endpoints and their deliveries. Deliveries are created by the event log's own write
//! ([`enqueue`], in `events::record`), claimed by one node at a time with a lease, and finished
//! in batches by the sending worker (`webhooks::Sender`).

use super::sql::{placeholders, Conn, Dialect, FromRow, Param, Row};
use crate::domain::ids::new_id;
use crate::domain::page::{Page, PageRequest};
use crate::domain::time::{Micros, Timestamp};
use crate::domain::webhook::{
    AttemptOutcome, Delivery, DeliveryStatus, Endpoint, Next, FAILING_DAYS_BEFORE_DISABLE, ROTATION_OVERLAP, TEST_EVENT,
};
use crate::error::{Error, Result};

const ENDPOINT_COLUMNS: &str = "id, url, event_types, description, enabled, disabled_reason, created_at, updated_at";
const DELIVERY_COLUMNS: &str =
    "id, event_id, event_type, status, attempts, last_status_code, last_error, next_attempt_at, created_at, updated_at";

impl FromRow for Endpoint {
    fn from_row(r: &Row) -> Result<Endpoint> {
        Ok(Endpoint {
            id: r.text(0)?,
            url: r.text(1)?,
            event_types: r.text(2)?.split(' ').map(str::to_string).collect(),
            description: r.opt_text(3)?,
            enabled: r.int(4)? != 0,
            disabled_reason: r.opt_text(5)?,
            created_at: Timestamp(r.int(6)?),
            updated_at: Timestamp(r.int(7)?),
        })
    }
}

impl FromRow for Delivery {
    fn from_row(r: &Row) -> Result<Delivery> {
        Ok(Delivery {
            id: r.int(0)?.to_string(),
            event_id: r.text(1)?,
            event_type: r.text(2)?,
            status: DeliveryStatus::parse(&r.text(3)?)?,
            attempts: r.int(4)?,
            last_status_code: r.opt_int(5)?,
            last_error: r.opt_text(6)?,
            next_attempt_at: r.opt_int(7)?.map(Timestamp),
            created_at: Timestamp(r.int(8)?),
            updated_at: Timestamp(r.int(9)?),
        })
    }
}

/// A checked new endpoint (see `domain::webhook`).
#[derive(Clone)]
pub(crate) struct NewEndpoint {
    pub(crate) url: String,
    pub(crate) event_types: String,
    pub(crate) description: Option<String>,
    pub(crate) secret: String,
}

pub(crate) fn create_endpoint(c: &mut dyn Conn, provider_id: &str, new: NewEndpoint, now: Micros) -> Result<Endpoint> {
    let id = new_id();
    c.exec(
        "INSERT INTO webhook_endpoints (id, provider_id, url, event_types, description, enabled, secret, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, 1, $6, $7, $7)",
        &[
            Param::Text(&id),
            Param::Text(provider_id),
            Param::Text(&new.url),
            Param::Text(&new.event_types),
            (&new.description).into(),
            Param::Text(&new.secret),
            Param::Int(now),
        ],
    )?;
    endpoint(c, provider_id, &id)
}

/// The provider's endpoint (another provider's is 404).
pub(crate) fn endpoint(c: &mut dyn Conn, provider_id: &str, id: &str) -> Result<Endpoint> {
    super::sql::query_opt_as(
        c,
        &format!("SELECT {ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = $1 AND provider_id = $2"),
        &[Param::Text(id), Param::Text(provider_id)],
    )?
    .ok_or(Error::NotFound)
}

/// The provider's endpoints, oldest first.
pub(crate) fn list_endpoints(c: &mut dyn Conn, provider_id: &str, page: PageRequest) -> Result<Page<Endpoint>> {
    let total = c.query_one("SELECT COUNT(*) FROM webhook_endpoints WHERE provider_id = $1", &[Param::Text(provider_id)])?.int(0)?;
    let rows = super::sql::query_as(
        c,
        &format!("SELECT {ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE provider_id = $1 ORDER BY created_at, id LIMIT $2 OFFSET $3"),
        &[Param::Text(provider_id), Param::Int(page.per_page), Param::Int((page.page - 1) * page.per_page)],
    )?;
    Ok(Page::new(rows, page, total))
}

/// A checked change; `None` leaves a field as it is.
#[derive(Clone, Default)]
pub(crate) struct EndpointChange {
    pub(crate) url: Option<String>,
    pub(crate) event_types: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) enabled: Option<bool>,
}

pub(crate) fn update_endpoint(c: &mut dyn Conn, provider_id: &str, id: &str, change: EndpointChange, now: Micros) -> Result<Endpoint> {
    endpoint(c, provider_id, id)?;
    let enabled = change.enabled.map(i64::from);
    // Enabling again forgets why it was disabled and its run of failures.
    c.exec(
        "UPDATE webhook_endpoints SET url = COALESCE($1, url), event_types = COALESCE($2, event_types), \
         description = COALESCE($3, description), enabled = COALESCE($4, enabled), \
         disabled_reason = CASE WHEN $4 = 1 THEN NULL ELSE disabled_reason END, \
         failing_since = CASE WHEN $4 = 1 AND enabled = 0 THEN NULL ELSE failing_since END, updated_at = $5 \
         WHERE id = $6 AND provider_id = $7",
        &[
            (&change.url).into(),
            (&change.event_types).into(),
            (&change.description).into(),
            enabled.into(),
            Param::Int(now),
            Param::Text(id),
            Param::Text(provider_id),
        ],
    )?;
    endpoint(c, provider_id, id)
}

/// Deletes the endpoint and its deliveries.
pub(crate) fn delete_endpoint(c: &mut dyn Conn, provider_id: &str, id: &str) -> Result<()> {
    endpoint(c, provider_id, id)?;
    c.exec("DELETE FROM webhook_deliveries WHERE endpoint_id = $1", &[Param::Text(id)])?;
    c.exec("DELETE FROM webhook_endpoints WHERE id = $1", &[Param::Text(id)])?;
    Ok(())
}

/// Replaces the secret; the old one still signs for [`ROTATION_OVERLAP`].
pub(crate) fn rotate_secret(c: &mut dyn Conn, provider_id: &str, id: &str, secret: &str, now: Micros) -> Result<()> {
    endpoint(c, provider_id, id)?;
    c.exec(
        "UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_until = $1, secret = $2, updated_at = $3 WHERE id = $4",
        &[Param::Int(now + ROTATION_OVERLAP), Param::Text(secret), Param::Int(now), Param::Text(id)],
    )?;
    Ok(())
}

/// The endpoint's deliveries, newest first.
pub(crate) fn deliveries(
    c: &mut dyn Conn,
    provider_id: &str,
    endpoint_id: &str,
    status: Option<DeliveryStatus>,
    page: PageRequest,
) -> Result<Page<Delivery>> {
    endpoint(c, provider_id, endpoint_id)?;
    let status = status.map(DeliveryStatus::as_str);
    let filter = "endpoint_id = $1 AND (CAST($2 AS TEXT) IS NULL OR status = CAST($2 AS TEXT))";
    let params = [Param::Text(endpoint_id), status.into()];
    let total = c.query_one(&format!("SELECT COUNT(*) FROM webhook_deliveries WHERE {filter}"), &params)?.int(0)?;
    let rows = super::sql::query_as(
        c,
        &format!("SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries WHERE {filter} ORDER BY id DESC LIMIT $3 OFFSET $4"),
        &[params[0], params[1], Param::Int(page.per_page), Param::Int((page.page - 1) * page.per_page)],
    )?;
    Ok(Page::new(rows, page, total))
}

fn delivery(c: &mut dyn Conn, id: i64) -> Result<Delivery> {
    super::sql::query_opt_as(c, &format!("SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries WHERE id = $1"), &[Param::Int(id)])?
        .ok_or(Error::NotFound)
}

/// One more attempt of a delivery, now, whatever its status (it is not retried after).
pub(crate) fn retry_delivery(c: &mut dyn Conn, provider_id: &str, endpoint_id: &str, delivery_id: &str, now: Micros) -> Result<Delivery> {
    endpoint(c, provider_id, endpoint_id)?;
    let delivery_id: i64 = delivery_id.parse().map_err(|_| Error::NotFound)?;
    let row = c.query_opt(
        "SELECT d.event_position, e.position FROM webhook_deliveries d LEFT JOIN events e ON e.position = d.event_position \
         WHERE d.id = $1 AND d.endpoint_id = $2",
        &[Param::Int(delivery_id), Param::Text(endpoint_id)],
    )?;
    match row {
        None => return Err(Error::NotFound),
        Some(r) if r.opt_int(1)?.is_none() => return Err(Error::conflict("event_expired", "the event of this delivery is no longer kept")),
        Some(_) => {}
    }
    c.exec(
        "UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = $1, manual = 1, claimed_until = 0, updated_at = $1 WHERE id = $2",
        &[Param::Int(now), Param::Int(delivery_id)],
    )?;
    delivery(c, delivery_id)
}

/// A `webhook.test` event for this endpoint alone, delivered like any other.
pub(crate) fn send_test(c: &mut dyn Conn, provider_id: &str, endpoint_id: &str, now: Micros) -> Result<Delivery> {
    endpoint(c, provider_id, endpoint_id)?;
    let event_id = new_id();
    let envelope = crate::domain::event::webhook_test_envelope(&event_id, now, endpoint_id)?;
    let position = c
        .query_one(
            "INSERT INTO events (id, market_id, seq, wallet_id, type, created_at, envelope) VALUES ($1, NULL, NULL, NULL, $2, $3, $4) RETURNING position",
            &[Param::Text(&event_id), Param::Text(TEST_EVENT), Param::Int(now), Param::Text(&envelope)],
        )?
        .int(0)?;
    let id = c
        .query_one(
            "INSERT INTO webhook_deliveries (endpoint_id, event_position, event_id, event_type, status, next_attempt_at, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, 'pending', $5, $5, $5) RETURNING id",
            &[Param::Text(endpoint_id), Param::Int(position), Param::Text(&event_id), Param::Text(TEST_EVENT), Param::Int(now)],
        )?
        .int(0)?;
    delivery(c, id)
}

/// The columns of the events a write records that choose their endpoints:
/// `(event_position, event_id, kind, provider_id, market_id)`. A market event's provider is
/// its market's.
pub(crate) const SOURCE_COLUMNS: usize = 5;

/// `INSERT` of a pending delivery for every enabled endpoint of each event's provider that
/// subscribes to its type; the events are the CTE or table `source` with [`SOURCE_COLUMNS`].
pub(crate) fn enqueue_sql(now_param: usize) -> String {
    format!(
        "INSERT INTO webhook_deliveries (endpoint_id, event_position, event_id, event_type, status, next_attempt_at, created_at, updated_at) \
         SELECT w.id, source.event_position, source.event_id, source.kind, 'pending', ${now_param}, ${now_param}, ${now_param} \
         FROM source JOIN webhook_endpoints w ON w.provider_id = COALESCE(source.provider_id, (SELECT m.provider_id FROM markets m WHERE m.id = source.market_id)) \
         WHERE w.enabled = 1 AND (w.event_types = '*' OR (' ' || w.event_types || ' ') LIKE ('% ' || source.kind || ' %'))"
    )
}

/// A claimed attempt: what to send, and to whom.
#[derive(Debug, Clone)]
pub(crate) struct Claimed {
    pub(crate) delivery_id: i64,
    pub(crate) endpoint_id: String,
    pub(crate) url: String,
    /// The secrets that sign it: the current one, and the replaced one during a rotation.
    pub(crate) secrets: Vec<String>,
    pub(crate) event_id: String,
    /// The envelope; None when the event is no longer kept.
    pub(crate) body: Option<String>,
    /// Attempts made before this one.
    pub(crate) attempts: i64,
    pub(crate) manual: bool,
}

/// Whether any provider has an enabled endpoint.
pub(crate) fn any_enabled_endpoint(c: &mut dyn Conn) -> Result<bool> {
    Ok(c.query_opt("SELECT 1 FROM webhook_endpoints WHERE enabled = 1 LIMIT 1", &[])?.is_some())
}

/// Claims up to `per_endpoint` due deliveries of each enabled endpoint not in `busy`, at most
/// `limit` in all, until `lease_until`: no other node attempts them before. Oldest due first
/// per endpoint. Each endpoint's are one ordered range of the pending deliveries' index by
/// endpoint, so a claim costs the same whatever the backlog and whatever the planner's
/// statistics: one ordered scan of every due delivery, skipping those of endpoints at their
/// bound, took 0.3-1.2 s a claim on PostgreSQL with a 50,000-trade backlog in the soak
/// (docs/performance.md, "Soak").
pub(crate) fn claim_due(
    c: &mut dyn Conn,
    now: Micros,
    lease_until: Micros,
    limit: i64,
    per_endpoint: i64,
    busy: &[String],
) -> Result<Vec<Claimed>> {
    let mut params = Vec::new();
    let exclude = if busy.is_empty() {
        String::new()
    } else {
        let first = match c.dialect() {
            Dialect::Sqlite => 1,
            Dialect::Postgres => 5,
        };
        params.extend(busy.iter().map(|id| Param::Text(id)));
        format!(" AND w.id NOT IN ({})", placeholders(first, busy.len()))
    };
    let claimed: Vec<i64> = match c.dialect() {
        Dialect::Postgres => {
            let mut all = vec![Param::Int(lease_until), Param::Int(now), Param::Int(per_endpoint), Param::Int(limit)];
            all.extend(params);
            let rows = c.query(
                &format!(
                    "UPDATE webhook_deliveries SET claimed_until = $1 WHERE id IN (SELECT due.id FROM webhook_endpoints w \
                     CROSS JOIN LATERAL (SELECT d.id FROM webhook_deliveries d WHERE d.endpoint_id = w.id AND d.status = 'pending' \
                     AND d.next_attempt_at <= $2 AND d.claimed_until < $2 ORDER BY d.next_attempt_at LIMIT $3 \
                     FOR UPDATE OF d SKIP LOCKED) due WHERE w.enabled = 1{exclude} LIMIT $4) RETURNING id"
                ),
                &all,
            )?;
            rows.iter().map(|r| r.int(0)).collect::<Result<_>>()?
        }
        Dialect::Sqlite => {
            let endpoints =
                c.query(&format!("SELECT w.id FROM webhook_endpoints w WHERE w.enabled = 1{exclude} ORDER BY w.id"), &params)?;
            let mut ids = Vec::new();
            for endpoint in endpoints {
                let left = limit - ids.len() as i64;
                if left <= 0 {
                    break;
                }
                let endpoint_id = endpoint.text(0)?;
                let rows = c.query(
                    "UPDATE webhook_deliveries SET claimed_until = $1 WHERE id IN (SELECT id FROM webhook_deliveries \
                     WHERE endpoint_id = $2 AND status = 'pending' AND next_attempt_at <= $3 AND claimed_until < $3 \
                     ORDER BY next_attempt_at LIMIT $4) RETURNING id",
                    &[Param::Int(lease_until), Param::Text(&endpoint_id), Param::Int(now), Param::Int(per_endpoint.min(left))],
                )?;
                for r in rows {
                    ids.push(r.int(0)?);
                }
            }
            ids
        }
    };
    if claimed.is_empty() {
        return Ok(Vec::new());
    }
    let ids = claimed;
    let mut params: Vec<Param<'_>> = vec![Param::Int(now)];
    params.extend(ids.iter().map(|id| Param::Int(*id)));
    let rows = c.query(
        &format!(
            "SELECT d.id, d.endpoint_id, w.url, w.secret, CASE WHEN w.previous_secret_until > $1 THEN w.previous_secret END, \
             d.event_id, e.envelope, d.attempts, d.manual FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id \
             LEFT JOIN events e ON e.position = d.event_position WHERE d.id IN ({}) ORDER BY d.next_attempt_at",
            placeholders(2, ids.len())
        ),
        &params,
    )?;
    rows.iter()
        .map(|r| {
            Ok(Claimed {
                delivery_id: r.int(0)?,
                endpoint_id: r.text(1)?,
                url: r.text(2)?,
                secrets: std::iter::once(r.text(3)?).chain(r.opt_text(4)?).collect(),
                event_id: r.text(5)?,
                body: r.opt_text(6)?,
                attempts: r.int(7)?,
                manual: r.int(8)? != 0,
            })
        })
        .collect()
}

/// What became of one claimed attempt.
#[derive(Debug, Clone)]
pub(crate) struct Finished {
    pub(crate) delivery_id: i64,
    pub(crate) endpoint_id: String,
    /// Attempts made, this one included.
    pub(crate) attempts: i64,
    pub(crate) outcome: AttemptOutcome,
    pub(crate) next: Next,
}

/// Records finished attempts and what they do to their endpoints: a success ends its run of
/// failures, 410 disables it, and a failure after five days of nothing but failures too.
/// Successes, nearly all of them, take one statement per answer status.
pub(crate) fn finish(c: &mut dyn Conn, finished: &[Finished], now: Micros) -> Result<()> {
    let mut succeeded: std::collections::BTreeMap<u16, Vec<i64>> = std::collections::BTreeMap::new();
    let mut recovered: Vec<&str> = Vec::new();
    for f in finished {
        if let (Next::Succeeded, AttemptOutcome::Succeeded { status }) = (&f.next, &f.outcome) {
            succeeded.entry(*status).or_default().push(f.delivery_id);
            if !recovered.contains(&f.endpoint_id.as_str()) {
                recovered.push(&f.endpoint_id);
            }
        }
    }
    for (status, ids) in &succeeded {
        for chunk in ids.chunks(500) {
            let mut params = vec![Param::Int(i64::from(*status)), Param::Int(now)];
            params.extend(chunk.iter().map(|id| Param::Int(*id)));
            c.exec(
                &format!(
                    "UPDATE webhook_deliveries SET status = 'succeeded', attempts = attempts + 1, last_status_code = $1, \
                     last_error = NULL, next_attempt_at = NULL, claimed_until = 0, manual = 0, updated_at = $2 WHERE id IN ({})",
                    placeholders(3, chunk.len())
                ),
                &params,
            )?;
        }
    }
    if !recovered.is_empty() {
        let params: Vec<Param<'_>> = recovered.iter().map(|id| Param::Text(id)).collect();
        c.exec(
            &format!(
                "UPDATE webhook_endpoints SET failing_since = NULL WHERE failing_since IS NOT NULL AND id IN ({})",
                placeholders(1, recovered.len())
            ),
            &params,
        )?;
    }
    for f in finished.iter().filter(|f| f.next != Next::Succeeded) {
        let (status_code, error) = match &f.outcome {
            AttemptOutcome::Succeeded { status } | AttemptOutcome::Refused { status, .. } => (Some(i64::from(*status)), None),
            AttemptOutcome::Failed { error } => (None, Some(error.as_str())),
        };
        let (status, next_attempt_at) = match f.next {
            Next::RetryAt(at) => ("pending", Some(at)),
            _ => ("failed", None),
        };
        c.exec(
            "UPDATE webhook_deliveries SET status = $1, attempts = $2, last_status_code = $3, last_error = $4, \
             next_attempt_at = $5, claimed_until = 0, manual = 0, updated_at = $6 WHERE id = $7",
            &[
                Param::Text(status),
                Param::Int(f.attempts),
                status_code.into(),
                error.into(),
                next_attempt_at.into(),
                Param::Int(now),
                Param::Int(f.delivery_id),
            ],
        )?;
        if f.next == Next::FailedAndDisable {
            c.exec(
                "UPDATE webhook_endpoints SET enabled = 0, disabled_reason = 'gone', updated_at = $1 WHERE id = $2 AND enabled = 1",
                &[Param::Int(now), Param::Text(&f.endpoint_id)],
            )?;
        } else {
            c.exec(
                "UPDATE webhook_endpoints SET failing_since = COALESCE(failing_since, $1) WHERE id = $2",
                &[Param::Int(now), Param::Text(&f.endpoint_id)],
            )?;
            c.exec(
                "UPDATE webhook_endpoints SET enabled = 0, disabled_reason = 'failing', updated_at = $1 \
                 WHERE id = $2 AND enabled = 1 AND failing_since <= $3",
                &[Param::Int(now), Param::Text(&f.endpoint_id), Param::Int(now - FAILING_DAYS_BEFORE_DISABLE * 86_400_000_000)],
            )?;
        }
    }
    Ok(())
}

/// Deliveries that ended more than `keep_for` ago are forgotten.
pub(crate) fn prune(c: &mut dyn Conn, now: Micros, keep_for: Micros) -> Result<u64> {
    c.exec("DELETE FROM webhook_deliveries WHERE status <> 'pending' AND updated_at < $1", &[Param::Int(now - keep_for)])
}

/// Gives claimed deliveries back before their lease ends (a node over an endpoint's bound).
pub(crate) fn release(c: &mut dyn Conn, ids: &[i64]) -> Result<()> {
    if ids.is_empty() {
        return Ok(());
    }
    let params: Vec<Param<'_>> = ids.iter().map(|id| Param::Int(*id)).collect();
    c.exec(&format!("UPDATE webhook_deliveries SET claimed_until = 0 WHERE id IN ({})", placeholders(1, ids.len())), &params)?;
    Ok(())
}
