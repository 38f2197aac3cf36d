//! The live knob pair's result model and the update price a profile carries
//! (`filesystems[]`): the types, and the pure arithmetic of the pair's intervals. The pair is
//! measured by [`crate::workload::pair`]; the price is computed by
//! [`crate::sim::update_price`], which knows the kernel models.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::kernel::Version;
use crate::price::Term;
use crate::probe::multigrain::PairCounts;
use crate::stats::{self, Estimate};
use crate::trace::FsKind;

/// `STATX_MTIME | STATX_CTIME` (include/uapi/linux/stat.h): the queried side's mask.
pub const QUERIED_MASK: u32 = 0x40 | 0x80;
/// `STATX_SIZE`: the control's mask.
pub const CONTROL_MASK: u32 = 0x200;
/// The first Linux release with multigrain timestamps.
pub const MULTIGRAIN_SINCE: Version = Version::new(6, 13);
/// Bootstrap resamples of each interval.
const RESAMPLES: usize = 2000;

pub use crate::price::Pattern;

/// Repetitions a pair adds between two looks at its Δ's interval.
pub const LOOK_EVERY: u32 = 8;

/// Whether a pair's Δ is known well enough to stop adding repetitions: its interval within
/// ±10% of Δ, or within ±1% of the control side's time per iteration (a Δ near zero is then
/// known to be small).
pub fn decided(delta: Estimate, control_ns: f64) -> bool {
    let half = (delta.upper - delta.lower) / 2.0;
    half <= (0.10 * delta.point.abs()).max(0.01 * control_ns.abs())
}

/// One pair to measure.
#[derive(Debug, Clone)]
pub struct PairConfig {
    /// The directory whose filesystem is measured (a private scratch directory is made in it).
    pub dir: PathBuf,
    pub pattern: Pattern,
    /// Iterations per block; with `block`, the most per block.
    pub iterations: u64,
    /// About how long one block runs: the iterations per block are then set from the speed of
    /// a warm-up block (at most `iterations`). `None`: `iterations` per block, whatever they
    /// take (a guest under emulation, whose speed is not the host's).
    pub block: Option<std::time::Duration>,
    /// ABBA repetitions at most.
    pub repetitions: u32,
    /// ABBA repetitions at least: after these, every [`LOOK_EVERY`] more the pair stops once
    /// its Δ's interval is within ±10% of Δ or ±1% of the control side's time per iteration
    /// (equal to `repetitions`: always `repetitions`).
    pub min_repetitions: u32,
    pub seed: u64,
    pub pin: bool,
    pub confidence_level: f64,
    /// Tasks (threads) running the loop at once, each on its own file and, where the machine
    /// has the CPUs, its own CPU (the model replays them in turn, sharing one multigrain floor).
    pub tasks: u32,
}

impl PairConfig {
    /// The default pair on `dir`: 48 ABBA repetitions of blocks of about 4 ms (at most 20,000
    /// iterations), under a second per pair. Many short blocks beat a few long ones: a
    /// disturbance (another job, the journal's commit) spoils one short block, which the
    /// median over repetitions then leaves out, where it moves a long block's mean. On a quiet
    /// 2-vCPU guest, 48 × 4 ms blocks gave a chmod-stat-read16 interval 10 to 20 times
    /// narrower than 12 blocks of 20,000 iterations, in a tenth of the time.
    pub fn new(dir: PathBuf, pattern: Pattern) -> Self {
        PairConfig {
            dir,
            pattern,
            iterations: 20_000,
            block: Some(std::time::Duration::from_millis(4)),
            repetitions: 48,
            min_repetitions: 16,
            seed: 1,
            pin: true,
            confidence_level: 0.95,
            tasks: 1,
        }
    }

    /// A pair that prices `dir`'s update (write-stat) or its query (chmod-stat); `quick`: 24
    /// repetitions of 2 ms blocks (`probe --quick`, `report --quick`).
    pub fn for_price(dir: PathBuf, pattern: Pattern, quick: bool) -> Self {
        let mut p = PairConfig::new(dir, pattern);
        if quick {
            p.block = Some(std::time::Duration::from_millis(2));
            p.repetitions = 24;
            p.min_repetitions = 8;
        }
        p
    }
}

