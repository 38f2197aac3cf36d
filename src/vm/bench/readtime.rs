//! What one precise (clocksource) read costs where the op takes it, timed in the guest: the
//! `function_graph` tracer on the precise-read leaves alone ([`LEAVES`]:
//! `ktime_get_real_ts64`, `ktime_get_real_ts64_mg`, the functions the models count) prints
//! each call's duration, from the tracer's clock read at the call to its clock read at the
//! return; the clocksource's read callback runs inside. Run inside a workload's loop it gives
//! the read's cost in that path — with whatever the path did just before it (under TCG, the
//! emulated TLB and device state the read finds) — and inside a loop of
//! `clock_gettime(CLOCK_REALTIME)` syscalls, the cost where the syscall-derived price is taken.
//!
//! The callbacks themselves cannot be traced on every clocksource (`read_tsc` is built without
//! the tracer's hook); the leaves can. The tracer's own cost at entry and return is in every
//! duration, the same on every clocksource (its clock is `trace_clock_local()`, the TSC,
//! whichever clocksource runs), so the change of the median duration between two
//! clocksources is the change of one read's cost. A separate pass after the timed rounds (the
//! tracer slows every traced call), in the first boot of each kernel.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::clocksource::has_symbol;
use super::clocksource::switch;
use super::{loops, Planned};
use crate::error::{Context, Result};
use crate::stats::Estimate;
use crate::sys::clock;
use crate::trace::FsKind;
use crate::vm::boot::clock::Clocksource;
use crate::vm::boot::tracefs::{write, TRACING};
use crate::workload::WorkloadName;

/// The precise-read leaves the models count (a kernel has one or both).
pub(crate) const LEAVES: [&str; 2] = ["ktime_get_real_ts64", "ktime_get_real_ts64_mg"];

/// How [`ReadPath::Syscall`] is written.
const SYSCALL: &str = "syscall:clock_gettime";

/// Where reads were timed: in a workload's loop, or in a loop of clock syscalls; serialized as
/// the workload's name or `syscall:clock_gettime`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum ReadPath {
    Loop(WorkloadName),
    Syscall,
}

impl From<ReadPath> for String {
    fn from(p: ReadPath) -> String {
        match p {
            ReadPath::Loop(w) => w.as_str().into(),
            ReadPath::Syscall => SYSCALL.into(),
        }
    }
}

impl TryFrom<String> for ReadPath {
    type Error = String;

    fn try_from(s: String) -> std::result::Result<Self, String> {
        if s == SYSCALL {
            return Ok(ReadPath::Syscall);
        }
        WorkloadName::parse(&s)
            .map(ReadPath::Loop)
            .ok_or_else(|| format!("'{s}' is neither a workload nor {SYSCALL}"))
    }
}

/// A file system written as its name, none as the empty string (the syscall context's).
mod fs_or_empty {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::trace::FsKind;

    pub(super) fn serialize<S: Serializer>(fs: &Option<FsKind>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(fs.map_or("", FsKind::name))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<FsKind>, D::Error> {
        let name = String::deserialize(d)?;
        if name.is_empty() {
            return Ok(None);
        }
        FsKind::parse(&name)
            .map(Some)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown file system '{name}'")))
    }
}

/// Fewer timed calls than this in a context give no [`ReadTime`]: a workload whose op takes
/// no precise read still meets a stray one now and then, and one call is no price.
pub(crate) const MIN_CALLS: usize = 50;

/// Clock syscalls in the syscall context.
const SYSCALL_CALLS: u32 = 2_000;

/// The reads of one clocksource timed in one context (a workload on a file system, or
/// [`ReadPath::Syscall`]).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ReadTime {
    pub clocksource: Clocksource,
    /// The traced leaves, space-separated.
    pub symbol: String,
    /// The file system; none (written empty) for [`ReadPath::Syscall`].
    #[serde(with = "fs_or_empty")]
    pub fs: Option<FsKind>,
    /// The workload, or [`ReadPath::Syscall`].
    pub workload: ReadPath,
    /// Calls timed.
    pub reads: usize,
    /// The median duration of one read, ns, with its 95% bootstrap interval.
    pub read_ns: Estimate,
}

