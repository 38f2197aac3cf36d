//! The workloads' names: one enum, its kebab-case spelling in JSON and on the command line, and
//! what each name says of its workload.

use serde::{Deserialize, Serialize};

/// The workloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WorkloadName {
    /// Each task owns one pipe: write 1 byte, read it back (will-it-scale tests/pipe1.c).
    Pipe1,
    /// pipe1 over a named pipe (mkfifo) in --dir: a FIFO's ends still take timestamps.
    Fifo1,
    /// Pairs of tasks bounce a byte over two pipes (cross-task wake-ups).
    Pingpong,
    /// Create, lstat, lseek, close, open O_TRUNC, write, mmap+store, munmap, close, unlink.
    Vfsmix,
    /// pwrite 1 byte to one file per task.
    WriteOnly,
    /// pwrite 1 byte then fstat, one file per task.
    WriteStat,
    /// write-stat's control: pwrite 1 byte then statx asking for the size only (no time, so
    /// no query: the next write stores no new time within the tick).
    WriteStatControl,
    /// The null system call (the floor).
    Getppid,
    /// sched_yield, with a check that it entered the scheduler.
    #[serde(rename = "sched_yield")]
    SchedYield,
    /// sv_mem: per-thread pre-fault and block copy.
    Mem,
    /// Zero 4 KiB pages with rep stosq, rep stosb, the seed's alignment-checking code, memset.
    Pagezero,
}

impl WorkloadName {
    /// The name used on the command line and in JSON.
    /// Every workload, in the order `tscope run --help` lists them.
    pub const ALL: [WorkloadName; 11] = [
        WorkloadName::Pipe1,
        WorkloadName::Fifo1,
        WorkloadName::Pingpong,
        WorkloadName::Vfsmix,
        WorkloadName::WriteOnly,
        WorkloadName::WriteStat,
        WorkloadName::WriteStatControl,
        WorkloadName::Getppid,
        WorkloadName::SchedYield,
        WorkloadName::Mem,
        WorkloadName::Pagezero,
    ];

    /// The workload named `name` (its [`WorkloadName::as_str`]).
    pub fn parse(name: &str) -> Option<WorkloadName> {
        WorkloadName::ALL.into_iter().find(|w| w.as_str() == name)
    }

    pub const fn as_str(self) -> &'static str {
        match self {
            WorkloadName::Pipe1 => "pipe1",
            WorkloadName::Fifo1 => "fifo1",
            WorkloadName::Pingpong => "pingpong",
            WorkloadName::Vfsmix => "vfsmix",
            WorkloadName::WriteOnly => "write-only",
            WorkloadName::WriteStat => "write-stat",
            WorkloadName::WriteStatControl => "write-stat-control",
            WorkloadName::Getppid => "getppid",
            WorkloadName::SchedYield => "sched_yield",
            WorkloadName::Mem => "mem",
            WorkloadName::Pagezero => "pagezero",
        }
    }

    /// Whether the workload runs under the will-it-scale runner (and can be recorded).
    pub fn uses_runner(self) -> bool {
        !matches!(self, WorkloadName::Mem | WorkloadName::Pagezero)
    }

    /// Whether the workload creates files in `--dir`.
    pub fn uses_dir(self) -> bool {
        matches!(
            self,
            WorkloadName::Fifo1
                | WorkloadName::Vfsmix
                | WorkloadName::WriteOnly
                | WorkloadName::WriteStat
                | WorkloadName::WriteStatControl
        )
    }
}

impl std::fmt::Display for WorkloadName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
