//! The arithmetic of `vm bench`, as pure functions: the interval of a run's ns per op, the
//! interval of a change measured within one boot (paired rounds), the interval of a relative
//! change between two kernels (two independent samples, each divided by its same-slot
//! control), and the verdict rules.
//!
//! The boot is the unit of replication: rounds within one boot share its speed, its host
//! preemptions and its cache layout, so they are not independent replicates of the effect.
//! Each boot is summarised by its median (robust to a round stalled by a host preemption),
//! and the interval is Student's t over those few boot medians, `B − 1` degrees of freedom
//! ([`IntervalMethod::BootsT`]); kernel rows take Welch's t on the logs of each boot's median
//! (Welch 1947). A percentile bootstrap over 3 boots would be too narrow by construction:
//! resampling B units gives (B − 1)/B of the variance and a normal-like quantile where 2
//! degrees of freedom call for t = 4.30 (Hesterberg 2015, "What teachers should know about the
//! bootstrap", §narrowness bias; Cameron, Gelbach & Miller 2008 on few clusters). With one boot
//! there is no between-boot spread to read: the interval is then a seeded percentile bootstrap
//! of the rounds' median (Efron & Tibshirani 1993, ch. 13;
//! [`IntervalMethod::RoundsBootstrap`]), and the output says so.

use serde::{Deserialize, Serialize};

use crate::stats::{self, Estimate, SplitMix64};

/// Bootstrap resamples of an interval from one boot.
pub(crate) const RESAMPLES: usize = 2_000;
/// Confidence level of every interval.
pub(crate) const LEVEL: f64 = 0.95;
/// A prediction within this share of the measured change agrees even outside its interval.
pub(crate) const AGREE_WITHIN: f64 = 0.15;
/// A model with fewer precise (clocksource) reads per op than this predicts no change.
pub(crate) const ZERO_READS: f64 = 0.005;
/// The margin of practical equivalence of a row that predicts no change, as a share of the
/// op's ns on `from`: a change smaller than this is no change worth the name.
pub(crate) const EQUIVALENCE_SHARE: f64 = 0.02;
/// The level of the interval the equivalence test reads: two one-sided tests at 5% each hold
/// exactly when the 90% interval lies inside the margin (Schuirmann 1987).
pub(crate) const EQUIVALENCE_LEVEL: f64 = 0.90;

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
pub(crate) fn equivalence(interval: Estimate, op_ns: f64) -> Option<Equivalence> {
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
    pub(crate) fn name(self) -> &'static str {
        match self {
            Verdict::Agrees => "agrees",
            Verdict::Disagrees => "disagrees",
            Verdict::Undecided => "undecided",
        }
    }
}

/// How an interval was formed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IntervalMethod {
    /// Student's t over the boots' medians (Welch's t for two kernels).
    BootsT,
    /// One boot: a percentile bootstrap of its rounds' median, which carries no spread between
    /// boots.
    RoundsBootstrap,
}

