//! One round of several items (the sources of the sampling pass, or one counter read's loop
//! placements) interleaved batch by batch, with the core clock and the core's share timed
//! between the batches.

use super::coreclock;
use crate::measure;
use crate::sys;

/// The length of one core-clock timing, in ns of chain.
pub(super) const CLOCK_TIMING_NS: f64 = 10_000.0;

/// The core clock of every batch, the timings taken, and every batch's lanes (core cycles per
/// add, [`coreclock::CoreShare`]), over the passes.
#[derive(Default)]
pub(super) struct Clocks {
    pub batches: Vec<f64>,
    pub timings: usize,
    pub lanes: Vec<f64>,
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
/// about a millisecond sits between two timings), and each batch gets the clock beside it; the
/// lanes are timed right after each chain, and each batch gets the slower lanes beside it.
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
    // The chain, then the lanes in ns per add (the same number of blocks: about a quarter of
    // the chain's time where the core issues four adds a cycle); `batch_lanes` turns them into
    // cycles at each batch's clock.
    let timing = || {
        let n = pass.chain?;
        let ghz = coreclock::ghz_of(n, pass.overhead_ns)?;
        Some((ghz, coreclock::lane_ns_of(n, pass.overhead_ns)))
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
    let lanes_around: Vec<Option<f64>> = around.iter().map(|t| t.and_then(|t| t.1)).collect();
    let around: Vec<Option<f64>> = around.iter().map(|t| t.map(|t| t.0)).collect();
    let batch_clocks = coreclock::batch_clocks(&around);
    let batch_lanes = coreclock::batch_lanes(&lanes_around, &batch_clocks);
    clocks.batches.extend(batch_clocks.iter().flatten());
    clocks.lanes.extend(batch_lanes.iter().flatten());
    for (round, at) in fresh.iter_mut().zip(&batch_at) {
        // Every batch's clock, or none: a round is in cycles whole or not at all; so too
        // the lanes.
        let ghz: Option<Vec<f64>> = at.iter().map(|&j| batch_clocks[j]).collect();
        round.ghz = ghz.unwrap_or_default();
        let lanes: Option<Vec<f64>> = at.iter().map(|&j| batch_lanes[j]).collect();
        round.lanes = lanes.unwrap_or_default();
    }
    fresh
}
