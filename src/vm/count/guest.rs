//! The guest side of `vm count` (PID 1, when the initramfs carries a count plan):
//! mount tracefs and the test file systems, register a kprobe on every symbol of every
//! [`kprobe::FUNCTIONS`] found in `/proc/kallsyms`, a `hist:keys=id` trigger on
//! `raw_syscalls:sys_enter`, then run each workload twice — zero iterations (the baseline: its
//! setup and teardown) and N — reading `kprobe_profile` and the histogram around each run.
//! The host subtracts and divides ([`crate::vm::count`]).
//!
//! Each workload is its one definition's loop ([`crate::workload::single::run_loop`]) and issues
//! exactly the system calls that definition names ([`crate::workload::def`]; one syscall per
//! `crate::sys` call), so the syscall counts per op show a loop that does more than it should.
//!
//! After each counted run, outside the snapshots that bracket it, a timing pass runs the same
//! loop again ([`TIMING_ITERATIONS`] at most) and times each of its syscalls ([`crate::vm::count::timing`]): the
//! model spreads the op's time as the guest spent it, so it puts the tick's moves where the
//! kernel sees them (a vfsmix op's time goes mostly into some of its syscalls). The timing
//! reads `CLOCK_MONOTONIC` (`Instant`), through the vDSO or, when the guest's clocksource has
//! no vDSO mode, a syscall — which is why it is a pass of its own: the counted runs stay free
//! of it. One clock read's cost, measured, is taken off every position.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::kernel_counts;
use super::kprobe::{self, Probe};
use super::offsets::{self, StampOffsets};
use super::timing::{clock_read_ns as clock_read_ns_now, OpTimer, TIMING_ITERATIONS};
use crate::error::{Context, Result};
use crate::sys;
use crate::trace::FsKind;
use crate::vm::boot::clock::{Clocksource, ClocksourceName};
use crate::vm::boot::tracefs::{self, TRACING};
use crate::workload::def::{self, positions};
use crate::workload::single::run_loop;
use crate::workload::WorkloadName;

const SYSCALL_TRIGGER: &str = "hist:keys=id:size=256";

/// What one guest measured (the `count` section, JSON).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct GuestCount {
    /// `/proc/sys/kernel/osrelease`.
    pub release: String,
    /// The probes registered: (function, symbol).
    pub probes: Vec<(String, String)>,
    /// Whether the syscall histogram could be set up (CONFIG_HIST_TRIGGERS).
    pub syscall_hist: bool,
    pub runs: Vec<WorkloadCount>,
    pub errors: Vec<String>,
    /// `kprobe_profile` as read at the end (the raw evidence behind the counts).
    #[serde(default)]
    pub kprobe_profile: String,
    /// `clock_getres(CLOCK_REALTIME_COARSE)` in the guest: the kernel's `TICK_NSEC`
    /// (`posix_get_coarse_res()` in kernel/time/posix-timers.c returns `KTIME_LOW_RES`), from
    /// which the host derives `CONFIG_HZ` when the kernel's configuration is not at hand.
    #[serde(default)]
    pub coarse_res_ns: Option<u64>,
    /// The `raw_syscalls:sys_enter` histogram as read at the end.
    #[serde(default)]
    pub syscall_hist_text: String,
    /// What the timing pass's reads at the end of each op cost in the guest (`Instant::now()`,
    /// i.e. `clock_gettime(CLOCK_MONOTONIC)`, and `CLOCK_REALTIME_COARSE`, both vDSO where
    /// the clocksource allows): taken off every position. `None` before the first timing pass.
    #[serde(default)]
    pub timing_clock_read_ns: Option<f64>,
    /// The kernel modules loaded before mounting (xfs, btrfs and their dependencies), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub modules: Vec<String>,
    /// The trace clock of the traced passes (`x86-tsc` where offered; [`crate::vm::count::offsets`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_clock: Option<String>,
    /// [`crate::vm::count::timing::coarse_lag_ns`] before the workloads (25 ticks), sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub coarse_lag_ns: Vec<u64>,
    /// The same after the workloads (is the lag one constant per boot?); not used by the model.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub coarse_lag_after_ns: Vec<u64>,
    /// The clocksource the guest ran on; its read callback is probed beside the functions
    /// ([`Clocksource::read_callback`] of [`ClocksourceName::running`]). The kernel's own word,
    /// kept as it said it (`tsc-early`, `jiffies`: names outside [`Clocksource`] too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clocksource: Option<ClocksourceName>,
    /// Why the kernel's multigrain counters could not be read (`null`: they were, around each
    /// run; [`kernel_counts`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multigrain_absent: Option<String>,
    /// Why the clocksource's read callback could not be probed (the kernel refused the
    /// `kprobe_events` line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clocksource_probe_error: Option<String>,
}

