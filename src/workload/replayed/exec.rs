//! The recorded loop issued as real calls on scratch files (its live pair is in
//! [`super::live_pair`]), and counted call by call with the kernel's counters.
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
use std::path::Path;
use std::time::{Duration, Instant, UNIX_EPOCH};

use super::{LiveLoop, LiveOp, ROOT};
use crate::error::Context;
use crate::probe::multigrain;
use crate::probe::update::{CONTROL_MASK, QUERIED_MASK};
use crate::sys;
use crate::sys::fs as sfs;
use crate::trace::Syscall;
use crate::workload::scratch::ScratchDir;

/// ns per pass spent in each kind of call, indexed by `Syscall as usize`.
pub(super) type ByCall = [f64; Syscall::ALL.len()];

/// A node's live state: its current names (paths) and open descriptors.
struct Node {
    names: Vec<CString>,
    fds: Vec<File>,
}

/// The loop's scratch tree.
pub(super) struct Tree {
    root: CString,
    nodes: Vec<Node>,
    /// Makes every new name unique.
    counter: u64,
}

fn path_of(c: &CString) -> &Path {
    Path::new(OsStr::from_bytes(c.as_bytes()))
}

impl Tree {
    pub(super) fn new(root: &Path, live: &LiveLoop) -> crate::error::Result<Tree> {
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
    pub(super) fn block(
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

/// What [`count_calls`] counted: each call's counters, and how long a counted pass of each
/// side took (ns, the counter reads between the calls included): the speed at which a model
/// must replay the loop to put the ticks where the kernel met them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Counted {
    pub calls: Vec<CallCounts>,
    pub queried_ns_per_pass: f64,
    pub control_ns_per_pass: f64,
}

/// Counts what the kernel does at each call of the loop on `dir`'s filesystem: for each side,
/// from the next tick (so that no floor of the other side is ahead of the coarse clock,
/// [`crate::workload::pair::settle`]), one warm-up pass and then `passes` passes back to back,
/// as a program runs its own loop, the counters read before and after every call. The
/// counters are the machine's: what else runs adds a little. Stops between passes on
/// SIGINT/SIGTERM; the scratch directory is removed on every path.
pub fn count_calls(dir: &Path, live: &LiveLoop, passes: u64) -> crate::error::Result<Counted> {
    let read = || multigrain::read().map_err(|e| crate::failure!("{e}"));
    // Readable before any scratch is made.
    read()?;
    let scratch = ScratchDir::create(dir)?;
    let mut tree = Tree::new(scratch.path(), live)?;
    let mut sums = vec![CallCounts::default(); live.ops.len()];
    let mut took = [0.0f64; 2];
    let mut last = None;
    let n = passes.max(1);
    for queried in [true, false] {
        let mask = if queried { QUERIED_MASK } else { CONTROL_MASK };
        crate::workload::pair::settle(&mut last, queried)?;
        // The state a counted pass finds is its own side's.
        tree.block(live, mask, 1)?;
        let started = Instant::now();
        for _ in 0..n {
            if sys::signal::stop_requested() {
                return Err(crate::error::Error::Interrupted);
            }
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
        took[usize::from(!queried)] = started.elapsed().as_nanos() as f64 / n as f64;
    }
    drop(tree);
    drop(scratch);
    for c in &mut sums {
        c.queried.values_mut().for_each(|v| *v /= n as f64);
        c.control.values_mut().for_each(|v| *v /= n as f64);
    }
    Ok(Counted {
        calls: sums,
        queried_ns_per_pass: took[0],
        control_ns_per_pass: took[1],
    })
}
