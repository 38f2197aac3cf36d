//! The guest side of `vm bench` (PID 1, when the initramfs carries a bench plan):
//! mount the test file systems, warm each workload up and fix its iterations, then run the
//! rounds. In each round the guest visits every requested clocksource in turn — switching at
//! run time by writing its name to `current_clocksource` and reading it back. A round has one
//! *slot* per clocksource: the costs the model needs (the precise read, paired as the probe
//! pairs it; the coarse read; a null syscall; a user-space spin) and every workload's ns per
//! op, each workload timed on every clocksource in turn (one switch per loop), so the two
//! halves of a comparison are taken a loop apart.
//!
//! The order alternates (A B, then B A, …) with the round and the workload: a drift within
//! the boot then cancels between the halves, and a boot's overall speed cancels within each
//! pair. Each round's slots are printed as console sections (`slot-N`) when the round ends, so
//! a guest killed late still gives what it measured.

use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::clocksource::{read, switch, AVAILABLE, CURRENT};
use super::loops;
pub(crate) use super::Planned;
use crate::error::{Context, Result};
use crate::measure::{paired_difference, PairedConfig};
use crate::sys::{self, clock};
use crate::trace::FsKind;
use crate::vm::boot::clock::{Clocksource, ClocksourceName};
use crate::vm::boot::plan::BenchPlan;
use crate::vm::boot::serial;
use crate::workload::WorkloadName;

/// What the guest prints first (the `bench` section, JSON).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct GuestHeader {
    /// `/proc/sys/kernel/osrelease`.
    pub release: String,
    /// `clock_getres(CLOCK_REALTIME_COARSE)`: the kernel's tick, from which the host derives
    /// `CONFIG_HZ` when the kernel's configuration is not at hand.
    pub coarse_res_ns: Option<u64>,
    /// The clocksource the kernel booted on and those it offers, as sysfs names them.
    pub boot_clocksource: ClocksourceName,
    pub available_clocksources: Vec<ClocksourceName>,
    /// Iterations of each file system × workload per slot (fixed after the warm-up).
    pub iterations: Vec<Planned>,
    /// Kernel modules loaded before mounting (xfs, btrfs and their dependencies).
    #[serde(default)]
    pub modules: Vec<String>,
    /// Set-up errors (a file system not mounted, a workload that failed its warm-up).
    #[serde(default)]
    pub errors: Vec<String>,
}

/// One visit of one clocksource in one round (a `slot-N` section, JSON).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Slot {
    pub round: u32,
    pub clocksource_requested: Clocksource,
    /// What `current_clocksource` read after the switch.
    pub clocksource_used: ClocksourceName,
    /// Why the switch did not take (the write failed, or the kernel kept another one); the
    /// slot then measures nothing.
    #[serde(default)]
    pub switch_error: Option<String>,
    #[serde(default)]
    pub costs: Option<SlotCosts>,
    #[serde(default)]
    pub runs: Vec<SlotRun>,
    #[serde(default)]
    pub errors: Vec<String>,
}

impl Slot {
    /// Round `round`'s visit of `requested`, before the switch.
    pub fn new(round: u32, requested: Clocksource) -> Self {
        Slot {
            round,
            clocksource_requested: requested,
            clocksource_used: ClocksourceName::default(),
            switch_error: None,
            costs: None,
            runs: Vec::new(),
            errors: Vec::new(),
        }
    }
}

/// The costs measured in one slot, ns.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct SlotCosts {
    /// syscall `clock_gettime(CLOCK_REALTIME)` − syscall `clock_gettime(CLOCK_REALTIME_COARSE)`,
    /// paired (median of pairs, [`crate::measure::paired_difference`]): one clocksource read.
    pub precise_read_ns: f64,
    pub precise_read_lower_ns: f64,
    pub precise_read_upper_ns: f64,
    /// The same with a one-byte `pwrite` to a file before each clock call: the read as a
    /// syscall that follows a file write finds the machine.
    #[serde(default)]
    pub precise_read_in_write_ns: Option<f64>,
    /// vDSO `clock_gettime(CLOCK_REALTIME_COARSE)`: a coarse read.
    pub coarse_read_ns: f64,
    /// syscall `getppid`: the null syscall (the control between boots).
    pub syscall_ns: f64,
    /// A fixed user-space spin (no kernel at all; [`SPIN_CALLS`] calls of a 1,000-step
    /// multiply-add loop), ns per call: the emulator's speed in this slot, and the control of
    /// what the clocksource costs all execution.
    pub spin_ns: f64,
}

