//! The recorded loop issued as real calls on scratch files, and its live pair: blocks of
//! whole passes alternate ABBA with every stat asking for the times (queried) or for the size
//! only (control), as in [`crate::workload::pair`].
//!
//! Each call is issued once, with one byte where the program moved data (`pwrite`/`pread` at
//! offset 0): the times are what the pair is about. A call on a file the loop holds open goes
//! through its newest descriptor (`fstat`-like `statx(fd, "", AT_EMPTY_PATH)`), else through
//! its path (`statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW)`; a read, write, truncate, fsync,
//! chmod or utimens without a descriptor opens one around the call, on both sides alike).
//! Every call is the raw one: a directory read is one `getdents64`, never glibc's `opendir`,
//! whose hidden `fstat` would ask for the times on the control side too.

use std::ffi::{CString, OsStr};
use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom};
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, UNIX_EPOCH};

use super::{LiveLoop, LiveOp, ROOT};
use crate::error::Context;
use crate::probe::multigrain;
use crate::probe::update::{
    equal_sides_check, multigrain_expected, summarize, CallDelta, PairResult, Pattern,
    CONTROL_MASK, QUERIED_MASK,
};
use crate::sys;
use crate::sys::fs as sfs;
use crate::trace::Syscall;
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

/// A node's live state: its current names (paths) and open descriptors.
struct Node {
    names: Vec<CString>,
    fds: Vec<File>,
}

/// The loop's scratch tree.
struct Tree {
    root: CString,
    nodes: Vec<Node>,
    /// Makes every new name unique.
    counter: u64,
}

fn path_of(c: &CString) -> &Path {
    Path::new(OsStr::from_bytes(c.as_bytes()))
}

impl Tree {
    fn new(root: &Path, live: &LiveLoop) -> crate::error::Result<Tree> {
        let root_c = CString::new(root.as_os_str().as_bytes()).context("a NUL in a path")?;
        let mut nodes = Vec::with_capacity(live.dirs.len());
        for (n, (&dir, &present)) in live.dirs.iter().zip(&live.initial).enumerate() {
            let names = if n == ROOT as usize {
                vec![root_c.clone()]
            } else {
                let name = root.join(format!("{}{n}", if dir { 'd' } else { 'f' }));
                if present {
                    if dir {
                        std::fs::create_dir(&name)
                    } else {
                        std::fs::write(&name, b"x")
                    }
                    .with_context(|| format!("preparing '{}'", name.display()))?;
                }
                let c = CString::new(name.as_os_str().as_bytes()).context("a NUL in a path")?;
                if present {
                    vec![c]
                } else {
                    Vec::new()
                }
            };
            nodes.push(Node {
                names,
                fds: Vec::new(),
            });
        }
        Ok(Tree {
            root: root_c,
            nodes,
            counter: 0,
        })
    }

