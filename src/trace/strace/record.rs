//! `tscope record -o FILE -- CMD ARGS...`: runs a command under `strace -f -tt -T -y -o FILE`,
//! the format `simulate --strace` reads. The exit code is the command's, as strace passes it on.
//!
//! What it writes is an strace log of any command, not a run record: that is
//! [`crate::workload::run_record::RunRecord`], written by `tscope run --record`.

use std::io::{BufRead, BufReader};
use std::process::Command;

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
}

/// What to record: the command, and where strace writes its log.
#[derive(Debug, Clone)]
pub struct RecordConfig {
    pub out: PathBuf,
    pub command: Vec<String>,
}

/// Runs the command under strace, writing the log to `cfg.out`.
pub fn record(cfg: &RecordConfig) -> crate::error::Result<Recording> {
    let (out, command) = (&cfg.out, &cfg.command);
    let mut cmd = Command::new("strace");
    cmd.args(STRACE_FLAGS).arg("-o").arg(out).arg("--");
    cmd.args(command);
    let status = match cmd.status() {
        Ok(s) => s,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => crate::fail!(
            "strace is not installed or not on PATH: install strace (apt-get install strace)"
        ),
        Err(e) => return Err(e).context("starting strace"),
    };
    let lines = std::fs::File::open(out)
        .map(|f| BufReader::new(f).lines().count())
        .unwrap_or(0);
    if lines == 0 {
        // strace could not start the command (it said why on stderr): no empty log left behind.
        let _ = std::fs::remove_file(out);
        crate::fail!(
            "strace recorded nothing for '{}' ({}): see strace's message above",
            command.join(" "),
            status
        );
    }
    Ok(Recording {
        lines,
        exit_code: exit_code(status),
    })
}

fn exit_code(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1)
}