/// One workload on one file system: raw counts of the baseline and the N-iteration run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct WorkloadCount {
    pub workload: WorkloadName,
    pub fs: FsKind,
    pub iterations: u64,
    /// Guest wall time of the N-iteration loop per iteration.
    pub ns_per_op: f64,
    /// Probe hits per function (a function and its copies summed) during the baseline.
    pub baseline_hits: BTreeMap<String, u64>,
    pub hits: BTreeMap<String, u64>,
    pub baseline_syscalls: BTreeMap<String, u64>,
    pub syscalls: BTreeMap<String, u64>,
    /// write-stat: share of successive writes whose fstat mtime equals the previous one.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub equal_mtime_share: Option<f64>,
    /// The timing pass: mean ns of each op of the loop, in the order of [`positions`] (one
    /// clock read taken off); empty for a workload not timed (pingpong).
    #[serde(default)]
    pub ns_by_position: Vec<f64>,
    /// Iterations of the timing pass.
    #[serde(default)]
    pub timing_iterations: u64,
    /// The timing pass: how often the coarse clock moved during each op, in total (same
    /// order as `ns_by_position`).
    #[serde(default)]
    pub tick_moves_by_position: Vec<u64>,
    /// The traced pass ([`crate::vm::count::offsets`]): where the first clock read of each op's
    /// syscall falls, as a fraction of its enter→exit span (same order as `ns_by_position`;
    /// `null` for an op that is no syscall or reads no clock); empty when not traced.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stamp_offset_by_position: Vec<Option<f64>>,
    /// The same, each timestamp of the op: the mean fraction of its syscall's k-th coarse
    /// clock read (each kernel timestamp starts with one); the model takes its k-th stamp there.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stamp_offsets_by_position: Vec<Vec<f64>>,
    /// The same, clock reads per iteration inside the op's syscall.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stamp_reads_by_position: Vec<Option<f64>>,
    /// Iterations of the traced pass found in the trace.
    #[serde(default)]
    pub traced_iterations: u64,
    /// Why the traced pass reports nothing (the buffer dropped events, tracefs refused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_error: Option<String>,
    /// The kernel's multigrain counters ([`kernel_counts::MULTIGRAIN_COUNTERS`]) during the
    /// baseline and during the N-iteration run, as the hits; empty where absent.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub baseline_multigrain: BTreeMap<String, u64>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub multigrain: BTreeMap<String, u64>,
}

/// An empty pipe1 run on tmpfs, for tests to fill in.
#[cfg(test)]
impl Default for WorkloadCount {
    fn default() -> Self {
        WorkloadCount {
            workload: WorkloadName::Pipe1,
            fs: FsKind::Tmpfs,
            iterations: 0,
            ns_per_op: 0.0,
            baseline_hits: BTreeMap::new(),
            hits: BTreeMap::new(),
            baseline_syscalls: BTreeMap::new(),
            syscalls: BTreeMap::new(),
            equal_mtime_share: None,
            ns_by_position: Vec::new(),
            timing_iterations: 0,
            tick_moves_by_position: Vec::new(),
            stamp_offset_by_position: Vec::new(),
            stamp_offsets_by_position: Vec::new(),
            stamp_reads_by_position: Vec::new(),
            traced_iterations: 0,
            trace_error: None,
            baseline_multigrain: BTreeMap::new(),
            multigrain: BTreeMap::new(),
        }
    }
}

