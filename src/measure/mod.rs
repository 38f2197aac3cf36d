//! The sampler: it times a closure and does not know what the closure measures.
//!
//! # Timing model
//!
//! One batch runs the operation `k` times back to back between two reads of the timer
//! (`std::time::Instant`, i.e. `CLOCK_MONOTONIC` through the vDSO):
//!
//! ```text
//! t(k) = a + b·k + ε,   ε ≥ 0 apart from the timer's own jitter
//! ```
//!
//! `a` is the fixed cost of a batch (two timer reads, loop entry: measured directly by
//! [`timer_overhead_ns`] and passed in as [`SamplerConfig::overhead_ns`]), `b` the cost of one
//! call plus one loop iteration and one `black_box`, `ε` interference: interrupts, preemption,
//! a vCPU descheduled by the host, caches another task cooled. Interference only ever *adds*
//! time, so the sampler estimates the undisturbed `b` from the low end of the batches, not
//! their middle.
//!
//! A round takes `n` batches at `k = d, 2d, …, n·d` in a seeded random order (so drift does not
//! line up with `k`); `d` comes from one warm-up per operation, so the smallest batch is long
//! against `a` (tens of µs against tens of ns). Each batch gives a per-call cost
//! `(t − a) / k`; the point is the lower quartile ([`SamplerConfig::quantile`]) of the per-call
//! costs of all rounds, with a percentile-bootstrap interval over the batches, widened to hold
//! every round's own quartile (rounds taken at different moments that disagree make the
//! interval wide, not the point wrong). Where the caller times independent register adds
//! beside each batch ([`Round::lanes`]), batches whose adds ran slow shared the core with
//! another hardware thread and are left out when enough others ran alone ([`CONTENDED`]).
//! Sampling stops once the interval is tight
//! ([`Measurement::settled`]) or after [`SamplerConfig::max_rounds`]. The Theil–Sen intercept
//! of `t` on `k` is reported beside it.

mod paired;

pub use paired::{paired_difference, paired_difference_sensed, PairedConfig, PairedDifference};

use std::hint::black_box;
use std::time::{Duration, Instant};

use crate::stats::{self, Estimate, SplitMix64};
use crate::sys;

/// How long and how densely to sample one operation.
#[derive(Debug, Clone, Copy)]
pub struct SamplerConfig {
    /// Batches per round (batch sizes `d..=n·d`).
    pub samples: usize,
    /// Time to spend in the batches of one round, warm-up excluded.
    pub budget: Duration,
    /// Time to spend warming up (caches, branch predictors, frequency) and estimating `d`.
    pub warmup: Duration,
    /// Bootstrap resamples for the interval.
    pub resamples: usize,
    /// Rounds every operation gets before sequential stopping may end its sampling.
    pub rounds: usize,
    /// Rounds an operation gets at most while its interval stays wide.
    pub max_rounds: usize,
    /// Sampling stops when the interval is at most this wide relative to the point (or
    /// [`SETTLED_NS`] wide in absolute terms).
    pub settle_width: f64,
    /// The quantile of the per-call costs that is the point (0.25: the lower quartile).
    pub quantile: f64,
    /// Fixed cost of one batch (two timer reads), subtracted before dividing by `k`.
    pub overhead_ns: f64,
    /// Seed of the bootstrap and of the batch order.
    pub seed: u64,
    /// Confidence level of the interval.
    pub level: f64,
    /// The fastest lanes (core cycles per add) of the whole run, against which a batch's lanes
    /// say whether it shared its core ([`CONTENDED`]); `None`: the operation's own batches'.
    pub lanes_best: Option<f64>,
}

/// A batch whose lanes (core cycles per add of independent register adds timed beside it,
/// [`Round::lanes`]) read this much slower than the run's fastest lanes ([`best_lanes`])
/// shared its core. On the development machine (a KVM guest on an AMD EPYC host, six probes)
/// `syscall:monotonic` batches whose lanes read within 5% of the fastest cost 906–920 cycles
/// (lower quartile), those 5–15% slower 923–1,035 and the rest 1,035–1,165; `rdtsc` cost 35.0
/// in all of them. Idle lanes read within 1% of each other.
pub const CONTENDED: f64 = 1.05;

