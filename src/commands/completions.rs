//! `tscope completions SHELL`: a shell completion script.

use super::Global;
use crate::cli::{Cli, CompletionsArgs};
use crate::export;

/// Prints the completion script.
#[derive(Debug)]
pub struct Completions;

impl super::Command for Completions {
    type Args = CompletionsArgs;
    type Config = clap_complete::Shell;

    fn configure(args: &CompletionsArgs, _global: &Global) -> anyhow::Result<clap_complete::Shell> {
        Ok(args.shell)
    }

    fn while_running(_: &clap_complete::Shell) -> super::OnSignal {
        super::OnSignal::Default
    }

    fn execute(shell: clap_complete::Shell, _stop: &super::Stop) -> anyhow::Result<i32> {
        let mut cmd = <Cli as clap::CommandFactory>::command();
        let mut out = Vec::new();
        clap_complete::generate(shell, &mut cmd, "tscope", &mut out);
        export::emit(&out, None)?;
        Ok(0)
    }
}
