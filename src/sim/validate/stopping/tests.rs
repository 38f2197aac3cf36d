//! The rule on synthetic series: per injection, per round, an error drawn from a seeded
//! normal generator (or written out by hand), fed to [`Sequence`] one round at a time as the
//! emulation does.

use super::*;
use crate::sim::validate::noise::{pooled, pooled_at};
use crate::stats::SplitMix64;

const GOAL: f64 = 5.0;

/// A standard normal draw (Box–Muller on two uniforms in (0, 1]).
fn normal(rng: &mut SplitMix64) -> f64 {
    let u =
        |r: &mut SplitMix64| -> f64 { ((r.next_u64() >> 11) as f64 + 1.0) / (1u64 << 53) as f64 };
    let (a, b) = (u(rng), u(rng));
    (-2.0 * a.ln()).sqrt() * (2.0 * std::f64::consts::PI * b).cos()
}

/// `rounds` rounds of errors per injection: mean `means[g]`, spread `sigma`.
fn series(seed: u64, means: &[f64], sigma: f64, rounds: usize) -> Vec<Vec<f64>> {
    let mut rng = SplitMix64::new(seed);
    means
        .iter()
        .map(|&m| (0..rounds).map(|_| m + sigma * normal(&mut rng)).collect())
        .collect()
}

/// Feeds `errors` round by round; returns (why, rounds run, each injection's final estimate).
fn run(errors: &[Vec<f64>], plan: Plan) -> (Stop, usize, Vec<(f64, Option<f64>)>) {
    let mut seq = Sequence::new(plan);
    for r in 1.. {
        let seen: Vec<Vec<f64>> = errors.iter().map(|g| g[..r].to_vec()).collect();
        let est = pooled_at(&seen, plan.confidence());
        if let Some(stop) = seq.look(r, &est) {
            return (stop, r, est);
        }
    }
    unreachable!("a look at max_rounds stops")
}

fn plan(max_rounds: usize) -> Plan {
    Plan {
        max_rounds,
        goal: GOAL,
    }
}

#[test]
fn the_plan_follows_the_budget() {
    // 90 s, 10 s gone, 7 s a round: 11 rounds, 10 looks at 99.5% each.
    let p = Plan::from_budget(90.0, 10.0, 7.0, 40, GOAL);
    assert_eq!((p.max_rounds, p.looks()), (11, 10));
    assert!((p.confidence() - 0.995).abs() < 1e-12);
    // A budget too short for two rounds still runs two (an interval needs them); a cap holds.
    assert_eq!(Plan::from_budget(5.0, 4.0, 7.0, 40, GOAL).max_rounds, 2);
    assert_eq!(Plan::from_budget(900.0, 0.0, 1.0, 40, GOAL).max_rounds, 40);
    assert_eq!(Plan::from_budget(90.0, 0.0, 0.0, 12, GOAL).max_rounds, 12);
    // One look: the plain 95% interval.
    assert!((plan(2).confidence() - 0.95).abs() < 1e-12);
}

#[test]
fn verdicts() {
    assert_eq!(Verdict::of(4.9, Some(5.0), GOAL), Verdict::Within);
    assert_eq!(Verdict::of(-5.1, Some(1.0), GOAL), Verdict::Miss);
    assert_eq!(Verdict::of(0.0, Some(5.1), GOAL), Verdict::Undecided);
    assert_eq!(Verdict::of(0.0, None, GOAL), Verdict::Undecided);
    assert_eq!(Verdict::of(f64::NAN, Some(1.0), GOAL), Verdict::Undecided);
}

#[test]
fn a_steady_series_decides_at_the_second_look() {
    let errors = series(7, &[0.5, -1.0, 1.2, 0.2, -0.3, 2.0], 1.0, 20);
    let (stop, rounds, est) = run(&errors, plan(20));
    assert_eq!((stop, rounds), (Stop::Decided, FIRST_LOOK + 1));
    for (p, h) in est {
        assert_eq!(Verdict::of(p, h, GOAL), Verdict::Within, "{p} ± {h:?}");
    }
}

#[test]
fn a_noisy_series_runs_to_the_cap_and_stays_undecided() {
    let errors = series(11, &[0.0, 3.0, -2.0, 1.0], 30.0, 8);
    let (stop, rounds, est) = run(&errors, plan(8));
    assert_eq!((stop, rounds), (Stop::Budget, 8));
    assert!(est
        .iter()
        .all(|&(p, h)| Verdict::of(p, h, GOAL) == Verdict::Undecided));
}

#[test]
fn a_verdict_that_flips_is_not_taken() {
    // Injection 0 reads +4.5% after two rounds (ok), +5.5% after three and four (MISS); the
    // others stay near 0 with a small spread. A rule that stopped at the first decided look
    // would have printed ok.
    let mut errors = vec![vec![4.4, 4.6, 7.5, 5.5]];
    for g in 0..5 {
        let m = g as f64 * 0.3;
        errors.push(vec![m - 0.1, m + 0.1, m, m + 0.05]);
    }
    let first: Vec<Vec<f64>> = errors.iter().map(|g| g[..2].to_vec()).collect();
    let (p, h) = pooled(&first)[0];
    assert_eq!(Verdict::of(p, h, GOAL), Verdict::Within);
    let (stop, rounds, est) = run(&errors, plan(10));
    assert_eq!((stop, rounds), (Stop::Decided, 4));
    assert_eq!(Verdict::of(est[0].0, est[0].1, GOAL), Verdict::Miss);
}

/// The share of final intervals that hold the true error (0) over `n` seeded series, when a
/// rule stops at the first look where `stop` says so, intervals at `confidence`.
fn coverage(n: u64, max_rounds: usize, confidence: f64, guarded: bool) -> f64 {
    let (mut held, mut total) = (0usize, 0usize);
    for seed in 0..n {
        let errors = series(1000 + seed, &[0.0; 4], 4.0, max_rounds);
        let mut seq = Sequence::new(plan(max_rounds));
        for r in FIRST_LOOK..=max_rounds {
            let seen: Vec<Vec<f64>> = errors.iter().map(|g| g[..r].to_vec()).collect();
            let est = pooled_at(&seen, confidence);
            let decided = est
                .iter()
                .all(|&(p, h)| Verdict::of(p, h, GOAL) != Verdict::Undecided);
            let stop = if guarded {
                seq.look(r, &est).is_some()
            } else {
                decided || r == max_rounds
            };
            if stop {
                for (p, h) in est {
                    total += 1;
                    held += usize::from(p.abs() <= h.unwrap());
                }
                break;
            }
        }
    }
    held as f64 / total as f64
}

#[test]
fn optional_stopping_keeps_the_guarded_intervals_honest() {
    // No true error, a spread that makes the 95% interval about as wide as the goal after a
    // few rounds. Stopping at the first narrow 95% interval covers the truth less often than
    // it says; the split level with the steady-verdict guard keeps at least 95%.
    let max_rounds = 10;
    let naive = coverage(600, max_rounds, 0.95, false);
    let guarded = coverage(600, max_rounds, plan(max_rounds).confidence(), true);
    eprintln!("coverage of 0 at the stop: naive {naive:.3}, guarded {guarded:.3}");
    assert!(naive < 0.95, "naive coverage {naive}");
    assert!(guarded >= 0.95, "guarded coverage {guarded}");
    assert!(guarded > naive);
}
