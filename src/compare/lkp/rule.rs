//! The 0-day test robot's (LKP's) rule for a change, beside tscope's own.
//!
//! Kernel reviewers read before/after numbers in the layout of LKP's mails
//! (`base ±%stddev %change new ±%stddev metric`) and trust its rule for what counts as a change.
//! `compare --lkp` applies that rule to the runs a profile carries and prints both decisions, so
//! a reviewer sees where tscope and LKP part and why. The rule, on each side's samples (one per
//! run):
//!
//! 1. Sort the samples and drop `n >> 5` of them at each end, at most [`MAX_TRIM`].
//! 2. A change is an increase when the new minimum is above the old median and the new median
//!    above the old maximum; a decrease the other way round (the old minimum above the new
//!    median and the old median above the new maximum). Both comparisons are strict.
//! 3. The ratio of the two means (the larger over the smaller) must be over [`PERF_RATIO`] for
//!    a performance metric (a cost in ns is one), over [`OTHER_RATIO`] for any other.
//!
//! The means, the relative standard deviations and the change printed are of the trimmed
//! samples, so the printed `%change` is the ratio the threshold tests. A side with fewer than
//! two samples (a plain probe: one run, one point per source) has no range: the rule does not
//! decide, and says that it needs repeated runs.

use serde::{Deserialize, Serialize};

/// The most samples trimmed at each end.
pub const MAX_TRIM: usize = 3;

/// The ratio a performance metric's change must exceed.
pub const PERF_RATIO: f64 = 1.01;

/// The ratio any other metric's change must exceed.
pub const OTHER_RATIO: f64 = 1.05;

/// The relative standard deviation (percent) above which LKP's layout prints `± N%`.
pub const STDDEV_SHOWN_PCT: f64 = 2.0;

/// What a metric measures, which sets the ratio a change must exceed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// Throughput, latency, cost: [`PERF_RATIO`].
    Performance,
    /// Counts and other facts: [`OTHER_RATIO`].
    Other,
}

impl Metric {
    /// The ratio a change of this metric must exceed.
    pub fn threshold(self) -> f64 {
        match self {
            Metric::Performance => PERF_RATIO,
            Metric::Other => OTHER_RATIO,
        }
    }
}

/// One side's samples after trimming.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Side {
    /// Samples given (finite ones).
    pub samples: usize,
    /// Samples dropped at each end: `samples >> 5`, at most [`MAX_TRIM`].
    pub trimmed: usize,
    pub min: f64,
    pub median: f64,
    pub max: f64,
    pub mean: f64,
    /// The sample standard deviation over the mean, in percent; `None` under two samples.
    pub stddev_pct: Option<f64>,
}

impl Side {
    /// The trimmed summary of `samples` (non-finite ones ignored); `None` when none is left.
    pub fn of(samples: &[f64]) -> Option<Side> {
        let all = samples.iter().filter(|x| x.is_finite()).count();
        let v = trim(samples);
        let n = v.len();
        let (min, max) = (*v.first()?, *v.last()?);
        let median = crate::stats::median(&v)?;
        let mean = v.iter().sum::<f64>() / n as f64;
        let stddev_pct = (n >= 2 && mean != 0.0).then(|| {
            let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
            100.0 * var.sqrt() / mean.abs()
        });
        Some(Side {
            samples: all,
            trimmed: (all - n) / 2,
            min,
            median,
            max,
            mean,
            stddev_pct,
        })
    }

    /// The trimmed samples kept.
    pub fn kept(&self) -> usize {
        self.samples - 2 * self.trimmed
    }

    /// `± N%` as LKP prints it: only over [`STDDEV_SHOWN_PCT`].
    pub fn shown_stddev_pct(&self) -> Option<f64> {
        self.stddev_pct.filter(|s| *s > STDDEV_SHOWN_PCT)
    }
}

/// The finite samples sorted, `n >> 5` dropped at each end (at most [`MAX_TRIM`]).
pub fn trim(samples: &[f64]) -> Vec<f64> {
    let mut v: Vec<f64> = samples.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    let m = (v.len() >> 5).min(MAX_TRIM);
    v[m..v.len() - m].to_vec()
}

