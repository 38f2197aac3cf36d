//! `compare --lkp`: the 0-day test robot's (LKP's) decision beside tscope's, per source.
//!
//! LKP decides on repeated runs ([`rule`]). A source's samples are its runs' points where the
//! profile carries them (`between_runs.points_ns`, from `probe --repeat N`), else the profile's
//! one point: a plain probe is one run, so the rule cannot decide and says so rather than
//! inventing samples from the rounds of one run (they share one process and one placement of
//! the code, which is what runs differ by). Every source is a cost in ns, a performance metric.
//! Where the two decisions differ, a note says why, from each side's own evidence. `vm bench`'s
//! kernel A/B takes the same rule through [`judge`].

pub mod rule;

pub use rule::{decide, Decision, Metric, Side};

use serde::{Deserialize, Serialize};

use super::{Change, Comparison, Input, SourceRow};
use crate::probe::Profile;

/// LKP's decision on one source, against one later input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LkpRow {
    /// The first input's samples, trimmed and summarised.
    pub base: Side,
    /// This input's.
    pub new: Side,
    /// `new.mean / base.mean − 1`, in percent (LKP's `%change`); `None` unless both are positive.
    pub change_pct: Option<f64>,
    /// The larger mean over the smaller: what the threshold tests.
    pub ratio: Option<f64>,
    pub decision: Decision,
    /// LKP's decision and `change` say the same: increase and slower, decrease and faster, or
    /// no change on both.
    pub agrees: bool,
    /// Why the two differ, or why LKP cannot decide; absent where they agree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The samples LKP's rule takes for source `id` of `p`: each run's point (`probe --repeat`),
/// else the profile's one point; empty where the profile does not price the source.
pub fn samples(p: &Profile, id: &str) -> Vec<f64> {
    let Some(s) = p.source(id) else {
        return Vec::new();
    };
    match &s.between_runs {
        Some(b) if !b.points_ns.is_empty() => b.points_ns.clone(),
        _ => s.cost_ns.map(|e| vec![e.point]).unwrap_or_default(),
    }
}

/// Fills each source's `lkp` (one entry per input after the first) of `cmp`, built from
/// `inputs`, after the noise and the shift are applied: tscope's word is then final.
pub fn apply(cmp: &mut Comparison, inputs: &[Input]) {
    let Some(first) = inputs.first() else {
        return;
    };
    for r in &mut cmp.sources {
        let base = samples(&first.profile, &r.id);
        r.lkp = inputs
            .iter()
            .skip(1)
            .enumerate()
            .map(|(col, other)| row(r, col, &base, &samples(&other.profile, &r.id)))
            .collect();
    }
}

/// One source's LKP row against column `col` (input `col + 1`).
fn row(r: &SourceRow, col: usize, base: &[f64], new: &[f64]) -> Option<LkpRow> {
    let change = r.change.get(col).copied().flatten();
    judge(base, new, Metric::Performance, change, || {
        tscope_reason(r, col)
    })
}

/// LKP's rule on `base` and `new` samples of a `metric`, set beside tscope's word `tscope`
/// on the same change; `why` gives tscope's reason in words, asked for only where the two
/// differ. `None` where a side has no sample. `compare --lkp` and `vm bench`'s kernel A/B
/// both go through it.
pub fn judge(
    base: &[f64],
    new: &[f64],
    metric: Metric,
    tscope: Option<Change>,
    why: impl FnOnce() -> String,
) -> Option<LkpRow> {
    let o = decide(base, new, metric);
    let agrees = matches!(
        (o.decision, tscope),
        (Decision::Increase, Some(Change::Slower))
            | (Decision::Decrease, Some(Change::Faster))
            | (
                Decision::RangesOverlap | Decision::WithinThreshold,
                Some(Change::NoChange)
            )
    );
    let note = (!agrees).then(|| match o.decision {
        Decision::TooFewSamples => format!("LKP: {}", o.decision.reason(o.ratio, metric)),
        d => format!("LKP: {}; tscope: {}", d.reason(o.ratio, metric), why()),
    });
    Some(LkpRow {
        base: o.base?,
        new: o.new?,
        change_pct: o.change_pct,
        ratio: o.ratio,
        decision: o.decision,
        agrees,
        note,
    })
}

