//! The noise between runs: what a probe run on an unchanged machine moves by from one run to
//! the next, per source.
//!
//! One probe's intervals are within-run intervals: its rounds share one process, one code
//! placement and one stretch of the host's time, so they are often far narrower than the
//! spread between runs (a new process places its loops and the vDSO anew; the host moves the
//! core clock and its other tenants between runs). `probe --repeat N` runs the probe N times,
//! each in a process of its own, and keeps, per source, every run's point and the noise of a
//! comparison of two runs:
//!
//! ```text
//! noise_pct = 100 · t(0.975, N − 1) · s · √2
//! ```
//!
//! where `s` is a robust spread of the runs' log points (1.4826 × their median absolute
//! deviation, or the sample standard deviation where that is larger: with few runs the MAD can
//! come out 0) — the half-width of a 95% prediction for the log ratio of two single runs.
//! `compare` calls a change only beyond it (docs/methodology.md, "Noise between runs").

use serde::{Deserialize, Serialize};

/// Runs `--repeat` accepts.
pub const MAX_RUNS: u32 = 20;

/// One source's points over the runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourceRuns {
    /// Each run's `cost_ns.point`, in run order (this profile's first).
    pub points_ns: Vec<f64>,
    /// The 95% half-width, in percent, of the ratio of two single runs on this machine.
    pub noise_pct: f64,
}

/// The profile-level record of `--repeat`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BetweenRuns {
    pub runs: u32,
    /// How the runs were taken and the noise formed, in words.
    pub method: String,
}

/// The noise (percent) of two single runs from `points` (positive); `None` under 3 points.
pub fn noise_pct(points: &[f64]) -> Option<f64> {
    let logs: Vec<f64> = points
        .iter()
        .filter(|p| p.is_finite() && **p > 0.0)
        .map(|p| p.ln())
        .collect();
    let n = logs.len();
    if n < 3 {
        return None;
    }
    let median = crate::stats::median(&logs)?;
    let deviations: Vec<f64> = logs.iter().map(|l| (l - median).abs()).collect();
    let mad = 1.4826 * crate::stats::median(&deviations)?;
    let mean = logs.iter().sum::<f64>() / n as f64;
    let sd = (logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt();
    let t = crate::stats::t975(n - 1)?;
    Some(100.0 * t * mad.max(sd) * std::f64::consts::SQRT_2)
}

/// The noise between two runs (percent) past which `--repeat` warns.
pub const NOISY_PCT: f64 = 5.0;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_noise_is_a_prediction_for_two_runs() {
        assert_eq!(noise_pct(&[10.0, 10.0]), None);
        // Identical runs: no noise.
        assert_eq!(noise_pct(&[10.0, 10.0, 10.0]), Some(0.0));
        // ln points ±1% around ln 100 (n = 3): sd ≈ 0.01, t(0.975, 2) = 4.303.
        let n = noise_pct(&[100.0 * 0.99, 100.0, 100.0 * 1.01]).unwrap();
        let sd = ((0.99f64.ln().powi(2) + 1.01f64.ln().powi(2)) / 2.0).sqrt();
        let mad = 1.4826 * 1.01f64.ln().abs().min(0.99f64.ln().abs());
        assert!(
            (n - 100.0 * 4.303 * sd.max(mad) * 2f64.sqrt()).abs() < 1e-9,
            "{n}"
        );
        // One wild run among many widens it, but the MAD keeps it from ruling alone.
        let wild = noise_pct(&[100.0, 100.5, 99.5, 100.2, 99.8, 150.0]).unwrap();
        assert!(wild > 5.0, "{wild}");
        assert!(noise_pct(&[-1.0, 0.0, 10.0]).is_none());
    }
}
