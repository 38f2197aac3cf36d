//! Repeated runs read robustly: a run disturbed as a whole (another job shared the machine for
//! its stretch) is named and set aside, so that it widens nothing by itself.
//!
//! The runs are a `--repeat` profile's (each source's `between_runs.points_ns`) or the
//! `--noise` profiles'. Per source, each run's log point is taken against the median of that
//! source's runs; a run's move is the median of those deviations over its sources. A run whose
//! move is beyond [`DISTURBED_PCT`] is disturbed: the machine, not a source, moved during it (on
//! a quiet machine a run's move is a few hundredths of a percent). Runs are set aside only
//! while fewer than half of them are disturbed; else the spread is the machine's and stays in.
//! What remains gives the noise between runs ([`crate::probe::between::noise_pct`]).

use serde::{Deserialize, Serialize};

use super::super::Input;
use crate::probe::between;
use crate::probe::Profile;

/// A run's move (percent, median over its sources) past which it is disturbed.
pub const DISTURBED_PCT: f64 = 2.0;

/// One run set aside.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Disturbed {
    /// The input (column label), or the `--noise` file.
    pub label: String,
    /// The run, counted from 1 in the profile's order of runs (`between_runs.points_ns`), or
    /// the `--noise` profile's place on the command line.
    pub run: usize,
    /// The run's move against the other runs: the median over its sources, in percent.
    pub percent: f64,
    /// The sources that median is over.
    pub sources: usize,
}

/// Every source's points over the runs (rows of run order, `None` where a run lacks it).
#[derive(Debug, Clone, Default)]
pub struct Runs {
    pub ids: Vec<String>,
    pub points: Vec<Vec<Option<f64>>>,
    pub runs: usize,
    /// The runs set aside (0-based), with their move (log) and the sources it is over.
    pub dropped: Vec<(usize, f64, usize)>,
}

impl Runs {
    /// The runs of a `--repeat` profile; `None` for one run.
    pub fn of_profile(p: &Profile) -> Option<Runs> {
        let runs = p.between_runs.as_ref()?.runs as usize;
        let mut out = Runs {
            runs,
            ..Runs::default()
        };
        for s in &p.sources {
            if let Some(b) = &s.between_runs {
                out.ids.push(s.id.clone());
                let mut row: Vec<Option<f64>> = b.points_ns.iter().copied().map(Some).collect();
                row.resize(runs, None);
                out.points.push(row);
            }
        }
        out.dropped = disturbed(&out.points, runs);
        Some(out)
    }

    /// The `--noise` profiles as runs, each source by its `cost_ns` point.
    pub fn of_profiles(noise: &[Profile]) -> Runs {
        let mut out = Runs {
            runs: noise.len(),
            ..Runs::default()
        };
        for p in noise {
            for s in &p.sources {
                if !out.ids.contains(&s.id) {
                    out.ids.push(s.id.clone());
                }
            }
        }
        out.points = out
            .ids
            .iter()
            .map(|id| {
                noise
                    .iter()
                    .map(|p| p.cost_ns(id).map(|e| e.point))
                    .collect()
            })
            .collect();
        out.dropped = disturbed(&out.points, out.runs);
        out
    }

    /// The points of `id` in the runs kept.
    pub fn kept(&self, id: &str) -> Vec<f64> {
        let Some(i) = self.ids.iter().position(|x| x == id) else {
            return Vec::new();
        };
        self.points[i]
            .iter()
            .enumerate()
            .filter(|(r, _)| !self.dropped.iter().any(|d| d.0 == *r))
            .filter_map(|(_, p)| *p)
            .collect()
    }

    /// The noise (percent) of `id` over the runs kept, and how many runs that is.
    pub fn noise(&self, id: &str) -> Option<(f64, usize)> {
        let kept = self.kept(id);
        between::noise_pct(&kept).map(|n| (n, kept.len()))
    }

