//! What `compare` calls a change: beyond the noise between runs, and apart from a shift the
//! whole machine made.
//!
//! - **Noise between runs.** A profile's intervals are within-run intervals; two runs of an
//!   unchanged machine differ by more ([`crate::probe::between`]). Per source, the noise is the
//!   95% half-width of the log ratio of two single runs: from `--noise` profiles (three or more
//!   runs of the same machine, unchanged), else the larger of the two inputs' own
//!   (`probe --repeat`), a run disturbed as a whole set aside and named ([`runs`]); under
//!   [`MEASURED_RUNS`] runs it is floored at the [`prior`], and with no runs repeated the prior
//!   is the noise. It is added in quadrature to the ratio's within-run log half-width (both
//!   are 95% half-widths of independent terms).
//! - **A machine-wide shift.** When most sources moved together — two thirds or more of them
//!   within their tolerance of the median log ratio — that median is the machine's shift
//!   (the core clock, another tenant), named once; each source is then judged on its ratio
//!   divided by the shift. A source's tolerance is its measured noise (never the prior, which
//!   is no evidence) and its within-run half-width in quadrature, and at least
//!   [`MIN_TOLERANCE`].
//!
//! The word follows from the adjusted, widened interval as before ([`super::Change::of_interval`]),
//! provided the source's own widened ratio (without the shift) says the same: a shift only
//! takes a change away, it never makes one of a source that stood still.

use serde::{Deserialize, Serialize};

mod check;
pub mod prior;
pub mod runs;

pub use check::{check_noise, NoiseInput};
pub use runs::{Disturbed, Runs};

use super::{Change, Comparison, Input};
use crate::probe::Profile;
use crate::stats::Estimate;

/// The smallest tolerance (log ratio) of a source moving with the machine: 0.5%.
pub const MIN_TOLERANCE: f64 = 0.005;

/// The largest shift named (log ratio, about ±20%): a whole machine's change of pace (core
/// clock, another tenant). A larger common move is a change of the sources (every TSC read
/// trapped), judged source by source.
pub const MAX_SHIFT: f64 = 0.18;

/// The share of sources that must move together for a shift to be named.
pub const SHIFT_SHARE: f64 = 2.0 / 3.0;

/// The shift of one input against the first.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Shift {
    /// The input (column label).
    pub label: String,
    /// `null`: every source; else the kind of source (`counter`, `vdso`, `syscall`, …) that
    /// moved together beyond the machine's shift.
    pub kind: Option<String>,
    /// The sources' median ratio (in the comparison's unit) − 1, in percent.
    pub percent: f64,
    /// Sources within their tolerance of it, of those compared.
    pub moved: usize,
    pub of: usize,
    /// The core clock (GHz, median while probing) of the first input and of this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_ghz: Option<(f64, f64)>,
    /// The same median in core cycles, in percent (ns comparisons where both carry cycles).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycles_percent: Option<f64>,
    /// The line the table prints.
    pub summary: String,
}

/// Where the noise came from.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct NoiseSource {
    /// `noise_profiles`, `repeat`, `prior` (one run per input), or `none` (files written
    /// before the prior existed).
    pub kind: String,
    /// In words, with the number of runs.
    pub detail: String,
}

impl Default for NoiseSource {
    /// Within-run intervals only.
    fn default() -> Self {
        NoiseSource {
            kind: "none".into(),
            detail: "within-run intervals only".into(),
        }
    }
}

/// The votes for a shift of `ys` (source index, log ratio, tolerance): one per source, except
/// that the sources of one [`super::paths`] path vote once, with their medians. A path moves all its
/// sources alike (a clocksource switch moves every vDSO clock read): that is one change of
/// one path, not a machine-wide shift.
fn votes(ys: &[(usize, f64, f64)], ids: &[&str]) -> Vec<(f64, f64)> {
    let path_of = |i: usize| {
        super::paths::PATHS
            .iter()
            .position(|p| p.sources.contains(&ids[i]))
    };
    let mut out: Vec<(f64, f64)> = ys
        .iter()
        .filter(|(i, _, _)| path_of(*i).is_none())
        .map(|(_, x, t)| (*x, *t))
        .collect();
    for p in 0..super::paths::PATHS.len() {
        let on: Vec<&(usize, f64, f64)> = ys.iter().filter(|y| path_of(y.0) == Some(p)).collect();
        let xs: Vec<f64> = on.iter().map(|y| y.1).collect();
        let ts: Vec<f64> = on.iter().map(|y| y.2).collect();
        if let (Some(x), Some(t)) = (crate::stats::median(&xs), crate::stats::median(&ts)) {
            out.push((x, t));
        }
    }
    out
}

