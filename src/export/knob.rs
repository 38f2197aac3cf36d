//! The knob section of a report: first one compact table (per scenario and OS model: the stock
//! setting, the best setting, its speedup over stock, and what it costs in accuracy), then the
//! per-policy tables and the break-even sweep.

use super::table::{Align, Table};
use crate::fmt::{duration, ns};
use crate::gather::Report;
use crate::sim::estimate::Accuracy;
use crate::sim::result::ModelReport;

/// What an accuracy cell says for a policy that stores no timestamps in the scenario (pipe1
/// under Linux 6.15+, which no longer stamps pipe inodes): its zeros are not a measurement.
pub const NO_TIMESTAMPS: &str = "no timestamps";

/// `cell(a)`, or [`NO_TIMESTAMPS`] when the policy stamps nothing (no modification per op).
pub fn stamped(a: &Accuracy, cell: impl FnOnce(&Accuracy) -> String) -> String {
    if a.modifications_per_op > 0.0 {
        cell(a)
    } else {
        NO_TIMESTAMPS.into()
    }
}

/// `stamped`, or `-` when it stamps nothing: for the columns after the first that says so.
pub fn stamped_or_dash(a: &Accuracy, cell: impl FnOnce(&Accuracy) -> String) -> String {
    if a.modifications_per_op > 0.0 {
        cell(a)
    } else {
        "-".into()
    }
}

/// The compact answer: for each scenario and model, stock against the fastest setting.
pub fn summary(r: &Report) -> String {
    let mut t = Table::new(&[
        ("scenario", Align::Left),
        ("model", Align::Left),
        ("stock", Align::Left),
        ("best", Align::Left),
        ("speedup", Align::Right),
        ("equal successive mtimes (stock → best)", Align::Right),
        ("resolution (stock → best)", Align::Right),
    ]);
    for m in &r.simulation {
        let Some((stock, best)) = stock_and_best(m) else {
            continue;
        };
        let same = stock.policy == best.policy;
        let equal =
            |a: &Accuracy| stamped(a, |a| format!("{:.1}%", a.equal_successive_share * 100.0));
        let resolution = |a: &Accuracy| stamped_or_dash(a, |a| duration(a.resolution_ns));
        let both = |f: &dyn Fn(&Accuracy) -> String| {
            let (s, b) = (f(&stock.accuracy), f(&best.accuracy));
            if same || s == b {
                s
            } else {
                format!("{s} → {b}")
            }
        };
        t.row(vec![
            m.scenario.clone(),
            m.model.clone(),
            stock.policy.clone(),
            if same {
                "stock".into()
            } else {
                best.policy.clone()
            },
            format!("{:.3}×", best.speedup / stock.speedup),
            both(&equal),
            both(&resolution),
        ]);
    }
    t.markdown()
}

/// A model's stock estimate and its fastest one; the stock setting itself when nothing beats it
/// by more than 0.1% (a tie is not a reason to change a default).
fn stock_and_best(
    m: &ModelReport,
) -> Option<(
    &crate::sim::estimate::PolicyEstimate,
    &crate::sim::estimate::PolicyEstimate,
)> {
    let stock = m.estimates.iter().find(|e| e.stock)?;
    let best = m
        .estimates
        .iter()
        .max_by(|a, b| a.speedup.total_cmp(&b.speedup))?;
    if best.speedup <= stock.speedup * 1.001 {
        return Some((stock, stock));
    }
    Some((stock, best))
}

