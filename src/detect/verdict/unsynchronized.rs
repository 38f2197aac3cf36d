//! `tsc_unsynchronized`, decided from the matrix of per-CPU TSC offsets
//! ([`SyncResult::matrix`]): each entry bounds `tsc(cpu j) − tsc(cpu i)` and carries the round
//! trip it was measured over.

use serde_json::{json, Value};

use super::Verdict;
use crate::detect::sync::{SyncMatrix, SyncResult};

/// A `tsc_unsynchronized` "no" needs at least this many cross-CPU handoffs on every pair.
/// This machine's idle 2-vCPU check makes 6,647 in the default 300 ms; a run under a CPU load
/// made 397, too few for the minimum delta to reach the cache-line transfer time.
pub const MIN_HANDOFFS: u64 = 1000;

/// `n noun` with the noun in the plural unless `n` is 1 ("1 pair", "2 pairs").
pub fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// The matrix in nanoseconds, as the evidence's `matrix` shows it.
fn matrix_json(m: &SyncMatrix, ns: &dyn Fn(f64) -> Option<f64>) -> Value {
    let bounds: Vec<Vec<Value>> = m
        .offset_bounds_ticks
        .iter()
        .map(|row| {
            row.iter()
                .map(|b| match b {
                    Some([lo, hi]) => json!([ns(*lo as f64), ns(*hi as f64)]),
                    None => Value::Null,
                })
                .collect()
        })
        .collect();
    let round_trip: Vec<Vec<Value>> = m
        .round_trip_ticks
        .iter()
        .map(|row| {
            row.iter()
                .map(|r| json!(r.and_then(|t| ns(t as f64))))
                .collect()
        })
        .collect();
    json!({
        "cpus": m.cpus,
        "offset_bounds_ns": bounds,
        "round_trip_ns": round_trip,
        "offset_bounds_ticks": m.offset_bounds_ticks,
        "round_trip_ticks": m.round_trip_ticks,
    })
}

/// `tsc_unsynchronized` from the pairwise check; `tsc_hz` converts ticks to ns.
pub fn tsc_unsynchronized(sync: &SyncResult, tsc_hz: Option<f64>) -> Verdict {
    let ns = |ticks: f64| tsc_hz.map(|hz| ticks * 1e9 / hz);
    if let Some(why) = &sync.skipped {
        return Verdict::decided(
            false,
            json!({ "skipped": why }),
            format!("not checked: {why}"),
        );
    }
    let matrix = sync.matrix();
    let warps: u64 = sync.pairs.iter().map(|p| p.warps).sum();
    let handoffs: u64 = sync.pairs.iter().map(|p| p.handoffs).sum();
    let max_back = sync
        .pairs
        .iter()
        .map(|p| p.max_backwards_ticks)
        .max()
        .unwrap_or(0);
    let skew = sync.pairs.iter().filter_map(|p| p.skew_bound_ticks()).max();
    let pairs: Vec<Value> = sync
        .pairs
        .iter()
        .map(|p| {
            json!({
                "cpus": p.cpus,
                "handoffs": p.handoffs,
                "warps": p.warps,
                "max_backwards_ns": ns(p.max_backwards_ticks as f64),
                "offset_bounds_ns": p.offset_bounds_ticks.map(|[a, b]| [ns(a as f64), ns(b as f64)]),
                "round_trip_ns": p.round_trip_ticks().and_then(|t| ns(t as f64)),
                "skew_bound_ns": p.skew_bound_ticks().and_then(|t| ns(t as f64)),
                "pinned": p.pinned,
            })
        })
        .collect();
    let out_of_step = matrix.out_of_step();
    // A pair whose interval excludes zero, or a backwards step seen in one direction only.
    let holds = !out_of_step.is_empty() || warps > 0;
    let evidence = json!({
        "matrix": matrix_json(&matrix, &ns),
        "out_of_step": out_of_step
            .iter()
            .map(|&(i, j)| [matrix.cpus[i], matrix.cpus[j]])
            .collect::<Vec<_>>(),
        "pairs": pairs,
        "handoffs": handoffs,
        "warps": warps,
        "max_backwards_ns": ns(max_back as f64),
        "skew_bound_ns": skew.and_then(|t| ns(t as f64)),
        "rule": "holds when an entry of the offset matrix excludes zero, i.e. a cross-CPU \
                 handoff saw the TSC go backwards (Linux tsc_sync.c check_tsc_warp)",
    });
    let fmt = |t: Option<f64>| t.map_or("?".to_string(), |v| format!("{v:.0} ns"));
    let n_pairs = count(sync.pairs.len() as u64, "pair");
    let summary = if holds {
        let which: Vec<String> = out_of_step
            .iter()
            .map(|&(i, j)| format!("{}–{}", matrix.cpus[i], matrix.cpus[j]))
            .collect();
        format!(
            "TSC went backwards {} across CPUs (largest {}){}: the TSCs are out of step",
            count(warps, "time"),
            fmt(ns(max_back as f64)),
            if which.is_empty() {
                String::new()
            } else {
                format!("; offset proven non-zero between CPUs {}", which.join(", "))
            }
        )
    } else {
        let rt = sync.pairs.iter().filter_map(|p| p.round_trip_ticks()).max();
        format!(
            "no backwards step in {} over {n_pairs}; |skew| ≤ {} (round trip ≤ {})",
            count(handoffs, "cross-CPU handoff"),
            fmt(skew.and_then(|t| ns(t as f64))),
            fmt(rt.and_then(|t| ns(t as f64)))
        )
    };
    if !holds {
        if let Some(p) = sync.pairs.iter().find(|p| !p.pinned) {
            return Verdict::inconclusive(
                format!(
                    "the check could not pin its threads to CPUs {} and {}: both may have run \
                     on one CPU",
                    p.cpus[0], p.cpus[1]
                ),
                evidence,
            );
        }
        let thin = sync
            .pairs
            .iter()
            .find(|p| p.handoffs < MIN_HANDOFFS || p.offset_bounds_ticks.is_none());
        if let Some(p) = thin {
            return Verdict::inconclusive(
                format!(
                    "only {} between CPUs {} and {} (at least {MIN_HANDOFFS} needed, both \
                     ways: the CPUs were busy or the TSC reads slow); rerun idle or with a \
                     longer --sync-ms",
                    count(p.handoffs, "cross-CPU handoff"),
                    p.cpus[0],
                    p.cpus[1]
                ),
                evidence,
            );
        }
    }
    Verdict::decided(holds, evidence, summary)
}
