//! `tscope vm count`: boot real Linux kernels (Debian's cloud kernels by default) with tscope
//! as `/init`, count every timestamp function with kprobes while the workloads run inside
//! ([`crate::vm::count::guest`]), and hold the Linux model for each kernel to the counts
//! ([`crate::vm::count::rows`]).
//!
//! Counts do not depend on speed, so TCG serves as well as KVM, except for the coarse-clock
//! counts that depend on the tick moving inside an op: those come out fractional, and the
//! model is evaluated at the guest's measured time per op, spread over the op's syscalls as
//! the guest's timing pass found it, and the kernel's `CONFIG_HZ`, so that it predicts the
//! fraction too.

pub(crate) mod guest;
pub(crate) mod kernel_counts;
pub(crate) mod kprobe;
pub(crate) mod offsets;
pub(crate) mod rows;
#[cfg(test)]
mod tests;
pub(crate) mod timing;
pub(crate) mod updates;

use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use self::guest::GuestCount;
use self::rows::{AccuracyRow, CountRow};
use crate::error::Result;
use crate::progress::Progress;
use crate::trace::FsKind;
use crate::vm::boot::accel::AccelChoice;
use crate::vm::boot::clock::{Clocksource, ClocksourceName};
use crate::vm::boot::kconfig::HzSource;
use crate::vm::boot::pipeline::{Pipeline, Prepared, Room};
use crate::vm::boot::plan::Plan;
use crate::vm::boot::qemu::QemuOutcome;
use crate::vm::boot::serial;
use crate::vm::boot::session::BootConfig;
use crate::workload::WorkloadName;

/// Version of the `vm count` JSON.
pub const VM_COUNT_SCHEMA_VERSION: u32 = 1;

pub use crate::vm::boot::kconfig::ASSUMED_HZ;
pub use crate::vm::boot::kernel::DEFAULT_PACKAGES;

/// The workloads run by default: every single-threaded loop of the workloads' definition.
pub const DEFAULT_WORKLOADS: [WorkloadName; 6] = crate::workload::def::LOOPS;

pub use crate::vm::boot::kernel::KernelSource;

/// A validated `vm count` configuration.
#[derive(Debug, Clone)]
pub struct CountConfig {
    pub kernels: Vec<KernelSource>,
    pub workloads: Vec<WorkloadName>,
    pub filesystems: Vec<FsKind>,
    pub iterations: u64,
    pub boot: BootConfig,
    /// `clocksource=` on the guest's command line; `None`: the kernel's choice.
    pub clocksource: Option<Clocksource>,
}

impl CountConfig {
    /// The command line's defaults: the three Debian kernels, every workload on tmpfs, 10,000
    /// iterations, KVM if usable else TCG, 300 s per guest.
    pub fn new() -> Self {
        CountConfig {
            kernels: DEFAULT_PACKAGES
                .iter()
                .map(|p| KernelSource::Package(p.to_string()))
                .collect(),
            workloads: DEFAULT_WORKLOADS.to_vec(),
            filesystems: vec![FsKind::Tmpfs],
            iterations: 10_000,
            boot: BootConfig::new(300),
            clocksource: None,
        }
    }
}

impl Default for CountConfig {
    fn default() -> Self {
        Self::new()
    }
}

