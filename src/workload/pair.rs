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
//! ([`Pattern::Write`]), or a whole file's life, create → write → statx → close → unlink
//! ([`Pattern::Create`]). Blocks of `iterations` iterations alternate ABBA (queried, control,
//! control, queried) `repetitions` times on one pinned CPU, so a drift of the machine falls on
//! both sides alike; a repetition's Δ is its two queried blocks less its two control blocks.
//! Intervals are percentile bootstraps of the median over repetitions (seeded).
//!
//! Both sides read each `statx`'s mtime: the share of successive mtimes that compare equal is
//! the kernel's own evidence of the knob (queried: none equal on a multigrain filesystem;
//! control: all but one per tick). On a kernel without multigrain the two sides do the same
//! work and must come out equal: [`PairResult::check`] says whether they did.

use std::ffi::CString;
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::scratch::{self, ScratchDir};
use crate::error::Context;
use crate::kernel::Version;
use crate::stats::{self, Estimate};
use crate::sys;
use crate::sys::fs::{self as sfs, Mtime};
use crate::trace::FsKind;

/// `STATX_MTIME | STATX_CTIME` (include/uapi/linux/stat.h): the queried side's mask.
pub const QUERIED_MASK: u32 = 0x40 | 0x80;
/// `STATX_SIZE`: the control's mask.
pub const CONTROL_MASK: u32 = 0x200;
/// The first Linux release with multigrain timestamps.
pub const MULTIGRAIN_SINCE: Version = Version::new(6, 13);
/// Bootstrap resamples of each interval.
const RESAMPLES: usize = 2000;

/// What one iteration of the pair does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Pattern {
    /// `writes` × pwrite, then statx, on one file.
    Write { writes: u32 },
    /// create (`O_CREAT|O_EXCL`), pwrite, statx, close, unlink: a new inode every iteration.
    Create,
}

impl Pattern {
    /// A short name: `write-stat`, `write3-stat`, `create-write-stat-unlink`.
    pub fn name(self) -> String {
        match self {
            Pattern::Write { writes: 1 } => "write-stat".into(),
            Pattern::Write { writes } => format!("write{writes}-stat"),
            Pattern::Create => "create-write-stat-unlink".into(),
        }
    }
}

/// One pair to measure.
#[derive(Debug, Clone)]
pub struct PairConfig {
    /// The directory whose filesystem is measured (a private scratch directory is made in it).
    pub dir: PathBuf,
    pub pattern: Pattern,
    /// Iterations per block.
    pub iterations: u64,
    /// ABBA repetitions.
    pub repetitions: u32,
    pub seed: u64,
    pub pin: bool,
    pub confidence_level: f64,
}

impl PairConfig {
    /// The default pair on `dir`: one write per query, 12 ABBA repetitions of 20,000
    /// iterations per block (about 1 s on ext4 here).
    pub fn new(dir: PathBuf, pattern: Pattern) -> Self {
        PairConfig {
            dir,
            pattern,
            iterations: 20_000,
            repetitions: 12,
            seed: 1,
            pin: true,
            confidence_level: 0.95,
        }
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
    /// `pattern`'s name.
    pub pattern_name: String,
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
}

impl PairResult {
    /// The filesystem kind the models know (`other` for anything else).
    pub fn fs_kind(&self) -> FsKind {
        FsKind::parse(&self.fs_type).unwrap_or(FsKind::Other)
    }
}

/// The file one side works on: the pattern's path, and (for [`Pattern::Write`]) the open file.
struct Target {
    path: CString,
    fd: Option<std::os::fd::OwnedFd>,
}

/// Mtimes of one side, counted across blocks of that side.
#[derive(Default)]
struct Tally {
    prev: Option<Mtime>,
    pairs: u64,
    equal: u64,
}

impl Tally {
    fn push(&mut self, m: Mtime) {
        if let Some(p) = self.prev {
            self.pairs += 1;
            self.equal += u64::from(p == m);
        }
        self.prev = Some(m);
    }

