//! A recorded program's file syscalls as a loop the live pair can run: the model's validation
//! on a real program's mix of calls (`simulate update --validate --validate-strace LOG`).
//!
//! `tscope record` (strace) gives the calls of a program such as a `git add` / `git status`
//! cycle or a `make` step, with the inode each acts on. [`LiveLoop::import`] keeps the calls
//! that change or read a file's times and can be issued again on scratch files, and makes them
//! a loop that repeats:
//!
//! - every inode becomes a scratch file `fN` (or, when the program made or removed it as a
//!   directory, a scratch directory `dN`); every other directory the program named (its
//!   working directory, the parents of what it created) is the one scratch directory, the
//!   parent of every file, so that the model and the live loop agree on which directory each
//!   create, unlink, rename and link changes;
//! - an inode whose first call is not its creation exists before the loop starts;
//! - a call the state makes impossible (a read of a file the loop has removed, a close of a
//!   file it never opened) is left out, and counted;
//! - what one pass leaves different from how it found it (files still open, files created and
//!   kept, files removed) is put back by calls appended at its end: the loop then repeats
//!   exactly, and the appended calls are in the model's loop too;
//! - mmap, munmap, stores through a mapping and FIFO calls are left out (counted): the pair
//!   replays plain file calls only.
//!
//! [`LiveLoop::scenario`] is the same loop as the models see it, on the filesystem measured,
//! with its stats asking for the times (queried) or not (control). The executor and the pair
//! are in [`exec`].

use std::collections::BTreeMap;
use std::path::Path;

use crate::trace::scenario::{bounded_iterations, needs_dir};
use crate::trace::strace::import::{ImportOptions, StraceImport};
use crate::trace::{CompiledScenario, FsKind, Op, Syscall, NO_INODE};

pub mod exec;
pub mod live_pair;

pub use exec::{count_calls, CallCounts, Counted, ATIME_MOVES};
pub use live_pair::{measure, ReplayConfig};

/// The most calls a loop may keep (a longer recording is refused: record a shorter run).
pub const MAX_OPS: usize = 200_000;

/// The scratch directory's node: the parent of every file, and every directory the program
/// named but did not make or remove.
pub const ROOT: u32 = 0;

/// One call of the loop, on node `node` (0 is the scratch directory).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LiveOp {
    pub syscall: Syscall,
    pub node: u32,
}

/// A recorded program's loop of file calls.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveLoop {
    /// The recording it came from, for the row's name.
    pub source: String,
    pub ops: Vec<LiveOp>,
    /// Per node: a directory (`dN`, or the root) rather than a file (`fN`).
    pub dirs: Vec<bool>,
    /// Per node: present before the loop starts.
    pub initial: Vec<bool>,
    /// Calls of the recording kept as they were.
    pub kept: u64,
    /// Calls left out, by operation (`mmap`, `fifo_write`, …, and `impossible` for calls the
    /// loop's state rules out).
    pub left_out: BTreeMap<String, u64>,
    /// Calls appended so that the loop repeats.
    pub appended: u64,
}

/// Whether the pair replays `s` (the rest are left out).
fn replayable(s: Syscall) -> bool {
    use Syscall::*;
    !matches!(s, Mmap | Munmap | MmapStore | FifoRead | FifoWrite | Other)
}

/// A node's state while the loop is checked.
#[derive(Debug, Clone, Copy, Default)]
struct State {
    present: bool,
    names: u32,
    open: u32,
}

