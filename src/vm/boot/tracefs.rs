//! The guest's tracefs, for every room that traces (`vm count`'s kprobes and offsets, `vm
//! bench`'s read counts and read times): where it is mounted and how its control files are
//! written. Each write is one `write(2)` of the whole text, as `echo` does.

use std::io::Write;

use crate::error::{Context, Result};

/// Where the guest mounts tracefs.
pub(crate) const TRACING: &str = "/sys/kernel/tracing";

/// Writes `text` to the control file `TRACING/file` (a write that replaces: `trace`,
/// `tracing_on`, `buffer_size_kb`, an event's `enable`).
pub(crate) fn write(file: &str, text: &str) -> Result<()> {
    let path = format!("{TRACING}/{file}");
    std::fs::write(&path, text).with_context(|| format!("writing '{}' to {path}", text.trim()))
}

/// Appends `line` and a newline to the control file at `path` (`kprobe_events`: each line adds
/// a probe, where a plain write would remove the others).
pub(crate) fn append(path: &str, line: &str) -> Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .with_context(|| format!("opening {path}"))?;
    f.write_all(format!("{line}\n").as_bytes())
        .with_context(|| format!("writing '{line}' to {path}"))
}
