//! `tscope record -o FILE -- CMD ARGS...`: runs a command under `strace -f -tt -T -y -o FILE`,
//! the format `simulate --strace` reads. The exit code is the command's, as strace passes it on.
//!
//! What it writes is an strace log of any command, not a run record: that is
//! [`crate::workload::run_record::RunRecord`], written by `tscope run --record`.

use std::io::{BufRead, BufReader};
use std::process::Command;

use anyhow::Context;

use crate::cli::record::RecordArgs;

/// The strace options the importer expects: follow forks, microsecond wall-clock times, time
/// spent in each call, fd paths.
pub const STRACE_FLAGS: [&str; 4] = ["-f", "-tt", "-T", "-y"];

/// Runs the command under strace; returns its exit code.
pub fn main(args: &RecordArgs) -> anyhow::Result<i32> {
    let out = &args.out;
    let mut cmd = Command::new("strace");
    cmd.args(STRACE_FLAGS).arg("-o").arg(out).arg("--");
    cmd.args(&args.command);
    let status = match cmd.status() {
        Ok(s) => s,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => anyhow::bail!(
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
        anyhow::bail!(
            "strace recorded nothing for '{}' ({}): see strace's message above",
            args.command.join(" "),
            status
        );
    }
    eprintln!(
        "tscope: recorded {lines} lines in {}; estimate with: tscope simulate --strace {}",
        out.display(),
        out.display()
    );
    Ok(exit_code(status))
}

fn exit_code(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1)
}