    /// The runs set aside, named under `label`.
    pub fn named(&self, label: &str) -> Vec<Disturbed> {
        self.dropped
            .iter()
            .map(|(r, m, n)| Disturbed {
                label: label.to_string(),
                run: r + 1,
                percent: 100.0 * (m.exp() - 1.0),
                sources: *n,
            })
            .collect()
    }
}

/// The disturbed runs of `points` (per source, per run): (run, move as a log, sources), none
/// when half of the runs or more would be.
pub fn disturbed(points: &[Vec<Option<f64>>], runs: usize) -> Vec<(usize, f64, usize)> {
    if runs < 3 {
        return Vec::new();
    }
    let mut per_run: Vec<Vec<f64>> = vec![Vec::new(); runs];
    for row in points {
        let logs: Vec<Option<f64>> = row
            .iter()
            .map(|p| p.filter(|x| x.is_finite() && *x > 0.0).map(f64::ln))
            .collect();
        let present: Vec<f64> = logs.iter().flatten().copied().collect();
        if present.len() < 3 {
            continue;
        }
        let Some(m) = crate::stats::median(&present) else {
            continue;
        };
        for (r, l) in logs.iter().enumerate().take(runs) {
            if let Some(l) = l {
                per_run[r].push(l - m);
            }
        }
    }
    let limit = (1.0 + DISTURBED_PCT / 100.0).ln();
    let out: Vec<(usize, f64, usize)> = per_run
        .iter()
        .enumerate()
        .filter_map(|(r, d)| {
            let m = crate::stats::median(d)?;
            (d.len() >= 3 && m.abs() > limit).then_some((r, m, d.len()))
        })
        .collect();
    if out.len() * 2 >= runs {
        return Vec::new();
    }
    out
}

/// `input` with its cost centred on the median of its kept runs where its own point (the
/// first run's) was set aside; the intervals move with it.
pub fn recentre(input: &Input, runs: &Runs) -> Input {
    let mut out = input.clone();
    if !runs.dropped.iter().any(|d| d.0 == 0) {
        return out;
    }
    for s in &mut out.profile.sources {
        let (Some(c), Some(m)) = (s.cost_ns, crate::stats::median(&runs.kept(&s.id))) else {
            continue;
        };
        if c.point <= 0.0 || m <= 0.0 {
            continue;
        }
        let k = m / c.point;
        let scale = |e: &mut crate::stats::Estimate| {
            e.point *= k;
            e.lower *= k;
            e.upper *= k;
        };
        if let Some(e) = s.cost_ns.as_mut() {
            scale(e);
        }
        if let Some(e) = s.cost_cycles.as_mut() {
            scale(e);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quiet(k: f64) -> Vec<Vec<Option<f64>>> {
        (0..10)
            .map(|s| {
                let base = 10.0 + s as f64;
                vec![Some(base), Some(base * k), Some(base * 1.001)]
            })
            .collect()
    }

    #[test]
    fn one_run_of_a_loaded_machine_is_named_and_set_aside() {
        let d = disturbed(&quiet(1.2), 3);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].0, 1);
        assert!((d[0].1 - 1.2f64.ln()).abs() < 0.01, "{d:?}");
        assert_eq!(d[0].2, 10);
        // A quiet machine: nothing set aside.
        assert!(disturbed(&quiet(1.003), 3).is_empty());
        // Two runs: no median to stand against.
        assert!(disturbed(&[vec![Some(1.0), Some(2.0)]], 2).is_empty());
    }

    #[test]
    fn one_source_wild_in_one_run_disturbs_no_run() {
        let mut p = quiet(1.0);
        p[3][1] = Some(100.0);
        assert!(disturbed(&p, 3).is_empty());
    }

    #[test]
    fn half_the_runs_moved_is_the_machine_not_a_disturbance() {
        let p: Vec<Vec<Option<f64>>> = (0..10)
            .map(|_| vec![Some(10.0), Some(12.0), Some(12.0), Some(10.0)])
            .collect();
        assert!(disturbed(&p, 4).is_empty());
        assert!(disturbed(&[vec![None, Some(f64::NAN), Some(-1.0)]], 3).is_empty());
    }
}
