//! From what a guest counted to the comparison rows of `vm count`: per op = (hits − baseline)
//! / N for every timestamp function and every syscall, beside what the Linux model for that
//! kernel predicts ([`model_per_op`]) and what the workload's definition issues.

use serde::{Deserialize, Serialize};

use super::guest::{GuestCount, WorkloadCount};
use super::kprobe;
use crate::error::Result;
use crate::kernel::ModelId;
use crate::sim::estimate::{self, PolicyEstimate};
use crate::sim::Costs;
use crate::trace::FsKind;
use crate::workload::{def, WorkloadName};

/// The fine clock-read leaves: each reads the clocksource once.
mod per_run;
pub(crate) use per_run::rows;

const FINE_LEAVES: [&str; 2] = ["ktime_get_real_ts64", "ktime_get_real_ts64_mg"];

/// A row differs when |kernel − model| exceeds this per op …
pub(crate) const TOLERANCE: f64 = 0.05;
/// … or this where the kernel's own count is fractional (coarse-clock counts that depend on
/// the tick moving inside an op vary run to run).
pub(crate) const TOLERANCE_FRACTIONAL: f64 = 0.25;

/// One kernel × file system × workload × function (or syscall).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CountRow {
    pub kernel_release: String,
    pub kernel_package: String,
    pub fs: FsKind,
    pub workload: WorkloadName,
    /// A kernel function (`ktime_get_coarse_real_ts64`) or `syscall:NAME`.
    pub function: String,
    pub kind: RowKind,
    /// Hits per op less the zero-iteration baseline; `null` when the kernel lacks the function.
    pub kernel_per_op: Option<f64>,
    /// What the expected count comes from: a model name (`linux`, `linux-multigrain`) or
    /// `workload` (the syscalls its definition issues).
    pub model: String,
    /// `null` where the model names no such function (context rows).
    pub model_per_op: Option<f64>,
    pub guest_ns_per_op: f64,
    /// The guest's timing pass: mean ns of each op of the loop, in the scenario's order, over
    /// which the model spreads `guest_ns_per_op`; empty when not timed (pingpong: evenly).
    #[serde(default)]
    pub guest_ns_by_syscall: Vec<SyscallTime>,
    /// kernel − model, when both exist.
    pub difference: Option<f64>,
    /// The tolerance this row is held to.
    pub tolerance: f64,
    /// Whether the row is within its tolerance (`null`: nothing to compare).
    pub agrees: Option<bool>,
    /// The symbols probed for the function (`inode_needs_update_time.part.0`).
    pub symbols: Vec<String>,
}

/// One op of a workload's loop and its mean time in the guest's timing pass.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SyscallTime {
    /// The scenario's name of the op (`create`, `stat`, `open_trunc`, `mmap_store`, …).
    pub syscall: String,
    pub ns: f64,
    /// How often the coarse clock moved during this op, per iteration (`null`: not counted).
    #[serde(default)]
    pub tick_moves_per_op: Option<f64>,
    /// Where this op's first clock read falls in its syscall, a fraction of the syscall's
    /// enter→exit span from the guest's traced pass ([`crate::vm::count::offsets`]). `null`: no
    /// syscall, no read, or not traced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stamp_offset: Option<f64>,
    /// Where each of the op's timestamps is taken, in order: the mean fraction of its
    /// syscall's k-th coarse clock read. The model takes its k-th stamp of the op there (the
    /// last for any further; `stamp_offset` when the op reads only fine clocks; the op's start
    /// when both are absent).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stamp_offsets: Vec<f64>,
    /// Clock reads per iteration inside the op's syscall in the traced pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stamp_reads: Option<f64>,
}

impl SyscallTime {
    /// Where the model takes this op's successive timestamps (fractions of its time):
    /// `stamp_offsets`, else `stamp_offset` for all, else none (the op's start).
    pub(crate) fn stamps_at(&self) -> Vec<f64> {
        if self.stamp_offsets.is_empty() {
            self.stamp_offset.into_iter().collect()
        } else {
            self.stamp_offsets.clone()
        }
    }
}

