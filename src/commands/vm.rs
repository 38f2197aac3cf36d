//! `tscope vm guest | exits | guest-init`: measure inside real guests.

use std::time::Duration;

use super::{Global, Output, StderrProgress};
use crate::cli::vm::{CountArgs, CountFailOn, ExitsArgs, GuestArgs, VmArgs, VmCommand};
use crate::error::ConfigError;
use crate::vm::count::{self, guest as count_guest};
use crate::vm::count::{CountConfig, KernelSource};
use crate::vm::guest::matrix;
use crate::vm::guest::{self, GuestConfig};
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
    let check = |name: &'static str, what: &'static str, ok: bool, value: u64| {
        if ok {
            Ok(())
        } else {
            Err(ConfigError::range(name, what, value))
        }
    };
    check(
        "timeout",
        "1..=3600 seconds",
        (1..=3600).contains(&a.timeout),
        a.timeout,
    )?;
    check("smp", "1..=64", (1..=64).contains(&a.smp), a.smp.into())?;
    let mem_ok = (128..=65536).contains(&a.memory);
    check("memory", "128..=65536 MiB", mem_ok, a.memory.into())?;
    Ok(GuestConfig {
        clocksources,
        accel: a.accel,
        timeout: Duration::from_secs(a.timeout),
        kernel: a.kernel.clone(),
        kernel_package: a.kernel_package.clone(),
        guest_bin: a.guest_bin.clone(),
        smp: a.smp,
        memory_mb: a.memory,
        tsc_reliable: a.tsc_reliable,
        all_sources: a.all_sources,
        append: a.append.clone(),
        pvh: !a.no_pvh,
        qemu: a.qemu.clone(),
        measure_host: !a.no_host,
        emulate_trap: global.emulate_trap,
    })
}

/// Runs one `tscope vm` subcommand; returns the exit code.
pub fn run(args: &VmArgs, global: &Global) -> anyhow::Result<i32> {
    match &args.command {
        VmCommand::Guest(a) => guest(a, global),
        VmCommand::Exits(a) => exits(a),
        VmCommand::Count(a) => count(a),
        VmCommand::Bench(a) => super::vm_bench::run(a),
        VmCommand::GuestInit => Ok(init::guest_init(&mut std::io::stdout().lock())?),
    }
}

/// `vm guest`: exit 1 when a guest hung or failed (the matrix is printed either way).
fn guest(a: &GuestArgs, global: &Global) -> anyhow::Result<i32> {
    let cfg = guest_config(a, global)?;
    let output = Output::new(&a.output)?.with_exports(&a.export)?;
    super::stop_on_signal()?;
    let progress = StderrProgress::new(format!(
        "vm guest: {} clocksource(s), up to {} s each",
        cfg.clocksources.len(),
        cfg.timeout.as_secs()
    ));
    let m = guest::run(&cfg, &progress);
    drop(progress);
    if let Some(code) = super::interrupted() {
        return Ok(code);
    }
    let m = match m {
        Err(e) if crate::vm::boot::child::is_interrupted(&e) => return Ok(super::EXIT_INTERRUPTED),
        other => other?,
    };
    output.export(&m)?;
    let all_ok = m.guests.iter().all(|g| g.status == matrix::GuestStatus::Ok);
    Ok(if all_ok { 0 } else { 1 })
}

/// `vm exits`: the micro-VM's exit costs.
fn exits(a: &ExitsArgs) -> anyhow::Result<i32> {
    if a.iterations == 0 {
        return Err(ConfigError::range("iterations", "at least 1", 0).into());
    }
    let output = Output::new(&a.output)?.with_exports(&a.export)?;
    let r = exits::run(a.iterations)?;
    output.export(&r)?;
    Ok(0)
}

/// Validates `vm count` arguments.
pub fn count_config(a: &CountArgs) -> Result<CountConfig, ConfigError> {
    let bad = |m: String| Err(ConfigError::Invalid(m));
    let mut cfg = CountConfig::new();
    if !a.kernel_package.is_empty() || !a.kernel.is_empty() {
        cfg.kernels = a
            .kernel_package
            .iter()
            .map(|p| KernelSource::Package(p.clone()))
            .chain(a.kernel.iter().map(|p| KernelSource::Path(p.clone())))
            .collect();
    }
    for p in &a.kernel_package {
        if let Err(e) = crate::vm::boot::apt::split_spec(p) {
            return bad(format!("--kernel-package: {e}"));
        }
    }
    for k in &a.kernel {
        if !k.is_file() {
            return bad(format!("--kernel: '{}' is not a file", k.display()));
        }
    }
    cfg.workloads.clear();
    for w in &a.workload {
        let w = w.trim();
        if !count_guest::WORKLOADS.contains(&w) {
            return bad(format!(
                "--workload: '{w}' is not one of {}",
                count_guest::WORKLOADS.join(", ")
            ));
        }
        if !cfg.workloads.iter().any(|x| x == w) {
            cfg.workloads.push(w.to_string());
        }
    }
    cfg.filesystems.clear();
    for f in &a.fs {
        let f = f.trim();
        if !crate::vm::boot::disk::FILESYSTEMS.contains(&f) {
            return bad(format!(
                "--fs: '{f}' is not supported (one of {})",
                crate::vm::boot::disk::FILESYSTEMS.join(", ")
            ));
        }
        if !cfg.filesystems.iter().any(|x| x == f) {
            cfg.filesystems.push(f.to_string());
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
    if !(1..=3600).contains(&a.timeout) {
        return Err(ConfigError::range("timeout", "1..=3600 seconds", a.timeout));
    }
    if !(128..=65536).contains(&a.memory) {
        return Err(ConfigError::range("memory", "128..=65536 MiB", a.memory));
    }
    cfg.iterations = a.iterations;
    cfg.accel = a.accel;
    cfg.timeout = Duration::from_secs(a.timeout);
    cfg.guest_bin = a.guest_bin.clone();
    cfg.qemu = a.qemu.clone();
    cfg.memory_mb = a.memory;
    Ok(cfg)
}

/// `vm count`: 1 when `--fail-on mismatch` holds or a guest failed, 130 when interrupted.
fn count(a: &CountArgs) -> anyhow::Result<i32> {
    let cfg = count_config(a)?;
    let output = Output::new(&a.output)?.with_exports(&a.export)?;
    crate::sys::signal::install_stop_handler()?;
    let progress = StderrProgress::new("vm count");
    let r = count::run(&cfg, &progress);
    drop(progress);
    let r = r?;
    output.export(&r)?;
    if r.interrupted {
        return Ok(130);
    }
    let mismatch = a.fail_on.contains(&CountFailOn::Mismatch) && r.mismatches().next().is_some();
    let failed = r.kernels.iter().any(|k| k.error.is_some());
    Ok(if mismatch || failed { 1 } else { 0 })
}
