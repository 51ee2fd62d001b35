//! Provider webhooks (`docs/api.md`, "Webhooks"): endpoints, what they may be sent, how a delivery is
//! signed (Standard Webhooks), and when a failed one is tried again.

use std::net::IpAddr;
use std::time::Duration;

use base64::Engine;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::time::{Micros, Timestamp};
use crate::error::{Error, Result, Validator};

/// Every event type a webhook can subscribe to (besides `*`). `webhook.test` is sent on
/// request whatever an endpoint subscribes to.
pub(crate) const EVENT_TYPES: &[&str] = &[
    "market.created",
    "market.updated",
    "outcome.created",
    "outcome.updated",
    "trade.created",
    "market.closed",
    "market.resolved",
    "market.cancelled",
    "market.finalized",
    "claim.completed",
    "deposit.completed",
    "withdrawal.completed",
];
pub(crate) const TEST_EVENT: &str = "webhook.test";

/// Days of nothing but failures after which an endpoint is disabled.
pub(crate) const FAILING_DAYS_BEFORE_DISABLE: i64 = 5;
/// How long deliveries are also signed with the secret a rotation replaced.
pub(crate) const ROTATION_OVERLAP: Micros = 24 * 3600 * 1_000_000;
/// How long the deliveries log keeps a delivery after it ended.
pub(crate) const DELIVERIES_KEPT: Micros = 30 * 24 * 3600 * 1_000_000;
pub(crate) const MAX_URL_LEN: usize = 2_048;
pub(crate) const MAX_DESCRIPTION_LEN: usize = 1_000;

/// The delays before each retry (`docs/api.md`, "Webhooks"), each with at most 20% jitter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetrySchedule(pub Vec<Duration>);

impl Default for RetrySchedule {
    fn default() -> Self {
        let minutes = |m: u64| Duration::from_secs(60 * m);
        RetrySchedule(vec![Duration::from_secs(5), minutes(5), minutes(30), minutes(120), minutes(300), minutes(600), minutes(600)])
    }
}

impl std::str::FromStr for RetrySchedule {
    type Err = String;

    /// `5s,5m,30m,2h`: each delay a whole number of `ms`, `s`, `m` or `h`.
    fn from_str(text: &str) -> std::result::Result<Self, String> {
        let delays = text
            .split(',')
            .map(|part| {
                let part = part.trim();
                let split = part.find(|c: char| !c.is_ascii_digit()).unwrap_or(part.len());
                let (number, unit) = part.split_at(split);
                let n: u64 = number.parse().map_err(|_| format!("{part:?} is not a delay like 5s, 500ms, 5m or 2h"))?;
                let millis = match unit {
                    "ms" => 1,
                    "s" => 1_000,
                    "m" => 60_000,
                    "h" => 3_600_000,
                    _ => return Err(format!("{part:?} is not a delay like 5s, 500ms, 5m or 2h")),
                };
                n.checked_mul(millis)
                    .filter(|&ms| ms <= 7 * 24 * 3_600_000)
                    .map(Duration::from_millis)
                    .ok_or_else(|| format!("{part:?} is longer than a week"))
            })
            .collect::<std::result::Result<Vec<_>, _>>()?;
        Ok(RetrySchedule(delays))
    }
}

/// What happened to one attempt.
#[derive(Debug, Clone)]
pub(crate) enum AttemptOutcome {
    /// A 2xx answer.
    Succeeded { status: u16 },
    /// Any other answer; `retry_after` from its `Retry-After` header.
    Refused { status: u16, retry_after: Option<Duration> },
    /// No answer: refused address, connection error, timeout.
    Failed { error: String },
}

/// What a delivery becomes after an attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Next {
    Succeeded,
    RetryAt(Micros),
    Failed,
    /// 410 Gone: the delivery fails and the endpoint is disabled.
    FailedAndDisable,
}

