//! From replay totals to estimates: ns and ops/s per iteration, speedup against the model's
//! stock policy, reads by clock function, and the accuracy metrics.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::replay::{Costs, Replay, Stats};
use crate::kernel::{ClockFn, ModelId, Policy};
use crate::trace::CompiledScenario;

/// Accuracy of the timestamps a policy stores.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Accuracy {
    /// Granularity of the coarsest clock that stamped a modification.
    pub resolution_ns: f64,
    /// Share of successive modifications of one inode whose timestamps compare equal.
    pub equal_successive_share: f64,
    /// Share of consecutive modifications of two different inodes that compare equal.
    pub cross_inode_equal_share: f64,
    /// … that compare inverted (the later one has the earlier time).
    pub cross_inode_inverted_share: f64,
    /// Largest distance between when a modification happened and the time it was given.
    pub max_staleness_ns: f64,
    pub modifications_per_op: f64,
    pub successive_pairs: u64,
    pub cross_inode_pairs: u64,
}

/// One policy's estimate.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PolicyEstimate {
    pub policy: String,
    pub stock: bool,
    pub ns_per_op: f64,
    pub ops_per_sec: f64,
    pub speedup: f64,
    /// Share of time spent reading clocks and storing timestamps.
    pub timestamp_share: f64,
    /// Reads per op: `coarse` (tick copies) and `counter` (clocksource/counter reads).
    pub reads_per_op: BTreeMap<String, f64>,
    /// Reads per op by kernel clock function.
    pub reads_per_op_by_function: BTreeMap<String, f64>,
    pub inode_updates_per_op: f64,
    pub accuracy: Accuracy,
}

/// Replays `iterations` loops of `scenario` under `policy`: the base cost of an iteration
/// spread evenly over its ops, or in proportion to the scenario's `op_weights` (and then, given
/// its `op_stamp_at`, each op's timestamps taken that far into the op).
pub fn replay(
    table: &[crate::kernel::Action],
    policy: &Policy,
    costs: Costs,
    scenario: &CompiledScenario,
    base_ns_per_iteration: f64,
    iterations: u64,
) -> Stats {
    replay_of(table, policy, costs, scenario, base_ns_per_iteration)
        .run(scenario.stream(iterations))
}

/// The replay [`replay`] runs, before its first op.
fn replay_of<'t>(
    table: &'t [crate::kernel::Action],
    policy: &Policy,
    costs: Costs,
    scenario: &CompiledScenario,
    base_ns_per_iteration: f64,
) -> Replay<'t> {
    let per_op = base_ns_per_iteration / scenario.ops.len().max(1) as f64;
    let by_position = scenario
        .op_weights
        .as_deref()
        .map(|w| spread(base_ns_per_iteration, w))
        .filter(|b| b.len() == scenario.ops.len())
        .unwrap_or_default();
    let stamp_at = match &scenario.op_stamp_at {
        Some(at) if !by_position.is_empty() => at.clone(),
        _ => Vec::new(),
    };
    Replay::new(table, policy.kind, costs, per_op, scenario.inodes)
        .with_base_by_position(by_position)
        .with_stamp_at_by_position(stamp_at)
        .with_coarse_lag(scenario.coarse_lag_ns.unwrap_or(0.0))
}

/// [`replay`], with `f(position, before, after)` called around each op: the totals before
/// and after it, its position in the loop.
pub fn replay_each(
    table: &[crate::kernel::Action],
    policy: &Policy,
    costs: Costs,
    scenario: &CompiledScenario,
    base_ns_per_iteration: f64,
    iterations: u64,
    mut f: impl FnMut(usize, &Stats, &Stats),
) -> Stats {
    let n = scenario.ops.len().max(1);
    let mut r = replay_of(table, policy, costs, scenario, base_ns_per_iteration);
    for (k, op) in scenario.stream(iterations).enumerate() {
        let before = r.stats().clone();
        r.step(op);
        f(k % n, &before, r.stats());
    }
    r.stats().clone()
}

/// What each op of the loop did in [`replay`], per iteration: its reads of `clock`, its
/// updates and, of those, its atime stores, by position in the loop.
pub fn replay_by_position(
    table: &[crate::kernel::Action],
    policy: &Policy,
    costs: Costs,
    scenario: &CompiledScenario,
    base_ns_per_iteration: f64,
    iterations: u64,
    clock: ClockFn,
) -> Vec<(f64, f64, f64)> {
    let mut by = vec![(0.0, 0.0, 0.0); scenario.ops.len()];
    let each = |k: usize, b: &Stats, a: &Stats| {
        let at = &mut by[k];
        at.0 += (a.reads[clock as usize] - b.reads[clock as usize]) as f64;
        at.1 += (a.updates - b.updates) as f64;
        at.2 += (a.atime_updates - b.atime_updates) as f64;
    };
    replay_each(
        table,
        policy,
        costs,
        scenario,
        base_ns_per_iteration,
        iterations,
        each,
    );
    let iterations = iterations.max(1) as f64;
    by.into_iter()
        .map(|(a, b, c)| (a / iterations, b / iterations, c / iterations))
        .collect()
}

