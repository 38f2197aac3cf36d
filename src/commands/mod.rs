//! One file per subcommand, each the same five steps:
//!
//! 1. **configure**: build the validated domain configuration from the command's arguments and
//!    the [`Global`] flags. Every argument and every output path is checked here, before
//!    anything is measured, and a bad one is a [`ConfigError`] naming the option.
//! 2. **run** the domain (`probe`, `detect`, `workload`, `sim`, `vm`, `trace`, `gather`,
//!    `compare`), which never sees clap and never prints.
//! 3. **export** the result in the chosen format through [`crate::export`].
//! 4. **emit** the bytes to stdout or the `-o` file.
//! 5. **return the exit code** the result implies (0, 1 for a condition asked to fail on or a
//!    failed guest, 130 for an interrupted run; errors exit 2 in `main`).
//!
//! The shared steps live beside the commands, one file per job: [`output`] (the
//! [`Destination`] of step 4 and the output-path checks of step 1), [`progress`] (the one
//! progress type, [`StderrProgress`]) and [`signals`] (the stop handler and [`Stop`], the one
//! place an interruption is learnt and exit code 130 comes from).
//!
//! Every command implements [`Command`] (configure, then execute) and runs through the one
//! [`drive`]r, which arms the stop signal as the command's configuration says.
//!
//! This module and `cli/` are the only places that see clap types. Adding a command means a
//! `cli` struct, a file here with its [`Command`], and one match arm in `lib.rs`.

pub mod boot;
pub mod compare;
pub mod completions;
pub mod detect;
pub mod driver;
pub mod fleet;
pub mod man;
pub mod output;
pub mod probe;
pub mod progress;
pub mod record;
mod repeat;
pub mod report;
pub mod run;
pub mod show;
pub mod signals;
pub mod simulate;
pub mod vm;
pub mod vm_bench;

pub use driver::{drive, Command, OnSignal};
pub use output::{check_output_dir, check_output_file, Destination};
pub use progress::StderrProgress;
pub use signals::{
    exit_on_signal, exit_on_signal_saying, stop_on_signal, Stop, EXIT_INTERRUPTED, STOP_GRACE,
};

use crate::cli::Cli;
use crate::error::ConfigError;

/// The flags every command takes, validated.
#[derive(Debug, Clone, Copy, Default)]
pub struct Global {
    /// `--emulate-trap`: every TSC read of this process traps (already armed by [`Global::new`]).
    pub emulate_trap: bool,
}

impl Global {
    /// Validates the global flags and arms what they ask for.
    pub fn new(cli: &Cli) -> Result<Global, ConfigError> {
        if cli.emulate_trap {
            enable_trap()?;
        }
        Ok(Global {
            emulate_trap: cli.emulate_trap,
        })
    }
}

/// `--emulate-trap`: from here on every TSC read of this process traps.
#[cfg(target_arch = "x86_64")]
fn enable_trap() -> Result<(), ConfigError> {
    crate::sys::trap::emulate_tsc_traps()
        .map_err(|e| ConfigError::Trap(format!("prctl(PR_SET_TSC): {e}")))
}

#[cfg(not(target_arch = "x86_64"))]
fn enable_trap() -> Result<(), ConfigError> {
    Err(ConfigError::Trap("TSC traps exist on x86_64 only".into()))
}
