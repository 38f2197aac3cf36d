//! The model's counts of a live pair's loops: each side replayed at its measured speed, its
//! reads priced at the syscall pair's prices, the units of each term counted
//! ([`crate::price::Counts`]).

use super::tasks_scenario;
use crate::kernel::{ClockFn, Family, ModelId, ModelSpec, Policy};
use crate::price::{Costs, Counts, Part, Term};
use crate::sim::estimate;
use crate::sim::replay::Stats;
use crate::trace::{CompiledScenario, FsKind, Syscall};
use crate::workload::pair::{PairResult, Pattern};

/// Iterations each side is replayed for at most.
const ITERATIONS: u64 = 200_000;

/// Iterations each side is replayed for at least.
const MIN_ITERATIONS: u64 = 10_000;

/// The span of the loop's own time each side is replayed for: 50 ticks of a 250 Hz coarse
/// clock (20 of a 100 Hz one), so that what happens once per tick is counted many times over.
const SPAN_NS: f64 = 200e6;

/// What the model counts for the loop `compiled` at `measured_ns` per iteration, replayed for
/// [`SPAN_NS`] of its time (10,000 to 200,000 iterations; fewer loops of a long one,
/// [`crate::trace::scenario::bounded_iterations`]), with the reads at `costs`' prices and no
/// term priced.
pub fn counts_at(
    model: ModelId,
    costs: Costs,
    compiled: &CompiledScenario,
    measured_ns: f64,
) -> Counts {
    let (stock, costs, base, iterations) = replay_setup(model, costs, compiled, measured_ns);
    let s = estimate::replay(&model.table(), &stock, costs, compiled, base, iterations);
    counts_of(&s) / s.units().max(1) as f64
}

/// What [`counts_at`] replays: the stock policy, the costs with the reads only priced, the
/// base ns per iteration at the measured speed, and the iterations.
fn replay_setup(
    model: ModelId,
    costs: Costs,
    compiled: &CompiledScenario,
    measured_ns: f64,
) -> (Policy, Costs, f64, u64) {
    let by_span = if measured_ns > 0.0 {
        (SPAN_NS / measured_ns) as u64
    } else {
        ITERATIONS
    };
    let iterations = crate::trace::scenario::bounded_iterations(
        by_span.clamp(MIN_ITERATIONS, ITERATIONS),
        compiled.ops.len(),
    );
    let stock = model.policies().swap_remove(0);
    let costs = costs.reads_only();
    let base =
        estimate::base_from_measured(model, &stock, costs, compiled, measured_ns, iterations);
    (stock, costs, base, iterations)
}

/// A replay's totals as the units of each term (not yet per iteration).
fn counts_of(s: &Stats) -> Counts {
    let fine = s.reads[ClockFn::LinuxFine as usize] + s.reads[ClockFn::LinuxFineMg as usize];
    let mut terms = [0.0; Term::COUNT];
    for t in Term::ALL {
        terms[t as usize] = match t {
            Term::FloorRead => s.floored_reads,
            Term::FineExcess => fine,
            Term::CtimeSwap => s.ctime_swaps,
            Term::Query => s.queries,
            Term::Update => s.updates - s.atime_updates,
            Term::FirstUpdate => s.first_updates,
            Term::AtimeUpdate => s.atime_updates,
            Term::SyncCommit => s.sync_commits,
        } as f64;
    }
    Counts {
        reads_ns: s.timestamp_ns,
        terms,
        fine_stamps: s.reads[ClockFn::LinuxFineMg as usize] as f64,
        ctime_moves: s.ctime_swaps as f64,
    }
}

/// [`counts_at`] by kind of call: what the model counts in each kind of call the loop
/// issues, per iteration, in the order of [`Syscall::ALL`].
pub fn counts_by_call(
    model: ModelId,
    costs: Costs,
    compiled: &CompiledScenario,
    measured_ns: f64,
) -> Vec<(Syscall, Counts)> {
    let (stock, costs, base, iterations) = replay_setup(model, costs, compiled, measured_ns);
    let kinds: Vec<Syscall> = compiled.ops.iter().map(|o| o.syscall).collect();
    let mut by = vec![Counts::default(); Syscall::ALL.len()];
    let each = |k: usize, b: &Stats, a: &Stats| {
        let s = kinds[k] as usize;
        by[s] = by[s] + (counts_of(a) - counts_of(b));
    };
    let s = estimate::replay_each(
        &model.table(),
        &stock,
        costs,
        compiled,
        base,
        iterations,
        each,
    );
    let units = s.units().max(1) as f64;
    Syscall::ALL
        .iter()
        .filter(|&&c| kinds.contains(&c))
        .map(|&c| (c, by[c as usize] / units))
        .collect()
}

