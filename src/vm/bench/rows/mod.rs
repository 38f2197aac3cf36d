//! From the boots' slots to what `vm bench` reports: one run per kernel × clocksource × file
//! system × workload (ns per op over boots and rounds), and the comparisons.
//!
//! - **clocksource** rows: within each round of each boot, the workload's ns per op on `to`
//!   less that on `from` (one pair per round: the boot's speed cancels), against the
//!   kernel's model reads per op × the change of the costs measured in the same rounds.
//! - **kernel** rows: every kernel against the first, per file system, workload and
//!   clocksource. Boots of two kernels cannot be paired, so each loop's ns per op is divided by
//!   the null syscall timed right before it ([`KERNEL_CONTROL`]), which moves with the boot's
//!   speed; the raw change is reported beside it.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::compare::{self, ComparisonKind, Verdict};
use super::guest::Slot;
use super::predict::ModelReads;
use super::readtime::ReadPath;
use super::BenchKernel;
use crate::stats::{self, Estimate};
use crate::trace::FsKind;
use crate::vm::boot::clock::{Clocksource, ClocksourceName};
use crate::workload::WorkloadName;

/// The control of kernel rows.
mod clocksource;
pub(super) use self::clocksource::clocksource_row;

pub(crate) const KERNEL_CONTROL: &str = "syscall:getppid";

/// The median costs measured in a run's slots, ns.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct RunCosts {
    pub precise_read_ns: f64,
    /// The precise read measured after a file write ([`crate::vm::bench::guest::SlotCosts`]).
    #[serde(default)]
    pub precise_read_in_write_ns: Option<f64>,
    pub coarse_read_ns: f64,
    pub syscall_ns: f64,
    /// The user-space spin (the emulator's speed).
    pub spin_ns: f64,
}

/// One kernel × clocksource × file system × workload.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BenchRun {
    pub kernel_release: String,
    pub kernel_package: String,
    pub clocksource_requested: Clocksource,
    /// What the guest read back after switching; differs from the request when the kernel
    /// refused it (then `ns_per_op` is `null` and `refused` says why).
    pub clocksource_used: ClocksourceName,
    pub fs: FsKind,
    pub workload: WorkloadName,
    /// The mean of the boots' medians with its Student-t interval over the boots (one boot:
    /// the rounds' median and their bootstrap interval; `interval_method` says which); `null`
    /// when no slot ran on the requested clocksource.
    pub ns_per_op: Option<Estimate>,
    /// `boots_t` or `rounds_bootstrap` ([`compare::IntervalMethod`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_method: Option<compare::IntervalMethod>,
    /// Slots behind it (boots × rounds).
    pub samples: usize,
    pub boots: usize,
    pub costs: RunCosts,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
}

