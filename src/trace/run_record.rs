//! Recorded runs of `tscope run --record FILE`: the measured throughput of a workload and the
//! syscalls of one iteration. `simulate --run FILE` turns one into a scenario whose base cost is
//! the measured cost per iteration minus what the stock Linux model charges for timestamps.
//!
//! Fields this build does not know are tolerated (the record belongs to the workload module).

use std::path::Path;

use serde::Deserialize;

use super::scenario::{check_version, read_text, Scenario, ScenarioOp, TraceError};
use super::{FsKind, Syscall, SCENARIO_SCHEMA_VERSION};

/// The record kind this reader accepts.
pub const RUN_RECORD_KIND: &str = "tscope-run-record";

#[derive(Debug, Clone, Deserialize)]
struct RawRecord {
    kind: String,
    workload: String,
    #[serde(default)]
    fs_type: Option<String>,
    ops_per_sec: f64,
    #[serde(default)]
    tasks: Option<u32>,
    /// One task's ns per iteration, when the recorder gives it.
    #[serde(default)]
    ns_per_iteration: Option<f64>,
    #[serde(default)]
    kernel_release: Option<String>,
    iteration: Vec<RawOp>,
}

#[derive(Debug, Clone, Deserialize)]
struct RawOp {
    syscall: String,
    #[serde(default)]
    inode: Option<String>,
    #[serde(default)]
    fs: Option<String>,
    #[serde(default)]
    dir: Option<String>,
    /// `O_CREAT|O_EXCL`, `O_TRUNC`: what an `open` does to timestamps.
    #[serde(default)]
    flags: Option<String>,
    #[serde(default)]
    task: Option<u32>,
}

/// A run record, ready to be simulated.
#[derive(Debug, Clone)]
pub struct RunRecord {
    /// The loop as a scenario (without a base cost: that is derived from `ops_per_sec`).
    pub scenario: Scenario,
    /// Measured throughput over all tasks.
    pub ops_per_sec: f64,
    /// One task's measured ns per iteration, when recorded.
    pub ns_per_iteration: Option<f64>,
    /// `uname -r` of the machine it ran on, when recorded.
    pub kernel_release: Option<String>,
    /// Syscall names no model knows, with counts (they cost no timestamp work).
    pub unknown_syscalls: Vec<(String, usize)>,
}

impl RunRecord {
    /// Reads a run record written by `tscope run --record`.
    pub fn load(path: &Path) -> Result<RunRecord, TraceError> {
        let text = read_text(path, "run record")?;
        RunRecord::from_json(&text, &path.display().to_string())
    }

    pub fn from_json(text: &str, origin: &str) -> Result<RunRecord, TraceError> {
        const WHAT: &str = "run record";
        check_version(text, WHAT, origin, 1)?;
        let raw: RawRecord = serde_json::from_str(text).map_err(|e| TraceError::Parse {
            what: WHAT,
            path: origin.to_string(),
            cause: e,
        })?;
        let bad = |message: String| TraceError::Invalid {
            what: WHAT,
            path: origin.to_string(),
            message,
        };
        if raw.kind != RUN_RECORD_KIND {
            return Err(bad(format!(
                "kind is '{}', expected '{RUN_RECORD_KIND}'",
                raw.kind
            )));
        }
        if !(raw.ops_per_sec.is_finite() && raw.ops_per_sec > 0.0) {
            return Err(bad(format!(
                "ops_per_sec must be positive, got {} (a partial or empty run?)",
                raw.ops_per_sec
            )));
        }
        let ns_per_iteration = raw.ns_per_iteration.filter(|n| n.is_finite() && *n > 0.0);
        if raw.iteration.is_empty() {
            return Err(bad("iteration is empty".into()));
        }
        let default_fs = raw
            .fs_type
            .as_deref()
            .and_then(FsKind::parse)
            .unwrap_or(FsKind::Other);
        let mut unknown: Vec<(String, usize)> = Vec::new();
        let iteration = raw
            .iteration
            .iter()
            .map(|op| {
                let syscall = match Syscall::parse(&op.syscall) {
                    Some(s) => s.refine_open(op.flags.as_deref()),
                    None => {
                        match unknown.iter_mut().find(|(n, _)| *n == op.syscall) {
                            Some((_, c)) => *c += 1,
                            None => unknown.push((op.syscall.clone(), 1)),
                        }
                        Syscall::Other
                    }
                };
                let fs = op
                    .fs
                    .as_deref()
                    .and_then(FsKind::parse)
                    .unwrap_or(default_fs);
                ScenarioOp {
                    syscall: syscall.name().to_string(),
                    inode: op.inode.clone().unwrap_or_else(|| "none".into()),
                    fs: fs.name().to_string(),
                    dir: op.dir.clone(),
                    task: op.task.unwrap_or(0),
                }
            })
            .collect();
        unknown.sort();
        let scenario = Scenario {
            schema_version: SCENARIO_SCHEMA_VERSION,
            name: format!("run:{}", raw.workload),
            description: format!("recorded run of {}", raw.workload),
            mimics: None,
            tasks: raw.tasks.unwrap_or(1).max(1),
            iterations: super::scenario::DEFAULT_ITERATIONS,
            base_ns_per_iteration: None,
            base_source: None,
            published: None,
            iteration,
        };
        Ok(RunRecord {
            scenario,
            ops_per_sec: raw.ops_per_sec,
            ns_per_iteration,
            kernel_release: raw.kernel_release,
            unknown_syscalls: unknown,
        })
    }

