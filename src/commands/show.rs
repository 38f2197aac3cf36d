//! `tscope show FILE`: render a JSON file tscope wrote again, in any format — a measurement is
//! taken once and shown as many ways as needed. The kind is recognised from the document's
//! fields; the file is parsed with the same types that wrote it, so a field this build does
//! not know is ignored and a missing one is an error naming the file.

use std::path::Path;

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{Global, Output};
use crate::cli::ShowArgs;
use crate::error::ConfigError;

/// What a tscope JSON document is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Probe,
    Detect,
    Run,
    VmGuest,
    VmExits,
}

impl Kind {
    /// Recognises a document by the fields only its kind has.
    pub fn of(v: &Value) -> Option<Kind> {
        let has = |k: &str| v.get(k).is_some();
        if has("guests") && has("accel") {
            Some(Kind::VmGuest)
        } else if has("kinds") && has("loop_ticks") {
            Some(Kind::VmExits)
        } else if has("workload") && has("runs") {
            Some(Kind::Run)
        } else if has("verdicts") && has("facts") {
            Some(Kind::Detect)
        } else if has("sources") && has("machine") && has("derived") {
            Some(Kind::Probe)
        } else {
            None
        }
    }
}

/// Parses the text itself (a `Value` would reorder maps) as the type that wrote it.
fn parse<T: DeserializeOwned>(text: &str, path: &Path, what: &str) -> anyhow::Result<T> {
    serde_json::from_str(text).map_err(|e| {
        ConfigError::Invalid(format!(
            "'{}' looks like {what} output but does not parse as one ({e}): was it written by \
             another tscope version?",
            path.display()
        ))
        .into()
    })
}

/// Renders the file in the chosen format; returns the exit code.
pub fn run(args: &ShowArgs, _global: &Global) -> anyhow::Result<i32> {
    let output = Output::new(&args.output)?;
    let path = &args.file;
    let text = std::fs::read_to_string(path)
        .map_err(|e| ConfigError::Invalid(format!("cannot read '{}': {e}", path.display())))?;
    let v: Value = serde_json::from_str(&text).map_err(|e| {
        ConfigError::Invalid(format!(
            "'{}' is not JSON (line {}, column {}): {e}",
            path.display(),
            e.line(),
            e.column()
        ))
    })?;
    if v.get("kind").and_then(Value::as_str) == Some("tscope-run-record") {
        return Err(ConfigError::Invalid(format!(
            "'{}' is a run record (`tscope run --record`): it is input for `tscope simulate \
             --run`; `tscope show` renders what `tscope run --json` writes",
            path.display()
        ))
        .into());
    }
    let Some(kind) = Kind::of(&v) else {
        return Err(ConfigError::Invalid(format!(
            "'{}' is not a document tscope writes (expected the JSON of probe, detect, run, \
             vm guest or vm exits)",
            path.display()
        ))
        .into());
    };
    match kind {
        Kind::Probe => output.export(&parse::<crate::probe::Profile>(&text, path, "probe")?)?,
        Kind::Detect => {
            output.export(&parse::<crate::detect::Detection>(&text, path, "detect")?)?
        }
        Kind::Run => output.export(&parse::<crate::workload::RunReport>(&text, path, "run")?)?,
        Kind::VmGuest => output.export(&parse::<crate::vm::matrix::GuestMatrix>(
            &text, path, "vm guest",
        )?)?,
        Kind::VmExits => {
            output.export(&parse::<crate::vm::exits::Exits>(&text, path, "vm exits")?)?
        }
    }
    Ok(0)
}