/// What the model counts for one side of `pattern` run by `tasks` tasks at once
/// ([`tasks_scenario`]), per task's iteration, each task's iteration taking `measured_ns` (they
/// run side by side); `None` for a recorded loop ([`counts_at`] on its own scenario).
pub fn side_counts(
    model: ModelId,
    costs: Costs,
    pattern: Pattern,
    fs: FsKind,
    queried: bool,
    measured_ns: f64,
    tasks: u32,
) -> Option<Counts> {
    let compiled = tasks_scenario(pattern, fs, queried, tasks)?.compile();
    Some(counts_at(model, costs, &compiled, measured_ns) / f64::from(tasks.max(1)))
}

/// Both sides of `pair` (queried, control) as the model counts them, each at its measured
/// speed, with the pair's tasks; `None` for a recorded loop.
pub fn pair_sides(model: ModelId, costs: Costs, pair: &PairResult) -> Option<(Counts, Counts)> {
    let side = |queried: bool, ns: f64| {
        side_counts(
            model,
            costs,
            pair.pattern,
            pair.fs_kind(),
            queried,
            ns,
            pair.tasks,
        )
    };
    side(true, pair.queried_ns.point).zip(side(false, pair.control_ns.point))
}

/// The model's queried − control counts of `pair`; `None` for a recorded loop.
pub fn pair_delta(model: ModelId, costs: Costs, pair: &PairResult) -> Option<Counts> {
    pair_sides(model, costs, pair).map(|(q, c)| q - c)
}

/// [`pair_delta`] in `part` of the pair's iteration: the whole, or the calls of its pattern's
/// tail ([`crate::price::Tail`]) only; `None` for a recorded loop, and for a tail where the
/// pattern has none or several tasks ran it.
pub fn pair_delta_in(
    model: ModelId,
    costs: Costs,
    pair: &PairResult,
    part: Part,
) -> Option<Counts> {
    if part == Part::Whole {
        return pair_delta(model, costs, pair);
    }
    if pair.tasks != 1 {
        return None;
    }
    let side = |queried: bool, ns: f64| {
        tail_counts(model, costs, pair.pattern, pair.fs_kind(), queried, ns)
    };
    Some(side(true, pair.queried_ns.point)? - side(false, pair.control_ns.point)?)
}

/// What the model counts in the calls of `pattern`'s tail, per iteration of one side replayed
/// at `measured_ns` per iteration: the replay of [`counts_at`], each op's units kept where
/// the op sits in the tail.
pub fn tail_counts(
    model: ModelId,
    costs: Costs,
    pattern: Pattern,
    fs: FsKind,
    queried: bool,
    measured_ns: f64,
) -> Option<Counts> {
    let tail = pattern.tail()?;
    let compiled = tasks_scenario(pattern, fs, queried, 1)?.compile();
    let (stock, costs, base, iterations) = replay_setup(model, costs, &compiled, measured_ns);
    let mut sum = Counts::default();
    let each = |k: usize, b: &Stats, a: &Stats| {
        if (tail.head..tail.head + tail.ops()).contains(&k) {
            sum = sum + (counts_of(a) - counts_of(b));
        }
    };
    let s = estimate::replay_each(
        &model.table(),
        &stock,
        costs,
        &compiled,
        base,
        iterations,
        each,
    );
    Some(sum / s.units().max(1) as f64)
}

/// The model of the kernel the pair ran on.
pub fn model_of(pair: &PairResult) -> ModelId {
    ModelSpec {
        family: Family::Linux,
        version: None,
        alias: false,
    }
    .resolve(pair.kernel_release.as_deref())
    .0
}
