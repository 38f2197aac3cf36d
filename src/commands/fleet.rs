//! `tscope fleet add|report|ls|rm|export|check`: the fleet store ([`crate::fleet`]). Each
//! subcommand is the same five steps: its options, output paths and selectors checked into a
//! [`FleetJob`] before the store is touched, the store opened (and migrated), the domain call,
//! the export, the exit code (`add`: 1 when a file was refused, after every other file is
//! stored).

use std::path::{Path, PathBuf};

use super::{check_output_file, Destination, Global};
use crate::cli::fleet::{FleetAddArgs, FleetArgs, FleetCommand, FleetReportArgs, FleetRmArgs};
use crate::error::ConfigError;
use crate::export::Format;
use crate::fleet::{self, ingest, Listing, ReportConfig, Selector, Store};

/// `tscope fleet …`: one subcommand on the store. Every subcommand reads and commits only, so
/// a stop signal ends it at once (`add` says what it had committed).
#[derive(Debug)]
pub struct Fleet;

/// One fleet subcommand, checked: every option, output path and selector before the store is
/// opened.
#[derive(Debug)]
pub enum FleetJob {
    Add {
        db: PathBuf,
        inputs: Vec<PathBuf>,
        label: Option<String>,
        json: bool,
    },
    Report {
        db: PathBuf,
        output: Destination,
        svg: Option<PathBuf>,
        cfg: ReportConfig,
    },
    List {
        db: PathBuf,
        output: Destination,
    },
    Rm {
        db: PathBuf,
        selectors: Vec<Selector>,
    },
    Check {
        db: PathBuf,
        salvage: Option<PathBuf>,
        overwrite: bool,
    },
}

impl super::Command for Fleet {
    type Args = FleetArgs;
    type Config = FleetJob;

    fn while_configuring(args: &FleetArgs) -> super::OnSignal {
        on_signal(args)
    }

    fn configure(args: &FleetArgs, _global: &Global) -> anyhow::Result<FleetJob> {
        if args.db.as_os_str().is_empty() {
            return Err(ConfigError::Invalid("--db: an empty path".into()).into());
        }
        let db = args.db.clone();
        Ok(match &args.command {
            FleetCommand::Add(a) => add_config(db, a)?,
            FleetCommand::Report(a) => report_config(db, a)?,
            FleetCommand::Ls(a) => list_config(db, &a.output, Format::Table)?,
            FleetCommand::Export(a) => list_config(db, &a.output, Format::Csv)?,
            FleetCommand::Rm(a) => rm_config(db, a)?,
            FleetCommand::Check(a) => FleetJob::Check {
                db,
                salvage: a.salvage.clone(),
                overwrite: a.overwrite,
            },
        })
    }

    fn while_running(job: &FleetJob) -> super::OnSignal {
        match job {
            FleetJob::Add { .. } => super::OnSignal::ExitSaying(ingest::committed_note),
            _ => super::OnSignal::Exit,
        }
    }

    fn execute(job: FleetJob, _stop: &super::Stop) -> anyhow::Result<i32> {
        match job {
            FleetJob::Add {
                db,
                inputs,
                label,
                json,
            } => add(&db, &inputs, label.as_deref(), json),
            FleetJob::Report {
                db,
                output,
                svg,
                cfg,
            } => report(&db, &output, svg.as_deref(), &cfg),
            FleetJob::List { db, output } => list(&db, &output),
            FleetJob::Rm { db, selectors } => remove(&db, &selectors),
            FleetJob::Check {
                db,
                salvage,
                overwrite,
            } => check(&db, salvage.as_deref(), overwrite),
        }
    }
}

fn on_signal(args: &FleetArgs) -> super::OnSignal {
    match &args.command {
        FleetCommand::Add(_) => super::OnSignal::ExitSaying(ingest::committed_note),
        _ => super::OnSignal::Exit,
    }
}

