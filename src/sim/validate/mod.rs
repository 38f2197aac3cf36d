//! `simulate --validate`: how close the simulator comes to what really happens, on this
//! machine. Three checks, each printing predicted against measured and the error:
//!
//! - [`emulate`] (`pipe1`, `vfsmix`): runs the workload for real and, per policy, adds the
//!   policy's timestamp reads with real sources; measured ops/s against the model's ops/s.
//! - [`accuracy`] (`accuracy`, `write-only`, `write-stat`): runs the workloads on tmpfs and the
//!   root filesystem and compares the multigrain model's share of equal successive mtimes with
//!   the kernel's.
//! - [`update`] (`update`): the live knob pair on each directory prices the inode update from
//!   write-stat, then holds the model to two and four writes per query and a create/unlink loop.
//! - [`seed`] (`seed`, `netbsd-seed`, `netbsd-seed-vfsmix`): the back-solved costs put back
//!   into the models against the published NetBSD figures.
//!
//! Nothing is asserted here: the error is a measurement, written into docs/validation.md.

pub mod accuracy;
pub mod by_call;
pub mod chain;
pub mod emulate;
pub mod noise;
pub mod seed;
pub mod stopping;
pub mod update;

use super::config::{SimulateConfig, Validation};
pub use super::result::{Row, ValidationReport, GOAL_PCT, VALIDATION_SCHEMA_VERSION};

/// Which validation a `--validate` name asks for.
pub fn run(cfg: &SimulateConfig, v: &Validation) -> crate::error::Result<ValidationReport> {
    let name = v.check.as_str();
    match name {
        "seed" | "netbsd-seed" | "netbsd-seed-vfsmix" => seed::run(cfg),
        "accuracy" | "write-only" | "write-stat" => accuracy::run(cfg, v),
        "pipe1" | "vfsmix" => emulate::run(cfg, v),
        "update" => update::run(cfg, v),
        other => crate::fail!(
            "--validate '{other}': validations exist for pipe1 and vfsmix (cost, by emulation), \
             accuracy, write-only and write-stat (multigrain mtimes on the live kernel), update (the \
             inode update's price on loops it was not calibrated on), and seed (the NetBSD \
             figures)"
        ),
    }
}

/// One live run of a `tscope run` workload with one task, pinned, for `secs` seconds.
pub(crate) fn run_workload(
    name: &str,
    secs: f64,
    dir: Option<&std::path::Path>,
) -> crate::error::Result<crate::workload::RunReport> {
    use crate::workload::{RunConfig, WorkloadName};
    use std::time::Duration;
    let workload = WorkloadName::parse(name)
        .ok_or_else(|| crate::failure!("running {name}: no workload of that name"))?;
    // Ten samples a run (the emulation takes a quantile of them), at least 50 ms each.
    let interval = Duration::from_millis(((secs * 1000.0 / 10.0).round() as u64).clamp(50, 1000));
    let mut cfg = RunConfig {
        tasks: vec![1],
        ..RunConfig::new(workload).timed(Duration::from_secs_f64(secs), interval, interval)
    };
    if let Some(d) = dir {
        crate::ensure!(
            d.is_dir(),
            "running {name}: '{}' is not an existing directory; create it or pick another",
            d.display()
        );
        cfg.dir = d.to_path_buf();
    }
    let report = crate::workload::execute(&cfg)?;
    crate::ensure!(
        !report.stopped && !report.runs.is_empty(),
        "{name} stopped early (a signal?): no validation figure"
    );
    Ok(report)
}

/// The simulator's filesystem kind for a run's `fs_type`.
pub(crate) fn fs_kind(fs_type: Option<&str>) -> crate::trace::FsKind {
    fs_type
        .and_then(crate::trace::FsKind::parse)
        .unwrap_or(crate::trace::FsKind::Other)
}

/// A bundled scenario with every non-pipe op moved to `fs`.
pub(crate) fn scenario_on(
    name: &str,
    fs: Option<crate::trace::FsKind>,
) -> crate::error::Result<crate::trace::CompiledScenario> {
    use crate::trace::{bundled, FsKind, Scenario};
    let text = bundled::get(name)
        .ok_or_else(|| crate::failure!("bundled scenario '{name}' is missing from this build"))?;
    let mut c = Scenario::from_json(text, &format!("bundled:{name}"))?.compile();
    if let Some(fs) = fs {
        for op in c.ops.iter_mut().filter(|o| o.fs != FsKind::Pipefs) {
            op.fs = fs;
        }
    }
    Ok(c)
}
