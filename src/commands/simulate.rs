//! `tscope simulate`: what a `vfs_timestamp` resolution knob buys, and what accuracy it costs —
//! estimates, sweeps, back-solves, strace logs, validations, and `--explain`'s model tables.

use super::{Destination, Global, StderrProgress};
use crate::cli::simulate::SimulateArgs;
use crate::error::ConfigError;
use crate::kernel::explain::explain;
use crate::kernel::{model::model_names_help, ModelId, ModelSpec};
use crate::sim::config::{bad, every_family, parse_implied, parse_set, parse_sweep};
use crate::sim::{self, Input, Loop, Mode, SimulateConfig, StraceLog, Tuning, Validation};
use crate::trace::FsKind;

/// What `tscope simulate` does, and where the result goes.
#[derive(Debug, Clone)]
pub struct SimulateJob {
    pub task: Task,
    pub output: Destination,
}

/// A simulation, or `--explain`'s table of one model.
#[derive(Debug, Clone)]
pub enum Task {
    Simulate(Box<SimulateConfig>),
    Explain(ModelId),
}

/// Validates `simulate` arguments: the task, then `-o` and `--export-*`.
pub fn config(a: &SimulateArgs, global: &Global) -> Result<SimulateJob, ConfigError> {
    let task = match &a.explain {
        Some(name) => Task::Explain(model_spec(name, "--explain")?.resolve(None).0),
        None => Task::Simulate(Box::new(simulate_config(a, global)?)),
    };
    let output = Destination::new(&a.output)?.with_exports(&a.export)?;
    Ok(SimulateJob { task, output })
}

/// The mode the arguments ask for, with only its own settings.
fn mode(a: &SimulateArgs) -> Result<Mode, ConfigError> {
    if a.strace.is_none() && (a.strict || a.fs.is_some()) {
        return bad("--strict and --fs apply to --strace FILE only".into());
    }
    if !a.validate && !a.validate_dir.is_empty() {
        return bad("--validate-dir applies to --validate only".into());
    }
    if let Some(path) = &a.strace {
        if a.sweep.is_some() || a.implied.is_some() || a.iterations.is_some() {
            return bad(
                "--strace replays the log once per policy: --sweep, --implied and --iterations \
                 apply to scenarios"
                    .into(),
            );
        }
        let fs = match a.fs.as_deref() {
            None => None,
            Some(name) => match FsKind::parse(name) {
                Some(FsKind::Pipefs) | None => {
                    return bad(format!(
                        "--fs '{name}': expected one of tmpfs, ext4, xfs, btrfs, ufs, other"
                    ))
                }
                Some(fs) => Some(fs),
            },
        };
        return Ok(Mode::Strace(StraceLog {
            path: path.clone(),
            strict: a.strict,
            fs,
        }));
    }
    let input = match (&a.scenario, &a.run) {
        (_, Some(run)) => Input::Run(run.clone()),
        (Some(s), None) => Input::Scenario(s.clone()),
        (None, None) => return bad("give a SCENARIO, --run FILE or --strace FILE".into()),
    };
    if let Some(n) = a.iterations {
        if !(1..=10_000_000_000).contains(&n) {
            return bad(format!("--iterations must be 1..=10000000000, got {n}"));
        }
    }
    if a.validate {
        // clap allows --validate with a SCENARIO only (it conflicts with --run and --strace).
        let Input::Scenario(check) = input else {
            return bad("--validate takes a SCENARIO name (pipe1, vfsmix, accuracy, seed)".into());
        };
        if !(a.validate_secs.is_finite() && (0.2..=600.0).contains(&a.validate_secs)) {
            return bad(format!(
                "--validate-secs must be 0.2..=600 seconds, got {}",
                a.validate_secs
            ));
        }
        return Ok(Mode::Validate(Validation {
            check,
            secs: a.validate_secs,
            dirs: a.validate_dir.clone(),
        }));
    }
    let run = Loop {
        input,
        iterations: a.iterations,
    };
    Ok(match (&a.sweep, &a.implied) {
        (Some(spec), _) => Mode::Sweep {
            run,
            sweep: parse_sweep(spec, a.sweep_points)?,
            break_even: a.break_even,
        },
        (None, Some(spec)) => Mode::Implied {
            run,
            implied: parse_implied(spec)?,
        },
        (None, None) => Mode::Estimate(run),
    })
}

/// Validates the arguments of a simulation (not `--explain`).
fn simulate_config(a: &SimulateArgs, global: &Global) -> Result<SimulateConfig, ConfigError> {
    let mode = mode(a)?;
    let sweep = match &mode {
        Mode::Sweep { sweep, .. } => Some(sweep),
        _ => None,
    };
    let overrides = parse_set(&a.set, sweep)?;
    if !(a.break_even.is_finite() && a.break_even > 1.0 && a.break_even < 1000.0) {
        return bad(format!(
            "--break-even must be a speedup above 1 (e.g. 1.05), got {}",
            a.break_even
        ));
    }
    let mut models = Vec::new();
    for name in &a.models {
        let spec = model_spec(name, "--model")?;
        if !models.contains(&spec) {
            models.push(spec);
        }
    }
    if models.is_empty() {
        models = every_family();
    }
    if let Mode::Implied { implied: i, .. } = &mode {
        for p in [&i.policy, &i.stock_policy].into_iter().flatten() {
            if !models.iter().any(|m| m.family == p.model.family) {
                return bad(format!(
                    "--implied policy {} is not of the simulated model(s) {}; add --model {}",
                    p.name(),
                    models
                        .iter()
                        .map(|m| m.family.name())
                        .collect::<Vec<_>>()
                        .join(", "),
                    p.model.name()
                ));
            }
        }
    }
    Ok(SimulateConfig {
        mode,
        models,
        profile: a.profile.clone(),
        profile_data: None,
        counter: a.counter,
        overrides,
        emulate_trap: global.emulate_trap,
        tuning: Tuning::default(),
    })
}

fn model_spec(name: &str, flag: &str) -> Result<ModelSpec, ConfigError> {
    ModelSpec::parse(name).map_or_else(
        || {
            bad(format!(
                "{flag} '{name}': expected one of {}",
                model_names_help()
            ))
        },
        Ok,
    )
}

/// Runs `tscope simulate`; returns the exit code (130 when a validation was interrupted:
/// nothing is printed then).
pub fn run(args: &SimulateArgs, global: &Global) -> anyhow::Result<i32> {
    let job = config(args, global)?;
    let cfg = match job.task {
        Task::Explain(model) => {
            job.output.export(&explain(model))?;
            return Ok(0);
        }
        Task::Simulate(cfg) => cfg,
    };
    // Only the validations' live runs watch the stop flag.
    let stop = match &cfg.mode {
        Mode::Validate(_) => Some(super::stop_on_signal()?),
        _ => None,
    };
    let progress = match &cfg.mode {
        Mode::Validate(v) => Some(format!(
            "simulate {} --validate: live runs of {} s",
            v.check, v.secs
        )),
        Mode::Strace(log) => Some(format!("simulate --strace {}", log.path.display())),
        _ => None,
    }
    .map(StderrProgress::new);
    let result = sim::simulate(&cfg);
    drop(progress);
    if let Some(code) = stop.as_ref().and_then(super::Stop::nothing_written) {
        return Ok(code);
    }
    job.output.export(&result?)?;
    Ok(0)
}
