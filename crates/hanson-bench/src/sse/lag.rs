//! A histogram of event lags, in microseconds, with a bounded relative error.

/// Receive-minus-timestamp delays, microseconds: a log-linear histogram (128 sub-buckets per
/// power of two, so a reported percentile is within 1% above the true value).
pub(crate) struct LagHistogram {
    pub(super) buckets: Vec<u64>,
    pub count: u64,
    pub max_us: u64,
}

const SUB_BUCKETS: u64 = 128;

const MAX_LAG_US: u64 = 1 << 40;

impl LagHistogram {
    pub(crate) fn new() -> LagHistogram {
        LagHistogram { buckets: vec![0; Self::index(MAX_LAG_US) + 1], count: 0, max_us: 0 }
    }

    pub(super) fn index(v: u64) -> usize {
        let v = v.min(MAX_LAG_US);
        if v < SUB_BUCKETS {
            return v as usize;
        }
        let e = 63 - u64::from(v.leading_zeros()); // >= 7
        (SUB_BUCKETS * (e - 6) + (v >> (e - 7)) - SUB_BUCKETS) as usize
    }

    /// The largest value that falls into bucket `i`.
    pub(super) fn upper(i: usize) -> u64 {
        let i = i as u64;
        if i < SUB_BUCKETS {
            return i;
        }
        let e = i / SUB_BUCKETS + 6;
        let m = i % SUB_BUCKETS + SUB_BUCKETS;
        ((m + 1) << (e - 7)) - 1
    }

    pub(crate) fn record(&mut self, us: u64) {
        self.buckets[Self::index(us)] += 1;
        self.count += 1;
        self.max_us = self.max_us.max(us);
    }

    pub(crate) fn merge(&mut self, other: &LagHistogram) {
        for (a, b) in self.buckets.iter_mut().zip(&other.buckets) {
            *a += b;
        }
        self.count += other.count;
        self.max_us = self.max_us.max(other.max_us);
    }

    /// Nearest-rank percentile in ms (the bucket's upper edge, capped at the maximum seen).
    pub(crate) fn percentile_ms(&self, p: f64) -> f64 {
        if self.count == 0 {
            return f64::NAN;
        }
        let rank = ((p / 100.0) * self.count as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (i, n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return Self::upper(i).min(self.max_us) as f64 / 1000.0;
            }
        }
        self.max_us as f64 / 1000.0
    }
}