impl LiveLoop {
    /// Reads an strace log (`tscope record`) into a loop.
    pub fn import(path: &Path) -> crate::error::Result<LiveLoop> {
        let file = crate::input::open_stream(path, "strace file")?;
        let origin = path.display().to_string();
        // Every regular path counts as a file; the filesystem is the one the pair runs on.
        let options = ImportOptions::system(false, Some(FsKind::Other));
        let mut ops = Vec::new();
        let mut over = false;
        let summary = StraceImport::new(file, &origin, options)
            .for_each(|op| {
                // Calls no model takes a timestamp for (most of a log: execve, brk, wait4, …)
                // are never kept, so only file calls count against the bound.
                if op.syscall == Syscall::Other {
                    return;
                }
                if ops.len() < MAX_OPS * 2 {
                    ops.push(op);
                } else {
                    over = true;
                }
            })
            .map_err(|e| crate::failure!("{e}"))?;
        crate::ensure!(
            !over,
            "strace file '{origin}' has more than {} file calls: record a shorter run for the \
             live replay",
            MAX_OPS * 2
        );
        crate::ensure!(
            summary.calls > 0,
            "no syscalls in strace file '{origin}': record one with `tscope record -o FILE -- CMD`"
        );
        let name = path
            .file_name()
            .map_or(origin.clone(), |n| n.to_string_lossy().into_owned());
        LiveLoop::from_ops(&name, &ops)
    }

    /// The loop of `ops` (an import's, in order). Pure.
    pub fn from_ops(source: &str, ops: &[Op]) -> crate::error::Result<LiveLoop> {
        let mut left_out = BTreeMap::new();
        let kept: Vec<&Op> = ops
            .iter()
            .filter(|o| {
                let keep = replayable(o.syscall) && o.inode != NO_INODE && o.fs != FsKind::Pipefs;
                if !keep && o.syscall != Syscall::Other {
                    let on = if o.fs == FsKind::Pipefs {
                        " on a pipe"
                    } else {
                        ""
                    };
                    *left_out
                        .entry(format!("{}{on}", o.syscall.name()))
                        .or_insert(0) += 1;
                }
                keep
            })
            .collect();
        // Which inodes are made or removed as directories, and which are only named as one.
        let made_dir = |s: Syscall| matches!(s, Syscall::Mkdir | Syscall::Rmdir);
        let mut own_dir = std::collections::BTreeSet::new();
        let mut named_dir = std::collections::BTreeSet::new();
        for o in &kept {
            if made_dir(o.syscall) {
                own_dir.insert(o.inode);
            }
            if o.syscall == Syscall::Readdir {
                named_dir.insert(o.inode);
            }
            if o.dir != NO_INODE {
                named_dir.insert(o.dir);
            }
        }
        let mut nodes: BTreeMap<u32, u32> = BTreeMap::new();
        let mut dirs = vec![true];
        let mut first: Vec<Option<Syscall>> = vec![None];
        let mut mapped = Vec::with_capacity(kept.len());
        for o in &kept {
            let node = if named_dir.contains(&o.inode) && !own_dir.contains(&o.inode) {
                ROOT
            } else {
                *nodes.entry(o.inode).or_insert_with(|| {
                    dirs.push(own_dir.contains(&o.inode));
                    first.push(None);
                    (dirs.len() - 1) as u32
                })
            };
            first[node as usize].get_or_insert(o.syscall);
            mapped.push(LiveOp {
                syscall: o.syscall,
                node,
            });
        }
        let initial: Vec<bool> = first
            .iter()
            .enumerate()
            .map(|(n, f)| {
                n == ROOT as usize || !matches!(f, Some(Syscall::Create | Syscall::Mkdir))
            })
            .collect();
        let mut state = initial_state(&initial);
        let mut out = Vec::with_capacity(mapped.len());
        for op in mapped {
            if step(&mut state[op.node as usize], op, dirs[op.node as usize]) {
                out.push(op);
            } else {
                *left_out.entry("impossible".to_string()).or_insert(0) += 1;
            }
        }
        let kept_count = out.len() as u64;
        for (n, st) in state.iter().enumerate() {
            let node = n as u32;
            let push = |out: &mut Vec<LiveOp>, syscall| out.push(LiveOp { syscall, node });
            for _ in 0..st.open {
                push(&mut out, Syscall::Close);
            }
            let was = initial[n];
            match (dirs[n], was, st.present) {
                (true, true, false) if n != ROOT as usize => push(&mut out, Syscall::Mkdir),
                (true, false, true) => push(&mut out, Syscall::Rmdir),
                (false, _, _) => {
                    for _ in u32::from(was)..st.names {
                        push(&mut out, Syscall::Unlink);
                    }
                    if was && st.names == 0 {
                        push(&mut out, Syscall::Create);
                        push(&mut out, Syscall::Close);
                    }
                }
                _ => {}
            }
        }
        crate::ensure!(
            !out.is_empty(),
            "the recording has no file calls the live pair can replay (left out: {left_out:?})"
        );
        crate::ensure!(
            out.len() <= MAX_OPS,
            "the recording's loop has {} file calls, more than {MAX_OPS}: record a shorter run",
            out.len()
        );
        Ok(LiveLoop {
            source: source.to_string(),
            appended: out.len() as u64 - kept_count,
            kept: kept_count,
            ops: out,
            dirs,
            initial,
            left_out,
        })
    }

