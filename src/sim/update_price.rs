//! The price of one inode timestamp update, and of one multigrain ctime query, on a
//! filesystem, from two live knob pairs ([`crate::workload::pair`]) and the kernel model of
//! the running kernel:
//!
//! `query_ns  = (Δchmod − Δreads) / Δqueries` (chmod-stat: the inode is stored on both sides)
//! `update_ns = (Δwrite − Δreads − Δqueries · query_ns) / Δupdates` (write-stat)
//!
//! except where the question adds no update to the write (btrfs stores every write's time):
//! there write-stat prices the query, `query_ns = (Δwrite − Δreads) / Δqueries`, and the
//! update comes from write-read-stat, whose read moves the atime on the queried side only.
//!
//! where each Δ is a pair's measured queried − control ns per iteration, and Δreads, Δqueries
//! and Δupdates are what the model counts for its two loops when replayed at their measured
//! speed (so the control's one update per tick is counted too): the reads priced as every
//! estimate prices them (the profile's `derived.precise_read_ns` and `vdso:realtime_coarse`).
//! Intervals are the Δs', carried through (the query's widening the update's). The query's
//! price is what a query brings beyond the reads the model counts: `fill_mg_cmtime`'s
//! `fetch_or` of `I_CTIME_QUERIED`, and the fine stamp it causes (`ktime_get_real_ts64_mg`'s
//! compare-exchange of the floor, `inode_set_ctime_current`'s of the ctime). What remains of
//! the write pair is the filesystem's own work of storing a changed time: ext4's journal
//! handle (`ext4_dirty_inode`), xfs's transaction (`xfs_vn_update_time`), tmpfs's bare
//! `__mark_inode_dirty`. Without a chmod-stat pair the query's work stays in the update price.

use super::config::{LoopSource, SimulateConfig};
use super::{costs, estimate, Costs};
use crate::kernel::{ClockFn, Family, ModelId, ModelSpec};
pub use crate::probe::update::FsUpdate;
use crate::probe::Profile;
use crate::stats::Estimate;
use crate::trace::{CompiledScenario, FsKind};
use crate::workload::pair::{PairResult, Pattern};

/// Iterations each side is replayed for (many ticks of the coarse clock).
const ITERATIONS: u64 = 200_000;

/// What the model counts for one side of a pair, per iteration.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Counts {
    /// The timestamp reads, priced (ns).
    pub reads_ns: f64,
    /// Inode timestamp updates.
    pub updates: f64,
    /// Stats that mark a ctime queried ([`crate::sim::replay::Stats::queries`]).
    pub queries: f64,
    /// Fine-grained ctime stamps (`ktime_get_real_ts64_mg` reads): what the kernel's
    /// `fine_stamps` counter counts ([`crate::probe::multigrain`]).
    pub fine_stamps: f64,
    /// Coarse reads that returned the multigrain floor ([`crate::sim::replay::Stats::floored_reads`]).
    pub floored: f64,
    /// Fine reads (`ktime_get_real_ts64`, `ktime_get_real_ts64_mg`): what the in-path excess
    /// prices.
    pub fine_reads: f64,
}

impl std::ops::Div<f64> for Counts {
    type Output = Counts;
    fn div(self, n: f64) -> Counts {
        Counts {
            reads_ns: self.reads_ns / n,
            updates: self.updates / n,
            queries: self.queries / n,
            fine_stamps: self.fine_stamps / n,
            floored: self.floored / n,
            fine_reads: self.fine_reads / n,
        }
    }
}

