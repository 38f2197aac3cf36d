//! A paired measurement of the difference between two operations' costs.
//!
//! Two independent measurements of ~250 ns each, whose true difference is 10–50 ns, give a
//! difference whose noise is the sum of both measurements' noise — and a disturbance that hits
//! one of them moments apart from the other shifts the difference by its whole size. Here `a`
//! and `b` are timed in pairs of short batches, back to back, in a seeded random order per
//! pair, with the same batch size `k` (so the fixed cost of a batch cancels):
//!
//! ```text
//! δᵢ = (t_a(k) − t_b(k)) / k
//! ```
//!
//! A slow phase of the machine that adds a constant (a host preemption) lasts longer than one
//! pair, so it hits both halves and cancels; a short burst hits one half and makes one `δᵢ` an
//! outlier, which the **median** of the `δᵢ` ignores. A phase that slows both halves by a share
//! (a busy hardware thread on the same core) scales `δᵢ` by that share: given a sensor,
//! [`paired_difference_sensed`] leaves such pairs out. The interval is a percentile bootstrap
//! of that median over the pairs (Efron & Tibshirani 1993, ch. 13).

use std::time::{Duration, Instant};

use super::time_batch;
use crate::stats::{self, Estimate, SplitMix64};

/// How long to pair two operations.
#[derive(Debug, Clone, Copy)]
pub struct PairedConfig {
    /// Time to spend in pairs, warm-up excluded.
    pub budget: Duration,
    /// The length one batch should have (sets `k` from the slower operation's warm-up cost).
    pub batch: Duration,
    /// Time to warm each operation up for.
    pub warmup: Duration,
    /// Bootstrap resamples of the median.
    pub resamples: usize,
    /// Seed of the order within pairs and of the bootstrap.
    pub seed: u64,
    /// Confidence level of the interval.
    pub level: f64,
}

impl PairedConfig {
    /// Defaults for a full probe: about 40 ms of 20 µs batches (a thousand pairs of syscalls).
    pub fn full(seed: u64) -> Self {
        PairedConfig {
            budget: Duration::from_millis(40),
            batch: Duration::from_micros(20),
            warmup: Duration::from_millis(1),
            resamples: 400,
            seed,
            level: 0.95,
        }
    }

    /// Defaults for `--quick`: about 10 ms of pairs.
    pub fn quick(seed: u64) -> Self {
        PairedConfig {
            budget: Duration::from_millis(10),
            warmup: Duration::from_micros(300),
            resamples: 300,
            ..PairedConfig::full(seed)
        }
    }
}

/// What pairing two operations found.
#[derive(Debug, Clone, PartialEq)]
pub struct PairedDifference {
    /// Median of the per-pair differences `a − b` per call, with its bootstrap interval. As
    /// measured: it may be ≤ 0, never clamped.
    pub diff_ns: Estimate,
    /// Median over the pairs of each side's cost per call, `a` and `b` (ns; the fixed cost of
    /// a batch included, divided by `batch_calls`).
    pub a_ns: f64,
    pub b_ns: f64,
    /// Number of pairs taken.
    pub pairs: usize,
    /// Pairs that shared their core (their lanes read at least [`super::CONTENDED`] times the
    /// fastest); `None` where no sensor was given ([`paired_difference_sensed`]).
    pub contended_pairs: Option<usize>,
    /// Whether those pairs were left out of the median (as the sampler leaves out batches).
    pub contended_excluded: bool,
    /// Calls of each operation per batch.
    pub batch_calls: u64,
}

/// The per-call cost of `f` after warming it up for `warmup` (doubling batches).
fn warm<R, F: FnMut() -> R>(warmup: Duration, f: &mut F) -> f64 {
    let start = Instant::now();
    let mut k = 1u64;
    loop {
        let t = time_batch(f, k);
        if start.elapsed() >= warmup || k >= 1 << 40 {
            return t / k as f64;
        }
        k *= 2;
    }
}

/// Times `a` and `b` in pairs of batches for `cfg.budget` and returns the median difference
/// `a − b` per call. `None` when fewer than 3 pairs fit in the budget (the interval would be
/// meaningless), which the configurations above never produce.
pub fn paired_difference<RA, RB, FA, FB>(
    cfg: &PairedConfig,
    a: FA,
    b: FB,
) -> Option<PairedDifference>
where
    FA: FnMut() -> RA,
    FB: FnMut() -> RB,
{
    paired_difference_sensed(cfg, a, b, &mut || None)
}

