//! `tscope completions SHELL`: a shell completion script.

use super::Global;
use crate::cli::{Cli, CompletionsArgs};
use crate::export;

/// Prints the completion script; returns the exit code.
pub fn run(args: &CompletionsArgs, _global: &Global) -> anyhow::Result<i32> {
    let mut cmd = <Cli as clap::CommandFactory>::command();
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "tscope", &mut out);
    export::emit(&out, None)?;
    Ok(0)
}
