//! Statistics as pure functions: location and spread, quantiles, robust regression and a
//! seeded percentile bootstrap.
//!
//! Nothing here measures or allocates global state; every function documents what it does with
//! empty input, a single value, zero spread and NaN. References: Hyndman & Fan (1996) type 7
//! quantiles (what R and numpy use by default); Theil (1950) and Sen (1968) for the slope;
//! Efron & Tibshirani (1993) ch. 13 for percentile intervals.

mod rng;
mod t;

pub use rng::SplitMix64;
pub use t::{t975, t_two_sided, welch_df};

use serde::{Deserialize, Serialize};

/// A point estimate with a confidence interval, `lower <= point <= upper`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub point: f64,
    pub lower: f64,
    pub upper: f64,
}

impl Estimate {
    /// `point` with its interval `[lower, upper]`.
    pub fn new(point: f64, lower: f64, upper: f64) -> Self {
        Estimate {
            point,
            lower,
            upper,
        }
    }

    /// An estimate whose interval is the single point.
    pub fn exact(v: f64) -> Self {
        Estimate {
            point: v,
            lower: v,
            upper: v,
        }
    }

    /// Scales all three values (unit conversion).
    pub fn scale(self, k: f64) -> Self {
        Estimate {
            point: self.point * k,
            lower: self.lower * k,
            upper: self.upper * k,
        }
    }

    /// The difference of two estimates measured independently: the points' difference, each
    /// bound as far from it as the root-sum-square of the two distances that widen it on that
    /// side (errors without a common cause add in quadrature, not in full; for estimates that
    /// share a measurement the worst case, `[a.lower − b.upper, a.upper − b.lower]`, holds
    /// instead).
    pub fn minus_independent(self, o: Estimate) -> Estimate {
        let point = self.point - o.point;
        let below = (self.point - self.lower).hypot(o.upper - o.point);
        let above = (self.upper - self.point).hypot(o.point - o.lower);
        Estimate {
            point,
            lower: point - below,
            upper: point + above,
        }
    }

    /// Interval width relative to the point (`(upper - lower) / |point|`); infinite at zero.
    pub fn relative_width(&self) -> f64 {
        (self.upper - self.lower) / self.point.abs()
    }
}

/// Interval arithmetic: an estimate times a number, the bounds swapped when it is negative.
impl std::ops::Mul<f64> for Estimate {
    type Output = Estimate;
    fn mul(self, k: f64) -> Estimate {
        let (a, b) = (self.lower * k, self.upper * k);
        Estimate {
            point: self.point * k,
            lower: a.min(b),
            upper: a.max(b),
        }
    }
}

/// Interval arithmetic: an estimate over a number, the bounds swapped when it is negative.
impl std::ops::Div<f64> for Estimate {
    type Output = Estimate;
    fn div(self, k: f64) -> Estimate {
        let (a, b) = (self.lower / k, self.upper / k);
        Estimate {
            point: self.point / k,
            lower: a.min(b),
            upper: a.max(b),
        }
    }
}

/// Drops NaN values and sorts the rest ascending.
fn sorted_finite(xs: &[f64]) -> Vec<f64> {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| !x.is_nan()).collect();
    v.sort_by(f64::total_cmp);
    v
}

/// Arithmetic mean of the non-NaN values; `None` when there are none.
pub fn mean(xs: &[f64]) -> Option<f64> {
    let v: Vec<f64> = xs.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return None;
    }
    Some(v.iter().sum::<f64>() / v.len() as f64)
}

/// Type-7 quantile (linear interpolation between order statistics) of the non-NaN values, for
/// `q` in `[0, 1]`; `None` for empty input or `q` outside the range.
pub fn quantile(xs: &[f64], q: f64) -> Option<f64> {
    if !(0.0..=1.0).contains(&q) {
        return None;
    }
    quantile_sorted(&sorted_finite(xs), q)
}

