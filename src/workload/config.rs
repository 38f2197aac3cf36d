//! What `tscope run` runs: the validated [`RunConfig`] and its defaults. `commands::run`
//! builds one from the command line (every check happens there, so the runner and the
//! workloads never see an absurd value); `report` and `simulate --validate` start from
//! [`RunConfig::new`] and set the few fields they change.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::ConfigError;

use super::name::WorkloadName;
use super::result::{MemOp, Mode, Placement};

/// The most tasks (or mem threads) one run may start.
pub const MAX_TASKS: u64 = 1024;

/// mem's settings.
#[derive(Debug, Clone)]
pub struct MemConfig {
    pub op: MemOp,
    pub size: u64,
    pub block: u64,
    pub threads: Vec<usize>,
}

/// A validated `tscope run` command line.
#[derive(Debug, Clone)]
pub struct RunConfig {
    pub workload: WorkloadName,
    pub tasks: Vec<usize>,
    pub modes: Vec<Mode>,
    /// pingpong: placements to run (`None`: unpinned); other workloads: `[None]`.
    pub placements: Vec<Option<Placement>>,
    pub duration: Duration,
    pub warmup: Duration,
    pub interval: Duration,
    pub pin: bool,
    pub dir: PathBuf,
    pub mem: MemConfig,
    /// pagezero: the cold buffer.
    pub cold_bytes: u64,
    /// The CPUs tasks are pinned to, in order.
    pub cpus: Vec<usize>,
}

impl RunConfig {
    /// `workload` with the command line's defaults: tasks 1 and one per allowed CPU (pingpong:
    /// one pair, on the same CPU and on different CPUs), processes, pinned, 5 s of 1 s samples
    /// after one interval of warm-up, the scratch directory in the system temp dir, mem 1 GiB
    /// in 1 KiB blocks on one thread, pagezero 256 MiB cold.
    pub fn new(workload: WorkloadName) -> Self {
        let cpus = crate::sys::cpu::allowed_cpus()
            .ok()
            .filter(|c| !c.is_empty())
            .unwrap_or_else(|| vec![0]);
        let ncpu = cpus.len();
        let tasks = if workload == WorkloadName::Pingpong || ncpu < 2 {
            vec![1]
        } else {
            vec![1, ncpu]
        };
        let placements = match (workload, ncpu) {
            (WorkloadName::Pingpong, 1) => vec![Some(Placement::SameCpu)],
            (WorkloadName::Pingpong, _) => {
                vec![Some(Placement::SameCpu), Some(Placement::DifferentCpus)]
            }
            _ => vec![None],
        };
        let interval = Duration::from_secs(1);
        RunConfig {
            workload,
            tasks,
            modes: vec![Mode::Processes],
            placements,
            duration: Duration::from_secs(5),
            warmup: interval,
            interval,
            pin: true,
            dir: std::env::temp_dir(),
            mem: MemConfig {
                op: MemOp::Wr,
                size: 1 << 30,
                block: 1024,
                threads: vec![1],
            },
            cold_bytes: 256 << 20,
            cpus,
        }
    }

    /// Sets the sampling: `duration` of `interval` samples after `warmup`.
    pub fn timed(mut self, duration: Duration, warmup: Duration, interval: Duration) -> Self {
        self.duration = duration;
        self.warmup = warmup;
        self.interval = interval;
        self
    }
}

/// The error for a scratch parent that is not an existing directory: it names `--dir` when
/// the user gave one (`given`), else `TMPDIR`, where the default came from.
pub fn bad_dir(dir: &Path, given: bool) -> ConfigError {
    if given {
        return ConfigError::BadDir(dir.to_path_buf());
    }
    ConfigError::Invalid(format!(
        "the scratch directory defaults to {}, which is not an existing directory; set TMPDIR \
         to one (or unset it for /tmp), or pass --dir",
        default_dir_origin(dir)
    ))
}

/// Where the default scratch parent `dir` came from, for messages.
pub fn default_dir_origin(dir: &Path) -> String {
    match std::env::var_os("TMPDIR").filter(|v| !v.is_empty()) {
        Some(_) => format!("TMPDIR '{}'", dir.display()),
        None => format!("'{}' (TMPDIR is not set)", dir.display()),
    }
}

/// The default scratch parent: `TMPDIR`, or `/tmp` where it is unset. A `TMPDIR` that is set
/// but empty, or relative, is refused with its own message: either would put scratch in
/// whatever the current directory is (tscope never does), and neither is "not set".
pub fn default_dir() -> Result<PathBuf, ConfigError> {
    let Some(v) = std::env::var_os("TMPDIR") else {
        return Ok(PathBuf::from("/tmp"));
    };
    let dir = PathBuf::from(&v);
    if v.is_empty() {
        return Err(ConfigError::Invalid(
            "TMPDIR is set but empty; tscope puts its scratch directory in TMPDIR, never in \
             the current directory: set TMPDIR to an absolute directory (or unset it for /tmp), \
             or pass --dir"
                .into(),
        ));
    }
    if dir.is_relative() {
        return Err(ConfigError::Invalid(format!(
            "TMPDIR '{}' is a relative path, which would put the scratch directory under the \
             current directory; tscope takes only an absolute TMPDIR: set it to an absolute \
             directory (or unset it for /tmp), or pass --dir",
            crate::fmt::safe::cell(&dir.to_string_lossy())
        )));
    }
    Ok(dir)
}

/// Parses `16g`, `1k`, `512M`, `4096`, `2GiB` (suffixes are powers of 1024).
pub fn parse_size(name: &'static str, s: &str) -> Result<u64, ConfigError> {
    let bad = || ConfigError::BadSize {
        name,
        value: s.to_string(),
    };
    let t = s.trim().to_ascii_lowercase();
    let t = t
        .strip_suffix("ib")
        .or_else(|| t.strip_suffix('b'))
        .unwrap_or(&t);
    let (digits, shift) = match t.chars().last() {
        Some('k') => (&t[..t.len() - 1], 10),
        Some('m') => (&t[..t.len() - 1], 20),
        Some('g') => (&t[..t.len() - 1], 30),
        Some('t') => (&t[..t.len() - 1], 40),
        _ => (t, 0),
    };
    let n: u64 = digits.trim().parse().map_err(|_| bad())?;
    n.checked_mul(1u64 << shift).ok_or_else(bad)
}

/// `MemAvailable` from `/proc/meminfo`, in bytes.
pub fn mem_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
