//! Unit tests at the extremes and for every error path.
use super::*;

const E18: u128 = 1_000_000_000_000_000_000;
const E36: u128 = PRICE_SCALE;

fn f64_cost(b: f64, q: &[f64]) -> f64 {
    let m = q.iter().cloned().fold(f64::MIN, f64::max);
    m + b * q.iter().map(|x| ((x - m) / b).exp()).sum::<f64>().ln()
}

#[test]
fn error_cases_never_panic() {
    use LmsrError::*;
    assert_eq!(prices(10, &[0]), Err(InvalidOutcomeCount));
    assert_eq!(prices(10, &[]), Err(InvalidOutcomeCount));
    assert_eq!(prices(10, &[0; 65]), Err(InvalidOutcomeCount));
    assert_eq!(prices(0, &[0, 0]), Err(ZeroLiquidity));
    assert_eq!(prices(u128::MAX, &[0, 0]), Err(Overflow));
    assert_eq!(prices(10, &[u128::MAX, 0]), Err(Overflow));
    assert_eq!(buy(10, &[0, 0], 2, 5), Err(InvalidOutcome));
    assert_eq!(buy(10, &[0, 0], usize::MAX, 5), Err(InvalidOutcome));
    assert_eq!(buy(10, &[0, 0], 0, 0), Err(TradeTooSmall));
    assert_eq!(buy(10, &[0, 0], 0, u128::MAX), Err(Overflow));
    assert_eq!(buy_cost(10, &[0, 0], 0, u128::MAX), Err(Overflow));
    assert_eq!(sell(10, &[5, 0], 0, 6), Err(InsufficientShares));
    assert_eq!(sell(10, &[5, 0], 0, 0), Err(TradeTooSmall));
    assert_eq!(sell(10, &[5, 0], 0, u128::MAX), Err(InsufficientShares));
    assert_eq!(sell_for_proceeds(10, &[5, 0], 0, 0, 5), Err(TradeTooSmall));
    assert_eq!(sell_for_proceeds(10, &[5, 0], 0, 1_000, 5), Err(Unreachable));
    assert_eq!(sell_for_proceeds(10, &[5, 0], 0, 1, 0), Err(Unreachable));
    assert_eq!(sell_for_proceeds(10, &[0, 0], 0, 1, u128::MAX), Err(Unreachable));
    assert_eq!(sell_for_proceeds(10, &[5, 0], 0, u128::MAX, 5), Err(Overflow));
    assert_eq!(add_outcome_cost(10, &[0; 64]), Err(InvalidOutcomeCount));
    assert_eq!(add_outcome_cost(0, &[0; 2]), Err(ZeroLiquidity));
    assert_eq!(liquidity_parameter(100, 1), Err(InvalidOutcomeCount));
    assert_eq!(liquidity_parameter(100, 65), Err(InvalidOutcomeCount));
    assert_eq!(liquidity_parameter(0, 2), Err(ZeroLiquidity));
    assert_eq!(liquidity_parameter(u128::MAX, 2), Err(Overflow));
    assert!(Overflow.to_string().contains("range"));
}

#[test]
fn price_display() {
    assert_eq!(Price::from_raw(E36 / 2).to_string(), "0.500000000000000000");
    assert_eq!(Price::from_raw(0).to_string(), "0.000000000000000001");
    assert_eq!(Price::from_raw(E36).to_string(), "0.999999999999999999");
    assert_eq!(Price::from_raw(u128::MAX).to_string(), "0.999999999999999999");
    assert_eq!(Price::from_raw(E36 - 1).to_string(), "0.999999999999999999");
    assert_eq!(Price::from_raw(E18 / 2).to_string(), "0.000000000000000001");
    assert_eq!(Price::from_raw(123_456_789_012_345_678_499_999_999_999_999_999).to_string(), "0.123456789012345678");
    assert_eq!(Price::from_raw(123_456_789_012_345_678_500_000_000_000_000_000).to_string(), "0.123456789012345679");
}

#[test]
fn uniform_prices_and_liquidity() {
    for n in [2usize, 3, 8, 64] {
        let p = prices(E18, &vec![7; n]).unwrap();
        let want = E36 / n as u128;
        for x in &p {
            assert!(x.raw().abs_diff(want) <= 1, "{n}");
        }
        let b = liquidity_parameter(1000 * E18, n).unwrap();
        let bf = 1000e18 / (n as f64).ln();
        assert!((b as f64 - bf).abs() / bf < 1e-12);
    }
    // b ln 2 <= L < (b+1) ln 2 for a tiny L
    assert_eq!(liquidity_parameter(1, 2), Ok(1));
    assert_eq!(liquidity_parameter(2, 2), Ok(2));
    assert_eq!(liquidity_parameter(3, 2), Ok(4)); // 4 ln2 = 2.77
    assert_eq!(liquidity_parameter(1, 3), Err(LmsrError::ZeroLiquidity)); // ln 3 > 1
}

#[test]
fn buy_matches_f64_and_is_exact_at_edges() {
    let b = 1000 * E18;
    let q = [0u128, 0];
    let r = buy(b, &q, 0, 10 * E18).unwrap();
    let s = r.shares as f64;
    let cf = f64_cost(1000e18, &[s, 0.0]) - f64_cost(1000e18, &[0.0, 0.0]);
    assert!((cf - 10e18).abs() / 10e18 < 1e-9);
    assert!(r.cost <= 10 * E18);
    assert_eq!(buy_cost(b, &q, 0, r.shares).unwrap(), r.cost);
    assert!(buy_cost(b, &q, 0, r.shares + 1).unwrap() > 10 * E18);
}

