//! Token-bucket rate limits per client IP and per credential. Buckets live in this process:
//! with several nodes each enforces its own share (documented in the README).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

#[derive(Debug, Clone, Copy)]
pub struct Rule {
    /// Sustained requests per second; 0 disables the rule.
    pub per_second: f64,
    pub burst: f64,
}

impl Rule {
    pub const OFF: Rule = Rule { per_second: 0.0, burst: 0.0 };
}

struct Bucket {
    tokens: f64,
    last: Instant,
}

pub struct Limiter {
    rule: Rule,
    buckets: Mutex<HashMap<String, Bucket>>,
}

/// Buckets idle long enough to be full again are dropped past this many keys.
const PRUNE_AT: usize = 100_000;

impl Limiter {
    pub fn new(rule: Rule) -> Self {
        Limiter { rule, buckets: Mutex::new(HashMap::new()) }
    }

    /// Takes one token for `key`; on refusal returns the whole seconds until one is available.
    pub fn check(&self, key: &str) -> Result<(), u64> {
        if self.rule.per_second <= 0.0 {
            return Ok(());
        }
        let now = Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        if buckets.len() >= PRUNE_AT {
            let refill_secs = self.rule.burst / self.rule.per_second;
            buckets.retain(|_, b| now.duration_since(b.last).as_secs_f64() < refill_secs);
        }
        let bucket = buckets.entry(key.to_string()).or_insert(Bucket { tokens: self.rule.burst, last: now });
        let elapsed = now.duration_since(bucket.last).as_secs_f64();
        bucket.tokens = (bucket.tokens + elapsed * self.rule.per_second).min(self.rule.burst);
        bucket.last = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            let wait = (1.0 - bucket.tokens) / self.rule.per_second;
            Err(wait.ceil().max(1.0) as u64)
        }
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
}
