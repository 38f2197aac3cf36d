//! Scenario files: a loop of syscalls per iteration, how many independent tasks run it, and
//! what it mimics. JSON with a `schema_version`; unknown fields are refused so that a typo is an
//! error, not a silently ignored setting.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{FsKind, InodeId, Interner, Op, Syscall, NO_INODE};

/// The version of the scenario JSON this build reads and writes.
pub const SCENARIO_SCHEMA_VERSION: u32 = 1;

/// Iterations replayed when a scenario does not say.
pub const DEFAULT_ITERATIONS: u64 = 200_000;

/// Errors loading a scenario, a run record or a profile. Each names the file and what to do.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("cannot read {what} '{path}': {cause}")]
    Read {
        what: &'static str,
        path: String,
        cause: std::io::Error,
    },
    #[error("{what} '{path}' is not valid: {cause}")]
    Parse {
        what: &'static str,
        path: String,
        cause: serde_json::Error,
    },
    #[error(
        "{what} '{path}' has schema_version {found}, this tscope reads version {supported}; \
         regenerate it or use a matching tscope"
    )]
    Version {
        what: &'static str,
        path: String,
        found: u64,
        supported: u32,
    },
    #[error("{what} '{path}': {message}")]
    Invalid {
        what: &'static str,
        path: String,
        message: String,
    },
    /// A file refused before it is read (not a regular file, over the size limit) or that
    /// cannot be read ([`crate::input::read_document`]).
    #[error(transparent)]
    Input(crate::error::Error),
}

impl From<TraceError> for crate::error::Error {
    fn from(e: TraceError) -> Self {
        crate::error::Error::Other(Box::new(e))
    }
}

/// A scenario as written in JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub schema_version: u32,
    pub name: String,
    /// One sentence: what the scenario shows.
    pub description: String,
    /// The program or benchmark it mimics, with where its loop comes from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mimics: Option<String>,
    /// Independent copies of the loop (will-it-scale tasks), each with its own inodes.
    #[serde(default = "one")]
    pub tasks: u32,
    /// Iterations to replay (of one task).
    #[serde(default = "default_iterations")]
    pub iterations: u64,
    /// Cost of one iteration without any timestamp work, in ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_ns_per_iteration: Option<f64>,
    /// Where `base_ns_per_iteration` comes from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_source: Option<String>,
    /// A published stock/patched pair this scenario reproduces (the seed's NetBSD figures).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published: Option<Published>,
    /// The loop body.
    pub iteration: Vec<ScenarioOp>,
}

/// A published pair of throughputs, before and after a knob.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Published {
    pub stock_ops_per_sec: f64,
    pub patched_ops_per_sec: f64,
    /// The model whose stock policy the stock figure was measured under (e.g. `netbsd-knob`).
    pub model: String,
    /// The policy the patched figure corresponds to (e.g. `netbsd-knob:1`).
    pub patched_policy: String,
    pub source: String,
}

/// One operation of the loop body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioOp {
    pub syscall: String,
    /// The inode's identity within one task (`pipe`, `file`, `dir`).
    pub inode: String,
    pub fs: String,
    /// Parent directory of namespace operations; default: the root of `fs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dir: Option<String>,
    /// Which task of a cooperating group issues it (pingpong); default 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub task: u32,
}

fn one() -> u32 {
    1
}
fn default_iterations() -> u64 {
    DEFAULT_ITERATIONS
}
fn is_zero(v: &u32) -> bool {
    *v == 0
}

#[derive(Deserialize)]
struct VersionOnly {
    schema_version: Option<serde_json::Value>,
}

/// Checks that `text` is not another kind of document tscope writes than `wanted` (its
/// kind named, and what the reader takes: `reads`), before the version and the strict parse.
pub(crate) fn check_kind(
    text: &str,
    what: &'static str,
    path: &str,
    wanted: crate::input::Kind,
    reads: &str,
) -> Result<(), TraceError> {
    crate::input::expect_kind(text.as_bytes(), &[wanted], reads).map_err(|message| {
        TraceError::Invalid {
            what,
            path: path.to_string(),
            message,
        }
    })
}

