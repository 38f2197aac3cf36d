//! `tscope probe`: measure every timestamp source (or `--source` ones) and print the profile.

use super::{Destination, Global};
use crate::cli::ProbeArgs;
use crate::error::ConfigError;
use crate::probe::{self, ProbeConfig, Source};

/// Validates `args` into a probe configuration.
pub fn config(args: &ProbeArgs, global: &Global) -> Result<ProbeConfig, ConfigError> {
    let mut sources = Vec::new();
    for s in &args.sources {
        let src: Source = s.trim().parse()?;
        if !sources.contains(&src) {
            sources.push(src);
        }
    }
    let mut cfg = ProbeConfig::new(sources, args.sampling.quick, args.sampling.seed);
    cfg.pin = !args.no_pin;
    cfg.emulate_trap = global.emulate_trap;
    Ok(cfg)
}

/// Runs `tscope probe`; returns the exit code.
pub fn run(args: &ProbeArgs, global: &Global) -> anyhow::Result<i32> {
    let output = Destination::new(&args.output)?
        .with_exports(&args.export)?
        .with_openmetrics(&args.metrics)?;
    if args.list {
        if !output.exports.is_empty() {
            return Err(ConfigError::Invalid(
                "--export-* write a measurement; --list prints source ids only".into(),
            )
            .into());
        }
        output.emit(crate::export::source_list(&Source::all()).as_bytes())?;
        return Ok(0);
    }
    let cfg = config(args, global)?;
    let profile = probe::run(&cfg);
    output.export(&profile)?;
    Ok(0)
}
