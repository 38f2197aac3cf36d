//! The sampler: it times a closure and does not know what the closure measures.
//!
//! # Timing model
//!
//! One sample runs the operation `k` times back to back between two reads of the timer
//! (`std::time::Instant`, i.e. `CLOCK_MONOTONIC` through the vDSO):
//!
//! ```text
//! t(k) = a + b·k + ε
//! ```
//!
//! `a` is the fixed cost of a sample (two timer reads, loop entry), `b` the cost of one call
//! plus one loop iteration and one `black_box` (a fraction of a nanosecond), `ε` noise. The
//! sampler takes `n` samples at `k = d, 2d, …, n·d` in a seeded random order (so that drift
//! does not line up with `k`), fits the line with Theil–Sen (robust to the few batches a
//! preemption or an interrupt inflates) and reports the slope `b` with a percentile-bootstrap
//! interval over the `(k, t)` pairs. The intercept `a` is reported beside it as the overhead
//! that was removed. `d` is chosen from a warm-up so that all samples together fill the time
//! budget.

use std::hint::black_box;
use std::time::{Duration, Instant};

use crate::stats::{self, Estimate, SplitMix64};
use crate::sys;

/// How long and how densely to sample one operation.
#[derive(Debug, Clone, Copy)]
pub struct SamplerConfig {
    /// Number of samples (batch sizes `d..=n·d`).
    pub samples: usize,
    /// Time to spend in the samples of one round, warm-up excluded.
    pub budget: Duration,
    /// Time to spend warming up (caches, branch predictors, frequency) and estimating `d`.
    pub warmup: Duration,
    /// Bootstrap resamples for the interval.
    pub resamples: usize,
    /// Rounds: each operation is sampled this many times, interleaved with the others.
    pub rounds: usize,
    /// Seed of the bootstrap and of the sample order.
    pub seed: u64,
    /// Confidence level of the interval.
    pub level: f64,
}

impl SamplerConfig {
    /// Defaults for a full probe (three rounds of about 30 ms per operation).
    pub fn full(seed: u64) -> Self {
        SamplerConfig {
            samples: 30,
            budget: Duration::from_millis(27),
            warmup: Duration::from_millis(4),
            resamples: 400,
            rounds: 3,
            seed,
            level: 0.95,
        }
    }

    /// Defaults for `--quick` (about 15 ms per operation).
    pub fn quick(seed: u64) -> Self {
        SamplerConfig {
            samples: 30,
            budget: Duration::from_millis(12),
            warmup: Duration::from_millis(2),
            resamples: 300,
            rounds: 1,
            seed,
            level: 0.95,
        }
    }
}

/// What the sampler found for one operation.
#[derive(Debug, Clone)]
pub struct Measurement {
    /// Cost of one call in nanoseconds (regression slope) with its interval.
    pub cost_ns: Estimate,
    /// Intercept of the fit, in nanoseconds. Poorly determined (slope error × the largest
    /// batch), so it is reported for transparency, not as the overhead; see
    /// [`timer_overhead_ns`].
    pub intercept_ns: f64,
    /// The batch unit `d`: samples ran `d, 2d, …, n·d` iterations.
    pub batch_unit: u64,
    /// Number of samples taken.
    pub samples: usize,
    /// Total calls made while sampling (warm-up excluded).
    pub iterations: u64,
    /// Involuntary context switches of this thread during sampling; `None` when the counters
    /// could not be read (unknown, not 0).
    pub involuntary_switches: Option<u64>,
    /// The bootstrap gave no interval: `cost_ns` is the bare point (zero width), which must not
    /// pass for a confident figure.
    pub interval_failed: bool,
    /// The slope of each round, when rounds were combined (see [`combine`]).
    pub round_points: Vec<f64>,
    /// Bootstrap replicates of the slope, for intervals of derived quantities.
    pub replicates: Vec<f64>,
}

/// Runs `f` `k` times between two timer reads and returns the elapsed nanoseconds.
#[inline(never)]
fn batch<R, F: FnMut() -> R>(f: &mut F, k: u64) -> f64 {
    let start = Instant::now();
    for _ in 0..black_box(k) {
        black_box(f());
    }
    start.elapsed().as_nanos() as f64
}

/// Measures the cost of one call of `f` under `cfg`.
///
/// Returns `None` only if the regression is impossible (fewer than two samples), which a
/// valid configuration never produces.
pub fn measure<R, F: FnMut() -> R>(cfg: &SamplerConfig, mut f: F) -> Option<Measurement> {
    let n = cfg.samples.max(2);
    // Warm-up: double the batch until the warm-up time is spent; the last batch gives a first
    // per-call estimate.
    let warm_start = Instant::now();
    let mut k = 1u64;
    let mut per_call_ns;
    loop {
        let t = batch(&mut f, k);
        per_call_ns = t / k as f64;
        if warm_start.elapsed() >= cfg.warmup || k >= 1 << 40 {
            break;
        }
        k *= 2;
    }
    let per_call_ns = per_call_ns.max(0.1);
    let units = (n * (n + 1) / 2) as f64;
    let d = ((cfg.budget.as_nanos() as f64 / (per_call_ns * units)) as u64).max(1);

    let mut rng = SplitMix64::new(cfg.seed ^ 0x005E_ED0F_0DE5);
    let mut order: Vec<u64> = (1..=n as u64).collect();
    for i in (1..order.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        order.swap(i, j);
    }
    let switches_before = sys::cpu::context_switches().map(|s| s.1).ok();
    let mut xs = Vec::with_capacity(n);
    let mut ys = Vec::with_capacity(n);
    for i in order {
        let k = i * d;
        ys.push(batch(&mut f, k));
        xs.push(k as f64);
    }
    let switches_after = sys::cpu::context_switches().map(|s| s.1).ok();

    let (intercept, slope) = stats::theil_sen(&xs, &ys)?;
    let mut scratch = Vec::new();
    let replicates = stats::bootstrap_pairs(&xs, &ys, cfg.resamples, cfg.seed, |x, y| {
        stats::theil_sen_with(x, y, &mut scratch).map(|(_, s)| s)
    });
    let interval = stats::percentile_interval(&replicates, slope, cfg.level);
    Some(Measurement {
        interval_failed: interval.is_none(),
        cost_ns: interval.unwrap_or(Estimate::exact(slope)),
        intercept_ns: intercept,
        batch_unit: d,
        samples: n,
        iterations: d * (n * (n + 1) / 2) as u64,
        involuntary_switches: switches_after
            .zip(switches_before)
            .map(|(a, b)| a.saturating_sub(b)),
        round_points: vec![slope],
        replicates,
    })
}

