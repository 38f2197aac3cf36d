//! `tscope vm guest`: arguments → [`GuestConfig`] → [`crate::vm::matrix::run`] → export → exit
//! code.

use super::boot::{boot_config, kernel_sources, unique};
use crate::cli::vm::GuestArgs;
use crate::commands::{Destination, Global, StderrProgress, Stop};
use crate::error::ConfigError;
use crate::vm::matrix::result::GuestStatus;
use crate::vm::matrix::{self, GuestConfig};

/// Validates `vm guest` arguments into a guest configuration.
pub fn config(a: &GuestArgs, global: &Global) -> Result<GuestConfig, ConfigError> {
    let clocksources = unique(&a.clocksource, "--clocksource")?;
    let boot = boot_config(&a.boot, a.timeout)?;
    if let Some(k) = &a.kernel {
        kernel_sources(&[], std::slice::from_ref(k))?;
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

/// `vm guest`: exit 1 when a guest hung or failed (the matrix is printed either way).
pub fn run(cfg: &GuestConfig, output: &Destination, stop: &Stop) -> anyhow::Result<i32> {
    let progress = StderrProgress::new(format!(
        "vm guest: {} clocksource(s), up to {} s each",
        cfg.clocksources.len(),
        cfg.boot.timeout.as_secs()
    ));
    let m = matrix::run(cfg, &progress);
    drop(progress);
    if let Some(code) = stop.nothing_written() {
        return Ok(code);
    }
    let m = m?;
    output.export(&m)?;
    let all_ok = m.guests.iter().all(|g| g.status == GuestStatus::Ok);
    Ok(if all_ok { 0 } else { 1 })
}
