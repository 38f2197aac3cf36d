//! The one signal story of every long command, and the one place an interruption is learnt.
//!
//! SIGINT, SIGTERM and SIGHUP raise the stop flag (`sys::signal`), which workloads, `record`,
//! the guests and the validation runs watch: they kill their children, remove their scratch and
//! return what they have. A step that does not watch the flag (a probe's sampling, a qemu boot)
//! is cut short by a watchdog thread: [`STOP_GRACE`] after the signal it exits
//! [`EXIT_INTERRUPTED`] itself; children started with `sys::child::kill_with_parent` die with
//! the process.
//!
//! What the domain returns has one shape. A result that is printed when cut short (a run, a
//! recording, a histogram, `vm count`, `vm bench`) carries one field, `stopped` (written as
//! the `interrupted` or `partial` its document has always had), and holds what was finished
//! before the signal. A call deep in the domain with nothing to return yet unwinds with
//! `Error::Interrupted`, which `error::unless_stopped` turns into that field at the top of the
//! call that has a result; a command that writes nothing when stopped never looks at it.
//!
//! A command arms this with [`stop_on_signal`] and asks the [`Stop`] it gets back, after the
//! domain returned, whether it was interrupted: the flag is read there and nowhere else in
//! `commands/` (never the result's `stopped` field, never the error), and that is where exit
//! code 130 comes from.

use anyhow::Context as _;

/// Exit code of a run stopped by SIGINT/SIGTERM/SIGHUP.
pub const EXIT_INTERRUPTED: i32 = 130;

/// How long a command may take to stop by itself after a stop signal before the watchdog of
/// [`stop_on_signal`] ends the process.
pub const STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// Installs the stop handler and the watchdog (once per process), and returns the handle the
/// command asks at the end.
pub fn stop_on_signal() -> anyhow::Result<Stop> {
    crate::sys::signal::install_stop_handler().context("installing the SIGINT/SIGTERM handler")?;
    static WATCHDOG: std::sync::Once = std::sync::Once::new();
    WATCHDOG.call_once(|| {
        let spawned = std::thread::Builder::new()
            .name("tscope-stop".into())
            .spawn(|| loop {
                if crate::sys::signal::stop_requested() {
                    std::thread::sleep(STOP_GRACE);
                    eprintln!("tscope: interrupted; stopped after {STOP_GRACE:?}");
                    crate::export::file::abandon_temporaries();
                    std::process::exit(EXIT_INTERRUPTED);
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            });
        // Without the watchdog the flag still works; only the hard stop is missing.
        drop(spawned);
    });
    Ok(Stop(()))
}

/// The signal story of a command that reads its inputs and computes, holding no child process
/// and no scratch (`show`, `compare`, `simulate` without `--validate`): SIGINT, SIGTERM and
/// SIGHUP end it at once, whatever it is doing (reading a file, waiting on a FIFO nobody
/// writes, parsing), with exit [`EXIT_INTERRUPTED`] and nothing written (a watcher thread looks
/// at the stop flag every 20 ms).
pub fn exit_on_signal() -> anyhow::Result<()> {
    exit_on_signal_saying(|| "nothing written".into())
}

/// [`exit_on_signal`] for a command that commits as it goes (`fleet add`): on a signal it
/// prints what `kept` says was kept instead of "nothing written".
pub fn exit_on_signal_saying(kept: fn() -> String) -> anyhow::Result<()> {
    *KEPT.lock().unwrap_or_else(|e| e.into_inner()) = Some(kept);
    crate::sys::signal::install_stop_handler().context("installing the SIGINT/SIGTERM handler")?;
    static WATCHER: std::sync::Once = std::sync::Once::new();
    WATCHER.call_once(|| {
        let spawned = std::thread::Builder::new()
            .name("tscope-exit".into())
            .spawn(|| loop {
                if crate::sys::signal::stop_requested() {
                    // An output being written when the signal came is removed, not left
                    // half-named beside its target.
                    crate::export::file::abandon_temporaries();
                    let kept = KEPT
                        .lock()
                        .ok()
                        .and_then(|k| *k)
                        .map_or_else(|| "nothing written".to_string(), |f| f());
                    eprintln!("tscope: interrupted; {kept}");
                    std::process::exit(EXIT_INTERRUPTED);
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            });
        drop(spawned);
    });
    Ok(())
}

/// What [`exit_on_signal_saying`]'s command says it kept.
static KEPT: std::sync::Mutex<Option<fn() -> String>> = std::sync::Mutex::new(None);

/// Whether a stop signal arrived: the command's one question about interruption.
#[derive(Debug)]
#[must_use = "a command asks its Stop, after the domain returned, for the exit code"]
pub struct Stop(());

impl Stop {
    /// The handle of a command that armed no stop handler (it never reads as requested
    /// unless another command of this process armed one).
    pub(super) fn unwatched() -> Stop {
        Stop(())
    }

    /// Whether a stop signal arrived since the command armed the handler.
    pub fn requested(&self) -> bool {
        crate::sys::signal::stop_requested()
    }

    /// The exit code of a command whose (possibly partial) result is already printed:
    /// [`EXIT_INTERRUPTED`] when a stop signal arrived, else `code`.
    pub fn exit_code(&self, code: i32) -> i32 {
        if self.requested() {
            EXIT_INTERRUPTED
        } else {
            code
        }
    }

    /// For a command that prints nothing half-measured: [`EXIT_INTERRUPTED`], with a note,
    /// when a stop signal arrived.
    pub fn nothing_written(&self) -> Option<i32> {
        self.requested().then(|| {
            eprintln!("tscope: interrupted; nothing written");
            EXIT_INTERRUPTED
        })
    }
}