/// [`quantile`] on data already sorted and free of NaN.
pub fn quantile_sorted(v: &[f64], q: f64) -> Option<f64> {
    if v.is_empty() || !(0.0..=1.0).contains(&q) {
        return None;
    }
    let h = (v.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let hi = h.ceil() as usize;
    Some(v[lo] + (h - lo as f64) * (v[hi] - v[lo]))
}

/// Median of the non-NaN values; `None` when there are none.
pub fn median(xs: &[f64]) -> Option<f64> {
    quantile(xs, 0.5)
}

/// Median absolute deviation (unscaled) of the non-NaN values; `Some(0.0)` for one value or
/// zero spread, `None` when there are none.
pub fn mad(xs: &[f64]) -> Option<f64> {
    let m = median(xs)?;
    let dev: Vec<f64> = xs
        .iter()
        .filter(|x| !x.is_nan())
        .map(|x| (x - m).abs())
        .collect();
    median(&dev)
}

/// Ordinary least-squares fit `y = intercept + slope * x`; `None` with fewer than two points,
/// when all `x` are equal, or when any value is NaN.
pub fn ols(x: &[f64], y: &[f64]) -> Option<(f64, f64)> {
    if x.len() != y.len() || x.len() < 2 || x.iter().chain(y).any(|v| v.is_nan()) {
        return None;
    }
    let n = x.len() as f64;
    let mx = x.iter().sum::<f64>() / n;
    let my = y.iter().sum::<f64>() / n;
    let sxx: f64 = x.iter().map(|a| (a - mx) * (a - mx)).sum();
    if sxx == 0.0 {
        return None;
    }
    let sxy: f64 = x.iter().zip(y).map(|(a, b)| (a - mx) * (b - my)).sum();
    let slope = sxy / sxx;
    Some((my - slope * mx, slope))
}

/// Theil–Sen fit: the slope is the median of all pairwise slopes (pairs with equal `x` are
/// skipped), the intercept the median of `y - slope * x`. Tolerates up to ~29% outliers, which
/// is what a preempted batch looks like. `None` under the same conditions as [`ols`].
pub fn theil_sen(x: &[f64], y: &[f64]) -> Option<(f64, f64)> {
    let mut scratch = Vec::new();
    theil_sen_with(x, y, &mut scratch)
}

/// [`theil_sen`] reusing `scratch` for the pairwise slopes (the bootstrap calls it many times).
pub fn theil_sen_with(x: &[f64], y: &[f64], scratch: &mut Vec<f64>) -> Option<(f64, f64)> {
    if x.len() != y.len() || x.len() < 2 || x.iter().chain(y).any(|v| v.is_nan()) {
        return None;
    }
    scratch.clear();
    for i in 0..x.len() {
        for j in i + 1..x.len() {
            let dx = x[j] - x[i];
            if dx != 0.0 {
                scratch.push((y[j] - y[i]) / dx);
            }
        }
    }
    if scratch.is_empty() {
        return None;
    }
    let slope = select_median(scratch);
    scratch.clear();
    scratch.extend(x.iter().zip(y).map(|(a, b)| b - slope * a));
    let intercept = select_median(scratch);
    Some((intercept, slope))
}

/// Median by selection (O(n)); reorders `v`, which must be non-empty and free of NaN.
fn select_median(v: &mut [f64]) -> f64 {
    let n = v.len();
    let mid = n / 2;
    let (_, &mut upper, _) = v.select_nth_unstable_by(mid, f64::total_cmp);
    if n % 2 == 1 {
        upper
    } else {
        let lower = v[..mid].iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (lower + upper) / 2.0
    }
}

/// Percentile bootstrap of a statistic over paired samples `(x, y)`.
///
/// Draws `resamples` resamples of the pairs with replacement using a [`SplitMix64`] seeded with
/// `seed`, computes `stat` on each and returns the replicates (those where `stat` returned
/// `None` are dropped). Same seed, same data, same replicates.
pub fn bootstrap_pairs<F>(
    x: &[f64],
    y: &[f64],
    resamples: usize,
    seed: u64,
    mut stat: F,
) -> Vec<f64>
where
    F: FnMut(&[f64], &[f64]) -> Option<f64>,
{
    let n = x.len().min(y.len());
    if n == 0 {
        return Vec::new();
    }
    let mut rng = SplitMix64::new(seed);
    let mut bx = vec![0.0; n];
    let mut by = vec![0.0; n];
    let mut out = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        for k in 0..n {
            let i = rng.below(n as u64) as usize;
            bx[k] = x[i];
            by[k] = y[i];
        }
        if let Some(s) = stat(&bx, &by) {
            out.push(s);
        }
    }
    out
}

/// Percentile bootstrap of a statistic over one sample: draws `resamples` resamples of `xs`
/// with replacement from a [`SplitMix64`] seeded with `seed` and returns the replicates of
/// `stat` (those where it returned `None` are dropped). Empty input gives no replicates.
pub fn bootstrap<F>(xs: &[f64], resamples: usize, seed: u64, mut stat: F) -> Vec<f64>
where
    F: FnMut(&mut [f64]) -> Option<f64>,
{
    if xs.is_empty() {
        return Vec::new();
    }
    let mut rng = SplitMix64::new(seed);
    let mut buf = vec![0.0; xs.len()];
    let mut out = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        for b in buf.iter_mut() {
            *b = xs[rng.below(xs.len() as u64) as usize];
        }
        if let Some(s) = stat(&mut buf) {
            out.push(s);
        }
    }
    out
}

/// The median of `xs` with the central `level` percentile-bootstrap interval (`resamples`
/// resamples, seeded); `None` for no values, the point alone for one value.
pub fn median_bootstrap(xs: &[f64], resamples: usize, seed: u64, level: f64) -> Option<Estimate> {
    let point = median(xs)?;
    if xs.len() < 2 {
        return Some(Estimate::exact(point));
    }
    let reps = bootstrap(xs, resamples, seed, |v| quantile_in_place(v, 0.5));
    percentile_interval(&reps, point, level)
}

/// [`quantile`] that sorts `v` in place (the bootstrap's scratch buffer) instead of copying.
pub fn quantile_in_place(v: &mut [f64], q: f64) -> Option<f64> {
    if v.iter().any(|x| x.is_nan()) {
        return quantile(v, q);
    }
    v.sort_unstable_by(f64::total_cmp);
    quantile_sorted(v, q)
}

/// The central `level` interval (e.g. 0.95) of bootstrap replicates around `point`; the bounds
/// are widened to contain `point` if the replicate distribution is skewed past it. `None` for
/// no replicates or `level` outside `(0, 1)`.
pub fn percentile_interval(replicates: &[f64], point: f64, level: f64) -> Option<Estimate> {
    if !(level > 0.0 && level < 1.0) {
        return None;
    }
    let v = sorted_finite(replicates);
    let alpha = (1.0 - level) / 2.0;
    let lower = quantile_sorted(&v, alpha)?;
    let upper = quantile_sorted(&v, 1.0 - alpha)?;
    Some(Estimate {
        point,
        lower: lower.min(point),
        upper: upper.max(point),
    })
}

#[cfg(test)]
mod tests;
