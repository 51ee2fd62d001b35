//! Decodes arbitrary bytes into a market and a trade, then checks the market-safety
//! invariants (not only the absence of panics).
#![no_main]

use libfuzzer_sys::fuzz_target;
use lmsr::*;

struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn byte(&mut self) -> u8 {
        let (b, rest) = self.0.split_first().map_or((0, &[][..]), |(b, r)| (*b, r));
        self.0 = rest;
        b
    }
    /// A u128 whose magnitude is spread over all scales: 16 raw bytes shifted right by
    /// a decoded amount, so 1 wei and 2^127 are both common.
    fn value(&mut self) -> u128 {
        let shift = self.byte() as u32;
        let mut v = 0u128;
        for _ in 0..16 {
            v = (v << 8) | self.byte() as u128;
        }
        if shift >= 128 { v } else { v >> shift }
    }
}

fuzz_target!(|data: &[u8]| {
    let mut inp = Bytes(data);
    let n = (inp.byte() as usize % 66).max(1);
    let b = inp.value();
    let q: Vec<u128> = (0..n).map(|_| inp.value()).collect();
    let outcome = inp.byte() as usize % (n + 1);
    let amount = inp.value();
    let max_shares = inp.value();

    // prices: in [0, 1], summing to 1 within n * 1e-36
    if let Ok(p) = prices(b, &q) {
        assert_eq!(p.len(), q.len());
        let sum: u128 = p.iter().map(|x| x.raw()).sum();
        assert!(p.iter().all(|x| x.raw() <= PRICE_SCALE));
        assert!(sum.abs_diff(PRICE_SCALE) <= q.len() as u128, "sum {sum}");
        // C(q) >= max q_j (solvency floor)
        let c = cost_function(b, &q).unwrap();
        assert!(c.ceil_hi() >= *q.iter().max().unwrap());
    }

    // buy: exact edges and no round-trip profit
    if let Ok(r) = buy(b, &q, outcome, amount) {
        assert!(r.shares > 0 && r.cost <= amount);
        assert_eq!(buy_cost(b, &q, outcome, r.shares), Ok(r.cost));
        if let Ok(next) = buy_cost(b, &q, outcome, r.shares + 1) {
            assert!(next > amount, "not the largest s");
        }
        let mut q2 = q.clone();
        q2[outcome] += r.shares;
        match sell(b, &q2, outcome, r.shares) {
            Ok(s) => assert!(s.proceeds <= r.cost, "round trip profit"),
            Err(e) => assert!(matches!(e, LmsrError::TradeTooSmall | LmsrError::Overflow)),
        }
    }

    // sell exactly `amount` shares (capped to what exists), then invert it
    if outcome < n {
        let shares = if q[outcome] == 0 { 0 } else { amount % q[outcome] + 1 };
        if let Ok(s) = sell(b, &q, outcome, shares) {
            assert!(s.proceeds > 0);
            let inv = sell_for_proceeds(b, &q, outcome, s.proceeds, u128::MAX).unwrap();
            assert!(inv.shares <= shares && inv.proceeds >= s.proceeds);
            if inv.shares > 1 {
                let prev = sell(b, &q, outcome, inv.shares - 1).map_or(0, |x| x.proceeds);
                assert!(prev < s.proceeds, "not the fewest shares");
            }
            // selling never pays more than buying the same shares back costs
            let mut q2 = q.clone();
            q2[outcome] -= shares;
            if let Ok(c) = buy_cost(b, &q2, outcome, shares) {
                assert!(c >= s.proceeds, "sell-then-buy profit");
            }
        }
        if let Ok(s) = sell_for_proceeds(b, &q, outcome, amount, max_shares) {
            assert!(s.proceeds >= amount && s.shares <= max_shares && s.shares <= q[outcome]);
            assert_eq!(sell(b, &q, outcome, s.shares), Ok(s));
        }
    }

    // adding an outcome costs at most b ln((n+1)/n) rounded up (at q = 0) and is >= 0
    if let Ok(c) = add_outcome_cost(b, &q) {
        let fresh = add_outcome_cost(b, &vec![0; q.len()]).unwrap();
        assert!(c <= fresh, "add cost {c} > fresh {fresh}");
    }
});