/// The timing pass of `run`, named by op; empty when it has none or its length is not the
/// loop's.
pub(crate) fn ns_by_syscall(run: &WorkloadCount) -> Vec<SyscallTime> {
    let names = def::positions(run.workload);
    if names.len() != run.ns_by_position.len() {
        return Vec::new();
    }
    let moves = |i: usize| {
        let n = run.tick_moves_by_position.get(i)?;
        (run.tick_moves_by_position.len() == names.len() && run.timing_iterations > 0)
            .then(|| *n as f64 / run.timing_iterations as f64)
    };
    let traced = |v: &[Option<f64>], i: usize| {
        (v.len() == names.len() && run.traced_iterations > 0)
            .then(|| v[i])
            .flatten()
    };
    names
        .iter()
        .zip(&run.ns_by_position)
        .enumerate()
        .map(|(i, (s, &ns))| SyscallTime {
            syscall: s.to_string(),
            ns,
            tick_moves_per_op: moves(i),
            stamp_offset: traced(&run.stamp_offset_by_position, i),
            stamp_offsets: match &run.stamp_offsets_by_position {
                v if v.len() == names.len() && run.traced_iterations > 0 => v[i].clone(),
                _ => Vec::new(),
            },
            stamp_reads: traced(&run.stamp_reads_by_position, i),
        })
        .collect()
}

/// The versioned Linux model for a kernel release (`linux@6.1`, `linux@6.13`, `linux@6.15`,
/// by the release's version); the newest modelled when the release has no version.
pub(crate) fn model_for(kernel_release: &str) -> ModelId {
    crate::kernel::ModelSpec {
        family: crate::kernel::Family::Linux,
        version: None,
        alias: false,
    }
    .resolve(Some(kernel_release))
    .0
}

/// The Linux model's estimate for `workload` on `fs` on the kernel `kernel_release`, run at
/// the guest's speed (`base_ns` = the guest's ns per op, spread over the loop's ops as the
/// guest's timing pass found it, `ns_by_syscall`, else evenly) and tick (`hz`), so that it
/// predicts the fraction of ops in which the coarse clock moves, and between which syscalls;
/// fixed costs, so no probe runs. The loop is the workload's own definition
/// ([`def::scenario`]), replayed under the model ([`estimate::estimates`]). Returns the
/// model's name and its stock policy's estimate. The one place that picks and runs the model:
/// the versioned models (`linux@6.1`, `linux@6.13`, `linux@6.15`) plug in here.
pub(crate) fn model_estimate(
    kernel_release: &str,
    hz: u32,
    workload: WorkloadName,
    fs: FsKind,
    guest_ns_per_op: f64,
    ns_by_syscall: &[SyscallTime],
    coarse_lag_ns: Option<f64>,
) -> Result<(String, PolicyEstimate)> {
    let model = model_for(kernel_release);
    let mut loop_ = def::scenario(workload, fs).compile();
    let ops = loop_.ops.len();
    if ns_by_syscall.iter().any(|t| t.ns > 0.0) {
        crate::ensure!(
            ns_by_syscall.len() == ops,
            "{} timed ops for the {ops} ops of {}'s loop",
            ns_by_syscall.len(),
            workload.as_str()
        );
        loop_.op_weights = Some(ns_by_syscall.iter().map(|t| t.ns).collect());
        let at: Vec<Vec<f64>> = ns_by_syscall.iter().map(SyscallTime::stamps_at).collect();
        if at.iter().any(|a| !a.is_empty()) {
            crate::ensure!(
                at.iter().flatten().all(|f| (0.0..=1.0).contains(f)),
                "{}: a stamp offset outside 0..1 ({at:?})",
                workload.as_str()
            );
            loop_.op_stamp_at = Some(at);
        }
    }
    if let Some(lag) = coarse_lag_ns {
        crate::ensure!(
            lag.is_finite() && lag >= 0.0,
            "coarse clock lag {lag} ns (a finite non-negative time wanted)"
        );
        loop_.coarse_lag_ns = Some(lag);
    }
    let costs = Costs::reads(20.0, 2.0, 1e9 / f64::from(hz.max(1))).with(
        crate::price::Term::Update,
        crate::price::TermPrice::uniform(10.0),
    );
    let base = guest_ns_per_op.max(1.0);
    let stock = estimate::estimates(model, costs, &loop_, base, MODEL_ITERATIONS)
        .into_iter()
        .find(|e| e.stock)
        .ok_or_else(|| crate::failure!("the {} model has no stock policy", model.label()))?;
    Ok((model.label(), stock))
}

/// Iterations the model replays for one row.
const MODEL_ITERATIONS: u64 = 20_000;

