//! What a kernel model expects a bundled scenario to cost in timestamp-function calls: the
//! counterpart of counting those calls in a real kernel (`tscope vm count`, with kprobes on
//! `ktime_get_coarse_real_ts64`, `ktime_get_real_ts64`, their `_mg` variants, …). Costs do not matter for the
//! counts except through the tick (Linux updates a timestamp only when the coarse time moved),
//! so the replay runs with a fixed tick and zero-cost reads.

use std::collections::BTreeMap;

use super::estimate::replay;
use super::replay::Costs;
use crate::kernel::{ClockFn, ModelId};
use crate::trace::FsKind;

/// One policy's expected calls per iteration of the scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct ExpectedCalls {
    /// The model, `family@version`.
    pub model: String,
    /// The policy, e.g. `linux:multigrain`.
    pub policy: String,
    pub stock: bool,
    /// Calls per iteration, by kernel function name (`ktime_get_coarse_real_ts64`, …); every
    /// function of [`ClockFn::ALL`] is present, zero when not called.
    pub calls_per_op: BTreeMap<&'static str, f64>,
}

/// The calls `model` expects per iteration of the bundled scenario `scenario` (pipe1,
/// pingpong, vfsmix, write-only, write-stat, untar, …) with its regular files on `fs` (`None`:
/// the scenario's own filesystems; pipes stay pipes), over `iterations` iterations with a coarse
/// tick of `tick_ns` (the guest's `CONFIG_HZ` period: 4e6 for HZ=250).
pub fn expected_calls(
    model: ModelId,
    scenario: &str,
    fs: Option<FsKind>,
    iterations: u64,
    tick_ns: f64,
) -> crate::error::Result<Vec<ExpectedCalls>> {
    crate::ensure!(
        tick_ns.is_finite() && tick_ns > 0.0,
        "tick must be a positive number of ns, got {}",
        crate::fmt::num(tick_ns)
    );
    let compiled = super::validate::scenario_on(scenario, fs)?;
    let costs = Costs::reads(0.0, 0.0, tick_ns);
    // Time must advance for the tick to move: 1 µs of base cost per iteration.
    let base = 1000.0;
    let table = model.table();
    Ok(model
        .policies()
        .iter()
        .map(|p| {
            let st = replay(&table, p, costs, &compiled, base, iterations.max(1));
            let units = st.units().max(1) as f64;
            ExpectedCalls {
                model: model.label(),
                policy: p.name(),
                stock: p.stock,
                calls_per_op: ClockFn::ALL
                    .iter()
                    .map(|&c| (c.kernel_name(), st.reads[c as usize] as f64 / units))
                    .collect(),
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::Version;

    fn linux(major: u16, minor: u16) -> ModelId {
        ModelId::new(crate::kernel::Family::Linux, Version::new(major, minor))
    }

    #[test]
    fn pipe1_calls_follow_the_linux_version() {
        let coarse = "ktime_get_coarse_real_ts64";
        let old = expected_calls(linux(6, 12), "pipe1", None, 1000, 1e10).unwrap();
        assert_eq!(old[0].policy, "linux:coarse");
        // Two current_time() per iteration, plus one per update (one per end, first time).
        assert_eq!(old[0].calls_per_op[coarse], 2.002);
        let new = expected_calls(linux(6, 18), "pipe1", None, 1000, 1e10).unwrap();
        assert!(new
            .iter()
            .all(|e| e.calls_per_op.values().all(|&v| v == 0.0)));
    }

    #[test]
    fn write_stat_on_ext4_takes_fine_reads_under_multigrain() {
        let e = expected_calls(linux(6, 13), "write-stat", Some(FsKind::Ext4), 1000, 1e10).unwrap();
        assert_eq!(e[0].policy, "linux:multigrain");
        let c = &e[0].calls_per_op;
        // current_time() reads ktime_get_real_ts64() when the coarse time equals the queried
        // ctime; inode_set_ctime_current() then reads ktime_get_real_ts64_mg(); both coarse
        // reads are ktime_get_coarse_real_ts64_mg() (counted on 7.2: 1.00, 1.00, 2.00).
        assert!(c["ktime_get_real_ts64"] > 0.95, "{c:?}");
        assert!(c["ktime_get_real_ts64_mg"] > 0.95, "{c:?}");
        assert_eq!(c["ktime_get_coarse_real_ts64_mg"], 2.0);
        assert_eq!(c["ktime_get_coarse_real_ts64"], 0.0);
        assert!(expected_calls(linux(6, 13), "nope", None, 10, 1e6).is_err());
    }
}
