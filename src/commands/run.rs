//! `tscope run WORKLOAD`: a syscall or memory workload on this kernel, will-it-scale style.
//! Every option is checked here, so the runner and the workloads never see an absurd value.

use std::path::PathBuf;
use std::time::Duration;

use super::{Destination, Global};
use crate::cli::run::RunArgs;
use crate::error::ConfigError;
use crate::workload::config::{mem_available, parse_size, MAX_TASKS};
use crate::workload::{self, MemConfig, MemOp, Mode, Placement, RunConfig, WorkloadName};

fn counts(name: &'static str, xs: &[u64]) -> Result<Vec<usize>, ConfigError> {
    let mut out: Vec<usize> = Vec::new();
    for &x in xs {
        if x == 0 || x > MAX_TASKS {
            return Err(ConfigError::range(
                name,
                format!("between 1 and {MAX_TASKS}"),
                x,
            ));
        }
        if !out.contains(&(x as usize)) {
            out.push(x as usize);
        }
    }
    Ok(out)
}

fn seconds(name: &'static str, v: f64, min: f64, max: f64) -> Result<Duration, ConfigError> {
    if !(v.is_finite() && v >= min && v <= max) {
        return Err(ConfigError::range(
            name,
            format!("a number of seconds from {min} to {max}"),
            v,
        ));
    }
    Ok(Duration::from_secs_f64(v))
}

/// What `tscope run` does: the run, where its result goes, and the `--record` file.
#[derive(Debug, Clone)]
pub struct RunJob {
    pub run: RunConfig,
    pub output: Destination,
    /// `--record FILE`: the run record for `simulate --run`, checked like `-o`.
    pub record: Option<PathBuf>,
}

/// Validates `tscope run` arguments: the run, then `-o` and `--export-*`, then `--record`
/// (a path no other output option names).
pub fn config(a: &RunArgs, _global: &Global) -> Result<RunJob, ConfigError> {
    let run = run_config(a)?;
    let output = Destination::new(&a.output)?.with_exports(&a.export)?;
    if let Some(path) = &a.record {
        super::check_output_file(path, "record")?;
        output.refuse_shared(path, "record")?;
    }
    Ok(RunJob {
        run,
        output,
        record: a.record.clone(),
    })
}

/// Validates the run itself into a run configuration: which options apply to the workload,
/// the timing, the task counts and placements, the scratch directory, then the sizes.
fn run_config(a: &RunArgs) -> Result<RunConfig, ConfigError> {
    let w = WorkloadName::from(a.workload);
    let placement: Vec<Placement> = a.placement.iter().map(|&p| p.into()).collect();
    check_applicable(a, w, &placement)?;
    let Timing {
        duration,
        interval,
        warmup,
    } = timing(a)?;

    let defaults = RunConfig::new(w);
    let cpus = defaults.cpus.clone();
    let mut tasks = counts("tasks", &a.tasks)?;
    if tasks.is_empty() {
        tasks = defaults.tasks.clone();
    }
    let mut modes: Vec<Mode> = Vec::new();
    for &m in &a.mode {
        let m = Mode::from(m);
        if !modes.contains(&m) {
            modes.push(m);
        }
    }
    let pin = !a.no_pin;
    let placements = placements(w, pin, &placement, &defaults)?;
    let dir = scratch_dir(a, w, &defaults)?;
    let (mem, cold_bytes) = sizes(a, w, &defaults)?;

    Ok(RunConfig {
        workload: w,
        tasks,
        modes,
        placements,
        duration,
        warmup,
        interval,
        pin,
        dir,
        mem,
        cold_bytes,
        cpus,
    })
}

/// The error for an option the workload does not take.
fn not_for(name: &'static str, applies: &'static str, hint: &'static str) -> ConfigError {
    ConfigError::NotApplicable {
        name,
        applies,
        hint,
    }
}