impl RetrySchedule {
    /// After the `attempts`-th attempt (1-based) ended with `outcome` at `now`. `manual` is an
    /// extra attempt asked for by the provider: it is not retried. `jitter` is in [-1, 1].
    pub(crate) fn next(&self, outcome: &AttemptOutcome, attempts: i64, manual: bool, now: Micros, jitter: f64) -> Next {
        let retry_after = match outcome {
            AttemptOutcome::Succeeded { .. } => return Next::Succeeded,
            AttemptOutcome::Refused { status: 410, .. } => return Next::FailedAndDisable,
            AttemptOutcome::Refused { retry_after, .. } => *retry_after,
            AttemptOutcome::Failed { .. } => None,
        };
        let index = usize::try_from(attempts - 1).unwrap_or(usize::MAX);
        let Some(delay) = self.0.get(index).filter(|_| !manual) else { return Next::Failed };
        let jittered = delay.as_micros() as f64 * (1.0 + 0.2 * jitter.clamp(-1.0, 1.0));
        // Retry-After replaces the scheduled delay, up to the schedule's longest.
        let longest = self.0.iter().max().copied().unwrap_or_default();
        let wait = match retry_after {
            Some(asked) => asked.min(longest).as_micros() as i64,
            None => jittered as i64,
        };
        Next::RetryAt(now + wait.max(0))
    }
}

/// `whsec_` and the base64 of 32 random bytes.
pub(crate) fn new_secret(random: [u8; 32]) -> String {
    format!("whsec_{}", base64::engine::general_purpose::STANDARD.encode(random))
}

/// The key a `whsec_` secret stands for.
pub(crate) fn secret_key(secret: &str) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD.decode(secret.trim_start_matches("whsec_")).unwrap_or_default()
}

/// `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`, one per secret, space-separated.
pub(crate) fn signature(secrets: &[&str], id: &str, timestamp: i64, body: &[u8]) -> String {
    let mut signed = Vec::with_capacity(id.len() + body.len() + 24);
    signed.extend_from_slice(id.as_bytes());
    signed.push(b'.');
    signed.extend_from_slice(timestamp.to_string().as_bytes());
    signed.push(b'.');
    signed.extend_from_slice(body);
    secrets
        .iter()
        .map(|secret| {
            let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &secret_key(secret));
            let tag = ring::hmac::sign(&key, &signed);
            format!("v1,{}", base64::engine::general_purpose::STANDARD.encode(tag.as_ref()))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Addresses a webhook may be sent to without `--webhook-allow-private`: none of loopback,
/// private, link-local, shared, documentation, multicast or otherwise reserved ranges.
pub(crate) fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            !(v4.is_unspecified()
                || v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_broadcast()
                || v4.is_documentation()
                || v4.is_multicast()
                || a == 0
                || a >= 240
                || (a == 100 && (64..128).contains(&b))
                || (a == 192 && b == 0 && v4.octets()[2] == 0)
                || (a == 198 && (b == 18 || b == 19)))
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            !(v6.is_unspecified()
                || v6.is_loopback()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80
                || first == 0x2001 && v6.segments()[1] == 0x0db8
                || first == 0x0064 && v6.segments()[1] == 0xff9b)
        }
    }
}

/// A checked endpoint URL: `https` (or `http` when private addresses are allowed), a host, no
/// credentials or fragment.
pub(crate) fn check_url(text: &str, allow_private: bool, v: &mut Validator) -> Option<url::Url> {
    if text.len() > MAX_URL_LEN {
        v.push("url", format!("must be at most {MAX_URL_LEN} characters"));
        return None;
    }
    let Ok(url) = url::Url::parse(text) else {
        v.push("url", "must be an absolute URL");
        return None;
    };
    let scheme_ok = url.scheme() == "https" || (allow_private && url.scheme() == "http");
    if !scheme_ok {
        v.push("url", "must be an https URL");
        return None;
    }
    if url.host().is_none() || !url.username().is_empty() || url.password().is_some() || url.fragment().is_some() {
        v.push("url", "must name a host, without credentials or a fragment");
        return None;
    }
    Some(url)
}

