//! tscope: what every timestamp source costs, whether the hypervisor traps it, and what a
//! `vfs_timestamp` resolution knob would buy.
//!
//! The binary is a thin wrapper around [`run`], which matches the parsed command line and calls
//! [`commands`]`::<name>::run`. Every command has the same five steps (validated configuration
//! → domain → export → emit → exit code); `docs/architecture.md` is the map.
//!
//! - Command line: [`cli`] (clap only) and [`commands`] (the only code that sees [`cli`]).
//! - Domain, which never sees the command line and never prints: [`probe`] (what each source
//!   costs), [`detect`] (hypervisor and verdicts), [`workload`] (`tscope run`), [`trace`]
//!   (scenarios, strace logs, recorded runs), [`kernel`] (per-OS timestamp models), [`sim`]
//!   (replay under those models), [`vm`] (guests and the micro-VM), [`compare`], and
//!   [`report`] (everything `tscope report` measures).
//! - Output: [`export`] (every format, every chart).
//! - Shared: [`measure`] (the sampler), [`stats`], [`fmt`], [`cpuid`], [`dirfd`] (files under directories tscope does not
//!   own), [`sys`] (the one module allowed `unsafe_code`), and the ground floor that imports no feature module: [`error`],
//!   [`warnings`], [`progress`].
//!
//! These docs are for the people who work on tscope: a room's insides are `pub(crate)` and
//! documented with the rest (`cargo doc --document-private-items`), so public docs may link
//! to them.
#![allow(rustdoc::private_intra_doc_links)]

pub mod cli;
pub mod commands;
pub mod compare;
pub mod cpuid;
pub mod detect;
pub mod dirfd;
pub mod error;
pub mod export;
pub mod fleet;
pub mod fmt;
pub mod input;
pub mod kernel;
pub mod measure;
pub mod price;
pub mod probe;
pub mod progress;
pub mod report;
pub mod sim;
pub mod stats;
#[allow(unsafe_code)]
pub mod sys;
pub mod trace;
pub mod vm;
pub mod warnings;
pub mod workload;

/// The unit tests skip through the same recorded helper as the integration tests.
#[cfg(test)]
#[path = "../tests/skip.rs"]
pub(crate) mod skip;

use cli::{Cli, Command};
use commands::drive;

/// Prints what clap stopped the parse with and returns the exit code. `--help` and
/// `--version` go to stdout through [`export::stdout`], so output that is lost (a full device,
/// a closed stdout, a pipe nobody reads) is an error (exit 2), never a silent 0; a bad command
/// line goes to stderr with clap's code (2).
pub fn clap_exit(e: clap::Error) -> anyhow::Result<i32> {
    use std::io::IsTerminal;
    if e.use_stderr() {
        // Nothing more can be said if stderr fails too.
        let _ = e.print();
        return Ok(e.exit_code());
    }
    let text = if std::io::stdout().is_terminal() {
        e.render().ansi().to_string()
    } else {
        e.render().to_string()
    };
    export::stdout(text.as_bytes())?;
    Ok(e.exit_code())
}

/// Runs one parsed command line and returns the process exit code (0 success, 1 a condition
/// the user asked to fail on held, 130 interrupted; errors are returned and exit with 2).
pub fn run(cli: Cli) -> anyhow::Result<i32> {
    let global = commands::Global::new(&cli)?;
    match &cli.command {
        Command::Probe(args) => drive::<commands::probe::Probe>(args, &global),
        Command::Detect(args) => drive::<commands::detect::Detect>(args, &global),
        Command::Run(args) => drive::<commands::run::Run>(args, &global),
        Command::Simulate(args) => drive::<commands::simulate::Simulate>(args, &global),
        Command::Record(args) => drive::<commands::record::Record>(args, &global),
        Command::Compare(args) => drive::<commands::compare::Compare>(args, &global),
        Command::Report(args) => drive::<commands::report::Report>(args, &global),
        Command::Vm(args) => drive::<commands::vm::Vm>(args, &global),
        Command::Show(args) => drive::<commands::show::Show>(args, &global),
        Command::Fleet(args) => drive::<commands::fleet::Fleet>(args, &global),
        Command::Completions(args) => drive::<commands::completions::Completions>(args, &global),
        Command::Man(args) => drive::<commands::man::Man>(args, &global),
    }
}
