//! The live knob pair: the same loop twice on one file, differing only in the question its
//! `statx` asks. On a multigrain kernel (Linux ≥ 6.13, tmpfs/ext4/xfs/btrfs) that question is
//! the knob:
//!
//! - **queried**: `statx(fd, "", AT_EMPTY_PATH, STATX_MTIME | STATX_CTIME)`. `generic_fillattr`
//!   → `fill_mg_cmtime` marks the ctime queried, so the next write takes a fine-grained time
//!   (`ktime_get_real_ts64_mg`), which always differs from the stored one: the inode is updated
//!   and dirtied on every such write;
//! - **control**: `statx(…, STATX_SIZE)`. The ctime is never queried; every write finds the
//!   coarse time unchanged within the tick (`inode_needs_update_time`) and skips the update.
//!
//! Each iteration is `writes` × `pwrite(fd, 1 byte, offset 0)` then that `statx`
//! ([`Pattern::Write`]), a whole file's life, create → write → statx → close → unlink
//! ([`Pattern::Create`]), or `fchmod` to the same mode then that `statx` ([`Pattern::Chmod`]:
//! the inode is stored on both sides, so only the reads and the query's own work differ). Blocks of about 4 ms (the iterations set from a warm-up block's speed) alternate ABBA (queried, control,
//! control, queried) `repetitions` times on one pinned CPU, so a drift of the machine falls on
//! both sides alike; a repetition's Δ is its two queried blocks less its two control blocks.
//! Each change of side waits for the next tick ([`settle`]): the floor a queried block's fine
//! stamps raised outlives the block until the coarse clock passes it, and would floor the next
//! control block's first part.
//! Intervals are percentile bootstraps of the median over repetitions (seeded).
//!
//! Both sides read each `statx`'s mtime: the share of successive mtimes that compare equal is
//! the kernel's own evidence of the knob (queried: none equal on a multigrain filesystem;
//! control: all but one per tick). On a kernel without multigrain the two sides do the same
//! work and must come out equal: [`PairResult::check`] says whether they did.

use std::path::Path;

use super::scratch::{self, ScratchDir};
use super::write::EqualTally;
use crate::probe::multigrain;
pub use crate::probe::update::{
    decided, equal_sides_check, median_interval, multigrain_expected, summarize, CallDelta,
    PairConfig, PairResult, Pattern, CONTROL_MASK, LOOK_EVERY, MULTIGRAIN_SINCE, QUERIED_MASK,
};
use crate::sys;

mod loops;

use loops::{block, target, Target, Timed};

/// The longest wait for the coarse clock to move at a change of side (a tick is 10 ms at
/// HZ=100, the slowest tick Linux builds with); past it the block starts anyway.
const SETTLE_LIMIT: std::time::Duration = std::time::Duration::from_millis(25);

/// Waits for the next tick where the side changes (`last`, the side of the block before;
/// `queried`, the side of the next). A queried block's last fine stamp leaves the multigrain
/// floor ahead of the coarse clock until the next tick (`ktime_get_coarse_real_ts64_mg`
/// returns the later of the two, kernel/time/timekeeping.c), so a control block that starts
/// in the same tick runs its first part floored: its reads and c/mtime changes take the queried
/// side's costs. In 4 ms blocks that is a quarter of the control side's time on average, and the
/// Δ of every floor-dependent term comes out short by as much. Both changes wait, control to
/// queried as well, so that each side has one block that starts at a tick and one that follows
/// a block of its own side: the tick's phase falls on both alike. The wait spins in userspace
/// and is not timed.
pub(crate) fn settle(last: &mut Option<bool>, queried: bool) -> crate::error::Result<()> {
    if *last != Some(queried) {
        sys::clock::wait_for_coarse_tick(SETTLE_LIMIT)
            .map_err(|e| crate::failure!("reading CLOCK_REALTIME_COARSE: {e}"))?;
    }
    *last = Some(queried);
    Ok(())
}

/// The fewest iterations a timed block holds (fewer where `iterations` says so): the switch
/// of side at a block's start is shared by several iterations.
const MIN_BLOCK_ITERATIONS: u64 = 8;

