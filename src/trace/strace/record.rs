//! `tscope record -o FILE -- CMD ARGS...`: runs a command under `strace -f -tt -T -y -o FILE`,
//! the format `simulate --strace` reads. The exit code is the command's, as strace passes it on.
//!
//! What it writes is an strace log of any command, not a run record: that is
//! [`crate::workload::run_record::RunRecord`], written by `tscope run --record`.

use std::io::{BufRead, BufReader};
use std::process::Command;
use std::time::Duration;

use crate::error::Context;

use std::path::PathBuf;

/// The strace options the importer expects: follow forks, microsecond wall-clock times, time
/// spent in each call, fd paths.
pub const STRACE_FLAGS: [&str; 4] = ["-f", "-tt", "-T", "-y"];

/// What a recording left: the log's length and the traced command's exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recording {
    pub lines: usize,
    /// The command's exit code (128 + the signal that killed it).
    pub exit_code: i32,
    /// A stop signal (SIGINT/SIGTERM/SIGHUP) ended the recording: strace and everything it
    /// traced were killed; the log holds what was traced until then.
    pub stopped: bool,
}

/// What to record: the command, and where strace writes its log.
#[derive(Debug, Clone)]
pub struct RecordConfig {
    pub out: PathBuf,
    pub command: Vec<String>,
}

/// Runs the command under strace, writing the log to `cfg.out` (a regular file or a new
/// path: the caller refuses devices and FIFOs, whose "log" could not be read back). Watches
/// the stop flag ([`crate::sys::signal`]): on a stop signal strace is frozen, everything it
/// traced is killed, then strace itself.
pub fn record(cfg: &RecordConfig) -> crate::error::Result<Recording> {
    let (out, command) = (&cfg.out, &cfg.command);
    let existed = std::fs::symlink_metadata(out).is_ok();
    let mut cmd = Command::new("strace");
    cmd.args(STRACE_FLAGS).arg("-o").arg(out).arg("--");
    cmd.args(command);
    crate::sys::child::kill_with_parent(&mut cmd);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => crate::fail!(
            "strace is not installed or not on PATH: install strace (apt-get install strace)"
        ),
        Err(e) => return Err(e).context("starting strace"),
    };
    let mut stopped = false;
    let status = loop {
        if let Some(st) = child.try_wait().context("waiting for strace")? {
            break st;
        }
        if crate::sys::signal::stop_requested() {
            stopped = true;
            kill_tree(child.id());
            break child.wait().context("waiting for strace")?;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // Only a regular file is read back (the caller refused anything else; a log replaced
    // meanwhile by a device must not be read forever).
    let lines = match std::fs::metadata(out) {
        Ok(m) if m.is_file() => std::fs::File::open(out)
            .map(|f| BufReader::new(f).split(b'\n').count())
            .unwrap_or(0),
        _ => 0,
    };
    if lines == 0 && !stopped {
        // strace could not start the command (it said why on stderr): no empty log left
        // behind, unless the file was there before (then it is the user's, not ours).
        if !existed {
            let _ = std::fs::remove_file(out);
        }
        crate::fail!(
            "strace recorded nothing for '{}' ({}): see strace's message above",
            command.join(" "),
            status
        );
    }
    Ok(Recording {
        lines,
        exit_code: exit_code(status),
        stopped,
    })
}

/// Stops strace (so that it neither forks nor detaches meanwhile), kills every process below
/// it, then strace: a killed tracer would otherwise leave its tracees running under init.
fn kill_tree(strace: u32) {
    use crate::sys::signal::{descendants, send};
    let _ = send(strace, libc::SIGSTOP);
    for _ in 0..3 {
        let below = descendants(strace);
        if below.is_empty() {
            break;
        }
        for pid in below {
            let _ = send(pid, libc::SIGKILL);
        }
    }
    let _ = send(strace, libc::SIGKILL);
}

fn exit_code(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1)
}