/// The change of one read's cost from clocksource `from` to `to` in one context: the
/// difference of the medians, with the interval that holds every difference of values of the
/// two intervals (conservative: the two are independent samples).
pub(crate) fn delta(from: &ReadTime, to: &ReadTime) -> Estimate {
    Estimate {
        point: to.read_ns.point - from.read_ns.point,
        lower: to.read_ns.lower - from.read_ns.upper,
        upper: to.read_ns.upper - from.read_ns.lower,
    }
}

/// The durations, ns, of every call of one of `symbols` in `function_graph` trace text: a
/// leaf traced alone prints ` 0)   1.234 us    |  ktime_get_real_ts64();` (a `+`, `!`, `#`, …
/// before the number when it is long). Lines of other functions, comments and markers are
/// skipped.
pub(crate) fn durations(trace: &str, symbols: &[&str]) -> Vec<f64> {
    trace
        .lines()
        .filter_map(|l| {
            let (left, right) = l.split_once('|')?;
            let name = right.trim().strip_suffix("();")?;
            if !symbols.contains(&name) {
                return None;
            }
            let words: Vec<&str> = left.split_whitespace().collect();
            let at = words.iter().position(|w| *w == "us")?;
            let v: f64 = words.get(at.checked_sub(1)?)?.parse().ok()?;
            (v.is_finite() && v >= 0.0).then_some(v * 1000.0)
        })
        .collect()
}

/// The durations of `symbols` while `run` runs, from an emptied trace.
fn traced(symbols: &[&str], run: impl FnOnce() -> Result<()>) -> Result<Vec<f64>> {
    write("trace", "")?;
    write("tracing_on", "1")?;
    let ran = run();
    write("tracing_on", "0")?;
    ran?;
    let text = std::fs::read_to_string(format!("{TRACING}/trace")).context("reading trace")?;
    Ok(durations(&text, symbols))
}

fn summary(
    cs: Clocksource,
    symbol: &str,
    fs: Option<FsKind>,
    workload: ReadPath,
    d: &[f64],
) -> Option<ReadTime> {
    if d.len() < MIN_CALLS {
        return None;
    }
    let read_ns = super::compare::median_interval(&[d.to_vec()], 11)?;
    Some(ReadTime {
        clocksource: cs,
        symbol: symbol.into(),
        fs,
        workload,
        reads: d.len(),
        read_ns,
    })
}

