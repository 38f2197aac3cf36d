//! `tscope vm bench`: boot real Linux kernels and time the workloads while the guest switches
//! its clocksource at run time, so that the change in ns per op when every precise timestamp
//! gets dearer can be held to the model's reads per op × the change of the guest-measured
//! read cost; and, with two or more kernels, put a kernel A/B beside the models' difference.
//!
//! - [`guest`]: PID 1 inside (the rounds A B, B A, … of clocksource slots);
//! - [`loops`]: the timed loops, behind one function;
//! - [`predict`]: the Linux model's precise and coarse reads per op;
//! - [`compare`]: the interval and verdict arithmetic (pure);
//! - [`rows`]: from the boots' slots to the report's runs and comparisons;
//! - [`knob`]: the live knob pair in the guest, the update it prices, and the rows held to it;
//! - [`host`]: the boots, each described to [`crate::vm::boot::pipeline`] as this room's;
//! - [`counted`]: `--count`, count's room booted through the same pipeline, in the same session.
//!
//! This room depends on [`crate::vm::boot`] and, for `--count`, on [`crate::vm::count`]: its
//! room (the per-boot work of counting one kernel) and its rows.

mod ab;
pub(crate) mod clocksource;
pub(crate) mod compare;
pub(crate) mod counted;
pub(crate) mod diagnosis;
pub(crate) mod disturbed;
pub(crate) mod fill;
#[cfg(test)]
mod fixtures;
pub(crate) mod guest;
mod host;
pub(crate) mod knob;
pub(crate) mod lkp;
pub(crate) mod loops;
pub(crate) mod pairs;
pub(crate) mod predict;
pub(crate) mod reads;
pub(crate) mod readtime;
pub(crate) mod rows;
#[cfg(test)]
mod tests;

use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use self::guest::{GuestHeader, Slot};
use crate::error::{Context, Result};
use crate::progress::Progress;
use crate::trace::FsKind;
use crate::vm::boot::accel::AccelChoice;
use crate::vm::boot::clock::Clocksource;
use crate::vm::boot::kconfig::HzSource;
use crate::vm::boot::pipeline::Pipeline;
use crate::vm::boot::plan::{BenchPlan, Plan};
use crate::vm::boot::serial;
use crate::vm::boot::session::BootConfig;
use crate::workload::WorkloadName;

pub use compare::ComparisonKind;
pub use rows::{BenchComparison, BenchRun, RunCosts};

/// One file system × workload and its iterations per slot.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Planned {
    pub fs: FsKind,
    pub workload: WorkloadName,
    pub iterations: u64,
}

/// Version of the `vm bench` JSON.
pub const VM_BENCH_SCHEMA_VERSION: u32 = 1;

pub use crate::vm::boot::kconfig::ASSUMED_HZ;
pub use crate::vm::boot::kernel::DEFAULT_PACKAGES;

/// Iterations per block of the guest's live knob pairs by default.
pub const DEFAULT_PAIR_ITERATIONS: u64 = 2_000;

pub use crate::vm::boot::kernel::KernelSource;

/// A validated `vm bench` configuration.
#[derive(Debug, Clone)]
pub struct BenchConfig {
    pub kernels: Vec<KernelSource>,
    pub clocksources: Vec<Clocksource>,
    pub filesystems: Vec<FsKind>,
    pub workloads: Vec<WorkloadName>,
    /// Boots per kernel (the second level of repetition).
    pub boots: u32,
    /// Rounds per boot (each visits every clocksource once).
    pub rounds: u32,
    /// How long each workload runs per slot (the guest fixes its iterations from this).
    pub slot_ms: u64,
    /// Fixed iterations per slot instead (0: from `slot_ms`).
    pub iterations: u64,
    pub seed: u64,
    pub boot: BootConfig,
    /// Iterations of the pass that counts every clocksource read per op (first boot of each
    /// kernel, after its rounds); 0: no such pass.
    pub count_reads: u64,
    /// Where to write each boot's raw console (`RELEASE-bootN.console`); `None`: nowhere.
    pub console_dir: Option<PathBuf>,
    /// `--count`: iterations of `vm count`'s kprobe pass, one extra boot per kernel on the
    /// first clocksource, whose timestamp calls per op go beside the rows ([`counted`]); 0:
    /// no such pass.
    pub count: u64,
    /// Iterations per block of the live knob pairs ([`knob`]), in the first boot of each
    /// kernel after its rounds; 0: no pairs.
    pub pair_iterations: u64,
}