/// Checks `schema_version` before the strict parse, so a newer file gets a version error rather
/// than an unknown-field error.
pub(crate) fn check_version(
    text: &str,
    what: &'static str,
    path: &str,
    supported: u32,
) -> Result<(), TraceError> {
    let v: VersionOnly = serde_json::from_str(text).map_err(|e| TraceError::Parse {
        what,
        path: path.to_string(),
        cause: e,
    })?;
    use crate::input::VersionError;
    let supported_u64 = u64::from(supported);
    match crate::input::schema_version(v.schema_version.as_ref(), supported_u64, supported_u64) {
        Ok(_) => Ok(()),
        Err(VersionError::Missing) => Err(TraceError::Invalid {
            what,
            path: path.to_string(),
            message: "missing field `schema_version`".into(),
        }),
        Err(VersionError::Unsupported(found)) => Err(TraceError::Version {
            what,
            path: path.to_string(),
            found,
            supported,
        }),
        Err(VersionError::NotANumber(other)) => Err(TraceError::Invalid {
            what,
            path: path.to_string(),
            message: format!("schema_version must be a non-negative integer, got {other}"),
        }),
    }
}

/// Reads a whole JSON document, bounded ([`crate::input::read_document`]), naming it in the
/// error.
pub(crate) fn read_text(path: &Path, what: &'static str) -> Result<String, TraceError> {
    let bytes = crate::input::read_document(path, what).map_err(TraceError::Input)?;
    String::from_utf8(bytes).map_err(|e| TraceError::Read {
        what,
        path: path.display().to_string(),
        cause: std::io::Error::new(std::io::ErrorKind::InvalidData, e.utf8_error()),
    })
}

impl Scenario {
    /// Parses scenario JSON; `origin` names it in errors (a path or `bundled:pipe1`).
    pub fn from_json(text: &str, origin: &str) -> Result<Scenario, TraceError> {
        check_version(text, "scenario", origin, SCENARIO_SCHEMA_VERSION)?;
        let s: Scenario = serde_json::from_str(text).map_err(|e| TraceError::Parse {
            what: "scenario",
            path: origin.to_string(),
            cause: e,
        })?;
        s.validate(origin)?;
        Ok(s)
    }

    /// Reads and parses a scenario file.
    pub fn load(path: &Path) -> Result<Scenario, TraceError> {
        let text = read_text(path, "scenario")?;
        Scenario::from_json(&text, &path.display().to_string())
    }

    fn validate(&self, origin: &str) -> Result<(), TraceError> {
        let bad = |message: String| TraceError::Invalid {
            what: "scenario",
            path: origin.to_string(),
            message,
        };
        if self.iteration.is_empty() {
            return Err(bad(
                "`iteration` is empty: list the syscalls of one loop".into()
            ));
        }
        if !(1..=1_000_000).contains(&self.tasks) {
            return Err(bad(format!(
                "`tasks` must be 1..=1000000, got {}",
                self.tasks
            )));
        }
        if !(1..=10_000_000_000).contains(&self.iterations) {
            return Err(bad(format!(
                "`iterations` must be 1..=10000000000, got {}",
                self.iterations
            )));
        }
        if let Some(b) = self.base_ns_per_iteration {
            if !(b.is_finite() && (0.0..=1e12).contains(&b)) {
                return Err(bad(format!(
                    "`base_ns_per_iteration` must be a finite number of ns in 0..=1e12, got {}",
                    crate::fmt::num(b)
                )));
            }
        }
        if let Some(p) = &self.published {
            for (k, v) in [
                ("stock_ops_per_sec", p.stock_ops_per_sec),
                ("patched_ops_per_sec", p.patched_ops_per_sec),
            ] {
                if !(v.is_finite() && v > 0.0) {
                    return Err(bad(format!(
                        "`published.{k}` must be positive, got {}",
                        crate::fmt::num(v)
                    )));
                }
            }
        }
        let mut fs_of: Vec<(String, String)> = Vec::new();
        for (i, op) in self.iteration.iter().enumerate() {
            if Syscall::parse(&op.syscall).is_none() {
                return Err(bad(format!(
                    "iteration[{i}]: unknown syscall '{}'; known: {}",
                    op.syscall,
                    Syscall::ALL.map(Syscall::name).join(", ")
                )));
            }
            if FsKind::parse(&op.fs).is_none() {
                return Err(bad(format!(
                    "iteration[{i}]: unknown fs '{}'; known: {}",
                    op.fs,
                    FsKind::ALL.map(FsKind::name).join(", ")
                )));
            }
            if op.inode.is_empty() {
                return Err(bad(format!("iteration[{i}]: `inode` is empty")));
            }
            match fs_of.iter().find(|(n, _)| *n == op.inode) {
                Some((_, fs)) if *fs != op.fs => {
                    return Err(bad(format!(
                        "iteration[{i}]: inode '{}' is on '{}' here but on '{fs}' earlier",
                        op.inode, op.fs
                    )))
                }
                Some(_) => {}
                None => fs_of.push((op.inode.clone(), op.fs.clone())),
            }
        }
        Ok(())
    }