/// Times each clocksource's reads in every planned loop (`iterations` each) and in a loop of
/// clock syscalls, switching to each clocksource in turn. Returns the times and what failed.
pub(crate) fn time(
    clocksources: &[Clocksource],
    plan: &[(Planned, String)],
    iterations: u64,
) -> (Vec<ReadTime>, Vec<String>) {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    let kallsyms = std::fs::read_to_string("/proc/kallsyms").unwrap_or_default();
    let leaves: Vec<&str> = LEAVES
        .into_iter()
        .filter(|s| has_symbol(&kallsyms, s))
        .collect();
    let symbol = leaves.join(" ");
    // An empty filter would trace every function: set it and read it back first.
    let set_up = write("tracing_on", "0")
        .and_then(|()| write("set_ftrace_filter", &symbol))
        .and_then(|()| {
            let back = std::fs::read_to_string(format!("{TRACING}/set_ftrace_filter"))
                .context("reading set_ftrace_filter")?;
            if back.split_whitespace().next().is_none() {
                crate::fail!("set_ftrace_filter is empty after writing '{symbol}'");
            }
            write("current_tracer", "function_graph")
        });
    if let Err(e) = set_up {
        let _ = write("set_ftrace_filter", "");
        return (out, vec![format!("timing the reads: {e:#}")]);
    }
    for &cs in clocksources {
        if let (_, Some(e)) = switch(cs) {
            errors.push(e);
            continue;
        }
        let syscalls = traced(&leaves, || {
            for _ in 0..SYSCALL_CALLS {
                let _ = std::hint::black_box(clock::syscall_clock_gettime(clock::id::REALTIME));
            }
            Ok(())
        });
        match syscalls {
            Ok(d) => out.extend(summary(cs, &symbol, None, ReadPath::Syscall, &d)),
            Err(e) => errors.push(format!("{cs} {SYSCALL}: {e:#}")),
        }
        for (p, dir) in plan {
            let d = traced(&leaves, || {
                loops::run_loop(p.workload, Path::new(dir), iterations.max(1)).map(|_| ())
            });
            let path = ReadPath::Loop(p.workload);
            match d {
                Ok(d) => out.extend(summary(cs, &symbol, Some(p.fs), path, &d)),
                Err(e) => errors.push(format!("{cs} {}/{}: {e:#}", p.fs, p.workload)),
            }
        }
    }
    let _ = write("current_tracer", "nop");
    let _ = write("set_ftrace_filter", "");
    (out, errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_durations_of_the_callback_only() {
        let trace = "# tracer: function_graph\n\
                     #\n\
                     # CPU  DURATION                  FUNCTION CALLS\n\
                     # |     |   |                     |   |   |   |\n \
                     0)   0.512 us    |  ktime_get_real_ts64();\n \
                     0)   1.250 us    |  ktime_get_real_ts64_mg();\n \
                     0) + 12.345 us   |  ktime_get_real_ts64();\n \
                     ------------------------------------------\n \
                     0)    tscope-1    =>    <idle>-0   \n \
                     0) ! 101.000 us  |  ktime_get_real_ts64();\n \
                     0)   0.4 us      |  ktime_get_real_ts64() {\n";
        assert_eq!(
            durations(trace, &["ktime_get_real_ts64"]),
            [512.0, 12345.0, 101_000.0]
        );
        assert_eq!(
            durations(trace, &LEAVES),
            [512.0, 1250.0, 12345.0, 101_000.0]
        );
        assert!(durations(trace, &["read_hpet"]).is_empty());
        assert!(durations("", &LEAVES).is_empty());
    }

    #[test]
    fn delta_is_conservative() {
        let t = |p, l, u| ReadTime {
            clocksource: Clocksource::Tsc,
            symbol: String::new(),
            fs: None,
            workload: ReadPath::Syscall,
            reads: 3,
            read_ns: Estimate {
                point: p,
                lower: l,
                upper: u,
            },
        };
        let d = delta(&t(100.0, 95.0, 110.0), &t(400.0, 380.0, 430.0));
        assert_eq!((d.point, d.lower, d.upper), (300.0, 270.0, 335.0));
    }

    #[test]
    fn the_syscall_context_reads_and_writes_as_it_always_did() {
        let t = ReadTime {
            clocksource: Clocksource::Hpet,
            symbol: "ktime_get_real_ts64".into(),
            fs: None,
            workload: ReadPath::Syscall,
            reads: 60,
            read_ns: Estimate::exact(1.0),
        };
        let json = serde_json::to_string(&t).unwrap();
        assert!(
            json.contains(r#""fs":"","workload":"syscall:clock_gettime""#),
            "{json}"
        );
        assert_eq!(serde_json::from_str::<ReadTime>(&json).unwrap(), t);
        let in_loop = ReadTime {
            fs: Some(FsKind::Tmpfs),
            workload: ReadPath::Loop(WorkloadName::WriteStat),
            ..t
        };
        let json = serde_json::to_string(&in_loop).unwrap();
        assert!(
            json.contains(r#""fs":"tmpfs","workload":"write-stat""#),
            "{json}"
        );
        assert_eq!(serde_json::from_str::<ReadTime>(&json).unwrap(), in_loop);
        assert!(serde_json::from_str::<ReadPath>(r#""bogus""#).is_err());
    }
}