/// The live pair's figures on one filesystem.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairResult {
    pub dir: String,
    pub fs_type: String,
    pub mount_options: Vec<String>,
    pub kernel_release: Option<String>,
    pub pattern: Pattern,
    /// `pattern`'s name (with `× N tasks` where several ran it).
    pub pattern_name: String,
    /// Tasks that ran the loop at once, each on its own file; the ns figures are per task's
    /// iteration (the mean over tasks of each block).
    #[serde(default = "one_task")]
    pub tasks: u32,
    pub iterations_per_block: u64,
    pub repetitions: u32,
    pub pinned_cpu: Option<usize>,
    /// ns per iteration with the times asked for (queried), and without (control).
    pub queried_ns: Estimate,
    pub control_ns: Estimate,
    /// queried − control, ns per iteration: what the knob costs on this loop.
    pub delta_ns: Estimate,
    /// queried / control.
    pub ratio: Estimate,
    /// Share of successive statx mtimes (of one file) that compare equal, per side.
    pub queried_equal_mtimes: f64,
    pub control_equal_mtimes: f64,
    /// The kernel release is ≥ 6.13 and the filesystem one with multigrain timestamps.
    pub multigrain_expected: bool,
    /// The kernel showed it: queried mtimes all differ, control ones mostly equal.
    pub multigrain_observed: bool,
    /// A kernel or filesystem without multigrain: whether the two sides came out equal (the
    /// pair's own check), in words; `None` where multigrain is observed.
    pub check: Option<String>,
    /// The per-repetition Δ (ns per iteration), in the order measured.
    pub deltas_ns: Vec<f64>,
    /// The kernel's own multigrain counters per iteration of each side, read around every
    /// measured block ([`crate::probe::multigrain`]); `None` where they could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_counts: Option<PairCounts>,
    /// Why `kernel_counts` is `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_counts_absent: Option<String>,
    /// How a replayed program's pair stopped adding repetitions: `decided` (the Δ's interval
    /// within the goal's share of Δ) or `budget` (its time ran out first); absent for a
    /// pattern's pair, which runs its repetitions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// A replayed program's Δ by kind of call: each call timed where it is issued (one clock
    /// read between two calls, the same on both sides), summed per pass and kind; empty for a
    /// pattern's pair.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_call: Vec<CallDelta>,
}

/// One kind of call's share of a replayed program's Δ.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallDelta {
    /// The call's name in scenario files (`write`, `setattr`, `create`, …).
    pub syscall: String,
    /// Calls of this kind per pass.
    pub calls_per_pass: u32,
    /// The time spent in them per pass, queried − control (ns): the median of the ABBA
    /// repetitions' differences, with its bootstrap interval.
    pub delta_ns: Estimate,
}

fn one_task() -> u32 {
    1
}

impl crate::price::Pair for PairResult {
    fn pattern(&self) -> Pattern {
        self.pattern
    }
    fn name(&self) -> &str {
        &self.pattern_name
    }
    fn delta(&self) -> Estimate {
        self.delta_ns
    }
    fn tail_delta(&self) -> Option<Estimate> {
        let tail = self.pattern.tail()?;
        self.by_call
            .iter()
            .find(|c| c.syscall == tail.syscall.name() && c.calls_per_pass == tail.calls)
            .map(|c| c.delta_ns)
    }
    fn multigrain(&self) -> bool {
        self.multigrain_observed
    }
    fn fs_type(&self) -> &str {
        &self.fs_type
    }
    fn fs_kind(&self) -> FsKind {
        PairResult::fs_kind(self)
    }
}

impl PairResult {
    /// The filesystem kind the models know (`other` for anything else).
    pub fn fs_kind(&self) -> FsKind {
        FsKind::parse(&self.fs_type).unwrap_or(FsKind::Other)
    }
}

/// Whether a kernel release and filesystem type have multigrain timestamps.
pub fn multigrain_expected(kernel_release: Option<&str>, fs_type: &str) -> bool {
    kernel_release
        .and_then(Version::parse)
        .is_some_and(|v| v >= MULTIGRAIN_SINCE)
        && FsKind::parse(fs_type).is_some_and(FsKind::linux_multigrain)
}

/// The median of `xs` with its percentile-bootstrap interval.
pub fn median_interval(xs: &[f64], seed: u64, level: f64) -> Estimate {
    stats::median_bootstrap(xs, RESAMPLES, seed, level).unwrap_or(Estimate::exact(f64::NAN))
}

