//! How much a short counter read's figure depends on where its loop sits in memory.
//!
//! The sampler's loop for `rdtsc` is four to seven instructions, placed wherever the compiler
//! and linker put it. Its cost can move with that placement (front-end windows of 32 and 64
//! bytes, see [`crate::sys::placed`]), which no number of rounds at one placement can show: the
//! interval would be tight and still not carry to the next build. So the counter reads are also
//! timed in loops whose heads sit at every 8th byte of a 64-byte line, round-robin over the
//! placements (a moment's disturbance lands in one round of one placement, not in all rounds of
//! one). Where the placements' intervals do not all overlap, placement moves the figure: the
//! source's interval is widened to hold every placement's point, and the output says so.

use serde::{Deserialize, Serialize};

use super::source::Source;
use crate::measure::{self, Measurement, SamplerConfig};
use crate::stats::Estimate;

/// The cost of one counter read at each loop placement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Placement {
    /// Offsets of the loop head past a 64-byte boundary, in bytes.
    pub offsets: Vec<u32>,
    /// Cost per read at each offset (the sampler's lower quartile, with its interval), ns.
    pub cost_ns: Vec<Estimate>,
    /// Highest minus lowest of the points, ns.
    pub spread_ns: f64,
    /// `spread_ns` over the median of the points.
    pub relative_spread: f64,
    /// Some two placements' intervals do not overlap: where the loop sits moves the cost.
    pub moves_cost: bool,
    /// The source's `cost_ns` interval was widened to hold every placement's point.
    pub widened: bool,
}

impl Placement {
    /// The placement figures from one measurement per offset; `None` when any offset has none.
    pub fn from_measurements(offsets: &[u32], ms: &[Option<Measurement>]) -> Option<Placement> {
        let cost_ns: Vec<Estimate> = ms
            .iter()
            .map(|m| m.as_ref().map(|m| m.cost_ns))
            .collect::<Option<_>>()?;
        if cost_ns.is_empty() || cost_ns.len() != offsets.len() {
            return None;
        }
        let points: Vec<f64> = cost_ns.iter().map(|e| e.point).collect();
        let (lo, hi) = min_max(points.iter().copied());
        let median = crate::stats::median(&points)?;
        let highest_lower = cost_ns.iter().map(|e| e.lower).fold(f64::MIN, f64::max);
        let lowest_upper = cost_ns.iter().map(|e| e.upper).fold(f64::MAX, f64::min);
        Some(Placement {
            offsets: offsets.to_vec(),
            spread_ns: hi - lo,
            relative_spread: if median > 0.0 {
                (hi - lo) / median
            } else {
                f64::NAN
            },
            moves_cost: highest_lower > lowest_upper,
            widened: false,
            cost_ns,
        })
    }

    /// The lowest and the highest placement's point, ns.
    pub fn range_ns(&self) -> (f64, f64) {
        min_max(self.cost_ns.iter().map(|e| e.point))
    }

    /// The source's interval, widened to hold every placement's point when placement moves the
    /// cost (sets [`Placement::widened`] when that changed it). The point stays the sampler's.
    pub fn widen(&mut self, cost: Estimate) -> Estimate {
        if !self.moves_cost {
            return cost;
        }
        let (lo, hi) = self.range_ns();
        let wider = Estimate {
            lower: cost.lower.min(lo),
            upper: cost.upper.max(hi),
            ..cost
        };
        self.widened = wider.lower < cost.lower || wider.upper > cost.upper;
        wider
    }
}

fn min_max(xs: impl Iterator<Item = f64>) -> (f64, f64) {
    xs.fold((f64::MAX, f64::MIN), |(lo, hi), x| (lo.min(x), hi.max(x)))
}

/// The placed loops of `src`, or `None` for a source that is not a counter read.
#[cfg(target_arch = "x86_64")]
fn loops(src: Source) -> Option<&'static [crate::sys::placed::PlacedLoop; 8]> {
    use crate::sys::placed;
    match src {
        Source::Rdtsc => Some(&placed::RDTSC),
        Source::LfenceRdtsc => Some(&placed::LFENCE_RDTSC),
        Source::Rdtscp => Some(&placed::RDTSCP),
        Source::Rdpid => Some(&placed::RDPID),
        _ => None,
    }
}

/// Whether `src` gets a placement pass: the counter reads (on x86_64).
pub fn applies(src: Source) -> bool {
    #[cfg(target_arch = "x86_64")]
    return loops(src).is_some();
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = src;
        false
    }
}

/// The sampler settings of a placement pass: four rounds per placement of an eighth of a round's
/// budget each (short rounds, so that a placement's rounds lie apart in time and a moment of
/// load does not cover all of one placement). Every eighth byte in a full probe, every
/// sixteenth under `--quick`.
pub fn pass_config(sampler: &SamplerConfig, quick: bool) -> (SamplerConfig, usize) {
    let cfg = SamplerConfig {
        budget: sampler.budget / 8,
        warmup: sampler.warmup / 2,
        // A placement round is an eighth of the budget: 16 batches keep its shortest batch
        // long against the timer's jitter.
        samples: sampler.samples.min(16),
        rounds: 4,
        max_rounds: 4,
        ..*sampler
    };
    (cfg, if quick { 2 } else { 1 })
}