    /// Interns inode names and turns the loop into [`Op`]s.
    pub fn compile(&self) -> CompiledScenario {
        let mut interner = Interner::default();
        let mut ops = Vec::with_capacity(self.iteration.len());
        for op in &self.iteration {
            let syscall = Syscall::parse(&op.syscall).unwrap_or(Syscall::Other);
            let fs = FsKind::parse(&op.fs).unwrap_or(FsKind::Other);
            let (inode, fs) = interner.intern(&op.inode, fs);
            let dir = if needs_dir(syscall) {
                let name = op.dir.clone().unwrap_or_else(|| format!("{fs}:/"));
                interner.intern(&name, fs).0
            } else {
                NO_INODE
            };
            ops.push(Op {
                syscall,
                fs,
                inode,
                dir,
                task: op.task,
                time_ns: None,
                ends_iteration: false,
            });
        }
        if let Some(last) = ops.last_mut() {
            last.ends_iteration = true;
        }
        CompiledScenario {
            name: self.name.clone(),
            tasks: self.tasks,
            iterations: self.iterations,
            base_ns_per_iteration: self.base_ns_per_iteration,
            base_source: self.base_source.clone(),
            published: self.published.clone(),
            ops,
            inodes: interner.len(),
            op_weights: None,
            op_stamp_at: None,
            coarse_lag_ns: None,
        }
    }
}

/// Operations that also change their parent directory.
pub fn needs_dir(s: Syscall) -> bool {
    matches!(
        s,
        Syscall::Create
            | Syscall::Unlink
            | Syscall::Rename
            | Syscall::Mkdir
            | Syscall::Rmdir
            | Syscall::Link
    )
}

/// Ops per iteration up to which a default iteration count is used as is; longer loops are
/// replayed fewer times, so that a default replay costs at most `most × 20` ops and grows
/// linearly with the loop's length instead of with its product by `most`.
pub const FULL_LOOP_OPS: u64 = 20;

/// A default iteration count `most` bounded for a loop of `ops_per_iteration` ops: `most` for
/// loops of up to [`FULL_LOOP_OPS`] ops, else as many whole loops as fit in
/// `most × FULL_LOOP_OPS` ops (at least one).
pub fn bounded_iterations(most: u64, ops_per_iteration: usize) -> u64 {
    let per = (ops_per_iteration as u64).max(1);
    (most.saturating_mul(FULL_LOOP_OPS) / per).clamp(1, most.max(1))
}

/// A scenario ready to replay: one iteration of ops over dense inode ids.
#[derive(Debug, Clone)]
pub struct CompiledScenario {
    pub name: String,
    pub tasks: u32,
    pub iterations: u64,
    pub base_ns_per_iteration: Option<f64>,
    pub base_source: Option<String>,
    pub published: Option<Published>,
    /// One iteration; the last op has `ends_iteration`.
    pub ops: Vec<Op>,
    /// Number of distinct inodes (ids are `0..inodes`).
    pub inodes: usize,
    /// How the base cost of an iteration spreads over its ops, one relative weight per op of
    /// [`Self::ops`] (`vm count`: the guest's measured time of each syscall); `None`: evenly.
    pub op_weights: Option<Vec<f64>>,
    /// Where in each op (fractions of its share of the base cost, 0 = its start) its
    /// successive timestamps are taken (`vm count`: measured in the guest); `None`: at each
    /// op's start.
    pub op_stamp_at: Option<Vec<Vec<f64>>>,
    /// How far the Linux coarse clock's value lags the time (`vm count`: measured in the
    /// guest); `None`: not at all.
    pub coarse_lag_ns: Option<f64>,
}

