//! How much a short counter read's figure depends on where its loop sits in memory.
//!
//! The sampler's loop for `rdtsc` is four to seven instructions, placed wherever the compiler
//! and linker put it. Its cost can move with that placement (front-end windows of 32 and 64
//! bytes, see [`crate::sys::placed`]), which no number of rounds at one placement can show: the
//! interval would be tight and still not carry to the next build. So the counter reads are also
//! timed in loops whose heads sit at every 8th byte of a 64-byte line, the placements
//! interleaved batch by batch with the core clock timed between the batches (a moment's
//! disturbance or a clock step lands in a few batches of every placement, not on one). Where
//! two of the loops — the placed ones and the sampler's own — lie apart in core cycles, the
//! loop moves the figure: the source's intervals are widened to hold every placed loop's
//! point, and the output says so.

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
    /// Cost per read at each offset in core cycles (each batch at the clock timed beside it),
    /// when every placement's batches were clocked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_cycles: Option<Vec<Estimate>>,
    /// Highest minus lowest of the points, ns.
    pub spread_ns: f64,
    /// `spread_ns` over the median of the points.
    pub relative_spread: f64,
    /// Highest minus lowest of the points in core cycles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread_cycles: Option<f64>,
    /// Some two loops' intervals do not overlap and their points lie at least half a core
    /// cycle apart ([`MOVES_CYCLES`]): which loop times the read moves its cost. The loops are
    /// the placed ones and, once [`Placement::widen`] has counted it, the sampler's own. Decided
    /// in core cycles where every loop has them (a step of the core clock moves nanoseconds,
    /// not cycles), else in ns (points at least [`measure::SETTLED_NS`] apart).
    pub moves_cost: bool,
    /// The source's cost interval was widened to hold every placement's point.
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
        let cost_cycles: Option<Vec<Estimate>> = ms
            .iter()
            .map(|m| m.as_ref().and_then(|m| m.cost_cycles))
            .collect();
        let (lo, hi) = min_max(cost_ns.iter().map(|e| e.point));
        let points: Vec<f64> = cost_ns.iter().map(|e| e.point).collect();
        let median = crate::stats::median(&points)?;
        let moves_cost = match &cost_cycles {
            Some(c) => moves(c, MOVES_CYCLES),
            None => moves(&cost_ns, measure::SETTLED_NS),
        };
        let mut p = Placement {
            offsets: offsets.to_vec(),
            spread_ns: hi - lo,
            relative_spread: if median > 0.0 {
                (hi - lo) / median
            } else {
                f64::NAN
            },
            spread_cycles: None,
            moves_cost,
            widened: false,
            cost_ns,
            cost_cycles,
        };
        p.spread_cycles = p.range_cycles().map(|(lo, hi)| hi - lo);
        Some(p)
    }

    /// The lowest and the highest placement's point, ns.
    pub fn range_ns(&self) -> (f64, f64) {
        min_max(self.cost_ns.iter().map(|e| e.point))
    }

    /// The lowest and the highest placement's point in core cycles, when clocked.
    pub fn range_cycles(&self) -> Option<(f64, f64)> {
        self.cost_cycles
            .as_ref()
            .map(|c| min_max(c.iter().map(|e| e.point)))
    }

    /// Counts the sampler's own loop beside the placed ones — it is the read at the placement
    /// the compiler chose, in a loop that stores each value where the placed loops add it — and
    /// decides again whether the loop moves the cost. Where it does, the source's intervals in
    /// ns and in core cycles are widened to hold every placed loop's point (sets
    /// [`Placement::widened`] when that changed either). The points stay the sampler's.
    pub fn widen(
        &mut self,
        cost: Estimate,
        cycles: Option<Estimate>,
    ) -> (Estimate, Option<Estimate>) {
        let with = |placed: &[Estimate], own: Estimate| {
            let mut all = placed.to_vec();
            all.push(own);
            all
        };
        self.moves_cost = match (cycles, &self.cost_cycles) {
            (Some(c), Some(placed)) => moves(&with(placed, c), MOVES_CYCLES),
            _ => moves(&with(&self.cost_ns, cost), measure::SETTLED_NS),
        };
        if !self.moves_cost {
            return (cost, cycles);
        }
        let ns = hold(cost, &self.cost_ns);
        let cy = match (cycles, &self.cost_cycles) {
            (Some(c), Some(placed)) => Some(hold(c, placed)),
            (c, _) => c,
        };
        self.widened = ns != cost || cy != cycles;
        (ns, cy)
    }
}

