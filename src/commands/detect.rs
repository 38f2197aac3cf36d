//! `tscope detect`: the hypervisor and the trap / fallback / sync / warp verdicts, with
//! evidence; exit 1 when a `--fail-on` verdict holds.

use std::time::Duration;

use super::{Destination, Global};
use crate::cli::DetectArgs;
use crate::detect::{self, DetectConfig};
use crate::error::ConfigError;

/// The longest cross-CPU check `--sync-ms` accepts.
pub const MAX_SYNC_MS: u64 = 60_000;

/// Checks a `--sync-ms` value.
pub fn sync_budget(ms: u64) -> Result<Duration, ConfigError> {
    if ms == 0 || ms > MAX_SYNC_MS {
        return Err(ConfigError::range(
            "sync-ms",
            format!("1..={MAX_SYNC_MS} milliseconds"),
            ms,
        ));
    }
    Ok(Duration::from_millis(ms))
}

/// Validates `args` into a detect configuration.
pub fn config(args: &DetectArgs, global: &Global) -> Result<DetectConfig, ConfigError> {
    for name in &args.fail_on {
        let known = detect::VERDICT_NAMES.contains(&name.as_str())
            || name.strip_prefix("vdso_fallback:").is_some_and(|c| {
                c == "gettimeofday" || detect::vdso_clocks().any(|k| k.name() == c)
            });
        if !known {
            return Err(ConfigError::UnknownVerdict(name.clone()));
        }
    }
    Ok(DetectConfig {
        seed: args.seed,
        thorough: args.thorough,
        sync_budget: sync_budget(args.sync_ms)?,
        emulate_trap: global.emulate_trap,
        fail_on: args.fail_on.clone(),
    })
}

/// `tscope detect`: exit 1 when a `--fail-on` verdict holds.
#[derive(Debug)]
pub struct Detect;

/// What `tscope detect` runs, and where its result goes.
#[derive(Debug)]
pub struct DetectJob {
    cfg: DetectConfig,
    output: Destination,
    fail_on_inconclusive: bool,
}

impl super::Command for Detect {
    type Args = DetectArgs;
    type Config = DetectJob;

    fn configure(args: &DetectArgs, global: &Global) -> anyhow::Result<DetectJob> {
        Ok(DetectJob {
            cfg: config(args, global)?,
            output: Destination::new(&args.output)?
                .with_exports(&args.export)?
                .with_openmetrics(&args.metrics)?,
            fail_on_inconclusive: args.fail_on_inconclusive,
        })
    }

    fn while_running(_: &DetectJob) -> super::OnSignal {
        super::OnSignal::Default
    }

    fn execute(job: DetectJob, _stop: &super::Stop) -> anyhow::Result<i32> {
        run(&job)
    }
}

fn run(job: &DetectJob) -> anyhow::Result<i32> {
    let (cfg, output) = (&job.cfg, &job.output);
    let detection = detect::run(cfg);
    output.export(&detection)?;
    let failing = detection.failing(&cfg.fail_on, job.fail_on_inconclusive);
    if !failing.is_empty() {
        let what = if job.fail_on_inconclusive {
            "verdicts that hold or are inconclusive"
        } else {
            "verdicts that hold"
        };
        eprintln!("tscope: {what}: {}", failing.join(", "));
        return Ok(1);
    }
    Ok(0)
}