impl CompiledScenario {
    /// The trace of `iterations` loops, generated lazily.
    pub fn stream(&self, iterations: u64) -> ScenarioOps<'_> {
        ScenarioOps {
            ops: &self.ops,
            next: 0,
            left: if self.ops.is_empty() { 0 } else { iterations },
        }
    }
}

/// Streams a scenario's loop `left` times without materialising the trace.
#[derive(Debug, Clone)]
pub struct ScenarioOps<'a> {
    ops: &'a [Op],
    next: usize,
    left: u64,
}

impl Iterator for ScenarioOps<'_> {
    type Item = Op;

    #[inline]
    fn next(&mut self) -> Option<Op> {
        if self.left == 0 {
            return None;
        }
        let op = self.ops[self.next];
        self.next += 1;
        if self.next == self.ops.len() {
            self.next = 0;
            self.left -= 1;
        }
        Some(op)
    }
}

/// The inode count a stream over `ops` needs.
pub fn inode_count(ops: &[Op]) -> usize {
    ops.iter()
        .flat_map(|o| [o.inode, o.dir])
        .filter(|&i| i != NO_INODE)
        .map(|i: InodeId| i as usize + 1)
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_replays_grow_linearly_with_the_loop() {
        assert_eq!(bounded_iterations(50_000, 11), 50_000);
        assert_eq!(bounded_iterations(50_000, 20), 50_000);
        assert_eq!(bounded_iterations(50_000, 2_000), 500);
        assert_eq!(bounded_iterations(50_000, 200_000), 5);
        assert_eq!(bounded_iterations(50_000, 2_000_000), 1);
        assert_eq!(bounded_iterations(50_000, 0), 50_000);
    }

    const PIPE1: &str = r#"{"schema_version":1,"name":"t","description":"d",
        "iteration":[{"syscall":"write","inode":"p","fs":"pipefs"},
                     {"syscall":"read","inode":"p","fs":"pipefs"}]}"#;

    #[test]
    fn compiles_and_streams() {
        let s = Scenario::from_json(PIPE1, "t").unwrap();
        let c = s.compile();
        assert_eq!(c.inodes, 1);
        let ops: Vec<Op> = c.stream(3).collect();
        assert_eq!(ops.len(), 6);
        assert_eq!(ops.iter().filter(|o| o.ends_iteration).count(), 3);
        assert_eq!(ops[1].syscall, Syscall::Read);
    }

    #[test]
    fn refuses_unknown_fields_and_versions() {
        let e = Scenario::from_json(&PIPE1.replace("\"name\"", "\"nmae\""), "x").unwrap_err();
        assert!(e.to_string().contains("unknown field `nmae`"), "{e}");
        assert!(e.to_string().contains("line"), "{e}");
        let e = Scenario::from_json(&PIPE1.replace(":1,", ":2,"), "x").unwrap_err();
        assert!(e.to_string().contains("schema_version 2"), "{e}");
        let e = Scenario::from_json(&PIPE1.replace("pipefs\"}", "zfs\"}"), "x").unwrap_err();
        assert!(e.to_string().contains("unknown fs 'zfs'"), "{e}");
    }

    #[test]
    fn creates_get_an_implicit_parent() {
        let s = Scenario::from_json(
            r#"{"schema_version":1,"name":"t","description":"d",
            "iteration":[{"syscall":"create","inode":"f","fs":"tmpfs"}]}"#,
            "t",
        )
        .unwrap();
        let c = s.compile();
        assert_eq!(c.inodes, 2);
        assert_eq!(c.ops[0].dir, 1);
        assert_eq!(inode_count(&c.ops), 2);
    }
}