/// One workload timed in one slot.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SlotRun {
    pub fs: FsKind,
    pub workload: WorkloadName,
    pub iterations: u64,
    pub ns_per_op: f64,
    /// The null syscall (`getppid`, ns) timed right before this loop: the kernel rows'
    /// control, taken where the loop runs.
    #[serde(default)]
    pub control_ns: Option<f64>,
}

fn section(out: &mut dyn Write, name: &str, body: &str) {
    let _ = writeln!(
        out,
        "\n{}\n{}\n{}",
        serial::begin(name),
        body,
        serial::end(name)
    );
    let _ = out.flush();
}

/// Calls of the user-space spin per slot: tens of ms under TCG, a fixed count so that the two
/// halves of a pair do the same work. Long enough to span several timer
/// ticks, so that what the clocksource costs every piece of execution (the tick's own reads)
/// shows in it.
pub(crate) const SPIN_CALLS: u32 = 10_000;

/// Mean ns per call of `f` over `n` calls.
fn per_call<R>(n: u32, mut f: impl FnMut() -> R) -> f64 {
    let started = Instant::now();
    for _ in 0..n {
        std::hint::black_box(f());
    }
    started.elapsed().as_nanos() as f64 / f64::from(n)
}

/// The slot's costs: the precise read paired against the coarse syscall (30 ms of pairs), the
/// coarse read, the null syscall and the spin.
pub(crate) fn costs(seed: u64) -> SlotCosts {
    let cfg = PairedConfig {
        budget: Duration::from_millis(30),
        batch: Duration::from_micros(50),
        warmup: Duration::from_millis(2),
        resamples: 200,
        seed,
        level: 0.95,
    };
    let precise = paired_difference(
        &cfg,
        || clock::syscall_clock_gettime(clock::id::REALTIME),
        || clock::syscall_clock_gettime(clock::id::REALTIME_COARSE),
    );
    // Each step through black_box, so that every build runs the same 1,000 dependent steps
    // (left to itself the optimiser lays the loop out differently from build to build, and the
    // spin's length under TCG moved tenfold between two builds of the same source).
    let spin = || {
        let mut acc = 0u64;
        for i in 0..std::hint::black_box(1_000u64) {
            acc = std::hint::black_box(acc.wrapping_mul(31).wrapping_add(i));
        }
        acc
    };
    let (p, lo, hi) = precise.map_or((f64::NAN, f64::NAN, f64::NAN), |d| {
        (d.diff_ns.point, d.diff_ns.lower, d.diff_ns.upper)
    });
    SlotCosts {
        precise_read_in_write_ns: in_write(&cfg),
        precise_read_ns: p,
        precise_read_lower_ns: lo,
        precise_read_upper_ns: hi,
        coarse_read_ns: per_call(20_000, || {
            clock::vdso_clock_gettime(clock::id::REALTIME_COARSE)
        }),
        syscall_ns: per_call(5_000, sys::clock::syscall_getppid),
        spin_ns: per_call(SPIN_CALLS, spin),
    }
}

/// The precise read paired as above, each call after a one-byte `pwrite` to a file in the
/// guest's root (no stat, so no multigrain fine read): the clocksource read as a syscall that
/// follows a file write finds the machine, not as a tight loop of clock syscalls does.
fn in_write(cfg: &PairedConfig) -> Option<f64> {
    let path = std::ffi::CString::new("/tscope-cost.file").ok()?;
    let flags = libc::O_RDWR | libc::O_CREAT | libc::O_TRUNC;
    let fd = crate::sys::fs::open(&path, flags, 0o600).ok()?;
    let write = || crate::sys::fs::pwrite_byte(std::os::fd::AsFd::as_fd(&fd), 1, 0);
    let d = paired_difference(
        cfg,
        || (write(), clock::syscall_clock_gettime(clock::id::REALTIME)),
        || {
            (
                write(),
                clock::syscall_clock_gettime(clock::id::REALTIME_COARSE),
            )
        },
    );
    let _ = crate::sys::fs::close(fd);
    let _ = crate::sys::fs::unlink(&path);
    d.map(|d| d.diff_ns.point)
}