fn snapshot(
    probes: &[Probe],
    hist: bool,
) -> Result<(BTreeMap<String, u64>, BTreeMap<String, u64>)> {
    let text = std::fs::read_to_string(format!("{TRACING}/kprobe_profile"))
        .context("reading kprobe_profile")?;
    let hits = kprobe::hits_by_function(probes, &kprobe::parse_profile(&text)?);
    let mut calls = BTreeMap::new();
    if hist {
        let h = std::fs::read_to_string(format!("{TRACING}/events/raw_syscalls/sys_enter/hist"))
            .context("reading the syscall histogram")?;
        for (nr, n) in kprobe::parse_syscall_hist(&h)? {
            calls.insert(kprobe::syscall_name(nr), n);
        }
    }
    Ok((hits, calls))
}

/// What the host's plan asks of the count.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Asked<'a> {
    pub workloads: &'a [WorkloadName],
    pub iterations: u64,
    pub filesystems: &'a [FsKind],
}

/// Runs the count the plan asks for in the guest and returns what it measured; errors go into
/// the result.
pub(crate) fn run(asked: Asked<'_>) -> GuestCount {
    let mut out = GuestCount {
        release: std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .unwrap_or_default()
            .trim()
            .to_string(),
        coarse_res_ns: sys::clock::clock_getres(sys::clock::id::REALTIME_COARSE).ok(),
        ..GuestCount::default()
    };
    if let Err(e) = count(asked, &mut out) {
        out.errors.push(format!("{e:#}"));
    }
    out.coarse_lag_after_ns = crate::vm::count::timing::coarse_lag_ns(25, 1_000_000_000);
    let read = |p: &str| std::fs::read_to_string(format!("{TRACING}/{p}")).unwrap_or_default();
    out.kprobe_profile = read("kprobe_profile");
    if out.syscall_hist {
        out.syscall_hist_text = read("events/raw_syscalls/sys_enter/hist");
    }
    out
}

fn count(asked: Asked<'_>, out: &mut GuestCount) -> Result<()> {
    if let Some(w) = asked.workloads.iter().find(|&&w| !def::has_loop(w)) {
        crate::fail!("the workload '{}' has no single-threaded loop", w.as_str());
    }
    if let Err(e) = sys::guest::mount("tracefs", TRACING, "tracefs") {
        out.errors.push(format!("mount tracefs: {e}"));
    }
    out.multigrain_absent = kernel_counts::setup_multigrain().err();
    let registered = register_probes(out)?;
    out.syscall_hist = std::fs::write(
        format!("{TRACING}/events/raw_syscalls/sys_enter/trigger"),
        SYSCALL_TRIGGER,
    )
    .is_ok();
    out.coarse_lag_ns = crate::vm::count::timing::coarse_lag_ns(25, 1_000_000_000);
    let counter = Counter {
        registered,
        syscall_hist: out.syscall_hist,
        multigrain: out.multigrain_absent.is_none(),
        iterations: asked.iterations,
        trace_setup: offsets::setup(),
    };
    out.trace_clock = counter.trace_setup.as_ref().ok().cloned();
    // xfs and btrfs are modules on Debian's kernels: load them (dependencies first) before
    // mounting; an initramfs without modules loads nothing.
    match crate::vm::boot::modules::load_in_guest() {
        Ok(loaded) => out.modules = loaded,
        Err(e) => out.errors.push(format!("{e:#}")),
    }
    let disks = crate::vm::boot::disk::disk_filesystems(asked.filesystems).len();
    for &fs in asked.filesystems {
        let dir = match mount(fs, disks) {
            Ok(dir) => dir,
            Err(e) => {
                out.errors.push(format!("{e:#}"));
                continue;
            }
        };
        for &w in asked.workloads {
            let run = counter.workload(w, fs, Path::new(&dir), &mut out.timing_clock_read_ns)?;
            out.runs.push(run);
        }
    }
    Ok(())
}

