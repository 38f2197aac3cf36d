//! The command line, as plain clap-derive structs. Validation into configurations happens in
//! each command's `config` (`commands/<name>.rs`); nothing here decides anything.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

pub mod fleet;
pub mod record;
pub mod run;
pub mod simulate;
pub mod vm;

/// What every timestamp source costs, whether the hypervisor traps it, and what a
/// vfs_timestamp knob would buy.
#[derive(Debug, Parser)]
#[command(name = "tscope", version, about, propagate_version = true)]
pub struct Cli {
    /// Make every rdtsc/rdtscp of this process trap (prctl PR_SET_TSC, PR_TSC_SIGSEGV) and
    /// emulate it in a SIGSEGV handler: a real trap per read, like a hypervisor that traps TSC
    /// reads. For tests and what-ifs.
    #[arg(long, global = true)]
    pub emulate_trap: bool,
    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    /// This process's command line, or `vm guest-init` when tscope runs as `/init` of a
    /// `tscope vm guest` guest (PID 1, started by the kernel as "/init"). `Err` is clap's
    /// message: a bad command line, or the text `--help` and `--version` print
    /// ([`crate::clap_exit`] prints it).
    pub fn from_env() -> Result<Cli, clap::Error> {
        if std::process::id() == 1 && std::env::args().next().as_deref() == Some("/init") {
            Cli::try_parse_from(["tscope", "vm", "guest-init"])
        } else {
            Cli::try_parse()
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Measure the cost, resolution and monotonicity of every timestamp source.
    #[command(after_help = "Examples:
  tscope probe                                  every source, aligned table
  tscope probe --quick --source rdtsc,vdso:monotonic,syscall:monotonic
  tscope probe --json -o host.json              a profile for simulate --profile and compare
  tscope probe --export-json p.json --export-markdown p.md --export-csv p.csv   all at once
  tscope probe --histogram vdso:monotonic       deltas as pg_test_timing lays them out")]
    Probe(ProbeArgs),
    /// Identify the hypervisor and decide, with evidence, whether TSC reads trap, the vDSO falls
    /// back to syscalls, the TSC is out of step across CPUs, or a clock warps.
    #[command(after_help = "Examples:
  tscope detect                                 hypervisor and verdicts with evidence
  tscope detect --json --fail-on rdtsc_trapped,vdso_fallback   exit 1 if one holds (CI gate)
  tscope --emulate-trap detect                  what a trapping hypervisor looks like
  tscope detect --openmetrics -o /var/lib/prometheus/node-exporter/tscope.prom   node_exporter")]
    Detect(DetectArgs),
    /// Run pipe1, pingpong, vfsmix, write-only, write-stat, getppid, sched_yield, mem or pagezero.
    #[command(after_help = "Examples:
  tscope run pipe1 --tasks 1,2 --mode processes,threads --duration 5
  tscope run vfsmix --dir /dev/shm --json --record vfsmix.json   + a trace for simulate --run
  tscope run mem --op wr --size 1g --block 1k --threads 1,2")]
    Run(run::RunArgs),
    /// Measure inside real guests (a clocksource matrix under qemu) and time VM exits in a
    /// /dev/kvm micro-VM.
    #[command(after_help = "Examples:
  tscope vm guest --markdown                    a guest per clocksource against the host
  tscope vm guest --accel tcg --clocksource acpi_pm --timeout 60
  tscope vm exits                               VM-exit costs in a /dev/kvm micro-VM")]
    Vm(vm::VmArgs),
    /// Estimate what a vfs_timestamp resolution knob buys, and what accuracy it costs.
    #[command(after_help = "Examples:
  tscope simulate pipe1 --model freebsd         what vfs.timestamp_precision 0-3 costs and buys
  tscope simulate vfsmix --profile p.json --set precise_read_ns=2000   a trapped clock, what-if
  tscope simulate pipe1 --sweep precise_read_ns=10..10000            speedup against cost
  tscope simulate --strace build.strace --model freebsd              a real trace")]
    Simulate(simulate::SimulateArgs),
    /// Run a command under `strace -f -tt -T -y -o FILE`, for `simulate --strace FILE`.
    #[command(after_help = "Examples:
  tscope record -o build.strace -- make -j2
  tscope simulate --strace build.strace")]
    Record(record::RecordArgs),
    /// Measure this machine and write report.md, report.json and SVG charts into a directory.
    #[command(after_help = "Examples:
  tscope report                                 measure, write tscope-report/
  tscope report --quick --no-workloads --out /tmp/r
  tscope --emulate-trap report --out trapped    what-if: every RDTSC traps")]
    Report(ReportArgs),
    /// Put profiles (probe, detect or report JSON) side by side, with ratios against the first.
    #[command(after_help = "Examples:
  tscope compare host.json guest.json --labels host,guest
  tscope compare a/report.json b/report.json --csv
  tscope compare base.json new.json --fail-on slower   exit 1 on a decided slowdown (CI)")]
    Compare(CompareArgs),
    /// Render a JSON file tscope wrote (probe, detect, run, simulate, vm, compare, report)
    /// again, in any format.
    #[command(after_help = "Examples:
  tscope show host.json --markdown              a saved probe profile as Markdown
  tscope show tscope-report/report.json         the report's tables on the terminal
  tscope show run.json --csv")]
    Show(ShowArgs),
    /// Many machines: store their probe, detect and report JSON in an SQLite file, and
    /// compare them in groups (what a default should be).
    #[command(after_help = "Examples:
  tscope fleet add hosts/ --label prod          every *.json below hosts/
  tscope fleet report --by hypervisor,clocksource --markdown
  tscope fleet ls; tscope fleet rm 12; tscope fleet export --json")]
    Fleet(fleet::FleetArgs),
    /// Print a shell completion script.
    Completions(CompletionsArgs),
    /// Print a man page (roff): tscope's, or a subcommand's; `--out DIR` writes them all.
    #[command(after_help = "Examples:
  tscope man | man -l -                         the top-level page
  tscope man detect | man -l -                  one subcommand (vm guest: `tscope man vm-guest`)
  tscope man --out /usr/local/share/man/man1    every page, tscope.1 and tscope-*.1")]
    Man(ManArgs),
}

/// The cross-CPU TSC check's default length (`--sync-ms`).
pub const DEFAULT_SYNC_MS: u64 = 300;

#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// Directory to write into (created if missing).
    #[arg(long, default_value = "tscope-report", value_name = "DIR")]
    pub out: PathBuf,
    #[command(flatten)]
    pub sampling: SamplingArgs,
    /// Milliseconds for the cross-CPU TSC check.
    #[arg(long, default_value_t = DEFAULT_SYNC_MS, value_name = "MS")]
    pub sync_ms: u64,
    /// Skip the short workload runs (pipe1, vfsmix).
    #[arg(long)]
    pub no_workloads: bool,
    /// Also boot a Linux guest per clocksource under qemu (`tscope vm guest`) and add the
    /// host-against-guest matrix.
    #[arg(long)]
    pub vm: bool,
    /// With --vm: the tscope to put in the guest as /init; default: this binary (a dynamic
    /// build goes in with its interpreter and libraries).
    #[arg(long, value_name = "PATH", requires = "vm")]
    pub guest_bin: Option<PathBuf>,
    /// Also write the report's Prometheus metrics (as `show report.json --openmetrics` prints
    /// them) to FILE, replaced whole; see docs/fleet.md.
    #[arg(long, value_name = "FILE")]
    pub export_openmetrics: Option<PathBuf>,
    /// A program recorded with `tscope record` (repeatable): what multigrain timestamps cost
    /// one pass of it on each filesystem the report priced, in the report and its commit
    /// message (as `simulate --strace FILE --profile` gives it).
    #[arg(long, value_name = "FILE")]
    pub strace: Vec<PathBuf>,
    /// An earlier report.json (or a probe profile) to judge this report against, as `compare`
    /// does: a "since the baseline" section with the shift and the changed sources only, and
    /// a line of it in the commit message.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
}

#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    /// JSON files written by `tscope probe --json`, `detect --json` or `report`; the first is
    /// the baseline of the ratios.
    #[arg(required = true, num_args = 2.., value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Labels for the columns, in order (default: the file names).
    #[arg(long, value_delimiter = ',')]
    pub labels: Vec<String>,
    /// Exit 1 when a source is decided slower than in the first file (its ratio's 95% interval
    /// lies above 1): a regression check for CI.
    #[arg(long, value_enum, value_name = "WHAT")]
    pub fail_on: Option<CompareFailOn>,
    /// Fix the unit of every ratio (and of `--fail-on`): `ns` as measured, or `cycles`, the
    /// cost in core cycles (`cost_cycles`), which a change of the core clock between the runs
    /// does not move (every file must then carry `core_clock`). Without it compare chooses per
    /// source: cycles for a counter read (rdtsc, rdtscp, lfence_rdtsc, rdpid, quanta) when the
    /// core clock moved between the files, with ns beside it; ns otherwise.
    #[arg(long, value_enum, value_name = "UNIT")]
    pub unit: Option<CompareUnit>,
    /// Profiles of this machine, unchanged (three or more, repeatable or comma-separated):
    /// their spread is the noise between runs, and a change is called only beyond it. Without
    /// it, the inputs' own `probe --repeat` runs give the noise where they carry them.
    #[arg(long, value_name = "FILE", value_delimiter = ',')]
    pub noise: Vec<PathBuf>,
    /// Take `--noise` profiles of other machines than the compared ones (by `host_id`, else
    /// the CPU facts). Without it they are refused: another machine's spread is not this
    /// one's noise between runs.
    #[arg(long, requires = "noise")]
    pub noise_from_other_hosts: bool,
    /// Print the 0-day test robot's (LKP's) table, `base ±%stddev %change new ±%stddev
    /// metric`, with LKP's decision on each source's runs (`probe --repeat`) beside tscope's,
    /// and why they differ.
    #[arg(long)]
    pub lkp: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// The unit `compare --unit` takes the ratios in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CompareUnit {
    /// Nanoseconds, as measured.
    Ns,
    /// Core cycles (`cost_cycles`).
    Cycles,
}

