//! The emulation's live runs: one chain A K1 A K2 … Kk A, round after round, every injected
//! run K between two uninjected ones A, until [`super::stopping`] says every injection's
//! error is decided or the time budget is spent.

use std::time::Instant;

use super::noise::pooled_at;
use super::stopping::{Plan, Sequence, Stop};
use super::GOAL_PCT;
use crate::workload::inject::{self, Inject, ReadSource};

/// Rounds never run past this many, whatever the budget allows.
pub const MAX_ROUNDS: usize = 40;

/// Measured ns per iteration of `name` with `reads` injected (one task: 1e9 / its rate).
/// Uninjected runs go through the same injection loop with no reads, so that the loop itself
/// is no difference between A and K.
pub fn measure(
    name: &str,
    secs: f64,
    dir: Option<&std::path::Path>,
    reads: &[(ReadSource, f64)],
) -> crate::error::Result<f64> {
    let reads: Vec<(ReadSource, f64)> = reads.iter().copied().filter(|r| r.1 > 0.0).collect();
    inject::set(Some(Inject::new(reads)));
    let r = super::run_workload(name, secs, dir);
    inject::set(None);
    let run = &r?.runs[0];
    // Interference only ever slows a loop down: the upper quartile of the per-interval rates
    // tracks the undisturbed rate better than their median on a loaded machine, and is still
    // not the single luckiest interval.
    match crate::stats::quantile(&run.samples, 0.75) {
        Some(rate) if rate > 0.0 => Ok(1e9 / rate),
        _ => run
            .ns_per_iteration
            .ok_or_else(|| crate::failure!("{name} took no sample: no measured rate")),
    }
}

/// Per injection, per round: (uninjected before, injected, uninjected after), ns per iteration.
pub type Rounds = Vec<Vec<(f64, f64, f64)>>;

/// The relative error of ops/s, predicted against measured, in one round: with base `(a+b)/2`
/// the model predicts `base + ts_ns` ns per op where `k` was measured.
pub fn round_error_pct((a, k, b): (f64, f64, f64), ts_ns: f64) -> f64 {
    (k / ((a + b) / 2.0 + ts_ns) - 1.0) * 100.0
}

/// The error of the means over an injection's rounds: measured mean against the mean base
/// plus the model's `ts_ns`.
pub fn mean_error_pct(rounds: &[(f64, f64, f64)], ts_ns: f64) -> f64 {
    let n = rounds.len().max(1) as f64;
    let base = rounds.iter().map(|x| (x.0 + x.2) / 2.0).sum::<f64>() / n;
    let k = rounds.iter().map(|x| x.1).sum::<f64>() / n;
    (k / (base + ts_ns) - 1.0) * 100.0
}

/// Each injection's per-round errors, at its timestamp cost `ts_ns[j]`.
pub fn errors(rounds: &Rounds, ts_ns: &[f64]) -> Vec<Vec<f64>> {
    rounds
        .iter()
        .zip(ts_ns)
        .map(|(r, &ts)| r.iter().map(|&x| round_error_pct(x, ts)).collect())
        .collect()
}

/// Each injection's point (the error of the means) and interval half-width at `confidence`.
pub fn estimates(rounds: &Rounds, ts_ns: &[f64], confidence: f64) -> Vec<(f64, Option<f64>)> {
    pooled_at(&errors(rounds, ts_ns), confidence)
        .into_iter()
        .zip(rounds.iter().zip(ts_ns))
        .map(|((_, half), (r, &ts))| (mean_error_pct(r, ts), half))
        .collect()
}

/// What the chain did.
#[derive(Debug)]
pub struct Chain {
    pub rounds: Rounds,
    pub stop: Stop,
    pub plan: Plan,
    /// Runs made, the first uninjected one included.
    pub runs: usize,
}

/// Runs the chain until the rule stops it: `injections[j]` are injection j's reads,
/// `ts_ns[j]` the model's timestamp ns per op for them; `started` is when the command's
/// budget of `budget_s` began.
pub fn run(
    name: &str,
    secs: f64,
    dir: Option<&std::path::Path>,
    injections: &[Vec<(ReadSource, f64)>],
    ts_ns: &[f64],
    started: Instant,
    budget_s: f64,
) -> crate::error::Result<Chain> {
    let mut rounds: Rounds = vec![Vec::new(); injections.len()];
    let mut a = measure(name, secs, dir, &[])?;
    let mut runs = 1;
    let mut seq: Option<Sequence> = None;
    let mut longest = 0.0f64;
    loop {
        let spent = started.elapsed().as_secs_f64();
        let t = Instant::now();
        for (j, reads) in injections.iter().enumerate() {
            let k = measure(name, secs, dir, reads)?;
            let b = measure(name, secs, dir, &[])?;
            rounds[j].push((a, k, b));
            a = b;
            runs += 2;
        }
        let round_s = t.elapsed().as_secs_f64();
        longest = longest.max(round_s);
        // The plan (and so each look's level) is fixed once, after the first round, before
        // any look.
        let seq = seq.get_or_insert_with(|| {
            Sequence::new(Plan::from_budget(
                budget_s, spent, round_s, MAX_ROUNDS, GOAL_PCT,
            ))
        });
        let n = rounds.first().map_or(0, Vec::len);
        let est = estimates(&rounds, ts_ns, seq.plan.confidence());
        let stop = seq.look(n, &est).or_else(|| {
            (started.elapsed().as_secs_f64() + longest > budget_s && n >= 2).then_some(Stop::Budget)
        });
        if let Some(stop) = stop {
            return Ok(Chain {
                rounds,
                stop,
                plan: seq.plan,
                runs,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_error_is_against_the_mean_of_the_runs_around() {
        // Base (90 + 110) / 2 = 100, the model adds 10: 110 predicted; 121 measured is 10%
        // slower, so the predicted ops/s are 10% high.
        assert!((round_error_pct((90.0, 121.0, 110.0), 10.0) - 10.0).abs() < 1e-9);
        assert_eq!(round_error_pct((100.0, 100.0, 100.0), 0.0), 0.0);
    }

    #[test]
    fn the_point_is_the_error_of_the_means() {
        // Bases 100 and 120 (mean 110), injected 115 and 137 (mean 126), 10 ns of reads:
        // 126 / 120 − 1 = +5%.
        let r = vec![(100.0, 115.0, 100.0), (120.0, 137.0, 120.0)];
        assert!((mean_error_pct(&r, 10.0) - 5.0).abs() < 1e-9);
        let est = estimates(&vec![r.clone(), r], &[10.0, 10.0], 0.95);
        assert!((est[0].0 - 5.0).abs() < 1e-9 && est[0].1.unwrap() > 0.0);
    }
}
