//! Each workload defined once. Its name is [`WorkloadName`] (`as_str`), its system calls per
//! iteration are [`iteration::ops`], and everything else is derived from those two here: the
//! kernel entry points it issues per iteration ([`syscalls_per_iteration`]), the positions a
//! timing pass reports ([`positions`]) and their entry points ([`position_syscalls`]), and the
//! loop the models replay ([`scenario`]). Its loop is in `single.rs` (one
//! thread, for a guest's PID 1) and in the workload's own module (the will-it-scale runner),
//! both built on the same per-iteration body.

use super::iteration;
use super::name::WorkloadName;
use super::result::Op;
use crate::trace::scenario::{ScenarioOp, DEFAULT_ITERATIONS};
use crate::trace::{FsKind, Scenario, Syscall, SCENARIO_SCHEMA_VERSION};

/// The workloads that run as one single-threaded loop (`single::run_loop`),
/// in the order `vm count` runs them by default.
pub const LOOPS: [WorkloadName; 6] = [
    WorkloadName::Pipe1,
    WorkloadName::Pingpong,
    WorkloadName::WriteOnly,
    WorkloadName::WriteStat,
    WorkloadName::Vfsmix,
    WorkloadName::Fifo1,
];

/// Whether `w` has a single-threaded loop ([`LOOPS`]).
pub fn has_loop(w: WorkloadName) -> bool {
    LOOPS.contains(&w)
}

/// Told the end of every op of a loop (in [`positions`] order), so that a caller can time or
/// count each; `()` does nothing.
pub trait OpHook {
    /// The loop starts now.
    fn begin(&mut self) {}
    /// An op ended now.
    fn op(&mut self) {}
    /// An iteration ended (after its last op).
    fn end_iteration(&mut self) {}
}

impl OpHook for () {}

/// The kernel entry points `w` issues per iteration, in the order they first occur (x86_64
/// glibc: `fstat` and `lstat` are `newfstatat`, `open` is `openat`), page faults left out;
/// pingpong counts both processes.
pub fn syscalls_per_iteration(w: WorkloadName) -> Vec<(String, f64)> {
    let mut out: Vec<(String, f64)> = Vec::new();
    for nr in iteration::ops(w, "tmpfs").iter().filter_map(entry_point) {
        match out.iter_mut().find(|(n, _)| *n == nr) {
            Some((_, c)) => *c += 1.0,
            None => out.push((nr, 1.0)),
        }
    }
    out
}

fn entry_point(op: &Op) -> Option<String> {
    let nr = op.nr.clone().unwrap_or_else(|| op.syscall.clone());
    (op.syscall != "page_fault").then_some(nr)
}

/// The ops of one iteration of `w` in the order a timing pass reports them: the names of the
/// ops of its [`scenario`], which the model replays. Empty for pingpong: its two processes
/// split each op, and its counts do not depend on where the time goes (each pipe timestamp is
/// compared with the same one an iteration earlier).
pub fn positions(w: WorkloadName) -> Vec<&'static str> {
    if w == WorkloadName::Pingpong {
        return Vec::new();
    }
    iteration::ops(w, "tmpfs")
        .iter()
        .map(|op| scenario_syscall(op).unwrap_or(Syscall::Other).name())
        .collect()
}

/// The entry point each of [`positions`] issues; `None` for a position that is no system call
/// (vfsmix's store through the mapping is a page fault).
pub fn position_syscalls(w: WorkloadName) -> Vec<Option<String>> {
    if positions(w).is_empty() {
        return Vec::new();
    }
    iteration::ops(w, "tmpfs").iter().map(entry_point).collect()
}

/// The operation the models know `op` as: an `open` refined by its flags, a read or write of
/// a named pipe (inode `fifo:N`) a FIFO's.
fn scenario_syscall(op: &Op) -> Option<Syscall> {
    let fifo = op.inode.as_deref().is_some_and(|i| i.starts_with("fifo:"));
    Syscall::parse(&op.syscall).map(|s| match (s, fifo) {
        (Syscall::Read, true) => Syscall::FifoRead,
        (Syscall::Write, true) => Syscall::FifoWrite,
        (s, _) => s.refine_open(op.flags.as_deref()),
    })
}