/// LKP's decision on one metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// The new samples lie above the old ones and the ratio is over the threshold.
    Increase,
    /// The new samples lie below the old ones and the ratio is over the threshold.
    Decrease,
    /// Neither side's samples lie beyond the other's median and maximum (or minimum).
    RangesOverlap,
    /// The samples lie apart, but the ratio of the means is not over the threshold.
    WithinThreshold,
    /// A side has fewer than two samples: the rule compares runs and needs repeated ones.
    TooFewSamples,
}

impl Decision {
    /// The word the table prints.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Increase => "increase",
            Decision::Decrease => "decrease",
            Decision::RangesOverlap | Decision::WithinThreshold => "no change",
            Decision::TooFewSamples => "undecided",
        }
    }

    /// Why LKP decided so, in words (`ratio`: the larger mean over the smaller).
    pub fn reason(self, ratio: Option<f64>, metric: Metric) -> String {
        let t = metric.threshold();
        let r = ratio.map_or_else(|| "?".into(), |r| format!("{r:.3}"));
        match self {
            Decision::Increase | Decision::Decrease => {
                format!("the sample ranges lie apart and the ratio {r} is over {t}")
            }
            Decision::RangesOverlap => "the sample ranges overlap".into(),
            Decision::WithinThreshold => {
                format!("the sample ranges lie apart but the ratio {r} is not over {t}")
            }
            Decision::TooFewSamples => "one run on a side: needs repeated runs".into(),
        }
    }
}

/// LKP's rule applied to two sides' samples.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// `None` where a side has no finite sample.
    pub base: Option<Side>,
    pub new: Option<Side>,
    /// The larger trimmed mean over the smaller; `None` unless both are positive.
    pub ratio: Option<f64>,
    /// `new mean / base mean − 1`, in percent; `None` unless both means are positive.
    pub change_pct: Option<f64>,
    pub decision: Decision,
}