    /// Whether it ran on a Linux with multigrain timestamps (≥ 6.13); `false` when unknown.
    pub fn multigrain_kernel(&self) -> bool {
        let Some(r) = &self.kernel_release else {
            return false;
        };
        let mut parts = r.split(|c: char| !c.is_ascii_digit());
        let major: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        let minor: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        (major, minor) >= (6, 13)
    }

    /// Measured ns per iteration of one task: as recorded, else `tasks × 1e9 / ops_per_sec`.
    pub fn measured_ns_per_iteration(&self) -> f64 {
        self.ns_per_iteration
            .unwrap_or(self.scenario.tasks as f64 * 1e9 / self.ops_per_sec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tolerates_extra_fields_and_maps_names() {
        let r = RunRecord::from_json(
            r#"{"schema_version":1,"kind":"tscope-run-record","workload":"pipe1",
            "fs_type":"ext4","ops_per_sec":2000000.0,"tasks":2,"extra":{"a":1},
            "iteration":[{"syscall":"write","inode":"pipe:0","fs":"pipefs","x":1},
                         {"syscall":"read","inode":"pipe:0","fs":"pipefs"},
                         {"syscall":"ioctl","inode":"pipe:0"}]}"#,
            "r",
        )
        .unwrap();
        assert_eq!(r.scenario.tasks, 2);
        assert!(!r.multigrain_kernel());
        assert_eq!(r.measured_ns_per_iteration(), 1000.0);
        assert_eq!(r.scenario.iteration[2].syscall, "other");
        assert_eq!(r.scenario.iteration[2].fs, "ext4");
        assert_eq!(r.unknown_syscalls, vec![("ioctl".to_string(), 1)]);
    }

    #[test]
    fn reads_the_workload_recorders_vfsmix() {
        let r = RunRecord::from_json(
            r#"{"schema_version":1,"kind":"tscope-run-record","workload":"vfsmix",
            "fs_type":"tmpfs","ops_per_sec":45000.0,"tasks":1,"mode":"processes",
            "kernel_release":"6.1.0-18-amd64",
            "ns_per_iteration":22000.0,"inodes":[],"runs":[],
            "iteration":[
              {"syscall":"open","nr":"openat","inode":"file:0","fs":"tmpfs","dir":"dir:0",
               "flags":"O_RDWR|O_CREAT|O_EXCL"},
              {"syscall":"lstat","nr":"newfstatat","inode":"file:0","fs":"tmpfs"},
              {"syscall":"open","nr":"openat","inode":"file:0","fs":"tmpfs",
               "flags":"O_RDWR|O_CREAT|O_TRUNC"},
              {"syscall":"page_fault","nr":"page_fault","inode":"file:0","fs":"tmpfs"},
              {"syscall":"unlink","nr":"unlink","inode":"file:0","fs":"tmpfs","dir":"dir:0"},
              {"syscall":"getppid","nr":"getppid"}]}"#,
            "r",
        )
        .unwrap();
        let names: Vec<&str> = r
            .scenario
            .iteration
            .iter()
            .map(|o| o.syscall.as_str())
            .collect();
        assert_eq!(
            names,
            [
                "create",
                "stat",
                "open_trunc",
                "mmap_store",
                "unlink",
                "other"
            ]
        );
        assert_eq!(r.scenario.iteration[0].dir.as_deref(), Some("dir:0"));
        assert_eq!(r.measured_ns_per_iteration(), 22000.0);
        assert!(!r.multigrain_kernel());
        assert_eq!(r.unknown_syscalls, vec![("getppid".to_string(), 1)]);
    }

    #[test]
    fn refuses_other_kinds() {
        let e = RunRecord::from_json(
            r#"{"schema_version":1,"kind":"profile","workload":"x","ops_per_sec":1,"iteration":[]}"#,
            "r",
        )
        .unwrap_err();
        assert!(e.to_string().contains("kind"), "{e}");
    }
}