/// Registers a kprobe on every timestamp function found in `/proc/kallsyms`, and one on the
/// read callback of the clocksource the guest runs on (optional: a kernel that refuses it
/// says why in `out`), then enables them; returns the probes registered.
fn register_probes(out: &mut GuestCount) -> Result<Vec<Probe>> {
    let kallsyms = std::fs::read_to_string("/proc/kallsyms").context("reading /proc/kallsyms")?;
    out.clocksource = kernel_counts::current_clocksource();
    let callback = out
        .clocksource
        .as_ref()
        .and_then(ClocksourceName::running)
        .map(Clocksource::read_callback);
    let events = format!("{TRACING}/kprobe_events");
    let mut registered = Vec::new();
    for p in kprobe::resolve(&kallsyms, &kprobe::FUNCTIONS) {
        match tracefs::append(&events, &p.definition()) {
            Ok(()) => registered.push(p),
            Err(e) => out.errors.push(format!("{e:#}")),
        }
    }
    for p in callback.map_or(Vec::new(), |f| kprobe::resolve(&kallsyms, &[f])) {
        let line = format!("{}\n", p.definition());
        let written = std::fs::OpenOptions::new()
            .append(true)
            .open(&events)
            .and_then(|mut f| f.write_all(line.as_bytes()));
        match written {
            Ok(()) => registered.push(p),
            Err(e) => out.clocksource_probe_error = Some(format!("{}: {e}", p.definition())),
        }
    }
    out.probes = registered
        .iter()
        .map(|p| (p.function.clone(), p.symbol.clone()))
        .collect();
    std::fs::write(format!("{TRACING}/events/kprobes/enable"), "1")
        .context("enabling the kprobe events")?;
    Ok(registered)
}

/// Mounts `fs` on `/mnt/FS` (tmpfs, or the one of `disks` NVMe disks with its superblock) and
/// returns the directory; the error carries the kernel log's last words.
fn mount(fs: FsKind, disks: usize) -> Result<String> {
    let dir = format!("/mnt/{fs}");
    let source = if crate::vm::boot::disk::needs_disk(fs) {
        crate::vm::boot::disk::find_in_guest(fs, disks)?
    } else {
        fs.to_string()
    };
    sys::guest::mount(&source, &dir, fs.name()).map_err(|e| {
        crate::failure!(
            "mount {source} ({fs}) on {dir}: {e}; the kernel said: {}",
            kmsg_tail(6)
        )
    })?;
    Ok(dir)
}

/// What counting one workload needs: the probes, which counters the kernel has, the
/// iterations, and whether the traced pass can run.
struct Counter {
    registered: Vec<Probe>,
    syscall_hist: bool,
    multigrain: bool,
    iterations: u64,
    trace_setup: Result<String>,
}

impl Counter {
    /// The kernel's multigrain counters now (empty where absent).
    fn multigrain(&self) -> BTreeMap<String, u64> {
        if self.multigrain {
            kernel_counts::read_multigrain()
        } else {
            BTreeMap::new()
        }
    }