/// One kernel's guest.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KernelRun {
    pub kernel_package: String,
    pub kernel_release: Option<String>,
    /// `CONFIG_HZ`: from the package's configuration, else the guest's coarse-clock
    /// resolution; 250 assumed when neither is known (`hz_source` says which).
    pub hz: u32,
    pub hz_known: bool,
    /// Where `hz` comes from: `config` (the package's or the `/boot` `config-REL` beside
    /// `--kernel`), `guest clock_getres(CLOCK_REALTIME_COARSE)`, or `assumed`.
    #[serde(default)]
    pub hz_source: HzSource,
    pub ok: bool,
    pub error: Option<String>,
    pub wall_s: f64,
    /// The guest's own errors (a probe it could not register, a file system not mounted).
    pub guest_errors: Vec<String>,
    pub console_tail: Option<String>,
    /// The probes registered: (function, symbol as in `/proc/kallsyms`).
    pub probes: Vec<(String, String)>,
    /// `kprobe_profile` as the guest read it at the end: the raw evidence.
    pub kprobe_profile: String,
    /// The `raw_syscalls:sys_enter` `hist:keys=id` histogram at the end.
    pub syscall_hist: String,
    /// What one `clock_gettime(CLOCK_MONOTONIC)` cost in the guest, taken off each op of the
    /// timing passes (`rows[].guest_ns_by_syscall`); `null` when nothing was timed.
    #[serde(default)]
    pub timing_clock_read_ns: Option<f64>,
    /// The kernel modules the guest loaded before mounting (`--fs xfs,btrfs` on kernels that
    /// build them as modules), dependencies first.
    #[serde(default)]
    pub modules: Vec<String>,
    /// The trace clock of the guest's traced passes (`x86-tsc`: the host's TSC under TCG),
    /// which place each clock read in its syscall (`rows[].guest_ns_by_syscall[].stamp_offset`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_clock: Option<String>,
    /// Traced passes that report nothing, and why (`FS/WORKLOAD: …`: the buffer dropped events).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trace_errors: Vec<String>,
    /// How late the guest's coarse clock showed each of 25 ticks (`CLOCK_REALTIME` − the new
    /// `CLOCK_REALTIME_COARSE` at each move, sorted, ns): the model's Linux coarse clock runs
    /// their median behind ([`crate::vm::count::rows::coarse_lag_ns`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub coarse_lag_ns: Vec<u64>,
    /// The same measured after the workloads (a check that the lag holds through the boot).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub coarse_lag_after_ns: Vec<u64>,
    /// The clocksource the guest ran on, whose read callback has its row
    /// (`rows[].kind == "clocksource"`); `null` when not read.
    #[serde(default)]
    pub clocksource: Option<ClocksourceName>,
    /// Why the kernel refused the probe on that read callback (absent: probed, or no
    /// clocksource read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clocksource_probe_error: Option<String>,
    /// Whether the kernel's multigrain counters were read around each run
    /// (`rows[].kind == "kernel-counter"`): `read`, or `absent: WHY`; `null` when the guest
    /// did not say.
    #[serde(default)]
    pub multigrain_counters: Option<String>,
}

/// What `vm count` prints.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CountReport {
    pub schema_version: u32,
    pub tool: String,
    pub created_unix_s: u64,
    pub accel: AccelChoice,
    pub iterations: u64,
    pub kernels: Vec<KernelRun>,
    pub rows: Vec<CountRow>,
    /// Equal successive mtimes measured in the guests beside the model's share.
    pub accuracy: Vec<AccuracyRow>,
    /// True when a stop signal cut the run short (the rows are what was counted before).
    #[serde(rename = "interrupted")]
    pub stopped: bool,
}

impl CountReport {
    /// Rows outside their tolerance.
    pub fn mismatches(&self) -> impl Iterator<Item = &CountRow> {
        self.rows.iter().filter(|r| r.agrees == Some(false))
    }
}

/// The guest's plan of a count run.
pub fn plan(cfg: &CountConfig) -> Plan {
    Plan::Count {
        workloads: cfg.workloads.clone(),
        iterations: cfg.iterations,
        filesystems: cfg.filesystems.clone(),
    }
}

impl Room for CountConfig {
    type Reading = Result<GuestCount>;

    fn filesystems(&self) -> &[FsKind] {
        &self.filesystems
    }

    fn plan(&self, _boot: u32) -> Plan {
        plan(self)
    }

    fn clocksource(&self, _boot: u32) -> Option<Clocksource> {
        self.clocksource
    }

    /// The guest's `count` section, or why there is none.
    fn read(&self, _boot: u32, out: &QemuOutcome) -> Result<GuestCount> {
        if let Some(killed) = out.killed() {
            crate::fail!("{killed}");
        }
        let t = serial::parse(&out.console).map_err(|e| crate::failure!("{e}"))?;
        let count = t.json("count").ok_or_else(|| {
            crate::failure!(
                "the guest printed no count; qemu said: {}",
                out.stderr.trim()
            )
        })?;
        Ok(count?)
    }

    fn coarse_res_ns(&self, reading: &Result<GuestCount>) -> Option<u64> {
        reading.as_ref().ok()?.coarse_res_ns
    }
}

/// Runs every kernel of the configuration.
pub fn run(cfg: &CountConfig, progress: &dyn Progress) -> Result<CountReport> {
    let pipe = Pipeline::open(&cfg.boot, cfg, progress)?;
    let mut report = CountReport {
        schema_version: VM_COUNT_SCHEMA_VERSION,
        tool: format!("tscope {}", env!("CARGO_PKG_VERSION")),
        created_unix_s: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        accel: pipe.accel().clone(),
        iterations: cfg.iterations,
        kernels: Vec::new(),
        rows: Vec::new(),
        accuracy: Vec::new(),
        stopped: false,
    };
    let result = (|| -> Result<()> {
        for source in &cfg.kernels {
            let k = count_kernel(cfg, source, report.kernels.len(), &pipe, progress)?;
            report.rows.extend(k.rows);
            report.accuracy.extend(k.accuracy);
            report.kernels.push(k.run);
        }
        Ok(())
    })();
    report.stopped = crate::error::unless_stopped(result)?.is_none();
    Ok(report)
}

