//! Repeatability of `probe`: runs the full probe N times (default 5, `PROBE_SPREAD_RUNS`) in
//! this process and prints, per source, the median point estimate and the spread
//! (max − min) across runs, absolute and relative. The target on an idle machine: within 2%
//! or 0.5 ns for every source that costs 10 ns or more.
//!
//! `cargo bench --bench probe_spread` (add `-- --quick` for quick probes).
//!
//! It asserts nothing (a spread target is a speed target, which lives here, not in a test), so
//! it must not pass for a test: `cargo test --all-targets` runs every bench binary without
//! `--bench` (Cargo's `test = false` does not stop `--all-targets`), and then this one does no
//! probe and says how to run it.

use std::collections::BTreeMap;

use tscope::probe::{self, ProbeConfig};

fn main() {
    // `cargo bench` passes `--bench`; `cargo test` does not.
    if !std::env::args().any(|a| a == "--bench") {
        println!("probe_spread: not run under cargo test (it measures, it asserts nothing): cargo bench --bench probe_spread");
        return;
    }
    let quick = std::env::args().any(|a| a == "--quick");
    let runs: usize = std::env::var("PROBE_SPREAD_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let mut points: BTreeMap<usize, (String, Vec<f64>)> = BTreeMap::new();
    let mut walls = Vec::new();
    for run in 0..runs {
        let profile = probe::run(&ProbeConfig::new(Vec::new(), quick, 1 + run as u64));
        walls.push(profile.wall_s);
        for (i, s) in profile.sources.iter().enumerate() {
            if let Some(c) = s.cost_ns {
                points
                    .entry(i)
                    .or_insert_with(|| (s.id.clone(), Vec::new()))
                    .1
                    .push(c.point);
            }
        }
    }
    println!(
        "{runs} {} probes, wall s per probe: {walls:.2?}",
        if quick { "quick" } else { "full" }
    );
    println!(
        "{:<26} {:>10} {:>10} {:>8}  verdict",
        "source", "median ns", "spread ns", "spread %"
    );
    let mut failing = 0;
    for (id, v) in points.values() {
        let med = tscope::stats::median(v).unwrap_or(f64::NAN);
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let spread = hi - lo;
        let rel = spread / med * 100.0;
        let ok = med < 10.0 || rel <= 2.0 || spread <= 0.5;
        failing += usize::from(!ok);
        let verdict = if med < 10.0 {
            "(under 10 ns)"
        } else if ok {
            "ok"
        } else {
            "OVER TARGET"
        };
        println!("{id:<26} {med:>10.2} {spread:>10.2} {rel:>7.2}%  {verdict}");
    }
    println!("{failing} sources over the 2% / 0.5 ns target");
}
