//! `tscope vm guest | exits | guest-init`: measure inside real guests.

use super::boot::boot_config;
use super::{Destination, Global, StderrProgress};
use crate::cli::vm::{CountArgs, CountFailOn, ExitsArgs, GuestArgs, VmArgs, VmCommand};
use crate::error::ConfigError;
use crate::vm::count;
use crate::vm::count::CountConfig;
use crate::vm::matrix::result as matrix;
use crate::vm::matrix::{self as matrix_room, GuestConfig};
use crate::vm::{exits, init};

/// Validates `vm guest` arguments into a guest configuration.
pub fn guest_config(a: &GuestArgs, global: &Global) -> Result<GuestConfig, ConfigError> {
    let mut clocksources = Vec::new();
    for cs in &a.clocksource {
        let cs = cs.trim();
        let ok = !cs.is_empty()
            && cs
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !ok {
            return Err(ConfigError::Invalid(format!(
                "--clocksource: '{cs}' is not a clocksource name (e.g. tsc,kvm-clock,hpet,acpi_pm)"
            )));
        }
        if !clocksources.iter().any(|c| c == cs) {
            clocksources.push(cs.to_string());
        }
    }
    if clocksources.is_empty() {
        return Err(ConfigError::Invalid(
            "--clocksource: name at least one clocksource".into(),
        ));
    }
    let boot = boot_config(&a.boot, a.timeout)?;
    if let Some(k) = &a.kernel {
        super::boot::kernel_sources(&[], std::slice::from_ref(k))?;
    }
    if !(1..=64).contains(&a.smp) {
        return Err(ConfigError::range("smp", "1..=64", a.smp));
    }
    Ok(GuestConfig {
        clocksources,
        boot,
        kernel: a.kernel.clone(),
        kernel_package: a.kernel_package.clone(),
        smp: a.smp,
        tsc_reliable: a.tsc_reliable,
        all_sources: a.all_sources,
        pvh: !a.no_pvh,
        measure_host: !a.no_host,
        emulate_trap: global.emulate_trap,
    })
}

/// `tscope vm …`: one room.
#[derive(Debug)]
pub struct Vm;

/// One `tscope vm` subcommand, checked.
#[derive(Debug)]
pub enum VmJob {
    Guest(GuestConfig, Destination),
    Exits(u32, Destination),
    /// The configuration, the output, and whether `--fail-on mismatch` was asked.
    Count(Box<CountConfig>, Destination, bool),
    Bench(Box<super::vm_bench::BenchJob>),
    /// tscope as PID 1 inside a guest.
    GuestInit,
}

impl super::Command for Vm {
    type Args = VmArgs;
    type Config = VmJob;

    fn configure(args: &VmArgs, global: &Global) -> anyhow::Result<VmJob> {
        let out =
            |o, e| -> anyhow::Result<Destination> { Ok(Destination::new(o)?.with_exports(e)?) };
        Ok(match &args.command {
            VmCommand::Guest(a) => {
                VmJob::Guest(guest_config(a, global)?, out(&a.output, &a.export)?)
            }
            VmCommand::Exits(a) => {
                VmJob::Exits(exits_config(a, global)?, out(&a.output, &a.export)?)
            }
            VmCommand::Count(a) => VmJob::Count(
                Box::new(count_config(a, global)?),
                out(&a.output, &a.export)?,
                a.fail_on.contains(&CountFailOn::Mismatch),
            ),
            VmCommand::Bench(a) => VmJob::Bench(Box::new(super::vm_bench::job(a, global)?)),
            VmCommand::GuestInit => VmJob::GuestInit,
        })
    }

    fn while_running(job: &VmJob) -> super::OnSignal {
        match job {
            VmJob::Exits(..) | VmJob::GuestInit => super::OnSignal::Default,
            _ => super::OnSignal::Stop,
        }
    }