/// `total` spread over positions in proportion to `weights` (negative or non-finite weights
/// count as 0); empty when no weight is positive.
pub fn spread(total: f64, weights: &[f64]) -> Vec<f64> {
    let clean = |w: f64| if w.is_finite() && w > 0.0 { w } else { 0.0 };
    let sum: f64 = weights.iter().map(|&w| clean(w)).sum();
    if sum <= 0.0 {
        return Vec::new();
    }
    weights.iter().map(|&w| total * clean(w) / sum).collect()
}

/// The base cost per iteration for which `measured_ns` per iteration is what `policy`
/// predicts (the timestamp work depends a little on how fast the loop runs, hence the fixed
/// point).
pub fn base_from_measured(
    model: ModelId,
    policy: &Policy,
    costs: Costs,
    scenario: &CompiledScenario,
    measured_ns: f64,
    iterations: u64,
) -> f64 {
    let table = model.table();
    let mut base = measured_ns;
    for _ in 0..4 {
        let s = replay(&table, policy, costs, scenario, base, iterations);
        base = (measured_ns - s.timestamp_ns / s.units().max(1) as f64).max(0.0);
    }
    base
}

/// Turns totals into an estimate; `stock_ns_per_op` gives the speedup.
pub fn estimate(
    policy: &Policy,
    stats: &Stats,
    stock_ns_per_op: f64,
    tasks: u32,
    costs: &Costs,
) -> PolicyEstimate {
    let units = stats.units().max(1) as f64;
    let ns_per_op = stats.total_ns / units;
    let per = |n: u64| n as f64 / units;
    let mut by_fn = BTreeMap::new();
    for c in ClockFn::ALL {
        let n = stats.reads[c as usize];
        if n > 0 {
            by_fn.insert(c.kernel_name().to_string(), per(n));
        }
    }
    let mut reads = BTreeMap::new();
    reads.insert("coarse".to_string(), per(stats.coarse_reads()));
    reads.insert("counter".to_string(), per(stats.counter_reads()));
    let share = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    let resolution_ns = ClockFn::ALL
        .iter()
        .filter(|&&c| stats.stamp_clocks & (1 << c as u8) != 0)
        .map(|c| c.resolution_ns(costs.tick_ns))
        .fold(0.0, f64::max);
    PolicyEstimate {
        policy: policy.name(),
        stock: policy.stock,
        ns_per_op,
        ops_per_sec: if ns_per_op > 0.0 {
            tasks as f64 * 1e9 / ns_per_op
        } else {
            0.0
        },
        speedup: if ns_per_op > 0.0 {
            stock_ns_per_op / ns_per_op
        } else {
            1.0
        },
        timestamp_share: if stats.total_ns > 0.0 {
            stats.timestamp_ns / stats.total_ns
        } else {
            0.0
        },
        reads_per_op: reads,
        reads_per_op_by_function: by_fn,
        inode_updates_per_op: per(stats.updates),
        accuracy: Accuracy {
            resolution_ns,
            equal_successive_share: share(stats.successive_equal, stats.successive_pairs),
            cross_inode_equal_share: share(stats.cross_equal, stats.cross_pairs),
            cross_inode_inverted_share: share(stats.cross_inverted, stats.cross_pairs),
            max_staleness_ns: stats.max_staleness_ns,
            modifications_per_op: per(stats.modifications),
            successive_pairs: stats.successive_pairs,
            cross_inode_pairs: stats.cross_pairs,
        },
    }
}

/// Estimates for every policy of `model`, stock first.
pub fn estimates(
    model: ModelId,
    costs: Costs,
    scenario: &CompiledScenario,
    base_ns_per_iteration: f64,
    iterations: u64,
) -> Vec<PolicyEstimate> {
    let table = model.table();
    let policies = model.policies();
    let stats: Vec<Stats> = policies
        .iter()
        .map(|p| {
            replay(
                &table,
                p,
                costs,
                scenario,
                base_ns_per_iteration,
                iterations,
            )
        })
        .collect();
    let stock_ns = stats[0].total_ns / stats[0].units().max(1) as f64;
    policies
        .iter()
        .zip(&stats)
        .map(|(p, s)| estimate(p, s, stock_ns, scenario.tasks, &costs))
        .collect()
}
