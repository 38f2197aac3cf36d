//! `tscope report`: measure this machine and write report.md, report.json and the SVG charts
//! into a directory.

use super::{Global, StderrProgress};
use crate::cli::ReportArgs;
use crate::error::ConfigError;
use crate::export::{self, ReportDocument};
use crate::report::{self, ReportConfig};

/// Validates `args` into a report configuration; the output directory is checked now (nothing
/// is created), so a path that cannot hold it fails before anything is measured.
pub fn config(args: &ReportArgs, global: &Global) -> Result<ReportConfig, ConfigError> {
    let sync_budget = super::detect::sync_budget(args.sync_ms)?;
    let dir = crate::export::file::check_dir(&args.out).map_err(|why| ConfigError::Output {
        path: args.out.clone(),
        why: format!("{why} (--out)"),
    })?;
    if let Some(path) = &args.export_openmetrics {
        super::output::check_output_file(path, "export-openmetrics")?;
        // The directory is replaced whole, and holds only report files.
        let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
        let parent = std::fs::canonicalize(parent.unwrap_or(std::path::Path::new(".")));
        if parent.is_ok_and(|p| p.starts_with(&dir)) {
            return Err(ConfigError::Output {
                path: path.clone(),
                why: "it is inside the report directory, which is replaced whole; name a file \
                      outside --out (--export-openmetrics)"
                    .into(),
            });
        }
    }
    // A recording that cannot be read fails before anything is measured.
    for path in &args.strace {
        match std::fs::metadata(path) {
            Ok(m) if m.is_file() || std::os::unix::fs::FileTypeExt::is_fifo(&m.file_type()) => {}
            Ok(_) => {
                return Err(ConfigError::Invalid(format!(
                    "--strace '{}' is not a file: it takes a log written by `tscope record -o \
                     FILE -- CMD`",
                    path.display()
                )))
            }
            Err(e) => {
                return Err(ConfigError::Invalid(format!(
                    "--strace '{}': {e}",
                    path.display()
                )))
            }
        }
    }
    // A baseline that cannot be read fails before anything is measured.
    let baseline = match &args.baseline {
        Some(path) => Some(crate::compare::Input::load(path).map_err(|e| {
            ConfigError::Invalid(format!("--baseline '{}': {e:#}", path.display()))
        })?),
        None => None,
    };
    // The command as it was given: what a reader reruns.
    let command = super::invocation();
    Ok(ReportConfig {
        quick: args.sampling.quick,
        seed: args.sampling.seed,
        sync_budget,
        emulate_trap: global.emulate_trap,
        workloads: !args.no_workloads,
        vm: args.vm,
        guest_bin: args.guest_bin.clone(),
        command,
        update_dirs: update_dirs(&args.out),
        straces: args.strace.clone(),
        baseline,
    })
}

/// Where the report prices an inode update: /dev/shm (tmpfs), and the directory the report is
/// written in (its parent, which exists), a disk filesystem where builds and checkouts live.
fn update_dirs(out: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut v = Vec::new();
    if std::path::Path::new("/dev/shm").is_dir() {
        v.push("/dev/shm".into());
    }
    // As given (relative stays relative: the report names it as the user did).
    let parent = out.parent().filter(|p| !p.as_os_str().is_empty());
    let parent = parent.unwrap_or(std::path::Path::new("."));
    if parent.is_dir() {
        v.push(parent.to_path_buf());
    }
    v
}

/// `tscope report`: the report's directory, written whole; 130 (nothing written) when
/// interrupted.
#[derive(Debug)]
pub struct Report;

/// What `tscope report` gathers, and where it writes.
#[derive(Debug)]
pub struct ReportJob {
    cfg: ReportConfig,
    out: std::path::PathBuf,
    openmetrics: Option<std::path::PathBuf>,
}

impl super::Command for Report {
    type Args = ReportArgs;
    type Config = ReportJob;

    fn configure(args: &ReportArgs, global: &Global) -> anyhow::Result<ReportJob> {
        Ok(ReportJob {
            cfg: config(args, global)?,
            out: args.out.clone(),
            openmetrics: args.export_openmetrics.clone(),
        })
    }

    fn while_running(_: &ReportJob) -> super::OnSignal {
        super::OnSignal::Stop
    }

    fn execute(job: ReportJob, stop: &super::Stop) -> anyhow::Result<i32> {
        run(&job, stop)
    }
}

fn run(job: &ReportJob, stop: &super::Stop) -> anyhow::Result<i32> {
    let cfg = &job.cfg;
    let progress = StderrProgress::steps(if cfg.vm { 7 } else { 5 });
    let report = report::run(cfg, &progress);
    drop(progress);
    if let Some(code) = stop.nothing_written() {
        return Ok(code);
    }
    // Written whole: a temporary sibling renamed into place (an earlier report is replaced).
    let files = ReportDocument(&report).files()?;
    export::file::write_dir(&job.out, &files)?;
    let mut written = export::written(&job.out, &files);
    if let Some(path) = &job.openmetrics {
        export::emit(export::openmetrics::report(&report).as_bytes(), Some(path))?;
        written += &format!("wrote {}\n", path.display());
    }
    export::emit(written.as_bytes(), None)?;
    Ok(0)
}