/// Refuses the options `w` does not take: mem's own options elsewhere, the runner's options
/// on mem and pagezero, `--size` on the runner's workloads, `--placement` off pingpong.
fn check_applicable(
    a: &RunArgs,
    w: WorkloadName,
    placement: &[Placement],
) -> Result<(), ConfigError> {
    let runner = w.uses_runner();
    if w != WorkloadName::Mem {
        if a.op.is_some() {
            return Err(not_for("op", "mem", "drop it"));
        }
        if a.block.is_some() {
            return Err(not_for("block", "mem", "drop it"));
        }
        if !a.threads.is_empty() {
            return Err(not_for(
                "threads",
                "mem",
                "for other workloads use --tasks N --mode threads",
            ));
        }
    }
    if !runner {
        if !a.tasks.is_empty() {
            return Err(not_for(
                "tasks",
                "the runner's workloads",
                "mem takes --threads; pagezero runs on one CPU",
            ));
        }
        if a.record.is_some() {
            return Err(not_for(
                "record",
                "pipe1, pingpong, vfsmix, write-only, write-stat(-control), getppid and sched_yield",
                "mem and pagezero make no system calls per iteration",
            ));
        }
    }
    if a.size.is_some() && runner {
        return Err(not_for("size", "mem and pagezero", "drop it"));
    }
    if !placement.is_empty() && w != WorkloadName::Pingpong {
        return Err(not_for("placement", "pingpong", "drop it"));
    }
    Ok(())
}

/// A run's timing: how long it samples, how often, and how long it warms up first.
struct Timing {
    duration: Duration,
    interval: Duration,
    warmup: Duration,
}

/// Checks `--duration`, `--interval-ms` and `--warmup` (the warm-up defaults to one interval,
/// and the run holds at least one interval).
fn timing(a: &RunArgs) -> Result<Timing, ConfigError> {
    let duration = seconds("duration", a.duration, 0.01, 86_400.0)?;
    if !(10..=60_000).contains(&a.interval_ms) {
        return Err(ConfigError::range(
            "interval-ms",
            "from 10 to 60000",
            a.interval_ms,
        ));
    }
    let interval = Duration::from_millis(a.interval_ms);
    if duration < interval {
        return Err(ConfigError::range(
            "duration",
            format!("at least one sample interval ({} ms)", a.interval_ms),
            a.duration,
        ));
    }
    let warmup = match a.warmup {
        Some(v) => seconds("warmup", v, 0.0, 3_600.0)?,
        None => interval,
    };
    Ok(Timing {
        duration,
        interval,
        warmup,
    })
}

/// pingpong's placements, repeats dropped (pinned runs only, and `different` only where this
/// process may use two CPUs); `[None]` for every other workload and for unpinned runs.
fn placements(
    w: WorkloadName,
    pin: bool,
    placement: &[Placement],
    defaults: &RunConfig,
) -> Result<Vec<Option<Placement>>, ConfigError> {
    if !placement.is_empty() && !pin {
        return Err(not_for(
            "placement",
            "pinned runs",
            "drop --no-pin, or --placement",
        ));
    }
    if placement.contains(&Placement::DifferentCpus) && defaults.cpus.len() < 2 {
        return Err(ConfigError::range(
            "placement",
            "same on a machine where this process may use one CPU",
            "different",
        ));
    }
    Ok(if w != WorkloadName::Pingpong || !pin {
        vec![None]
    } else if placement.is_empty() {
        defaults.placements.clone()
    } else {
        let mut p: Vec<Option<Placement>> = Vec::new();
        for x in placement {
            if !p.contains(&Some(*x)) {
                p.push(Some(*x));
            }
        }
        p
    })
}

/// The scratch directory: `--dir`, else the default; checked where the workload writes files.
fn scratch_dir(a: &RunArgs, w: WorkloadName, defaults: &RunConfig) -> Result<PathBuf, ConfigError> {
    let dir = match &a.dir {
        Some(d) => d.clone(),
        None if w.uses_dir() => crate::workload::config::default_dir()?,
        None => defaults.dir.clone(),
    };
    if w.uses_dir() {
        if !dir.is_dir() {
            return Err(crate::workload::config::bad_dir(&dir, a.dir.is_some()));
        }
        crate::workload::scratch::check_parent(&dir).map_err(|e| {
            ConfigError::Invalid(match a.dir {
                Some(_) => format!("--dir {e}"),
                None => format!("the scratch directory defaults to TMPDIR: {e}"),
            })
        })?;
    }
    Ok(dir)
}