impl BenchConfig {
    /// The command line's defaults: the three Debian kernels, tsc against hpet, tmpfs, every
    /// workload, 3 boots of 12 rounds, 60 ms per workload and visit, a read-counting pass of
    /// 300 iterations, seed 1.
    pub fn new() -> Self {
        BenchConfig {
            kernels: DEFAULT_PACKAGES
                .iter()
                .map(|p| KernelSource::Package(p.to_string()))
                .collect(),
            clocksources: vec![Clocksource::Tsc, Clocksource::Hpet],
            filesystems: vec![FsKind::Tmpfs],
            workloads: crate::workload::def::LOOPS.to_vec(),
            boots: 3,
            rounds: 12,
            slot_ms: 60,
            iterations: 0,
            seed: 1,
            boot: BootConfig::new(300),
            count_reads: 300,
            console_dir: None,
            count: 0,
            pair_iterations: DEFAULT_PAIR_ITERATIONS,
        }
    }
}

/// The kernel `tscope report --vm` times: the newest Debian cloud kernel, whose write path
/// takes precise (clocksource) reads, so that its clocksource rows predict a change.
pub const REPORT_KERNEL: &str = "linux-image-cloud-amd64@sid";
/// The workloads `tscope report --vm` times: one whose model predicts a change on that kernel
/// (write-stat) and one that predicts none (pipe1).
pub const REPORT_WORKLOADS: [WorkloadName; 2] = [WorkloadName::Pipe1, WorkloadName::WriteStat];
/// Rounds of the report's one boot.
pub const REPORT_ROUNDS: u32 = 8;

impl BenchConfig {
    /// What `tscope report --vm` runs: [`REPORT_KERNEL`], tsc against hpet alternated in
    /// [`REPORT_ROUNDS`] rounds of one boot, [`REPORT_WORKLOADS`] on tmpfs, the read-counting
    /// pass, and `tsc=reliable` on the guest's command line: the section prices a clocksource
    /// read, and under TCG on a loaded host the guest's watchdog can mark the emulated TSC
    /// unstable and refuse every switch back to it (whether the kernel keeps the TSC on its own
    /// is `tscope vm guest`'s question).
    pub fn for_report(guest_bin: Option<PathBuf>) -> Self {
        BenchConfig {
            kernels: vec![KernelSource::Package(REPORT_KERNEL.into())],
            workloads: REPORT_WORKLOADS.to_vec(),
            boots: 1,
            rounds: REPORT_ROUNDS,
            boot: BootConfig {
                guest_bin,
                append: Some("tsc=reliable".into()),
                ..BootConfig::new(300)
            },
            ..BenchConfig::new()
        }
    }

    /// The `tscope vm bench` command line that repeats this configuration's defaults-only
    /// parts (kernel packages, workloads, boots, rounds, extra command-line words).
    pub fn command(&self) -> String {
        let mut c = String::from("tscope vm bench");
        for k in &self.kernels {
            match k {
                KernelSource::Package(p) => c += &format!(" --kernel-package {p}"),
                KernelSource::Path(p) => c += &format!(" --kernel {}", p.display()),
            }
        }
        let workloads: Vec<&str> = self.workloads.iter().map(|w| w.as_str()).collect();
        c += &format!(
            " --workload {} --boots {} --rounds {}",
            workloads.join(","),
            self.boots,
            self.rounds
        );
        if let Some(extra) = &self.boot.append {
            c += &format!(" --append '{extra}'");
        }
        c
    }
}

impl BenchConfig {
    /// The clocksources as the progress lines name them: `tsc/hpet`.
    pub fn clocksource_list(&self) -> String {
        let names: Vec<&str> = self.clocksources.iter().map(|c| c.name()).collect();
        names.join("/")
    }
}

impl Default for BenchConfig {
    fn default() -> Self {
        Self::new()
    }
}