/// `ops` as a scenario's loop body (files without a file system of their own on `default_fs`),
/// and the syscall names no model knows, with counts (they cost no timestamp work).
pub fn scenario_ops(ops: &[Op], default_fs: FsKind) -> (Vec<ScenarioOp>, Vec<(String, usize)>) {
    let mut unknown: Vec<(String, usize)> = Vec::new();
    let body = ops
        .iter()
        .map(|op| {
            let syscall = scenario_syscall(op).unwrap_or_else(|| {
                match unknown.iter_mut().find(|(n, _)| *n == op.syscall) {
                    Some((_, c)) => *c += 1,
                    None => unknown.push((op.syscall.clone(), 1)),
                }
                Syscall::Other
            });
            let fs = op
                .fs
                .as_deref()
                .and_then(FsKind::parse)
                .unwrap_or(default_fs);
            ScenarioOp {
                syscall: syscall.name().to_string(),
                inode: op.inode.clone().unwrap_or_else(|| "none".into()),
                fs: fs.name().to_string(),
                dir: op.dir.clone(),
                task: op.task.map_or(0, |t| u32::try_from(t).unwrap_or(u32::MAX)),
            }
        })
        .collect();
    unknown.sort();
    (body, unknown)
}

/// The loop of `w` with its files on `fs`, as the models replay it: one task, no base cost
/// (the caller gives one).
pub fn scenario(w: WorkloadName, fs: FsKind) -> Scenario {
    let (iteration, _) = scenario_ops(&iteration::ops(w, fs.name()), fs);
    Scenario {
        schema_version: SCENARIO_SCHEMA_VERSION,
        name: w.as_str().to_string(),
        description: format!("the {} loop on {}", w.as_str(), fs.name()),
        mimics: None,
        tasks: 1,
        iterations: DEFAULT_ITERATIONS,
        base_ns_per_iteration: None,
        base_source: None,
        published: None,
        iteration,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_definition_gives_each_loops_entry_points_and_positions() {
        let s = |v: Vec<(String, f64)>| {
            v.into_iter()
                .map(|(n, c)| format!("{n}={c}"))
                .collect::<Vec<_>>()
                .join(",")
        };
        assert_eq!(
            s(syscalls_per_iteration(WorkloadName::Pingpong)),
            "write=2,read=2"
        );
        assert_eq!(
            s(syscalls_per_iteration(WorkloadName::Vfsmix)),
            "openat=2,newfstatat=1,lseek=1,close=2,write=1,mmap=1,munmap=1,unlink=1"
        );
        assert_eq!(positions(WorkloadName::WriteStat), ["write", "stat"]);
        assert!(positions(WorkloadName::Pingpong).is_empty());
        let v = position_syscalls(WorkloadName::Vfsmix);
        assert_eq!(v.len(), positions(WorkloadName::Vfsmix).len());
        assert_eq!(v[7], None);
        assert_eq!(v[4].as_deref(), Some("openat"));
    }

    #[test]
    fn each_loops_scenario_replays_as_its_bundled_one() {
        for w in LOOPS {
            let text = crate::trace::bundled::get(w.as_str()).unwrap();
            let bundled = Scenario::from_json(text, w.as_str()).unwrap().compile();
            let ours = scenario(w, FsKind::Tmpfs).compile();
            assert_eq!(
                format!("{:?}", ours.ops),
                format!("{:?}", bundled.ops),
                "{w:?}"
            );
            assert_eq!(ours.inodes, bundled.inodes, "{w:?}");
        }
    }

    #[test]
    fn a_fifo_keeps_the_timestamps_anonymous_pipes_lost_in_6_15() {
        use crate::kernel::{Family, ModelId, Version};
        let costs = crate::sim::Costs::reads(20.0, 2.0, 4e6);
        for (v, w, want) in [
            ((6, 15), WorkloadName::Fifo1, 2.0),
            ((6, 15), WorkloadName::Pipe1, 0.0),
            ((6, 12), WorkloadName::Pipe1, 2.0),
        ] {
            let model = ModelId::new(Family::Linux, Version::new(v.0, v.1));
            let loop_ = scenario(w, FsKind::Tmpfs).compile();
            let e = crate::sim::estimate::estimates(model, costs, &loop_, 1000.0, 10_000);
            let coarse = e[0].reads_per_op["coarse"];
            assert!((coarse - want).abs() < 0.01, "{v:?} {w:?}: {coarse}");
        }
    }
}
