//! `tscope run`: arguments only; `commands::run::config` validates them into a `RunConfig`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::{ExportArgs, OutputArgs};
use crate::workload::{MemOp, Mode, Placement, WorkloadName};

/// Run a syscall or memory workload on this kernel, will-it-scale style.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// The workload.
    #[arg(value_enum)]
    pub workload: WorkloadArg,
    /// Task counts to run, comma-separated (default: 1 and every allowed CPU). For pingpong,
    /// the number of pairs.
    #[arg(long, value_delimiter = ',', value_name = "N,...")]
    pub tasks: Vec<u64>,
    /// Run tasks as processes, threads, or both (comma-separated).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "processes")]
    pub mode: Vec<ModeArg>,
    /// Seconds of sampling per task count, after the warm-up.
    #[arg(
        allow_negative_numbers = true,
        long,
        default_value_t = 5.0,
        value_name = "SECS"
    )]
    pub duration: f64,
    /// Seconds of warm-up before the first sample (default: one sample interval).
    #[arg(long, value_name = "SECS")]
    pub warmup: Option<f64>,
    /// Sample interval in milliseconds (will-it-scale: 1000; shorter for quick checks).
    #[arg(long, default_value_t = 1000, value_name = "MS")]
    pub interval_ms: u64,
    /// Do not pin tasks to CPUs.
    #[arg(long)]
    pub no_pin: bool,
    /// Where the private scratch directory goes (default: the system temp dir); its file
    /// system is the one measured by vfsmix, write-only and write-stat.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Also write the per-iteration syscalls and measured rate for `tscope simulate`.
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// pingpong: put each pair on the same CPU, on different CPUs, or both (default both).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub placement: Vec<PlacementArg>,
    /// mem: what to do with each block (default wr).
    #[arg(long, value_enum)]
    pub op: Option<MemOpArg>,
    /// mem: total bytes over all threads, e.g. 16g, 512m (default 1g); pagezero: the cold
    /// buffer (default 256m).
    #[arg(long, value_name = "BYTES")]
    pub size: Option<String>,
    /// mem: copy block, e.g. 1k (default 1k).
    #[arg(long, value_name = "BYTES")]
    pub block: Option<String>,
    /// mem: thread counts, comma-separated (default 1).
    #[arg(long, value_delimiter = ',', value_name = "N,...")]
    pub threads: Vec<u64>,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub export: ExportArgs,
}

/// The workloads, as the command line names them ([`WorkloadName`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum WorkloadArg {
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
    /// pwrite 1 byte then fstat, one file per task (and the live knob pair).
    WriteStat,
    /// write-stat's control: pwrite 1 byte then statx asking for the size only.
    WriteStatControl,
    /// The null system call (the floor).
    Getppid,
    /// sched_yield, with a check that it entered the scheduler.
    #[value(name = "sched_yield", alias = "sched-yield")]
    SchedYield,
    /// sv_mem: per-thread pre-fault and block copy.
    Mem,
    /// Zero 4 KiB pages with rep stosq, rep stosb, the seed's alignment-checking code, memset.
    Pagezero,
}

impl From<WorkloadArg> for WorkloadName {
    fn from(w: WorkloadArg) -> Self {
        match w {
            WorkloadArg::Pipe1 => WorkloadName::Pipe1,
            WorkloadArg::Fifo1 => WorkloadName::Fifo1,
            WorkloadArg::Pingpong => WorkloadName::Pingpong,
            WorkloadArg::Vfsmix => WorkloadName::Vfsmix,
            WorkloadArg::WriteOnly => WorkloadName::WriteOnly,
            WorkloadArg::WriteStat => WorkloadName::WriteStat,
            WorkloadArg::WriteStatControl => WorkloadName::WriteStatControl,
            WorkloadArg::Getppid => WorkloadName::Getppid,
            WorkloadArg::SchedYield => WorkloadName::SchedYield,
            WorkloadArg::Mem => WorkloadName::Mem,
            WorkloadArg::Pagezero => WorkloadName::Pagezero,
        }
    }
}

/// How tasks run ([`Mode`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    /// Forked processes (will-it-scale's `_processes`).
    Processes,
    /// Threads of one process (will-it-scale's `_threads`).
    Threads,
}

impl From<ModeArg> for Mode {
    fn from(m: ModeArg) -> Self {
        match m {
            ModeArg::Processes => Mode::Processes,
            ModeArg::Threads => Mode::Threads,
        }
    }
}

/// Where the two tasks of a pingpong pair run ([`Placement`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PlacementArg {
    /// Both on one CPU: every bounce is a switch on that CPU.
    #[value(name = "same")]
    SameCpu,
    /// On two CPUs: every bounce is a cross-CPU wake-up.
    #[value(name = "different")]
    DifferentCpus,
}

impl From<PlacementArg> for Placement {
    fn from(p: PlacementArg) -> Self {
        match p {
            PlacementArg::SameCpu => Placement::SameCpu,
            PlacementArg::DifferentCpus => Placement::DifferentCpus,
        }
    }
}

/// What `mem` does with each block ([`MemOp`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MemOpArg {
    /// Write: copy a block-sized source into the region, block by block.
    Wr,
    /// Read: copy the region, block by block, into a block-sized buffer.
    Rd,
    /// Read and write: copy the region's first half onto its second half, block by block.
    Rw,
}

impl From<MemOpArg> for MemOp {
    fn from(o: MemOpArg) -> Self {
        match o {
            MemOpArg::Wr => MemOp::Wr,
            MemOpArg::Rd => MemOp::Rd,
            MemOpArg::Rw => MemOp::Rw,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every workload has a command-line name, and it is the workload's own name.
    #[test]
    fn every_workload_is_named_as_the_domain_names_it() {
        let named: Vec<WorkloadName> = WorkloadArg::value_variants()
            .iter()
            .map(|&w| w.into())
            .collect();
        assert_eq!(named, WorkloadName::ALL);
        for w in WorkloadArg::value_variants() {
            let name = w.to_possible_value().unwrap();
            assert_eq!(name.get_name(), WorkloadName::from(*w).as_str());
        }
    }
}