/// Why tscope gave `r` its word against column `col`, in words.
fn tscope_reason(r: &SourceRow, col: usize) -> String {
    let at = |v: &[Option<crate::stats::Estimate>]| v.get(col).copied().flatten();
    let (judged, within) = (at(&r.judged_interval), at(&r.ratio_interval));
    let noise = r.noise_pct.get(col).copied().flatten().is_some();
    let with_machine = r.with_machine.get(col).copied().unwrap_or(false);
    let shifted = judged
        .zip(within)
        .is_some_and(|(j, i)| (j.point - i.point).abs() > 1e-12 * i.point.abs());
    let interval = judged.or(within);
    let which = match (shifted, noise) {
        (true, true) => {
            "the interval of the ratio, net of the machine's shift and widened by \
                         the noise between runs,"
        }
        (true, false) => "the interval of the ratio, net of the machine's shift,",
        (false, true) => "the interval of the ratio, widened by the noise between runs,",
        (false, false) => "the interval of the ratio",
    };
    let bounds = |e: crate::stats::Estimate| format!("[{:.3}, {:.3}]", e.lower, e.upper);
    let which = if r.judged_unit.get(col) == Some(&super::Unit::Cycles) {
        which.replacen("the ratio", "the ratio in core cycles", 1)
    } else {
        which.to_string()
    };
    match (r.change.get(col).copied().flatten(), interval) {
        (None, _) => "no ratio (a cost is missing)".into(),
        (Some(Change::NoChange), None) => "the ratio is unbounded (an interval reaches 0)".into(),
        (Some(Change::NoChange), Some(_)) if with_machine && shifted => {
            "the source moved with the machine's shift".into()
        }
        (Some(Change::NoChange), Some(e)) => format!("{which} {} holds 1", bounds(e)),
        (Some(_), Some(e)) => format!("{which} {} excludes 1", bounds(e)),
        (Some(_), None) => "the interval of the ratio excludes 1".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Estimate;

    fn source_row(change: Change, interval: Estimate, noise: Option<f64>) -> SourceRow {
        SourceRow {
            id: "vdso:realtime".into(),
            cost_ns: vec![],
            cost_cycles: vec![],
            judged_unit: vec![],
            ns_ratio_interval: vec![],
            ratio_to_first: vec![Some(interval.point)],
            ratio_plus_minus: vec![None],
            change: vec![Some(change)],
            ratio_interval: vec![Some(interval)],
            noise_pct: vec![noise],
            measured_noise_pct: vec![noise],
            path_word: vec![false],
            judged_interval: vec![Some(super::super::noise::adjust(&interval, 0.0, noise))],
            with_machine: vec![false],
            lkp: vec![],
        }
    }

    #[test]
    fn agreeing_decisions_carry_no_note() {
        let r = source_row(Change::Slower, Estimate::new(1.15, 1.14, 1.16), Some(1.0));
        let l = row(&r, 0, &[28.0, 28.1, 28.2], &[32.1, 32.2, 32.3]).unwrap();
        assert_eq!(l.decision, Decision::Increase);
        assert!(l.agrees && l.note.is_none(), "{l:?}");
    }

    #[test]
    fn differing_decisions_say_why_on_both_sides() {
        // tscope calls +3% slower within a tight interval; the runs overlap.
        let r = source_row(Change::Slower, Estimate::new(1.03, 1.02, 1.04), None);
        let l = row(&r, 0, &[10.0, 11.0, 12.0], &[10.5, 13.0, 14.0]).unwrap();
        assert!(!l.agrees);
        let note = l.note.unwrap();
        assert_eq!(
            note,
            "LKP: the sample ranges overlap; tscope: the interval of the ratio [1.020, 1.040] \
             excludes 1"
        );
        // The runs lie apart by 15%, but the noise widens tscope's interval over 1.
        let r = source_row(Change::NoChange, Estimate::new(1.15, 1.1, 1.2), Some(30.0));
        let l = row(&r, 0, &[28.0, 28.1, 28.2], &[32.1, 32.2, 32.3]).unwrap();
        let note = l.note.unwrap();
        assert!(note.starts_with("LKP: the sample ranges lie apart and the ratio 1.146 is over 1.01; tscope: the interval of the ratio, widened by the noise between runs,"), "{note}");
        assert!(note.ends_with("holds 1"), "{note}");
    }

    #[test]
    fn one_run_each_says_lkp_needs_repeated_runs() {
        let r = source_row(Change::Slower, Estimate::new(1.15, 1.14, 1.16), None);
        let l = row(&r, 0, &[28.1], &[32.2]).unwrap();
        assert_eq!(l.decision, Decision::TooFewSamples);
        assert!(!l.agrees);
        assert!(l.note.unwrap().contains("needs repeated runs"));
        // A source one side does not price has no row.
        assert!(row(&r, 0, &[], &[32.2]).is_none());
    }
}
