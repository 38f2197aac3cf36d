//! The ratio of two measured costs, its 95% interval, and the word that follows from it.
//!
//! Each cost carries its own 95% interval (a percentile bootstrap, widened to hold every
//! round: often lopsided). The ratio's interval is computed once, on the log scale, where a
//! ratio is a difference: `ln r = ln c − ln b`. The two inputs are independent measurements
//! with unequal spreads (Welch's setting), so their variances add; each side's interval is a
//! 95% interval, so its log half-width is already `z·se` and the half-widths add in
//! quadrature at the same level. A lopsided interval keeps its two sides apart: the ratio's
//! upper side pairs the cost's upper side with the baseline's lower side, and the other way
//! round:
//!
//! ```text
//! r      = c / b
//! upper  = r · exp( √( ln(c⁺/c)² + ln(b/b⁻)² ) )
//! lower  = r · exp(−√( ln(c/c⁻)² + ln(b⁺/b)² ) )
//! ```
//!
//! The word follows from that interval alone: `faster` when `upper < 1`, `slower` when
//! `lower > 1`, `no change` when it holds 1. The printed `±` (or `+u/−l` when the two sides
//! differ) is the same interval, so the two cannot disagree.

use serde::{Deserialize, Serialize};

use crate::stats::Estimate;

/// How one input's cost of a source stands against the first input's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    Faster,
    Slower,
    NoChange,
}

impl Change {
    /// The word for a ratio interval (`cost / base`): decided only when it excludes 1.
    pub fn of_interval(r: &Estimate) -> Change {
        if r.upper < 1.0 {
            Change::Faster
        } else if r.lower > 1.0 {
            Change::Slower
        } else {
            Change::NoChange
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Change::Faster => "faster",
            Change::Slower => "slower",
            Change::NoChange => "no change",
        }
    }
}

/// The 95% interval of `cost / base` (formula in the module documentation). `None` when a
/// point is not positive, or when an interval reaches 0 or below (a sub-nanosecond source):
/// the ratio is then unbounded on one side and no interval is claimed.
pub fn ratio_interval(base: &Estimate, cost: &Estimate) -> Option<Estimate> {
    if !(base.point > 0.0 && cost.point > 0.0 && base.lower > 0.0 && cost.lower > 0.0) {
        return None;
    }
    let r = cost.point / base.point;
    let up = |e: &Estimate| (e.upper / e.point).ln();
    let down = |e: &Estimate| (e.point / e.lower).ln();
    let upper = r * up(cost).hypot(down(base)).exp();
    let lower = r * (-down(cost).hypot(up(base))).exp();
    let out = Estimate {
        point: r,
        lower,
        upper,
    };
    [lower, r, upper]
        .iter()
        .all(|v| v.is_finite())
        .then_some(out)
}

/// The ratio's larger side, `max(upper − r, r − lower)`: `r ± this` holds the whole interval.
pub fn plus_minus(r: &Estimate) -> f64 {
    (r.upper - r.point).max(r.point - r.lower)
}

/// The ratio as printed, hyperfine-style: `0.98 ± 0.04×` when both sides round alike,
/// `659.77 +12.30/−3.10×` when they do not. More decimals are used, up to six, where two
/// would print an interval whose relation to 1 contradicts `change` (a bound that rounds
/// onto 1.00).
pub fn format(r: &Estimate, change: Change) -> String {
    let round = |v: f64, d: usize| format!("{v:.d$}").parse::<f64>().unwrap_or(v);
    let mut d = 2;
    loop {
        let (x, u, l) = (
            round(r.point, d),
            round(r.upper - r.point, d),
            round(r.point - r.lower, d),
        );
        let (lo, hi) = (x - l, x + u);
        let agrees = match change {
            Change::Faster => hi < 1.0,
            Change::Slower => lo > 1.0,
            Change::NoChange => lo <= 1.0 && hi >= 1.0,
        };
        if agrees || d >= 6 {
            let p = r.point;
            return if u == l {
                format!("{p:.d$} ± {:.d$}×", u.max(l))
            } else {
                format!("{p:.d$} +{:.d$}/−{:.d$}×", r.upper - p, p - r.lower)
            };
        }
        d += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(point: f64, lower: f64, upper: f64) -> Estimate {
        Estimate {
            point,
            lower,
            upper,
        }
    }

    #[test]
    fn symmetric_intervals_add_in_quadrature() {
        // ±3% on each side: about ±4.2% on the ratio.
        let r = ratio_interval(&e(100.0, 97.0, 103.0), &e(98.0, 95.06, 100.94)).unwrap();
        assert!((r.point - 0.98).abs() < 1e-12);
        assert!((plus_minus(&r) - 0.98 * 0.0424).abs() < 0.002, "{r:?}");
        assert_eq!(Change::of_interval(&r), Change::NoChange);
        assert_eq!(format(&r, Change::NoChange), "0.98 ± 0.04×");
    }

    #[test]
    fn a_lopsided_interval_keeps_its_sides() {
        // Tight below, wide above (a trapped read with one slow round): clearly slower.
        let r = ratio_interval(&e(16.9, 16.5, 17.2), &e(11140.0, 11000.0, 32000.0)).unwrap();
        assert!(r.lower > 600.0 && r.upper > 1800.0, "{r:?}");
        assert_eq!(Change::of_interval(&r), Change::Slower);
        let s = format(&r, Change::Slower);
        assert!(s.contains(" +") && s.contains("/−"), "{s}");
    }

    #[test]
    fn the_word_never_contradicts_the_printed_bounds() {
        // Upper bound 0.9951: two decimals would print 0.97 + 0.03 = 1.00.
        let r = e(0.9651, 0.93, 0.9951);
        assert_eq!(Change::of_interval(&r), Change::Faster);
        let s = format(&r, Change::Faster);
        assert_eq!(s, "0.965 +0.030/−0.035×");
    }

    #[test]
    fn unbounded_ratios_claim_no_interval() {
        assert!(ratio_interval(&e(0.46, -0.1, 0.9), &e(0.5, 0.4, 0.6)).is_none());
        assert!(ratio_interval(&e(10.0, 9.0, 11.0), &e(0.5, 0.0, 0.6)).is_none());
        // A bare point against itself: exactly 1, no change.
        let r = ratio_interval(&e(5.0, 5.0, 5.0), &e(5.0, 5.0, 5.0)).unwrap();
        assert_eq!(Change::of_interval(&r), Change::NoChange);
    }
}
