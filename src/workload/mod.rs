//! `tscope run`: workloads on the real kernel, with will-it-scale's semantics so that the
//! numbers compare with what the field publishes, and the other measurements of the source
//! documents (sv_mem's pre-fault and copy, the `sched_yield` check, page zeroing).
//!
//! [`runner`] runs tasks (processes or threads, pinned) and samples their counters; each
//! syscall workload ([`pipe`], [`vfsmix`], [`mod@write`], [`null`]) defines one iteration;
//! [`iteration`] lists each iteration's system calls for the docs, the report and the
//! [`run_record::RunRecord`] that `--record` writes;
//! [`mem`] and [`pagezero`] are timed loops of their own. Nothing here prints: [`report`]
//! turns the [`RunReport`] into bytes.

pub mod config;
pub mod inject;
pub mod iteration;
pub mod mem;
pub mod null;
pub mod pagezero;
pub mod pipe;
pub mod report;
pub mod result;
pub mod run_record;
pub mod runner;
pub mod scratch;
pub mod summary;
pub mod vfsmix;
pub mod write;

use std::time::Duration;

use anyhow::Context;

pub use config::RunConfig;
pub use result::{MemOp, Mode, Placement, RunReport, WorkloadName};

use crate::cli::run::RunArgs;
use crate::export::Exporter;
use crate::sys;
use runner::{RunPlan, Workload};

/// Exit code of a run stopped by SIGINT/SIGTERM (results printed, marked partial).
pub const EXIT_INTERRUPTED: i32 = 130;

/// Validates `args`, runs, prints (and records); returns the exit code.
pub fn main(args: &RunArgs) -> anyhow::Result<i32> {
    let cfg = RunConfig::try_from(args)?;
    sys::signal::install_stop_handler().context("installing the SIGINT/SIGTERM handler")?;
    let report = execute(&cfg)?;
    let bytes = report::RunView(&report).export(cfg.format)?;
    crate::export::emit(&bytes, cfg.out.as_deref())?;
    if let Some(path) = &cfg.record {
        run_record::RunRecord::of(&report).write(path)?;
    }
    Ok(if report.partial { EXIT_INTERRUPTED } else { 0 })
}

fn machine(cfg: &RunConfig) -> result::RunMachine {
    let m = crate::probe::machine::gather();
    result::RunMachine {
        kernel_release: m.kernel_release,
        cpu_model: m.cpu_model,
        cpus_online: m.cpus_online,
        allowed_cpus: cfg.cpus.clone(),
        hypervisor_bit: m.hypervisor_bit,
        clocksource: m.clocksource.current,
        load_average: std::fs::read_to_string("/proc/loadavg")
            .ok()
            .and_then(|t| parse_loadavg(&t)),
    }
}

/// The three load averages of `/proc/loadavg`.
pub fn parse_loadavg(text: &str) -> Option<[f64; 3]> {
    let mut it = text.split_whitespace().map(|x| x.parse::<f64>().ok());
    Some([it.next()??, it.next()??, it.next()??])
}