/// Why [`measure`] refuses a recorded loop.
const RECORDED: &str = "a recorded loop is replayed by workload::replayed::measure, not the pair";

/// Measures the pair on `cfg.dir`'s filesystem. Stops between blocks on SIGINT/SIGTERM
/// (`Error::Interrupted`); the scratch directory is removed on every path.
pub fn measure(cfg: &PairConfig) -> crate::error::Result<PairResult> {
    crate::ensure!(
        cfg.repetitions >= 2 && cfg.iterations >= 1,
        "the pair needs at least 2 repetitions of 1 iteration"
    );
    crate::ensure!(
        (1..=64).contains(&cfg.tasks),
        "the pair runs 1 to 64 tasks, not {}",
        cfg.tasks
    );
    if let Pattern::Write { writes } = cfg.pattern {
        crate::ensure!(
            (1..=64).contains(&writes),
            "writes per query must be 1 to 64"
        );
    }
    if let Pattern::ChmodRead { reads }
    | Pattern::ChmodReadSame { reads }
    | Pattern::ChmodReadApart { reads } = cfg.pattern
    {
        crate::ensure!((1..=64).contains(&reads), "reads per query must be 1 to 64");
    }
    if let Pattern::ChmodOthers { files } | Pattern::ChmodOthersApart { files } = cfg.pattern {
        crate::ensure!((1..=64).contains(&files), "other files must be 1 to 64");
    }
    let scratch = ScratchDir::create(&cfg.dir)?;
    let fs = scratch::fs_info(scratch.path());
    let targets = (0..cfg.tasks)
        .map(|k| target(scratch.path(), k, cfg.pattern))
        .collect::<crate::error::Result<Vec<_>>>()?;
    let restore = sys::cpu::allowed_cpus().ok();
    let cpus = placement(cfg, restore.as_deref());
    let result = sample(cfg, &targets, &cpus);
    if let (Some(_), Some(all)) = (cpus.first().copied().flatten(), restore) {
        let _ = sys::cpu::set_affinity(&all);
    }
    let Sampled {
        queried,
        control,
        iterations,
        tq,
        tc,
        counted,
    } = result?;
    let by_call = tail_delta(cfg, &queried, &control);
    let (queried, control) = (wholes(&queried), wholes(&control));
    let (kernel_counts, kernel_counts_absent) = match counted.finish() {
        Ok(c) => (Some(c), None),
        Err(e) => (None, Some(e)),
    };
    drop(targets);
    drop(scratch);
    let (queried_ns, control_ns, delta_ns, ratio, deltas) =
        summarize(&queried, &control, cfg.seed, cfg.confidence_level);
    let kernel_release = sys::cpu::kernel_release().ok();
    let expected = multigrain_expected(kernel_release.as_deref(), &fs.fs_type);
    let observed = tq.pairs > 0 && tq.share() < 0.5 && tc.share() > 0.5;
    let pattern_name = match cfg.tasks {
        1 => cfg.pattern.name(),
        n => format!("{} × {n} tasks", cfg.pattern.name()),
    };
    Ok(PairResult {
        dir: cfg.dir.display().to_string(),
        fs_type: fs.fs_type,
        mount_options: fs.options,
        kernel_release,
        pattern: cfg.pattern,
        pattern_name,
        tasks: cfg.tasks,
        iterations_per_block: iterations,
        repetitions: (queried.len() / 2) as u32,
        pinned_cpu: cpus.first().copied().flatten(),
        queried_ns,
        control_ns,
        delta_ns,
        ratio,
        queried_equal_mtimes: tq.share(),
        control_equal_mtimes: tc.share(),
        multigrain_expected: expected,
        multigrain_observed: observed,
        check: (!observed).then(|| equal_sides_check(delta_ns, control_ns)),
        deltas_ns: deltas,
        kernel_counts,
        kernel_counts_absent,
        stopped: None,
        by_call,
    })
}

