//! The arithmetic of `vm bench`, as pure functions: the interval of a run's ns per op (boots
//! and rounds pooled), the interval of a change measured within one boot (paired rounds), the
//! interval of a relative change between two kernels (two independent samples, each divided
//! by its same-slot control), and the verdict rules.
//!
//! Every interval is a seeded percentile bootstrap of a median (Efron & Tibshirani 1993,
//! ch. 13; [`crate::stats`]): a TCG boot can stall for a host preemption, and one stalled
//! round must not move the point. The resampling is hierarchical — boots, then rounds within
//! each boot — so that an interval carries the spread between boots, not only within them.

use serde::{Deserialize, Serialize};

use crate::stats::{self, Estimate, SplitMix64};

/// Bootstrap resamples of every interval.
pub const RESAMPLES: usize = 2_000;
/// Confidence level of every interval.
pub const LEVEL: f64 = 0.95;
/// A prediction within this share of the measured change agrees even outside its interval.
pub const AGREE_WITHIN: f64 = 0.15;
/// A model with fewer precise (clocksource) reads per op than this predicts no change.
pub const ZERO_READS: f64 = 0.005;
/// The margin of practical equivalence of a row that predicts no change, as a share of the
/// op's ns on `from`: a change smaller than this is no change worth the name.
pub const EQUIVALENCE_SHARE: f64 = 0.02;
/// The level of the interval the equivalence test reads: two one-sided tests at 5% each hold
/// exactly when the 90% interval lies inside the margin (Schuirmann 1987).
pub const EQUIVALENCE_LEVEL: f64 = 0.90;

/// The test of practical equivalence (TOST) of a row that predicts no change: whether the
/// measured change is shown to lie within ±`margin_ns` of 0.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Equivalence {
    /// [`EQUIVALENCE_SHARE`] × the op's ns on `from`.
    pub margin_ns: f64,
    /// The measured change's [`EQUIVALENCE_LEVEL`] interval.
    pub interval_ns: Estimate,
    /// Whether that interval lies inside ±`margin_ns`.
    pub equivalent: bool,
}

/// The equivalence test of a change whose [`EQUIVALENCE_LEVEL`] interval is `interval` on an
/// op of `op_ns`; `None` when the op's ns is not a positive number.
pub fn equivalence(interval: Estimate, op_ns: f64) -> Option<Equivalence> {
    if !(op_ns.is_finite() && op_ns > 0.0) {
        return None;
    }
    let margin_ns = EQUIVALENCE_SHARE * op_ns;
    Some(Equivalence {
        margin_ns,
        interval_ns: interval,
        equivalent: -margin_ns <= interval.lower && interval.upper <= margin_ns,
    })
}

/// How a measured change compares with the model's prediction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The prediction lies in the measured interval or within [`AGREE_WITHIN`] of the point,
    /// and the change stands above the noise (or the model predicts none and none is seen).
    Agrees,
    /// The measured interval rules the prediction out.
    Disagrees,
    /// The noise covers both no change and the prediction, or no model applies.
    Undecided,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Agrees => "agrees",
            Verdict::Disagrees => "disagrees",
            Verdict::Undecided => "undecided",
        }
    }
}

/// One hierarchical resample of `groups` (boots, each a list of rounds) into `out`: boots
/// drawn with replacement, then rounds within each drawn boot (Davison & Hinkley 1997,
/// §3.8), so that the interval carries the spread between boots as well as within them. With
/// one boot, its rounds alone.
fn resample(groups: &[&[f64]], rng: &mut SplitMix64, out: &mut Vec<f64>) {
    out.clear();
    for _ in 0..groups.len() {
        let g = if groups.len() == 1 {
            groups[0]
        } else {
            groups[rng.below(groups.len() as u64) as usize]
        };
        for _ in 0..g.len() {
            out.push(g[rng.below(g.len() as u64) as usize]);
        }
    }
}

fn non_empty(groups: &[Vec<f64>]) -> Vec<&[f64]> {
    groups
        .iter()
        .filter(|g| !g.is_empty())
        .map(Vec::as_slice)
        .collect()
}

/// The median of every value of `groups` (boots × rounds) with its hierarchical bootstrap
/// interval; `None` without values.
pub fn median_interval(groups: &[Vec<f64>], seed: u64) -> Option<Estimate> {
    median_interval_at(groups, seed, LEVEL)
}

