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
pub mod vm_bench;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::cli::{Cli, ExportArgs, OutputArgs};
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

/// Where and how a result is printed, validated from [`OutputArgs`] (and [`ExportArgs`] for
/// the commands that measure).
#[derive(Debug, Clone)]
pub struct Output {
    pub format: Format,
    /// `-o FILE`; `None` is stdout.
    pub out: Option<PathBuf>,
    /// `--export-json/-markdown/-csv FILE`: more formats, each to its own file.
    pub exports: Vec<(Format, PathBuf)>,
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
            exports: Vec::new(),
        })
    }

    /// Adds the `--export-*` files, each checked for writability now, before anything is
    /// measured; a path named twice (by two exports, or by an export and `-o`) is refused.
    pub fn with_exports(mut self, e: &ExportArgs) -> Result<Output, ConfigError> {
        let asked = [
            (Format::Json, &e.export_json, "export-json"),
            (Format::Markdown, &e.export_markdown, "export-markdown"),
            (Format::Csv, &e.export_csv, "export-csv"),
        ];
        for (format, path, option) in asked {
            let Some(path) = path else { continue };
            check_output_file(path, option)?;
            self.refuse_shared(path, option)?;
            self.exports.push((format, path.clone()));
        }
        Ok(self)
    }

    /// Refuses `path` for another output option (`--record`) when `-o` or an `--export-*`
    /// already names it: two writers of one file would leave only the last.
    pub fn refuse_shared(&self, path: &std::path::Path, option: &str) -> Result<(), ConfigError> {
        let taken =
            self.out.as_deref() == Some(path) || self.exports.iter().any(|(_, p)| p == path);
        if taken {
            return Err(ConfigError::Output {
                path: path.to_path_buf(),
                why: format!("another output option names it too (--{option})"),
            });
        }
        Ok(())
    }

    /// Writes `bytes` to the `-o` file (whole or not at all) or stdout.
    pub fn emit(&self, bytes: &[u8]) -> anyhow::Result<()> {
        Ok(export::emit(bytes, self.out.as_deref())?)
    }

    /// Renders `result` in the chosen format and emits it, then writes each `--export-*` file
    /// (each whole or not at all).
    pub fn export<R: Render + ?Sized>(&self, result: &R) -> anyhow::Result<()> {
        self.emit(&export::export(result, self.format)?)?;
        for (format, path) in &self.exports {
            export::emit(&export::export(result, *format)?, Some(path))?;
        }
        Ok(())
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

/// Progress on stderr for a command that runs longer than a moment: notes as `tscope: …`
/// lines and, only when stderr is a terminal, a spinner line below them with the elapsed time
/// and what the job is doing now (the last step or note). Not a terminal (a pipe, a file, a
/// test): the notes alone, no spinner, no escape sequences. The spinner is cleared when the
/// value is dropped, before the result is printed.
#[derive(Debug)]
pub struct StderrProgress {
    bar: ProgressBar,
    job: String,
}

impl StderrProgress {
    /// A spinner for `job` ("run pipe1: 4 runs of 6 s") when stderr is a terminal.
    pub fn new(job: impl Into<String>) -> StderrProgress {
        let target = std::io::stderr()
            .is_terminal()
            .then(ProgressDrawTarget::stderr);
        StderrProgress::to(job.into(), target)
    }

    /// Notes only, never a spinner.
    pub fn lines() -> StderrProgress {
        StderrProgress::to(String::new(), None)
    }

    /// The spinner drawn to `target`; `None` draws nothing.
    fn to(job: String, target: Option<ProgressDrawTarget>) -> StderrProgress {
        let Some(target) = target else {
            return StderrProgress {
                bar: ProgressBar::hidden(),
                job,
            };
        };
        let bar = ProgressBar::with_draw_target(None, target);
        if let Ok(style) = ProgressStyle::with_template("{spinner} {elapsed:>4} {wide_msg}") {
            bar.set_style(style);
        }
        bar.set_message(job.clone());
        bar.enable_steady_tick(std::time::Duration::from_millis(120));
        StderrProgress { bar, job }
    }

    /// What the spinner says while `now` is under way.
    fn message(&self, now: &str) -> String {
        match (self.job.is_empty(), now.is_empty()) {
            (true, _) => now.to_string(),
            (false, true) => self.job.clone(),
            (false, false) => format!("{}: {now}", self.job),
        }
    }
}

impl Progress for StderrProgress {
    fn step(&self, what: &str) {
        self.bar.set_message(self.message(what));
    }

    fn note(&self, line: &str) {
        if self.bar.is_hidden() {
            eprintln!("tscope: {line}");
        } else {
            self.bar.println(format!("tscope: {line}"));
            self.bar.set_message(self.message(line));
        }
    }
}

impl Drop for StderrProgress {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A terminal that keeps what is written to it.
    #[derive(Debug, Clone, Default)]
    struct Screen(Arc<Mutex<String>>);

    impl indicatif::TermLike for Screen {
        fn width(&self) -> u16 {
            80
        }
        fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn write_line(&self, s: &str) -> std::io::Result<()> {
            self.write_str(&format!("{s}\n"))
        }
        fn write_str(&self, s: &str) -> std::io::Result<()> {
            self.0.lock().unwrap().push_str(s);
            Ok(())
        }
        fn clear_line(&self) -> std::io::Result<()> {
            Ok(())
        }
        fn flush(&self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn on_a_terminal_the_spinner_shows_the_job_its_steps_and_notes() {
        let screen = Screen::default();
        let target = ProgressDrawTarget::term_like(Box::new(screen.clone()));
        let p = StderrProgress::to("run pipe1: 2 runs of 2 s".into(), Some(target));
        assert!(!p.bar.is_hidden());
        p.step("tasks=2");
        p.note("booting the guest");
        p.bar.tick();
        let shown = screen.0.lock().unwrap().clone();
        assert!(shown.contains("run pipe1: 2 runs of 2 s"), "{shown:?}");
        assert!(
            shown.contains("run pipe1: 2 runs of 2 s: tasks=2"),
            "{shown:?}"
        );
        assert!(shown.contains("tscope: booting the guest\n"), "{shown:?}");
        assert!(
            shown.contains("run pipe1: 2 runs of 2 s: booting the guest"),
            "the last note is what the spinner says now: {shown:?}"
        );
    }

    #[test]
    fn off_a_terminal_there_is_no_spinner() {
        let p = StderrProgress::to("vm guest".into(), None);
        assert!(p.bar.is_hidden());
        assert!(StderrProgress::lines().bar.is_hidden());
        assert_eq!(p.message("booting"), "vm guest: booting");
        assert_eq!(p.message(""), "vm guest");
        assert_eq!(StderrProgress::lines().message("x"), "x");
    }
}
