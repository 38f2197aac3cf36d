//! `tscope vm count`: arguments → [`CountConfig`] → [`crate::vm::count::run`] → export → exit
//! code.

use super::boot::{boot_config, kernel_sources, unique};
use crate::cli::vm::CountArgs;
use crate::commands::{Destination, Global, StderrProgress, Stop};
use crate::error::ConfigError;
use crate::vm::count::{self, CountConfig};

/// Validates `vm count` arguments.
pub fn config(a: &CountArgs, _global: &Global) -> Result<CountConfig, ConfigError> {
    let mut cfg = CountConfig::new();
    if let Some(kernels) = kernel_sources(&a.matrix.kernel_package, &a.matrix.kernel)? {
        cfg.kernels = kernels;
    }
    cfg.workloads = unique(&a.matrix.workload, "--workload")?;
    cfg.filesystems = unique(&a.matrix.fs, "--fs")?;
    if !(1..=10_000_000).contains(&a.iterations) {
        return Err(ConfigError::range(
            "iterations",
            "1..=10000000",
            a.iterations,
        ));
    }
    cfg.boot = boot_config(&a.boot, a.matrix.timeout)?;
    cfg.iterations = a.iterations;
    cfg.clocksource = a.clocksource.map(Into::into);
    Ok(cfg)
}

/// `vm count`: 1 when `--fail-on mismatch` holds or a guest failed, 130 when interrupted (the
/// rows counted so far printed first).
pub fn run(
    cfg: &CountConfig,
    output: &Destination,
    fail_on_mismatch: bool,
    stop: &Stop,
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
