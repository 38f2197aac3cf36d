//! The recorded-run file: `tscope run --record FILE` writes a [`RunRecord`] (the measured rate
//! of a workload and the syscalls of one iteration), and `tscope simulate --run FILE` (or the
//! report, from a run it just made) replays it as a scenario whose base cost is the measured
//! cost per iteration minus what the stock Linux model charges for timestamps.
//!
//! One type serves the writer and the reader, so what is written is what is read. On load,
//! fields this build does not know are tolerated, and the informative fields the simulator
//! does not use (`mode`, `syscalls_per_iteration`, `partial`, `inodes`, `runs`) may be missing
//! or malformed. Not to be confused with `tscope record` ([`crate::trace::strace::record`]),
//! which writes an strace log of any command. The format is in docs/schema.md ("Recorded run").

use std::path::Path;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};

use super::iteration::{self, InodeInfo};
use super::result::{Op, RunReport};
use crate::trace::scenario::{
    check_kind, check_version, read_text, TraceError, DEFAULT_ITERATIONS,
};
use crate::trace::{FsKind, Scenario, SCENARIO_SCHEMA_VERSION};

/// The record kind (`"kind"`) this build writes and reads.
pub const RUN_RECORD_KIND: &str = "tscope-run-record";

/// Names the file in errors.
const WHAT: &str = "run record";

/// A recorded run: `{"schema_version":1,"kind":"tscope-run-record",...}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    pub schema_version: u32,
    pub kind: String,
    pub workload: String,
    /// The file system of the workload's files (`pipefs` for pipes, `none` without files).
    #[serde(default)]
    pub fs_type: Option<String>,
    /// Median total ops/s of the chosen run (the first with one task, else the first).
    pub ops_per_sec: f64,
    /// Its task count (1 when absent).
    #[serde(default)]
    pub tasks: Option<u32>,
    /// Its mode.
    #[serde(default, deserialize_with = "informative")]
    pub mode: String,
    /// One task's nanoseconds per iteration in that run (derived from `ops_per_sec` when
    /// absent or not positive).
    #[serde(default)]
    pub ns_per_iteration: Option<f64>,
    #[serde(default, deserialize_with = "informative")]
    pub syscalls_per_iteration: usize,
    /// `uname -r` of the machine it ran on.
    #[serde(default)]
    pub kernel_release: Option<String>,
    /// The run's `partial`: a stop signal cut it short.
    #[serde(default, rename = "partial", deserialize_with = "informative")]
    pub stopped: bool,
    #[serde(default, deserialize_with = "informative")]
    pub inodes: Vec<InodeInfo>,
    pub iteration: Vec<Op>,
    #[serde(default, deserialize_with = "informative")]
    pub runs: Vec<RunRate>,
}

/// The rate of one run of the report (one task count and mode).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRate {
    pub tasks: usize,
    pub mode: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement: Option<String>,
    /// `null` when the run took no sample.
    pub ops_per_sec: Option<f64>,
    pub ns_per_iteration: Option<f64>,
    #[serde(rename = "partial")]
    pub stopped: bool,
}

/// A field the simulator does not read: a value of the wrong shape reads as absent.
fn informative<'de, D: Deserializer<'de>, T: DeserializeOwned + Default>(
    d: D,
) -> Result<T, D::Error> {
    let v = serde_json::Value::deserialize(d)?;
    Ok(T::deserialize(v).unwrap_or_default())
}

