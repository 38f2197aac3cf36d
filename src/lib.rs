//! tscope: what every timestamp source costs, whether the hypervisor traps it, and what a
//! `vfs_timestamp` resolution knob would buy.
//!
//! The binary is a thin wrapper around [`run`]. Each subcommand lives in its own module:
//! [`probe`] measures, [`report`] prints; [`measure`], [`stats`] and [`sys`] are shared.

pub mod cli;
pub mod compare;
mod config;
pub mod detect;
pub mod error;
pub mod export;
pub mod gather;
pub mod kernel;
pub mod measure;
pub mod probe;
pub mod sim;
pub mod stats;
#[allow(unsafe_code)]
pub mod sys;
pub mod trace;
pub mod vm;
pub mod warnings;
pub mod workload;

use anyhow::Result;

use cli::{Cli, Command};
use export::{Exporter, Format};

/// Runs one parsed command line and returns the process exit code (0 success, 1 a condition
/// the user asked to fail on held; errors are returned and exit with 2).
pub fn run(cli: Cli) -> Result<i32> {
    if cli.emulate_trap {
        enable_trap()?;
    }
    match cli.command {
        Command::Probe(args) => {
            if args.list {
                let ids: Vec<String> = probe::Source::all().iter().map(|s| s.to_string()).collect();
                export::emit(format!("{}\n", ids.join("\n")).as_bytes(), None)?;
                return Ok(0);
            }
            let mut cfg = probe::ProbeConfig::try_from(&args)?;
            cfg.emulate_trap = cli.emulate_trap;
            let profile = probe::run(&cfg);
            let bytes = export::ProbeReport(&profile).export(Format::from(&args.output))?;
            export::emit(&bytes, args.output.out.as_deref())?;
            Ok(0)
        }
        Command::Detect(args) => {
            let mut cfg = detect::DetectConfig::try_from(&args)?;
            cfg.emulate_trap = cli.emulate_trap;
            let detection = detect::run(&cfg);
            let bytes = export::DetectReport(&detection).export(Format::from(&args.output))?;
            export::emit(&bytes, args.output.out.as_deref())?;
            let failing = detection.failing(&cfg.fail_on);
            if !failing.is_empty() {
                eprintln!("tscope: verdicts that hold: {}", failing.join(", "));
                return Ok(1);
            }
            Ok(0)
        }
        Command::Run(args) => workload::main(&args),
        Command::Simulate(args) => sim::main(&args, cli.emulate_trap),
        Command::Record(args) => trace::strace::record::main(&args),
        Command::Compare(args) => compare_cmd(&args),
        Command::Report(args) => {
            let mut cfg = gather::ReportConfig::try_from(&args)?;
            cfg.emulate_trap = cli.emulate_trap;
            let report = gather::run(&cfg);
            let written = export::ReportDocument(&report).write(&args.out)?;
            let names: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
            export::emit(format!("wrote {}\n", names.join(", ")).as_bytes(), None)?;
            Ok(0)
        }
        Command::Completions(args) => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            let mut out = Vec::new();
            clap_complete::generate(args.shell, &mut cmd, "tscope", &mut out);
            export::emit(&out, None)?;
            Ok(0)
        }
        Command::Man => {
            let cmd = <Cli as clap::CommandFactory>::command();
            let mut out = Vec::new();
            clap_mangen::Man::new(cmd).render(&mut out)?;
            export::emit(&out, None)?;
            Ok(0)
        }
        Command::Vm(args) => vm::main(&args, cli.emulate_trap),
    }
}

fn compare_cmd(args: &cli::CompareArgs) -> Result<i32> {
    if !args.labels.is_empty() && args.labels.len() != args.files.len() {
        return Err(error::ConfigError::OutOfRange {
            name: "labels",
            what: "one label per file",
            value: format!(
                "{} labels for {} files",
                args.labels.len(),
                args.files.len()
            ),
        }
        .into());
    }
    let mut inputs = Vec::with_capacity(args.files.len());
    for (i, f) in args.files.iter().enumerate() {
        let mut input = compare::Input::load(f)?;
        if let Some(l) = args.labels.get(i) {
            input.label = l.clone();
        }
        inputs.push(input);
    }
    let cmp = compare::compare(&inputs);
    let bytes = export::CompareReport(&cmp).export(Format::from(&args.output))?;
    export::emit(&bytes, args.output.out.as_deref())?;
    Ok(0)
}

/// `--emulate-trap`: from here on every TSC read of this process traps.
#[cfg(target_arch = "x86_64")]
fn enable_trap() -> Result<()> {
    sys::trap::emulate_tsc_traps()
        .map_err(|e| error::ConfigError::Trap(format!("prctl(PR_SET_TSC): {e}")))?;
    Ok(())
}

#[cfg(not(target_arch = "x86_64"))]
fn enable_trap() -> Result<()> {
    Err(error::ConfigError::Trap("TSC traps exist on x86_64 only".into()).into())
}
