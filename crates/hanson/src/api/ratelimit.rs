//! Token-bucket rate limits per client IP and per credential, through `governor`'s keyed
//! GCRA limiters. Buckets live in this process: with several nodes each enforces its own
//! share (`docs/operations.md`).

use std::hash::Hash;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};

#[derive(Debug, Clone, Copy)]
pub struct Rule {
    /// Sustained requests per second; 0 disables the rule.
    pub per_second: f64,
    pub burst: f64,
}

impl Rule {
    pub const OFF: Rule = Rule { per_second: 0.0, burst: 0.0 };

    /// The governor quota: one request per `1 / per_second`, bursts of `burst` (whole
    /// requests, at least 1); `None` when the rule is off.
    fn quota(self) -> Option<Quota> {
        if self.per_second.is_nan() || self.per_second <= 0.0 {
            return None;
        }
        let burst = self.burst.floor().clamp(1.0, f64::from(u32::MAX)) as u32;
        // governor multiplies the period by the burst in u64 nanoseconds unchecked: keep the
        // whole window under 2^62 ns (146 years).
        let max_period_nanos = ((1u64 << 62) / u64::from(burst)) as f64;
        let period_nanos = (1e9 / self.per_second).clamp(1.0, max_period_nanos);
        let quota = Quota::with_period(Duration::from_nanos(period_nanos as u64))?;
        Some(quota.allow_burst(NonZeroU32::new(burst)?))
    }
}

type Keyed<K> = RateLimiter<K, DefaultKeyedStateStore<K>, DefaultClock>;

pub(crate) struct Limiter<K: Hash + Eq + Clone> {
    /// `None` when the rule is off.
    limiter: Option<Keyed<K>>,
    checks: AtomicU64,
}

/// Past this many keys, buckets idle long enough to be full again are dropped.
const PRUNE_AT: usize = 100_000;
/// How often (in checks) the key count is looked at.
const PRUNE_EVERY: u64 = 1_024;

impl<K: Hash + Eq + Clone> Limiter<K> {
    pub(crate) fn new(rule: Rule) -> Self {
        Limiter { limiter: rule.quota().map(RateLimiter::keyed), checks: AtomicU64::new(0) }
    }

    /// Takes one token for `key`; on refusal returns the whole seconds until one is available.
    pub(crate) fn check(&self, key: K) -> Result<(), u64> {
        let Some(limiter) = &self.limiter else {
            return Ok(());
        };
        if self.checks.fetch_add(1, Ordering::Relaxed) % PRUNE_EVERY == PRUNE_EVERY - 1 && limiter.len() >= PRUNE_AT {
            // governor's retain_recent drops the keys whose bucket has refilled (state equal to a fresh key).
            limiter.retain_recent();
            limiter.shrink_to_fit();
        }
        limiter.check_key(&key).map_err(|not_until| {
            let wait = not_until.wait_time_from(limiter.clock().now());
            let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
            secs.max(1)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burst_then_refusal_with_retry_after() {
        let limiter = Limiter::new(Rule { per_second: 0.5, burst: 3.0 });
        for _ in 0..3 {
            assert_eq!(limiter.check("a"), Ok(()));
        }
        assert_eq!(limiter.check("a"), Err(2));
        assert_eq!(limiter.check("b"), Ok(()), "keys are independent");
        assert_eq!(Limiter::new(Rule::OFF).check("a"), Ok(()));
    }

    #[test]
    fn idle_keys_are_pruned_past_the_threshold() {
        let limiter = Limiter::new(Rule { per_second: 1e9, burst: 1.0 });
        for i in 0..(PRUNE_AT as u64 + 2 * PRUNE_EVERY) {
            assert_eq!(limiter.check(i), Ok(()));
        }
        let kept = limiter.limiter.as_ref().unwrap().len();
        assert!(kept < PRUNE_AT, "{kept} keys kept");
    }

    #[test]
    fn extreme_rules_do_not_panic() {
        for rule in
            [Rule { per_second: 1e-30, burst: 1e12 }, Rule { per_second: 1e30, burst: 0.5 }, Rule { per_second: f64::NAN, burst: 1.0 }]
        {
            let limiter = Limiter::new(rule);
            for _ in 0..3 {
                let _ = limiter.check(1u8);
            }
        }
    }
}