/// LKP's rule (module documentation) on `base` and `new` samples of a `metric`.
pub fn decide(base: &[f64], new: &[f64], metric: Metric) -> Outcome {
    let (a, b) = (Side::of(base), Side::of(new));
    let means = a
        .as_ref()
        .zip(b.as_ref())
        .map(|(a, b)| (a.mean, b.mean))
        .filter(|(x, y)| *x > 0.0 && *y > 0.0);
    let ratio = means.map(|(x, y)| (y / x).max(x / y));
    let change_pct = means.map(|(x, y)| 100.0 * (y / x - 1.0));
    let decision = match (&a, &b) {
        (Some(a), Some(b)) if a.kept() >= 2 && b.kept() >= 2 => {
            let up = b.min > a.median && b.median > a.max;
            let down = a.min > b.median && a.median > b.max;
            let over = ratio.is_some_and(|r| r > metric.threshold());
            match (up, down, over) {
                (false, false, _) => Decision::RangesOverlap,
                (_, _, false) => Decision::WithinThreshold,
                (true, _, true) => Decision::Increase,
                (false, true, true) => Decision::Decrease,
            }
        }
        _ => Decision::TooFewSamples,
    };
    Outcome {
        base: a,
        new: b,
        ratio,
        change_pct,
        decision,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn a_clear_increase() {
        // Base sorted 28.0 28.1 28.1 28.2 28.3: median 28.1, max 28.3, mean 28.14.
        // New sorted 32.0 32.1 32.2 32.3 32.4: min 32.0 > 28.1, median 32.2 > 28.3; mean 32.2.
        // Ratio 32.2 / 28.14 = 1.14428 > 1.01: an increase of +14.43%.
        let o = decide(
            &[28.1, 28.0, 28.2, 28.1, 28.3],
            &[32.0, 32.2, 32.1, 32.4, 32.3],
            Metric::Performance,
        );
        assert_eq!(o.decision, Decision::Increase);
        let (a, b) = (o.base.unwrap(), o.new.unwrap());
        assert!(close(a.median, 28.1) && close(a.max, 28.3) && close(a.mean, 28.14));
        assert!(close(b.min, 32.0) && close(b.median, 32.2) && close(b.mean, 32.2));
        assert!(close(o.ratio.unwrap(), 32.2 / 28.14));
        assert!(close(o.change_pct.unwrap(), 100.0 * (32.2 / 28.14 - 1.0)));
        // Base deviations −0.14 −0.04 −0.04 +0.06 +0.16: squares sum 0.052, /4 = 0.013,
        // sd 0.11402 = 0.405% of 28.14: below 2%, not shown.
        assert!(close(
            a.stddev_pct.unwrap(),
            100.0 * 0.013f64.sqrt() / 28.14
        ));
        assert_eq!(a.shown_stddev_pct(), None);
    }

    #[test]
    fn a_clear_decrease() {
        // The same runs the other way round: base min 32.0 > new median 28.1, base median
        // 32.2 > new max 28.3; ratio 1.14428 > 1.01; change 28.14 / 32.2 − 1 = −12.61%.
        let o = decide(
            &[32.0, 32.2, 32.1, 32.4, 32.3],
            &[28.1, 28.0, 28.2, 28.1, 28.3],
            Metric::Performance,
        );
        assert_eq!(o.decision, Decision::Decrease);
        assert!(close(o.ratio.unwrap(), 32.2 / 28.14));
        assert!(close(o.change_pct.unwrap(), 100.0 * (28.14 / 32.2 - 1.0)));
    }

    #[test]
    fn overlapping_ranges_are_no_change() {
        // Base 10 11 12 (median 11, max 12). New 10.5 13 14: min 10.5 is not above 11, though
        // the means are 11 and 12.5 (ratio 1.136).
        let o = decide(
            &[10.0, 11.0, 12.0],
            &[10.5, 13.0, 14.0],
            Metric::Performance,
        );
        assert_eq!(o.decision, Decision::RangesOverlap);
        assert!(close(o.ratio.unwrap(), 12.5 / 11.0));
        // New 11.5 12 13: min 11.5 > 11, but median 12 is not strictly above max 12.
        let o = decide(
            &[10.0, 11.0, 12.0],
            &[11.5, 12.0, 13.0],
            Metric::Performance,
        );
        assert_eq!(o.decision, Decision::RangesOverlap);
        // New 11.5 12.5 13.5: min 11.5 > 11 and median 12.5 > 12: apart.
        let o = decide(
            &[10.0, 11.0, 12.0],
            &[11.5, 12.5, 13.5],
            Metric::Performance,
        );
        assert_eq!(o.decision, Decision::Increase);
    }

    #[test]
    fn thirty_two_samples_lose_one_at_each_end() {
        // 32 >> 5 = 1: samples 1..=32 keep 2..=31.
        let v: Vec<f64> = (1..=32).map(f64::from).collect();
        let t = trim(&v);
        assert_eq!(t.len(), 30);
        assert_eq!((t[0], t[29]), (2.0, 31.0));
        // 31 >> 5 = 0: nothing dropped.
        assert_eq!(trim(&v[..31]).len(), 31);
        // Base: thirty at 100, one at 99, one at 130. Trimmed, all 100 (max 100); new: 32 at
        // 110, min and median 110 > 100: an increase, ratio 1.1.
        let mut base = vec![100.0; 30];
        base.extend([99.0, 130.0]);
        let new = vec![110.0; 32];
        let o = decide(&base, &new, Metric::Performance);
        let a = o.base.as_ref().unwrap();
        assert_eq!((a.samples, a.trimmed, a.kept()), (32, 1, 30));
        assert_eq!((a.min, a.max, a.mean), (100.0, 100.0, 100.0));
        assert_eq!(o.decision, Decision::Increase);
        assert!(close(o.ratio.unwrap(), 1.1));
        // Untrimmed (31 samples: no trim), the 130 stays the max and 110 is not above it.
        let o = decide(&base[1..], &new[1..], Metric::Performance);
        assert_eq!(o.decision, Decision::RangesOverlap);
    }

    #[test]
    fn a_hundred_samples_lose_three_at_each_end() {
        // 100 >> 5 = 3: samples 1..=100 keep 4..=97; 200 >> 5 = 6 is capped at 3.
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        let t = trim(&v);
        assert_eq!((t.len(), t[0], t[93]), (94, 4.0, 97.0));
        let w: Vec<f64> = (1..=200).map(f64::from).collect();
        assert_eq!(trim(&w).len(), 194);
        // Base: 97 at 100 and three at 200: the three are dropped, max 100. New: 100 at 105:
        // an increase of 5%.
        let mut base = vec![100.0; 97];
        base.extend([200.0; 3]);
        let new = vec![105.0; 100];
        let o = decide(&base, &new, Metric::Performance);
        assert_eq!(o.base.as_ref().unwrap().max, 100.0);
        assert_eq!(o.decision, Decision::Increase);
        assert!(close(o.change_pct.unwrap(), 5.0));
        // Four at 200: one survives the trim, the max is 200 and 105 is not above it.
        let mut base = vec![100.0; 96];
        base.extend([200.0; 4]);
        let o = decide(&base, &new, Metric::Performance);
        assert_eq!(o.base.as_ref().unwrap().max, 200.0);
        assert_eq!(o.decision, Decision::RangesOverlap);
    }

    #[test]
    fn a_ratio_of_1_008_passes_the_ranges_but_not_the_threshold() {
        // Base 99.9 100.0 100.1 (median 100.0, max 100.1, mean 100); new 100.7 100.8 100.9
        // (min 100.7 > 100.0, median 100.8 > 100.1, mean 100.8): apart, ratio 1.008 ≤ 1.01.
        let base = [99.9, 100.0, 100.1];
        let new = [100.7, 100.8, 100.9];
        let o = decide(&base, &new, Metric::Performance);
        assert!(close(o.ratio.unwrap(), 1.008));
        assert_eq!(o.decision, Decision::WithinThreshold);
        // Ratio 1.03 (new 102.9 103 103.1): over 1.01 for a cost, not over 1.05 for a count.
        let new = [102.9, 103.0, 103.1];
        assert_eq!(
            decide(&base, &new, Metric::Performance).decision,
            Decision::Increase
        );
        assert_eq!(
            decide(&base, &new, Metric::Other).decision,
            Decision::WithinThreshold
        );
    }

    #[test]
    fn one_sample_each_cannot_decide() {
        // A plain probe: one point per source on each side. The ratio is still 32.2/28.1.
        let o = decide(&[28.1], &[32.2], Metric::Performance);
        assert_eq!(o.decision, Decision::TooFewSamples);
        assert_eq!(o.base.as_ref().unwrap().stddev_pct, None);
        assert!(close(o.change_pct.unwrap(), 100.0 * (32.2 / 28.1 - 1.0)));
        // One side repeated is not enough either.
        let o = decide(&[28.1], &[32.0, 32.2, 32.4], Metric::Performance);
        assert_eq!(o.decision, Decision::TooFewSamples);
    }

    #[test]
    fn empty_and_non_finite_samples() {
        let o = decide(&[], &[1.0, 2.0], Metric::Performance);
        assert_eq!(o.decision, Decision::TooFewSamples);
        assert!(o.base.is_none() && o.ratio.is_none() && o.change_pct.is_none());
        // NaN and infinities are not samples.
        let o = decide(
            &[f64::NAN, 10.0, 10.1, f64::INFINITY],
            &[12.0, 12.1],
            Metric::Performance,
        );
        assert_eq!(o.base.as_ref().unwrap().samples, 2);
        assert_eq!(o.decision, Decision::Increase);
        // Identical sides: no spread, nothing apart.
        let o = decide(&[5.0, 5.0, 5.0], &[5.0, 5.0, 5.0], Metric::Performance);
        assert_eq!(o.decision, Decision::RangesOverlap);
        assert_eq!(o.base.unwrap().stddev_pct, Some(0.0));
    }
}
