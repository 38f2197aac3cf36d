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
//! This module and `cli/` are the only places that see clap types. Adding a command means a
//! `cli` struct, a file here, and one match arm in `lib.rs`.

pub mod compare;
pub mod completions;
pub mod detect;
pub mod man;
pub mod probe;
pub mod record;
pub mod report;
pub mod run;
pub mod show;
pub mod simulate;
pub mod vm;

use std::path::{Path, PathBuf};

use crate::cli::{Cli, OutputArgs};
use crate::error::ConfigError;
use crate::export::{self, Format, Render};
use crate::progress::Progress;

/// Exit code of a run stopped by SIGINT/SIGTERM (results printed, marked partial).
pub const EXIT_INTERRUPTED: i32 = 130;

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

/// Where and how a result is printed, validated from [`OutputArgs`].
#[derive(Debug, Clone)]
pub struct Output {
    pub format: Format,
    /// `-o FILE`; `None` is stdout.
    pub out: Option<PathBuf>,
}

impl Output {
    /// The format the flags ask for, and the output file checked for writability.
    pub fn new(o: &OutputArgs) -> Result<Output, ConfigError> {
        let format = if o.json {
            Format::Json
        } else if o.csv {
            Format::Csv
        } else if o.markdown {
            Format::Markdown
        } else {
            Format::Table
        };
        if let Some(path) = &o.out {
            check_output_file(path, "out")?;
        } else if crate::sys::stdio::stdout_closed_at_start() {
            // Refused before measuring, not after.
            return Err(ConfigError::Invalid(export::STDOUT_CLOSED.into()));
        }
        Ok(Output {
            format,
            out: o.out.clone(),
        })
    }

    /// Writes `bytes` to the `-o` file (whole or not at all) or stdout.
    pub fn emit(&self, bytes: &[u8]) -> anyhow::Result<()> {
        Ok(export::emit(bytes, self.out.as_deref())?)
    }

    /// Renders `result` in the chosen format and emits it.
    pub fn export<R: Render + ?Sized>(&self, result: &R) -> anyhow::Result<()> {
        self.emit(&export::export(result, self.format)?)
    }
}

/// Checks, before anything is measured, that a file can be written at `path`: in an existing
/// directory, and not something tscope never writes (a directory, block device, socket or
/// dangling link; see [`export::file::target`]).
pub fn check_output_file(path: &Path, option: &str) -> Result<(), ConfigError> {
    let fail = |why: String| ConfigError::Output {
        path: path.to_path_buf(),
        why: format!("{why} (--{option})"),
    };
    if path.as_os_str().is_empty() {
        return Err(fail("an empty path".into()));
    }
    export::file::target(path).map_err(fail)?;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !dir.is_dir() {
        return Err(fail(format!(
            "'{}' is not an existing directory; create it first",
            dir.display()
        )));
    }
    Ok(())
}

/// Checks, before anything is measured, that `dir` is a directory or can be created as one.
pub fn check_output_dir(dir: &Path, option: &str) -> Result<(), ConfigError> {
    if dir.exists() && !dir.is_dir() {
        return Err(ConfigError::Output {
            path: dir.to_path_buf(),
            why: format!("it exists and is not a directory (--{option})"),
        });
    }
    std::fs::create_dir_all(dir).map_err(|e| ConfigError::Output {
        path: dir.to_path_buf(),
        why: format!("cannot create the directory: {e} (--{option})"),
    })
}

/// Progress as `tscope: …` lines on stderr.
#[derive(Debug, Clone, Copy, Default)]
pub struct StderrProgress;

impl Progress for StderrProgress {
    fn note(&self, line: &str) {
        eprintln!("tscope: {line}");
    }
}

/// How long a command may take to stop by itself after a stop signal before
/// [`stop_on_signal`]'s watchdog ends the process.
pub const STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// The one signal story of every long command: SIGINT, SIGTERM and SIGHUP raise the stop flag
/// (`sys::signal`), which workloads, `record` and the validation runs watch: they kill their
/// children, remove their scratch and return, and the command exits [`EXIT_INTERRUPTED`]. A
/// step that does not watch the flag (a probe's sampling, a qemu boot) is cut short by a
/// watchdog thread: [`STOP_GRACE`] after the signal it exits 130 itself; children started with
/// `sys::child::kill_with_parent` die with the process.
pub fn stop_on_signal() -> anyhow::Result<()> {
    use anyhow::Context as _;
    crate::sys::signal::install_stop_handler().context("installing the SIGINT/SIGTERM handler")?;
    static WATCHDOG: std::sync::Once = std::sync::Once::new();
    WATCHDOG.call_once(|| {
        let spawned = std::thread::Builder::new()
            .name("tscope-stop".into())
            .spawn(|| loop {
                if crate::sys::signal::stop_requested() {
                    std::thread::sleep(STOP_GRACE);
                    eprintln!("tscope: interrupted; stopped after {STOP_GRACE:?}");
                    std::process::exit(EXIT_INTERRUPTED);
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            });
        // Without the watchdog the flag still works; only the hard stop is missing.
        drop(spawned);
    });
    Ok(())
}

/// [`EXIT_INTERRUPTED`] with a note when a stop signal arrived, so that a command prints
/// nothing half-measured.
pub fn interrupted() -> Option<i32> {
    crate::sys::signal::stop_requested().then(|| {
        eprintln!("tscope: interrupted; nothing written");
        EXIT_INTERRUPTED
    })
}