/// The subscribed event types, stored as one space-separated list (`*` for all).
pub(crate) fn check_event_types(types: &[String], v: &mut Validator) -> String {
    if types.is_empty() {
        v.push("event_types", "must list at least one event type, or \"*\"");
    }
    for t in types {
        if t != "*" && !EVENT_TYPES.contains(&t.as_str()) {
            v.push("event_types", format!("{t:?} is not an event type; known: *, {}", EVENT_TYPES.join(", ")));
        }
    }
    if types.iter().any(|t| t == "*") {
        return "*".into();
    }
    let mut list: Vec<&str> = types.iter().map(String::as_str).collect();
    list.sort_unstable();
    list.dedup();
    list.join(" ")
}

pub(crate) fn check_description(description: &Option<String>, v: &mut Validator) {
    if let Some(d) = description {
        v.check(d.chars().count() <= MAX_DESCRIPTION_LEN, "description", "must be at most 1000 characters");
    }
}

/// The event types an endpoint can subscribe to, as the document lists them: `*` and
/// [`EVENT_TYPES`]. Requests carry them as strings, checked by [`check_event_types`].
pub(crate) struct SubscribedType;

impl utoipa::PartialSchema for SubscribedType {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        // Names for generated enums (`*` has none of its own): ALL, MARKET_CREATED, ...
        let names: Vec<String> =
            std::iter::once("ALL".to_string()).chain(EVENT_TYPES.iter().map(|t| t.replace('.', "_").to_uppercase())).collect();
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .description(Some("An event type, or `*` for all."))
            .enum_values(Some(std::iter::once("*").chain(EVENT_TYPES.iter().copied())))
            .extensions(Some(utoipa::openapi::extensions::Extensions::builder().add("x-enum-varnames", names).build()))
            .into()
    }
}

impl ToSchema for SubscribedType {}

/// `POST /v1/providers/webhooks`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct EndpointInput {
    /// An `https` URL whose host resolves to public addresses only (`http` and private
    /// addresses too when the server runs with `--webhook-allow-private`); otherwise 422.
    #[schema(max_length = 2048, pattern = "^https?://[^\\s]+$")]
    pub(crate) url: String,
    /// Event types to receive, or `["*"]` for all.
    #[schema(min_items = 1, value_type = Vec<SubscribedType>)]
    pub(crate) event_types: Vec<String>,
    #[schema(max_length = 1000)]
    pub(crate) description: Option<String>,
}

/// `PUT /v1/providers/webhooks/{id}`: the fields given change.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct EndpointPatch {
    /// As on creation.
    #[schema(max_length = 2048, pattern = "^https?://[^\\s]+$")]
    pub(crate) url: Option<String>,
    #[schema(min_items = 1, value_type = Option<Vec<SubscribedType>>)]
    pub(crate) event_types: Option<Vec<String>>,
    #[schema(max_length = 1000)]
    pub(crate) description: Option<String>,
    pub(crate) enabled: Option<bool>,
}

/// A webhook endpoint as the API shows it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct Endpoint {
    pub(crate) id: String,
    pub(crate) url: String,
    pub(crate) event_types: Vec<String>,
    pub(crate) description: Option<String>,
    pub(crate) enabled: bool,
    /// Why the service disabled it (`gone`: the endpoint answered 410; `failing`: five days
    /// of failures); null when enabled or disabled by the provider.
    pub(crate) disabled_reason: Option<String>,
    pub(crate) created_at: Timestamp,
    pub(crate) updated_at: Timestamp,
}