/// The log half-width of a ratio interval (the larger side).
fn log_half(r: &Estimate) -> f64 {
    (r.upper / r.point).ln().max((r.point / r.lower).ln())
}

/// The median log ratio when two thirds of `xs` (log ratio, tolerance) lie within their
/// tolerance of it, and it is at least [`MIN_TOLERANCE`], beyond the median tolerance and at
/// most [`MAX_SHIFT`]: (median, moved, of).
pub fn shift(xs: &[(f64, f64)]) -> Option<(f64, usize, usize)> {
    if xs.len() < 3 {
        return None;
    }
    let logs: Vec<f64> = xs.iter().map(|(x, _)| *x).collect();
    let m = crate::stats::median(&logs)?;
    let moved = xs.iter().filter(|(x, tol)| (x - m).abs() <= *tol).count();
    // A move within the sources' typical tolerance is their spread, not a shift.
    let tols: Vec<f64> = xs.iter().map(|(_, t)| *t).collect();
    let typical = crate::stats::median(&tols)?;
    (m.abs() >= MIN_TOLERANCE
        && m.abs() > typical
        && m.abs() <= MAX_SHIFT
        && moved as f64 >= SHIFT_SHARE * xs.len() as f64)
        .then_some((m, moved, xs.len()))
}

/// `r` divided by `exp(shift)` and widened by `noise_pct` in quadrature on the log scale.
pub fn adjust(r: &Estimate, shift: f64, noise_pct: Option<f64>) -> Estimate {
    let k = (-shift).exp();
    let point = r.point * k;
    let n = noise_pct.map_or(0.0, |n| (1.0 + n / 100.0).ln());
    let up = (r.upper / r.point).ln().hypot(n);
    let down = (r.point / r.lower).ln().hypot(n);
    Estimate {
        point,
        lower: point * (-down).exp(),
        upper: point * up.exp(),
    }
}

/// Runs of a source measured from this many on stand for its noise alone; under it, the
/// measured noise is floored at the [`prior`].
pub const MEASURED_RUNS: usize = 5;

/// Where the noise comes from, in words, for the `Noise:` line.
fn source_of(inputs: &[Input], runs: &[Option<Runs>], noise: Option<&Runs>) -> NoiseSource {
    let floor = |fewest: usize| {
        if fewest < MEASURED_RUNS {
            format!(
                "; under {MEASURED_RUNS} runs kept it is floored at {}",
                prior::words()
            )
        } else {
            String::new()
        }
    };
    if let Some(n) = noise {
        let kept = n.runs - n.dropped.len();
        return NoiseSource {
            kind: "noise_profiles".into(),
            detail: format!(
                "between-run noise from {kept} --noise profiles of this machine{}",
                floor(kept)
            ),
        };
    }
    if runs.iter().any(Option::is_some) {
        let per: Vec<String> = inputs
            .iter()
            .zip(runs)
            .map(|(_, r)| {
                r.as_ref()
                    .map_or(1, |r| r.runs - r.dropped.len())
                    .to_string()
            })
            .collect();
        let fewest = runs
            .iter()
            .flatten()
            .map(|r| r.runs - r.dropped.len())
            .min()
            .unwrap_or(0);
        return NoiseSource {
            kind: "repeat".into(),
            detail: format!(
                "between-run noise from the inputs' own runs (probe --repeat; runs kept per \
                 input: {}){}",
                per.join(", "),
                floor(fewest)
            ),
        };
    }
    NoiseSource {
        kind: "prior".into(),
        detail: format!(
            "one run per input: {}; measure this machine's own with `probe --repeat 5` or \
             `--noise`",
            prior::words()
        ),
    }
}

/// Per source (in `cmp`'s order) the measured noise of column `k` against the first input:
/// from the `--noise` runs, else the larger of the two inputs' own, with the runs it is over
/// (the fewer of the two).
fn measured(
    cmp: &Comparison,
    runs: &[Option<Runs>],
    noise: Option<&Runs>,
    k: usize,
) -> Vec<Option<(f64, usize)>> {
    cmp.sources
        .iter()
        .map(|r| {
            if let Some(n) = noise {
                return n.noise(&r.id);
            }
            let get = |i: usize| runs.get(i).and_then(Option::as_ref)?.noise(&r.id);
            match (get(0), get(k)) {
                (Some(a), Some(b)) => Some((a.0.max(b.0), a.1.min(b.1))),
                (a, b) => a.or(b),
            }
        })
        .collect()
}