/// One boot of one kernel: what the guest printed, parsed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BenchBoot {
    /// 0-based, per kernel.
    pub index: u32,
    /// The `clocksource=` it booted with (the boots alternate it).
    pub boot_clocksource: Clocksource,
    pub header: Option<GuestHeader>,
    pub slots: Vec<Slot>,
    /// The clocksource reads counted after the rounds (first boot of each kernel only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reads: Option<reads::GuestReads>,
    /// The live knob pairs (first boot of each kernel only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairs: Option<pairs::GuestPairs>,
    pub wall_s: f64,
    /// Why the boot gave nothing or less than asked (killed at the timeout, truncated).
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub console_tail: Option<String>,
}

impl BenchBoot {
    /// Boot `index`, booted on `boot_clocksource`, before the guest said anything.
    pub fn new(index: u32, boot_clocksource: Clocksource) -> Self {
        BenchBoot {
            index,
            boot_clocksource,
            header: None,
            slots: Vec::new(),
            reads: None,
            pairs: None,
            wall_s: 0.0,
            error: None,
            console_tail: None,
        }
    }
}

/// One kernel of the run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct BenchKernel {
    pub kernel_package: String,
    pub kernel_release: Option<String>,
    pub hz: u32,
    /// `config`, `guest clock_getres(CLOCK_REALTIME_COARSE)` or `assumed`.
    pub hz_source: HzSource,
    pub boots: Vec<BenchBoot>,
}

/// What `vm bench` prints.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BenchReport {
    pub schema_version: u32,
    pub tool: String,
    pub created_unix_s: u64,
    pub accel: AccelChoice,
    /// Seed of every bootstrap interval (and of the guests' paired cost measurements).
    pub seed: u64,
    pub boots: u32,
    pub rounds: u32,
    pub slot_ms: u64,
    pub clocksources: Vec<Clocksource>,
    pub filesystems: Vec<FsKind>,
    pub workloads: Vec<WorkloadName>,
    pub kernels: Vec<BenchKernel>,
    pub runs: Vec<BenchRun>,
    pub comparisons: Vec<BenchComparison>,
    /// Requests the kernels refused (`KERNEL: clocksource X: …`); those slots measure nothing.
    pub refused: Vec<String>,
    /// The control that cancels a boot's speed in kernel rows.
    pub kernel_control: String,
    /// `--count`: each kernel's timestamp calls per op, counted by `vm count`'s kprobe pass
    /// (empty without `--count`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub counted: Vec<counted::CountedRow>,
    /// `--count`: kernels whose counting boot failed, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub count_errors: Vec<String>,
    /// Workloads that ran far off the other boots' pace in one boot
    /// ([`disturbed::DisturbedBoot`]; needs three boots or more).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disturbed: Vec<disturbed::DisturbedBoot>,
    /// Per kernel and file system: the inode update priced from the guest's live knob pair,
    /// and the pairs held to the model at that price ([`knob::KnobRow`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub knob: Vec<knob::KnobRow>,
    /// The host's CPU model and kernel (the commit paragraph's environment).
    pub host_cpu: Option<String>,
    pub host_kernel: Option<String>,
    /// True when a stop signal cut the run short (the rows are what was measured before).
    #[serde(rename = "interrupted")]
    pub stopped: bool,
}

impl BenchReport {
    /// Each kernel's release (its package where the guest did not say), in order: the names
    /// the rows, the paragraph and the chart give the kernels.
    pub fn kernel_names(&self) -> Vec<String> {
        self.kernels
            .iter()
            .map(|k| {
                k.kernel_release
                    .clone()
                    .unwrap_or_else(|| k.kernel_package.clone())
            })
            .collect()
    }

    /// Whether any boot failed.
    pub fn failed(&self) -> bool {
        self.kernels
            .iter()
            .any(|k| k.boots.iter().any(|b| b.error.is_some()))
    }
}

/// The clocksources in the order boot `boot` starts its rounds (each boot starts on the next).
fn order(cfg: &BenchConfig, boot: u32) -> Vec<Clocksource> {
    let n = cfg.clocksources.len().max(1);
    let mut order = cfg.clocksources.clone();
    order.rotate_left(boot as usize % n);
    order
}

