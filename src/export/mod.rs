//! Printing: every result model has exporters to an aligned table, Markdown and JSON. Nothing
//! here measures.

mod compare;
mod detect;
mod document;
pub(crate) mod probe;
pub mod svg;
pub mod table;

use std::io::Write;
use std::path::Path;

use anyhow::Context;
use serde::Serialize;

pub use compare::CompareReport;
pub use detect::DetectReport;
pub use document::ReportDocument;
pub use probe::ProbeReport;

/// An output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Table,
    Markdown,
    Json,
    Csv,
}

/// One CSV record (RFC 4180 quoting) with a trailing newline.
pub fn csv_line<S: AsRef<str>>(cells: &[S]) -> String {
    let quoted: Vec<String> = cells
        .iter()
        .map(|c| {
            let c = c.as_ref();
            if c.contains([',', '"', '\n', '\r']) {
                format!("\"{}\"", c.replace('"', "\"\""))
            } else {
                c.to_string()
            }
        })
        .collect();
    quoted.join(",") + "\n"
}

/// Turns a result into bytes in one format.
pub trait Exporter {
    fn export(&self, format: Format) -> anyhow::Result<Vec<u8>>;
}

/// Pretty JSON with a trailing newline.
pub fn json<T: Serialize>(v: &T) -> anyhow::Result<Vec<u8>> {
    let mut out = serde_json::to_vec_pretty(v).context("serialising JSON")?;
    out.push(b'\n');
    Ok(out)
}

/// Writes `bytes` to `out` (whole or not at all: a temporary file in the same directory, then a
/// rename) or to stdout. A closed stdout (`tscope probe | head`) is not an error.
pub fn emit(bytes: &[u8], out: Option<&Path>) -> anyhow::Result<()> {
    match out {
        Some(path) => write_atomically(path, bytes),
        None => {
            let mut stdout = std::io::stdout().lock();
            match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
                r => r.context("writing to stdout"),
            }
        }
    }
}

fn write_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tscope-{}.tmp", std::process::id()));
    let result = std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, path));
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(crate::error::FileError::Write {
            path: path.to_path_buf(),
            source: e,
        }
        .into());
    }
    Ok(())
}
