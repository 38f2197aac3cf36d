//! The kernel A/B in the 0-day test robot's (LKP's) layout: LKP's rule on the boots of each
//! kernel beside the row's own word, through the same rule `compare --lkp` applies
//! ([`crate::compare::lkp::judge`]).
//!
//! LKP's run is a boot: each boot's median ns per op is one sample (the boot is the unit of
//! replication, as for the row's own interval; [`super::compare`]). Those are raw ns per op,
//! as LKP's mails show a benchmark's own metric. The row's word is the controlled change's:
//! `slower` when its interval (each loop divided by the null syscall timed before it) lies
//! above 0, `faster` below, `no change` when it holds 0. Where the two differ, the note says
//! why: LKP reads the raw boots, the row reads them divided by the control.

use super::compare::{boot_medians, holds};
use super::rows::{by_boot, observations, release, BenchComparison};
use super::{BenchKernel, BenchReport, ComparisonKind};
use crate::compare::lkp::{judge, Metric};
use crate::compare::Change;
use crate::trace::FsKind;
use crate::vm::boot::clock::Clocksource;
use crate::workload::WorkloadName;

/// LKP's samples of one side of a kernel row: each boot's median ns per op of `k` on
/// clocksource `cs`, file system `fs` and `workload`.
pub(crate) fn samples(
    k: &BenchKernel,
    cs: Clocksource,
    fs: FsKind,
    workload: WorkloadName,
) -> Vec<f64> {
    let obs = observations(k, cs, fs, workload);
    boot_medians(&by_boot(&obs, |o| Some(o.ns_per_op)))
}

/// The row's own word: more ns per op is slower; `None` without a controlled change.
pub(crate) fn word(c: &BenchComparison) -> Option<Change> {
    let p = c.percent_change?;
    Some(match c.significant {
        Some(true) if p.point > 0.0 => Change::Slower,
        Some(true) => Change::Faster,
        _ => Change::NoChange,
    })
}

/// Why the row has its word, in words, for LKP's note.
fn reason(c: &BenchComparison, control: &str) -> String {
    match c.percent_change {
        Some(p) => format!(
            "the change divided by the {control} timed before each loop, {:+.1}%, has a 95% \
             interval [{:+.1}%, {:+.1}%] that {} 0",
            p.point,
            p.lower,
            p.upper,
            if holds(&p, 0.0) { "holds" } else { "excludes" }
        ),
        None => "no controlled change".into(),
    }
}

/// Fills `lkp` on every kernel row that lacks it, from the kernels' boots.
pub(crate) fn apply(r: &mut BenchReport) {
    let BenchReport {
        kernels,
        comparisons,
        kernel_control,
        ..
    } = r;
    let find = |rel: &str| kernels.iter().find(|k| release(k) == rel);
    for c in comparisons
        .iter_mut()
        .filter(|c| c.kind == ComparisonKind::Kernel && c.lkp.is_none())
    {
        let (Some(a), Some(b), Some(cs)) = (find(&c.from), find(&c.to), c.clocksource) else {
            continue;
        };
        let base = samples(a, cs, c.fs, c.workload);
        let new = samples(b, cs, c.fs, c.workload);
        let tscope = word(c);
        c.lkp = judge(&base, &new, Metric::Performance, tscope, || {
            reason(c, kernel_control)
        });
    }
}
