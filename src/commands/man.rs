//! `tscope man`: the man page, in roff.

use super::Global;
use crate::cli::Cli;
use crate::export;

/// Prints the man page; returns the exit code.
pub fn run(_global: &Global) -> anyhow::Result<i32> {
    let cmd = <Cli as clap::CommandFactory>::command();
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd).render(&mut out)?;
    export::emit(&out, None)?;
    Ok(0)
}