/// What `compare --fail-on` can fail on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CompareFailOn {
    /// A source whose ratio to the first file is decided slower.
    Slower,
}

#[derive(Debug, Clone, Args)]
pub struct ShowArgs {
    /// A JSON file written by `tscope … --json` (or `-o`), or a report's report.json.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    #[command(flatten)]
    pub output: OutputArgs,
    /// Print a probe, detect or report document as Prometheus metrics (see `probe
    /// --openmetrics`).
    #[arg(long, conflicts_with_all = ["json", "markdown", "csv"])]
    pub openmetrics: bool,
}

#[derive(Debug, Clone, Args)]
pub struct ManArgs {
    /// The subcommand whose page to print (`detect`, `vm-guest`, …); default: tscope's own.
    #[arg(value_name = "SUBCOMMAND", conflicts_with = "out")]
    pub subcommand: Option<String>,
    /// Write every page (tscope.1 and tscope-SUBCOMMAND.1) into this directory instead.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Clone, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// How to print a result.
#[derive(Debug, Clone, Args)]
pub struct OutputArgs {
    /// Print JSON (the documented contract, see docs/schema.md).
    #[arg(long, conflicts_with = "markdown")]
    pub json: bool,
    /// Print a Markdown table.
    #[arg(long, conflicts_with = "csv")]
    pub markdown: bool,
    /// Print CSV.
    #[arg(long, conflicts_with = "json")]
    pub csv: bool,
    /// Write the output to FILE instead of stdout (written whole or not at all).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// More formats at once, each written whole to its own file beside what is printed (as
/// hyperfine's `--export-*`). Every path is checked before anything is measured.
#[derive(Debug, Clone, Default, Args)]
pub struct ExportArgs {
    /// Also write the result as JSON (as `--json` prints it) to FILE.
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,
    /// Also write the result as Markdown (as `--markdown` prints it) to FILE.
    #[arg(long, value_name = "FILE")]
    pub export_markdown: Option<PathBuf>,
    /// Also write the result as CSV (as `--csv` prints it) to FILE.
    #[arg(long, value_name = "FILE")]
    pub export_csv: Option<PathBuf>,
}

/// Prometheus metrics, for the results that describe a machine's clock health (probe,
/// detect; a report has `--export-openmetrics`).
#[derive(Debug, Clone, Default, Args)]
pub struct OpenMetricsArgs {
    /// Print Prometheus metrics: the text format node_exporter's textfile collector reads,
    /// valid OpenMetrics too (it ends in `# EOF`). Names and labels: docs/schema.md; a
    /// systemd timer for node_exporter: docs/fleet.md.
    #[arg(long, conflicts_with_all = ["json", "markdown", "csv"])]
    pub openmetrics: bool,
    /// Also write the result as Prometheus metrics (as `--openmetrics` prints them) to FILE.
    #[arg(long, value_name = "FILE")]
    pub export_openmetrics: Option<PathBuf>,
}

/// How long and how reproducibly to sample.
#[derive(Debug, Clone, Args)]
pub struct SamplingArgs {
    /// Sample briefly (under a second for every source) at the cost of wider intervals.
    #[arg(long)]
    pub quick: bool,
    /// Seed of the bootstrap resampling and sample order (recorded in the output).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

#[derive(Debug, Clone, Args)]
pub struct ProbeArgs {
    /// Only these sources (repeat or comma-separate), e.g. rdtsc,vdso:monotonic.
    #[arg(long = "source", value_name = "ID", value_delimiter = ',')]
    pub sources: Vec<String>,
    /// Do not pin the measuring thread to the CPU it starts on.
    #[arg(long)]
    pub no_pin: bool,
    /// List the source ids and exit.
    #[arg(long)]
    pub list: bool,
    /// Price an inode timestamp update on DIR's filesystem on this kernel (repeatable): the
    /// live knob pair (pwrite + statx asking for the times, against statx asking for the size)
    /// less the reads the kernel model counts, over the updates it counts. Into the profile's
    /// `filesystems`, which simulate, report and fleet price updates with.
    #[arg(long = "dir", value_name = "DIR")]
    pub dirs: Vec<std::path::PathBuf>,
    /// Run the probe N times (2 to 20), each in a process of its own, and keep per source
    /// every run's point and the noise between two runs (`between_runs`), which `compare`
    /// calls a change only beyond. The profile's figures are the first run's.
    #[arg(long, value_name = "N", conflicts_with_all = ["histogram", "list"])]
    pub repeat: Option<u32>,
    /// The distribution of back-to-back deltas of one clock (a source id), laid out as
    /// PostgreSQL's pg_test_timing prints it: log2-ns buckets, then the exact durations.
    #[arg(long, value_name = "ID", conflicts_with_all = ["sources", "list"])]
    pub histogram: Option<String>,
    /// With --histogram: seconds to read the clock (default 3, as pg_test_timing).
    #[arg(long, value_name = "SECONDS", requires = "histogram")]
    pub duration: Option<f64>,
    /// With --histogram: list exact durations until their running share reaches PERCENT
    /// (default 99.99, as pg_test_timing's --cutoff).
    #[arg(long, value_name = "PERCENT", requires = "histogram")]
    pub cutoff: Option<f64>,
    #[command(flatten)]
    pub sampling: SamplingArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub export: ExportArgs,
    #[command(flatten)]
    pub metrics: OpenMetricsArgs,
}

#[derive(Debug, Clone, Args)]
pub struct DetectArgs {
    /// Exit 1 when any of these verdicts holds (comma-separated): rdtsc_trapped,
    /// rdtscp_trapped, vdso_fallback (any clock) or vdso_fallback:CLOCK, tsc_unsynchronized,
    /// clock_warps, tsc_marked_unstable, clocksource_switched, vdso_inconsistent,
    /// tsc_frequency_mismatch.
    #[arg(long, value_name = "VERDICT", value_delimiter = ',')]
    pub fail_on: Vec<String>,
    /// With --fail-on: also exit 1 when a selected verdict is inconclusive (the evidence was
    /// too thin to answer).
    #[arg(long, requires = "fail_on")]
    pub fail_on_inconclusive: bool,
    /// Sample with the full probe's sampler (slower, tighter intervals).
    #[arg(long)]
    pub thorough: bool,
    /// Seed of the bootstrap resampling (recorded in the output).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Milliseconds for the cross-CPU TSC check, over all pairs of CPUs.
    #[arg(long, default_value_t = DEFAULT_SYNC_MS, value_name = "MS")]
    pub sync_ms: u64,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub export: ExportArgs,
    #[command(flatten)]
    pub metrics: OpenMetricsArgs,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