/// [`median_interval`] at confidence `level`.
pub fn median_interval_at(groups: &[Vec<f64>], seed: u64, level: f64) -> Option<Estimate> {
    let g = non_empty(groups);
    let all: Vec<f64> = g.iter().flat_map(|x| x.iter().copied()).collect();
    let point = stats::median(&all)?;
    if all.len() < 2 {
        return Some(Estimate::exact(point));
    }
    let mut rng = SplitMix64::new(seed);
    let mut buf = Vec::with_capacity(all.len());
    let mut reps = Vec::with_capacity(RESAMPLES);
    for _ in 0..RESAMPLES {
        resample(&g, &mut rng, &mut buf);
        if let Some(m) = stats::quantile_in_place(&mut buf, 0.5) {
            reps.push(m);
        }
    }
    stats::percentile_interval(&reps, point, level)
}

/// The change `to − from` measured in pairs taken side by side (one pair per round, grouped
/// by boot, so the boot's speed cancels within each pair): the median of the differences with
/// its hierarchical interval.
pub fn paired_delta(groups: &[Vec<(f64, f64)>], seed: u64) -> Option<Estimate> {
    paired_delta_at(groups, seed, LEVEL)
}

/// [`paired_delta`] at confidence `level`.
pub fn paired_delta_at(groups: &[Vec<(f64, f64)>], seed: u64, level: f64) -> Option<Estimate> {
    let d: Vec<Vec<f64>> = groups
        .iter()
        .map(|g| g.iter().map(|(from, to)| to - from).collect())
        .collect();
    median_interval_at(&d, seed, level)
}

/// The relative change `median(other) / median(base) − 1` between two independent samples
/// (each grouped by boot), with an interval from resampling each hierarchically on its own;
/// `None` when either is empty or the base's median is not positive.
pub fn ratio_change(base: &[Vec<f64>], other: &[Vec<f64>], seed: u64) -> Option<Estimate> {
    let (gb, go) = (non_empty(base), non_empty(other));
    let flat = |g: &[&[f64]]| -> Vec<f64> { g.iter().flat_map(|x| x.iter().copied()).collect() };
    let ratio = |b: &[f64], o: &[f64]| {
        let mb = stats::median(b)?;
        let mo = stats::median(o)?;
        (mb > 0.0).then(|| mo / mb - 1.0)
    };
    let point = ratio(&flat(&gb), &flat(&go))?;
    let mut rng = SplitMix64::new(seed);
    let (mut bb, mut bo) = (Vec::new(), Vec::new());
    let mut reps = Vec::with_capacity(RESAMPLES);
    for _ in 0..RESAMPLES {
        resample(&gb, &mut rng, &mut bb);
        resample(&go, &mut rng, &mut bo);
        if let Some(r) = ratio(&bb, &bo) {
            reps.push(r);
        }
    }
    stats::percentile_interval(&reps, point, LEVEL)
}

/// Each value divided by its control measured in the same slot (a null syscall: it moves
/// with the boot's speed), per group; pairs with a control that is not positive are dropped.
pub fn controlled(groups: &[Vec<(f64, f64)>]) -> Vec<Vec<f64>> {
    groups
        .iter()
        .map(|g| {
            g.iter()
                .filter(|(_, c)| *c > 0.0)
                .map(|(v, c)| v / c)
                .collect()
        })
        .collect()
}

/// Half the width of an interval: the noise a row states.
pub fn noise(e: &Estimate) -> f64 {
    (e.upper - e.lower) / 2.0
}

/// Whether `e`'s interval holds `x`.
pub fn holds(e: &Estimate, x: f64) -> bool {
    e.lower <= x && x <= e.upper
}

/// The predicted change in ns per op when every precise read costs `d_precise_ns` more and
/// every coarse read `d_coarse_ns` more.
pub fn predicted_delta(
    precise_per_op: f64,
    coarse_per_op: f64,
    d_precise_ns: f64,
    d_coarse_ns: f64,
) -> f64 {
    precise_per_op * d_precise_ns + coarse_per_op * d_coarse_ns
}