/// The cost of an empty sample (two timer reads around a zero-iteration loop), median of
/// `reps` tries, in nanoseconds: the fixed overhead that the regression removes.
pub fn timer_overhead_ns(reps: usize) -> f64 {
    let mut nop = || ();
    let ts: Vec<f64> = (0..reps.max(1)).map(|_| batch(&mut nop, 0)).collect();
    stats::median(&ts).unwrap_or(0.0)
}

/// Combines the measurements of one operation taken in several rounds (interleaved with other
/// operations, so a transient disturbance hits one round, not all): the point is the median of
/// the rounds' slopes, the interval is taken over the union of their bootstrap replicates, so
/// disagreement between rounds widens it. `None` for no rounds.
pub fn combine(rounds: &[Measurement], level: f64) -> Option<Measurement> {
    let first = rounds.first()?;
    let slopes: Vec<f64> = rounds.iter().map(|m| m.cost_ns.point).collect();
    let point = stats::median(&slopes)?;
    let replicates: Vec<f64> = rounds
        .iter()
        .flat_map(|m| m.replicates.iter().copied())
        .collect();
    let intercepts: Vec<f64> = rounds.iter().map(|m| m.intercept_ns).collect();
    let interval = stats::percentile_interval(&replicates, point, level);
    Some(Measurement {
        interval_failed: interval.is_none(),
        cost_ns: interval.unwrap_or(Estimate::exact(point)),
        intercept_ns: stats::median(&intercepts).unwrap_or(first.intercept_ns),
        batch_unit: first.batch_unit,
        samples: rounds.iter().map(|m| m.samples).sum(),
        iterations: rounds.iter().map(|m| m.iterations).sum(),
        involuntary_switches: rounds.iter().map(|m| m.involuntary_switches).sum(),
        round_points: slopes,
        replicates,
    })
}

/// The interval of `a − b` from two independent measurements' bootstrap replicates (a bare
/// point when there are none). The point may be ≤ 0 when the measurements were disturbed: it is
/// returned as measured, for the caller to warn about, never clamped.
pub fn difference(a: &Measurement, b: &Measurement, level: f64) -> Estimate {
    let point = a.cost_ns.point - b.cost_ns.point;
    let reps: Vec<f64> = a
        .replicates
        .iter()
        .zip(&b.replicates)
        .map(|(x, y)| x - y)
        .collect();
    stats::percentile_interval(&reps, point, level).unwrap_or(Estimate::exact(point))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rounds without bootstrap replicates give a bare point that says so, and switch counts
    /// that one round could not read make the total unknown, not a smaller number.
    #[test]
    fn a_failed_bootstrap_and_unknown_switches_are_marked() {
        let round = |p: f64, switches: Option<u64>| Measurement {
            cost_ns: Estimate::exact(p),
            intercept_ns: 0.0,
            batch_unit: 1,
            samples: 3,
            iterations: 6,
            involuntary_switches: switches,
            interval_failed: true,
            round_points: vec![p],
            replicates: Vec::new(),
        };
        let m = combine(&[round(10.0, Some(1)), round(12.0, None)], 0.95).unwrap();
        assert!(m.interval_failed);
        assert_eq!(m.cost_ns, Estimate::exact(11.0));
        assert_eq!(m.involuntary_switches, None);
        let m = combine(&[round(10.0, Some(1)), round(12.0, Some(2))], 0.95).unwrap();
        assert_eq!(m.involuntary_switches, Some(3));
        let d = difference(&round(3.0, None), &round(5.0, None), 0.95);
        assert_eq!(
            d.point, -2.0,
            "a negative difference is returned as measured"
        );
    }

    /// A spin of known relative cost: the sampler must order them correctly and see the
    /// larger one cost more per call, whatever this machine's speed.
    #[test]
    fn slope_scales_with_work() {
        let cfg = SamplerConfig::quick(7);
        let spin = |n: u64| {
            move || {
                let mut acc = 0u64;
                for i in 0..black_box(n) {
                    acc = acc.wrapping_mul(31).wrapping_add(i);
                }
                acc
            }
        };
        let small = measure(&cfg, spin(50)).unwrap();
        let large = measure(&cfg, spin(500)).unwrap();
        for m in [&small, &large] {
            assert!(m.cost_ns.lower <= m.cost_ns.point && m.cost_ns.point <= m.cost_ns.upper);
            assert!(m.cost_ns.point > 0.0);
        }
        assert!(
            large.cost_ns.point > 3.0 * small.cost_ns.point,
            "{small:?} {large:?}"
        );
    }
}
