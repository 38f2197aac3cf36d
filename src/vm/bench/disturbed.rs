//! Boots in which one workload ran far off the other boots' pace, its control did not.
//!
//! Under TCG a whole boot can run 10–30% slower than the next boot of the same kernel; the null
//! syscall timed before each loop moves with it, and the rows compare within a boot or through
//! that control. A boot in which one workload runs at several times the other boots' ns per op
//! while its control keeps pace is something else: a disturbance of that workload in that boot
//! (seen under TCG: pipe1 at 4–16 µs per op in one boot of four, alternating round to round,
//! against 1.8 µs in the others). The boot stays in the rows (it is measured, and dropping it
//! would choose the answer), but the output names it, so that a wide interval has its reason
//! beside it.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::rows::{median_of, Obs};
use super::BenchKernel;
use crate::trace::FsKind;
use crate::vm::boot::clock::Clocksource;
use crate::workload::WorkloadName;

/// A boot is disturbed when its median ns per op, over its control's change, is this many
/// times the other boots' (or this many times less): beyond the 10–30% a whole boot moves.
pub(crate) const DISTURBED_RATIO: f64 = 1.5;

/// One workload in one boot that ran off the other boots' pace.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DisturbedBoot {
    pub kernel_release: String,
    /// 1-based, per kernel.
    pub boot: u32,
    /// The `clocksource=` the boot started on.
    pub boot_clocksource: Clocksource,
    /// The clocksource the slots ran on.
    pub clocksource: Clocksource,
    pub fs: FsKind,
    pub workload: WorkloadName,
    /// The boot's median ns per op.
    pub ns_per_op: f64,
    /// The median of the other boots' medians.
    pub others_ns_per_op: f64,
    /// The boot's median control (null syscall) over the other boots'.
    pub control_ratio: f64,
    /// `ns_per_op / others_ns_per_op / control_ratio`.
    pub ratio: f64,
}

/// The disturbed boots among `obs` (one kernel, clocksource, file system and workload); needs
/// three boots, so that "the others" are more than one.
pub(super) fn find(
    k: &BenchKernel,
    release: &str,
    cs: Clocksource,
    fs: FsKind,
    workload: WorkloadName,
    obs: &[Obs],
) -> Vec<DisturbedBoot> {
    let boots: Vec<u32> = obs
        .iter()
        .map(|o| o.boot)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    if boots.len() < 3 {
        return Vec::new();
    }
    let of = |b: u32| -> Vec<Obs> { obs.iter().filter(|o| o.boot == b).cloned().collect() };
    let medians: Vec<(f64, f64)> = boots
        .iter()
        .map(|&b| {
            let o = of(b);
            (
                median_of(&o, |o| o.ns_per_op),
                median_of(&o, |o| o.control_ns),
            )
        })
        .collect();
    let mut out = Vec::new();
    for (i, &b) in boots.iter().enumerate() {
        let others: Vec<(f64, f64)> = medians
            .iter()
            .enumerate()
            .filter(|&(j, _)| j != i)
            .map(|(_, &m)| m)
            .collect();
        let med = |f: fn(&(f64, f64)) -> f64| {
            let v: Vec<f64> = others.iter().map(f).filter(|x| x.is_finite()).collect();
            crate::stats::median(&v)
        };
        let (Some(ns_others), (ns, ctl)) = (med(|m| m.0), medians[i]) else {
            continue;
        };
        let control_ratio = match med(|m| m.1) {
            Some(c) if c > 0.0 && ctl.is_finite() && ctl > 0.0 => ctl / c,
            _ => 1.0,
        };
        let ratio = ns / ns_others / control_ratio;
        // Every observation's boot is one of `k`'s.
        let Some(boot) = k.boots.iter().find(|x| x.index == b) else {
            continue;
        };
        if ratio.is_finite() && !(1.0 / DISTURBED_RATIO..=DISTURBED_RATIO).contains(&ratio) {
            out.push(DisturbedBoot {
                kernel_release: release.to_string(),
                boot: b + 1,
                boot_clocksource: boot.boot_clocksource,
                clocksource: cs,
                fs,
                workload,
                ns_per_op: ns,
                others_ns_per_op: ns_others,
                control_ratio,
                ratio,
            });
        }
    }
    out
}

impl DisturbedBoot {
    /// One line for the notes under the tables.
    pub(crate) fn note(&self, boots: usize) -> String {
        format!(
            "disturbed boot: {} boot {} of {boots} (started on {}): {}/{} on {} ran {} ns/op, \
             {:.1}× the other boots' median {} ns/op while its null syscall moved ×{:.2}; the \
             rows keep the boot, and their intervals carry it",
            self.kernel_release,
            self.boot,
            self.boot_clocksource,
            self.fs,
            self.workload,
            self.clocksource,
            crate::fmt::ns(self.ns_per_op),
            self.ns_per_op / self.others_ns_per_op,
            crate::fmt::ns(self.others_ns_per_op),
            self.control_ratio
        )
    }
}
