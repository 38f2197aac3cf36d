//! Sweeps (speedup against one setting, with the break-even) and back-solving the per-read cost
//! a published stock/patched pair implies.

use std::collections::BTreeMap;

use super::config::{Param, SweepSpec};
use super::estimate::{estimates, replay};
use super::replay::{Costs, Stats};
use super::result::{BreakEven, ImpliedReport, SweepEstimate, SweepPoint};
use crate::kernel::{ModelId, Policy};
use crate::price::TermPrice;
use crate::trace::CompiledScenario;

/// Applies a swept value to the costs or the base.
pub fn with_value(param: Param, v: f64, costs: Costs, base: f64) -> (Costs, f64) {
    let mut c = costs;
    let mut b = base;
    match param {
        Param::PreciseReadNs => c.precise_read_ns = v,
        Param::CoarseReadNs => c.coarse_read_ns = v,
        Param::Term(t) => c = c.with(t, TermPrice::uniform(v)),
        Param::TickNs => c.tick_ns = v,
        Param::BaseNs => b = v,
    }
    (c, b)
}

/// Speedups of every policy of `model` at every swept value, and each non-stock policy's
/// break-even (where its speedup crosses `threshold`).
pub fn sweep(
    model: ModelId,
    spec: &SweepSpec,
    costs: Costs,
    base: f64,
    scenario: &CompiledScenario,
    iterations: u64,
    threshold: f64,
) -> (Vec<SweepPoint>, Vec<BreakEven>) {
    let points: Vec<SweepPoint> = spec
        .values()
        .into_iter()
        .map(|v| {
            let (c, b) = with_value(spec.param, v, costs, base);
            SweepPoint {
                value: v,
                estimates: estimates(model, c, scenario, b, iterations)
                    .into_iter()
                    .map(|e| SweepEstimate {
                        policy: e.policy,
                        ns_per_op: e.ns_per_op,
                        speedup: e.speedup,
                    })
                    .collect(),
            }
        })
        .collect();
    let policies = model.policies();
    let break_even = policies
        .iter()
        .enumerate()
        .filter(|(_, p)| !p.stock)
        .map(|(i, p)| BreakEven {
            policy: p.name(),
            value: crossing(&points, i, threshold),
        })
        .collect();
    (points, break_even)
}

/// Where policy `i`'s speedup first crosses `threshold`, interpolated linearly in log(value).
pub fn crossing(points: &[SweepPoint], i: usize, threshold: f64) -> Option<f64> {
    points.windows(2).find_map(|w| {
        let (a, b) = (w[0].estimates[i].speedup, w[1].estimates[i].speedup);
        let (da, db) = (a - threshold, b - threshold);
        if da == 0.0 {
            return Some(w[0].value);
        }
        if da.signum() == db.signum() || db == 0.0 && da == 0.0 {
            return if db == 0.0 { Some(w[1].value) } else { None };
        }
        let f = da / (da - db);
        let (la, lb) = (w[0].value.ln(), w[1].value.ln());
        Some((la + f * (lb - la)).exp())
    })
}

fn per_op(s: &Stats) -> (f64, f64, f64) {
    let u = s.units().max(1) as f64;
    (
        s.counter_reads() as f64 / u,
        s.coarse_reads() as f64 / u,
        s.updates as f64 / u,
    )
}

fn reads_map(s: &Stats) -> BTreeMap<String, f64> {
    let (n, k, _) = per_op(s);
    BTreeMap::from([("coarse".to_string(), k), ("counter".to_string(), n)])
}

/// What a back-solve found (the report adds scenario, profile and costs).
#[derive(Debug)]
pub struct Implied {
    pub precise_read_ns: Option<f64>,
    pub base_ns_per_op: Option<f64>,
    pub stock: Stats,
    pub patched: Stats,
}

/// A published stock/patched pair and the policies it is read under.
#[derive(Debug, Clone, Copy)]
pub struct Pair<'a> {
    pub stock: &'a Policy,
    pub patched: &'a Policy,
    pub stock_ops_per_sec: f64,
    pub patched_ops_per_sec: f64,
}

/// Solves `T_s = B + n_s·c + k_s·q + u_s·U` and `T_p = B + n_p·c + k_p·q + u_p·U` for the base
/// `B` and the counter read cost `c`, with `q` (coarse read) and `U` (update) known and the
/// read counts from replays at the current solution (repeated: counts depend a little on how
/// fast the loop runs).
pub fn implied(
    pair: Pair<'_>,
    costs: Costs,
    scenario: &CompiledScenario,
    iterations: u64,
) -> Implied {
    let (stock, patched) = (pair.stock, pair.patched);
    let (stock_ops_per_sec, patched_ops_per_sec) =
        (pair.stock_ops_per_sec, pair.patched_ops_per_sec);
    let model = patched.model;
    let table = model.table();
    let tasks = scenario.tasks as f64;
    let (ts, tp) = (
        tasks * 1e9 / stock_ops_per_sec,
        tasks * 1e9 / patched_ops_per_sec,
    );
    let mut c = costs.precise_read_ns;
    let mut base = ts;
    let mut solved = (None, None);
    let mut last = (Stats::default(), Stats::default());
    for _ in 0..6 {
        let run = |p: &Policy, b: f64, c: f64| {
            let cc = Costs {
                precise_read_ns: c.max(0.0),
                ..costs
            };
            replay(&table, p, cc, scenario, b.max(0.0), iterations)
        };
        let s = run(stock, base, c);
        let p = run(patched, base, c);
        let (ns, ks, us) = per_op(&s);
        let (np, kp, up) = per_op(&p);
        last = (s, p);
        if (ns - np).abs() < 1e-9 {
            solved = (None, None);
            break;
        }
        let q = costs.coarse_read_ns;
        let u = costs.term(crate::price::Term::Update).default_ns;
        c = (ts - tp - (ks - kp) * q - (us - up) * u) / (ns - np);
        base = ts - ns * c - ks * q - us * u;
        solved = (Some(c), Some(base));
    }
    Implied {
        precise_read_ns: solved.0,
        base_ns_per_op: solved.1,
        stock: last.0,
        patched: last.1,
    }
}