impl IntervalMethod {
    /// The method of an interval over `groups` (boots × rounds): boots with a value.
    pub(crate) fn of<T>(groups: &[Vec<T>]) -> Self {
        if groups.iter().filter(|g| !g.is_empty()).count() >= 2 {
            IntervalMethod::BootsT
        } else {
            IntervalMethod::RoundsBootstrap
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

/// Each boot's median (boots without a value left out).
pub(crate) fn boot_medians(groups: &[Vec<f64>]) -> Vec<f64> {
    groups.iter().filter_map(|g| stats::median(g)).collect()
}

/// The sample variance (n − 1) of `xs`, `xs.len() >= 2`.
fn variance(xs: &[f64], mean: f64) -> f64 {
    xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (xs.len() - 1) as f64
}

/// The mean of `xs` with its Student-t interval at `level`, `len − 1` degrees of freedom;
/// `None` with fewer than two values or a level outside (0, 1).
pub(crate) fn mean_t(xs: &[f64], level: f64) -> Option<Estimate> {
    if xs.len() < 2 {
        return None;
    }
    let m = xs.iter().sum::<f64>() / xs.len() as f64;
    let t = stats::t_two_sided(level, xs.len() - 1)?;
    let half = t * (variance(xs, m) / xs.len() as f64).sqrt();
    Some(Estimate {
        point: m,
        lower: m - half,
        upper: m + half,
    })
}

/// A seeded percentile bootstrap of the median of one boot's rounds.
fn rounds_bootstrap(xs: &[f64], seed: u64, level: f64) -> Option<Estimate> {
    stats::median_bootstrap(xs, RESAMPLES, seed, level)
}

/// The ns per op of groups of rounds (one group per boot): with two or more boots, the mean of
/// the boots' medians and its Student-t interval ([`IntervalMethod::BootsT`]); with one, the
/// median of its rounds and their bootstrap interval ([`IntervalMethod::RoundsBootstrap`]).
/// `None` without values.
pub(crate) fn median_interval(groups: &[Vec<f64>], seed: u64) -> Option<Estimate> {
    median_interval_at(groups, seed, LEVEL)
}

/// [`median_interval`] at confidence `level`.
pub(crate) fn median_interval_at(groups: &[Vec<f64>], seed: u64, level: f64) -> Option<Estimate> {
    let g = non_empty(groups);
    match g.as_slice() {
        [] => None,
        [one] => rounds_bootstrap(one, seed, level),
        _ => mean_t(&boot_medians(groups), level),
    }
}

/// The change `to − from` measured in pairs taken side by side (one pair per round, grouped
/// by boot, so the boot's speed cancels within each pair): each boot's median difference,
/// then [`median_interval`] over the boots.
pub(crate) fn paired_delta(groups: &[Vec<(f64, f64)>], seed: u64) -> Option<Estimate> {
    paired_delta_at(groups, seed, LEVEL)
}

/// [`paired_delta`] at confidence `level`.
pub(crate) fn paired_delta_at(
    groups: &[Vec<(f64, f64)>],
    seed: u64,
    level: f64,
) -> Option<Estimate> {
    median_interval_at(&differences(groups), seed, level)
}

/// `to − from` of each pair, per boot.
pub(crate) fn differences(groups: &[Vec<(f64, f64)>]) -> Vec<Vec<f64>> {
    groups
        .iter()
        .map(|g| g.iter().map(|(from, to)| to - from).collect())
        .collect()
}

/// The relative change `other / base − 1` between two independent samples, each grouped by
/// boot; `None` when either is empty or holds a value that is not positive.
///
/// With two or more boots on each side: Welch's t on the logs of the boots' medians (Welch
/// 1947; the Welch–Satterthwaite degrees of freedom, floored), the change being
/// `exp(mean log other − mean log base) − 1` and its interval the same transform of the
/// difference's. Otherwise the medians' ratio with a seeded bootstrap of each side's rounds.
pub(crate) fn ratio_change(base: &[Vec<f64>], other: &[Vec<f64>], seed: u64) -> Option<Estimate> {
    let (gb, go) = (non_empty(base), non_empty(other));
    let positive = |g: &[&[f64]]| g.iter().all(|x| x.iter().all(|v| *v > 0.0));
    if gb.is_empty() || go.is_empty() || !positive(&gb) || !positive(&go) {
        return None;
    }
    if gb.len() >= 2 && go.len() >= 2 {
        let logs =
            |g: &[Vec<f64>]| -> Vec<f64> { boot_medians(g).iter().map(|m| m.ln()).collect() };
        let (lb, lo) = (logs(base), logs(other));
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let (mb, mo) = (mean(&lb), mean(&lo));
        let (vb, vo) = (variance(&lb, mb), variance(&lo, mo));
        let d = mo - mb;
        let point = d.exp() - 1.0;
        let Some(df) = stats::welch_df(vb, lb.len(), vo, lo.len()) else {
            return Some(Estimate::exact(point));
        };
        // Floored (conservative), past the rounding of a df that is whole in exact arithmetic.
        let t = stats::t_two_sided(LEVEL, ((df + 1e-9).floor() as usize).max(1))?;
        let half = t * (vb / lb.len() as f64 + vo / lo.len() as f64).sqrt();
        return Some(Estimate {
            point,
            lower: (d - half).exp() - 1.0,
            upper: (d + half).exp() - 1.0,
        });
    }
    let flat = |g: &[&[f64]]| -> Vec<f64> { g.iter().flat_map(|x| x.iter().copied()).collect() };
    let (fb, fo) = (flat(&gb), flat(&go));
    let ratio = |b: &[f64], o: &[f64]| Some(stats::median(o)? / stats::median(b)? - 1.0);
    let point = ratio(&fb, &fo)?;
    let mut rng = SplitMix64::new(seed);
    let (mut bb, mut bo) = (Vec::new(), Vec::new());
    let mut reps = Vec::with_capacity(RESAMPLES);
    let draw = |xs: &[f64], rng: &mut SplitMix64, out: &mut Vec<f64>| {
        out.clear();
        out.extend((0..xs.len()).map(|_| xs[rng.below(xs.len() as u64) as usize]));
    };
    for _ in 0..RESAMPLES {
        draw(&fb, &mut rng, &mut bb);
        draw(&fo, &mut rng, &mut bo);
        if let Some(r) = ratio(&bb, &bo) {
            reps.push(r);
        }
    }
    stats::percentile_interval(&reps, point, LEVEL)
}

/// The interval method of a kernel row: [`IntervalMethod::BootsT`] when both sides have two
/// or more boots.
pub(crate) fn ratio_method(base: &[Vec<f64>], other: &[Vec<f64>]) -> IntervalMethod {
    match (IntervalMethod::of(base), IntervalMethod::of(other)) {
        (IntervalMethod::BootsT, IntervalMethod::BootsT) => IntervalMethod::BootsT,
        _ => IntervalMethod::RoundsBootstrap,
    }
}

/// Each value divided by its control measured in the same slot (a null syscall: it moves
/// with the boot's speed), per group; pairs with a control that is not positive are dropped.
pub(crate) fn controlled(groups: &[Vec<(f64, f64)>]) -> Vec<Vec<f64>> {
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
pub(crate) fn noise(e: &Estimate) -> f64 {
    (e.upper - e.lower) / 2.0
}

/// Whether `e`'s interval holds `x`.
pub(crate) fn holds(e: &Estimate, x: f64) -> bool {
    e.lower <= x && x <= e.upper
}

/// The predicted change in ns per op when every precise read costs `d_precise_ns` more and
/// every coarse read `d_coarse_ns` more.
pub(crate) fn predicted_delta(
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
pub(crate) fn verdict(
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

/// What a comparison row compares.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ComparisonKind {
    /// Two clocksources within one kernel's boots.
    Clocksource,
    /// Two kernels on one clocksource.
    Kernel,
}

impl ComparisonKind {
    /// The JSON name: `clocksource`, `kernel`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            ComparisonKind::Clocksource => "clocksource",
            ComparisonKind::Kernel => "kernel",
        }
    }
}

#[cfg(test)]
mod tests;
