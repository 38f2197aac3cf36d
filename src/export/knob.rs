//! The knob section of a report: first one compact table (per scenario and OS model: the stock
//! setting, the best setting, its speedup over stock, and what it costs in accuracy), then the
//! per-policy tables and the break-even sweep.

use super::table::{Align, Table};
use crate::fmt::{duration, ns};
use crate::gather::Report;
use crate::sim::result::ModelReport;

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
        let pct = |v: f64| format!("{:.1}%", v * 100.0);
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
            if same {
                pct(stock.accuracy.equal_successive_share)
            } else {
                format!(
                    "{} → {}",
                    pct(stock.accuracy.equal_successive_share),
                    pct(best.accuracy.equal_successive_share)
                )
            },
            if same {
                duration(stock.accuracy.resolution_ns)
            } else {
                format!(
                    "{} → {}",
                    duration(stock.accuracy.resolution_ns),
                    duration(best.accuracy.resolution_ns)
                )
            },
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
                    format!("{:.1}%", e.accuracy.equal_successive_share * 100.0),
                    duration(e.accuracy.resolution_ns),
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