/// The estimate leaves out batches that shared their core when at least this share of the
/// batches, and [`MIN_UNCONTENDED`] of them, did not: few, because the two kinds do not
/// overlap; on that host the sibling was busy for 40–99% of a probe's batches.
pub const UNCONTENDED_SHARE: f64 = 0.05;
/// See [`UNCONTENDED_SHARE`].
pub const MIN_UNCONTENDED: usize = 8;

/// An interval narrower than this many ns is as good as a loop can resolve: settled.
pub const SETTLED_NS: f64 = 0.5;

impl SamplerConfig {
    /// Defaults for a full probe: rounds of about 8 ms per operation, 2 to 5 of them, of 48
    /// batches each (more, shorter batches than 16 halved the spread between runs in core
    /// cycles: 0.0–0.1% against 0.1–0.4% for counter reads and vDSO calls, the C loop's
    /// sharpness; docs/methodology.md).
    pub fn full(seed: u64) -> Self {
        SamplerConfig {
            samples: 48,
            budget: Duration::from_millis(8),
            warmup: Duration::from_millis(1),
            resamples: 300,
            rounds: 2,
            max_rounds: 5,
            settle_width: 0.03,
            quantile: 0.25,
            overhead_ns: 0.0,
            seed,
            level: 0.95,
            lanes_best: None,
        }
    }

    /// Defaults for `--quick`: rounds of about 2 ms per operation, 2 or 3 of them.
    pub fn quick(seed: u64) -> Self {
        SamplerConfig {
            samples: 12,
            budget: Duration::from_micros(2000),
            warmup: Duration::from_micros(300),
            resamples: 200,
            rounds: 2,
            max_rounds: 3,
            settle_width: 0.06,
            ..SamplerConfig::full(seed)
        }
    }
}

/// What the sampler found for one operation.
#[derive(Debug, Clone)]
pub struct Measurement {
    /// Cost of one call in nanoseconds (low quantile of the batches' per-call costs) with its
    /// interval.
    pub cost_ns: Estimate,
    /// Theil–Sen intercept of `t` on `k`, in nanoseconds. Poorly determined (slope error × the
    /// largest batch), so it is reported for transparency, not as the overhead; see
    /// [`timer_overhead_ns`].
    pub intercept_ns: f64,
    /// The batch unit `d`: batches ran `d, 2d, …, n·d` iterations.
    pub batch_unit: u64,
    /// Number of batches taken.
    pub samples: usize,
    /// Total calls made while sampling (warm-up excluded).
    pub iterations: u64,
    /// Involuntary context switches of this thread during sampling; `None` when the counters
    /// could not be read (unknown, not 0).
    pub involuntary_switches: Option<u64>,
    /// The bootstrap gave no interval: `cost_ns` is the bare point (zero width), which must not
    /// pass for a confident figure.
    pub interval_failed: bool,
    /// The cost in core cycles, the same estimator over each batch's per-call cost times the
    /// core clock it ran at; `None` unless every batch's clock was measured.
    pub cost_cycles: Option<Estimate>,
    /// Batches that shared their core ([`CONTENDED`]); `None` where the lanes were not timed.
    pub contended_batches: Option<usize>,
    /// Whether those batches were left out of the estimate (they are when enough others
    /// remain, [`UNCONTENDED_SHARE`]).
    pub contended_excluded: bool,
    /// The point of each round on its own.
    pub round_points: Vec<f64>,
    /// Bootstrap replicates of the point.
    pub replicates: Vec<f64>,
}

impl Measurement {
    /// Whether sampling may stop: the interval is at most `settle_width` of the point wide (or
    /// under [`SETTLED_NS`]), came from a real bootstrap, and does not hold batches that shared
    /// their core ([`Measurement::contended_kept`]).
    pub fn settled(&self, settle_width: f64) -> bool {
        let c = self.cost_ns;
        !self.interval_failed
            && (c.relative_width() <= settle_width || c.upper - c.lower <= SETTLED_NS)
            && !self.contended_kept()
    }

    /// Some batches shared their core and too few others ran alone to leave them out: the
    /// cost includes another hardware thread's share (more rounds may find more).
    pub fn contended_kept(&self) -> bool {
        self.contended_batches.is_some_and(|c| c > 0) && !self.contended_excluded
    }
}