/// The guest's plan of one boot: the rounds start on the boot's first clocksource; only the
/// first boot counts reads and runs the knob pairs.
pub fn plan(cfg: &BenchConfig, boot: u32) -> Plan {
    Plan::Bench(BenchPlan {
        workloads: cfg.workloads.clone(),
        clocksources: order(cfg, boot),
        filesystems: cfg.filesystems.clone(),
        rounds: cfg.rounds,
        slot_ms: cfg.slot_ms,
        iterations: cfg.iterations,
        seed: cfg.seed.wrapping_add(u64::from(boot) * 1000),
        reads: if boot == 0 { cfg.count_reads } else { 0 },
        pair_iterations: if boot == 0 { cfg.pair_iterations } else { 0 },
    })
}

/// The clocksource boot `boot` starts on (its `clocksource=`).
pub fn boot_clocksource(cfg: &BenchConfig, boot: u32) -> Clocksource {
    order(cfg, boot)
        .first()
        .copied()
        .unwrap_or(Clocksource::Tsc)
}

/// What one boot's console held.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Console {
    pub header: Option<GuestHeader>,
    pub slots: Vec<Slot>,
    pub reads: Option<reads::GuestReads>,
    pub pairs: Option<pairs::GuestPairs>,
}

/// Reads one boot's console: the header, every slot in order, and the read counts. A
/// transcript cut inside a section is an error ([`closed_part`] keeps what closed before).
pub fn parse_console(console: &str) -> Result<Console> {
    let t = serial::parse(console).map_err(|e| crate::failure!("{e}"))?;
    let header = t
        .json::<GuestHeader>("bench")
        .transpose()
        .context("reading the guest's bench section")?;
    let mut slots = Vec::new();
    for n in 0.. {
        let Some(slot) = t.json::<Slot>(&format!("slot-{n}")) else {
            break;
        };
        slots.push(slot.with_context(|| format!("reading the guest's slot-{n} section"))?);
    }
    let reads = t
        .json::<reads::GuestReads>("reads")
        .transpose()
        .context("reading the guest's reads section")?;
    let pairs = t
        .json::<pairs::GuestPairs>("pairs")
        .transpose()
        .context("reading the guest's pairs section")?;
    Ok(Console {
        header,
        slots,
        reads,
        pairs,
    })
}

/// The console up to the last section's opening marker: what a guest cut off while printing
/// had closed before.
pub fn closed_part(console: &str) -> &str {
    let marker = serial::begin("");
    let prefix = marker.trim_end_matches('=');
    console.rfind(prefix).map_or(console, |at| &console[..at])
}

/// Runs every boot of the configuration: boot b of every kernel before boot b + 1 of any
/// (kernels interleave, so the host's drift falls on all alike).
pub fn run(cfg: &BenchConfig, progress: &dyn Progress) -> Result<BenchReport> {
    let pipe = Pipeline::open(&cfg.boot, cfg, progress)?;
    let mut report = BenchReport {
        schema_version: VM_BENCH_SCHEMA_VERSION,
        tool: format!("tscope {}", env!("CARGO_PKG_VERSION")),
        created_unix_s: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        accel: pipe.accel().clone(),
        seed: cfg.seed,
        boots: cfg.boots,
        rounds: cfg.rounds,
        slot_ms: cfg.slot_ms,
        clocksources: cfg.clocksources.clone(),
        filesystems: cfg.filesystems.clone(),
        workloads: cfg.workloads.clone(),
        kernels: Vec::new(),
        runs: Vec::new(),
        comparisons: Vec::new(),
        refused: Vec::new(),
        kernel_control: rows::KERNEL_CONTROL.into(),
        counted: Vec::new(),
        count_errors: Vec::new(),
        disturbed: Vec::new(),
        knob: Vec::new(),
        host_cpu: None,
        host_kernel: None,
        stopped: false,
    };
    let machine = crate::probe::machine::gather();
    report.host_cpu = machine.cpu_model;
    report.host_kernel = machine.kernel_release;
    let result = host::boot_all(cfg, &pipe, &mut report, progress);
    report.stopped = crate::error::unless_stopped(result)?.is_none();
    if cfg.count > 0 && !report.stopped {
        counted::pass(cfg, &pipe, &mut report, progress)?;
    }
    drop(pipe);
    fill::fill(&mut report);
    Ok(report)
}
