//! Quote latency: exact interval LMSR vs a plain f64 closed form of the same buy quote, and a
//! limit fill (the most a buy may take within a price limit, then the buy of it) next to the
//! plain buy. `cargo bench -p lmsr` runs criterion groups, then prints median-of-N timings
//! and ratios.
use criterion::{black_box, criterion_group, Criterion};
use lmsr::{buy, buy_limit, prices, sell, Price, PRICE_SCALE};
use std::time::Instant;

const E18: u128 = 1_000_000_000_000_000_000;

fn market(n: usize) -> (u128, Vec<u128>) {
    let b = 1000 * E18;
    // a mildly uneven book, like a traded market
    (b, (0..n as u128).map(|j| j * 37 * E18 % (3 * b)).collect())
}

/// A limit 2% above outcome 0's price: a 100-ether buy passes it, so the fill is partial.
fn limit_of(b: u128, q: &[u128]) -> Price {
    Price::from_raw(prices(b, q).unwrap()[0].raw() + PRICE_SCALE / 50)
}

/// What a limit bet quotes: the most it may spend within the limit, then the buy of that.
fn limit_fill(b: u128, q: &[u128], amount: u128, limit: Price) -> Option<lmsr::Buy> {
    let most = buy_limit(b, q, 0, limit).ok()?;
    buy(b, q, 0, amount.min(most.max_cost)).ok()
}

/// The f64 baseline: softmax price of outcome 0 and s = b ln(1 + expm1(A/b)/p).
fn buy_f64(b: f64, q: &[f64], amount: f64) -> f64 {
    let m = q.iter().cloned().fold(f64::MIN, f64::max);
    let sum: f64 = q.iter().map(|x| ((x - m) / b).exp()).sum();
    let p = ((q[0] - m) / b).exp() / sum;
    (b * (amount / b).exp_m1() / p).ln_1p().floor()
}

fn bench(c: &mut Criterion) {
    for n in [2usize, 8, 64] {
        let (b, q) = market(n);
        let qf: Vec<f64> = q.iter().map(|&x| x as f64).collect();
        let mut g = c.benchmark_group(format!("n={n}"));
        g.bench_function("buy", |bn| bn.iter(|| buy(black_box(b), black_box(&q), 0, black_box(10 * E18))));
        let limit = limit_of(b, &q);
        g.bench_function("buy_limit_fill", |bn| {
            bn.iter(|| limit_fill(black_box(b), black_box(&q), black_box(100 * E18), black_box(limit)))
        });
        g.bench_function("sell", |bn| bn.iter(|| sell(black_box(b), black_box(&q), 1, black_box(5 * E18))));
        g.bench_function("prices", |bn| bn.iter(|| prices(black_box(b), black_box(&q))));
        g.bench_function("buy_f64", |bn| bn.iter(|| buy_f64(black_box(b as f64), black_box(&qf), black_box(10e18))));
        g.finish();
    }
}

/// Median over `rounds` of the mean time of `inner` calls, in microseconds.
fn median_us(mut f: impl FnMut(), inner: u32, rounds: usize) -> f64 {
    let mut v: Vec<f64> = (0..rounds)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..inner {
                f();
            }
            t.elapsed().as_secs_f64() * 1e6 / inner as f64
        })
        .collect();
    v.sort_by(|a, b| a.total_cmp(b));
    v[rounds / 2]
}

fn summary() {
    println!("\nsummary (median of 51 rounds):");
    for n in [2usize, 8, 64] {
        let (b, q) = market(n);
        let qf: Vec<f64> = q.iter().map(|&x| x as f64).collect();
        let exact = median_us(
            || {
                let _ = black_box(buy(black_box(b), &q, 0, black_box(10 * E18)));
            },
            200,
            51,
        );
        let float = median_us(
            || {
                let _ = black_box(buy_f64(black_box(b as f64), &qf, black_box(10e18)));
            },
            20_000,
            51,
        );
        let limit = limit_of(b, &q);
        let fill = median_us(
            || {
                let _ = black_box(limit_fill(black_box(b), &q, black_box(100 * E18), black_box(limit)));
            },
            200,
            51,
        );
        let sell_us = median_us(
            || {
                let _ = black_box(sell(black_box(b), &q, 1, black_box(5 * E18)));
            },
            200,
            51,
        );
        let prices_us = median_us(
            || {
                let _ = black_box(prices(black_box(b), &q));
            },
            200,
            51,
        );
        println!(
            "buy n={n}: exact {exact:.2} µs, f64 {float:.3} µs, ratio {:.0}x | limit fill {fill:.2} µs ({:.2}x the buy) | sell {sell_us:.2} µs | prices {prices_us:.2} µs",
            exact / float,
            fill / exact
        );
    }
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    summary();
}
