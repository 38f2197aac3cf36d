//! The sampling pass of `probe`: every source's batches interleaved, and the core clock timed
//! between the batches.

use std::time::Instant;

use super::{coreclock, readers, ProbeConfig};
use crate::measure::{self, SamplerConfig};
use crate::sys;

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
    let extra = rounds
        .iter()
        .map(|r| r.len().saturating_sub(min_rounds))
        .collect();
    (
        out,
        extra,
        coreclock::summarize(&clocks.batches, clocks.timings),
    )
}

/// The length of one core-clock timing, in ns of chain.
pub(super) const CLOCK_TIMING_NS: f64 = 10_000.0;

/// The core clock of every batch, and the timings taken, over the passes.
#[derive(Default)]
pub(super) struct Clocks {
    pub batches: Vec<f64>,
    pub timings: usize,
}

/// One interleaved pass: per item (a source, or one placement of a source's loop) its batch
/// multipliers in the order drawn and its batch unit, and the core-clock chain (iterations;
/// `None`: not timed here) and timer overhead.
pub(super) struct Pass {
    pub orders: Vec<(Vec<u64>, u64)>,
    pub chain: Option<u64>,
    pub overhead_ns: f64,
}

/// One round of every item of `pass`, batch by batch: batch `j` of every item, then batch
/// `j + 1` of every item, so each item's batches spread over the whole pass, as a C loop that
/// interleaves its sources does. `batch(a, k)` times `k` calls of item `a` (ns; `None`: no
/// batch). The core clock is timed before every batch and after the last (a batch of at most
/// about a millisecond sits between two timings), and each batch gets the clock beside it.
/// Returns one round per item, in `pass.orders`' order (empty where no batch was taken).
pub(super) fn interleaved_round(
    pass: &Pass,
    batch: &mut dyn FnMut(usize, u64) -> Option<f64>,
    clocks: &mut Clocks,
) -> Vec<measure::Round> {
    let items = pass.orders.len();
    let mut fresh: Vec<measure::Round> = (0..items)
        .map(|_| measure::Round {
            involuntary_switches: Some(0),
            ..Default::default()
        })
        .collect();
    let batches = pass.orders.iter().map(|(o, _)| o.len()).max().unwrap_or(0);
    let timing = || {
        pass.chain
            .and_then(|n| coreclock::ghz_of(n, pass.overhead_ns))
    };
    let mut around = Vec::with_capacity(batches * items + 1);
    // Each batch's place in the sequence of timings, per item.
    let mut batch_at: Vec<Vec<usize>> = vec![Vec::new(); items];
    for j in 0..batches {
        for (a, (order, d)) in pass.orders.iter().enumerate() {
            let Some(&m) = order.get(j) else { continue };
            let k = m * d;
            around.push(timing());
            let before = sys::cpu::context_switches().map(|s| s.1).ok();
            let Some(t) = batch(a, k) else { continue };
            let after = sys::cpu::context_switches().map(|s| s.1).ok();
            let round = &mut fresh[a];
            round.ts.push(t);
            round.ks.push(k as f64);
            batch_at[a].push(around.len() - 1);
            round.involuntary_switches = match (round.involuntary_switches, after.zip(before)) {
                (Some(s), Some((a, b))) => Some(s + a.saturating_sub(b)),
                _ => None,
            };
        }
    }
    around.push(timing());
    clocks.timings += around.iter().flatten().count();
    let batch_clocks = coreclock::batch_clocks(&around);
    clocks.batches.extend(batch_clocks.iter().flatten());
    for (round, at) in fresh.iter_mut().zip(&batch_at) {
        // Every batch's clock, or none: a round is in cycles whole or not at all.
        let ghz: Option<Vec<f64>> = at.iter().map(|&j| batch_clocks[j]).collect();
        round.ghz = ghz.unwrap_or_default();
    }
    fresh
}