/// The per-policy tables and the sweep's break-even table.
pub fn sections(r: &Report) -> String {
    let mut out = String::new();
    let mut scenarios: Vec<&str> = Vec::new();
    for m in &r.simulation {
        if !scenarios.contains(&m.scenario.as_str()) {
            scenarios.push(&m.scenario);
        }
    }
    for sc in scenarios {
        out += &format!("\n### {sc}\n\n");
        let mut t = Table::new(&[
            ("policy", Align::Left),
            ("ns/op", Align::Right),
            ("ops/s", Align::Right),
            ("speedup", Align::Right),
            ("counter reads/op", Align::Right),
            ("coarse reads/op", Align::Right),
            ("equal successive mtimes", Align::Right),
            ("resolution", Align::Right),
        ]);
        for m in r.simulation.iter().filter(|m| m.scenario == sc) {
            for e in &m.estimates {
                let r = |k: &str| {
                    e.reads_per_op
                        .get(k)
                        .map_or("-".into(), |v| format!("{v:.2}"))
                };
                t.row(vec![
                    if e.stock {
                        format!("{} (stock)", e.policy)
                    } else {
                        e.policy.clone()
                    },
                    ns(e.ns_per_op),
                    format!("{:.0}", e.ops_per_sec),
                    format!("{:.3}×", e.speedup),
                    r("counter"),
                    r("coarse"),
                    stamped(&e.accuracy, |a| {
                        format!("{:.1}%", a.equal_successive_share * 100.0)
                    }),
                    stamped_or_dash(&e.accuracy, |a| duration(a.resolution_ns)),
                ]);
            }
        }
        out += &t.markdown();
    }
    if !r.sweep.is_empty() {
        out += "\n![speedup against precise-read cost](sweep.svg)\n";
        let mut t = Table::new(&[
            ("model", Align::Left),
            ("policy", Align::Left),
            ("5% speedup from", Align::Right),
        ]);
        for s in &r.sweep {
            for b in &s.break_even {
                t.row(vec![
                    s.model.clone(),
                    b.policy.clone(),
                    b.value.map_or("never in 10 ns – 100 µs".into(), |v| {
                        format!("{} per read", duration(v))
                    }),
                ]);
            }
        }
        out += &format!(
            "\nBreak-even ({}): the precise-read cost at which each setting first buys 5%.\n\n",
            crate::gather::SWEEP_SCENARIO
        );
        out += &t.markdown();
    }
    out
}

/// One sentence on what the knob buys in the swept scenario, at this machine's costs.
pub fn sentence(r: &Report) -> String {
    let sc = crate::gather::SWEEP_SCENARIO;
    let best = r
        .simulation
        .iter()
        .filter(|m| m.scenario == sc || m.scenario == format!("run:{sc}"))
        .flat_map(|m| m.estimates.iter())
        .max_by(|a, b| a.speedup.total_cmp(&b.speedup));
    let first_gain = r
        .sweep
        .iter()
        .flat_map(|s| s.break_even.iter())
        .filter_map(|b| b.value.map(|v| (v, &b.policy)))
        .min_by(|a, b| a.0.total_cmp(&b.0));
    match (best, first_gain) {
        (Some(e), Some((v, p))) => format!(
            " Replaying {sc}, the best knob setting at these costs buys {:.3}× ({}); a 5% gain \
             needs a precise read of {} or more ({p}).",
            e.speedup,
            e.policy,
            duration(v)
        ),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accuracy(modifications_per_op: f64) -> Accuracy {
        Accuracy {
            resolution_ns: 0.0,
            equal_successive_share: 0.0,
            cross_inode_equal_share: 0.0,
            cross_inode_inverted_share: 0.0,
            max_staleness_ns: 0.0,
            modifications_per_op,
            successive_pairs: 0,
            cross_inode_pairs: 0,
        }
    }

    #[test]
    fn a_policy_that_stamps_nothing_says_so_instead_of_zeros() {
        let share = |a: &Accuracy| format!("{:.1}%", a.equal_successive_share * 100.0);
        assert_eq!(stamped(&accuracy(0.0), share), NO_TIMESTAMPS);
        assert_eq!(stamped_or_dash(&accuracy(0.0), share), "-");
        assert_eq!(stamped(&accuracy(1.0), share), "0.0%");
        assert_eq!(stamped_or_dash(&accuracy(2.0), share), "0.0%");
    }
}