/// Applies the noise and the shift to `cmp` (built from `inputs`), `noise` being `--noise`
/// profiles; `runs` are the inputs' own (`--repeat`), disturbed runs found.
pub fn apply(cmp: &mut Comparison, inputs: &[Input], runs: &[Option<Runs>], noise: &[Profile]) {
    let Some(first) = inputs.first() else {
        return;
    };
    let noise_runs = (noise.len() >= 3).then(|| Runs::of_profiles(noise));
    cmp.noise = source_of(inputs, runs, noise_runs.as_ref());
    match &noise_runs {
        Some(n) => cmp.disturbed.extend(n.named("--noise")),
        None => {
            for (i, r) in inputs.iter().zip(runs) {
                if let Some(r) = r {
                    cmp.disturbed.extend(r.named(&i.label));
                }
            }
        }
    }
    for k in 1..inputs.len() {
        let col = k - 1;
        let measured = measured(cmp, runs, noise_runs.as_ref(), k);
        // A row compare judges in cycles while the others are in ns is clear of the core
        // clock, the commonest cause of a shift: it votes for the machine's shift with its ns
        // ratio (its ns moved with the clock), but is not judged net of it, and takes no part
        // in a kind's shift.
        let unit = cmp.unit;
        let in_unit: Vec<bool> = cmp
            .sources
            .iter()
            .map(|r| r.unit_at(col, unit) == unit)
            .collect();
        // Each source's log ratio and tolerance where it has a ratio interval: the within-run
        // half-width and the measured noise (the prior is no evidence of a shift).
        let xs: Vec<Option<(f64, f64)>> = cmp
            .sources
            .iter()
            .zip(&measured)
            .zip(&in_unit)
            .map(|((r, m), own)| {
                let ri = if *own {
                    r.ratio_interval.get(col).copied().flatten()?
                } else {
                    r.ns_ratio_interval.get(col).copied().flatten()?
                };
                let n = m.map_or(0.0, |(n, _)| (1.0 + n / 100.0).ln());
                Some((ri.point.ln(), log_half(&ri).hypot(n).max(MIN_TOLERANCE)))
            })
            .collect();
        let kinds: Vec<String> = cmp
            .sources
            .iter()
            .map(|r| {
                first
                    .profile
                    .source(&r.id)
                    .map_or(String::new(), |s| s.kind.clone())
            })
            .collect();
        // The whole machine first, then each kind of source (counter, vdso, syscall, …) on
        // what remains: a change of the kernel's entry moves every syscall source alike.
        let mut shift_of = vec![0.0; xs.len()];
        let all: Vec<usize> = (0..xs.len()).collect();
        let mut groups: Vec<(Option<String>, Vec<usize>)> = vec![(None, all)];
        let mut seen: Vec<&String> = Vec::new();
        for name in &kinds {
            if !name.is_empty() && !seen.contains(&name) {
                seen.push(name);
                let members = (0..xs.len())
                    .filter(|i| in_unit[*i] && &kinds[*i] == name)
                    .collect();
                groups.push((Some(name.clone()), members));
            }
        }
        let ids: Vec<&str> = cmp.sources.iter().map(|r| r.id.as_str()).collect();
        for (kind, members) in groups {
            let ys: Vec<(usize, f64, f64)> = members
                .iter()
                .filter_map(|i| xs[*i].map(|(x, t)| (*i, x - shift_of[*i], t)))
                .collect();
            let Some((m, moved, of)) = shift(&votes(&ys, &ids)) else {
                continue;
            };
            for i in members.iter().filter(|i| in_unit[**i]) {
                shift_of[*i] += m;
            }
            cmp.shifts.push(describe(cmp, k, col, kind, m, moved, of));
        }
        let named: Vec<bool> = shift_of.iter().map(|m| *m != 0.0).collect();
        for (i, r) in cmp.sources.iter_mut().enumerate() {
            let noise_pct = prior::effective(measured[i], prior::prior_pct(&r.id));
            r.noise_pct.push(Some(noise_pct));
            r.measured_noise_pct.push(measured[i].map(|m| m.0));
            let Some(ri) = r.ratio_interval.get(col).copied().flatten() else {
                r.judged_interval.push(None);
                r.with_machine.push(false);
                continue;
            };
            let within_run = Change::of_interval(&ri);
            let judged = adjust(&ri, shift_of[i], Some(noise_pct));
            // A shift only takes a change away: the source must have moved in that direction
            // beyond the noise on its own ratio too (a source that stood still while the
            // machine moved is not called a change).
            let unshifted = Change::of_interval(&adjust(&ri, 0.0, Some(noise_pct)));
            let change = match Change::of_interval(&judged) {
                c if c == unshifted => c,
                _ => Change::NoChange,
            };
            if let Some(c) = r.change.get_mut(col) {
                *c = Some(change);
            }
            r.with_machine.push(
                (named[i] || noise_pct > 0.0)
                    && within_run != Change::NoChange
                    && change == Change::NoChange,
            );
            r.judged_interval.push(Some(judged));
        }
    }
}

