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

/// One source's reads per iteration: `whole` every time, plus `frac` spread evenly.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Entry {
    src: ReadSource,
    whole: u32,
    frac: f64,
    carry: f64,
}

/// Reads to add per iteration: at most two sources (a counter and a coarse clock), set up
/// before the loop so that an iteration does no more than the reads and, for a fractional
/// rate, one add and compare.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Inject {
    entries: [Option<Entry>; 2],
}

impl Inject {
    /// `(source, reads per iteration)`; rates ≤ 0 are dropped, a third source is ignored.
    pub fn new(reads: Vec<(ReadSource, f64)>) -> Self {
        let mut entries = [None; 2];
        for (slot, (src, rate)) in entries
            .iter_mut()
            .zip(reads.into_iter().filter(|r| r.1 > 0.0 && r.1.is_finite()))
        {
            *slot = Some(Entry {
                src,
                whole: rate.trunc().min(f64::from(u32::MAX)) as u32,
                frac: rate.fract(),
                carry: 0.0,
            });
        }
        Inject { entries }
    }

    /// Reads per iteration of each source.
    pub fn reads(&self) -> Vec<(ReadSource, f64)> {
        self.entries
            .iter()
            .flatten()
            .map(|e| (e.src, f64::from(e.whole) + e.frac))
            .collect()
    }

    /// The reads of one iteration.
    #[inline(always)]
    pub fn iteration(&mut self) {
        for e in self.entries.iter_mut().flatten() {
            for _ in 0..e.whole {
                e.src.read();
            }
            if e.frac > 0.0 {
                e.carry += e.frac;
                if e.carry >= 1.0 {
                    e.carry -= 1.0;
                    e.src.read();
                }
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
        let mut i = Inject::new(vec![
            (ReadSource::VdsoRealtimeCoarse, 2.25),
            (ReadSource::Rdtsc, 0.0),
        ]);
        assert_eq!(i.reads(), vec![(ReadSource::VdsoRealtimeCoarse, 2.25)]);
        let mut fired = 0;
        for _ in 0..8 {
            let before = i.entries[0].unwrap().carry;
            i.iteration();
            fired += u32::from(i.entries[0].unwrap().carry < before);
        }
        assert_eq!(fired, 2, "a quarter read per iteration: 2 in 8");
    }
}