/// The CPU of each task: one task stays on the CPU it runs on; several spread over the
/// allowed CPUs (`None`: not pinned).
fn placement(cfg: &PairConfig, allowed: Option<&[usize]>) -> Vec<Option<usize>> {
    if !cfg.pin {
        return vec![None; cfg.tasks as usize];
    }
    if cfg.tasks == 1 {
        return vec![pin_here()];
    }
    match allowed {
        Some(cpus) if !cpus.is_empty() => (0..cfg.tasks as usize)
            .map(|k| Some(cpus[k % cpus.len()]))
            .collect(),
        _ => vec![None; cfg.tasks as usize],
    }
}

/// Pins the calling thread to the CPU it runs on; that CPU, or `None` where it cannot.
pub fn pin_here() -> Option<usize> {
    sys::cpu::current_cpu()
        .and_then(|c| sys::cpu::pin_to_cpu(c).map(|()| c))
        .ok()
}

/// One block on every task at once; the mean over tasks of ns per iteration.
fn blocks(
    targets: &[Target],
    cpus: &[Option<usize>],
    pattern: Pattern,
    mask: u32,
    n: u64,
    tallies: &mut [EqualTally],
) -> crate::error::Result<Timed> {
    if targets.len() == 1 {
        return block(&targets[0], pattern, mask, n, &mut tallies[0]);
    }
    let start = std::sync::Barrier::new(targets.len());
    let results: Vec<crate::error::Result<Timed>> = std::thread::scope(|s| {
        let handles: Vec<_> = targets
            .iter()
            .zip(tallies.iter_mut())
            .zip(cpus)
            .map(|((t, tally), cpu)| {
                let start = &start;
                s.spawn(move || {
                    if let Some(c) = cpu {
                        let _ = sys::cpu::pin_to_cpu(*c);
                    }
                    start.wait();
                    block(t, pattern, mask, n, tally)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(crate::failure!("a task of the pair panicked")))
            })
            .collect()
    });
    let ns = results
        .into_iter()
        .collect::<crate::error::Result<Vec<Timed>>>()?;
    let k = ns.len() as f64;
    Ok(Timed {
        whole: ns.iter().map(|t| t.whole).sum::<f64>() / k,
        tail: ns.iter().map(|t| t.tail).sum::<f64>() / k,
    })
}

/// What the repetitions gave: each side's blocks in order, the iterations per block, each
/// side's tally of equal times, and the kernel's counts.
struct Sampled {
    queried: Vec<Timed>,
    control: Vec<Timed>,
    iterations: u64,
    tq: EqualTally,
    tc: EqualTally,
    counted: multigrain::Tally,
}

/// Each side's whole-iteration times, in block order.
fn wholes(blocks: &[Timed]) -> Vec<f64> {
    blocks.iter().map(|t| t.whole).collect()
}

/// The tail's Δ per iteration ([`crate::price::Tail`]), as the recorded loop's `by_call`
/// gives each kind of call's: the median of the repetitions' queried − control, with its
/// bootstrap interval; empty where the pattern has no tail or several tasks ran it.
fn tail_delta(cfg: &PairConfig, queried: &[Timed], control: &[Timed]) -> Vec<CallDelta> {
    let Some(tail) = cfg.pattern.tail().filter(|_| cfg.tasks == 1) else {
        return Vec::new();
    };
    let reps = queried.len().min(control.len()) / 2;
    let deltas: Vec<f64> = (0..reps)
        .map(|r| {
            (queried[2 * r].tail + queried[2 * r + 1].tail
                - control[2 * r].tail
                - control[2 * r + 1].tail)
                / 2.0
        })
        .collect();
    vec![CallDelta {
        syscall: tail.syscall.name().to_string(),
        calls_per_pass: tail.calls,
        delta_ns: median_interval(&deltas, cfg.seed, cfg.confidence_level),
    }]
}

fn sample(
    cfg: &PairConfig,
    targets: &[Target],
    cpus: &[Option<usize>],
) -> crate::error::Result<Sampled> {
    let k = targets.len();
    let (mut tq, mut tc) = (
        vec![EqualTally::default(); k],
        vec![EqualTally::default(); k],
    );
    // Warm-up: one block of each side, not kept (the file's blocks, the caches, the journal);
    // with a block duration, a first short one times an iteration.
    let mut scrap = vec![EqualTally::default(); k];
    let n = match cfg.block {
        Some(block) => {
            // The first blocks pay what happens once (the file's first blocks allocated and
            // committed): the second of each side is timed, the slower of the two kept.
            let probe = cfg.iterations.min(16);
            let mut one = 0.0f64;
            for round in 0..2 {
                for mask in [QUERIED_MASK, CONTROL_MASK] {
                    let ns = blocks(targets, cpus, cfg.pattern, mask, probe, &mut scrap)?;
                    if round == 1 {
                        one = one.max(ns.whole);
                    }
                }
            }
            ((block.as_nanos() as f64 / one.max(1.0)) as u64)
                .clamp(MIN_BLOCK_ITERATIONS.min(cfg.iterations), cfg.iterations)
        }
        None => cfg.iterations,
    };
    let warm = n.min(5_000);
    blocks(targets, cpus, cfg.pattern, QUERIED_MASK, warm, &mut scrap)?;
    blocks(targets, cpus, cfg.pattern, CONTROL_MASK, warm, &mut scrap)?;
    let (mut queried, mut control) = (Vec::new(), Vec::new());
    let mut counted = multigrain::Tally::start();
    let mut last = None;
    for rep in 1..=cfg.repetitions {
        for &q in &[true, false, false, true] {
            if sys::signal::stop_requested() {
                return Err(crate::error::Error::Interrupted);
            }
            settle(&mut last, q)?;
            let (mask, tallies, out) = if q {
                (QUERIED_MASK, &mut tq, &mut queried)
            } else {
                (CONTROL_MASK, &mut tc, &mut control)
            };
            let before = counted.before();
            out.push(blocks(targets, cpus, cfg.pattern, mask, n, tallies)?);
            counted.after(before, q, n * k as u64);
        }
        if rep >= cfg.min_repetitions
            && rep < cfg.repetitions
            && (rep - cfg.min_repetitions) % LOOK_EVERY == 0
        {
            let (_, c, d, _, _) = summarize(
                &wholes(&queried),
                &wholes(&control),
                cfg.seed,
                cfg.confidence_level,
            );
            // A pattern with a tail prices by its tail: it stops when the tail's Δ is known,
            // within ±10% or ±1% of the control's time in the tail (a statx's few ns of query
            // against its few hundred).
            let known = match tail_delta(cfg, &queried, &control).first() {
                Some(t) => {
                    let tail_ns =
                        control.iter().map(|b| b.tail).sum::<f64>() / control.len() as f64;
                    decided(t.delta_ns, tail_ns)
                }
                None => decided(d, c.point),
            };
            if known {
                break;
            }
        }
    }
    Ok(Sampled {
        queried,
        control,
        iterations: n,
        tq: EqualTally::sum(&tq),
        tc: EqualTally::sum(&tc),
        counted,
    })
}

/// The directory a path names, checked: an existing directory on storage (not a kernel
/// interface file system such as cgroup, proc, sysfs or debugfs).
pub fn check_dir(dir: &Path) -> Result<(), String> {
    super::scratch::check_parent(dir)
}

#[cfg(test)]
mod tests {
    use super::settle;
    use crate::sys::clock::{id, vdso_clock_gettime};

    #[test]
    fn settle_waits_for_the_coarse_clock_only_where_the_side_changes() {
        let coarse = || vdso_clock_gettime(id::REALTIME_COARSE).unwrap();
        // A change of side (and the first block) returns after the coarse clock moved: a tick
        // came between, so no floor from before the call is ahead of it.
        for (last, next) in [(None, true), (Some(true), false), (Some(false), true)] {
            let mut side = last;
            let before = coarse();
            settle(&mut side, next).unwrap();
            assert!(
                coarse() > before,
                "{last:?} → {next}: the coarse clock did not move"
            );
            assert_eq!(side, Some(next));
        }
        // The same side again keeps it (its wait, none, is not observable without timing).
        let mut side = Some(true);
        settle(&mut side, true).unwrap();
        assert_eq!(side, Some(true));
    }
}
