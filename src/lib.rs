//! tscope: what every timestamp source costs, whether the hypervisor traps it, and what a
//! `vfs_timestamp` resolution knob would buy.
//!
//! The binary is a thin wrapper around [`run`]. Each subcommand lives in its own module:
//! [`probe`] measures, [`report`] prints; [`measure`], [`stats`] and [`sys`] are shared.

pub mod cli;
mod config;
pub mod error;
pub mod measure;
pub mod model;
pub mod probe;
pub mod report;
pub mod sim;
pub mod stats;
pub mod sys;
pub mod trace;
pub mod warnings;

use anyhow::Result;

use cli::{Cli, Command};
use report::{Exporter, Format};

/// Runs one parsed command line and returns the process exit code (0 success, 1 a condition
/// the user asked to fail on held; errors are returned and exit with 2).
pub fn run(cli: Cli) -> Result<i32> {
    match cli.command {
        Command::Probe(args) => {
            if args.list {
                let ids: Vec<String> = probe::Source::all().iter().map(|s| s.to_string()).collect();
                report::emit(format!("{}\n", ids.join("\n")).as_bytes(), None)?;
                return Ok(0);
            }
            let cfg = probe::ProbeConfig::try_from(&args)?;
            let profile = probe::run(&cfg);
            let bytes = report::ProbeReport(&profile).export(Format::from(&args.output))?;
            report::emit(&bytes, args.output.out.as_deref())?;
            Ok(0)
        }
        Command::Simulate(args) => sim::main(&args),
    }
}