/// One round of batches of one operation.
#[derive(Debug, Clone, Default)]
pub struct Round {
    /// Calls per batch.
    pub ks: Vec<f64>,
    /// Elapsed ns per batch.
    pub ts: Vec<f64>,
    /// Involuntary context switches during the round (`None`: unknown).
    pub involuntary_switches: Option<u64>,
    /// The core clock (GHz) each batch ran at, when it was measured beside the batches (empty
    /// otherwise): turns a batch's nanoseconds into core cycles.
    pub ghz: Vec<f64>,
    /// Core cycles per add of eight independent lanes of register adds timed beside each batch
    /// (empty where not timed): slower lanes than the operation's fastest mean another hardware
    /// thread shared the core during the batch ([`CONTENDED`]).
    pub lanes: Vec<f64>,
}

impl Round {
    /// The round with only the batches `keep` says to keep.
    fn keeping(&self, keep: &[bool]) -> Round {
        let pick = |v: &[f64]| -> Vec<f64> {
            v.iter()
                .zip(keep)
                .filter(|(_, &k)| k)
                .map(|(x, _)| *x)
                .collect()
        };
        Round {
            ks: pick(&self.ks),
            ts: pick(&self.ts),
            involuntary_switches: self.involuntary_switches,
            ghz: if self.ghz.len() == self.ts.len() {
                pick(&self.ghz)
            } else {
                Vec::new()
            },
            lanes: pick(&self.lanes),
        }
    }
}

/// The fastest of a set of lanes (core cycles per add): their 0.5% quantile, ignoring any
/// under [`LANES_FLOOR`]; `None` without one.
///
/// A low quantile, not the median: on a host whose other hardware thread is busy most of the
/// time, moments with the core to itself can be a few percent of the batches. Not the least
/// either: a chain slowed beside a busy sibling reads a slow clock, and lanes converted at it
/// read too fast (0.20 cycles per add, five adds a cycle on a four-ALU Zen 4, seen once in
/// three probes on the development machine).
pub fn best_lanes(lanes: &[f64]) -> Option<f64> {
    let ok: Vec<f64> = lanes
        .iter()
        .copied()
        .filter(|&l| l >= LANES_FLOOR)
        .collect();
    stats::quantile(&ok, 0.005)
}

/// No x86-64 core issues more than eight register adds a cycle (six ALUs on Zen 5 and Lion
/// Cove): lanes faster than this were misread.
pub const LANES_FLOOR: f64 = 0.125;

/// The batches to keep, against `run_best` (else the rounds' own [`best_lanes`]): `None` where
/// some batch has no lanes (not timed) or where too few batches ran with the core to themselves
/// ([`UNCONTENDED_SHARE`]), else one mask per round; and the number of contended batches
/// (`None` where not every batch has lanes).
fn uncontended(rounds: &[Round], run_best: Option<f64>) -> (Option<Vec<Vec<bool>>>, Option<usize>) {
    let timed = rounds.iter().all(|r| r.lanes.len() == r.ts.len());
    let all: Vec<f64> = rounds
        .iter()
        .flat_map(|r| r.lanes.iter().copied())
        .collect();
    let Some(best) = run_best.or_else(|| best_lanes(&all)).filter(|_| timed) else {
        return (None, None);
    };
    if all.is_empty() {
        return (None, None);
    }
    let masks: Vec<Vec<bool>> = rounds
        .iter()
        .map(|r| r.lanes.iter().map(|&l| l < best * CONTENDED).collect())
        .collect();
    let kept = masks.iter().flatten().filter(|&&k| k).count();
    let contended = all.len() - kept;
    let enough = kept >= MIN_UNCONTENDED && kept as f64 >= UNCONTENDED_SHARE * all.len() as f64;
    ((contended > 0 && enough).then_some(masks), Some(contended))
}

/// Runs `f` `k` times between two timer reads and returns the elapsed nanoseconds.
#[inline(never)]
pub fn time_batch<R, F: FnMut() -> R>(f: &mut F, k: u64) -> f64 {
    let start = Instant::now();
    for _ in 0..black_box(k) {
        black_box(f());
    }
    start.elapsed().as_nanos() as f64
}