/// Times `src` at every placement (every `step`-th of [`crate::sys::placed::OFFSETS`]): one
/// warm-up each, then `cfg.rounds` rounds round-robin over the placements. `None` for a source
/// without placed loops.
pub fn measure(src: Source, cfg: &SamplerConfig, step: usize) -> Option<Placement> {
    #[cfg(target_arch = "x86_64")]
    {
        use crate::sys::placed::OFFSETS;
        let all = loops(src)?;
        let picked: Vec<usize> = (0..all.len()).step_by(step.max(1)).collect();
        let offsets: Vec<u32> = picked.iter().map(|&i| OFFSETS[i]).collect();
        let run = |i: usize| {
            let l = all[i];
            move |k: u64| {
                std::hint::black_box(l(k));
            }
        };
        let units: Vec<u64> = picked
            .iter()
            .map(|&i| measure::warm_up_loop(cfg, &mut run(i)))
            .collect();
        let mut rounds = vec![Vec::new(); picked.len()];
        for r in 0..cfg.rounds.max(1) {
            for (j, &i) in picked.iter().enumerate() {
                let seed = cfg.seed.wrapping_add((7919 * (r + 1) + j) as u64);
                rounds[j].push(measure::sample_round_loop(cfg, units[j], seed, &mut run(i)));
            }
        }
        let ms: Vec<Option<Measurement>> = rounds
            .iter()
            .zip(&units)
            .map(|(rs, &d)| measure::estimate(cfg, d, rs))
            .collect();
        Placement::from_measurements(&offsets, &ms)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (src, cfg, step);
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est(point: f64, lower: f64, upper: f64) -> Estimate {
        Estimate {
            point,
            lower,
            upper,
        }
    }

    fn placement(costs: Vec<Estimate>) -> Placement {
        let offsets: Vec<u32> = (0..costs.len() as u32).map(|i| 8 * i).collect();
        let ms: Vec<Option<Measurement>> = costs
            .into_iter()
            .map(|c| {
                let mut m = measurement();
                m.cost_ns = c;
                Some(m)
            })
            .collect();
        Placement::from_measurements(&offsets, &ms).expect("every offset measured")
    }

    fn measurement() -> Measurement {
        Measurement {
            cost_ns: Estimate::exact(1.0),
            intercept_ns: 0.0,
            batch_unit: 1,
            samples: 2,
            iterations: 2,
            involuntary_switches: Some(0),
            interval_failed: false,
            cost_cycles: None,
            round_points: vec![],
            replicates: vec![],
        }
    }

    /// Overlapping intervals: placement does not move the cost, the interval stays as sampled.
    #[test]
    fn overlapping_placements_leave_the_interval() {
        let mut p = placement(vec![est(8.0, 7.9, 8.2), est(8.1, 8.0, 8.3)]);
        assert!(!p.moves_cost);
        assert!((p.spread_ns - 0.1).abs() < 1e-12);
        let c = est(8.0, 7.95, 8.05);
        assert_eq!(p.widen(c), c);
        assert!(!p.widened);
    }

    /// Two placements a cycle apart with tight intervals: the cost moves with placement, and the
    /// source's interval is widened to hold both points; its point stays the sampler's.
    #[test]
    fn separated_placements_widen_the_interval() {
        let mut p = placement(vec![
            est(7.5, 7.45, 7.55),
            est(8.4, 8.35, 8.45),
            est(7.6, 7.5, 7.7),
        ]);
        assert!(p.moves_cost);
        assert!((p.spread_ns - 0.9).abs() < 1e-12);
        assert!((p.relative_spread - 0.9 / 7.6).abs() < 1e-12);
        let w = p.widen(est(7.8, 7.75, 7.85));
        assert_eq!((w.point, w.lower, w.upper), (7.8, 7.5, 8.4));
        assert!(p.widened);
    }

    #[test]
    fn a_missing_offset_gives_no_placement() {
        let ms = vec![Some(measurement()), None];
        assert!(Placement::from_measurements(&[0, 8], &ms).is_none());
    }

    /// A real pass on this machine: every offset measured, costs positive, the spread the
    /// difference of the extreme points.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn a_real_pass_measures_every_offset() {
        let (cfg, step) = pass_config(&SamplerConfig::quick(7), true);
        let p = measure(Source::Rdtsc, &cfg, step).expect("rdtsc has placed loops");
        assert_eq!(p.offsets, vec![0, 16, 32, 48]);
        assert!(p
            .cost_ns
            .iter()
            .all(|e| e.point > 0.0 && e.lower <= e.upper));
        let (lo, hi) = p.range_ns();
        assert!((p.spread_ns - (hi - lo)).abs() < 1e-9);
        assert!(measure(Source::Vdso(super::super::Clock::Monotonic), &cfg, step).is_none());
    }
}