impl RunRecord {
    /// The record of a finished run report.
    pub fn of(r: &RunReport) -> RunRecord {
        let fs = r.fs_type.clone().unwrap_or_else(|| "none".into());
        let chosen = r
            .runs
            .iter()
            .find(|x| x.tasks == 1)
            .or_else(|| r.runs.first());
        RunRecord {
            schema_version: 1,
            kind: RUN_RECORD_KIND.into(),
            workload: r.workload.as_str().into(),
            fs_type: Some(fs.clone()),
            // No sample: 0, which reading the record refuses ("a partial or empty run?").
            ops_per_sec: chosen.and_then(|x| x.ops_per_sec).map_or(0.0, |s| s.median),
            tasks: Some(chosen.map_or(0, |x| u32::try_from(x.tasks).unwrap_or(u32::MAX))),
            mode: chosen.map_or("processes", |x| x.mode.as_str()).into(),
            ns_per_iteration: chosen.and_then(|x| x.ns_per_iteration),
            syscalls_per_iteration: r.syscalls_per_iteration,
            kernel_release: r.machine.kernel_release.clone(),
            stopped: r.stopped,
            inodes: iteration::inodes(r.workload, &fs),
            iteration: r.iteration.clone(),
            runs: r
                .runs
                .iter()
                .map(|x| RunRate {
                    tasks: x.tasks,
                    mode: x.mode.as_str().into(),
                    placement: x.placement.map(|p| {
                        serde_json::to_value(p)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_string))
                            .unwrap_or_default()
                    }),
                    ops_per_sec: x.ops_per_sec.map(|s| s.median),
                    ns_per_iteration: x.ns_per_iteration,
                    stopped: x.stopped,
                })
                .collect(),
        }
    }

    /// Reads a run record written by `tscope run --record`.
    pub fn load(path: &Path) -> Result<RunRecord, TraceError> {
        let text = read_text(path, WHAT)?;
        RunRecord::from_json(&text, &path.display().to_string())
    }

    /// Parses and [validates](RunRecord::validate) a run record; `origin` names it in errors.
    pub fn from_json(text: &str, origin: &str) -> Result<RunRecord, TraceError> {
        check_kind(
            text,
            WHAT,
            origin,
            crate::input::Kind::RunRecord,
            "--run reads a run record (`tscope run WORKLOAD --record FILE`)",
        )?;
        check_version(text, WHAT, origin, 1)?;
        let record: RunRecord = serde_json::from_str(text).map_err(|e| TraceError::Parse {
            what: WHAT,
            path: origin.to_string(),
            cause: e,
        })?;
        record.validate(origin)?;
        Ok(record)
    }

    /// Whether the record can be simulated: its kind, a positive rate, a non-empty iteration.
    pub fn validate(&self, origin: &str) -> Result<(), TraceError> {
        let bad = |message: String| TraceError::Invalid {
            what: WHAT,
            path: origin.to_string(),
            message,
        };
        if self.kind != RUN_RECORD_KIND {
            return Err(bad(format!(
                "kind is '{}', expected '{RUN_RECORD_KIND}'",
                self.kind
            )));
        }
        // 1e12 ops/s: a thousand times any syscall loop; past it the figure is not a rate.
        if !(self.ops_per_sec.is_finite() && self.ops_per_sec > 0.0 && self.ops_per_sec <= 1e12) {
            return Err(bad(format!(
                "ops_per_sec must be positive and at most 1e12, got {} (a partial or empty run?)",
                crate::fmt::num(self.ops_per_sec)
            )));
        }
        if let Some(ns) = self.ns_per_iteration {
            // Not positive means "derive it from ops_per_sec" (the contract); not finite or
            // absurd is an error.
            if !(ns.is_finite() && ns <= 1e12) {
                return Err(bad(format!(
                    "ns_per_iteration must be a finite number of at most 1e12, got {}",
                    crate::fmt::num(ns)
                )));
            }
        }
        if self.iteration.is_empty() {
            return Err(bad("iteration is empty".into()));
        }
        let too_big = |t: &usize| u32::try_from(*t).is_err();
        if let Some(t) = self.iteration.iter().filter_map(|op| op.task).find(too_big) {
            return Err(bad(format!(
                "task {t} of an iteration entry is out of range"
            )));
        }
        Ok(())
    }

    /// The loop as a scenario (without a base cost: that is derived from `ops_per_sec`), and
    /// the syscall names no model knows, with counts (they cost no timestamp work).
    fn convert(&self) -> (Scenario, Vec<(String, usize)>) {
        let default_fs = self
            .fs_type
            .as_deref()
            .and_then(FsKind::parse)
            .unwrap_or(FsKind::Other);
        let (iteration, unknown) = super::def::scenario_ops(&self.iteration, default_fs);
        let scenario = Scenario {
            schema_version: SCENARIO_SCHEMA_VERSION,
            name: format!("run:{}", self.workload),
            description: format!("recorded run of {}", self.workload),
            mimics: None,
            tasks: self.tasks.unwrap_or(1).max(1),
            // A long recorded loop is replayed fewer times by default (linear cost).
            iterations: crate::trace::scenario::bounded_iterations(
                DEFAULT_ITERATIONS,
                iteration.len(),
            ),
            base_ns_per_iteration: None,
            base_source: None,
            published: None,
            iteration,
        };
        (scenario, unknown)
    }

    /// The recorded loop as a scenario to replay.
    pub fn scenario(&self) -> Scenario {
        self.convert().0
    }

    /// Syscall names no model knows, with counts (they cost no timestamp work).
    pub fn unknown_syscalls(&self) -> Vec<(String, usize)> {
        self.convert().1
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
        let tasks = self.tasks.unwrap_or(1).max(1);
        self.ns_per_iteration
            .filter(|n| n.is_finite() && *n > 0.0)
            .unwrap_or(tasks as f64 * 1e9 / self.ops_per_sec)
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
        assert_eq!(r.scenario().tasks, 2);
        assert!(!r.multigrain_kernel());
        assert_eq!(r.measured_ns_per_iteration(), 1000.0);
        assert_eq!(r.scenario().iteration[2].syscall, "other");
        assert_eq!(r.scenario().iteration[2].fs, "ext4");
        assert_eq!(r.unknown_syscalls(), vec![("ioctl".to_string(), 1)]);
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
        let scenario = r.scenario();
        let names: Vec<&str> = scenario
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
        assert_eq!(scenario.iteration[0].dir.as_deref(), Some("dir:0"));
        assert_eq!(r.measured_ns_per_iteration(), 22000.0);
        assert!(!r.multigrain_kernel());
        assert_eq!(r.unknown_syscalls(), vec![("getppid".to_string(), 1)]);
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

    #[test]
    fn writes_back_the_bytes_the_recorder_wrote() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/run-record-vfsmix-ext4.json"
        );
        let written = std::fs::read_to_string(path).unwrap();
        let r = RunRecord::from_json(&written, "r").unwrap();
        assert_eq!(r.runs.len(), 1);
        let again = crate::export::json(&r).unwrap();
        assert_eq!(String::from_utf8(again).unwrap(), written);
    }

    #[test]
    fn informative_fields_may_be_missing_or_malformed() {
        let r = RunRecord::from_json(
            r#"{"schema_version":1,"kind":"tscope-run-record","workload":"pipe1",
            "ops_per_sec":1000.0,"mode":5,"partial":"no","inodes":{},"runs":null,
            "syscalls_per_iteration":-1,"tasks":null,"ns_per_iteration":null,
            "iteration":[{"syscall":"write"}]}"#,
            "r",
        )
        .unwrap();
        assert_eq!((r.mode.as_str(), r.stopped, r.runs.len()), ("", false, 0));
        assert_eq!(r.measured_ns_per_iteration(), 1e6);
        let e = RunRecord::from_json(
            r#"{"schema_version":1,"kind":"tscope-run-record","workload":"pipe1",
            "ops_per_sec":1000.0,"iteration":[{"syscall":"write","task":4294967296}]}"#,
            "r",
        )
        .unwrap_err();
        assert!(e.to_string().contains("out of range"), "{e}");
    }
}
