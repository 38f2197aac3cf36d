//! One file per subcommand, each the same five steps:
//!
//! 1. **configure**: build the validated domain configuration from the command's arguments and
//!    the [`Global`] flags. Every argument and every output path is checked here, before
//!    anything is measured, and a bad one is a [`ConfigError`] naming the option.
//! 2. **run** the domain (`probe`, `detect`, `workload`, `sim`, `vm`, `trace`, `report`,
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

pub use driver::{drive, Command, OnSignal};
pub use output::{check_output_dir, check_output_file, Destination};
pub use progress::StderrProgress;
pub use signals::{
    exit_on_signal, exit_on_signal_saying, stop_on_signal, Stop, EXIT_INTERRUPTED, STOP_GRACE,
};

use crate::cli::Cli;
use crate::error::ConfigError;

/// The command line as a reader reruns it: `tscope` (not the path it was started from) and
/// the arguments it was given, each quoted for a POSIX shell where it needs it.
pub fn invocation() -> String {
    std::iter::once("tscope".to_string())
        .chain(std::env::args().skip(1).map(|a| shell_word(&a)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `a` as one POSIX shell word: as it is when it has nothing the shell reads, else in single
/// quotes (a quote inside as `'\''`).
fn shell_word(a: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_./:=,@+-%".contains(c);
    if !a.is_empty() && a.chars().all(plain) {
        a.to_string()
    } else {
        format!("'{}'", a.replace('\'', "'\\''"))
    }
}

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

#[cfg(test)]
mod tests {
    #[test]
    fn a_word_the_shell_reads_is_quoted_and_a_plain_one_is_not() {
        assert_eq!(super::shell_word("--out"), "--out");
        assert_eq!(
            super::shell_word("docs/example-report"),
            "docs/example-report"
        );
        assert_eq!(super::shell_word("a b"), "'a b'");
        assert_eq!(super::shell_word("it's"), "'it'\\''s'");
        assert_eq!(super::shell_word(""), "''");
        assert_eq!(super::shell_word("$HOME"), "'$HOME'");
    }
}