/// The endpoint with its signing secret: the create response.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct EndpointCreated {
    #[serde(flatten)]
    pub(crate) endpoint: Endpoint,
    /// `whsec_` + base64 of 32 random bytes. Shown only here and on rotation.
    pub(crate) secret: String,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct RotatedSecret {
    /// The new secret; for 24 hours deliveries carry a signature with the old one too.
    pub(crate) secret: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum DeliveryStatus {
    Pending,
    Succeeded,
    Failed,
}

impl DeliveryStatus {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            DeliveryStatus::Pending => "pending",
            DeliveryStatus::Succeeded => "succeeded",
            DeliveryStatus::Failed => "failed",
        }
    }

    pub(crate) fn parse(text: &str) -> Result<DeliveryStatus> {
        match text {
            "pending" => Ok(DeliveryStatus::Pending),
            "succeeded" => Ok(DeliveryStatus::Succeeded),
            "failed" => Ok(DeliveryStatus::Failed),
            _ => Err(Error::invalid("status", "must be pending, succeeded or failed")),
        }
    }
}

/// One event on its way to one endpoint.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct Delivery {
    pub(crate) id: String,
    /// The event's id: the `webhook-id` header of every attempt.
    pub(crate) event_id: String,
    pub(crate) event_type: String,
    pub(crate) status: DeliveryStatus,
    pub(crate) attempts: i64,
    pub(crate) last_status_code: Option<i64>,
    pub(crate) last_error: Option<String>,
    /// When the next attempt is due (pending deliveries only).
    pub(crate) next_attempt_at: Option<Timestamp>,
    pub(crate) created_at: Timestamp,
    pub(crate) updated_at: Timestamp,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schedule_reads_units_and_refuses_the_rest() {
        let s: RetrySchedule = "1s,500ms,2m,1h".parse().unwrap();
        assert_eq!(s.0, vec![Duration::from_secs(1), Duration::from_millis(500), Duration::from_secs(120), Duration::from_secs(3600)]);
        assert!("1x".parse::<RetrySchedule>().is_err());
        assert!("".parse::<RetrySchedule>().is_err());
        assert!("200h".parse::<RetrySchedule>().is_err());
    }

    #[test]
    fn retries_follow_the_schedule_with_bounded_jitter_then_fail() {
        let s = RetrySchedule::default();
        let refused = AttemptOutcome::Refused { status: 500, retry_after: None };
        assert_eq!(s.next(&refused, 1, false, 0, 0.0), Next::RetryAt(5_000_000));
        assert_eq!(s.next(&refused, 1, false, 0, 1.0), Next::RetryAt(6_000_000));
        assert_eq!(s.next(&refused, 1, false, 0, -1.0), Next::RetryAt(4_000_000));
        assert_eq!(s.next(&refused, 2, false, 10, 0.0), Next::RetryAt(10 + 300_000_000));
        assert_eq!(s.next(&refused, 7, false, 0, 0.0), Next::RetryAt(36_000_000_000));
        assert_eq!(s.next(&refused, 8, false, 0, 0.0), Next::Failed);
        assert_eq!(s.next(&refused, 1, true, 0, 0.0), Next::Failed);
        assert_eq!(s.next(&AttemptOutcome::Refused { status: 410, retry_after: None }, 1, false, 0, 0.0), Next::FailedAndDisable);
        assert_eq!(s.next(&AttemptOutcome::Succeeded { status: 204 }, 3, false, 0, 0.0), Next::Succeeded);
        let asked = AttemptOutcome::Refused { status: 429, retry_after: Some(Duration::from_secs(42)) };
        assert_eq!(s.next(&asked, 1, false, 0, 1.0), Next::RetryAt(42_000_000));
    }

    /// The Standard Webhooks specification's own example.
    #[test]
    fn signatures_match_the_standard_webhooks_example() {
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let body = br#"{"test": 2432232314}"#;
        assert_eq!(
            signature(&[secret], "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    #[test]
    fn private_and_reserved_addresses_are_not_public() {
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fc00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "224.0.0.1",
        ] {
            assert!(!is_public(private.parse().unwrap()), "{private}");
        }
        for public in ["1.1.1.1", "8.8.8.8", "2606:4700:4700::1111"] {
            assert!(is_public(public.parse().unwrap()), "{public}");
        }
    }
}
