//! The system calls of one iteration of each workload, and the inodes they touch: one source
//! of truth for the run report's `iteration`, the docs, and the recorded-run file
//! ([`super::run_record`]) that `tscope simulate --run` reads.
//!
//! An inode id `fifo:N` is a named pipe: its reads and writes are a FIFO's
//! ([`crate::trace::Syscall::FifoRead`], [`crate::trace::Syscall::FifoWrite`]) on `fs`.
//!
//! Inode ids are local to one task (pingpong: to one pair): tasks never share an inode, so
//! `pipe:0` of task 0 and `pipe:0` of task 1 are different pipes. `inodes` says which ids
//! are a fresh inode each iteration (vfsmix's file) and which persist (a pipe, write-only's
//! file). The format is documented in `docs/schema.md` under "Recorded run (trace)".

use serde::{Deserialize, Serialize};

use super::name::WorkloadName;
use super::result::Op;

/// One inode an iteration touches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InodeInfo {
    pub id: String,
    /// `pipe`, `regular` or `directory`.
    pub kind: String,
    pub fs: String,
    /// A new inode every iteration (created and unlinked within it).
    pub fresh_each_iteration: bool,
}

fn op(syscall: &str, nr: &str, inode: Option<&str>, fs: Option<&str>) -> Op {
    Op {
        syscall: syscall.into(),
        nr: Some(nr.into()),
        inode: inode.map(str::to_string),
        fs: fs.map(str::to_string),
        dir: None,
        flags: None,
        task: None,
    }
}

/// The per-iteration operations of `w` with files on file system `fs`.
pub fn ops(w: WorkloadName, fs: &str) -> Vec<Op> {
    let pipe = |s: &str, inode: &str, task: Option<usize>| Op {
        task,
        ..op(s, s, Some(inode), Some("pipefs"))
    };
    let file = |s: &str, nr: &str| op(s, nr, Some("file:0"), Some(fs));
    match w {
        WorkloadName::Pipe1 => vec![pipe("write", "pipe:0", None), pipe("read", "pipe:0", None)],
        WorkloadName::Fifo1 => vec![
            op("write", "write", Some("fifo:0"), Some(fs)),
            op("read", "read", Some("fifo:0"), Some(fs)),
        ],
        WorkloadName::Pingpong => vec![
            pipe("write", "pipe:0", Some(0)),
            pipe("read", "pipe:0", Some(1)),
            pipe("write", "pipe:1", Some(1)),
            pipe("read", "pipe:1", Some(0)),
        ],
        WorkloadName::Vfsmix => vec![
            Op {
                dir: Some("dir:0".into()),
                flags: Some("O_RDWR|O_CREAT|O_EXCL".into()),
                ..file("open", "openat")
            },
            file("lstat", "newfstatat"),
            file("lseek", "lseek"),
            file("close", "close"),
            Op {
                flags: Some("O_RDWR|O_CREAT|O_TRUNC".into()),
                ..file("open", "openat")
            },
            file("write", "write"),
            file("mmap", "mmap"),
            file("page_fault", "page_fault"),
            file("munmap", "munmap"),
            file("close", "close"),
            Op {
                dir: Some("dir:0".into()),
                ..file("unlink", "unlink")
            },
        ],
        WorkloadName::WriteOnly => vec![file("pwrite", "pwrite64")],
        WorkloadName::WriteStat => vec![file("pwrite", "pwrite64"), file("fstat", "newfstatat")],
        WorkloadName::WriteStatControl => vec![
            file("pwrite", "pwrite64"),
            Op {
                flags: Some("STATX_SIZE".into()),
                ..file("statx", "statx")
            },
        ],
        WorkloadName::Getppid => vec![op("getppid", "getppid", None, None)],
        WorkloadName::SchedYield => vec![op("sched_yield", "sched_yield", None, None)],
        WorkloadName::Mem | WorkloadName::Pagezero => vec![],
    }
}

/// The inodes of `w`'s iteration.
pub fn inodes(w: WorkloadName, fs: &str) -> Vec<InodeInfo> {
    let info = |id: &str, kind: &str, fs: &str, fresh| InodeInfo {
        id: id.into(),
        kind: kind.into(),
        fs: fs.into(),
        fresh_each_iteration: fresh,
    };
    match w {
        WorkloadName::Pipe1 => vec![info("pipe:0", "pipe", "pipefs", false)],
        WorkloadName::Fifo1 => vec![info("fifo:0", "fifo", fs, false)],
        WorkloadName::Pingpong => vec![
            info("pipe:0", "pipe", "pipefs", false),
            info("pipe:1", "pipe", "pipefs", false),
        ],
        WorkloadName::Vfsmix => vec![
            info("file:0", "regular", fs, true),
            info("dir:0", "directory", fs, false),
        ],
        WorkloadName::WriteOnly | WorkloadName::WriteStat | WorkloadName::WriteStatControl => {
            vec![info("file:0", "regular", fs, false)]
        }
        _ => vec![],
    }
}

/// Number of real system calls in an iteration (page faults are not system calls).
pub fn syscalls(ops: &[Op]) -> usize {
    ops.iter().filter(|o| o.syscall != "page_fault").count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipe_ends_share_one_inode() {
        let it = ops(WorkloadName::Pipe1, "ext4");
        assert_eq!(it.len(), 2);
        assert!(it.iter().all(|o| o.inode.as_deref() == Some("pipe:0")));
        assert!(it.iter().all(|o| o.fs.as_deref() == Some("pipefs")));
    }

    #[test]
    fn vfsmix_has_ten_syscalls_and_a_fault_on_one_fresh_inode() {
        let it = ops(WorkloadName::Vfsmix, "tmpfs");
        assert_eq!(syscalls(&it), 10);
        assert_eq!(it.len(), 11);
        assert!(it.iter().all(|o| o.inode.as_deref() == Some("file:0")));
        let ino = inodes(WorkloadName::Vfsmix, "tmpfs");
        assert!(ino[0].fresh_each_iteration && !ino[1].fresh_each_iteration);
    }
}
