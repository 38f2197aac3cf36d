//! The timestamp sources `probe` knows, and their ids (`rdtsc`, `vdso:monotonic`, …).

use std::fmt;
use std::str::FromStr;

use serde::{Serialize, Serializer};

/// A POSIX clock id as tscope names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Clock {
    Realtime,
    Monotonic,
    MonotonicRaw,
    Boottime,
    Tai,
    RealtimeCoarse,
    MonotonicCoarse,
    ProcessCputime,
    ThreadCputime,
}

impl Clock {
    pub const ALL: [Clock; 9] = [
        Clock::Realtime,
        Clock::Monotonic,
        Clock::MonotonicRaw,
        Clock::Boottime,
        Clock::Tai,
        Clock::RealtimeCoarse,
        Clock::MonotonicCoarse,
        Clock::ProcessCputime,
        Clock::ThreadCputime,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Clock::Realtime => "realtime",
            Clock::Monotonic => "monotonic",
            Clock::MonotonicRaw => "monotonic_raw",
            Clock::Boottime => "boottime",
            Clock::Tai => "tai",
            Clock::RealtimeCoarse => "realtime_coarse",
            Clock::MonotonicCoarse => "monotonic_coarse",
            Clock::ProcessCputime => "process_cputime",
            Clock::ThreadCputime => "thread_cputime",
        }
    }

    /// The Linux `clockid_t`.
    pub fn id(self) -> libc::clockid_t {
        use crate::sys::clock::id;
        match self {
            Clock::Realtime => id::REALTIME,
            Clock::Monotonic => id::MONOTONIC,
            Clock::MonotonicRaw => id::MONOTONIC_RAW,
            Clock::Boottime => id::BOOTTIME,
            Clock::Tai => id::TAI,
            Clock::RealtimeCoarse => id::REALTIME_COARSE,
            Clock::MonotonicCoarse => id::MONOTONIC_COARSE,
            Clock::ProcessCputime => id::PROCESS_CPUTIME,
            Clock::ThreadCputime => id::THREAD_CPUTIME,
        }
    }

    /// Whether the vDSO serves this clock (the CPU-time clocks always take the syscall).
    pub fn vdso_served(self) -> bool {
        !matches!(self, Clock::ProcessCputime | Clock::ThreadCputime)
    }

    /// Coarse clocks return the time of the last tick without reading the clocksource.
    pub fn is_coarse(self) -> bool {
        matches!(self, Clock::RealtimeCoarse | Clock::MonotonicCoarse)
    }
}

/// One timestamp source (or reference operation) that `probe` can measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Source {
    Rdtsc,
    LfenceRdtsc,
    Rdtscp,
    Rdpid,
    Vdso(Clock),
    Syscall(Clock),
    VdsoGettimeofday,
    SyscallGettimeofday,
    VdsoTime,
    StdInstant,
    StdSystemTime,
    QuantaNow,
    QuantaRaw,
    /// `cpuid` leaf 0: a VM exit under hardware virtualisation.
    Cpuid,
    /// `getppid` through the raw syscall: the null-syscall floor.
    SyscallGetppid,
}

/// What kind of thing a source is, for grouping in reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceKind {
    /// A CPU instruction reading a counter.
    Counter,
    /// A clock read through libc / the vDSO.
    Vdso,
    /// A clock read through the raw syscall.
    Syscall,
    /// A clock of a Rust library (std, quanta).
    Library,
    /// A reference operation that reads no time (cpuid, getppid).
    Reference,
}

impl Source {
    /// Every source, in report order.
    pub fn all() -> Vec<Source> {
        let mut v = vec![
            Source::Rdtsc,
            Source::LfenceRdtsc,
            Source::Rdtscp,
            Source::Rdpid,
        ];
        v.extend(Clock::ALL.iter().map(|&c| Source::Vdso(c)));
        v.extend(Clock::ALL.iter().map(|&c| Source::Syscall(c)));
        v.extend([
            Source::VdsoGettimeofday,
            Source::SyscallGettimeofday,
            Source::VdsoTime,
            Source::StdInstant,
            Source::StdSystemTime,
            Source::QuantaNow,
            Source::QuantaRaw,
            Source::Cpuid,
            Source::SyscallGetppid,
        ]);
        v
    }