fn check_buy_edges(b: u128, q: &[u128], i: usize, amount: u128) -> Buy {
    let r = buy(b, q, i, amount).unwrap();
    assert!(r.cost <= amount && r.cost == buy_cost(b, q, i, r.shares).unwrap());
    assert!(buy_cost(b, q, i, r.shares + 1).unwrap() > amount);
    r
}

fn check_sell_target_edges(b: u128, q: &[u128], i: usize, target: u128) -> Sell {
    let r = sell_for_proceeds(b, q, i, target, u128::MAX).unwrap();
    assert!(r.proceeds >= target && r.proceeds == sell(b, q, i, r.shares).unwrap().proceeds);
    if r.shares > 1 {
        assert!(sell(b, q, i, r.shares - 1).map_or(0, |s| s.proceeds) < target);
    }
    r
}

#[test]
fn extremes_amounts_and_liquidity() {
    for b in [1_000u128, E18, E36, MAX_VALUE] {
        for amount in [1u128, 1000, E18, E36] {
            let q = [0u128, 0];
            match buy(b, &q, 0, amount) {
                Ok(r) => {
                    check_buy_edges(b, &q, 0, amount);
                    let q2 = [r.shares, 0];
                    let s = sell(b, &q2, 0, r.shares);
                    if let Ok(s) = s {
                        assert!(s.proceeds <= r.cost);
                    }
                }
                // with b = 1000 the cost of a share is ~0.5 wei: 1 wei always buys something
                Err(e) => panic!("b={b} amount={amount}: {e:?}"),
            }
        }
    }
}

#[test]
fn skewed_market_one_minus_1e30() {
    // q_0 - q_j = 69 b with n = 64 => p_0 ~ 1 - 63 e^-69 ~ 1 - 6.4e-29; use 71.4 b for ~1e-30.
    let b = E36 / 1000;
    let mut q = vec![0u128; 64];
    q[0] = b * 714 / 10 + 10;
    let p = prices(b, &q).unwrap();
    let tail = 63.0 * (-71.4f64).exp();
    let one_minus_p0 = (E36 - p[0].raw()) as f64 / 1e36;
    assert!((one_minus_p0 - tail).abs() < 1e-33 + tail * 1e-12, "{one_minus_p0} {tail}");
    let sum: u128 = p.iter().map(|x| x.raw()).sum();
    assert!(sum.abs_diff(E36) <= 64);
    assert_eq!(p[0].to_string(), "0.999999999999999999");
    assert_eq!(p[1].to_string(), "0.000000000000000001");
    // buying the expensive outcome: cost ~ shares; buying a cheap one: huge share counts
    for amount in [1u128, E18, E36 / 100] {
        check_buy_edges(b, &q, 0, amount);
        check_buy_edges(b, &q, 5, amount);
    }
    for target in [1u128, 1000, E18] {
        check_sell_target_edges(b, &q, 0, target);
    }
    let c = add_outcome_cost(b, &q[..63]).unwrap();
    assert!(c <= 1 + (b as f64 * (-71.4f64).exp()) as u128);
}

#[test]
fn sixty_four_outcomes() {
    let b = 5 * E18;
    let q: Vec<u128> = (0..64u128).map(|j| j * E18 / 3).collect();
    let p = prices(b, &q).unwrap();
    let sum: u128 = p.iter().map(|x| x.raw()).sum();
    assert!(sum.abs_diff(E36) <= 64);
    for i in [0usize, 31, 63] {
        let r = check_buy_edges(b, &q, i, 3 * E18);
        let mut q2 = q.clone();
        q2[i] += r.shares;
        let s = sell(b, &q2, i, r.shares).unwrap();
        assert!(s.proceeds <= r.cost && r.cost - s.proceeds <= 2);
        check_sell_target_edges(b, &q2, i, E18);
    }
}

#[test]
fn add_outcome_matches_formula() {
    let b = 1000 * E18;
    // fresh 2-outcome market: b ln(3/2)
    let c = add_outcome_cost(b, &[0, 0]).unwrap();
    let want = 1000e18 * 1.5f64.ln();
    assert!((c as f64 - want).abs() / want < 1e-12);
    assert_eq!(add_outcome_cost(7, &[0, 0]), Ok(3)); // 7 ln 1.5 = 2.838
}

#[test]
fn interval_width_within_proven_bound() {
    // |C_hi - C_lo| <= 2048 b ulps (b * 2^-245 wei)
    for &b in &[1u128, 1000, E18, E36, MAX_VALUE] {
        for q in [vec![0u128, 0], vec![MAX_VALUE, 0, 5, 9], (0..64u128).map(|j| (j * (b / 70 + 1)).min(MAX_VALUE)).collect()] {
            let c = cost_function(b, &q).unwrap();
            assert!(c.width_raw() <= 2048u128.saturating_mul(b), "b={b}");
            for i in 0..q.len().min(4) {
                let ci = cost_interval(b, &q, i, b / 3 + 1).unwrap();
                assert!(ci.width_raw() <= 4096u128.saturating_mul(b), "b={b}");
            }
        }
    }
}

#[test]
fn huge_cost_function_saturates_instead_of_panicking() {
    // Found by the fuzzer: C(q) can exceed 2^128 wei when b and q are near 2^126.
    let c = cost_function(MAX_VALUE, &[MAX_VALUE; 64]).unwrap();
    assert_eq!(c.ceil_hi(), u128::MAX);
    assert_eq!(c.floor_lo(), u128::MAX);
    // buying would need more than 2^126 shares: reported, not wrapped
    assert_eq!(buy(MAX_VALUE, &[MAX_VALUE; 64], 3, MAX_VALUE), Err(LmsrError::Overflow));
    let r = buy(MAX_VALUE, &[MAX_VALUE; 64], 3, E36).unwrap();
    assert!(r.cost <= E36 && r.shares > E36);
}
