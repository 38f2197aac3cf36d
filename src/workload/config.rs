//! `RunArgs` → `RunConfig`: every check on the command line happens here, so the runner and
//! the workloads never see an absurd value.

use std::path::PathBuf;
use std::time::Duration;

use crate::cli::run::RunArgs;
use crate::export::Format;

use super::result::{MemOp, Mode, Placement, WorkloadName};

/// The most tasks (or mem threads) one run may start.
pub const MAX_TASKS: u64 = 1024;

/// A command line that cannot be run, with what to do instead.
#[derive(Debug, thiserror::Error)]
pub enum RunConfigError {
    #[error("--{name} must be {what}, got {value}")]
    OutOfRange {
        name: &'static str,
        what: String,
        value: String,
    },
    #[error("--{name} applies to {applies} only; {hint}")]
    NotApplicable {
        name: &'static str,
        applies: &'static str,
        hint: &'static str,
    },
    #[error("--{name}: cannot read '{value}' as a size; use a number with an optional k, m, g or t suffix (powers of 1024), e.g. 16g or 1k")]
    BadSize { name: &'static str, value: String },
    #[error("--dir '{0}' is not an existing directory; create it or pick another")]
    BadDir(PathBuf),
    #[error("--size {size} is more than the {available} bytes of memory available now (MemAvailable in /proc/meminfo); use a smaller --size")]
    TooBig { size: u64, available: u64 },
}

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
    pub record: Option<PathBuf>,
    pub mem: MemConfig,
    /// pagezero: the cold buffer.
    pub cold_bytes: u64,
    pub format: Format,
    pub out: Option<PathBuf>,
    /// The CPUs tasks are pinned to, in order.
    pub cpus: Vec<usize>,
}

fn range(name: &'static str, what: &str, value: impl ToString) -> RunConfigError {
    RunConfigError::OutOfRange {
        name,
        what: what.to_string(),
        value: value.to_string(),
    }
}

