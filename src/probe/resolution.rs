//! Resolution, update period and monotonicity of a source, observed by reading it back to back.
//!
//! The observed resolution is the smallest non-zero step between two successive reads. For a
//! fine clock it is bounded below by the cost of a read (two reads cannot be closer than that);
//! for a coarse clock it is the tick, and the smallest repeated step between successive *distinct* values
//! is its update period (the kernel's `HZ` shows through: 4 ms at HZ=250). A step backwards is
//! a monotonicity violation; the loop runs on one pinned CPU, so cross-CPU skew is not what it
//! sees (that is `detect`'s `tsc_unsynchronized`).

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::stats;

/// How long to watch a source.
#[derive(Debug, Clone, Copy)]
pub struct WatchConfig {
    /// Reads to make at least (fine clocks stop here).
    pub min_reads: u64,
    /// Distinct values to see before stopping (coarse clocks stop here).
    pub min_changes: u64,
    /// Hard stop.
    pub budget: Duration,
}

/// What watching a source showed, in the source's native unit.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Watch {
    pub reads: u64,
    /// Number of times the value changed between successive reads.
    pub changes: u64,
    pub min_step: Option<u64>,
    /// Median of the non-zero steps.
    pub median_step: Option<f64>,
    /// The update period of a tick-based clock: the median of the smallest cluster of steps
    /// (within ±5% of each other) seen at least twice. A reader that is preempted sees steps of
    /// 2, 3… ticks, which inflate the median of all steps (8–12 ms for a 4 ms tick at load
    /// 10 on 2 vCPUs); a one-off short step (after a step backwards) is not a cluster.
    pub tick_step: Option<f64>,
    pub backwards: u64,
    pub max_backwards: u64,
    /// Forward steps larger than `jump_threshold` (preemption or a clock jump).
    pub forward_jumps: u64,
    pub max_forward: u64,
}

/// Reads `read` back to back under `cfg` and summarises the steps. `jump_threshold` is in the
/// source's native unit. Reads that fail are skipped.
pub fn watch<F: FnMut() -> Option<u64>>(
    cfg: &WatchConfig,
    jump_threshold: u64,
    mut read: F,
) -> Watch {
    let start = Instant::now();
    let mut w = Watch::default();
    let Some(mut prev) = read() else {
        return w;
    };
    w.reads = 1;
    let mut steps: Vec<f64> = Vec::new();
    loop {
        // Check the clock only every 256 reads, so the check does not sit between most pairs.
        for _ in 0..256 {
            let Some(v) = read() else { continue };
            w.reads += 1;
            if v < prev {
                w.backwards += 1;
                w.max_backwards = w.max_backwards.max(prev - v);
            } else if v > prev {
                let step = v - prev;
                w.changes += 1;
                w.min_step = Some(w.min_step.map_or(step, |m| m.min(step)));
                if steps.len() < 100_000 {
                    steps.push(step as f64);
                }
                if step > jump_threshold {
                    w.forward_jumps += 1;
                }
                w.max_forward = w.max_forward.max(step);
            }
            prev = v;
        }
        let done = w.reads >= cfg.min_reads && w.changes >= cfg.min_changes;
        if done || start.elapsed() >= cfg.budget {
            break;
        }
    }
    w.median_step = stats::median(&steps);
    w.tick_step = smallest_cluster(&mut steps);
    w
}

/// The median of the smallest cluster of at least two values within ±5% of its smallest
/// member, or `None` when no value repeats.
fn smallest_cluster(values: &mut [f64]) -> Option<f64> {
    values.sort_by(f64::total_cmp);
    (0..values.len()).find_map(|i| {
        let end = values[i..].partition_point(|&v| v <= values[i] * 1.05) + i;
        (end - i >= 2)
            .then(|| stats::median(&values[i..end]))
            .flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> WatchConfig {
        WatchConfig {
            min_reads: 1000,
            min_changes: 3,
            budget: Duration::from_secs(5),
        }
    }

    #[test]
    fn counts_backwards_steps_and_the_tick() {
        // A clock that ticks by 4000 every 10 reads and steps back once.
        let mut i = 0u64;
        let w = watch(&cfg(), 1_000_000, || {
            i += 1;
            let v = (i / 10) * 4000;
            Some(if i == 505 { v - 100 } else { v })
        });
        assert_eq!(w.backwards, 1);
        assert_eq!(w.max_backwards, 100);
        assert_eq!(w.min_step, Some(100));
        assert_eq!(w.median_step, Some(4000.0));
        assert_eq!(w.tick_step, Some(4000.0));
        assert_eq!(w.forward_jumps, 0);
    }

    #[test]
    fn a_preempted_reader_still_finds_the_tick() {
        // Most steps are two or three ticks (the reader was off the CPU), some are one tick
        // with a little jitter, one is a short step after a step back.
        let mut steps = vec![
            8000.0, 12000.0, 8000.0, 4010.0, 8000.0, 3990.0, 12000.0, 100.0,
        ];
        assert_eq!(stats::median(&steps), Some(8000.0));
        assert_eq!(smallest_cluster(&mut steps), Some(4000.0));
        assert_eq!(smallest_cluster(&mut [4000.0, 8000.0]), None);
        assert_eq!(smallest_cluster(&mut []), None);
    }

    #[test]
    fn a_clock_that_never_moves_has_no_resolution() {
        let w = watch(
            &WatchConfig {
                budget: Duration::from_millis(5),
                ..cfg()
            },
            10,
            || Some(7),
        );
        assert_eq!((w.changes, w.min_step, w.median_step), (0, None, None));
        assert_eq!(w.tick_step, None);
        assert!(w.reads >= 257);
    }

    #[test]
    fn failing_reads_yield_nothing() {
        let w = watch(&cfg(), 10, || None);
        assert_eq!(w, Watch::default());
    }
}