/// One comparison row.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BenchComparison {
    pub kind: ComparisonKind,
    /// The kernel of a clocksource row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_release: Option<String>,
    /// The two kernels of a kernel row, from first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernels: Option<Vec<String>>,
    /// The clocksource of a kernel row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clocksource: Option<Clocksource>,
    pub fs: FsKind,
    pub workload: WorkloadName,
    /// Clocksources (clocksource rows) or kernel releases (kernel rows): one column of two
    /// kinds, so written as the words, as `kind` says which.
    pub from: String,
    pub to: String,
    /// ns per op of `to` less `from`: paired within rounds (clocksource rows), or the
    /// controlled relative change × `from`'s ns per op (kernel rows).
    pub measured_delta_ns: Estimate,
    /// How `measured_delta_ns` was formed: `boots_t` (Student's t over the boots' medians;
    /// Welch's t on their logs for kernel rows) or `rounds_bootstrap` (one boot).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_method: Option<compare::IntervalMethod>,
    /// The model's change; `null` where no model applies.
    pub predicted_delta_ns: Option<f64>,
    /// The prediction's range from the intervals of the measured cost changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted_range_ns: Option<Estimate>,
    /// Kernel rows: the controlled change in %, with its interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percent_change: Option<Estimate>,
    /// Kernel rows: the change in % without the control.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_percent_change: Option<Estimate>,
    /// Kernel rows: whether the controlled change's interval excludes 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub significant: Option<bool>,
    /// The model's reads per op (clocksource rows: the kernel's; kernel rows: `from`'s).
    pub model_from: Option<ModelReads>,
    /// Kernel rows: `to`'s model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_to: Option<ModelReads>,
    /// Kernel rows: the update price in the prediction (ns, from the kernel named in
    /// `update_priced_on`), and its part of the prediction; absent where no guest priced one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_price_ns: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_priced_on: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted_update_delta_ns: Option<f64>,
    /// Clocksource rows: the change of the guest-measured precise and coarse read costs
    /// (paired within rounds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta_precise_read_ns: Option<Estimate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta_coarse_read_ns: Option<Estimate>,
    /// Clocksource rows: the change of the precise read measured after a file write, and the
    /// model's reads × it (the prediction with that cost instead).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta_precise_read_in_write_ns: Option<Estimate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted_in_write_delta_ns: Option<f64>,
    /// Clocksource rows: every clocksource read per op as the kernel counted it (a kprobe on
    /// each clocksource's read callback, [`crate::vm::bench::reads`]), on `from` and on `to`;
    /// absent when not counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counted_reads_from: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counted_reads_to: Option<f64>,
    /// The counted reads on `to` × the change of the precise read's cost: what the change
    /// would be if every read the kernel really takes cost what the syscall-derived read costs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counted_predicted_delta_ns: Option<f64>,
    /// Clocksource rows: the change of one read's cost timed by the kernel's tracer where the
    /// op takes it ([`crate::vm::bench::readtime`]), and the same timed inside the clock
    /// syscall.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta_read_in_path_ns: Option<Estimate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta_read_in_syscall_ns: Option<Estimate>,
    /// Clocksource rows: the price of a precise read in `predicted_delta_ns`: `in-path` (the
    /// syscall-derived change + the traced change in the op's path − the traced change in the
    /// syscall) or `syscall` (the syscall-derived change alone, where the tracer timed no read
    /// in the op), and its value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precise_read_price: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta_precise_read_price_ns: Option<Estimate>,
    /// Clocksource rows: the prediction at the syscall-derived price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted_syscall_delta_ns: Option<f64>,
    /// `--count`: timestamp calls per op counted by `vm count`'s kprobe pass, of the row's
    /// kernel (clocksource rows) or of `from` and `to` (kernel rows); absent without `--count`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counted_from: Option<super::counted::Counted>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counted_to: Option<super::counted::Counted>,
    /// Clocksource rows: the paired change of the user-space spin's ns per call (no kernel in
    /// it), and that change as a share of the spin on `from`: what the clocksource costs all
    /// execution in the slot (the timer tick's reads and what the emulator does around them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta_spin_ns: Option<Estimate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spin_tax: Option<Estimate>,
    /// Clocksource rows that disagree: where the difference comes from, from the counted reads
    /// ([`crate::vm::bench::diagnosis::diagnosis`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnosis: Option<String>,
    /// Clocksource rows whose model predicts no change: the test of practical equivalence
    /// ([`compare::equivalence`]); a row shown equivalent to 0 agrees.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equivalence: Option<compare::Equivalence>,
    /// Kernel rows: the 0-day test robot's (LKP's) decision on the boots' medians of ns per
    /// op beside the row's own word ([`crate::vm::bench::lkp`]); absent on clocksource rows
    /// and in files written before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lkp: Option<crate::compare::lkp::LkpRow>,
    /// Pairs (clocksource rows) or slots of each side (kernel rows: the smaller).
    pub pairs: usize,
    /// Half the measured interval's width, ns.
    pub noise_ns: f64,
    pub verdict: Verdict,
}

/// One slot's measurement of one workload.
#[derive(Clone)]
pub(super) struct Obs<'a> {
    pub(super) boot: u32,
    pub(super) slot: &'a Slot,
    pub(super) ns_per_op: f64,
    /// The null syscall timed right before the loop (else the slot's).
    pub(super) control_ns: f64,
}

pub(super) fn release(k: &BenchKernel) -> String {
    k.kernel_release
        .clone()
        .unwrap_or_else(|| k.kernel_package.clone())
}

/// Every slot of kernel `k` that ran on `cs` and timed `fs`/`workload`.
pub(super) fn observations(
    k: &BenchKernel,
    cs: Clocksource,
    fs: FsKind,
    workload: WorkloadName,
) -> Vec<Obs<'_>> {
    let mut out = Vec::new();
    for b in &k.boots {
        for s in &b.slots {
            if s.clocksource_requested != cs || s.switch_error.is_some() {
                continue;
            }
            for r in &s.runs {
                if r.fs == fs && r.workload == workload && r.ns_per_op.is_finite() {
                    out.push(Obs {
                        boot: b.index,
                        slot: s,
                        ns_per_op: r.ns_per_op,
                        control_ns: r
                            .control_ns
                            .or(s.costs.map(|c| c.syscall_ns))
                            .unwrap_or(f64::NAN),
                    });
                }
            }
        }
    }
    out
}

