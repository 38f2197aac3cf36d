//! The core clock during sampling: chains of dependent register adds
//! ([`crate::sys::baseline::add_chain`], one core cycle per add) timed between the sampler's
//! batches.
//!
//! A read's cost in nanoseconds is its cost in core cycles divided by the clock the core ran
//! at, and a host moves that clock with its own load: on the development machine (a KVM guest
//! on an Intel Xeon) it stepped between 3.85 and 4.09 GHz in 100 MHz bins within seconds,
//! taking every source's nanoseconds with it while `rdtsc` stayed at 30.0 cycles. So the probe
//! times the chain between its batches and reports each source's cost in core cycles beside the
//! nanoseconds, and the clock's range over the run.

use serde::{Deserialize, Serialize};
use std::time::Instant;

use crate::stats;

/// The core clock over one probe's sampling.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CoreClock {
    /// Median over the batches of the clock each ran at, in GHz.
    pub ghz: f64,
    /// The slowest and fastest batch, in GHz.
    pub ghz_min: f64,
    pub ghz_max: f64,
    /// Chain timings taken (one before every batch, and one after each pass).
    pub timings: usize,
    /// How the clock was read.
    pub method: String,
    /// How much of the core this thread had, from the lanes timed beside the chain (absent
    /// where they were not timed, and in profiles from versions before they were).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share: Option<CoreShare>,
}

/// How much of the core the measuring thread had over the sampling: eight independent lanes of
/// register adds ([`crate::sys::baseline::add_lanes`]) timed right after every chain timing,
/// in core cycles per add. The chain runs at one add per cycle whoever else issues on the core;
/// the lanes run as fast as the core issues adds, so another hardware thread on the same core
/// (a host's SMT sibling running another guest) slows the lanes and not the chain. A batch's
/// share is the run's fastest lanes ([`crate::measure::best_lanes`]) over its own, at most 1.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CoreShare {
    /// The fastest lanes of the run, in core cycles per add (about 0.25 on a core that issues
    /// four adds a cycle).
    pub best_cycles_per_add: f64,
    /// Median and lowest share over the batches (1: as fast as the run's fastest).
    pub median: f64,
    pub lowest: f64,
    /// Batches whose lanes ran at least [`CONTENDED`] times the fastest: the core was shared.
    pub contended_batches: usize,
    pub batches: usize,
}

pub use crate::measure::CONTENDED;

/// What [`CoreClock::method`] says.
pub const METHOD: &str = "dependent register adds (one core cycle each) timed between batches";

/// Chains in one timing: about `target_ns` of them, from a few timed tries of about 4 µs;
/// `None` where the chain is not built (off x86-64).
pub(crate) fn chain_iterations(target_ns: f64, overhead_ns: f64) -> Option<u64> {
    const TRY: u64 = 250;
    if !cfg!(target_arch = "x86_64") {
        return None;
    }
    let ghz = (0..4)
        .filter_map(|_| ghz_of(TRY, overhead_ns))
        .fold(f64::NAN, f64::max);
    if !ghz.is_finite() || ghz <= 0.0 {
        return Some(TRY);
    }
    let adds = target_ns * ghz;
    Some(((adds / CHAIN_ADDS) as u64).max(16))
}

/// Adds in one chain ([`crate::sys::baseline::CHAIN_ADDS`]).
#[cfg(target_arch = "x86_64")]
const CHAIN_ADDS: f64 = crate::sys::baseline::CHAIN_ADDS as f64;
#[cfg(not(target_arch = "x86_64"))]
const CHAIN_ADDS: f64 = 1.0;

/// Times `n` chains back to back: the clock they ran at in GHz (adds per ns); `None` when the
/// timing is not positive, or off x86-64.
pub(crate) fn ghz_of(n: u64, overhead_ns: f64) -> Option<f64> {
    #[cfg(target_arch = "x86_64")]
    {
        ns_per_add(n, overhead_ns, crate::sys::baseline::add_chain, CHAIN_ADDS).map(|ns| 1.0 / ns)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (n, overhead_ns);
        None
    }
}

/// Times `n` lane blocks back to back: ns per add; `None` when the timing is not positive,
/// or off x86-64.
pub(crate) fn lane_ns_of(n: u64, overhead_ns: f64) -> Option<f64> {
    #[cfg(target_arch = "x86_64")]
    {
        use crate::sys::baseline::{add_lanes, LANE_ADDS};
        ns_per_add(n, overhead_ns, add_lanes, f64::from(LANE_ADDS))
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (n, overhead_ns);
        None
    }
}

/// Times `n` blocks of `adds` register adds back to back, each block fed the last one's sum:
/// ns per add, less `overhead_ns` for the whole timing; `None` when that is not positive.
/// Generic, not a function pointer, so the block inlines and no call sits in the chain.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn ns_per_add(n: u64, overhead_ns: f64, block: impl Fn(u64, u64) -> u64, adds: f64) -> Option<f64> {
    use std::hint::black_box;
    let step = black_box(1);
    let start = Instant::now();
    let mut x = 0;
    for _ in 0..black_box(n) {
        x = block(x, step);
    }
    black_box(x);
    let ns = start.elapsed().as_nanos() as f64 - overhead_ns;
    (ns > 0.0).then(|| ns / (n as f64 * adds))
}

