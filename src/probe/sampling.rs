//! The sampling pass of `probe`: every source's batches interleaved, and the core clock timed
//! between the batches.

use std::time::Instant;

use super::interleave::{interleaved_round, Clocks, Pass, CLOCK_TIMING_NS};
use super::{coreclock, readers, ProbeConfig};
use crate::measure::{self, SamplerConfig};

/// Samples every source: one warm-up each, then rounds. A round is a pass over the sources
/// still sampling, batch by batch ([`interleaved_round`]): each source's batches spread over
/// the whole pass, so a disturbance or a clock step that lasts a moment lands in a few batches
/// of many sources instead of a whole round of one, and each source's lower quartile is drawn
/// from many moments, as a C loop that interleaves its sources draws its median. After
/// `sampler.rounds` rounds a source stops as soon as its estimate is settled; the others get
/// rounds up to `sampler.max_rounds` while the sampling has taken less than
/// `cfg.sampling_cap`. Returns each source's measurement and its rounds beyond the
/// minimum, and the core clock over the passes.
pub(super) fn sample_all(
    cfg: &ProbeConfig,
    ctx: &readers::Context,
    overhead_ns: f64,
    started: Instant,
) -> (
    Vec<Option<measure::Measurement>>,
    Vec<usize>,
    Option<coreclock::CoreClock>,
) {
    let n = cfg.sources.len();
    let sampler_of = |i: usize| SamplerConfig {
        seed: cfg.seed.wrapping_add(i as u64),
        overhead_ns,
        ..cfg.sampler
    };
    let units: Vec<Option<u64>> = cfg
        .sources
        .iter()
        .enumerate()
        .map(|(i, &src)| readers::warm_up(src, ctx, &sampler_of(i)))
        .collect();
    let chain = coreclock::chain_iterations(CLOCK_TIMING_NS, overhead_ns);
    let mut clocks = Clocks::default();
    let mut rounds: Vec<Vec<measure::Round>> = vec![Vec::new(); n];
    let mut out: Vec<Option<measure::Measurement>> = vec![None; n];
    let mut settled = vec![false; n];
    let (min_rounds, max_rounds) = (cfg.sampler.rounds.max(1), cfg.sampler.max_rounds.max(1));
    for r in 0..max_rounds.max(min_rounds) {
        if r >= min_rounds && started.elapsed() >= cfg.sampling_cap {
            break;
        }
        let active: Vec<(usize, u64)> = (0..n)
            .filter_map(|i| units[i].filter(|_| !settled[i]).map(|d| (i, d)))
            .collect();
        if active.is_empty() {
            break;
        }
        let pass = Pass {
            orders: active
                .iter()
                .map(|&(i, d)| {
                    let seed = cfg.seed.wrapping_add((1000 * (r + 1) + i) as u64);
                    (measure::batch_order(&sampler_of(i), seed), d)
                })
                .collect(),
            chain,
            overhead_ns,
        };
        let fresh = interleaved_round(
            &pass,
            &mut |a, k| {
                let i = active[a].0;
                readers::batch(cfg.sources[i], ctx, &sampler_of(i), k)
            },
            &mut clocks,
        );
        for (&(i, _), round) in active.iter().zip(fresh) {
            if !round.ts.is_empty() {
                rounds[i].push(round);
            }
        }
        for i in 0..n {
            if settled[i] || rounds[i].is_empty() {
                continue;
            }
            let sampler = sampler_of(i);
            out[i] = measure::estimate(&sampler, units[i].unwrap_or(1), &rounds[i]);
            settled[i] = r + 1 >= min_rounds
                && out[i]
                    .as_ref()
                    .is_some_and(|m| m.settled(sampler.settle_width));
        }
    }
    // Every source against the run's fastest lanes, which a source that settled early may
    // not have seen: whether a batch shared its core is a fact of the run, not of the source.
    let lanes_best = measure::best_lanes(&clocks.lanes);
    if lanes_best.is_some() {
        for i in 0..n {
            if !rounds[i].is_empty() {
                let sampler = SamplerConfig {
                    lanes_best,
                    ..sampler_of(i)
                };
                out[i] = measure::estimate(&sampler, units[i].unwrap_or(1), &rounds[i]);
            }
        }
    }
    let extra = rounds
        .iter()
        .map(|r| r.len().saturating_sub(min_rounds))
        .collect();
    (
        out,
        extra,
        coreclock::summarize(&clocks.batches, clocks.timings, &clocks.lanes),
    )
}