/// Warms `f` up for `cfg.warmup` (doubling batches) and returns the batch unit `d` that makes
/// one round of `cfg.samples` batches fill `cfg.budget`.
pub fn warm_up<R, F: FnMut() -> R>(cfg: &SamplerConfig, f: &mut F) -> u64 {
    warm_up_timed(cfg, &mut |k| time_batch(f, k))
}

/// [`warm_up`] for an operation that brings its own loop: `run(k)` makes `k` calls.
pub fn warm_up_loop<L: FnMut(u64)>(cfg: &SamplerConfig, run: &mut L) -> u64 {
    warm_up_timed(cfg, &mut |k| time_loop(run, k))
}

/// Times `run(k)`, an operation's own loop of `k` calls, between two timer reads (ns).
pub fn time_loop<L: FnMut(u64)>(run: &mut L, k: u64) -> f64 {
    let start = Instant::now();
    run(black_box(k));
    start.elapsed().as_nanos() as f64
}

/// The warm-up, given `timed(k)`: the elapsed ns of a batch of `k` calls.
fn warm_up_timed<T: FnMut(u64) -> f64>(cfg: &SamplerConfig, timed: &mut T) -> u64 {
    let warm_start = Instant::now();
    let mut k = 1u64;
    let mut per_call_ns;
    loop {
        let t = timed(k);
        per_call_ns = t / k as f64;
        if warm_start.elapsed() >= cfg.warmup || k >= 1 << 40 {
            break;
        }
        k *= 2;
    }
    let per_call_ns = per_call_ns.max(0.1);
    let n = cfg.samples.max(2);
    let units = (n * (n + 1) / 2) as f64;
    ((cfg.budget.as_nanos() as f64 / (per_call_ns * units)) as u64).max(1)
}

/// Takes one round: `cfg.samples` batches of `d, 2d, …, n·d` calls in an order drawn from `seed`.
pub fn sample_round<R, F: FnMut() -> R>(
    cfg: &SamplerConfig,
    d: u64,
    seed: u64,
    f: &mut F,
) -> Round {
    sample_round_timed(cfg, d, seed, &mut |k| time_batch(f, k))
}

/// The batch multipliers `1..=n` of one round in the order drawn from `seed`: batch `j` of the
/// round makes `order[j] · d` calls.
pub fn batch_order(cfg: &SamplerConfig, seed: u64) -> Vec<u64> {
    let n = cfg.samples.max(2);
    let mut rng = SplitMix64::new(seed ^ 0x005E_ED0F_0DE5);
    let mut order: Vec<u64> = (1..=n as u64).collect();
    for i in (1..order.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        order.swap(i, j);
    }
    order
}

/// One round, given `timed(k)`: the elapsed ns of a batch of `k` calls.
fn sample_round_timed<T: FnMut(u64) -> f64>(
    cfg: &SamplerConfig,
    d: u64,
    seed: u64,
    timed: &mut T,
) -> Round {
    let n = cfg.samples.max(2);
    let order = batch_order(cfg, seed);
    let before = sys::cpu::context_switches().map(|s| s.1).ok();
    let mut round = Round {
        ks: Vec::with_capacity(n),
        ts: Vec::with_capacity(n),
        ..Round::default()
    };
    for i in order {
        let k = i * d;
        round.ts.push(timed(k));
        round.ks.push(k as f64);
    }
    let after = sys::cpu::context_switches().map(|s| s.1).ok();
    round.involuntary_switches = after.zip(before).map(|(a, b)| a.saturating_sub(b));
    round
}

/// The per-call costs `(t − overhead) / k` of a round's batches.
fn per_call(r: &Round, overhead_ns: f64) -> impl Iterator<Item = f64> + '_ {
    r.ks.iter()
        .zip(&r.ts)
        .map(move |(k, t)| (t - overhead_ns) / k)
}

/// The quantile estimate over every round's per-call costs: the point, its bootstrap interval
/// widened to hold every round's own point (`None` when the bootstrap gave none), the rounds'
/// points and the replicates.
type Quantiled = (f64, Option<Estimate>, Vec<f64>, Vec<f64>);