pub(super) fn median_of(obs: &[Obs], f: impl Fn(&Obs) -> f64) -> f64 {
    let v: Vec<f64> = obs.iter().map(f).filter(|x| x.is_finite()).collect();
    stats::median(&v).unwrap_or(f64::NAN)
}

pub(super) fn costs(obs: &[Obs]) -> RunCosts {
    let c = |f: fn(&super::guest::SlotCosts) -> f64| {
        median_of(obs, |o| o.slot.costs.as_ref().map_or(f64::NAN, f))
    };
    RunCosts {
        precise_read_ns: c(|c| c.precise_read_ns),
        precise_read_in_write_ns: Some(c(|c| c.precise_read_in_write_ns.unwrap_or(f64::NAN)))
            .filter(|v| v.is_finite()),
        coarse_read_ns: c(|c| c.coarse_read_ns),
        syscall_ns: c(|c| c.syscall_ns),
        spin_ns: c(|c| c.spin_ns),
    }
}

/// Why kernel `k` ran no slot on `cs`: what it kept instead.
pub(super) fn refusal(k: &BenchKernel, cs: Clocksource) -> Option<(ClocksourceName, String)> {
    k.boots
        .iter()
        .flat_map(|b| &b.slots)
        .find(|s| s.clocksource_requested == cs && s.switch_error.is_some())
        .map(|s| {
            (
                s.clocksource_used.clone(),
                s.switch_error.clone().unwrap_or_default(),
            )
        })
}

/// A seed per row, from the run's.
pub(super) fn row_seed(seed: u64, n: usize) -> u64 {
    seed ^ (n as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// The pairs (from, to) of `value` taken in the same round of the same boot.
pub(super) fn pairs_by_round(
    from: &[Obs],
    to: &[Obs],
    value: impl Fn(&Obs) -> f64,
) -> Vec<Vec<(f64, f64)>> {
    by_boot(from, |a| {
        let b = to
            .iter()
            .find(|b| b.boot == a.boot && b.slot.round == a.slot.round)?;
        let (x, y) = (value(a), value(b));
        (x.is_finite() && y.is_finite()).then_some((x, y))
    })
}

/// `f` of each observation, grouped by boot (in boot order; observations `f` drops are left
/// out).
pub(super) fn by_boot<T>(obs: &[Obs], f: impl Fn(&Obs) -> Option<T>) -> Vec<Vec<T>> {
    let boots: BTreeSet<u32> = obs.iter().map(|o| o.boot).collect();
    boots
        .into_iter()
        .map(|b| obs.iter().filter(|o| o.boot == b).filter_map(&f).collect())
        .collect()
}

pub(super) fn cost_of(o: &Obs, f: fn(&super::guest::SlotCosts) -> f64) -> f64 {
    o.slot.costs.as_ref().map_or(f64::NAN, f)
}

/// The change of one read's traced cost from `from` to `to` in one context (the first boot
/// that timed both).
pub(super) fn read_time_delta(
    k: &BenchKernel,
    from: Clocksource,
    to: Clocksource,
    fs: Option<FsKind>,
    workload: ReadPath,
) -> Option<Estimate> {
    let find = |cs: Clocksource, r: &super::reads::GuestReads| {
        r.times
            .iter()
            .find(|t| {
                t.clocksource == cs
                    && t.fs == fs
                    && t.workload == workload
                    && t.reads >= super::readtime::MIN_CALLS
            })
            .cloned()
    };
    k.boots
        .iter()
        .filter_map(|b| b.reads.as_ref())
        .find_map(|r| Some(super::readtime::delta(&find(from, r)?, &find(to, r)?)))
}

/// The median over kernel `k`'s boots of the clocksource reads per op counted on `cs`.
pub(super) fn counted_reads(
    k: &BenchKernel,
    cs: Clocksource,
    fs: FsKind,
    workload: WorkloadName,
) -> Option<f64> {
    let v: Vec<f64> = k
        .boots
        .iter()
        .filter_map(|b| b.reads.as_ref())
        .flat_map(|r| &r.counts)
        .filter(|c| c.clocksource == cs && c.fs == fs && c.workload == workload)
        .map(|c| c.reads_per_op)
        .collect();
    stats::median(&v)
}