/// The model's reads per op of a clock-read `function` (0 when the model names reads of other
/// functions only); `None` for context functions, which no model names.
pub(crate) fn model_per_op(
    estimate: Option<&(String, PolicyEstimate)>,
    function: &str,
) -> Option<(String, f64)> {
    if !kprobe::is_clock_read(function) {
        return None;
    }
    let (name, e) = estimate?;
    let n = e
        .reads_per_op_by_function
        .get(function)
        .copied()
        .unwrap_or(0.0);
    Some((name.clone(), n))
}

/// Equal successive mtimes in the guest beside the model's share (write-stat: the guest reads
/// each mtime with its own fstat).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AccuracyRow {
    pub kernel_release: String,
    pub kernel_package: String,
    pub fs: FsKind,
    pub workload: WorkloadName,
    pub equal_successive_share: f64,
    pub model: String,
    pub model_equal_successive_share: Option<f64>,
    pub guest_ns_per_op: f64,
    /// As in [`CountRow`]: the timing pass the model's time spread follows.
    #[serde(default)]
    pub guest_ns_by_syscall: Vec<SyscallTime>,
}

/// The workload and file system a guest's run names.
fn named(run: &WorkloadCount) -> Result<(WorkloadName, FsKind)> {
    crate::ensure!(
        def::has_loop(run.workload),
        "the guest ran '{}', which has no single-threaded loop",
        run.workload.as_str()
    );
    Ok((run.workload, run.fs))
}

/// [`model_estimate`] for one workload run of a guest, at its measured time per syscall.
fn run_estimate(
    g: &GuestCount,
    hz: u32,
    run: &WorkloadCount,
    timing: &[SyscallTime],
) -> Result<(String, PolicyEstimate)> {
    let (w, fs) = named(run)?;
    model_estimate(
        &g.release,
        hz,
        w,
        fs,
        run.ns_per_op,
        timing,
        coarse_lag_ns(&g.coarse_lag_ns),
    )
}

/// The coarse clock's lag the model uses: the median of the guest's measured lags
/// (`GuestCount::coarse_lag_ns`), when it measured at least 5 ticks.
pub(crate) fn coarse_lag_ns(lags: &[u64]) -> Option<f64> {
    let mut v = lags.to_vec();
    v.sort_unstable();
    (v.len() >= 5).then(|| v[v.len() / 2] as f64)
}

/// The accuracy rows of one guest's count.
pub(crate) fn accuracy_rows(package: &str, hz: u32, g: &GuestCount) -> Result<Vec<AccuracyRow>> {
    let mut out = Vec::new();
    for run in &g.runs {
        let Some(share) = run.equal_mtime_share else {
            continue;
        };
        let timing = ns_by_syscall(run);
        let est = run_estimate(g, hz, run, &timing)?;
        out.push(AccuracyRow {
            kernel_release: g.release.clone(),
            kernel_package: package.to_string(),
            fs: run.fs,
            workload: run.workload,
            equal_successive_share: share,
            model: model_for(&g.release).label(),
            model_equal_successive_share: Some(est.1.accuracy.equal_successive_share),
            guest_ns_per_op: run.ns_per_op,
            guest_ns_by_syscall: timing,
        });
    }
    Ok(out)
}

fn judge(kernel: Option<f64>, model: Option<f64>) -> (Option<f64>, f64, Option<bool>) {
    let fractional = kernel.is_some_and(|k| (k - k.round()).abs() > TOLERANCE);
    let tol = if fractional {
        TOLERANCE_FRACTIONAL
    } else {
        TOLERANCE
    };
    match (kernel, model) {
        (Some(k), Some(m)) => (Some(k - m), tol, Some((k - m).abs() <= tol)),
        // A function the kernel lacks agrees with a model that predicts none of it.
        (None, Some(m)) => (None, tol, Some(m.abs() <= tol)),
        _ => (None, tol, None),
    }
}

/// What a count row counts (its JSON `kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RowKind {
    /// A clock-read leaf: judges the model.
    Clock,
    /// A caller of the clock reads, shown only.
    Context,
    /// Inode timestamp updates, judged against the model's `inode_updates_per_op`.
    Update,
    /// The running clocksource's read callback, shown beside the sum of the fine leaves.
    Clocksource,
    /// The kernel's multigrain counters: `fine_stamps` judged against the kprobe count of
    /// `ktime_get_real_ts64_mg`, the others shown.
    KernelCounter,
    /// A syscall, judged against the workload's definition.
    Syscall,
}
