//! `tscope man [SUBCOMMAND] [--out DIR]`: man pages in roff, one per command, with examples.

use std::path::Path;

use super::Global;
use crate::cli::{Cli, ManArgs};
use crate::error::ConfigError;
use crate::export;

/// The command tree with every subcommand's display name (`tscope-vm-guest`) set.
fn tree() -> clap::Command {
    let mut cmd = <Cli as clap::CommandFactory>::command().disable_help_subcommand(true);
    cmd.build();
    cmd
}

/// Every visible command, depth first, the top level last.
fn pages(cmd: &clap::Command, out: &mut Vec<clap::Command>) {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        pages(sub, out);
    }
    out.push(cmd.clone());
}

/// The page's name: `tscope`, `tscope-detect`, `tscope-vm-guest`.
fn name(cmd: &clap::Command) -> String {
    cmd.get_display_name()
        .unwrap_or_else(|| cmd.get_name())
        .to_string()
}

fn render(cmd: clap::Command) -> anyhow::Result<Vec<u8>> {
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd).render(&mut out)?;
    Ok(out)
}

/// Prints one page, or writes them all; returns the exit code.
#[derive(Debug)]
pub struct Man;

/// What `tscope man` writes: every page into a directory, or one page to stdout.
#[derive(Debug)]
pub enum ManJob {
    All(std::path::PathBuf),
    One(Box<clap::Command>),
}

impl super::Command for Man {
    type Args = ManArgs;
    type Config = ManJob;

    fn configure(args: &ManArgs, _global: &Global) -> anyhow::Result<ManJob> {
        config(args)
    }

    fn while_running(_: &ManJob) -> super::OnSignal {
        super::OnSignal::Default
    }

    fn execute(job: ManJob, _stop: &super::Stop) -> anyhow::Result<i32> {
        match job {
            ManJob::All(dir) => write_all(&dir),
            ManJob::One(cmd) => {
                export::emit(&render(*cmd)?, None::<&Path>)?;
                Ok(0)
            }
        }
    }
}

/// Every page into `dir`.
fn write_all(dir: &Path) -> anyhow::Result<i32> {
    let mut all = Vec::new();
    pages(&tree(), &mut all);
    {
        let mut written = Vec::new();
        for cmd in all {
            let path = dir.join(format!("{}.1", name(&cmd)));
            export::emit(&render(cmd)?, Some(&path))?;
            written.push(path);
        }
        let names: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
        export::emit(format!("wrote {}\n", names.join(", ")).as_bytes(), None)?;
    }
    Ok(0)
}

/// Validates `args`: the directory for every page, or the one page asked for.
fn config(args: &ManArgs) -> anyhow::Result<ManJob> {
    if let Some(dir) = &args.out {
        super::check_output_dir(dir, "out")?;
        return Ok(ManJob::All(dir.clone()));
    }
    let mut all = Vec::new();
    pages(&tree(), &mut all);
    let wanted = match &args.subcommand {
        None => "tscope".to_string(),
        Some(s) => format!("tscope-{}", s.trim().replace(' ', "-")),
    };
    let Some(cmd) = all.into_iter().find(|c| name(c) == wanted) else {
        let mut known = Vec::new();
        pages(&tree(), &mut known);
        let known: Vec<String> = known
            .iter()
            .filter_map(|c| name(c).strip_prefix("tscope-").map(str::to_string))
            .collect();
        return Err(ConfigError::Invalid(format!(
            "no man page for '{}'; pages: {}",
            args.subcommand.as_deref().unwrap_or(""),
            known.join(", ")
        ))
        .into());
    };
    Ok(ManJob::One(Box::new(cmd)))
}
