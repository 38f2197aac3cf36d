//! `tscope record`: arguments only; `strace::record` runs the command.

use std::path::PathBuf;

use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct RecordArgs {
    /// Where strace writes the log (then: `tscope simulate --strace FILE`).
    #[arg(short = 'o', long = "out", value_name = "FILE")]
    pub out: PathBuf,
    /// The command and its arguments (after `--`).
    #[arg(required = true, last = true, value_name = "CMD")]
    pub command: Vec<String>,
}