/// One chain timing and the lanes right after it, `n` blocks each: the lanes in core cycles
/// per add at the chain's clock; `None` off x86-64 or where a timing failed.
pub(crate) fn lanes_cycles(n: u64) -> Option<f64> {
    let ghz = ghz_of(n, 0.0)?;
    Some(lane_ns_of(n, 0.0)? * ghz)
}

/// The lanes of each batch in core cycles per add: the slower of the two timings around it
/// (in ns per add: a batch between a shared and an unshared timing may have shared the core
/// for part of its time) at the batch's clock ([`batch_clocks`]: the faster chain, so a chain
/// slowed by an interrupt does not make the lanes look fast).
pub(crate) fn batch_lanes(around_ns: &[Option<f64>], clocks: &[Option<f64>]) -> Vec<Option<f64>> {
    around_ns
        .windows(2)
        .zip(clocks)
        .map(|(w, ghz)| {
            let ns = match (w[0], w[1]) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            };
            Some(ns? * (*ghz)?)
        })
        .collect()
}

/// The share summary over every batch's lanes of the run; `None` without any.
pub(crate) fn share_of(lanes: &[f64]) -> Option<CoreShare> {
    let best = crate::measure::best_lanes(lanes)?;
    let shares: Vec<f64> = lanes.iter().map(|l| (best / l).min(1.0)).collect();
    Some(CoreShare {
        best_cycles_per_add: best,
        median: stats::median(&shares)?,
        lowest: shares.iter().copied().fold(f64::INFINITY, f64::min),
        contended_batches: lanes.iter().filter(|&&l| l >= best * CONTENDED).count(),
        batches: lanes.len(),
    })
}

/// The clock of each batch from the timings around it: `around[j]` was taken before batch `j`
/// and `around[j + 1]` after it. Interference only slows a chain, so a batch's clock is the
/// faster of its two timings.
pub(crate) fn batch_clocks(around: &[Option<f64>]) -> Vec<Option<f64>> {
    around
        .windows(2)
        .map(|w| match (w[0], w[1]) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        })
        .collect()
}

/// The summary over every batch clock of the run, and the core share over every lanes timing;
/// `None` without any clock.
pub(crate) fn summarize(clocks: &[f64], timings: usize, lanes: &[f64]) -> Option<CoreClock> {
    let ghz = stats::median(clocks)?;
    Some(CoreClock {
        ghz,
        ghz_min: clocks.iter().copied().fold(f64::INFINITY, f64::min),
        ghz_max: clocks.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        timings,
        method: METHOD.into(),
        share: share_of(lanes),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A batch takes the faster of the timings around it (a preempted chain reads slow), and one
    /// lost timing leaves the other.
    #[test]
    fn a_batch_takes_the_faster_timing_around_it() {
        let s = batch_clocks(&[Some(3.9), Some(2.1), Some(4.0), None, None]);
        assert_eq!(s, vec![Some(3.9), Some(4.0), Some(4.0), None]);
        let c = summarize(&[3.9, 4.0, 4.0, 3.85], 5, &[]).unwrap();
        assert_eq!((c.ghz, c.ghz_min, c.ghz_max), (3.95, 3.85, 4.0));
        assert!(c.share.is_none());
        assert!(summarize(&[], 0, &[]).is_none());
    }

    /// A batch takes the slower lanes around it at its own clock; the share is the fastest
    /// lanes over each batch's, and a batch 1.05 times the fastest or slower counts as shared.
    #[test]
    fn the_share_is_the_fastest_lanes_over_each() {
        let l = batch_lanes(
            &[Some(0.0625), Some(0.125), None, Some(0.0625)],
            &[Some(4.0), Some(2.0), None],
        );
        assert_eq!(l, vec![Some(0.5), Some(0.25), None]);
        let mut lanes = vec![0.25; 20];
        lanes.extend([0.2874, 0.2876, 0.375, 0.01]); // 0.01: under the floor
        let s = share_of(&lanes).unwrap();
        assert_eq!(
            s.best_cycles_per_add, 0.25,
            "one misread timing is not the best"
        );
        assert_eq!((s.contended_batches, s.batches), (3, 24));
        assert!((s.lowest - 0.25 / 0.375).abs() < 1e-12);
        assert_eq!(s.median, 1.0);
        assert!(share_of(&[]).is_none());
    }

    /// The chain runs at one add per cycle: on any x86-64 core that runs user code at all, a
    /// clock between 0.2 and 8 GHz (the chain is not folded away, not slowed by its loop).
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn the_chain_reads_a_plausible_clock() {
        let n = chain_iterations(20_000.0, 0.0).unwrap();
        let best = (0..20).filter_map(|_| ghz_of(n, 0.0)).fold(0.0, f64::max);
        assert!((0.2..8.0).contains(&best), "{best} GHz");
    }

    /// The lanes run several adds a cycle on any x86-64 core of this century (three ALUs or
    /// more): under one cycle per add, and not folded away (over 0.1, ten adds a cycle).
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn the_lanes_issue_several_adds_a_cycle() {
        let n = chain_iterations(20_000.0, 0.0).unwrap();
        let ghz = (0..20).filter_map(|_| ghz_of(n, 0.0)).fold(0.0, f64::max);
        let best = (0..20)
            .filter_map(|_| lane_ns_of(n, 0.0))
            .fold(f64::INFINITY, f64::min)
            * ghz;
        assert!(
            (0.1..0.9).contains(&best),
            "{best} cycles per add at {ghz} GHz"
        );
    }
}