    fn share(&self) -> f64 {
        if self.pairs == 0 {
            0.0
        } else {
            self.equal as f64 / self.pairs as f64
        }
    }
}

/// One block of `n` iterations with `mask`; ns per iteration.
fn block(
    t: &Target,
    pattern: Pattern,
    mask: u32,
    n: u64,
    tally: &mut Tally,
) -> crate::error::Result<f64> {
    let started = Instant::now();
    match pattern {
        Pattern::Write { writes } => {
            let fd = t.fd.as_ref().expect("a write pattern has its file open");
            let f = fd.as_fd();
            for _ in 0..n {
                for _ in 0..writes {
                    sfs::pwrite_byte(f, b'x', 0).context("pwrite in the pair's loop")?;
                }
                tally.push(sfs::statx_mtime(f, mask).context("statx in the pair's loop")?);
            }
        }
        Pattern::Create => {
            let flags = libc::O_RDWR | libc::O_CREAT | libc::O_EXCL;
            // Successive files, not one file: the tally compares each new file's mtime with
            // the previous file's, as make compares a target with its prerequisite.
            for _ in 0..n {
                let fd = sfs::open(&t.path, flags, 0o600).context("creating the pair's file")?;
                let f = fd.as_fd();
                sfs::pwrite_byte(f, b'x', 0).context("pwrite in the pair's loop")?;
                tally.push(sfs::statx_mtime(f, mask).context("statx in the pair's loop")?);
                sfs::close(fd).context("closing the pair's file")?;
                sfs::unlink(&t.path).context("unlinking the pair's file")?;
            }
        }
    }
    Ok(started.elapsed().as_nanos() as f64 / n as f64)
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
    let point = stats::median(xs).unwrap_or(f64::NAN);
    let reps = stats::bootstrap(xs, RESAMPLES, seed, |b| stats::quantile_in_place(b, 0.5));
    stats::percentile_interval(&reps, point, level).unwrap_or(Estimate::exact(point))
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

/// Measures the pair on `cfg.dir`'s filesystem. Stops between blocks on SIGINT/SIGTERM
/// (`Error::Interrupted`); the scratch directory is removed on every path.
pub fn measure(cfg: &PairConfig) -> crate::error::Result<PairResult> {
    crate::ensure!(
        cfg.repetitions >= 2 && cfg.iterations >= 1,
        "the pair needs at least 2 repetitions of 1 iteration"
    );
    let scratch = ScratchDir::create(&cfg.dir)?;
    let fs = scratch::fs_info(scratch.path());
    let mut p = scratch.path().as_os_str().as_bytes().to_vec();
    p.extend_from_slice(b"/pair");
    let path = CString::new(p).context("a scratch path with a NUL byte")?;
    let fd = match cfg.pattern {
        Pattern::Write { writes } => {
            crate::ensure!(
                (1..=64).contains(&writes),
                "writes per query must be 1 to 64"
            );
            let flags = libc::O_RDWR | libc::O_CREAT | libc::O_EXCL;
            Some(sfs::open(&path, flags, 0o600).context("creating the pair's file")?)
        }
        Pattern::Create => None,
    };
    let target = Target { path, fd };
    let restore = sys::cpu::allowed_cpus().ok();
    let pinned = if cfg.pin {
        sys::cpu::current_cpu()
            .and_then(|c| sys::cpu::pin_to_cpu(c).map(|()| c))
            .ok()
    } else {
        None
    };
    let result = sample(cfg, &target);
    if let (Some(_), Some(cpus)) = (pinned, restore) {
        let _ = sys::cpu::set_affinity(&cpus);
    }
    let (queried, control, tq, tc) = result?;
    drop(target);
    drop(scratch);
    let (queried_ns, control_ns, delta_ns, ratio, deltas) =
        summarize(&queried, &control, cfg.seed, cfg.confidence_level);
    let kernel_release = sys::cpu::kernel_release().ok();
    let expected = multigrain_expected(kernel_release.as_deref(), &fs.fs_type);
    let observed = tq.pairs > 0 && tq.share() < 0.5 && tc.share() > 0.5;
    Ok(PairResult {
        dir: cfg.dir.display().to_string(),
        fs_type: fs.fs_type,
        mount_options: fs.options,
        kernel_release,
        pattern: cfg.pattern,
        pattern_name: cfg.pattern.name(),
        iterations_per_block: cfg.iterations,
        repetitions: cfg.repetitions,
        pinned_cpu: pinned,
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
    })
}

type Sampled = (Vec<f64>, Vec<f64>, Tally, Tally);

fn sample(cfg: &PairConfig, t: &Target) -> crate::error::Result<Sampled> {
    let (mut tq, mut tc) = (Tally::default(), Tally::default());
    // Warm-up: one block of each side, not kept (the file's blocks, the caches, the journal).
    let warm = cfg.iterations.min(5_000);
    block(t, cfg.pattern, QUERIED_MASK, warm, &mut Tally::default())?;
    block(t, cfg.pattern, CONTROL_MASK, warm, &mut Tally::default())?;
    let (mut queried, mut control) = (Vec::new(), Vec::new());
    for _ in 0..cfg.repetitions {
        for &q in &[true, false, false, true] {
            if sys::signal::stop_requested() {
                return Err(crate::error::Error::Interrupted);
            }
            if q {
                queried.push(block(
                    t,
                    cfg.pattern,
                    QUERIED_MASK,
                    cfg.iterations,
                    &mut tq,
                )?);
            } else {
                control.push(block(
                    t,
                    cfg.pattern,
                    CONTROL_MASK,
                    cfg.iterations,
                    &mut tc,
                )?);
            }
        }
    }
    Ok((queried, control, tq, tc))
}

/// The directory a path names, checked: it exists, is a directory, and is writable.
pub fn check_dir(dir: &Path) -> Result<(), String> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(format!("'{}' is not a directory", dir.display())),
        Err(e) => Err(format!("'{}': {e}", dir.display())),
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