/// The sides' figures, and the check, from per-block ns (each side's blocks in the order
/// measured, two per repetition) and the mtime shares (pure; unit-tested on recorded pairs).
pub fn summarize(
    queried: &[f64],
    control: &[f64],
    seed: u64,
    level: f64,
) -> (Estimate, Estimate, Estimate, Estimate, Vec<f64>) {
    let reps = queried.len().min(control.len()) / 2;
    let mut deltas = Vec::with_capacity(reps);
    let mut ratios = Vec::with_capacity(reps);
    let mut q_rep = Vec::with_capacity(reps);
    let mut c_rep = Vec::with_capacity(reps);
    for r in 0..reps {
        let q = (queried[2 * r] + queried[2 * r + 1]) / 2.0;
        let c = (control[2 * r] + control[2 * r + 1]) / 2.0;
        deltas.push(q - c);
        ratios.push(q / c);
        q_rep.push(q);
        c_rep.push(c);
    }
    (
        median_interval(&q_rep, seed, level),
        median_interval(&c_rep, seed + 1, level),
        median_interval(&deltas, seed + 2, level),
        median_interval(&ratios, seed + 3, level),
        deltas,
    )
}

/// The check of a pair on a kernel or filesystem without multigrain: the two sides must
/// come out equal (Δ's interval holds 0, or Δ is within 2% of the control).
pub fn equal_sides_check(delta: Estimate, control: Estimate) -> String {
    let holds = (delta.lower <= 0.0 && delta.upper >= 0.0)
        || delta.point.abs() <= 0.02 * control.point.abs();
    format!(
        "no multigrain here, so both sides do the same work: Δ {:+.1} [{:+.1}, {:+.1}] ns per \
         iteration against {:.1} ns, {}",
        delta.point,
        delta.lower,
        delta.upper,
        control.point,
        if holds {
            "equal as they must be (the pair checks out)"
        } else {
            "NOT equal: something besides the question differs between the sides (noise, \
             another task, the filesystem): do not trust a price from this pair"
        }
    )
}

/// One filesystem's update price, as the profile carries it (`filesystems[]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FsUpdate {
    /// The directory measured, as given.
    pub dir: String,
    pub fs_type: String,
    pub mount_options: Vec<String>,
    /// The live kernel showed multigrain timestamps on it (the pair's mtimes).
    pub multigrain: bool,
    /// Each term's price with its interval, one field per [`crate::price::Term`] named by
    /// [`crate::price::Term::field`] (`update_ns`, `query_ns`, …: docs/schema.md lists them).
    /// `update_ns` and `query_ns` are `null` where not priced, the others absent; then the
    /// terms priced after them hold their work (see `reason`).
    #[serde(flatten)]
    pub prices: crate::price::fields::FsPrices,
    /// The pair `query_ns` comes from: `write-stat` where the question adds no update to the
    /// write (btrfs), so that pair isolates what it adds to a write; `chmod-stat` elsewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query_pattern: Option<String>,
    /// The pairs each priced term comes from, under its field (`update_ns`: `write-stat
    /// pair`, `floor_read_ns`: `chmod-stat-read16 pair against chmod-stat`, …).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub priced_by: std::collections::BTreeMap<String, String>,
    /// How it was priced, or why it could not be.
    pub reason: String,
    /// The model whose counts were subtracted and divided by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The model's queried − control reads, priced (ns per iteration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reads_delta_ns: Option<f64>,
    /// The model's queried − control updates per iteration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updates_delta: Option<f64>,
    /// The model's queried − control ctime queries per iteration of the write-stat pair.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queries_delta: Option<f64>,
    /// The model's queried − control ctime swaps per iteration of the same pair.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swaps_delta: Option<f64>,
    /// The live pair it comes from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pair: Option<PairResult>,
    /// The chmod-stat pair: it prices the query where write-stat cannot, and the floored read
    /// with `floor_pair`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query_pair: Option<PairResult>,
    /// The chmod-stat pair with reads after it, in a run: it prices the floored read where
    /// `floor_apart_pair` does not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floor_pair: Option<PairResult>,
    /// The chmod-stat pair with reads after it, each between an open and a close of another
    /// file, that prices the floored read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floor_apart_pair: Option<PairResult>,
    /// The chmod-stat pair with 16 reads of the same file that prices the in-path excess.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fine_pair: Option<PairResult>,
    /// The chmod-stat pair with 1 read of the same file: `fine_pair`'s base.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fine_base_pair: Option<PairResult>,
    /// The chmod-stat pair with chmods of 16 other files after it, in a run: it prices the
    /// ctime swap where `swap_apart_pair` does not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swap_pair: Option<PairResult>,
    /// The chmod-stat pair with chmods of 16 other files after it, each between an open and a
    /// close of another file, that prices the ctime swap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swap_apart_pair: Option<PairResult>,
    /// The create-write-stat-write-unlink pair that prices a new inode's first update.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_pair: Option<PairResult>,
    /// The write-read-stat pair that prices the update where write-stat cannot (btrfs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_pair: Option<PairResult>,
    /// The write-stat-fsync pair that prices the journal commit a full fsync forces (ext4,
    /// xfs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_pair: Option<PairResult>,
}