/// `fleet check`: the full check, and `--salvage DIR` (checked before the store is read).
fn check(db: &Path, salvage: Option<&Path>, overwrite: bool) -> anyhow::Result<i32> {
    use std::fmt::Write as _;
    let into = salvage
        .map(|dir| fleet::integrity::salvage_dir(dir, overwrite))
        .transpose()?;
    let store = existing(db)?;
    let problems = store.check();
    let mut text = String::new();
    if problems.is_empty() {
        let _ = writeln!(text, "{}: ok (integrity_check)", db.display());
    } else {
        let _ = writeln!(text, "{}: damaged (integrity_check):", db.display());
        for p in &problems {
            let _ = writeln!(text, "  {}", crate::fmt::safe::cell(p));
        }
    }
    // What the check found is out before the salvage starts (it may fail on its own).
    crate::export::emit(text.as_bytes(), None)?;
    if let (Some(dir), Some(into)) = (salvage, &into) {
        let s = store.salvage(into, overwrite)?;
        let line = format!(
            "salvaged {} document(s) to {} ({} could not be read); `tscope fleet --db NEW.db add \
             {}` builds a new store from them\n",
            s.written,
            dir.display(),
            s.lost,
            dir.display()
        );
        crate::export::emit(line.as_bytes(), None)?;
    }
    Ok(if problems.is_empty() { 0 } else { 1 })
}

/// Says on stderr that `store` is damaged and what is printed is what could still be read;
/// the exit code the command then ends with (1 when damaged).
fn warn_damaged(store: &Store) -> i32 {
    if store.damaged.is_empty() {
        return 0;
    }
    eprintln!(
        "tscope: warning: {}; what is printed is what could still be read",
        fleet::integrity::refusal(&store.path, &store.damaged)
    );
    1
}

/// Opens a store that must already exist, for reading (`ls`, `report`, `export`, `check`):
/// read-only, unless its schema is older than this build's, which the writing open migrates.
fn existing(db: &Path) -> anyhow::Result<Store> {
    exists(db)?;
    let store = Store::open_read(db)?;
    if store.damaged.is_empty() && store.version()? != fleet::schema::VERSION {
        drop(store);
        return Ok(Store::open(db)?);
    }
    Ok(store)
}

/// Opens a store that must already exist, for writing (`rm`).
fn existing_for_write(db: &Path) -> anyhow::Result<Store> {
    exists(db)?;
    Ok(Store::open(db)?)
}

/// `Err` when there is no store at `db`.
fn exists(db: &Path) -> anyhow::Result<()> {
    if !db.exists() {
        return Err(ConfigError::Invalid(format!(
            "no fleet store at '{}': add documents with `tscope fleet add`, or name the store \
             with --db",
            db.display()
        ))
        .into());
    }
    Ok(())
}

fn add_config(db: PathBuf, a: &FleetAddArgs) -> Result<FleetJob, ConfigError> {
    if let Some(l) = &a.label {
        if l.trim().is_empty() || l.chars().any(char::is_control) {
            return Err(ConfigError::Invalid(
                "--label: give a non-empty label without control characters".into(),
            ));
        }
    }
    let stdin_count = a.inputs.iter().filter(|p| p.as_os_str() == "-").count();
    if stdin_count > 1 {
        return Err(ConfigError::Invalid(
            "`-` (stdin) is named more than once".into(),
        ));
    }
    if stdin_count == 1 && crate::sys::stdio::stdin_closed_at_start() {
        return Err(ConfigError::Invalid(
            "`-` reads standard input, which is closed (<&-): pipe NDJSON into it \
             (`… | tscope fleet add -`) or name the files"
                .into(),
        ));
    }
    Ok(FleetJob::Add {
        db,
        inputs: a.inputs.clone(),
        label: a.label.clone(),
        json: a.json,
    })
}

fn add(db: &Path, inputs: &[PathBuf], label: Option<&str>, json: bool) -> anyhow::Result<i32> {
    let mut store = Store::open(db)?;
    store.writable()?;
    let mut summary = fleet::AddSummary {
        store: db.display().to_string(),
        ..Default::default()
    };
    // A failure part-way (a full disk, an I/O error) says what was committed before it.
    let kept = |e: crate::error::Error| anyhow::anyhow!("{e:#} ({})", ingest::committed_note());
    for input in inputs {
        if input.as_os_str() == "-" {
            let stdin = std::io::stdin().lock();
            ingest::add_stream(&mut store, stdin, label, &mut summary).map_err(kept)?;
            continue;
        }
        let mut files = Vec::new();
        ingest::expand(input, &mut files, &mut summary.failed);
        for batch in files.chunks(256) {
            let units = ingest::prepare_files(batch);
            ingest::store_units(&mut store, units, label, &mut summary).map_err(kept)?;
        }
    }
    // Each refusal is said once, on stderr; the summary on stdout counts them (JSON lists
    // them for a program).
    for f in &summary.failed {
        eprintln!(
            "tscope: skipped '{}': {}",
            f.source,
            crate::fmt::for_locale(&f.error)
        );
    }
    let out = if json {
        crate::export::json(&summary)?
    } else {
        crate::export::fleet::add_summary(&summary).into_bytes()
    };
    crate::export::emit(&out, None)?;
    Ok(if summary.failed.is_empty() { 0 } else { 1 })
}

