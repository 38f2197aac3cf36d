//! The recorded loop's live pair: blocks of whole passes alternate ABBA with every stat asking
//! for the times (queried) or for the size only (control), as in [`crate::workload::pair`],
//! each call timed where it is issued, until the Δ decides or the budget ends.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::exec::{ByCall, Tree};
use super::LiveLoop;
use crate::probe::multigrain;
use crate::probe::update::{
    equal_sides_check, multigrain_expected, summarize, CallDelta, PairResult, Pattern,
    CONTROL_MASK, QUERIED_MASK,
};
use crate::sys;
use crate::trace::Syscall;
use crate::workload::pair::settle;
use crate::workload::scratch::{self, ScratchDir};

/// One live replay to measure.
#[derive(Debug, Clone)]
pub struct ReplayConfig {
    /// The directory whose filesystem is measured.
    pub dir: PathBuf,
    /// ABBA repetitions at least; more are added until the Δ decides or `budget` ends.
    pub repetitions: u32,
    /// The share of |Δ| the Δ's interval's half-width must be within to stop adding
    /// repetitions.
    pub goal_fraction: f64,
    /// The most time the repetitions take (the first `repetitions` run whatever it says).
    pub budget: Duration,
    /// About how long one block runs (whole passes of the loop).
    pub block: Duration,
    pub seed: u64,
    pub pin: bool,
    pub confidence_level: f64,
}

impl ReplayConfig {
    /// At least 200 ABBA repetitions of about 10 ms blocks (about 8 s), then more until the
    /// Δ's interval is within ±10% of Δ or 30 s have passed: a program's Δ is a small share of
    /// its pass, so many short repetitions, each of several passes (the switch of side at a
    /// block's start is shared by all its passes), and the two sides' blocks interleave finely
    /// enough that a journal's or log's periodic work falls on both.
    pub fn new(dir: PathBuf) -> Self {
        ReplayConfig {
            dir,
            repetitions: 200,
            goal_fraction: 0.10,
            budget: Duration::from_secs(30),
            block: Duration::from_millis(10),
            seed: 1,
            pin: true,
            confidence_level: 0.95,
        }
    }
}

/// Each kind of call's Δ per pass: the ABBA repetitions' queried − control medians, with
/// their bootstrap intervals, for the kinds the loop issues.
fn by_call_deltas(
    cfg: &ReplayConfig,
    live: &LiveLoop,
    queried: &[ByCall],
    control: &[ByCall],
) -> Vec<CallDelta> {
    let reps = queried.len().min(control.len()) / 2;
    Syscall::ALL
        .iter()
        .filter_map(|&s| {
            let k = s as usize;
            let calls = live.ops.iter().filter(|o| o.syscall == s).count() as u32;
            if calls == 0 {
                return None;
            }
            let deltas: Vec<f64> = (0..reps)
                .map(|r| {
                    (queried[2 * r][k] + queried[2 * r + 1][k]
                        - control[2 * r][k]
                        - control[2 * r + 1][k])
                        / 2.0
                })
                .collect();
            Some(CallDelta {
                syscall: s.name().to_string(),
                calls_per_pass: calls,
                delta_ns: crate::probe::update::median_interval(
                    &deltas,
                    cfg.seed,
                    cfg.confidence_level,
                ),
            })
        })
        .collect()
}