impl std::ops::Sub for Counts {
    type Output = Counts;
    fn sub(self, o: Counts) -> Counts {
        Counts {
            reads_ns: self.reads_ns - o.reads_ns,
            updates: self.updates - o.updates,
            queries: self.queries - o.queries,
            fine_stamps: self.fine_stamps - o.fine_stamps,
            floored: self.floored - o.floored,
            fine_reads: self.fine_reads - o.fine_reads,
        }
    }
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

/// What the model counts for the loop `compiled` at `measured_ns` per iteration, replayed for
/// many ticks of the coarse clock (fewer loops of a long one,
/// [`crate::trace::scenario::bounded_iterations`]).
pub fn counts_at(
    model: ModelId,
    costs: Costs,
    compiled: &CompiledScenario,
    measured_ns: f64,
) -> Counts {
    let iterations = crate::trace::scenario::bounded_iterations(ITERATIONS, compiled.ops.len());
    let stock = &model.policies()[0];
    let costs = Costs {
        update_ns: 0.0,
        update_ns_by_fs: Costs::UNIFORM,
        query_ns: 0.0,
        query_ns_by_fs: Costs::UNIFORM,
        ..costs
    };
    let base = estimate::base_from_measured(model, stock, costs, compiled, measured_ns, iterations);
    let s = estimate::replay(&model.table(), stock, costs, compiled, base, iterations);
    let units = s.units().max(1) as f64;
    Counts {
        reads_ns: s.timestamp_ns / units,
        updates: s.updates as f64 / units,
        queries: s.queries as f64 / units,
        fine_stamps: s.reads[ClockFn::LinuxFineMg as usize] as f64 / units,
        floored: s.floored_reads as f64 / units,
        fine_reads: (s.reads[ClockFn::LinuxFine as usize] + s.reads[ClockFn::LinuxFineMg as usize])
            as f64
            / units,
    }
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

/// The live pairs that price one filesystem.
#[derive(Debug, Clone, Copy)]
pub struct Pairs<'a> {
    /// write-stat: the update.
    pub write: &'a PairResult,
    /// chmod-stat: the query.
    pub query: Option<&'a PairResult>,
    /// chmod-stat-read16: the floored read.
    pub floor: Option<&'a PairResult>,
    /// write-read-stat: the update where write-stat stores on both sides (btrfs), through the
    /// read's atime.
    pub read: Option<&'a PairResult>,
    /// chmod-stat-read16-same: a fine read's in-path excess, against `fine_base`.
    pub fine: Option<&'a PairResult>,
    /// chmod-stat-read1-same.
    pub fine_base: Option<&'a PairResult>,
}

impl<'a> Pairs<'a> {
    /// The write-stat pair alone.
    pub fn of(write: &'a PairResult) -> Self {
        Pairs {
            write,
            query: None,
            floor: None,
            read: None,
            fine: None,
            fine_base: None,
        }
    }
}

/// Prices one filesystem from its `pairs`, the reads priced from `profile`.
pub fn price(pairs: Pairs<'_>, profile: &Profile) -> FsUpdate {
    let pair = pairs.write;
    let model = model_of(pair);
    let cfg = SimulateConfig::new(LoopSource::Scenario("write-stat".into()));
    match costs::resolve_as_measured(model, Some(profile), &cfg) {
        Ok((c, _)) => price_at(pairs, c),
        Err(e) => {
            let mut out = unpriced(pair);
            out.model = Some(model.label());
            out.reason = format!("the reads cannot be priced: {e}");
            out
        }
    }
}

/// An entry for `pair` with no price yet.
fn unpriced(pair: &PairResult) -> FsUpdate {
    FsUpdate {
        dir: pair.dir.clone(),
        fs_type: pair.fs_type.clone(),
        mount_options: pair.mount_options.clone(),
        multigrain: pair.multigrain_observed,
        update_ns: None,
        query_ns: None,
        query_pattern: None,
        floor_read_ns: None,
        fine_excess_ns: None,
        reason: String::new(),
        model: None,
        reads_delta_ns: None,
        updates_delta: None,
        queries_delta: None,
        pair: Some(pair.clone()),
        query_pair: None,
        floor_pair: None,
        fine_pair: None,
        fine_base_pair: None,
        read_pair: None,
    }
}

/// Prices one update (and the query, given its chmod-stat pair, the floored read, given the
/// chmod-stat pair with reads after it too, and a fine read's in-path excess, given the two
/// pairs with reads of the same file) with the reads at `costs` (the profile's, or a guest's
/// own paired read costs in `vm bench`). The excess is priced first (its pairs differ in fine
/// and floored reads only), then the query and the update with it, since their pairs take
/// fine reads too.
pub fn price_at(pairs: Pairs<'_>, costs: Costs) -> FsUpdate {
    let (Some(fine), Some(base)) = (pairs.fine, pairs.fine_base) else {
        return price_with(pairs, costs);
    };
    let fs = pairs.write.fs_kind() as usize;
    let model = model_of(pairs.write);
    // The floored read's price needs no excess (its two pairs take the same fine reads).
    let floor = match (pairs.floor, pairs.query) {
        (Some(f), Some(q)) => price_floor(model, costs, f, q).ok(),
        _ => None,
    };
    let excess = price_excess(model, costs, fine, base, floor);
    let mut c = costs;
    if let Ok(e) = &excess {
        c.fine_excess_ns_by_fs[fs] = Some(e.point);
    }
    let mut out = price_with(pairs, c);
    out.fine_pair = Some(fine.clone());
    out.fine_base_pair = Some(base.clone());
    match excess {
        Ok(est) => {
            out.fine_excess_ns = Some(est);
            out.reason = format!(
                "{}; a fine read {:.1} ns [{:.1}, {:.1}] inside the op beyond the precise read's \
                 price ({} pair: Δ {:.1} ns against the {} pair's {:.1}, less the reads the \
                 model counts between them, over the fine reads)",
                out.reason,
                est.point,
                est.lower,
                est.upper,
                fine.pattern_name,
                fine.delta_ns.point,
                base.pattern_name,
                base.delta_ns.point
            );
        }
        Err(why) => out.reason = format!("{}; the in-path excess not priced ({why})", out.reason),
    }
    out
}

/// [`price_at`] with the in-path excess as `costs` has it. A floored read priced here is
/// this filesystem's in the query's and the update's arithmetic; otherwise `costs`' holds.
fn price_with(pairs: Pairs<'_>, mut costs: Costs) -> FsUpdate {
    let (pair, query_pair, floor_pair) = (pairs.write, pairs.query, pairs.floor);
    let mut out = unpriced(pair);
    out.query_pair = query_pair.cloned();
    out.floor_pair = floor_pair.cloned();
    out.read_pair = pairs.read.cloned();
    let model = model_of(pair);
    out.model = Some(model.label());
    let floor = match (floor_pair, query_pair) {
        (Some(f), Some(q)) => Some(price_floor(model, costs, f, q)),
        _ => None,
    };
    if let Some(Ok(e)) = floor {
        costs.floor_read_ns_by_fs[pair.fs_kind() as usize] = Some(e.point);
        out.floor_read_ns = Some(e);
    }
    let Some((q, c)) = pair_sides(model, costs, pair) else {
        out.reason = format!(
            "not priced from a {}: the update is priced on the write-stat pair",
            pair.pattern_name
        );
        return out;
    };
    let d = q - c;
    let (uq, uc, dr, du, dq) = (q.updates, c.updates, d.reads_ns, d.updates, d.queries);
    out.reads_delta_ns = Some(dr);
    out.updates_delta = Some(du);
    out.queries_delta = Some(dq);
    if !pair.multigrain_observed {
        out.reason = format!(
            "not measurable here: the kernel showed no multigrain timestamps on {} ({}), so \
             the question changes no update; {}",
            pair.fs_type,
            pair.kernel_release.as_deref().unwrap_or("unknown kernel"),
            pair.check.as_deref().unwrap_or("")
        );
        return out;
    }
    let query = query_pair.map(|p| price_query(model, costs, p));
    // Where the question adds no update to the write (btrfs stores every write's time),
    // write-stat isolates what it adds to a write: its reads and its query. The query is
    // priced there, on the op the knob's loops repeat; chmod-stat's price is then said, not
    // used. The two differ: a fine read inside an op costs more than the syscall pair's price
    // (read_tsc() is rdtsc_ordered(), arch/x86/include/asm/tsc.h, read at 7.2.13: rdtscp, or
    // lfence; rdtsc, which waits for the work before it), by how much depends on the op
    // (scripts/fine-read-in-path), and the query's price holds that difference.
    let on_write =
        (du < 0.5 && dq >= 0.5).then(|| solve(pair.delta_ns, dr, 0.0, Estimate::exact(0.0), dq));
    let (qn, query_words) = match (on_write, &query, query_pair) {
        (Some(e), q, _) => {
            out.query_ns = Some(e);
            out.query_pattern = Some(pair.pattern_name.clone());
            let chmod = match q {
                Some(Ok(c)) => format!(
                    "; chmod-stat would price it at {:.1} ns [{:.1}, {:.1}]: the question \
                     adds less to a chmod than to a write beyond the reads counted",
                    c.point, c.lower, c.upper
                ),
                Some(Err(why)) => format!("; chmod-stat does not price it ({why})"),
                None => String::new(),
            };
            (
                e,
                format!(
                    "a query {:.1} ns [{:.1}, {:.1}] ({} pair: Δ {:.1} ns less its {dr:.1} ns \
                     of reads, over {dq:.3} queries, the question adding no update to the \
                     write){chmod}",
                    e.point, e.lower, e.upper, pair.pattern_name, pair.delta_ns.point
                ),
            )
        }
        (None, Some(Ok(e)), Some(p)) => {
            out.query_ns = Some(*e);
            out.query_pattern = Some(p.pattern_name.clone());
            (
                *e,
                format!(
                    "a query {:.1} ns [{:.1}, {:.1}] (chmod-stat pair: Δ {:.1} ns less its \
                     reads, the inode stored on both sides)",
                    e.point, e.lower, e.upper, p.delta_ns.point
                ),
            )
        }
        (None, Some(Err(why)), _) => (
            Estimate::exact(0.0),
            format!("the query not priced apart ({why}), so the update holds its work"),
        ),
        _ => (
            Estimate::exact(0.0),
            "the query not priced apart (no chmod-stat pair), so the update holds its work"
                .to_string(),
        ),
    };
    let floor_words = match (&floor, floor_pair) {
        (Some(Ok(e)), Some(p)) => format!(
            "; a coarse read that returns the floor {:.1} ns [{:.1}, {:.1}] beyond one that \
             returns the tick ({} pair: Δ {:.1} ns against the chmod-stat pair's)",
            e.point, e.lower, e.upper, p.pattern_name, p.delta_ns.point
        ),
        (Some(Err(why)), _) => format!("; the floored read not priced ({why})"),
        _ if costs.floor_read_on(pair.fs_kind()) != 0.0 => format!(
            "; the floored reads at {:.1} ns each (the profile's)",
            costs.floor_read_on(pair.fs_kind())
        ),
        _ => String::new(),
    };
    let query_words = format!("{query_words}{floor_words}");
    let through_read = pairs.read.and_then(|r| {
        let d = pair_sides(model, costs, r).map(|(a, b)| a - b)?;
        (r.multigrain_observed && d.updates >= 0.5).then_some((r, d))
    });
    if let (true, Some((r, d))) = (du < 0.5, through_read) {
        out.reads_delta_ns = Some(d.reads_ns);
        out.updates_delta = Some(d.updates);
        out.queries_delta = Some(d.queries);
        out.update_ns = Some(solve(r.delta_ns, d.reads_ns, d.queries, qn, d.updates));
        out.reason = format!(
            "{model} counts {uq:.3} updates per iteration with the times asked for and {uc:.3} \
             without on {} in the write-stat pair (every write stores its time whatever the \
             question), so the update is priced on the {} pair ({}, {} × ABBA of {} \
             iterations), where the read after a fine-stamped write moves the atime only with \
             the times asked for (relatime: the atime is not later than the mtime): Δ {:.1} ns \
             per iteration less {:.1} ns of reads and {:.3} queries, over {:.3} more updates; \
             {query_words}",
            pair.fs_type,
            r.pattern_name,
            r.dir,
            r.repetitions,
            r.iterations_per_block,
            r.delta_ns.point,
            d.reads_ns,
            d.queries,
            d.updates
        );
        return out;
    }
    if du < 0.5 {
        out.reason = format!(
            "update not measurable from the pair, and not needed by the knob: {model} counts \
             {uq:.3} updates per iteration with the times asked for and {uc:.3} without on {} \
             (every write stores its time whatever the question), so only the reads and the \
             query differ: the model's {dr:.1} ns of reads and {dq:.3} queries against a live \
             Δ of {:.1} [{:.1}, {:.1}] ns; {query_words}",
            pair.fs_type, pair.delta_ns.point, pair.delta_ns.lower, pair.delta_ns.upper
        );
        return out;
    }
    let delta = pair.delta_ns;
    out.update_ns = Some(solve(delta, dr, dq, qn, du));
    out.reason = format!(
        "live pair on {} ({}, {} × ABBA of {} iterations): Δ {:.1} ns per iteration less \
         {dr:.1} ns of reads that {model} counts and {dq:.3} queries, over {du:.3} more \
         updates; {query_words}",
        pair.dir, pair.pattern_name, pair.repetitions, pair.iterations_per_block, delta.point
    );
    out
}

mod lookup;
mod measure;
mod parts;
mod patterns;
#[cfg(test)]
mod tests;

pub use lookup::{for_fs, live_pair_for, unmeasured_update_notes, write_stat_on};
pub use measure::{measure_all, measure_and_price, FINE_BASE_PATTERN, FINE_PATTERN, FLOOR_PATTERN};
use parts::{price_excess, price_floor, price_query, solve};
pub use patterns::{pattern_scenario, tasks_scenario};
