//! `tscope simulate`: what a `vfs_timestamp` resolution knob buys, and what accuracy it costs —
//! estimates, sweeps, back-solves and validations.

use super::{Global, Output};
use crate::cli::simulate::SimulateArgs;
use crate::error::ConfigError;
use crate::export::{table::Align, table::Table, Block, Render, Style};
use crate::kernel::explain::{explain, Explanation};
use crate::kernel::{model::model_names_help, Family, ModelSpec};
use crate::sim::config::{bad, parse_implied, parse_set, parse_sweep};
use crate::sim::{self, Input, SimulateConfig};
use crate::trace::FsKind;

/// Validates `simulate` arguments into a simulate configuration.
pub fn config(a: &SimulateArgs, global: &Global) -> Result<SimulateConfig, ConfigError> {
    let input = match (&a.scenario, &a.run, &a.strace) {
        (_, _, Some(trace)) => Input::Strace(trace.clone()),
        (_, Some(run), None) => Input::Run(run.clone()),
        (Some(s), None, None) => Input::Scenario(s.clone()),
        (None, None, None) => return bad("give a SCENARIO, --run FILE or --strace FILE".into()),
    };
    if a.strace.is_none() && (a.strict || a.fs.is_some()) {
        return bad("--strict and --fs apply to --strace FILE only".into());
    }
    if !a.validate && !a.validate_dir.is_empty() {
        return bad("--validate-dir applies to --validate only".into());
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
    if matches!(input, Input::Strace(_))
        && (a.sweep.is_some() || a.implied.is_some() || a.iterations.is_some())
    {
        return bad(
            "--strace replays the log once per policy: --sweep, --implied and --iterations \
             apply to scenarios"
                .into(),
        );
    }
    let validate = match (&input, a.validate) {
        (_, false) => None,
        (Input::Scenario(name), true) => Some(name.clone()),
        _ => return bad("--validate takes a SCENARIO name (pipe1, vfsmix, accuracy, seed)".into()),
    };
    if !(a.validate_secs.is_finite() && (0.2..=600.0).contains(&a.validate_secs)) {
        return bad(format!(
            "--validate-secs must be 0.2..=600 seconds, got {}",
            crate::fmt::num(a.validate_secs)
        ));
    }
    let sweep = a
        .sweep
        .as_deref()
        .map(|s| parse_sweep(s, a.sweep_points))
        .transpose()?;
    let overrides = parse_set(&a.set, sweep.as_ref())?;
    if !(a.break_even.is_finite() && a.break_even > 1.0 && a.break_even < 1000.0) {
        return bad(format!(
            "--break-even must be a speedup above 1 (e.g. 1.05), got {}",
            crate::fmt::num(a.break_even)
        ));
    }
    let implied = a.implied.as_deref().map(parse_implied).transpose()?;
    if let Some(n) = a.iterations {
        if !(1..=10_000_000_000).contains(&n) {
            return bad(format!("--iterations must be 1..=10000000000, got {n}"));
        }
    }
    let mut models = Vec::new();
    for name in &a.models {
        let spec = model_spec(name, "--model")?;
        if !models.contains(&spec) {
            models.push(spec);
        }
    }
    if models.is_empty() {
        models = Family::ALL
            .iter()
            .map(|&family| ModelSpec {
                family,
                version: None,
                alias: false,
            })
            .collect();
    }
    if let Some(i) = &implied {
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
        input,
        models,
        profile: a.profile.clone(),
        profile_data: None,
        counter: a.counter,
        overrides,
        sweep,
        break_even: a.break_even,
        implied,
        iterations: a.iterations,
        emulate_trap: global.emulate_trap,
        strict: a.strict,
        fs,
        op_weights: None,
        op_stamp_at: None,
        coarse_lag_ns: None,
        validate,
        validate_secs: a.validate_secs,
        validate_dirs: a.validate_dir.clone(),
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

/// Runs `tscope simulate`; returns the exit code.
pub fn run(args: &SimulateArgs, global: &Global) -> anyhow::Result<i32> {
    if let Some(name) = &args.explain {
        let (model, _) = model_spec(name, "--explain")?.resolve(None);
        let output = Output::new(&args.output)?.with_exports(&args.export)?;
        output.export(&explain(model))?;
        return Ok(0);
    }
    let cfg = config(args, global)?;
    let output = Output::new(&args.output)?.with_exports(&args.export)?;
    if cfg.validate.is_some() {
        super::stop_on_signal()?;
    } else {
        super::exit_on_signal()?;
    }
    let progress = match (&cfg.validate, &cfg.input) {
        (Some(check), _) => Some(format!(
            "simulate {check} --validate: live runs of {} s",
            cfg.validate_secs
        )),
        (None, Input::Strace(path)) => Some(format!("simulate --strace {}", path.display())),
        _ => None,
    }
    .map(super::StderrProgress::new);
    let result = sim::simulate(&cfg);
    drop(progress);
    if let Some(code) = super::interrupted() {
        return Ok(code);
    }
    let result = result?;
    output.export(&result)?;
    Ok(0)
}

impl Render for Explanation {
    fn json(&self) -> impl serde::Serialize + '_ {
        self
    }

    fn blocks(&self, _style: Style) -> Vec<Block> {
        let mut blocks = vec![Block::Heading(format!(
            "{}: timestamp work per syscall and filesystem (stock {}; policies {})",
            self.model,
            self.stock_policy,
            self.policies.join(", ")
        ))];
        if !self.notes.is_empty() {
            blocks.push(Block::list("note: ", self.notes.clone()));
        }
        blocks.push(Block::Table(self.csv()));
        blocks.push(Block::Text(
            "reads: clock reads at the stock setting (a-b: Linux updates only when the coarse \
             time moved; BSD flushes only when a flag is pending); status: read = checked \
             against the source text, cited = from issue 13's reading, recalled = not re-read\n"
                .into(),
        ));
        blocks
    }

    fn csv(&self) -> Table {
        let mut t = Table::new(&[
            ("syscall", Align::Left),
            ("fs", Align::Left),
            ("work", Align::Left),
            ("reads", Align::Right),
            ("repo", Align::Left),
            ("file", Align::Left),
            ("function", Align::Left),
            ("at", Align::Left),
            ("status", Align::Left),
        ]);
        for r in &self.rows {
            t.row(vec![
                r.syscall.to_string(),
                r.filesystems.join(","),
                r.work.clone(),
                r.reads.clone(),
                r.source.repo.to_string(),
                r.source.file.to_string(),
                r.source.function.to_string(),
                r.source.at.to_string(),
                r.source.status.to_string(),
            ]);
        }
        t
    }
}
