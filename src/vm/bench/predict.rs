//! What the Linux model for a kernel release says one op of a workload reads: precise
//! (clocksource) reads and coarse (tick) reads per op, evaluated at the guest's own ns per op
//! and tick, so that a multigrain kernel's fine reads — taken only when the coarse clock has
//! not moved since the inode's ctime was queried — come out as the fraction the guest sees.
//!
//! The loop replayed is the workload's one definition ([`crate::workload::def::scenario`]) on
//! the guest's file system. Only the counts are taken from the model; the prices come from the
//! guest ([`crate::vm::bench::guest::SlotCosts`]), and the prediction is their product
//! ([`crate::vm::bench::compare::predicted_delta`]).

use serde::{Deserialize, Serialize};

use crate::kernel::{Family, ModelSpec};
use crate::sim::{estimate, Costs};
use crate::trace::FsKind;
use crate::workload::{def, WorkloadName};

/// Iterations the model replays for one row.
const MODEL_ITERATIONS: u64 = 20_000;

/// The model's reads per op of one workload on one file system of one kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelReads {
    /// `linux@6.1`, `linux@6.13`, …
    pub model: String,
    /// Clocksource reads per op (`ktime_get_real_ts64`, `ktime_get_real_ts64_mg`).
    pub precise_per_op: f64,
    /// Tick copies per op (`ktime_get_coarse_real_ts64`, `…_mg`).
    pub coarse_per_op: f64,
    /// Inode timestamp updates per op (a changed time stored: `inode_updates_per_op`).
    #[serde(default)]
    pub updates_per_op: f64,
}

/// The model for `kernel_release` (the newest modelled when it has no version) on
/// `workload`'s loop on `fs`, run at `guest_ns_per_op` and `hz`; `None` for a workload without
/// a loop.
pub(crate) fn model_reads(
    kernel_release: &str,
    hz: u32,
    workload: WorkloadName,
    fs: FsKind,
    guest_ns_per_op: f64,
) -> Option<ModelReads> {
    if !def::has_loop(workload) {
        return None;
    }
    let (model, _) = ModelSpec {
        family: Family::Linux,
        version: None,
        alias: false,
    }
    .resolve(Some(kernel_release));
    let loop_ = def::scenario(workload, fs).compile();
    // Placeholder prices (no probe runs): only the counts are read from the estimate (the
    // prices move the replay's base by a few ns of an op's tens of µs).
    let costs = Costs::reads(20.0, 2.0, 1e9 / f64::from(hz.max(1)));
    let stock = estimate::estimates(
        model,
        costs,
        &loop_,
        guest_ns_per_op.max(1.0),
        MODEL_ITERATIONS,
    )
    .into_iter()
    .find(|e| e.stock)?;
    let get = |k: &str| stock.reads_per_op.get(k).copied().unwrap_or(0.0);
    Some(ModelReads {
        model: model.label(),
        precise_per_op: get("counter"),
        coarse_per_op: get("coarse"),
        updates_per_op: stock.inode_updates_per_op,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multigrain_write_stat_reads_the_clocksource_and_pipes_do_not() {
        use FsKind::Tmpfs;
        use WorkloadName::{Pipe1, WriteStat};
        let old = model_reads("6.1.0-48-cloud-amd64", 250, WriteStat, Tmpfs, 30_000.0).unwrap();
        assert_eq!(old.precise_per_op, 0.0);
        assert!(old.coarse_per_op >= 1.0);
        let new = model_reads("7.2.13+deb14-cloud-amd64", 250, WriteStat, Tmpfs, 30_000.0).unwrap();
        assert!(new.precise_per_op > 0.5, "{new:?}");
        // The queried stat makes every write store its time on 7.2; on 6.1 a write stores
        // one only when the tick moved.
        assert!(new.updates_per_op > 0.9, "{new:?}");
        assert!(old.updates_per_op < 0.1, "{old:?}");
        let pipe = model_reads("7.2.13+deb14-cloud-amd64", 250, Pipe1, Tmpfs, 17_000.0).unwrap();
        assert_eq!(pipe.precise_per_op, 0.0);
        assert!(model_reads("6.1.0", 250, WorkloadName::Mem, Tmpfs, 1.0).is_none());
    }
}
