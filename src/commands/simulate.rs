//! `tscope simulate`: what a `vfs_timestamp` resolution knob buys, and what accuracy it costs —
//! estimates, sweeps, back-solves, strace logs, validations, and `--explain`'s model tables.

use super::{Destination, Global, StderrProgress};
use crate::cli::simulate::SimulateArgs;
use crate::error::ConfigError;
use crate::kernel::explain::explain;
use crate::kernel::{model::model_names_help, ModelId, ModelSpec};
use crate::sim::config::{bad, every_family, parse_implied, parse_set, parse_sweep};
use crate::sim::{self, Loop, LoopSource, Mode, SimulateConfig, StraceLog, Validation};
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
    for dir in &a.validate_dir {
        crate::workload::scratch::check_parent(dir)
            .or_else(|e| bad(format!("--validate-dir {e}")))?;
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
        (_, Some(run)) => LoopSource::Run(run.clone()),
        (Some(s), None) => LoopSource::Scenario(s.clone()),
        (None, None) => return bad("give a SCENARIO, --run FILE or --strace FILE".into()),
    };
    if let Some(n) = a.iterations {
        if !(1..=10_000_000_000).contains(&n) {
            return bad(format!("--iterations must be 1..=10000000000, got {n}"));
        }
    }
    if a.validate {
        // clap allows --validate with a SCENARIO only (it conflicts with --run and --strace).
        let LoopSource::Scenario(check) = input else {
            return bad("--validate takes a SCENARIO name (pipe1, vfsmix, accuracy, seed)".into());
        };
        if !a.validate_strace.is_empty() && check != "update" {
            return bad("--validate-strace applies to `simulate update --validate` only".into());
        }
        if !(a.validate_secs.is_finite() && (0.2..=600.0).contains(&a.validate_secs)) {
            return bad(format!(
                "--validate-secs must be 0.2..=600 seconds, got {}",
                crate::fmt::num(a.validate_secs)
            ));
        }
        if !(a.validate_budget.is_finite() && (1.0..=3600.0).contains(&a.validate_budget)) {
            return bad(format!(
                "--validate-budget must be 1..=3600 seconds, got {}",
                crate::fmt::num(a.validate_budget)
            ));
        }
        return Ok(Mode::Validate(Validation {
            check,
            secs: a.validate_secs,
            dirs: a.validate_dir.clone(),
            budget_s: a.validate_budget,
            straces: a.validate_strace.clone(),
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
            crate::fmt::num(a.break_even)
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
        counter: a.counter.into(),
        overrides,
        emulate_trap: global.emulate_trap,
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

/// `tscope simulate`: 130 when a validation was interrupted (nothing is printed then).
#[derive(Debug)]
pub struct Simulate;

impl super::Command for Simulate {
    type Args = SimulateArgs;
    type Config = SimulateJob;

    fn configure(args: &SimulateArgs, global: &Global) -> anyhow::Result<SimulateJob> {
        Ok(config(args, global)?)
    }

    /// Only the validations' live runs watch the stop flag; reading and replaying only, a
    /// stop signal ends it at once, mid-read included.
    fn while_running(job: &SimulateJob) -> super::OnSignal {
        match &job.task {
            Task::Simulate(cfg) if matches!(cfg.mode, Mode::Validate(_)) => super::OnSignal::Stop,
            _ => super::OnSignal::Exit,
        }
    }

    fn execute(job: SimulateJob, stop: &super::Stop) -> anyhow::Result<i32> {
        run(job, stop)
    }
}

fn run(job: SimulateJob, stop: &super::Stop) -> anyhow::Result<i32> {
    let cfg = match job.task {
        Task::Explain(model) => {
            job.output.export(&explain(model))?;
            return Ok(0);
        }
        Task::Simulate(cfg) => cfg,
    };
    let progress = match &cfg.mode {
        Mode::Validate(v) => Some(format!(
            "simulate {} --validate: live runs of {} s, at most {} s in all",
            v.check, v.secs, v.budget_s
        )),
        Mode::Strace(log) => Some(format!("simulate --strace {}", log.path.display())),
        _ => None,
    }
    .map(StderrProgress::new);
    let result = sim::simulate(&cfg);
    drop(progress);
    if let Some(code) = stop.nothing_written() {
        return Ok(code);
    }
    job.output.export(&result?)?;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    fn job(args: &[&str]) -> Result<SimulateJob, ConfigError> {
        let cli = Cli::try_parse_from([&["tscope", "simulate"], args].concat()).expect("parses");
        match cli.command {
            Command::Simulate(a) => config(&a, &Global::default()),
            _ => unreachable!(),
        }
    }

    fn mode(args: &[&str]) -> Mode {
        match job(args).expect("valid").task {
            Task::Simulate(cfg) => cfg.mode,
            Task::Explain(m) => panic!("explain {m}"),
        }
    }

    #[test]
    fn each_mode_holds_only_its_settings() {
        match mode(&["pipe1", "--iterations", "7"]) {
            Mode::Estimate(Loop {
                input: LoopSource::Scenario(s),
                iterations: Some(7),
            }) => assert_eq!(s, "pipe1"),
            m => panic!("{m:?}"),
        }
        match mode(&[
            "vfsmix",
            "--sweep",
            "precise_read_ns=10..1000",
            "--break-even",
            "1.1",
        ]) {
            Mode::Sweep {
                sweep, break_even, ..
            } => assert_eq!((sweep.points, break_even), (13, 1.1)),
            m => panic!("{m:?}"),
        }
        assert!(matches!(
            mode(&["pipe1", "--implied", "stock=1,patched=2"]),
            Mode::Implied { .. }
        ));
        match mode(&["--strace", "x.strace", "--strict", "--fs", "ext4"]) {
            Mode::Strace(log) => assert_eq!((log.strict, log.fs), (true, Some(FsKind::Ext4))),
            m => panic!("{m:?}"),
        }
        match mode(&["seed", "--validate", "--validate-secs", "1"]) {
            Mode::Validate(v) => {
                assert_eq!((v.check.as_str(), v.secs, v.budget_s), ("seed", 1.0, 90.0))
            }
            m => panic!("{m:?}"),
        }
        match mode(&["pipe1", "--validate", "--validate-budget", "30"]) {
            Mode::Validate(v) => assert_eq!(v.budget_s, 30.0),
            m => panic!("{m:?}"),
        }
        assert!(matches!(
            mode(&["--run", "r.json"]),
            Mode::Estimate(Loop {
                input: LoopSource::Run(_),
                ..
            })
        ));
    }

    #[test]
    fn explain_skips_the_simulation_settings() {
        let j = job(&["--explain", "freebsd"]).unwrap();
        assert!(matches!(j.task, Task::Explain(m) if m.family == crate::kernel::Family::Freebsd));
        assert!(job(&["--explain", "bogus"]).is_err());
    }

    #[test]
    fn a_setting_outside_its_mode_is_refused() {
        for args in [
            &["pipe1", "--strict"][..],
            &["--strace", "x", "--iterations", "5"],
            &["--strace", "x", "--sweep", "precise_read_ns=1..10"],
            &["pipe1", "--break-even", "1"],
            &["pipe1", "--iterations", "0"],
            &["seed", "--validate", "--validate-secs", "0.1"],
            &["pipe1", "--validate", "--validate-budget", "0.5"],
            &["pipe1", "--validate", "--validate-budget", "inf"],
        ] {
            assert!(job(args).is_err(), "{args:?}");
        }
    }
}
