//! `tscope fleet`: many machines' documents in one SQLite file, and the grouped decision table.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::OutputArgs;

#[derive(Debug, Clone, Args)]
pub struct FleetArgs {
    /// The store (an SQLite file, created if missing).
    #[arg(
        long,
        global = true,
        value_name = "PATH",
        default_value = "tscope-fleet.db"
    )]
    pub db: PathBuf,
    #[command(subcommand)]
    pub command: FleetCommand,
}

#[derive(Debug, Clone, Subcommand)]
pub enum FleetCommand {
    /// Store probe, detect or report JSON (files, directories, or NDJSON on stdin with `-`).
    #[command(after_help = "Examples:
  tscope fleet add host.json tscope-report/report.json --label lab
  tscope fleet add ~/profiles/                  every *.json and *.ndjson below it
  ssh db1 tscope probe --json | jq -c . | tscope fleet add - --label db")]
    Add(FleetAddArgs),
    /// Per group: machines, what a timestamp costs, verdict shares, each policy's speedup.
    #[command(after_help = "Examples:
  tscope fleet report --by hypervisor,clocksource
  tscope fleet report --by label --markdown --export-svg fleet.svg
  tscope fleet report --scenario write-stat --json")]
    Report(FleetReportArgs),
    /// List the stored documents.
    Ls(FleetLsArgs),
    /// Remove stored documents by id, hash prefix or label.
    Rm(FleetRmArgs),
    /// Every normalised row, as CSV (default) or JSON.
    Export(FleetLsArgs),
    /// Check the store whole (SQLite's integrity_check); --salvage DIR writes every document
    /// that can still be read to DIR, from which `fleet add DIR` builds a new store.
    #[command(after_help = "Examples:
  tscope fleet check
  tscope fleet check --salvage rescued/ && tscope fleet --db new.db add rescued/")]
    Check(FleetCheckArgs),
}

#[derive(Debug, Clone, Args)]
pub struct FleetCheckArgs {
    /// Write every readable document to DIR as ID.json (a new or empty directory).
    #[arg(long, value_name = "DIR")]
    pub salvage: Option<std::path::PathBuf>,
    /// With --salvage: DIR may hold files already; its ID.json files are replaced.
    #[arg(long, requires = "salvage")]
    pub overwrite: bool,
}

#[derive(Debug, Clone, Args)]
pub struct FleetAddArgs {
    /// Files or directories to read; `-` reads NDJSON (one document per line) from stdin.
    #[arg(value_name = "FILE|DIR|-", required = true)]
    pub inputs: Vec<PathBuf>,
    /// A label stored with each new document (group by it with `report --by label`).
    #[arg(long)]
    pub label: Option<String>,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
}

/// What `fleet report` groups by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GroupByArg {
    Hypervisor,
    Clocksource,
    Cpu,
    Kernel,
    Label,
}

#[derive(Debug, Clone, Args)]
pub struct FleetReportArgs {
    /// Group by these facts (comma-separated); default: one group of every machine.
    #[arg(long, value_enum, value_delimiter = ',')]
    pub by: Vec<GroupByArg>,
    /// Bundled scenarios to replay (comma-separated); default: pipe1, vfsmix, write-stat.
    #[arg(long, value_delimiter = ',', value_name = "NAME")]
    pub scenario: Vec<String>,
    /// Also write an SVG of each group's cost distribution (p10, median, p90) to FILE.
    #[arg(long, value_name = "FILE")]
    pub export_svg: Option<PathBuf>,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Clone, Args)]
pub struct FleetLsArgs {
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Clone, Args)]
pub struct FleetRmArgs {
    /// Row ids (`fleet ls`) or hash prefixes (at least 6 hex digits).
    #[arg(value_name = "ID|HASH")]
    pub targets: Vec<String>,
    /// Remove every document with this label.
    #[arg(long)]
    pub label: Vec<String>,
}

impl From<GroupByArg> for crate::fleet::GroupBy {
    fn from(a: GroupByArg) -> Self {
        use crate::fleet::GroupBy;
        match a {
            GroupByArg::Hypervisor => GroupBy::Hypervisor,
            GroupByArg::Clocksource => GroupBy::Clocksource,
            GroupByArg::Cpu => GroupBy::Cpu,
            GroupByArg::Kernel => GroupBy::Kernel,
            GroupByArg::Label => GroupBy::Label,
        }
    }
}