    /// Counts `w` on `fs` in `dir`: the baseline and the N-iteration run between snapshots,
    /// then the timing and traced passes outside them. The first timing pass measures one
    /// clock read into `clock_read_ns`.
    fn workload(
        &self,
        w: WorkloadName,
        fs: FsKind,
        dir: &Path,
        clock_read_ns: &mut Option<f64>,
    ) -> Result<WorkloadCount> {
        let (iterations, hist) = (self.iterations, self.syscall_hist);
        let positions = positions(w);
        // Each window between two snapshots holds one read of the counters' file, so what
        // that read costs in probe hits cancels out with the baseline.
        let b_mg = self.multigrain();
        let (b_hits, b_calls) = snapshot(&self.registered, hist)?;
        run_loop(w, dir, 0, &mut ())?;
        let m_mg = self.multigrain();
        let (m_hits, m_calls) = snapshot(&self.registered, hist)?;
        let started = Instant::now();
        let outcome = run_loop(w, dir, iterations, &mut ())?;
        let ns = started.elapsed().as_nanos() as f64;
        let e_mg = self.multigrain();
        let (e_hits, e_calls) = snapshot(&self.registered, hist)?;
        // The timing pass, outside the snapshots.
        let timing_iterations = iterations.min(TIMING_ITERATIONS);
        let mut timer = OpTimer::on(positions.len());
        let mut ns_by_position = Vec::new();
        if !positions.is_empty() && timing_iterations > 0 {
            run_loop(w, dir, timing_iterations, &mut timer)?;
            let read_ns = *clock_read_ns.get_or_insert_with(clock_read_ns_now);
            ns_by_position = timer.means(read_ns);
        }
        // The traced pass, outside the snapshots too.
        let traced = match &self.trace_setup {
            _ if positions.is_empty() || iterations == 0 => Ok(StampOffsets::default()),
            Ok(_) => offsets::traced_pass(w, || {
                let n = iterations.min(offsets::TRACED_ITERATIONS);
                run_loop(w, dir, n, &mut ()).map(drop)
            }),
            Err(e) => Err(crate::failure!("trace setup: {e:#}")),
        };
        let trace_error = traced.as_ref().err().map(|e| format!("{e:#}"));
        let offsets = traced.unwrap_or_default();
        let traced_by = |v: &[Option<f64>]| offsets::by_position(v, offsets.iterations);
        Ok(WorkloadCount {
            workload: w,
            fs,
            iterations,
            ns_per_op: ns / iterations.max(1) as f64,
            baseline_hits: diff(&b_hits, &m_hits),
            hits: diff(&m_hits, &e_hits),
            baseline_syscalls: diff(&b_calls, &m_calls),
            syscalls: diff(&m_calls, &e_calls),
            equal_mtime_share: outcome.equal_mtime_share,
            ns_by_position,
            timing_iterations: timer.iterations,
            tick_moves_by_position: if timer.iterations > 0 {
                timer.tick_moves.clone()
            } else {
                Vec::new()
            },
            stamp_offset_by_position: traced_by(&offsets.first),
            stamp_offsets_by_position: if offsets.iterations > 0 {
                offsets.stamps.clone()
            } else {
                Vec::new()
            },
            stamp_reads_by_position: traced_by(&offsets.reads),
            traced_iterations: offsets.iterations,
            trace_error,
            baseline_multigrain: diff(&b_mg, &m_mg),
            multigrain: diff(&m_mg, &e_mg),
        })
    }
}

/// The kernel log's last `n` messages (`/dev/kmsg`, read without blocking; the console is
/// silenced, so a failed mount's reason is only there), joined with ` | `.
fn kmsg_tail(n: usize) -> String {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let Ok(mut f) = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open("/dev/kmsg")
    else {
        return "(no /dev/kmsg)".into();
    };
    let mut lines = std::collections::VecDeque::new();
    let mut buf = vec![0u8; 8192];
    // One record per read; EAGAIN at the end, EPIPE for a record overwritten meanwhile.
    for _ in 0..100_000 {
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(len) => {
                let rec = String::from_utf8_lossy(&buf[..len]);
                let msg = rec.split_once(';').map_or(&*rec, |(_, m)| m);
                lines.push_back(msg.lines().next().unwrap_or("").to_string());
                if lines.len() > n {
                    lines.pop_front();
                }
            }
            Err(e) if e.raw_os_error() == Some(libc::EPIPE) => continue,
            Err(_) => break,
        }
    }
    Vec::from(lines).join(" | ")
}

fn diff(before: &BTreeMap<String, u64>, after: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    after
        .iter()
        .map(|(k, &v)| {
            (
                k.clone(),
                v.saturating_sub(before.get(k).copied().unwrap_or(0)),
            )
        })
        .collect()
}