/// Parses `16g`, `1k`, `512M`, `4096`, `2GiB` (suffixes are powers of 1024).
pub fn parse_size(name: &'static str, s: &str) -> Result<u64, RunConfigError> {
    let bad = || RunConfigError::BadSize {
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

fn counts(name: &'static str, xs: &[u64]) -> Result<Vec<usize>, RunConfigError> {
    let mut out: Vec<usize> = Vec::new();
    for &x in xs {
        if x == 0 || x > MAX_TASKS {
            return Err(range(name, &format!("between 1 and {MAX_TASKS}"), x));
        }
        if !out.contains(&(x as usize)) {
            out.push(x as usize);
        }
    }
    Ok(out)
}

fn seconds(name: &'static str, v: f64, min: f64, max: f64) -> Result<Duration, RunConfigError> {
    if !(v.is_finite() && v >= min && v <= max) {
        return Err(range(
            name,
            &format!("a number of seconds from {min} to {max}"),
            v,
        ));
    }
    Ok(Duration::from_secs_f64(v))
}

impl TryFrom<&RunArgs> for RunConfig {
    type Error = RunConfigError;

    fn try_from(a: &RunArgs) -> Result<Self, RunConfigError> {
        let w = a.workload;
        let is_mem = w == WorkloadName::Mem;
        let runner = w.uses_runner();
        let not_for = |name, applies, hint| RunConfigError::NotApplicable {
            name,
            applies,
            hint,
        };
        if !is_mem {
            if a.op.is_some() {
                return Err(not_for("op", "mem", "drop it"));
            }
            if a.block.is_some() {
                return Err(not_for("block", "mem", "drop it"));
            }
            if !a.threads.is_empty() {
                return Err(not_for(
                    "threads",
                    "mem",
                    "for other workloads use --tasks N --mode threads",
                ));
            }
        }
        if !runner {
            if !a.tasks.is_empty() {
                return Err(not_for(
                    "tasks",
                    "the runner's workloads",
                    "mem takes --threads; pagezero runs on one CPU",
                ));
            }
            if a.record.is_some() {
                return Err(not_for(
                    "record",
                    "pipe1, pingpong, vfsmix, write-only, write-stat, getppid and sched_yield",
                    "mem and pagezero make no system calls per iteration",
                ));
            }
        }
        if a.size.is_some() && runner {
            return Err(not_for("size", "mem and pagezero", "drop it"));
        }
        if !a.placement.is_empty() && w != WorkloadName::Pingpong {
            return Err(not_for("placement", "pingpong", "drop it"));
        }

        let duration = seconds("duration", a.duration, 0.01, 86_400.0)?;
        if !(10..=60_000).contains(&a.interval_ms) {
            return Err(range("interval-ms", "from 10 to 60000", a.interval_ms));
        }
        let interval = Duration::from_millis(a.interval_ms);
        if duration < interval {
            return Err(range(
                "duration",
                &format!("at least one sample interval ({} ms)", a.interval_ms),
                a.duration,
            ));
        }
        let warmup = match a.warmup {
            Some(v) => seconds("warmup", v, 0.0, 3_600.0)?,
            None => interval,
        };

        let cpus = crate::sys::cpu::allowed_cpus()
            .ok()
            .filter(|c| !c.is_empty())
            .unwrap_or_else(|| vec![0]);
        let ncpu = cpus.len();
        let mut tasks = counts("tasks", &a.tasks)?;
        if tasks.is_empty() {
            tasks = if w == WorkloadName::Pingpong {
                vec![1]
            } else if ncpu > 1 {
                vec![1, ncpu]
            } else {
                vec![1]
            };
        }
        let mut modes: Vec<Mode> = Vec::new();
        for m in &a.mode {
            if !modes.contains(m) {
                modes.push(*m);
            }
        }
        let pin = !a.no_pin;
        if !a.placement.is_empty() && !pin {
            return Err(not_for(
                "placement",
                "pinned runs",
                "drop --no-pin, or --placement",
            ));
        }
        if a.placement.contains(&Placement::DifferentCpus) && ncpu < 2 {
            return Err(range(
                "placement",
                "same on a machine where this process may use one CPU",
                "different",
            ));
        }
        let placements = if w != WorkloadName::Pingpong || !pin {
            vec![None]
        } else if a.placement.is_empty() {
            if ncpu > 1 {
                vec![Some(Placement::SameCpu), Some(Placement::DifferentCpus)]
            } else {
                vec![Some(Placement::SameCpu)]
            }
        } else {
            let mut p: Vec<Option<Placement>> = Vec::new();
            for x in &a.placement {
                if !p.contains(&Some(*x)) {
                    p.push(Some(*x));
                }
            }
            p
        };

        let dir = a.dir.clone().unwrap_or_else(std::env::temp_dir);
        if w.uses_dir() && !dir.is_dir() {
            return Err(RunConfigError::BadDir(dir));
        }

        let available = mem_available();
        let too_big = |size: u64| match available {
            Some(avail) if size > avail => Err(RunConfigError::TooBig {
                size,
                available: avail,
            }),
            _ => Ok(()),
        };
        let mut mem = MemConfig {
            op: a.op.unwrap_or(MemOp::Wr),
            size: 1 << 30,
            block: 1024,
            threads: vec![1],
        };
        let mut cold_bytes = 256 << 20;
        if is_mem {
            if let Some(s) = &a.size {
                mem.size = parse_size("size", s)?;
            }
            if let Some(b) = &a.block {
                mem.block = parse_size("block", b)?;
            }
            if !a.threads.is_empty() {
                mem.threads = counts("threads", &a.threads)?;
            }
            let most = *mem.threads.iter().max().unwrap_or(&1) as u64;
            if mem.block == 0 || mem.block > 1 << 30 {
                return Err(range("block", "from 1 byte to 1g", mem.block));
            }
            let share = mem.size / most;
            let need = if mem.op == MemOp::Rw { 2 } else { 1 } * mem.block.max(4096);
            if share < need {
                return Err(range(
                    "size",
                    &format!(
                        "at least {need} bytes per thread with --block {} and {most} threads",
                        mem.block
                    ),
                    mem.size,
                ));
            }
            too_big(mem.size)?;
        }
        if w == WorkloadName::Pagezero {
            if let Some(s) = &a.size {
                cold_bytes = parse_size("size", s)?;
            }
            if !(1 << 20..=1 << 40).contains(&cold_bytes) {
                return Err(range("size", "from 1m to 1t", cold_bytes));
            }
            too_big(cold_bytes)?;
        }

        Ok(RunConfig {
            workload: w,
            tasks,
            modes,
            placements,
            duration,
            warmup,
            interval,
            pin,
            dir,
            record: a.record.clone(),
            mem,
            cold_bytes,
            format: Format::from(&a.output),
            out: a.output.out.clone(),
            cpus,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    fn cfg(args: &[&str]) -> Result<RunConfig, RunConfigError> {
        let cli = Cli::try_parse_from([&["tscope", "run"], args].concat()).expect("parses");
        match cli.command {
            Command::Run(a) => RunConfig::try_from(&a),
            _ => unreachable!(),
        }
    }

    #[test]
    fn defaults_follow_the_issue() {
        let c = cfg(&["pipe1"]).unwrap();
        assert_eq!(c.tasks[0], 1);
        assert_eq!(c.tasks.len(), if c.cpus.len() > 1 { 2 } else { 1 });
        assert_eq!(c.modes, vec![Mode::Processes]);
        assert_eq!(c.duration, Duration::from_secs(5));
        assert_eq!(c.interval, Duration::from_secs(1));
        assert_eq!(c.warmup, c.interval);
        assert!(c.pin);
        assert_eq!(c.placements, vec![None]);
        let m = cfg(&["mem"]).unwrap().mem;
        assert_eq!(
            (m.op, m.size, m.block, m.threads),
            (MemOp::Wr, 1 << 30, 1024, vec![1])
        );
    }

    #[test]
    fn pingpong_placements() {
        let c = cfg(&["pingpong", "--placement", "different,same,different"]);
        if let Ok(c) = c {
            assert_eq!(
                c.placements,
                vec![Some(Placement::DifferentCpus), Some(Placement::SameCpu)]
            );
        }
        assert_eq!(
            cfg(&["pingpong", "--no-pin"]).unwrap().placements,
            vec![None]
        );
        assert_eq!(cfg(&["pingpong"]).unwrap().tasks, vec![1]);
    }

    #[test]
    fn mem_shares_must_hold_a_block() {
        assert!(cfg(&["mem", "--size", "8k", "--block", "4k", "--threads", "2"]).is_ok());
        assert!(cfg(&["mem", "--size", "8k", "--block", "8k", "--threads", "2"]).is_err());
        assert!(cfg(&["mem", "--block", "0"]).is_err());
        assert!(cfg(&["mem", "--op", "rw", "--size", "8k", "--block", "4k"]).is_ok());
        assert!(cfg(&["mem", "--op", "rw", "--size", "8k", "--block", "8k"]).is_err());
    }

    #[test]
    fn sizes_parse_with_binary_suffixes() {
        assert_eq!(parse_size("size", "16g").unwrap(), 16 << 30);
        assert_eq!(parse_size("size", "1k").unwrap(), 1024);
        assert_eq!(parse_size("size", "512M").unwrap(), 512 << 20);
        assert_eq!(parse_size("size", "2GiB").unwrap(), 2 << 30);
        assert_eq!(parse_size("size", "4096").unwrap(), 4096);
        assert_eq!(parse_size("size", " 3 kb").unwrap(), 3072);
        for bad in ["", "g", "-1k", "1.5g", "lots", "99999999999999999999t"] {
            assert!(parse_size("size", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn counts_reject_zero_and_absurd() {
        assert_eq!(counts("tasks", &[1, 2, 1]).unwrap(), vec![1, 2]);
        assert!(counts("tasks", &[0]).is_err());
        assert!(counts("tasks", &[MAX_TASKS + 1]).is_err());
    }

    #[test]
    fn seconds_reject_nan_and_infinity() {
        assert!(seconds("duration", f64::NAN, 0.01, 10.0).is_err());
        assert!(seconds("duration", f64::INFINITY, 0.01, 10.0).is_err());
        assert!(seconds("duration", 0.0, 0.01, 10.0).is_err());
        assert_eq!(
            seconds("duration", 2.5, 0.01, 10.0).unwrap(),
            Duration::from_millis(2500)
        );
    }
}