fn report_config(db: PathBuf, a: &FleetReportArgs) -> anyhow::Result<FleetJob> {
    let output = Destination::new(&a.output)?;
    if let Some(svg) = &a.export_svg {
        check_output_file(svg, "export-svg")?;
        output.refuse_shared(svg, "export-svg")?;
    }
    let scenarios = if a.scenario.is_empty() {
        fleet::replay::DEFAULT_SCENARIOS
            .iter()
            .map(|s| s.to_string())
            .collect()
    } else {
        a.scenario.clone()
    };
    for s in &scenarios {
        fleet::replay::scenario(s).map_err(|e| ConfigError::Invalid(format!("--scenario: {e}")))?;
    }
    let mut by = Vec::new();
    for b in &a.by {
        let b = fleet::GroupBy::from(*b);
        if !by.contains(&b) {
            by.push(b);
        }
    }
    Ok(FleetJob::Report {
        db,
        output,
        svg: a.export_svg.clone(),
        cfg: ReportConfig { by, scenarios },
    })
}

fn report(
    db: &Path,
    output: &Destination,
    svg: Option<&Path>,
    cfg: &ReportConfig,
) -> anyhow::Result<i32> {
    let store = existing(db)?;
    let code = warn_damaged(&store);
    let rows = store.rows()?;
    let r = fleet::decisions::report(&rows, cfg)?;
    output.export(&r)?;
    if let Some(svg) = svg {
        crate::export::emit(crate::export::fleet::svg(&r)?.as_bytes(), Some(svg))?;
    }
    Ok(code)
}

fn list_config(
    db: PathBuf,
    o: &crate::cli::OutputArgs,
    default: Format,
) -> anyhow::Result<FleetJob> {
    let mut output = Destination::new(o)?;
    if !(o.json || o.csv || o.markdown) {
        output.format = default;
    }
    Ok(FleetJob::List { db, output })
}

fn list(db: &Path, output: &Destination) -> anyhow::Result<i32> {
    let store = existing(db)?;
    let code = warn_damaged(&store);
    output.export(&Listing {
        rows: store.rows()?,
    })?;
    Ok(code)
}

/// A positional `rm` target: an id (digits) or a hash prefix (6 to 64 hex digits).
fn selector(t: &str) -> Result<Selector, ConfigError> {
    if !t.is_empty() && t.len() <= 18 && t.bytes().all(|b| b.is_ascii_digit()) {
        if let Ok(id) = t.parse() {
            return Ok(Selector::Id(id));
        }
    }
    if (6..=64).contains(&t.len()) && t.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Ok(Selector::Hash(t.to_ascii_lowercase()));
    }
    Err(ConfigError::Invalid(format!(
        "'{t}' is neither a row id (`tscope fleet ls`) nor a hash prefix of 6 to 64 hex digits; \
         remove by label with --label"
    )))
}

fn rm_config(db: PathBuf, a: &FleetRmArgs) -> Result<FleetJob, ConfigError> {
    let mut selectors = a
        .targets
        .iter()
        .map(|t| selector(t))
        .collect::<Result<Vec<_>, _>>()?;
    selectors.extend(a.label.iter().cloned().map(Selector::Label));
    if selectors.is_empty() {
        return Err(ConfigError::Invalid(
            "name what to remove: row ids, hash prefixes or --label LABEL".into(),
        ));
    }
    Ok(FleetJob::Rm { db, selectors })
}

fn remove(db: &Path, selectors: &[Selector]) -> anyhow::Result<i32> {
    let mut store = existing_for_write(db)?;
    let counts = store.remove(selectors)?;
    let total: usize = counts.iter().sum();
    let line = format!("removed {total} document(s) from {}\n", db.display());
    crate::export::emit(line.as_bytes(), None)?;
    Ok(if total == 0 { 1 } else { 0 })
}