/// What one kernel's counting boot gave.
#[derive(Debug)]
pub(crate) struct KernelCount {
    pub run: KernelRun,
    pub rows: Vec<CountRow>,
    pub accuracy: Vec<AccuracyRow>,
}

/// This room's work on one kernel: `source` resolved, booted once through `pipe` (the `n`-th
/// kernel counted in its session: `vm count`'s own, or `vm bench --count`'s), and its rows.
pub(crate) fn count_kernel(
    cfg: &CountConfig,
    source: &KernelSource,
    n: usize,
    pipe: &Pipeline,
    progress: &dyn Progress,
) -> Result<KernelCount> {
    let k = source.resolve(progress)?;
    let label = k.package.clone().unwrap_or_else(|| k.origin.clone());
    // Its own names in the session's scratch, beside another room's boots.
    let mut p = pipe.prepare(cfg, k, &format!("count{n}"), progress)?;
    progress.note(&format!(
        "{label}: counting in a {} guest",
        pipe.accel().used.name()
    ));
    let booted = pipe.boot(cfg, &mut p, 0, &label, progress)?;
    let mut count = KernelCount {
        run: KernelRun::booted(&label, &p, booted.out.wall.as_secs_f64()),
        rows: Vec::new(),
        accuracy: Vec::new(),
    };
    let run = &mut count.run;
    match &booted.reading {
        Ok(g) => {
            run.take(g);
            if !run.hz_known {
                progress.note(&format!(
                    "{label}: CONFIG_HZ unknown (no config-* beside the kernel, no coarse clock \
                     resolution from the guest): the model assumes HZ={ASSUMED_HZ}"
                ));
            }
            count.rows = rows::rows(&label, run.hz, g)?;
            count.accuracy = rows::accuracy_rows(&label, run.hz, g)?;
        }
        Err(e) => {
            run.error = Some(e.to_string());
            run.console_tail = Some(booted.out.console_tail());
        }
    }
    progress.note(&format!(
        "{label}: {} in {:.1} s",
        if run.ok { "ok" } else { "failed" },
        run.wall_s
    ));
    Ok(count)
}

impl KernelRun {
    /// The guest of kernel `p`, booted under `label` for `wall_s`, before its count is read:
    /// the HZ as far as the pipeline found it.
    fn booted(label: &str, p: &Prepared, wall_s: f64) -> Self {
        let (hz, hz_source) = p.hz();
        KernelRun {
            kernel_package: label.to_string(),
            kernel_release: p.kernel.release.clone(),
            hz,
            hz_known: hz_source.known(),
            hz_source,
            ok: false,
            error: None,
            wall_s,
            guest_errors: Vec::new(),
            console_tail: None,
            probes: Vec::new(),
            kprobe_profile: String::new(),
            syscall_hist: String::new(),
            timing_clock_read_ns: None,
            modules: Vec::new(),
            trace_clock: None,
            trace_errors: Vec::new(),
            coarse_lag_ns: Vec::new(),
            coarse_lag_after_ns: Vec::new(),
            clocksource: None,
            clocksource_probe_error: None,
            multigrain_counters: None,
        }
    }

    /// What the guest said of itself: its release, probes, evidence, errors.
    fn take(&mut self, g: &GuestCount) {
        self.ok = g.errors.is_empty();
        self.kernel_release = Some(g.release.clone());
        self.guest_errors = g.errors.clone();
        self.probes = g.probes.clone();
        self.kprobe_profile = g.kprobe_profile.clone();
        self.syscall_hist = g.syscall_hist_text.clone();
        self.timing_clock_read_ns = g.timing_clock_read_ns;
        self.modules = g.modules.clone();
        self.trace_clock = g.trace_clock.clone();
        self.coarse_lag_ns = g.coarse_lag_ns.clone();
        self.coarse_lag_after_ns = g.coarse_lag_after_ns.clone();
        self.clocksource = g.clocksource.clone();
        self.clocksource_probe_error = g.clocksource_probe_error.clone();
        self.multigrain_counters = match &g.multigrain_absent {
            Some(why) => Some(format!("absent: {why}")),
            None if g.runs.iter().any(|r| !r.multigrain.is_empty()) => Some("read".into()),
            None => None,
        };
        self.trace_errors = g
            .runs
            .iter()
            .filter_map(|r| {
                Some(format!(
                    "{}/{}: {}",
                    r.fs,
                    r.workload.as_str(),
                    r.trace_error.as_ref()?
                ))
            })
            .collect();
    }
}
