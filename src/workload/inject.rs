//! Emulated timestamp reads for `simulate --validate`: per iteration, a (possibly fractional)
//! number of reads of real sources, taken right after the workload's own iteration, so that a
//! kernel model's extra reads can be measured on the real machine instead of only priced.
//!
//! The hook costs the normal path nothing: [`count_until_stop`](super::runner::count_until_stop)
//! looks at [`active`] once, before its loop, and runs a separate loop only when an injection
//! is set (by the parent, before the workers are forked or spawned).

use std::hint::black_box;
use std::sync::Mutex;

use crate::sys::clock::{id, syscall_clock_gettime, vdso_clock_gettime};

/// A real source an emulated kernel read is made with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadSource {
    /// `syscall(clock_gettime, CLOCK_REALTIME)`: the kernel path of a Linux precise read
    /// (`ktime_get_real_ts64`), plus a syscall entry and exit.
    SyscallRealtime,
    /// `CLOCK_REALTIME_COARSE` through the vDSO: a tick copy (`ktime_get_coarse_real_ts64`,
    /// BSD `getnanotime`).
    VdsoRealtimeCoarse,
    /// A BSD timecounter read (`nanotime`/`microtime` on the TSC).
    Rdtscp,
    LfenceRdtsc,
    Rdtsc,
}

impl ReadSource {
    /// The probe source id whose cost prices it.
    pub fn probe_id(self) -> &'static str {
        match self {
            ReadSource::SyscallRealtime => "syscall:realtime",
            ReadSource::VdsoRealtimeCoarse => "vdso:realtime_coarse",
            ReadSource::Rdtscp => "rdtscp",
            ReadSource::LfenceRdtsc => "lfence_rdtsc",
            ReadSource::Rdtsc => "rdtsc",
        }
    }

    #[inline(always)]
    fn read(self) {
        match self {
            ReadSource::SyscallRealtime => {
                let _ = black_box(syscall_clock_gettime(id::REALTIME));
            }
            ReadSource::VdsoRealtimeCoarse => {
                let _ = black_box(vdso_clock_gettime(id::REALTIME_COARSE));
            }
            #[cfg(target_arch = "x86_64")]
            ReadSource::Rdtscp => {
                black_box(crate::sys::tsc::rdtscp());
            }
            #[cfg(target_arch = "x86_64")]
            ReadSource::LfenceRdtsc => {
                black_box(crate::sys::tsc::lfence_rdtsc());
            }
            #[cfg(target_arch = "x86_64")]
            ReadSource::Rdtsc => {
                black_box(crate::sys::tsc::rdtsc());
            }
            #[cfg(not(target_arch = "x86_64"))]
            _ => {}
        }
    }
}

/// Reads to add per iteration: `(source, reads per iteration)`, fractions spread evenly.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Inject {
    pub reads: Vec<(ReadSource, f64)>,
    /// Fractional reads carried to the next iteration, per entry of `reads`.
    carry: Vec<f64>,
}

impl Inject {
    pub fn new(reads: Vec<(ReadSource, f64)>) -> Self {
        let carry = vec![0.0; reads.len()];
        Inject { reads, carry }
    }

    /// The reads of one iteration.
    #[inline(always)]
    pub fn iteration(&mut self) {
        for (i, &(src, rate)) in self.reads.iter().enumerate() {
            let due = self.carry[i] + rate;
            let whole = due as u64;
            self.carry[i] = due - whole as f64;
            for _ in 0..whole {
                src.read();
            }
        }
    }
}

static ACTIVE: Mutex<Option<Inject>> = Mutex::new(None);

/// Sets (or with `None` clears) the injection the next workers start with.
pub fn set(inject: Option<Inject>) {
    *ACTIVE.lock().unwrap_or_else(|e| e.into_inner()) = inject;
}

/// The injection set now, if any (each worker takes its own copy).
pub fn active() -> Option<Inject> {
    ACTIVE.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions_are_spread_over_iterations() {
        let mut i = Inject::new(vec![(ReadSource::VdsoRealtimeCoarse, 0.25)]);
        let mut total = 0.0;
        for _ in 0..8 {
            let before = i.carry[0];
            i.iteration();
            total += before + 0.25 - i.carry[0];
        }
        assert!((total - 2.0).abs() < 1e-9);
    }
}
