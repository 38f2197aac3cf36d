//! The running kernel's count of journal commits, read on this machine beside the multigrain
//! counters ([`super::multigrain`]): what decides whether the question made an fsync commit.
//!
//! Each commit fires a static tracepoint: ext4's journal `jbd2_start_commit`
//! (fs/jbd2/commit.c `jbd2_journal_commit_transaction`), xfs's `xlog_iclog_write` (fs/xfs/
//! xfs_log.c `xlog_write_iclog`: one in-core log buffer written, one per commit of a small
//! transaction). The count is taken in a tracefs instance of tscope's own
//! (`/sys/kernel/tracing/instances/tscope-journal-PID`), so the machine's own tracing is left
//! alone: the events are enabled there, never read, and each CPU buffer's `entries` plus
//! `overrun` in `per_cpu/cpuN/stats` is how many fired. The instance is removed when the
//! counter is dropped. Static tracepoints need no kprobe and no function filter.
//!
//! Like the multigrain counters, the count is the machine's: every filesystem's commits land in
//! it, so a pair reads its background rate over idle windows and takes it out.

use std::path::{Path, PathBuf};

/// Where tracefs is mounted.
const TRACING: &str = "/sys/kernel/tracing";

/// The events counted: one fires per commit of its filesystem's journal.
pub const EVENTS: [&str; 2] = ["jbd2/jbd2_start_commit", "xfs/xlog_iclog_write"];

/// The counter's name in a pair's `kernel_counts`.
pub const COUNTER: &str = "journal_commits";

/// Bytes read from one CPU's `stats` file at most (a dozen short lines).
const STATS_LIMIT: u64 = 4096;

/// A tracefs instance counting [`EVENTS`]; removed on drop.
#[derive(Debug)]
pub struct Journal {
    dir: PathBuf,
    /// The events it could enable (a filesystem whose module is not loaded has none).
    pub events: Vec<&'static str>,
}

impl Journal {
    /// A fresh instance with every event of [`EVENTS`] this kernel has enabled; `Err` says why
    /// there is none (tracefs not mounted, not root, no such event).
    pub fn open() -> Result<Journal, String> {
        let root = Path::new(TRACING);
        if !root.join("instances").is_dir() {
            return Err(format!(
                "no {TRACING}/instances (tracefs not mounted, or not root)"
            ));
        }
        let dir = root
            .join("instances")
            .join(format!("tscope-journal-{}", std::process::id()));
        // A leftover of this PID's earlier counter (a reused PID) is replaced.
        let _ = std::fs::remove_dir(&dir);
        std::fs::create_dir(&dir)
            .map_err(|e| format!("creating the tracefs instance {}: {e}", dir.display()))?;
        let mut j = Journal {
            dir,
            events: Vec::new(),
        };
        for e in EVENTS {
            if std::fs::write(j.dir.join("events").join(e).join("enable"), "1").is_ok() {
                j.events.push(e);
            }
        }
        if j.events.is_empty() {
            return Err(format!(
                "none of the journal tracepoints ({}) could be enabled",
                EVENTS.join(", ")
            ));
        }
        Ok(j)
    }

    /// Commits counted since the instance was made.
    pub fn read(&self) -> Result<u64, String> {
        let cpus = std::fs::read_dir(self.dir.join("per_cpu"))
            .map_err(|e| format!("{}/per_cpu: {e}", self.dir.display()))?;
        let mut total = 0;
        for cpu in cpus.flatten() {
            let text = read_bounded(&cpu.path().join("stats"))?;
            total += parse_stats(&text)?;
        }
        Ok(total)
    }
}

impl Drop for Journal {
    fn drop(&mut self) {
        for e in &self.events {
            let _ = std::fs::write(self.dir.join("events").join(e).join("enable"), "0");
        }
        let _ = std::fs::remove_dir(&self.dir);
    }
}

fn read_bounded(path: &Path) -> Result<String, String> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(STATS_LIMIT).read_to_string(&mut text))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(text)
}

/// Events one CPU's buffer took: its `entries` (still in the buffer) plus its `overrun`
/// (written over when the buffer was full).
pub fn parse_stats(text: &str) -> Result<u64, String> {
    let field = |name: &str| -> Result<u64, String> {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .ok_or_else(|| format!("no '{name}' line in a tracefs stats file"))?
            .trim()
            .parse::<u64>()
            .map_err(|e| format!("'{name}' in a tracefs stats file: {e}"))
    };
    Ok(field("entries:")? + field("overrun:")?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cpu_buffer_counts_its_entries_and_what_it_wrote_over() {
        let text = "entries: 24\noverrun: 3\ncommit overrun: 0\nbytes: 1200\n\
                    oldest event ts: 11386.624218\nnow ts: 11394.186419\ndropped events: 0\n\
                    read events: 0\n";
        assert_eq!(parse_stats(text), Ok(27));
        // "commit overrun:" is not "overrun:".
        assert!(parse_stats("entries: 1\ncommit overrun: 2\n").is_err());
        assert!(parse_stats("entries: x\noverrun: 0\n").is_err());
    }
}