fn quantiled(cfg: &SamplerConfig, per_round: &[Vec<f64>]) -> Option<Quantiled> {
    let costs: Vec<f64> = per_round.iter().flatten().copied().collect();
    let point = stats::quantile(&costs, cfg.quantile)?;
    let round_points: Vec<f64> = per_round
        .iter()
        .filter_map(|r| stats::quantile(r, cfg.quantile))
        .collect();
    let replicates = stats::bootstrap(&costs, cfg.resamples, cfg.seed, |v| {
        stats::quantile_in_place(v, cfg.quantile)
    });
    let interval = stats::percentile_interval(&replicates, point, cfg.level).map(|e| Estimate {
        lower: round_points.iter().copied().fold(e.lower, f64::min),
        upper: round_points.iter().copied().fold(e.upper, f64::max),
        ..e
    });
    Some((point, interval, round_points, replicates))
}

/// The estimate from the rounds taken so far (see the module doc); `None` for no batches.
pub fn estimate(cfg: &SamplerConfig, d: u64, all_rounds: &[Round]) -> Option<Measurement> {
    let (keep, contended_batches) = uncontended(all_rounds, cfg.lanes_best);
    let kept: Vec<Round>;
    let rounds = match &keep {
        Some(masks) => {
            kept = all_rounds
                .iter()
                .zip(masks)
                .map(|(r, m)| r.keeping(m))
                .collect();
            &kept[..]
        }
        None => all_rounds,
    };
    let per_round: Vec<Vec<f64>> = rounds
        .iter()
        .map(|r| per_call(r, cfg.overhead_ns).collect())
        .collect();
    let (point, interval, round_points, replicates) = quantiled(cfg, &per_round)?;
    let clocked = rounds.iter().all(|r| r.ghz.len() == r.ts.len());
    let cost_cycles = clocked
        .then(|| {
            let cycles: Vec<Vec<f64>> = rounds
                .iter()
                .map(|r| {
                    per_call(r, cfg.overhead_ns)
                        .zip(&r.ghz)
                        .map(|(ns, ghz)| ns * ghz)
                        .collect()
                })
                .collect();
            quantiled(cfg, &cycles)
        })
        .flatten()
        .map(|(point, interval, ..)| interval.unwrap_or(Estimate::exact(point)));
    let samples = all_rounds.iter().map(|r| r.ts.len()).sum();
    let ks: Vec<f64> = rounds.iter().flat_map(|r| r.ks.iter().copied()).collect();
    let ts: Vec<f64> = rounds.iter().flat_map(|r| r.ts.iter().copied()).collect();
    let intercept_ns = stats::theil_sen(&ks, &ts).map_or(f64::NAN, |(a, _)| a);
    Some(Measurement {
        interval_failed: interval.is_none(),
        cost_ns: interval.unwrap_or(Estimate::exact(point)),
        intercept_ns,
        batch_unit: d,
        samples,
        iterations: all_rounds.iter().flat_map(|r| &r.ks).sum::<f64>() as u64,
        involuntary_switches: all_rounds.iter().map(|r| r.involuntary_switches).sum(),
        cost_cycles,
        contended_batches,
        contended_excluded: keep.is_some(),
        round_points,
        replicates,
    })
}

/// Measures the cost of one call of `f` under `cfg`: one warm-up, then rounds until the
/// estimate is settled or `cfg.max_rounds` were taken.
///
/// Returns `None` only if no batch could be taken, which a valid configuration never produces.
pub fn measure<R, F: FnMut() -> R>(cfg: &SamplerConfig, mut f: F) -> Option<Measurement> {
    let d = warm_up(cfg, &mut f);
    let mut rounds = Vec::new();
    loop {
        let seed = cfg.seed.wrapping_add(rounds.len() as u64);
        rounds.push(sample_round(cfg, d, seed, &mut f));
        let m = estimate(cfg, d, &rounds)?;
        let enough = rounds.len() >= cfg.rounds.max(1);
        if (enough && m.settled(cfg.settle_width)) || rounds.len() >= cfg.max_rounds.max(1) {
            return Some(m);
        }
    }
}

/// The cost of an empty batch (two timer reads around a zero-iteration loop), median of
/// `reps` tries, in nanoseconds: the fixed overhead removed from every batch.
pub fn timer_overhead_ns(reps: usize) -> f64 {
    let mut nop = || ();
    let ts: Vec<f64> = (0..reps.max(1)).map(|_| time_batch(&mut nop, 0)).collect();
    stats::median(&ts).unwrap_or(0.0)
}

#[cfg(test)]
mod tests;