    fn fresh(&mut self, n: u32, dir: bool) -> std::io::Result<CString> {
        self.counter += 1;
        let mut p = self.root.as_bytes().to_vec();
        p.extend_from_slice(
            format!("/{}{n}.{}", if dir { 'd' } else { 'f' }, self.counter).as_bytes(),
        );
        CString::new(p).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))
    }

    /// The node's newest descriptor, or one opened for the call.
    fn with_file<T>(
        &mut self,
        n: u32,
        write: bool,
        f: impl FnOnce(&File) -> std::io::Result<T>,
    ) -> std::io::Result<T> {
        let node = &self.nodes[n as usize];
        if let Some(fd) = node.fds.last() {
            return f(fd);
        }
        let file = OpenOptions::new()
            .read(true)
            .write(write)
            .open(path_of(&node.names[0]))?;
        f(&file)
    }

    /// Issues one call; `mask` is the stat's (the side's).
    fn issue(&mut self, op: LiveOp, dir: bool, mask: u32) -> std::io::Result<()> {
        let n = op.node;
        let i = n as usize;
        match op.syscall {
            Syscall::Read => self.with_file(n, false, |f| f.read_at(&mut [0u8; 1], 0).map(drop)),
            Syscall::Write => self.with_file(n, true, |f| f.write_at(b"x", 0).map(drop)),
            Syscall::Truncate => self.with_file(n, true, |f| f.set_len(0)),
            Syscall::Fsync => self.with_file(n, !dir, |f| f.sync_all()),
            // As the program asked: fdatasync does not write a timestamp-only change.
            Syscall::Fdatasync => self.with_file(n, !dir, |f| f.sync_data()),
            Syscall::Setattr => self.with_file(n, false, |f| {
                f.set_permissions(std::fs::Permissions::from_mode(if dir {
                    0o700
                } else {
                    0o600
                }))
            }),
            Syscall::Utimens => self.with_file(n, false, |f| {
                let t = UNIX_EPOCH + Duration::from_secs(1_000_000_000);
                f.set_times(std::fs::FileTimes::new().set_accessed(t).set_modified(t))
            }),
            Syscall::Lseek => self.with_file(n, false, |f| {
                let mut f = f;
                f.seek(SeekFrom::Start(0)).map(drop)
            }),
            Syscall::Stat | Syscall::StatNoTimes => {
                let mask = if op.syscall == Syscall::Stat {
                    mask
                } else {
                    CONTROL_MASK
                };
                let node = &self.nodes[i];
                match node.fds.last() {
                    Some(f) => sfs::statx_mtime(f.as_fd(), mask).map(drop),
                    None => sfs::statx_path_mtime(&node.names[0], mask).map(drop),
                }
            }
            Syscall::Create => {
                let name = self.fresh(n, false)?;
                let f = OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create_new(true)
                    .open(path_of(&name))?;
                let node = &mut self.nodes[i];
                node.names.push(name);
                node.fds.push(f);
                Ok(())
            }
            Syscall::Open | Syscall::OpenTrunc => {
                let path = path_of(&self.nodes[i].names[0]);
                let f = if dir {
                    File::open(path)?
                } else {
                    OpenOptions::new()
                        .read(true)
                        .write(true)
                        .truncate(op.syscall == Syscall::OpenTrunc)
                        .open(path)?
                };
                self.nodes[i].fds.push(f);
                Ok(())
            }
            Syscall::Close => {
                drop(self.nodes[i].fds.pop());
                Ok(())
            }
            Syscall::Unlink => {
                let name = self.nodes[i].names.remove(0);
                sfs::unlink(&name)
            }
            Syscall::Rename => {
                let to = self.fresh(n, false)?;
                std::fs::rename(path_of(&self.nodes[i].names[0]), path_of(&to))?;
                self.nodes[i].names[0] = to;
                Ok(())
            }
            Syscall::Link => {
                let to = self.fresh(n, false)?;
                std::fs::hard_link(path_of(&self.nodes[i].names[0]), path_of(&to))?;
                self.nodes[i].names.push(to);
                Ok(())
            }
            Syscall::Mkdir => {
                let name = self.fresh(n, true)?;
                std::fs::create_dir(path_of(&name))?;
                self.nodes[i].names = vec![name];
                Ok(())
            }
            Syscall::Rmdir => {
                let name = self.nodes[i].names.remove(0);
                std::fs::remove_dir(path_of(&name))
            }
            Syscall::Readdir => {
                // One getdents64 per recorded call, through the descriptor the program
                // opened (its opendir's); without one, a descriptor opened for the call.
                let mut buf = [0u8; 4096];
                let node = &self.nodes[i];
                match node.fds.last() {
                    Some(f) => sfs::getdents64(f.as_fd(), &mut buf).map(drop),
                    None => {
                        let dir = File::open(path_of(&node.names[0]))?;
                        sfs::getdents64(dir.as_fd(), &mut buf).map(drop)
                    }
                }
            }
            Syscall::Mmap
            | Syscall::Munmap
            | Syscall::MmapStore
            | Syscall::FifoRead
            | Syscall::FifoWrite
            | Syscall::Other => Ok(()),
        }
    }

    /// The access time of the node `op` reads, where `op` is a call that may move it (a read
    /// or a directory read) and the node has a name or a descriptor; else `None`.
    fn atime_of(&self, op: LiveOp) -> crate::error::Result<Option<sfs::Mtime>> {
        if !matches!(op.syscall, Syscall::Read | Syscall::Readdir) {
            return Ok(None);
        }
        let node = &self.nodes[op.node as usize];
        let t = match (node.fds.last(), node.names.first()) {
            (Some(f), _) => sfs::statx_atime(f.as_fd()),
            (None, Some(name)) => sfs::statx_path_atime(name),
            (None, None) => return Ok(None),
        };
        Ok(Some(t.context("reading a replayed file's access time")?))
    }

    /// `passes` whole passes with the stats' `mask`; ns per pass, and the time of each kind
    /// of call per pass (indexed by `Syscall as usize`): one clock read between two calls.
    fn block(
        &mut self,
        live: &LiveLoop,
        mask: u32,
        passes: u64,
    ) -> crate::error::Result<(f64, ByCall)> {
        let mut by_call = [0u64; Syscall::ALL.len()];
        let started = Instant::now();
        let mut last = started;
        for _ in 0..passes {
            for (k, &op) in live.ops.iter().enumerate() {
                self.issue(op, live.dirs[op.node as usize], mask)
                    .with_context(|| {
                        format!(
                            "the replayed loop's call {k} ({} on {})",
                            op.syscall.name(),
                            if op.node == ROOT {
                                "the scratch directory".to_string()
                            } else {
                                format!("node {}", op.node)
                            }
                        )
                    })?;
                let now = Instant::now();
                by_call[op.syscall as usize] += (now - last).as_nanos() as u64;
                last = now;
            }
        }
        let n = passes as f64;
        Ok((
            started.elapsed().as_nanos() as f64 / n,
            by_call.map(|ns| ns as f64 / n),
        ))
    }
}