/// [`paired_difference`] with the core's share sensed between pairs: `lanes()` times
/// independent register adds and returns core cycles per add (`None`: not measured). A pair's
/// lanes are the slower of those before and after it; pairs whose lanes read at least
/// [`super::CONTENDED`] times the fastest ([`super::best_lanes`]) shared the core with another
/// hardware thread, which slows both halves by a share and so their difference by the same
/// share (not a constant that cancels). They are left out of the median when enough others
/// remain ([`super::UNCONTENDED_SHARE`], [`super::MIN_UNCONTENDED`]).
pub fn paired_difference_sensed<RA, RB, FA, FB>(
    cfg: &PairedConfig,
    mut a: FA,
    mut b: FB,
    lanes: &mut dyn FnMut() -> Option<f64>,
) -> Option<PairedDifference>
where
    FA: FnMut() -> RA,
    FB: FnMut() -> RB,
{
    let cost = warm(cfg.warmup, &mut a)
        .max(warm(cfg.warmup, &mut b))
        .max(0.1);
    let k = ((cfg.batch.as_nanos() as f64 / cost) as u64).max(1);
    let mut rng = SplitMix64::new(cfg.seed ^ 0x00BA_1ED0);
    let mut deltas = Vec::new();
    let (mut per_a, mut per_b) = (Vec::new(), Vec::new());
    let mut sensed = vec![lanes()];
    let start = Instant::now();
    while start.elapsed() < cfg.budget {
        let (ta, tb) = if rng.below(2) == 0 {
            let ta = time_batch(&mut a, k);
            (ta, time_batch(&mut b, k))
        } else {
            let tb = time_batch(&mut b, k);
            (time_batch(&mut a, k), tb)
        };
        deltas.push((ta - tb) / k as f64);
        per_a.push(ta / k as f64);
        per_b.push(tb / k as f64);
        sensed.push(lanes());
    }
    let pair_lanes: Option<Vec<f64>> = sensed.windows(2).map(|w| Some(w[0]?.max(w[1]?))).collect();
    let keep = pair_lanes.as_deref().and_then(|l| {
        let best = super::best_lanes(l)?;
        Some(
            l.iter()
                .map(|&x| x < best * super::CONTENDED)
                .collect::<Vec<bool>>(),
        )
    });
    let contended_pairs = keep.as_ref().map(|k| k.iter().filter(|&&x| !x).count());
    let kept = deltas.len() - contended_pairs.unwrap_or(0);
    let exclude = contended_pairs.is_some_and(|c| c > 0)
        && kept >= super::MIN_UNCONTENDED
        && kept as f64 >= super::UNCONTENDED_SHARE * deltas.len() as f64;
    if let (true, Some(keep)) = (exclude, &keep) {
        for v in [&mut deltas, &mut per_a, &mut per_b] {
            *v = v
                .iter()
                .zip(keep)
                .filter(|(_, &k)| k)
                .map(|(x, _)| *x)
                .collect();
        }
    }
    let sides = (stats::median(&per_a)?, stats::median(&per_b)?);
    let mut d = difference_of_pairs(&deltas, sides, cfg, k)?;
    d.pairs = per_a.len()
        + if exclude {
            contended_pairs.unwrap_or(0)
        } else {
            0
        };
    d.contended_pairs = contended_pairs;
    d.contended_excluded = exclude;
    Some(d)
}