impl FsUpdate {
    /// `term`'s price on this filesystem, where priced.
    pub fn price(&self, term: Term) -> Option<Estimate> {
        self.prices.get(term)
    }

    /// The pairs `term`'s price comes from, in words, where priced.
    pub fn priced_by(&self, term: Term) -> Option<&str> {
        self.priced_by.get(term.field()).map(String::as_str)
    }

    /// Keeps `p` in the field its pattern fills (`pair`, `query_pair`, …).
    pub fn keep_pair(&mut self, p: &PairResult) {
        use crate::price::recipe::{
            CHMOD, FINE, FINE_BASE, FIRST, FLOOR, FLOOR_APART, SWAP, SWAP_APART, WRITE,
            WRITE_FSYNC, WRITE_READ,
        };
        let slot = match p.pattern {
            x if x == WRITE => &mut self.pair,
            x if x == CHMOD => &mut self.query_pair,
            x if x == FLOOR => &mut self.floor_pair,
            x if x == FLOOR_APART => &mut self.floor_apart_pair,
            x if x == FINE => &mut self.fine_pair,
            x if x == FINE_BASE => &mut self.fine_base_pair,
            x if x == SWAP => &mut self.swap_pair,
            x if x == SWAP_APART => &mut self.swap_apart_pair,
            x if x == FIRST => &mut self.first_pair,
            x if x == WRITE_READ => &mut self.read_pair,
            x if x == WRITE_FSYNC => &mut self.sync_pair,
            _ if self.pair.is_none() => &mut self.pair,
            _ => return,
        };
        *slot = Some(p.clone());
    }

    /// The pairs kept, write-stat (or the calibration) first.
    pub fn pairs(&self) -> Vec<&PairResult> {
        [
            &self.pair,
            &self.query_pair,
            &self.floor_pair,
            &self.floor_apart_pair,
            &self.fine_pair,
            &self.fine_base_pair,
            &self.swap_pair,
            &self.swap_apart_pair,
            &self.first_pair,
            &self.read_pair,
            &self.sync_pair,
        ]
        .into_iter()
        .flatten()
        .collect()
    }

    /// The filesystem kind the models know.
    pub fn fs_kind(&self) -> FsKind {
        FsKind::parse(&self.fs_type).unwrap_or(FsKind::Other)
    }

    /// A short label: `ext4 (/mnt/x; rw,relatime)`.
    pub fn label(&self) -> String {
        format!(
            "{} ({}; {})",
            self.fs_type,
            self.dir,
            self.mount_options.join(",")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abba_blocks_pair_into_repetitions() {
        // Two repetitions: queried blocks 500, 510 | 520, 500; control 400, 410 | 405, 395.
        let (q, c, d, r, deltas) = summarize(
            &[500.0, 510.0, 520.0, 500.0],
            &[400.0, 410.0, 405.0, 395.0],
            1,
            0.95,
        );
        assert_eq!(deltas, vec![100.0, 110.0]);
        assert_eq!(d.point, 105.0);
        assert!(d.lower >= 100.0 && d.upper <= 110.0);
        assert_eq!(q.point, 507.5);
        assert_eq!(c.point, 402.5);
        assert!((r.point - (505.0 / 405.0 + 510.0 / 400.0) / 2.0).abs() < 1e-12);
    }

    #[test]
    fn the_check_says_whether_equal_sides_are_equal() {
        let c = Estimate::exact(400.0);
        let equal = Estimate {
            point: 3.0,
            lower: -2.0,
            upper: 6.0,
        };
        assert!(equal_sides_check(equal, c).contains("equal as they must be"));
        let differ = Estimate {
            point: 60.0,
            lower: 50.0,
            upper: 70.0,
        };
        assert!(equal_sides_check(differ, c).contains("NOT equal"));
    }

    #[test]
    fn multigrain_needs_the_release_and_the_filesystem() {
        assert!(multigrain_expected(Some("6.18.44-fc"), "ext4"));
        assert!(multigrain_expected(Some("6.13.0"), "tmpfs"));
        assert!(!multigrain_expected(
            Some("6.12.57+deb13-cloud-amd64"),
            "ext4"
        ));
        assert!(!multigrain_expected(Some("6.18.0"), "nfs"));
        assert!(!multigrain_expected(None, "xfs"));
        assert_eq!(Pattern::Write { writes: 3 }.name(), "write3-stat");
    }
}