/// ns per op of `n` iterations of `workload` in `dir`.
fn time_loop(workload: WorkloadName, dir: &Path, n: u64) -> Result<f64> {
    let t = loops::run_loop(workload, dir, n)?;
    Ok(t.as_nanos() as f64 / n.max(1) as f64)
}

/// Iterations of `workload` that take about `ms` milliseconds at the fastest rate seen in
/// doubling warm-up loops (a loop slowed by a host stall must not shrink the count).
fn calibrate(workload: WorkloadName, dir: &Path, ms: u64) -> Result<u64> {
    let target_ns = ms as f64 * 1e6;
    let mut n = 4u64;
    let mut best = f64::INFINITY;
    loop {
        let t = loops::run_loop(workload, dir, n)?.as_nanos() as f64;
        best = best.min((t / n as f64).max(1.0));
        if n as f64 * best >= target_ns / 4.0 || n >= 1 << 30 {
            return Ok(((target_ns / best).ceil() as u64).max(4));
        }
        n *= 2;
    }
}

/// Mounts `fs` on `/mnt/FS` (tmpfs, or its NVMe disk) and returns the directory.
fn mount(fs: FsKind, disks: usize) -> Result<String> {
    let dir = format!("/mnt/{fs}");
    let source = if crate::vm::boot::disk::needs_disk(fs) {
        crate::vm::boot::disk::find_in_guest(fs, disks)?
    } else {
        fs.to_string()
    };
    sys::guest::mount(&source, &dir, fs.name())
        .with_context(|| format!("mount {source} ({fs}) on {dir}"))?;
    Ok(dir)
}

/// Runs the bench in the guest, printing the `bench` section and one `slot-N` section per
/// slot to `out`.
pub(crate) fn run(asked: &BenchPlan, out: &mut dyn Write) -> Result<()> {
    let (workloads, clocksources) = (&asked.workloads, &asked.clocksources);
    let filesystems = &asked.filesystems;
    let (rounds, ms, fixed, seed) = (asked.rounds, asked.slot_ms, asked.iterations, asked.seed);
    let mut header = GuestHeader {
        release: read("/proc/sys/kernel/osrelease"),
        coarse_res_ns: clock::clock_getres(clock::id::REALTIME_COARSE).ok(),
        boot_clocksource: read(CURRENT).into(),
        available_clocksources: read(AVAILABLE)
            .split_whitespace()
            .map(ClocksourceName::from)
            .collect(),
        ..GuestHeader::default()
    };
    match crate::vm::boot::modules::load_in_guest() {
        Ok(loaded) => header.modules = loaded,
        Err(e) => header.errors.push(format!("{e:#}")),
    }
    if !super::clocksource::await_late(clocksources, Duration::from_secs(10)) {
        header.errors.push(format!(
            "after 10 s the kernel still offers an early clocksource only: {}",
            read(AVAILABLE)
        ));
    }
    let disks = crate::vm::boot::disk::disk_filesystems(filesystems).len();
    let mut plan: Vec<(Planned, String)> = Vec::new();
    for &fs in filesystems {
        let dir = match mount(fs, disks) {
            Ok(d) => d,
            Err(e) => {
                header.errors.push(format!("{e:#}"));
                continue;
            }
        };
        for &w in workloads {
            // The warm-up also translates the loop's code once (TCG), before any slot.
            match calibrate(w, Path::new(&dir), ms) {
                Ok(n) => {
                    let iterations = if fixed > 0 { fixed } else { n };
                    let p = Planned {
                        fs,
                        workload: w,
                        iterations,
                    };
                    header.iterations.push(p.clone());
                    plan.push((p, dir.clone()));
                }
                Err(e) => header.errors.push(format!("{fs}/{w}: {e:#}")),
            }
        }
    }
    section(out, "bench", &serde_json::to_string(&header)?);
    let mut n = 0usize;
    for round in 0..rounds {
        let slots = run_round(round, clocksources, &plan, seed.wrapping_add(n as u64));
        for slot in slots {
            section(out, &format!("slot-{n}"), &serde_json::to_string(&slot)?);
            n += 1;
        }
    }
    let reads = asked.reads;
    if reads > 0 {
        let (counts, mut errors) = super::reads::count(clocksources, &plan, reads);
        let (times, timing_errors) = super::readtime::time(clocksources, &plan, reads);
        errors.extend(timing_errors);
        let r = super::reads::GuestReads {
            counts,
            errors,
            times,
        };
        section(out, "reads", &serde_json::to_string(&r)?);
    }
    let pair_iterations = asked.pair_iterations;
    if pair_iterations > 0 {
        let mut dirs: Vec<(FsKind, String)> = Vec::new();
        for (p, dir) in &plan {
            if !dirs.iter().any(|(fs, _)| *fs == p.fs) {
                dirs.push((p.fs, dir.clone()));
            }
        }
        let first = clocksources.first().copied().unwrap_or(Clocksource::Tsc);
        let pairs = super::pairs::run_in_guest(first, &dirs, pair_iterations);
        section(out, "pairs", &serde_json::to_string(&pairs)?);
    }
    Ok(())
}