    /// Calls replayed per pass.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// Stats in one pass (the calls the two sides issue differently).
    pub fn stats(&self) -> usize {
        self.ops
            .iter()
            .filter(|o| o.syscall == Syscall::Stat)
            .count()
    }

    /// The loop as the models see it: every node on `fs`, every namespace call's parent the
    /// scratch directory, and each stat asking for the times (`queried`) or not.
    pub fn scenario(&self, fs: FsKind, queried: bool) -> CompiledScenario {
        let mut ops: Vec<Op> = self
            .ops
            .iter()
            .map(|o| Op {
                syscall: match o.syscall {
                    Syscall::Stat if !queried => Syscall::StatNoTimes,
                    s => s,
                },
                fs,
                inode: o.node,
                dir: if needs_dir(o.syscall) { ROOT } else { NO_INODE },
                task: 0,
                time_ns: None,
                ends_iteration: false,
            })
            .collect();
        if let Some(last) = ops.last_mut() {
            last.ends_iteration = true;
        }
        CompiledScenario {
            name: format!("recorded {}", self.source),
            tasks: 1,
            iterations: bounded_iterations(crate::trace::scenario::DEFAULT_ITERATIONS, ops.len()),
            base_ns_per_iteration: None,
            base_source: None,
            published: None,
            ops,
            inodes: self.dirs.len(),
            op_weights: None,
            op_stamp_at: None,
            coarse_lag_ns: None,
        }
    }
}

/// Each node's state before the loop: present (with its one name) or not, nothing open.
fn initial_state(initial: &[bool]) -> Vec<State> {
    initial
        .iter()
        .map(|&p| State {
            present: p,
            names: u32::from(p),
            open: 0,
        })
        .collect()
}

/// Applies `op` to its node's state; `false` where the state rules it out (left out).
fn step(st: &mut State, op: LiveOp, dir: bool) -> bool {
    use Syscall::*;
    let root = op.node == ROOT;
    let reachable = st.present || st.open > 0;
    let ok = match op.syscall {
        Read | Write | Truncate => !dir && reachable,
        Lseek | Fsync | Fdatasync | Setattr | Utimens | Stat | StatNoTimes => reachable,
        Create => !dir && !st.present,
        Open => st.present,
        OpenTrunc => !dir && st.present,
        Close => st.open > 0,
        Unlink | Rename | Link => !dir && st.names > 0,
        Mkdir => dir && !root && !st.present,
        Rmdir => dir && !root && st.present,
        Readdir => dir && st.present,
        Mmap | Munmap | MmapStore | FifoRead | FifoWrite | Other => false,
    };
    if !ok {
        return false;
    }
    match op.syscall {
        Create => {
            st.present = true;
            st.names = 1;
            st.open += 1;
        }
        Open | OpenTrunc => st.open += 1,
        Close => st.open -= 1,
        Unlink => {
            st.names -= 1;
            st.present = st.names > 0;
        }
        Link => st.names += 1,
        Mkdir => st.present = true,
        Rmdir => st.present = false,
        _ => {}
    }
    true
}

#[cfg(test)]
mod tests;