/// The named shift of column `col` (input `k`): of every source (`kind` `None`) or of one kind.
fn describe(
    cmp: &Comparison,
    k: usize,
    col: usize,
    kind: Option<String>,
    m: f64,
    moved: usize,
    of: usize,
) -> Shift {
    let ghz = cmp
        .columns
        .first()
        .and_then(|c| c.core_ghz)
        .zip(cmp.columns[k].core_ghz);
    let cycles = (cmp.unit == super::Unit::Ns && kind.is_none())
        .then(|| cycles_shift(cmp, col))
        .flatten();
    let pct = 100.0 * (m.exp() - 1.0);
    let what = kind
        .as_deref()
        .map_or_else(|| "sources".to_string(), |k| format!("{k} sources"));
    let mut summary = format!(
        "{}: {moved} of {of} {what} moved together by {pct:+.2}%{}; each is judged against that",
        cmp.columns[k].label,
        if kind.is_some() {
            " beyond the machine's shift"
        } else {
            " (the machine, not each source)"
        }
    );
    if let (None, Some((a, b))) = (&kind, ghz) {
        summary += &format!("; the core clock read {a:.3} → {b:.3} GHz");
    }
    if let Some(c) = cycles {
        summary += &format!(" (in core cycles they moved {c:+.2}%)");
    }
    Shift {
        label: cmp.columns[k].label.clone(),
        kind,
        percent: pct,
        moved,
        of,
        core_ghz: ghz,
        cycles_percent: cycles,
        summary,
    }
}

/// The median log ratio in core cycles of column `col` (percent), where sources carry cycles.
fn cycles_shift(cmp: &Comparison, col: usize) -> Option<f64> {
    let logs: Vec<f64> = cmp
        .sources
        .iter()
        .filter_map(|r| {
            let a = r.cost_cycles.first().copied().flatten()?;
            let b = r.cost_cycles.get(col + 1).copied().flatten()?;
            (a.point > 0.0 && b.point > 0.0).then(|| (b.point / a.point).ln())
        })
        .collect();
    (logs.len() >= 3).then(|| crate::stats::median(&logs).map(|m| 100.0 * (m.exp() - 1.0)))?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shift_needs_two_thirds_of_the_sources_together() {
        let together = [
            (0.027, 0.005),
            (0.026, 0.005),
            (0.028, 0.005),
            (0.10, 0.005),
        ];
        let (m, moved, of) = shift(&together).unwrap();
        assert!((m - 0.0275).abs() < 1e-9 && moved == 3 && of == 4, "{m}");
        let apart = [(0.0, 0.005), (0.03, 0.005), (-0.03, 0.005), (0.06, 0.005)];
        assert!(shift(&apart).is_none());
        assert!(shift(&[(0.1, 0.01), (0.1, 0.01)]).is_none());
        // Every read trapped (×600) is not the machine's pace.
        assert!(shift(&[(6.4, 0.01), (6.4, 0.01), (6.4, 0.01)]).is_none());
    }

    #[test]
    fn the_noise_widens_and_the_shift_recentres() {
        // +2.7% within ±0.1%: slower within the run; the machine moved +2.7%: no change.
        let r = Estimate::new(1.027, 1.026, 1.028);
        assert_eq!(Change::of_interval(&r), Change::Slower);
        let a = adjust(&r, 1.027f64.ln(), None);
        assert!((a.point - 1.0).abs() < 1e-12);
        assert_eq!(Change::of_interval(&a), Change::NoChange);
        // +3% against 1% noise between runs: still slower; against 5%: no change.
        let r = Estimate::new(1.03, 1.029, 1.031);
        assert_eq!(
            Change::of_interval(&adjust(&r, 0.0, Some(1.0))),
            Change::Slower
        );
        assert_eq!(
            Change::of_interval(&adjust(&r, 0.0, Some(5.0))),
            Change::NoChange
        );
        // A trapped read (×600) stays slower through any noise and shift.
        let t = Estimate::new(600.0, 590.0, 610.0);
        assert_eq!(
            Change::of_interval(&adjust(&t, 0.03, Some(10.0))),
            Change::Slower
        );
    }
}
