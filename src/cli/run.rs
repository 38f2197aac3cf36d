//! `tscope run`: arguments only; `commands::run::config` validates them into a `RunConfig`.

use std::path::PathBuf;

use clap::Args;

use super::{ExportArgs, OutputArgs};
use crate::workload::{MemOp, Mode, Placement, WorkloadName};

/// Run a syscall or memory workload on this kernel, will-it-scale style.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// The workload.
    #[arg(value_enum)]
    pub workload: WorkloadName,
    /// Task counts to run, comma-separated (default: 1 and every allowed CPU). For pingpong,
    /// the number of pairs.
    #[arg(long, value_delimiter = ',', value_name = "N,...")]
    pub tasks: Vec<u64>,
    /// Run tasks as processes, threads, or both (comma-separated).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "processes")]
    pub mode: Vec<Mode>,
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
    pub placement: Vec<Placement>,
    /// mem: what to do with each block (default wr).
    #[arg(long, value_enum)]
    pub op: Option<MemOp>,
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