/// The verdict on a measured change against a prediction (`None`: no model applies).
///
/// - A prediction of no change (`zero_predicted`: the model has no precise read in the op)
///   agrees when the interval holds 0 (or the prediction, or lies within
///   [`AGREE_WITHIN`] of the point), or when the change is shown equivalent to 0
///   (`equivalent`: [`equivalence`]), else disagrees.
/// - Otherwise the prediction agrees when the interval holds it or it lies within
///   [`AGREE_WITHIN`] of the point, provided the interval excludes 0; when the interval holds
///   0 as well the change is under the noise: undecided. A prediction the interval rules out
///   disagrees.
pub fn verdict(
    measured: &Estimate,
    predicted: Option<f64>,
    zero_predicted: bool,
    equivalent: bool,
) -> Verdict {
    let Some(p) = predicted.filter(|p| p.is_finite()) else {
        return Verdict::Undecided;
    };
    let m = measured.point;
    let near = holds(measured, p) || (m != 0.0 && (m - p).abs() <= AGREE_WITHIN * m.abs());
    let has_zero = holds(measured, 0.0);
    match (zero_predicted, near, has_zero) {
        (true, true, _) | (true, _, true) => Verdict::Agrees,
        (true, false, false) if equivalent => Verdict::Agrees,
        (true, false, false) => Verdict::Disagrees,
        (false, true, false) => Verdict::Agrees,
        (false, true, true) => Verdict::Undecided,
        (false, false, _) => Verdict::Disagrees,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est(point: f64, lower: f64, upper: f64) -> Estimate {
        Estimate {
            point,
            lower,
            upper,
        }
    }

    #[test]
    fn verdict_rules() {
        // In the interval, clear of zero.
        assert_eq!(
            verdict(&est(600.0, 500.0, 700.0), Some(650.0), false, false),
            Verdict::Agrees
        );
        // Outside the interval but within 15% of the point.
        assert_eq!(
            verdict(&est(600.0, 590.0, 610.0), Some(680.0), false, false),
            Verdict::Agrees
        );
        // Ruled out.
        assert_eq!(
            verdict(&est(600.0, 590.0, 610.0), Some(300.0), false, false),
            Verdict::Disagrees
        );
        assert_eq!(
            verdict(&est(10.0, -50.0, 60.0), Some(600.0), false, false),
            Verdict::Disagrees
        );
        // Under the noise: the interval holds 0 and the prediction.
        assert_eq!(
            verdict(&est(100.0, -200.0, 400.0), Some(300.0), false, false),
            Verdict::Undecided
        );
        // No model.
        assert_eq!(
            verdict(&est(100.0, 50.0, 150.0), None, false, false),
            Verdict::Undecided
        );
        assert_eq!(
            verdict(&est(100.0, 50.0, 150.0), Some(f64::NAN), false, false),
            Verdict::Undecided
        );
        // Predicting zero: consistent with zero agrees, a clear change disagrees.
        assert_eq!(
            verdict(&est(5.0, -20.0, 30.0), Some(0.4), true, false),
            Verdict::Agrees
        );
        assert_eq!(
            verdict(&est(300.0, 200.0, 400.0), Some(0.4), true, false),
            Verdict::Disagrees
        );
        // A zero point never divides.
        assert_eq!(
            verdict(&est(0.0, 0.0, 0.0), Some(1.0), false, false),
            Verdict::Disagrees
        );
    }

    #[test]
    fn a_zero_row_agrees_when_equivalent_within_the_margin() {
        // 6.1 pipe1's figures: the 95% interval excludes 0, by 4 ns of a 2.9 µs op.
        let m = est(-40.3, -93.8, -3.73);
        assert_eq!(verdict(&m, Some(0.56), true, false), Verdict::Disagrees);
        // 2% of 2,900 ns is ±58 ns: a 90% interval of [-80, -10] is not inside it …
        let e = equivalence(est(-40.3, -80.0, -10.0), 2900.0).unwrap();
        assert!((e.margin_ns - 58.0).abs() < 1e-9);
        assert!(!e.equivalent);
        // … one of [-55, -12] is, on both sides: the two one-sided tests pass.
        let e = equivalence(est(-40.3, -55.0, -12.0), 2900.0).unwrap();
        assert!(e.equivalent);
        assert_eq!(verdict(&m, Some(0.56), true, e.equivalent), Verdict::Agrees);
        // Both edges count: inside on the left only is not equivalent.
        assert!(
            !equivalence(est(30.0, -10.0, 58.5), 2900.0)
                .unwrap()
                .equivalent
        );
        assert!(
            equivalence(est(0.0, -58.0, 58.0), 2900.0)
                .unwrap()
                .equivalent
        );
        // The margin never rescues a row that predicts a change.
        assert_eq!(
            verdict(&est(10.0, 5.0, 15.0), Some(300.0), false, true),
            Verdict::Disagrees
        );
        // No op time, no margin.
        assert_eq!(equivalence(est(0.0, -1.0, 1.0), 0.0), None);
        assert_eq!(equivalence(est(0.0, -1.0, 1.0), f64::NAN), None);
    }

    #[test]
    fn the_equivalence_interval_is_narrower() {
        let pairs: Vec<Vec<(f64, f64)>> = (0..3)
            .map(|b| {
                (0..12)
                    .map(|r| (1000.0, 1000.0 + f64::from(b * 12 + r) - 18.0))
                    .collect()
            })
            .collect();
        let wide = paired_delta(&pairs, 9).unwrap();
        let narrow = paired_delta_at(&pairs, 9, EQUIVALENCE_LEVEL).unwrap();
        assert_eq!(wide.point, narrow.point);
        assert!(wide.lower <= narrow.lower && narrow.upper <= wide.upper);
    }

    #[test]
    fn intervals_hold_their_point_and_are_seeded() {
        let xs = vec![vec![10.0, 11.0, 9.5, 10.2], vec![30.0, 10.1, 9.9]];
        let a = median_interval(&xs, 7).unwrap();
        assert_eq!(a.point, 10.1);
        assert!(a.lower <= a.point && a.point <= a.upper);
        assert!(a.upper < 30.0, "{a:?}");
        assert_eq!(median_interval(&xs, 7), Some(a));
        assert_eq!(median_interval(&[vec![4.0]], 1), Some(Estimate::exact(4.0)));
        assert_eq!(median_interval(&[], 1), None);
        assert_eq!(median_interval(&[vec![], vec![]], 1), None);
    }

    #[test]
    fn the_interval_carries_the_spread_between_boots() {
        // Within each boot the rounds agree closely; the boots do not.
        let boots: Vec<Vec<f64>> = [100.0, 130.0, 90.0]
            .iter()
            .map(|b| (0..12).map(|r| b + f64::from(r) * 0.1).collect())
            .collect();
        let pooled = vec![boots.concat()];
        let h = median_interval(&boots, 3).unwrap();
        let flat = median_interval(&pooled, 3).unwrap();
        assert!(
            h.upper - h.lower > flat.upper - flat.lower,
            "{h:?} {flat:?}"
        );
        assert!(h.lower <= 91.0 && h.upper >= 129.0, "{h:?}");
    }

    #[test]
    fn paired_delta_cancels_what_both_sides_share() {
        // Each round's speed differs by 30%; the B side always costs 100 more.
        let pairs: Vec<(f64, f64)> = [1.0, 1.3, 0.9, 1.2, 1.1]
            .iter()
            .map(|s| (1000.0 * s, 1000.0 * s + 100.0))
            .collect();
        let d = paired_delta(&[pairs[..2].to_vec(), pairs[2..].to_vec()], 3).unwrap();
        assert_eq!(d, Estimate::exact(100.0));
        assert!(paired_delta(&[], 3).is_none());
    }

    #[test]
    fn ratio_change_and_control() {
        let base = vec![vec![100.0, 101.0], vec![99.0, 100.5]];
        let other = vec![vec![90.0, 91.0, 89.0, 90.5]];
        let r = ratio_change(&base, &other, 5).unwrap();
        assert!((r.point - (90.25 / 100.25 - 1.0)).abs() < 1e-12);
        assert!(r.upper < 0.0 && r.lower <= r.point);
        assert_eq!(ratio_change(&[], &other, 5), None);
        assert_eq!(ratio_change(&[vec![0.0]], &other, 5), None);
        // A boot twice as slow in everything looks the same once divided by its control.
        let slow = controlled(&[vec![(200.0, 2.0), (100.0, 1.0)], vec![(5.0, 0.0)]]);
        assert_eq!(slow, vec![vec![100.0, 100.0], vec![]]);
    }

    #[test]
    fn predicted_delta_is_reads_times_cost_change() {
        assert_eq!(predicted_delta(2.0, 1.0, 300.0, 1.5), 601.5);
        assert_eq!(predicted_delta(0.0, 2.0, 300.0, 0.0), 0.0);
        assert_eq!(noise(&est(0.0, -3.0, 5.0)), 4.0);
    }
}