/// mem's buffer and pagezero's cold buffer: the defaults with `--op`, `--size`, `--block` and
/// `--threads` applied, each checked against what the workload needs and the memory available.
fn sizes(
    a: &RunArgs,
    w: WorkloadName,
    defaults: &RunConfig,
) -> Result<(MemConfig, u64), ConfigError> {
    let available = mem_available();
    let too_big = |size: u64| match available {
        Some(avail) if size > avail => Err(ConfigError::TooBig {
            size,
            available: avail,
        }),
        _ => Ok(()),
    };
    let mut mem = defaults.mem.clone();
    if let Some(op) = a.op {
        mem.op = op.into();
    }
    let mut cold_bytes = defaults.cold_bytes;
    if w == WorkloadName::Mem {
        if let Some(s) = &a.size {
            mem.size = parse_size("size", s)?;
        }
        if let Some(b) = &a.block {
            mem.block = parse_size("block", b)?;
        }
        if !a.threads.is_empty() {
            mem.threads = counts("threads", &a.threads)?;
        }
        let most = *mem.threads.iter().max().unwrap_or(&1) as u64;
        if mem.block == 0 || mem.block > 1 << 30 {
            return Err(ConfigError::range("block", "from 1 byte to 1g", mem.block));
        }
        let share = mem.size / most;
        let need = if mem.op == MemOp::Rw { 2 } else { 1 } * mem.block.max(4096);
        if share < need {
            return Err(ConfigError::range(
                "size",
                format!(
                    "at least {need} bytes per thread with --block {} and {most} threads",
                    mem.block
                ),
                mem.size,
            ));
        }
        too_big(mem.size)?;
    }
    if w == WorkloadName::Pagezero {
        if let Some(s) = &a.size {
            cold_bytes = parse_size("size", s)?;
        }
        if !(1 << 20..=1 << 40).contains(&cold_bytes) {
            return Err(ConfigError::range("size", "from 1m to 1t", cold_bytes));
        }
        too_big(cold_bytes)?;
    }
    Ok((mem, cold_bytes))
}

/// `tscope run`: the workload, its output, and `--record`; 130 when interrupted (the partial
/// result printed first).
#[derive(Debug)]
pub struct Run;

impl super::Command for Run {
    type Args = RunArgs;
    type Config = RunJob;

    fn configure(args: &RunArgs, global: &Global) -> anyhow::Result<RunJob> {
        Ok(config(args, global)?)
    }

    fn while_running(_: &RunJob) -> super::OnSignal {
        super::OnSignal::Stop
    }

    fn execute(job: RunJob, stop: &super::Stop) -> anyhow::Result<i32> {
        run(job, stop)
    }
}

fn run(job: RunJob, stop: &super::Stop) -> anyhow::Result<i32> {
    let progress = super::StderrProgress::new(job_line(&job.run));
    let report = workload::execute(&job.run);
    drop(progress);
    let report = report?;
    job.output.export(&report)?;
    if let Some(path) = &job.record {
        let record = workload::run_record::RunRecord::of(&report);
        crate::export::emit(&crate::export::json(&record)?, Some(path))?;
    }
    Ok(stop.exit_code(0))
}

