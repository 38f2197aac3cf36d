//! Step 4 of every command: where and how a result is printed ([`Destination`]), and the
//! checks, made before anything is measured, that each output path can be written.

use std::path::{Path, PathBuf};

use crate::cli::{ExportArgs, OpenMetricsArgs, OutputArgs};
use crate::error::ConfigError;
use crate::export::{self, Format, Render};

/// Where and how a result is printed, validated from [`OutputArgs`] (and [`ExportArgs`] for
/// the commands that measure).
#[derive(Debug, Clone)]
pub struct Destination {
    pub format: Format,
    /// `-o FILE`; `None` is stdout.
    pub out: Option<PathBuf>,
    /// `--export-json/-markdown/-csv/-openmetrics FILE`: more formats, each to its own file.
    pub exports: Vec<(Format, PathBuf)>,
}

impl Destination {
    /// The format the flags ask for, and the output file checked for writability.
    pub fn new(o: &OutputArgs) -> Result<Destination, ConfigError> {
        let format = if o.json {
            Format::Json
        } else if o.csv {
            Format::Csv
        } else if o.markdown {
            Format::Markdown
        } else {
            Format::Table
        };
        if let Some(path) = &o.out {
            check_output_file(path, "out")?;
        } else if crate::sys::stdio::stdout_closed_at_start() {
            // Refused before measuring, not after.
            return Err(ConfigError::Invalid(export::STDOUT_CLOSED.into()));
        }
        Ok(Destination {
            format,
            out: o.out.clone(),
            exports: Vec::new(),
        })
    }

    /// Adds the `--export-*` files, each checked for writability now, before anything is
    /// measured; a path named twice (by two exports, or by an export and `-o`) is refused.
    pub fn with_exports(mut self, e: &ExportArgs) -> Result<Destination, ConfigError> {
        let asked = [
            (Format::Json, &e.export_json, "export-json"),
            (Format::Markdown, &e.export_markdown, "export-markdown"),
            (Format::Csv, &e.export_csv, "export-csv"),
        ];
        for (format, path, option) in asked {
            let Some(path) = path else { continue };
            check_output_file(path, option)?;
            self.refuse_shared(path, option)?;
            self.exports.push((format, path.clone()));
        }
        Ok(self)
    }

    /// `--openmetrics` (the printed format) and `--export-openmetrics FILE` (checked now, as
    /// [`Destination::with_exports`] checks the others).
    pub fn with_openmetrics(mut self, m: &OpenMetricsArgs) -> Result<Destination, ConfigError> {
        if m.openmetrics {
            self.format = Format::OpenMetrics;
        }
        if let Some(path) = &m.export_openmetrics {
            check_output_file(path, "export-openmetrics")?;
            self.refuse_shared(path, "export-openmetrics")?;
            self.exports.push((Format::OpenMetrics, path.clone()));
        }
        Ok(self)
    }

    /// Refuses `path` for another output option (`--record`) when `-o` or an `--export-*`
    /// already names it: two writers of one file would leave only the last.
    pub fn refuse_shared(&self, path: &std::path::Path, option: &str) -> Result<(), ConfigError> {
        let taken =
            self.out.as_deref() == Some(path) || self.exports.iter().any(|(_, p)| p == path);
        if taken {
            return Err(ConfigError::Output {
                path: path.to_path_buf(),
                why: format!("another output option names it too (--{option})"),
            });
        }
        Ok(())
    }

    /// Writes `bytes` to the `-o` file (whole or not at all) or stdout.
    pub fn emit(&self, bytes: &[u8]) -> anyhow::Result<()> {
        Ok(export::emit(bytes, self.out.as_deref())?)
    }

    /// Renders `result` in the chosen format and emits it, then writes each `--export-*` file
    /// (each whole or not at all).
    pub fn export<R: Render + ?Sized>(&self, result: &R) -> anyhow::Result<()> {
        self.emit(&export::export(result, self.format)?)?;
        for (format, path) in &self.exports {
            export::emit(&export::export(result, *format)?, Some(path))?;
        }
        Ok(())
    }
}

/// Checks, before anything is measured, that a file can be written at `path`: in an existing
/// directory, and not something tscope never writes (a directory, block device, socket or
/// dangling link; see [`export::file::target`]).
pub fn check_output_file(path: &Path, option: &str) -> Result<(), ConfigError> {
    let fail = |why: String| ConfigError::Output {
        path: path.to_path_buf(),
        why: format!("{why} (--{option})"),
    };
    if path.as_os_str().is_empty() {
        return Err(fail("an empty path".into()));
    }
    export::file::target(path).map_err(fail)?;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !dir.is_dir() {
        return Err(fail(format!(
            "'{}' is not an existing directory; create it first",
            dir.display()
        )));
    }
    Ok(())
}

/// Checks, before anything is measured, that `dir` is a directory or can be created as one.
pub fn check_output_dir(dir: &Path, option: &str) -> Result<(), ConfigError> {
    if dir.exists() && !dir.is_dir() {
        return Err(ConfigError::Output {
            path: dir.to_path_buf(),
            why: format!("it exists and is not a directory (--{option})"),
        });
    }
    std::fs::create_dir_all(dir).map_err(|e| ConfigError::Output {
        path: dir.to_path_buf(),
        why: format!("cannot create the directory: {e} (--{option})"),
    })
}