/// The median of `deltas` with its bootstrap interval, widened by half the smallest step
/// between distinct differences, beside each side's cost per call `sides` (pure; the
/// statistics of [`paired_difference`]).
fn difference_of_pairs(
    deltas: &[f64],
    sides: (f64, f64),
    cfg: &PairedConfig,
    k: u64,
) -> Option<PairedDifference> {
    if deltas.len() < 3 {
        return None;
    }
    let point = stats::median(deltas)?;
    let reps = stats::bootstrap(deltas, cfg.resamples, cfg.seed, |v| {
        stats::quantile_in_place(v, 0.5)
    });
    // The differences come in steps of the timer's resolution over `k`: many pairs can give
    // the very same median in every resample, an interval of zero width. Half a step on each
    // side is what the data cannot resolve.
    let mut sorted: Vec<f64> = deltas.iter().copied().filter(|d| !d.is_nan()).collect();
    sorted.sort_by(f64::total_cmp);
    let step = sorted
        .windows(2)
        .map(|w| w[1] - w[0])
        .filter(|&g| g > 0.0)
        .fold(f64::INFINITY, f64::min);
    let half = if step.is_finite() { step / 2.0 } else { 0.0 };
    let interval = stats::percentile_interval(&reps, point, cfg.level).map(|e| Estimate {
        lower: e.lower - half,
        upper: e.upper + half,
        ..e
    });
    Some(PairedDifference {
        diff_ns: interval.unwrap_or(Estimate::exact(point)),
        a_ns: sides.0,
        b_ns: sides.1,
        pairs: deltas.len(),
        contended_pairs: None,
        contended_excluded: false,
        batch_calls: k,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hint::black_box;

    /// A spin of `n` dependent multiply-adds: its cost grows with `n` on any machine.
    fn spin(n: u64) -> impl FnMut() -> u64 {
        move || {
            let mut acc = 0u64;
            for i in 0..black_box(n) {
                acc = acc.wrapping_mul(31).wrapping_add(i);
            }
            acc
        }
    }

    fn cfg(seed: u64) -> PairedConfig {
        PairedConfig {
            budget: Duration::from_millis(15),
            ..PairedConfig::quick(seed)
        }
    }

    /// Pairs sensed as sharing their core are counted, and left out when enough remain: a
    /// sensor that reads slow every third time leaves about a third of the pairs; one that
    /// reads fast only twice in a hundred leaves them all in; no sensor says nothing.
    #[test]
    fn pairs_that_shared_the_core_are_left_out_when_others_remain() {
        let sensor = |every: u64| {
            let mut n = 0u64;
            move || {
                n += 1;
                Some(if n % every == 0 { 0.4 } else { 0.25 })
            }
        };
        let d = paired_difference_sensed(&cfg(4), spin(400), spin(100), &mut sensor(3)).unwrap();
        let c = d.contended_pairs.unwrap();
        assert!(d.contended_excluded, "{d:?}");
        // A slow reading marks the pair before it and the pair after it.
        assert!(
            c * 3 >= d.pairs && c * 3 <= 2 * d.pairs + 3,
            "{c} of {}",
            d.pairs
        );
        let mut mostly = {
            let mut n = 0u64;
            move || {
                n += 1;
                Some(if n % 100 < 2 { 0.25 } else { 0.4 })
            }
        };
        let d = paired_difference_sensed(&cfg(4), spin(400), spin(100), &mut mostly).unwrap();
        assert!(
            !d.contended_excluded && d.contended_pairs.unwrap() > 0,
            "{d:?}"
        );
        let d = paired_difference(&cfg(4), spin(400), spin(100)).unwrap();
        assert_eq!((d.contended_pairs, d.contended_excluded), (None, false));
    }

    /// The sign follows the work, the interval holds the point, and swapping the operations
    /// negates the difference — on whatever machine runs the test, however fast.
    #[test]
    fn the_difference_follows_the_extra_work() {
        let more = paired_difference(&cfg(3), spin(400), spin(100)).unwrap();
        let less = paired_difference(&cfg(3), spin(100), spin(400)).unwrap();
        for d in [&more, &less] {
            assert!(d.diff_ns.lower <= d.diff_ns.point && d.diff_ns.point <= d.diff_ns.upper);
            assert!(d.pairs >= 3);
        }
        assert!(more.diff_ns.lower > 0.0, "{more:?}");
        assert!(less.diff_ns.upper < 0.0, "{less:?}");
        // Three times the extra work costs more than the extra work (300 vs 100 steps).
        let three = paired_difference(&cfg(4), spin(400), spin(100)).unwrap();
        let one = paired_difference(&cfg(4), spin(200), spin(100)).unwrap();
        assert!(three.diff_ns.point > one.diff_ns.point, "{three:?} {one:?}");
        // Each side's own cost comes back too, in the same order.
        assert!(three.a_ns > three.b_ns && three.b_ns > 0.0, "{three:?}");
    }

    /// Equal operations differ by little against the cost of either (not "the interval holds
    /// 0", which a 95% interval misses one run in twenty).
    #[test]
    fn equal_operations_differ_little() {
        let cost = warm(Duration::from_millis(2), &mut spin(200));
        let d = paired_difference(&cfg(5), spin(200), spin(200)).unwrap();
        assert!(d.diff_ns.point.abs() < 0.5 * cost, "{d:?} vs cost {cost}");
    }

    /// The statistics: the median ignores outliers on either side, a seed gives the same
    /// interval, and too few pairs give nothing.
    #[test]
    fn the_median_of_pairs_ignores_bursts() {
        let c = PairedConfig::full(9);
        let mut deltas = vec![20.0; 40];
        deltas[3] = 5000.0; // a burst in an `a` batch
        deltas[17] = -4000.0; // a burst in a `b` batch
        deltas[30] = 21.0;
        let d = difference_of_pairs(&deltas, (0.0, 0.0), &c, 80).unwrap();
        assert_eq!(d.diff_ns.point, 20.0);
        // The bootstrap interval [20, 20] or [20, 21], widened by half the 1 ns step.
        assert!(d.diff_ns.lower == 19.5 && d.diff_ns.upper <= 21.5, "{d:?}");
        assert_eq!(d, difference_of_pairs(&deltas, (0.0, 0.0), &c, 80).unwrap());
        assert_eq!((d.pairs, d.batch_calls), (40, 80));
        assert!(difference_of_pairs(&[1.0, 2.0], (0.0, 0.0), &c, 1).is_none());
        let neg = difference_of_pairs(&[-3.0, -2.0, -4.0], (0.0, 0.0), &c, 1).unwrap();
        assert_eq!(
            neg.diff_ns.point, -3.0,
            "a negative difference is returned as measured"
        );
    }
}