/// What the spinner says during a run: the workload, and for the runner's workloads how many
/// runs of how long (warm-up plus sampling) it will take.
fn job_line(cfg: &RunConfig) -> String {
    let w = cfg.workload;
    if !w.uses_runner() {
        return format!("run {}", w.as_str());
    }
    let runs = cfg.tasks.len() * cfg.modes.len().max(1) * cfg.placements.len().max(1);
    let each = (cfg.warmup + cfg.duration).as_secs_f64();
    format!(
        "run {}: {runs} run(s) of {each:.1} s, about {:.0} s",
        w.as_str(),
        each * runs as f64
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    fn cfg(args: &[&str]) -> Result<RunConfig, ConfigError> {
        let cli = Cli::try_parse_from([&["tscope", "run"], args].concat()).expect("parses");
        match cli.command {
            Command::Run(a) => config(&a, &Global::default()).map(|job| job.run),
            _ => unreachable!(),
        }
    }

    #[test]
    fn defaults_follow_the_issue() {
        let c = cfg(&["pipe1"]).unwrap();
        assert_eq!(c.tasks[0], 1);
        assert_eq!(c.tasks.len(), if c.cpus.len() > 1 { 2 } else { 1 });
        assert_eq!(c.modes, vec![Mode::Processes]);
        assert_eq!(c.duration, Duration::from_secs(5));
        assert_eq!(c.interval, Duration::from_secs(1));
        assert_eq!(c.warmup, c.interval);
        assert!(c.pin);
        assert_eq!(c.placements, vec![None]);
        let m = cfg(&["mem"]).unwrap().mem;
        assert_eq!(
            (m.op, m.size, m.block, m.threads),
            (MemOp::Wr, 1 << 30, 1024, vec![1])
        );
    }

    #[test]
    fn pingpong_placements() {
        // Repeats collapse, the first occurrence keeps its place.
        let c = cfg(&["pingpong", "--placement", "different,same,different"]).unwrap();
        assert_eq!(
            c.placements,
            vec![Some(Placement::DifferentCpus), Some(Placement::SameCpu)]
        );
        assert_eq!(
            cfg(&["pingpong", "--no-pin"]).unwrap().placements,
            vec![None]
        );
        assert_eq!(cfg(&["pingpong"]).unwrap().tasks, vec![1]);
    }

    #[test]
    fn mem_shares_must_hold_a_block() {
        assert!(cfg(&["mem", "--size", "8k", "--block", "4k", "--threads", "2"]).is_ok());
        assert!(cfg(&["mem", "--size", "8k", "--block", "8k", "--threads", "2"]).is_err());
        assert!(cfg(&["mem", "--block", "0"]).is_err());
        assert!(cfg(&["mem", "--op", "rw", "--size", "8k", "--block", "4k"]).is_ok());
        assert!(cfg(&["mem", "--op", "rw", "--size", "8k", "--block", "8k"]).is_err());
    }

    #[test]
    fn sizes_parse_with_binary_suffixes() {
        assert_eq!(parse_size("size", "16g").unwrap(), 16 << 30);
        assert_eq!(parse_size("size", "1k").unwrap(), 1024);
        assert_eq!(parse_size("size", "512M").unwrap(), 512 << 20);
        assert_eq!(parse_size("size", "2GiB").unwrap(), 2 << 30);
        assert_eq!(parse_size("size", "4096").unwrap(), 4096);
        assert_eq!(parse_size("size", " 3 kb").unwrap(), 3072);
        for bad in ["", "g", "-1k", "1.5g", "lots", "99999999999999999999t"] {
            assert!(parse_size("size", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn counts_reject_zero_and_absurd() {
        assert_eq!(counts("tasks", &[1, 2, 1]).unwrap(), vec![1, 2]);
        assert!(counts("tasks", &[0]).is_err());
        assert!(counts("tasks", &[MAX_TASKS + 1]).is_err());
    }

    #[test]
    fn seconds_reject_nan_and_infinity() {
        assert!(seconds("duration", f64::NAN, 0.01, 10.0).is_err());
        assert!(seconds("duration", f64::INFINITY, 0.01, 10.0).is_err());
        assert!(seconds("duration", 0.0, 0.01, 10.0).is_err());
        assert_eq!(
            seconds("duration", 2.5, 0.01, 10.0).unwrap(),
            Duration::from_millis(2500)
        );
    }
}