    pub fn kind(self) -> SourceKind {
        match self {
            Source::Rdtsc | Source::LfenceRdtsc | Source::Rdtscp | Source::Rdpid => {
                SourceKind::Counter
            }
            Source::Vdso(_) | Source::VdsoGettimeofday | Source::VdsoTime => SourceKind::Vdso,
            Source::Syscall(_) | Source::SyscallGettimeofday => SourceKind::Syscall,
            Source::StdInstant | Source::StdSystemTime | Source::QuantaNow | Source::QuantaRaw => {
                SourceKind::Library
            }
            Source::Cpuid | Source::SyscallGetppid => SourceKind::Reference,
        }
    }

    /// Whether the source returns a time at all (`rdpid`, `cpuid` and `getppid` do not).
    pub fn reads_time(self) -> bool {
        !matches!(self, Source::Rdpid | Source::Cpuid | Source::SyscallGetppid)
    }

    /// Whether the source is a tick-based (coarse) clock whose update period is of interest.
    pub fn is_coarse(self) -> bool {
        match self {
            Source::Vdso(c) | Source::Syscall(c) => c.is_coarse(),
            Source::VdsoTime => true,
            _ => false,
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Rdtsc => f.write_str("rdtsc"),
            Source::LfenceRdtsc => f.write_str("lfence_rdtsc"),
            Source::Rdtscp => f.write_str("rdtscp"),
            Source::Rdpid => f.write_str("rdpid"),
            Source::Vdso(c) => write!(f, "vdso:{}", c.name()),
            Source::Syscall(c) => write!(f, "syscall:{}", c.name()),
            Source::VdsoGettimeofday => f.write_str("vdso:gettimeofday"),
            Source::SyscallGettimeofday => f.write_str("syscall:gettimeofday"),
            Source::VdsoTime => f.write_str("vdso:time"),
            Source::StdInstant => f.write_str("std:instant"),
            Source::StdSystemTime => f.write_str("std:systemtime"),
            Source::QuantaNow => f.write_str("quanta:now"),
            Source::QuantaRaw => f.write_str("quanta:raw"),
            Source::Cpuid => f.write_str("cpuid"),
            Source::SyscallGetppid => f.write_str("syscall:getppid"),
        }
    }
}

impl Serialize for Source {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// An id that names no source; its message lists the valid ones.
#[derive(Debug, thiserror::Error)]
#[error("unknown source '{0}'; valid sources: {list}", list = Source::all().iter().map(ToString::to_string).collect::<Vec<_>>().join(", "))]
pub struct UnknownSource(pub String);

impl From<UnknownSource> for crate::error::ConfigError {
    fn from(e: UnknownSource) -> Self {
        crate::error::ConfigError::Invalid(e.to_string())
    }
}

impl From<UnknownSource> for crate::error::Error {
    fn from(e: UnknownSource) -> Self {
        crate::error::ConfigError::from(e).into()
    }
}

impl FromStr for Source {
    type Err = UnknownSource;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Source::all()
            .into_iter()
            .find(|src| src.to_string() == s)
            .ok_or_else(|| UnknownSource(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_are_unique() {
        let all = Source::all();
        let ids: std::collections::HashSet<String> = all.iter().map(|s| s.to_string()).collect();
        assert_eq!(ids.len(), all.len());
        for s in all {
            assert_eq!(s.to_string().parse::<Source>().unwrap(), s);
        }
        assert_eq!(
            "vdso:monotonic".parse::<Source>().unwrap(),
            Source::Vdso(Clock::Monotonic)
        );
        let err = "vdso:nope".parse::<Source>().unwrap_err().to_string();
        assert!(
            err.contains("unknown source 'vdso:nope'") && err.contains("rdtscp"),
            "{err}"
        );
    }
}
