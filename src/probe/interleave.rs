//! One round of several items (the sources of the sampling pass, or one counter read's loop
//! placements) interleaved batch by batch, with the core clock timed between the batches.

use super::coreclock;
use crate::measure;
use crate::sys;

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