/// The least spread of the loops' points, in core cycles, that counts as the loop moving the
/// cost: half a cycle. Below it, intervals of a few hundredths of a cycle can lie apart
/// (30.01 against 30.05 for `rdtsc` on the development machine) while no build would move
/// the figure by anything a reader could use.
pub const MOVES_CYCLES: f64 = 0.5;

/// The loop moves the cost: some two of `costs`' intervals do not overlap, and their points lie
/// at least `least` apart.
fn moves(costs: &[Estimate], least: f64) -> bool {
    let highest_lower = costs.iter().map(|e| e.lower).fold(f64::MIN, f64::max);
    let lowest_upper = costs.iter().map(|e| e.upper).fold(f64::MAX, f64::min);
    let (lo, hi) = min_max(costs.iter().map(|e| e.point));
    highest_lower > lowest_upper && hi - lo >= least
}

/// `cost`'s interval widened to hold every point of `placed`.
fn hold(cost: Estimate, placed: &[Estimate]) -> Estimate {
    let (lo, hi) = min_max(placed.iter().map(|e| e.point));
    Estimate {
        lower: cost.lower.min(lo),
        upper: cost.upper.max(hi),
        ..cost
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
/// warm-up each, then `cfg.rounds` rounds, each interleaved batch by batch over the placements
/// with the core clock timed between the batches, as the sampling pass does
/// (`probe/interleave.rs`): a moment's disturbance or a clock step lands in a
/// few batches of every placement, not on one placement. `None` for a source without placed
/// loops.
pub fn measure(src: Source, cfg: &SamplerConfig, step: usize) -> Option<Placement> {
    #[cfg(target_arch = "x86_64")]
    {
        use super::interleave::{self, Clocks, Pass};
        use crate::sys::placed::OFFSETS;
        let all = loops(src)?;
        let picked: Vec<usize> = (0..all.len()).step_by(step.max(1)).collect();
        let offsets: Vec<u32> = picked.iter().map(|&i| OFFSETS[i]).collect();
        let units: Vec<u64> = picked
            .iter()
            .map(|&i| {
                let l = all[i];
                measure::warm_up_loop(cfg, &mut |k| {
                    std::hint::black_box(l(k));
                })
            })
            .collect();
        let chain =
            super::coreclock::chain_iterations(interleave::CLOCK_TIMING_NS, cfg.overhead_ns);
        let mut clocks = Clocks::default();
        let mut rounds = vec![Vec::new(); picked.len()];
        for r in 0..cfg.rounds.max(1) {
            let pass = Pass {
                orders: units
                    .iter()
                    .enumerate()
                    .map(|(j, &d)| {
                        let seed = cfg.seed.wrapping_add((7919 * (r + 1) + j) as u64);
                        (measure::batch_order(cfg, seed), d)
                    })
                    .collect(),
                chain,
                overhead_ns: cfg.overhead_ns,
            };
            let fresh = interleave::interleaved_round(
                &pass,
                &mut |a, k| {
                    let l = all[picked[a]];
                    Some(measure::time_loop(
                        &mut |k| {
                            std::hint::black_box(l(k));
                        },
                        k,
                    ))
                },
                &mut clocks,
            );
            for (j, round) in fresh.into_iter().enumerate() {
                if !round.ts.is_empty() {
                    rounds[j].push(round);
                }
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

    /// A placement per (ns, cycles) pair.
    fn clocked(costs: &[(Estimate, Estimate)]) -> Placement {
        let offsets: Vec<u32> = (0..costs.len() as u32).map(|i| 16 * i).collect();
        let ms: Vec<Option<Measurement>> = costs
            .iter()
            .map(|&(ns, cycles)| {
                Some(Measurement {
                    cost_ns: ns,
                    cost_cycles: Some(cycles),
                    ..measurement()
                })
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
            contended_batches: None,
            contended_excluded: false,
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
        assert_eq!(p.widen(c, None), (c, None));
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
        let (w, cycles) = p.widen(est(7.8, 7.75, 7.85), None);
        assert_eq!((w.point, w.lower, w.upper), (7.8, 7.5, 8.4));
        assert_eq!(cycles, None);
        assert!(p.widened);
    }

    /// The placed loops agree at 52.0 cycles and the sampler's own loop reads 53.0 (it stores
    /// each value where they add it): the loop moves the cost by a cycle, and the interval is
    /// widened to hold the placed loops' points.
    #[test]
    fn the_samplers_own_loop_apart_from_the_placed_ones_widens() {
        let mut p = clocked(&[
            (est(12.41, 12.40, 12.42), est(52.0, 51.98, 52.02)),
            (est(12.41, 12.40, 12.42), est(52.02, 52.0, 52.04)),
        ]);
        assert!(!p.moves_cost, "the placed loops alone agree");
        let (ns, cy) = p.widen(est(12.65, 12.64, 12.66), Some(est(53.0, 52.98, 53.03)));
        assert!(p.moves_cost && p.widened);
        assert_eq!((ns.point, ns.lower, ns.upper), (12.65, 12.41, 12.66));
        let cy = cy.unwrap();
        assert_eq!((cy.point, cy.lower, cy.upper), (53.0, 52.0, 53.03));
    }

    /// Placements timed at two core clocks: apart in ns, alike in cycles. Placement does not
    /// move the cost (the clock did), and nothing is widened.
    #[test]
    fn a_clock_step_between_placements_is_not_placement() {
        let mut p = clocked(&[
            (est(7.5, 7.49, 7.51), est(30.0, 29.98, 30.02)),
            (est(8.5, 8.45, 8.55), est(30.0, 29.97, 30.03)),
        ]);
        assert!(!p.moves_cost, "{p:?}");
        assert_eq!(p.spread_cycles, Some(0.0));
        assert!((p.spread_ns - 1.0).abs() < 1e-12);
        let (c, cy) = (est(7.6, 7.5, 7.7), Some(est(30.0, 29.9, 30.1)));
        assert_eq!(p.widen(c, cy), (c, cy));
        assert!(!p.widened);
    }

    /// Intervals apart by hundredths of a cycle: real, and nothing a build would move by a
    /// figure a reader could use; not placement moving the cost.
    #[test]
    fn placements_apart_by_less_than_half_a_cycle_do_not_move_the_cost() {
        let p = clocked(&[
            (est(7.16, 7.15, 7.17), est(30.01, 30.0, 30.02)),
            (est(7.17, 7.16, 7.18), est(30.05, 30.04, 30.06)),
        ]);
        assert!(!p.moves_cost, "{p:?}");
    }

    /// Placements a few cycles apart: placement moves the cost, and both the ns and the cycles
    /// interval are widened to hold every placement's point.
    #[test]
    fn placements_apart_in_cycles_widen_both_intervals() {
        let mut p = clocked(&[
            (est(7.5, 7.49, 7.51), est(30.0, 29.98, 30.02)),
            (est(8.3, 8.25, 8.35), est(33.0, 32.9, 33.1)),
        ]);
        assert!(p.moves_cost);
        assert_eq!(p.spread_cycles, Some(3.0));
        let (c, cy) = p.widen(est(7.6, 7.55, 7.65), Some(est(30.2, 30.1, 30.3)));
        assert_eq!((c.lower, c.upper), (7.5, 8.3));
        let cy = cy.unwrap();
        assert_eq!((cy.point, cy.lower, cy.upper), (30.2, 30.0, 33.0));
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
        // Every placement's batches were clocked: its cycles are there, and lie where its ns
        // and a plausible clock (0.2–8 GHz) put them.
        let cycles = p.cost_cycles.as_ref().expect("clocked placements");
        for (c, n) in cycles.iter().zip(&p.cost_ns) {
            assert!((0.2..8.0).contains(&(c.point / n.point)), "{c:?} {n:?}");
        }
        assert!(measure(Source::Vdso(super::super::Clock::Monotonic), &cfg, step).is_none());
    }
}