/// ns per pass spent in each kind of call, indexed by `Syscall as usize`.
type ByCall = [f64; Syscall::ALL.len()];

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
    let stopped = loop {
        for &q in &[true, false, false, true] {
            if sys::signal::stop_requested() {
                return Err(crate::error::Error::Interrupted);
            }
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

/// The key of [`CallCounts`] that counts the calls after which the file's access time had
/// moved (`touch_atime` stored it): read back with `statx(STATX_ATIME)`, which marks nothing
/// queried, around every read and directory read. No debugfs counter counts atime stores.
pub const ATIME_MOVES: &str = "atime_moves";

/// The kernel's multigrain counters (debugfs `multigrain_timestamps`) of one call of the loop,
/// per pass: with the stats asking for the times, and for the size only; and, for reads and
/// directory reads, whether the access time moved ([`ATIME_MOVES`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CallCounts {
    pub queried: std::collections::BTreeMap<String, f64>,
    pub control: std::collections::BTreeMap<String, f64>,
}

/// Counts what the kernel does at each call of the loop on `dir`'s filesystem: `passes` passes
/// of each side, alternating pass by pass after one warm-up pass each, the counters read
/// before and after every call. The counters are the machine's: what else runs adds a little.
/// Stops between passes on SIGINT/SIGTERM; the scratch directory is removed on every path.
pub fn count_calls(
    dir: &Path,
    live: &LiveLoop,
    passes: u64,
) -> crate::error::Result<Vec<CallCounts>> {
    let read = || multigrain::read().map_err(|e| crate::failure!("{e}"));
    // Readable before any scratch is made.
    read()?;
    let scratch = ScratchDir::create(dir)?;
    let mut tree = Tree::new(scratch.path(), live)?;
    tree.block(live, QUERIED_MASK, 1)?;
    tree.block(live, CONTROL_MASK, 1)?;
    let mut sums = vec![CallCounts::default(); live.ops.len()];
    for _ in 0..passes.max(1) {
        for queried in [true, false] {
            if sys::signal::stop_requested() {
                return Err(crate::error::Error::Interrupted);
            }
            let mask = if queried { QUERIED_MASK } else { CONTROL_MASK };
            // One read between two calls: the counters after one call are those before the
            // next.
            let mut before = read()?;
            for (k, &op) in live.ops.iter().enumerate() {
                let atime_before = tree.atime_of(op)?;
                tree.issue(op, live.dirs[op.node as usize], mask)
                    .with_context(|| format!("the counted loop's call {k}"))?;
                let atime_after = tree.atime_of(op)?;
                let after = read()?;
                let side = if queried {
                    &mut sums[k].queried
                } else {
                    &mut sums[k].control
                };
                if let (Some(a), Some(b)) = (atime_before, atime_after) {
                    *side.entry(ATIME_MOVES.to_string()).or_default() +=
                        f64::from(u8::from(a != b));
                }
                for (name, v) in &after {
                    let d = v.saturating_sub(before.get(name).copied().unwrap_or(*v));
                    *side.entry(name.clone()).or_default() += d as f64;
                }
                before = after;
            }
        }
    }
    drop(tree);
    drop(scratch);
    let n = passes.max(1) as f64;
    for c in &mut sums {
        c.queried.values_mut().for_each(|v| *v /= n);
        c.control.values_mut().for_each(|v| *v /= n);
    }
    Ok(sums)
}
