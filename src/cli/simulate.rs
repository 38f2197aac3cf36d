//! `tscope simulate`: arguments only; `commands::simulate::config` validates them.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::{ExportArgs, OutputArgs};
use crate::sim::Counter;

#[derive(Debug, Clone, Args)]
pub struct SimulateArgs {
    /// Scenario file, or the name of a bundled scenario (pipe1, vfsmix, …; see scenarios/).
    #[arg(value_name = "SCENARIO", required_unless_present_any = ["run", "strace", "explain"])]
    pub scenario: Option<String>,
    /// A run recorded by `tscope run --record FILE`: its loop, and its measured ops/s as the
    /// base cost (less the stock Linux model's timestamp cost).
    #[arg(long, value_name = "FILE", conflicts_with = "scenario")]
    pub run: Option<PathBuf>,
    /// A log of `strace -f -tt -T -y -o FILE CMD` (or `tscope record`): streamed through the
    /// models with inode identity tracked through paths and fds. Where the --profile priced
    /// filesystems, the Linux model of its kernel also gets what multigrain timestamps cost one
    /// pass of the program on each of them.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["scenario", "run"])]
    pub strace: Option<PathBuf>,
    /// With --strace: a malformed line is an error (exit 2) naming its line number, instead of
    /// being counted and skipped.
    #[arg(long, requires = "strace")]
    pub strict: bool,
    /// With --strace: every regular path is on this filesystem (tmpfs, ext4, xfs, btrfs, ufs,
    /// other) instead of what this machine's /proc/self/mountinfo says; the per-filesystem
    /// rows of a priced profile are then left out.
    #[arg(long, value_name = "KIND", requires = "strace")]
    pub fs: Option<String>,
    /// Kernel model (repeat for several): linux, freebsd, dragonfly, netbsd, netbsd-knob (the
    /// newest version; bare `linux`: the profile's kernel release), or FAMILY@VERSION, e.g.
    /// linux@6.12, freebsd@12.4. `linux-multigrain` is an alias of linux@6.13. Default: every
    /// family.
    #[arg(long = "model", value_name = "MODEL")]
    pub models: Vec<String>,
    /// Print MODEL's table (per syscall and filesystem, the timestamp work and the source of
    /// each count) instead of simulating.
    #[arg(long, value_name = "MODEL", conflicts_with_all = ["scenario", "run", "strace", "validate"])]
    pub explain: Option<String>,
    /// Probe profile (`tscope probe --json -o FILE`); default: a quick probe of the needed
    /// sources now.
    #[arg(long, value_name = "FILE")]
    pub profile: Option<PathBuf>,
    /// The counter BSD models' precise reads cost.
    #[arg(long, value_enum, default_value_t = CounterArg::Rdtscp)]
    pub counter: CounterArg,
    #[arg(long = "set", value_name = "KEY=VALUE", help = set_help())]
    pub set: Vec<String>,
    /// Sweep one setting over a log-spaced range, e.g. precise_read_ns=10..10000.
    #[arg(long, value_name = "KEY=LO..HI", conflicts_with = "implied")]
    pub sweep: Option<String>,
    /// Points of a sweep.
    #[arg(long, default_value_t = 13, value_name = "N")]
    pub sweep_points: usize,
    /// Speedup a sweep's break-even cost is the cost of (1.05: the knob buys 5%).
    #[arg(long, default_value_t = 1.05, value_name = "X")]
    pub break_even: f64,
    /// Back-solve the per-read cost a published pair implies:
    /// stock=OPS,patched=OPS, optionally ,policy=MODEL:VALUE and ,stock_policy=MODEL:VALUE.
    #[arg(long, value_name = "SPEC")]
    pub implied: Option<String>,
    /// Check the simulator against reality instead of estimating, SCENARIO naming the check:
    /// pipe1 or vfsmix (run it, inject each policy's reads, measured vs predicted ops/s),
    /// accuracy, write-only or write-stat (equal successive mtimes on tmpfs and the root fs vs
    /// the multigrain model), seed (the NetBSD figures with the back-solved costs).
    #[arg(long, conflicts_with_all = ["run", "strace", "sweep", "implied"])]
    pub validate: bool,
    /// Seconds each live run of --validate samples (pipe1/vfsmix: short runs, more rounds).
    #[arg(
        long,
        default_value_t = 1.0,
        value_name = "SECS",
        requires = "validate"
    )]
    pub validate_secs: f64,
    /// Seconds pipe1/vfsmix --validate may take in all: it adds rounds until every row decides
    /// or the next round would not fit.
    #[arg(
        long,
        default_value_t = 90.0,
        value_name = "SECS",
        requires = "validate"
    )]
    pub validate_budget: f64,
    /// Directory for the live runs of --validate (repeatable; default: /dev/shm for vfsmix,
    /// /dev/shm and /var/tmp for accuracy).
    #[arg(long, value_name = "DIR", requires = "validate")]
    pub validate_dir: Vec<PathBuf>,
    /// With `update --validate`: a program recorded with `tscope record` (repeatable), whose
    /// file calls are replayed live on each directory as one more row
    #[arg(long, value_name = "FILE", requires = "validate")]
    pub validate_strace: Vec<PathBuf>,
    /// Iterations to replay (default: the scenario's).
    #[arg(long, value_name = "N")]
    pub iterations: Option<u64>,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub export: ExportArgs,
}

/// The counter a BSD timecounter reads, as the command line names it ([`Counter`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CounterArg {
    Rdtscp,
    #[value(name = "lfence_rdtsc")]
    LfenceRdtsc,
    Rdtsc,
}

impl From<CounterArg> for Counter {
    fn from(c: CounterArg) -> Self {
        match c {
            CounterArg::Rdtscp => Counter::Rdtscp,
            CounterArg::LfenceRdtsc => Counter::LfenceRdtsc,
            CounterArg::Rdtsc => Counter::Rdtsc,
        }
    }
}

/// `--set`'s help: every setting `simulate` takes, from the table the parser reads.
fn set_help() -> String {
    let keys: Vec<&str> = crate::sim::Param::all().map(|p| p.name()).collect();
    format!(
        "What-if cost or setting, KEY=VALUE (repeatable): {} (base_ns per iteration)",
        keys.join(", ")
    )
}