/// Runs everything `cfg` asks for.
pub fn execute(cfg: &RunConfig) -> anyhow::Result<RunReport> {
    let w = cfg.workload;
    let scratch = if w.uses_dir() {
        Some(scratch::ScratchDir::create(&cfg.dir)?)
    } else {
        None
    };
    let fs = scratch.as_ref().map(|s| scratch::fs_info(s.path()));
    let fs_type = match (&fs, w) {
        (Some(f), _) => Some(f.fs_type.clone()),
        (None, WorkloadName::Pipe1 | WorkloadName::Pingpong) => Some("pipefs".to_string()),
        _ => None,
    };
    let iteration = iteration::ops(w, fs_type.as_deref().unwrap_or("none"));
    let mut report = RunReport {
        schema_version: 1,
        workload: w,
        partial: false,
        pinned: cfg.pin,
        duration_s: cfg.duration.as_secs_f64(),
        warmup_s: cfg.warmup.as_secs_f64(),
        interval_s: cfg.interval.as_secs_f64(),
        dir: scratch.as_ref().map(|_| cfg.dir.display().to_string()),
        fs_type,
        mount_options: fs.as_ref().map(|f| f.options.clone()),
        syscalls_per_iteration: iteration::syscalls(&iteration),
        iteration,
        machine: machine(cfg),
        runs: Vec::new(),
        mem: None,
        pagezero: None,
        warnings: Vec::new(),
    };
    if let Some(f) = &fs {
        if w == WorkloadName::Vfsmix && f.options.iter().any(|o| o == "discard") {
            report.warnings.push(format!(
                "{} is mounted with 'discard': every unlink frees a block with a synchronous discard and waits for writeback, so vfsmix here measures the disk more than the VFS (use a tmpfs --dir such as /dev/shm to compare)",
                cfg.dir.display()
            ));
        }
    }
    let dir = scratch.as_ref().map(|s| s.path().to_path_buf());
    match w {
        WorkloadName::Pipe1 => run_all(&pipe::Pipe1, cfg, &mut report)?,
        WorkloadName::Pingpong => run_all(&pipe::Pingpong, cfg, &mut report)?,
        WorkloadName::Vfsmix => run_all(
            &vfsmix::Vfsmix {
                dir: dir.clone().expect("vfsmix has a scratch dir"),
            },
            cfg,
            &mut report,
        )?,
        WorkloadName::WriteOnly | WorkloadName::WriteStat => run_all(
            &write::WriteFile {
                dir: dir.clone().expect("write workloads have a scratch dir"),
                stat: w == WorkloadName::WriteStat,
            },
            cfg,
            &mut report,
        )?,
        WorkloadName::Getppid => run_all(&null::Getppid, cfg, &mut report)?,
        WorkloadName::SchedYield => {
            let calibration =
                (cfg.interval / 5).clamp(Duration::from_millis(5), Duration::from_millis(100));
            run_all(&null::SchedYield { calibration }, cfg, &mut report)?
        }
        WorkloadName::Mem => {
            let (m, partial) = mem::run(&cfg.mem, cfg.pin.then_some(&cfg.cpus[..]))?;
            report.mem = Some(m);
            report.partial = partial;
        }
        WorkloadName::Pagezero => {
            let (z, partial) = pagezero::run(cfg.cold_bytes, cfg.pin.then_some(cfg.cpus[0]))?;
            report.pagezero = Some(z);
            report.partial = partial;
        }
    }
    drop(scratch);
    Ok(report)
}

fn run_all<W: Workload>(w: &W, cfg: &RunConfig, report: &mut RunReport) -> anyhow::Result<()> {
    let ncpu = cfg.cpus.len();
    if !cfg.pin {
        report.warnings.push(
            "tasks are not pinned (--no-pin): the scheduler may move them between CPUs mid-sample"
                .into(),
        );
    }
    if report.machine.hypervisor_bit {
        report.warnings.push(
            "hypervisor detected: a wake-up on another vCPU can cost tens of µs (an IPI is a VM exit)".into(),
        );
    }
    let samples =
        ((cfg.duration.as_secs_f64() / cfg.interval.as_secs_f64()).round() as usize).max(1);
    'outer: for &tasks in &cfg.tasks {
        let workers = tasks * w.workers_per_task();
        if cfg.pin && workers > ncpu && !(w.workers_per_task() == 2 && tasks <= ncpu) {
            report.warnings.push(format!(
                "{workers} workers on {ncpu} CPUs: some share a CPU, so per-task rates are not independent"
            ));
        }
        for &mode in &cfg.modes {
            for &placement in &cfg.placements {
                if sys::signal::stop_requested() {
                    report.partial = true;
                    break 'outer;
                }
                let plan = RunPlan {
                    tasks,
                    mode,
                    placement,
                    cpus: if cfg.pin {
                        cfg.cpus.clone()
                    } else {
                        Vec::new()
                    },
                    warmup: cfg.warmup,
                    interval: cfg.interval,
                    samples,
                };
                let result = runner::run(w, &plan).with_context(|| {
                    format!(
                        "{} with {tasks} task(s) as {}",
                        report.workload.as_str(),
                        mode.as_str()
                    )
                })?;
                let partial = result.partial;
                report.runs.push(result);
                if partial {
                    report.partial = true;
                    break 'outer;
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn loadavg_parses() {
        assert_eq!(
            super::parse_loadavg("5.71 3.09 1.41 3/250 1234\n"),
            Some([5.71, 3.09, 1.41])
        );
        assert_eq!(super::parse_loadavg("5.71"), None);
    }
}
