//! The trap verdicts' measurement: the distribution of what one `rdtsc` and one `rdtscp` cost,
//! beside two baselines taken in the same run, round-robin, on the same pinned CPU.
//!
//! - **native**: a chain of [`sys::baseline::CHAIN_ADDS`] dependent register adds, which never
//!   exits: its cost is that many core cycles, so it converts every other figure into core
//!   cycles whatever the clock speed, TSC scaling or load;
//! - **cpuid** (leaf 0): under hardware virtualisation it always exits, so its cost is the floor
//!   of what a hypervisor's trap costs; on bare metal it is a slow native instruction;
//! - **null syscall** (`getppid`): the floor of any trap the kernel makes (`PR_SET_TSC`).
//!
//! Timing model: a sample is a batch of `k` back-to-back calls bracketed by two raw-syscall
//! `clock_gettime(CLOCK_MONOTONIC_RAW)` reads. The kernel reads its clocksource in ring 0, so
//! the timer itself never meets a user-mode TSC trap (`--emulate-trap`). `k` is the smallest
//! power of two that makes a batch last [`TIMER_MULTIPLE`] times the timer's own median cost
//! (1 for a trapped read, hundreds for a native one); a sample's cost per call is
//! `(batch − timer median) / k`. Interference (an interrupt, a preemption, a host stealing the
//! vCPU) only ever adds time, so the low percentiles are the robust ones and the high ones show
//! how loaded the run was.

use std::hint::black_box;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::cpuid::CpuidFacts;
use crate::stats;
use crate::sys;

/// A batch lasts at least this many times the timer's median cost.
pub const TIMER_MULTIPLE: f64 = 20.0;

/// The timer every sample is taken with.
pub const TIMER: &str = "raw syscall clock_gettime(CLOCK_MONOTONIC_RAW)";

/// Percentiles of one subject's cost per call, in ns.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    pub p1: f64,
    pub p10: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
}

impl Percentiles {
    /// The percentiles of `costs` (NaN dropped); `None` when there are none.
    pub fn of(costs: &[f64]) -> Option<Percentiles> {
        let mut v: Vec<f64> = costs.iter().copied().filter(|c| !c.is_nan()).collect();
        v.sort_by(f64::total_cmp);
        let q = |p: f64| stats::quantile_sorted(&v, p);
        Some(Percentiles {
            p1: q(0.01)?,
            p10: q(0.10)?,
            p50: q(0.50)?,
            p90: q(0.90)?,
            p99: q(0.99)?,
        })
    }

    /// Every percentile times `k` (ns per call → ns per `k` calls, or a unit change).
    pub fn scale(self, k: f64) -> Percentiles {
        Percentiles {
            p1: self.p1 * k,
            p10: self.p10 * k,
            p50: self.p50 * k,
            p90: self.p90 * k,
            p99: self.p99 * k,
        }
    }
}

/// One subject's distribution: percentiles of its cost per call over `samples` batches of
/// `batch` calls.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Distribution {
    pub samples: usize,
    pub batch: u64,
    pub cost_ns: Percentiles,
}

/// What [`measure`] found.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TrapSamples {
    /// The CPUID hypervisor bit (`CPUID.1:ECX[31]`).
    pub hypervisor: bool,
    /// The hypervisor's name from its CPUID signature (`"KVM"`, `"QEMU TCG"` …).
    pub hypervisor_vendor: Option<String>,
    pub timer: String,
    /// The timer's median cost (two reads), subtracted from every batch.
    pub timer_overhead_ns: Option<f64>,
    /// One chain of `chain_adds` dependent adds.
    pub native: Option<Distribution>,
    pub chain_adds: u32,
    pub cpuid: Option<Distribution>,
    pub null_syscall: Option<Distribution>,
    pub rdtsc: Option<Distribution>,
    /// `None` as well where the CPU has no RDTSCP.
    pub rdtscp: Option<Distribution>,
    /// Why nothing was measured (no timer, not x86_64).
    pub skipped: Option<String>,
}

/// How long and how many samples.
#[derive(Debug, Clone, Copy)]
pub struct TrapConfig {
    /// Samples wanted per subject.
    pub samples: usize,
    /// Time for all subjects together; sampling stops when it is spent.
    pub budget: Duration,
}

impl TrapConfig {
    /// `detect`'s default (`thorough`: `detect --thorough`).
    pub fn new(thorough: bool) -> TrapConfig {
        if thorough {
            TrapConfig {
                samples: 5000,
                budget: Duration::from_millis(1500),
            }
        } else {
            TrapConfig {
                samples: 1000,
                budget: Duration::from_millis(300),
            }
        }
    }
}

/// Batches timed per subject in one turn of the round robin.
const TURN: usize = 16;

#[cfg(target_arch = "x86_64")]
mod subjects {
    use super::*;
    use sys::tsc;

    /// The timer: ns from the raw syscall (0 if it failed, which [`timer_works`] rules out).
    #[inline(always)]
    fn now() -> u64 {
        sys::clock::syscall_clock_gettime(sys::clock::id::MONOTONIC_RAW).unwrap_or(0)
    }

    pub(super) fn timer_works() -> bool {
        sys::clock::syscall_clock_gettime(sys::clock::id::MONOTONIC_RAW).is_ok()
    }

    /// One batch of `k` calls of `f`, in ns including the timer.
    #[inline(never)]
    fn batch<R, F: FnMut() -> R>(k: u64, mut f: F) -> f64 {
        let t0 = now();
        for _ in 0..k {
            black_box(f());
        }
        let t1 = now();
        t1.saturating_sub(t0) as f64
    }

