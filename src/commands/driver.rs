//! The one shape of every command ([`Command`]) and the one driver that runs it ([`drive`]):
//! its arguments checked into a configuration before anything is measured, the stop signal
//! armed as the configuration says, then the work, its export and its exit code. A command
//! learns of an interruption one way: the [`Stop`] the driver hands it (exit code 130 comes
//! from there, or from the exit-at-once handler of a command that only reads and computes).

use super::{exit_on_signal, exit_on_signal_saying, stop_on_signal, Global, Stop};

/// How a command meets SIGINT, SIGTERM and SIGHUP.
#[derive(Debug, Clone, Copy)]
pub enum OnSignal {
    /// The default disposition: a quick command that holds nothing (`completions`, `man`).
    Default,
    /// End at once, nothing written: a command that reads and computes, holding no child and
    /// no scratch (a FIFO nobody writes included).
    Exit,
    /// End at once, saying what was kept: a command that commits as it goes (`fleet add`).
    ExitSaying(fn() -> String),
    /// Raise the stop flag the domain watches: it kills its children, removes its scratch and
    /// returns what it has; the command asks its [`Stop`] for the exit code.
    Stop,
}

/// A command: checked arguments, then the work.
pub trait Command {
    /// Its clap arguments.
    type Args;
    /// Its checked configuration (with where the output goes).
    type Config;

    /// How it meets a stop signal while its configuration is checked (`Exit` where that reads
    /// its inputs).
    fn while_configuring(_args: &Self::Args) -> OnSignal {
        OnSignal::Default
    }

    /// Step 1: every argument and output path checked, the inputs read; nothing measured.
    fn configure(args: &Self::Args, global: &Global) -> anyhow::Result<Self::Config>;

    /// How it meets a stop signal while it works.
    fn while_running(cfg: &Self::Config) -> OnSignal;

    /// Steps 2–5: the domain, the export, the emit, the exit code.
    fn execute(cfg: Self::Config, stop: &Stop) -> anyhow::Result<i32>;
}

/// Arms what `on` asks for; the [`Stop`] the command asks afterwards.
fn arm(on: OnSignal) -> anyhow::Result<Stop> {
    match on {
        OnSignal::Default => {}
        OnSignal::Exit => exit_on_signal()?,
        OnSignal::ExitSaying(kept) => exit_on_signal_saying(kept)?,
        OnSignal::Stop => return stop_on_signal(),
    }
    Ok(Stop::unwatched())
}

/// Runs command `C` with `args`: configure, arm, execute; its exit code.
pub fn drive<C: Command>(args: &C::Args, global: &Global) -> anyhow::Result<i32> {
    let _ = arm(C::while_configuring(args))?;
    let cfg = C::configure(args, global)?;
    let stop = arm(C::while_running(&cfg))?;
    C::execute(cfg, &stop)
}