/// Measures the recorded loop's pair on `cfg.dir`'s filesystem. Stops between blocks on
/// SIGINT/SIGTERM; the scratch directory is removed on every path.
pub fn measure(cfg: &ReplayConfig, live: &LiveLoop) -> crate::error::Result<PairResult> {
    crate::ensure!(
        cfg.repetitions >= 2,
        "the pair needs at least 2 repetitions"
    );
    let scratch = ScratchDir::create(&cfg.dir)?;
    let fs = scratch::fs_info(scratch.path());
    let mut tree = Tree::new(scratch.path(), live)?;
    let restore = sys::cpu::allowed_cpus().ok();
    let pinned = if cfg.pin {
        crate::workload::pair::pin_here()
    } else {
        None
    };
    let result = sample(cfg, live, &mut tree);
    if let (Some(_), Some(cpus)) = (pinned, restore) {
        let _ = sys::cpu::set_affinity(&cpus);
    }
    let Sampled {
        queried,
        control,
        queried_by,
        control_by,
        passes,
        counted,
        stopped,
    } = result?;
    let by_call = by_call_deltas(cfg, live, &queried_by, &control_by);
    let (kernel_counts, kernel_counts_absent) = match counted.finish() {
        Ok(c) => (Some(c), None),
        Err(e) => (None, Some(e)),
    };
    drop(tree);
    drop(scratch);
    let (queried_ns, control_ns, delta_ns, ratio, deltas) =
        summarize(&queried, &control, cfg.seed, cfg.confidence_level);
    let kernel_release = sys::cpu::kernel_release().ok();
    let expected = multigrain_expected(kernel_release.as_deref(), &fs.fs_type);
    Ok(PairResult {
        dir: cfg.dir.display().to_string(),
        fs_type: fs.fs_type,
        mount_options: fs.options,
        kernel_release,
        pattern: Pattern::Recorded {
            ops: live.len() as u32,
        },
        pattern_name: format!(
            "recorded {} ({} calls, {} stats)",
            live.source,
            live.len(),
            live.stats()
        ),
        tasks: 1,
        iterations_per_block: passes,
        repetitions: (queried.len() / 2) as u32,
        pinned_cpu: pinned,
        queried_ns,
        control_ns,
        delta_ns,
        ratio,
        // A loop of many files has no one file's successive mtimes to compare: the kernel's
        // evidence is the write-stat pair's on the same filesystem.
        queried_equal_mtimes: 0.0,
        control_equal_mtimes: 0.0,
        multigrain_expected: expected,
        multigrain_observed: expected,
        check: (!expected).then(|| equal_sides_check(delta_ns, control_ns)),
        deltas_ns: deltas,
        kernel_counts,
        kernel_counts_absent,
        stopped: Some(stopped.to_string()),
        by_call,
    })
}

/// Repetitions added between two looks at the Δ's interval.
const LOOK_EVERY: usize = 50;

/// The blocks of both sides (ns per pass, and per kind of call), in the order measured.
struct Sampled {
    queried: Vec<f64>,
    control: Vec<f64>,
    queried_by: Vec<ByCall>,
    control_by: Vec<ByCall>,
    passes: u64,
    counted: multigrain::Tally,
    stopped: &'static str,
}

fn sample(cfg: &ReplayConfig, live: &LiveLoop, tree: &mut Tree) -> crate::error::Result<Sampled> {
    // Warm-up and calibration: one pass of each side, then as many as fill a block.
    tree.block(live, QUERIED_MASK, 1)?;
    let one = tree.block(live, CONTROL_MASK, 1)?.0.max(1.0);
    let passes = ((cfg.block.as_nanos() as f64 / one) as u64).clamp(1, 1_000_000);
    let (mut queried, mut control) = (Vec::new(), Vec::new());
    let (mut queried_by, mut control_by) = (Vec::new(), Vec::new());
    let mut counted = multigrain::Tally::start();
    let started = Instant::now();
    let mut deltas = Vec::new();
    let mut last = None;
    let stopped = loop {
        for &q in &[true, false, false, true] {
            if sys::signal::stop_requested() {
                return Err(crate::error::Error::Interrupted);
            }
            // The floor a queried block raised must not run into a control block.
            settle(&mut last, q)?;
            let before = counted.before();
            let (ns, by) = tree.block(live, if q { QUERIED_MASK } else { CONTROL_MASK }, passes)?;
            if q {
                queried.push(ns);
                queried_by.push(by);
            } else {
                control.push(ns);
                control_by.push(by);
            }
            counted.after(before, q, passes);
        }
        let n = queried.len();
        deltas.push((queried[n - 2] + queried[n - 1] - control[n - 2] - control[n - 1]) / 2.0);
        let reps = deltas.len();
        let min = cfg.repetitions as usize;
        if reps < min || (reps - min) % LOOK_EVERY != 0 {
            continue;
        }
        // The median's bootstrap interval: one descheduled block moves no bound by itself.
        let d = crate::probe::update::median_interval(&deltas, cfg.seed, cfg.confidence_level);
        if (d.upper - d.lower) / 2.0 <= cfg.goal_fraction * d.point.abs() {
            break "decided";
        }
        if started.elapsed() >= cfg.budget {
            break "budget";
        }
    };
    Ok(Sampled {
        queried,
        control,
        queried_by,
        control_by,
        passes,
        counted,
        stopped,
    })
}