    /// The subjects, by index: 0 native, 1 cpuid, 2 null syscall, 3 rdtsc, 4 rdtscp.
    pub(super) const COUNT: usize = 5;

    /// One batch of subject `i`.
    pub(super) fn run(i: usize, k: u64) -> f64 {
        match i {
            0 => {
                let step = black_box(1u64);
                let mut x = black_box(0u64);
                batch(k, || {
                    x = sys::baseline::add_chain(x, step);
                    x
                })
            }
            1 => batch(k, || tsc::cpuid(black_box(0))),
            2 => batch(k, sys::clock::syscall_getppid),
            3 => batch(k, tsc::rdtsc),
            _ => batch(k, tsc::rdtscp),
        }
    }
}

/// Measures the distributions: pinned to the current CPU for the run, affinity restored after.
pub fn measure(cpu: &CpuidFacts, cfg: &TrapConfig) -> TrapSamples {
    let mut out = TrapSamples {
        hypervisor: cpu.hypervisor_bit,
        hypervisor_vendor: cpu.hypervisor.vendor().map(str::to_string),
        timer: TIMER.into(),
        chain_adds: CHAIN_ADDS,
        ..TrapSamples::default()
    };
    #[cfg(target_arch = "x86_64")]
    {
        if !subjects::timer_works() {
            out.skipped = Some(format!("{TIMER} failed: no timer for the samples"));
            return out;
        }
        let original = sys::cpu::allowed_cpus().ok();
        let pinned = sys::cpu::current_cpu()
            .and_then(sys::cpu::pin_to_cpu)
            .is_ok();
        let wanted = [true, true, true, true, cpu.rdtscp];
        let d = sample(cfg, &wanted, &mut out);
        [
            out.native,
            out.cpuid,
            out.null_syscall,
            out.rdtsc,
            out.rdtscp,
        ] = d;
        if let (true, Some(cpus)) = (pinned, original) {
            let _ = sys::cpu::set_affinity(&cpus);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = cfg;
        out.skipped = Some("x86_64 only".into());
    }
    out
}

#[cfg(target_arch = "x86_64")]
use sys::baseline::CHAIN_ADDS;
#[cfg(not(target_arch = "x86_64"))]
const CHAIN_ADDS: u32 = 0;

/// The round robin: the timer's cost, each subject's batch size, then turns of [`TURN`]
/// batches per subject until each has `cfg.samples` or the budget is spent.
#[cfg(target_arch = "x86_64")]
fn sample(
    cfg: &TrapConfig,
    wanted: &[bool; subjects::COUNT],
    out: &mut TrapSamples,
) -> [Option<Distribution>; subjects::COUNT] {
    let started = Instant::now();
    let timer: Vec<f64> = (0..200).map(|_| subjects::run(2, 0)).collect();
    let overhead = stats::median(&timer).unwrap_or(0.0);
    out.timer_overhead_ns = Some(overhead);
    let target = (TIMER_MULTIPLE * overhead).max(1000.0);
    let ks: Vec<u64> = (0..subjects::COUNT)
        .map(|i| batch_size(|k| subjects::run(i, k), target))
        .collect();
    let mut costs: Vec<Vec<f64>> = (0..subjects::COUNT)
        .map(|_| Vec::with_capacity(cfg.samples))
        .collect();
    loop {
        let mut any = false;
        for i in (0..subjects::COUNT).filter(|&i| wanted[i]) {
            if costs[i].len() >= cfg.samples {
                continue;
            }
            any = true;
            for _ in 0..TURN {
                let t = subjects::run(i, ks[i]);
                costs[i].push((t - overhead) / ks[i] as f64);
            }
        }
        if !any || started.elapsed() >= cfg.budget || sys::signal::stop_requested() {
            break;
        }
    }
    std::array::from_fn(|i| {
        Percentiles::of(&costs[i]).map(|p| Distribution {
            samples: costs[i].len(),
            batch: ks[i],
            cost_ns: p,
        })
    })
}

/// The smallest power of two `k` whose batch's median (of 5) lasts `target_ns`, at most 2^16.
fn batch_size(mut timed: impl FnMut(u64) -> f64, target_ns: f64) -> u64 {
    let mut k = 1u64;
    while k < 1 << 16 {
        let mut t: Vec<f64> = (0..5).map(|_| timed(k)).collect();
        if stats::quantile_in_place(&mut t, 0.5).unwrap_or(0.0) >= target_ns {
            break;
        }
        k *= 2;
    }
    k
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_ordered_and_ignore_nan() {
        let v: Vec<f64> = (1..=100).map(f64::from).chain([f64::NAN]).collect();
        let p = Percentiles::of(&v).unwrap();
        assert!(p.p1 <= p.p10 && p.p10 <= p.p50 && p.p50 <= p.p90 && p.p90 <= p.p99);
        assert!((p.p50 - 50.5).abs() < 1e-9, "{p:?}");
        assert!(Percentiles::of(&[f64::NAN]).is_none());
    }

    #[test]
    fn batch_size_doubles_until_the_target() {
        // A call costs 10 ns: 1000 ns needs 100 calls, so 128.
        assert_eq!(batch_size(|k| 10.0 * k as f64, 1000.0), 128);
        assert_eq!(batch_size(|_| 5000.0, 1000.0), 1);
        assert_eq!(batch_size(|_| 0.0, 1000.0), 1 << 16);
    }
}
