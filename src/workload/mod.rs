//! `tscope run`: workloads on the real kernel, with will-it-scale's semantics so that the
//! numbers compare with what the field publishes, and the other measurements of the source
//! documents (sv_mem's pre-fault and copy, the `sched_yield` check, page zeroing).
//!
//! [`runner`] runs tasks (processes or threads, pinned) and samples their counters; each
//! syscall workload ([`pipe`], [`vfsmix`], [`mod@write`], [`null`]) defines one iteration;
//! [`iteration`] lists each iteration's system calls for the docs, the report and the
//! [`run_record::RunRecord`] that `--record` writes;
//! [`mem`] and [`pagezero`] are timed loops of their own. Nothing here prints: `crate::export`
//! turns the [`RunReport`] into bytes.

pub mod config;
pub mod def;
pub mod inject;
pub mod iteration;
pub mod mem;
pub mod name;
pub mod null;
pub mod pagezero;
pub mod pair;
pub mod pipe;
pub mod plan;
pub mod replayed;
pub mod result;
pub mod run_record;
pub mod runner;
pub mod scratch;
pub mod single;
pub mod summary;
pub mod vfsmix;
pub mod write;

use std::time::Duration;

use crate::error::Context;

pub use config::{MemConfig, RunConfig};
pub use name::WorkloadName;
pub use result::{MemOp, Mode, Placement, RunReport};

use crate::sys;
use crate::warnings::Warning;
use plan::RunPlan;
use runner::Workload;

fn machine(cfg: &RunConfig) -> result::RunMachine {
    result::RunMachine {
        facts: crate::probe::machine::gather(),
        allowed_cpus: cfg.cpus.clone(),
        load_average: crate::probe::machine::load_average(),
    }
}

/// Runs everything `cfg` asks for.
pub fn execute(cfg: &RunConfig) -> crate::error::Result<RunReport> {
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
        stopped: false,
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
        pair: None,
        warnings: Vec::new(),
    };
    if let Some(f) = &fs {
        if w == WorkloadName::Vfsmix && f.options.iter().any(|o| o == "discard") {
            report.warnings.push(Warning::DiscardMount {
                dir: cfg.dir.display().to_string(),
            });
        }
    }
    let dir = scratch.as_ref().map(|s| s.path().to_path_buf());
    match w {
        WorkloadName::Pipe1 => run_all(&pipe::Pipe1, cfg, &mut report)?,
        WorkloadName::Fifo1 => run_all(
            &pipe::Fifo1 {
                dir: dir.clone().expect("fifo1 has a scratch dir"),
            },
            cfg,
            &mut report,
        )?,
        WorkloadName::Pingpong => run_all(&pipe::Pingpong, cfg, &mut report)?,
        WorkloadName::Vfsmix => run_all(
            &vfsmix::Vfsmix {
                dir: dir.clone().expect("vfsmix has a scratch dir"),
            },
            cfg,
            &mut report,
        )?,
        WorkloadName::WriteOnly | WorkloadName::WriteStat | WorkloadName::WriteStatControl => {
            run_all(
                &write::WriteFile {
                    dir: dir.clone().expect("write workloads have a scratch dir"),
                    stat: write::StatKind::of(w),
                },
                cfg,
                &mut report,
            )?;
            if w == WorkloadName::WriteStat && !report.stopped && !sys::signal::stop_requested() {
                let mut p =
                    pair::PairConfig::new(cfg.dir.clone(), pair::Pattern::Write { writes: 1 });
                p.pin = cfg.pin;
                report.pair = crate::error::unless_stopped(pair::measure(&p))?;
                report.stopped = report.pair.is_none();
            }
        }
        WorkloadName::Getppid => run_all(&null::Getppid, cfg, &mut report)?,
        WorkloadName::SchedYield => {
            let calibration =
                (cfg.interval / 5).clamp(Duration::from_millis(5), Duration::from_millis(100));
            run_all(&null::SchedYield { calibration }, cfg, &mut report)?
        }
        WorkloadName::Mem => {
            let (m, stopped) = mem::run(&cfg.mem, cfg.pin.then_some(&cfg.cpus[..]))?;
            report.mem = Some(m);
            report.stopped = stopped;
        }
        WorkloadName::Pagezero => {
            let (z, stopped) = pagezero::run(cfg.cold_bytes, cfg.pin.then_some(cfg.cpus[0]))?;
            report.pagezero = Some(z);
            report.stopped = stopped;
        }
    }
    drop(scratch);
    Ok(report)
}

fn run_all<W: Workload>(
    w: &W,
    cfg: &RunConfig,
    report: &mut RunReport,
) -> crate::error::Result<()> {
    let ncpu = cfg.cpus.len();
    if !cfg.pin {
        report.warnings.push(Warning::TasksNotPinned);
    }
    if report.machine.hypervisor_bit {
        report.warnings.push(Warning::VcpuWakeups);
    }
    let samples =
        ((cfg.duration.as_secs_f64() / cfg.interval.as_secs_f64()).round() as usize).max(1);
    'outer: for &tasks in &cfg.tasks {
        let workers = tasks * w.workers_per_task();
        if cfg.pin && workers > ncpu && !(w.workers_per_task() == 2 && tasks <= ncpu) {
            report.warnings.push(Warning::CpusOversubscribed {
                workers,
                cpus: ncpu,
            });
        }
        for &mode in &cfg.modes {
            for &placement in &cfg.placements {
                if sys::signal::stop_requested() {
                    report.stopped = true;
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
                let stopped = result.stopped;
                report.runs.push(result);
                if stopped {
                    report.stopped = true;
                    break 'outer;
                }
            }
        }
    }
    Ok(())
}