    fn execute(job: VmJob, stop: &super::Stop) -> anyhow::Result<i32> {
        match job {
            VmJob::Guest(cfg, output) => guest(&cfg, &output, stop),
            VmJob::Exits(iterations, output) => {
                let r = exits::run(iterations)?;
                output.export(&r)?;
                Ok(0)
            }
            VmJob::Count(cfg, output, fail_on_mismatch) => {
                count(&cfg, &output, fail_on_mismatch, stop)
            }
            VmJob::Bench(job) => super::vm_bench::run(*job, stop),
            VmJob::GuestInit => Ok(init::guest_init(&mut std::io::stdout().lock())?),
        }
    }
}

/// `vm guest`: exit 1 when a guest hung or failed (the matrix is printed either way).
fn guest(cfg: &GuestConfig, output: &Destination, stop: &super::Stop) -> anyhow::Result<i32> {
    let progress = StderrProgress::new(format!(
        "vm guest: {} clocksource(s), up to {} s each",
        cfg.clocksources.len(),
        cfg.boot.timeout.as_secs()
    ));
    let m = matrix_room::run(cfg, &progress);
    drop(progress);
    if let Some(code) = stop.nothing_written() {
        return Ok(code);
    }
    let m = m?;
    output.export(&m)?;
    let all_ok = m.guests.iter().all(|g| g.status == matrix::GuestStatus::Ok);
    Ok(if all_ok { 0 } else { 1 })
}

/// The most iterations of each exit kind `vm exits` runs.
pub const MAX_EXITS_ITERATIONS: u32 = 1_000_000;

/// Validates `vm exits` arguments: the iterations of each exit kind (the micro-VM's whole
/// configuration).
pub fn exits_config(a: &ExitsArgs, _global: &Global) -> Result<u32, ConfigError> {
    if a.iterations == 0 {
        return Err(ConfigError::range("iterations", "at least 1", 0));
    }
    if a.iterations > MAX_EXITS_ITERATIONS {
        return Err(ConfigError::range(
            "iterations",
            format!("1..={MAX_EXITS_ITERATIONS}"),
            a.iterations,
        ));
    }
    Ok(a.iterations)
}

/// Validates `vm count` arguments.
pub fn count_config(a: &CountArgs, _global: &Global) -> Result<CountConfig, ConfigError> {
    let bad = |m: String| Err(ConfigError::Invalid(m));
    let mut cfg = CountConfig::new();
    if let Some(kernels) = super::boot::kernel_sources(&a.matrix.kernel_package, &a.matrix.kernel)?
    {
        cfg.kernels = kernels;
    }
    cfg.workloads.clear();
    for &w in &a.matrix.workload {
        let w = w.into();
        if !cfg.workloads.contains(&w) {
            cfg.workloads.push(w);
        }
    }
    cfg.filesystems.clear();
    for &f in &a.matrix.fs {
        let f = f.into();
        if !cfg.filesystems.contains(&f) {
            cfg.filesystems.push(f);
        }
    }
    if cfg.workloads.is_empty() || cfg.filesystems.is_empty() {
        return bad("--workload/--fs: name at least one".into());
    }
    if !(1..=10_000_000).contains(&a.iterations) {
        return Err(ConfigError::range(
            "iterations",
            "1..=10000000",
            a.iterations,
        ));
    }
    cfg.boot = boot_config(&a.boot, a.matrix.timeout)?;
    cfg.iterations = a.iterations;
    cfg.clocksource = a.clocksource.map(|c| c.kernel_name().to_string());
    Ok(cfg)
}

/// `vm count`: 1 when `--fail-on mismatch` holds or a guest failed, 130 when interrupted (the
/// rows counted so far printed first).
fn count(
    cfg: &CountConfig,
    output: &Destination,
    fail_on_mismatch: bool,
    stop: &super::Stop,
) -> anyhow::Result<i32> {
    let progress = StderrProgress::new("vm count");
    let r = count::run(cfg, &progress);
    drop(progress);
    let r = r?;
    output.export(&r)?;
    let mismatch = fail_on_mismatch && r.mismatches().next().is_some();
    let failed = r.kernels.iter().any(|k| k.error.is_some());
    Ok(stop.exit_code(if mismatch || failed { 1 } else { 0 }))
}