/// Reads the implied cost: a trapped clock, a plain counter, or neither.
pub fn verdict(c: Option<f64>, base: Option<f64>) -> String {
    match (c, base) {
        (None, _) => "not identifiable: both policies take the same number of counter reads \
                      per op, so under this model the knob cannot explain the pair"
            .into(),
        (Some(c), _) if c <= 0.0 => format!(
            "inconsistent: the pair implies a negative read cost ({c:.0} ns) under this model"
        ),
        (Some(_), Some(b)) if b < 0.0 => format!(
            "inconsistent: the implied base cost is negative ({b:.0} ns): the model's counter \
             reads cannot account for the stock figure"
        ),
        (Some(c), _) if c < 100.0 => format!(
            "plain counter (tens of ns): {c:.0} ns per read is what rdtsc/rdtscp cost when \
             executed natively, in or out of a VM"
        ),
        (Some(c), _) if c < 1000.0 => format!(
            "slow but not trapped: {c:.0} ns per read is more than a native counter read and \
             less than a VM exit (an MMIO clocksource such as HPET, or a contended clock)"
        ),
        (Some(c), _) => format!(
            "trapped clock (microseconds): {:.1} us per read is a VM exit or an emulated \
             clocksource per timestamp",
            c / 1000.0
        ),
    }
}

/// The full report of a back-solve.
pub fn implied_report(
    scenario_name: &str,
    pair: Pair<'_>,
    r: &Implied,
    profile: super::result::ProfileNote,
    costs: super::result::CostsOut,
) -> ImpliedReport {
    let (stock, patched) = (pair.stock, pair.patched);
    let (stock_ops_per_sec, patched_ops_per_sec) =
        (pair.stock_ops_per_sec, pair.patched_ops_per_sec);
    let model = patched.model;
    let (ns, ks, us) = per_op(&r.stock);
    let (np, kp, up) = per_op(&r.patched);
    let mut reasoning = vec![
        format!(
            "per op: stock {:.1} ns, patched {:.1} ns, difference {:.1} ns",
            1e9 / stock_ops_per_sec,
            1e9 / patched_ops_per_sec,
            1e9 / stock_ops_per_sec - 1e9 / patched_ops_per_sec
        ),
        format!(
            "the model says the knob changes counter reads per op from {ns:.3} to {np:.3}, \
             coarse reads from {ks:.3} to {kp:.3}, timestamp stores from {us:.3} to {up:.3}"
        ),
    ];
    if let Some(c) = r.precise_read_ns {
        reasoning.push(format!(
            "(difference - coarse and store changes) / {:.3} counter reads saved = {c:.1} ns \
             per counter read",
            ns - np
        ));
    }
    ImpliedReport {
        schema_version: super::result::SIMULATE_SCHEMA_VERSION,
        scenario: scenario_name.to_string(),
        model: model.label(),
        stock_policy: stock.name(),
        patched_policy: patched.name(),
        stock_ops_per_sec,
        patched_ops_per_sec,
        published_speedup: patched_ops_per_sec / stock_ops_per_sec,
        stock_reads_per_op: reads_map(&r.stock),
        patched_reads_per_op: reads_map(&r.patched),
        precise_read_ns: r.precise_read_ns,
        base_ns_per_op: r.base_ns_per_op,
        verdict: verdict(r.precise_read_ns, r.base_ns_per_op),
        reasoning,
        profile,
        costs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(value: f64, s: f64) -> SweepPoint {
        SweepPoint {
            value,
            estimates: vec![SweepEstimate {
                policy: "p".into(),
                ns_per_op: 1.0,
                speedup: s,
            }],
        }
    }

    #[test]
    fn crossing_interpolates_in_log_space() {
        let pts = vec![point(10.0, 1.0), point(1000.0, 1.1)];
        let v = crossing(&pts, 0, 1.05).unwrap();
        assert!((v - 100.0).abs() < 1e-9, "{v}");
        assert_eq!(crossing(&pts, 0, 2.0), None);
    }

    #[test]
    fn verdicts_by_magnitude() {
        assert!(verdict(Some(48.0), Some(300.0)).starts_with("plain counter"));
        assert!(verdict(Some(9700.0), Some(10.0)).starts_with("trapped"));
        assert!(verdict(None, None).starts_with("not identifiable"));
        assert!(verdict(Some(-5.0), Some(1.0)).starts_with("inconsistent"));
    }
}