/// One round: a slot per clocksource, filled visit by visit. The costs are measured first,
/// one clocksource after the other; then each workload is timed on every clocksource in turn,
/// so the two halves of a pair are taken one loop apart, not a whole round. The order
/// alternates with the round and the workload (A B, then B A), so that neither side always
/// runs first after a switch.
fn run_round(
    round: u32,
    clocksources: &[Clocksource],
    plan: &[(Planned, String)],
    seed: u64,
) -> Vec<Slot> {
    let mut slots: Vec<Slot> = clocksources
        .iter()
        .map(|&cs| Slot::new(round, cs))
        .collect();
    let order = |k: usize| -> Vec<usize> {
        let mut o: Vec<usize> = (0..clocksources.len()).collect();
        if k % 2 == 1 {
            o.reverse();
        }
        o
    };
    // Switches to slot i's clocksource; false (and the slot says why) when it did not take.
    let visit = |slot: &mut Slot| -> bool {
        if slot.switch_error.is_some() {
            return false;
        }
        let (used, error) = switch(slot.clocksource_requested);
        slot.clocksource_used = used;
        slot.switch_error = error;
        slot.switch_error.is_none()
    };
    for (k, i) in order(round as usize).into_iter().enumerate() {
        if visit(&mut slots[i]) {
            slots[i].costs = Some(costs(seed.wrapping_add(k as u64)));
        }
    }
    for (w, (p, dir)) in plan.iter().enumerate() {
        for i in order(round as usize + w) {
            let slot = &mut slots[i];
            if !visit(slot) {
                continue;
            }
            let control = per_call(1_000, sys::clock::syscall_getppid);
            match time_loop(p.workload, Path::new(dir), p.iterations) {
                Ok(ns_per_op) => slot.runs.push(SlotRun {
                    fs: p.fs,
                    workload: p.workload,
                    iterations: p.iterations,
                    ns_per_op,
                    control_ns: Some(control),
                }),
                Err(e) => slot.errors.push(format!("{}/{}: {e:#}", p.fs, p.workload)),
            }
        }
    }
    slots
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_and_loops_run_on_the_host_too() {
        let c = costs(3);
        assert!(c.coarse_read_ns > 0.0 && c.syscall_ns > 0.0 && c.spin_ns > 0.0);
        assert!(c.precise_read_lower_ns <= c.precise_read_upper_ns, "{c:?}");
        let dir = tempfile::tempdir().unwrap();
        for w in crate::workload::def::LOOPS {
            assert!(time_loop(w, dir.path(), 3).unwrap() > 0.0, "{w:?}");
        }
        assert!(time_loop(WorkloadName::Mem, dir.path(), 1).is_err());
        assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
    }
}
