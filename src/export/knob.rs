//! The knob section of a report: first one compact table (per scenario and OS model: the stock
//! setting, the best setting, its speedup over stock, and what it costs in accuracy), then the
//! per-policy tables and the break-even sweep.

use super::table::{Align, Table};
use crate::fmt::{duration, ns};
use crate::price::Term;
use crate::report::Report;
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
        ("priced at (precise read)", Align::Left),
        ("inode update priced at", Align::Left),
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
            price(m),
            update_price(m),
        ]);
    }
    t.markdown()
}

/// The update price of the loop's filesystems, short: `1226 ns (ext4, live pair)`, `0 (not
/// measured)`, `--set update_ns`.
pub fn update_price(m: &ModelReport) -> String {
    let c = &m.costs;
    if c.sources.term(Term::Update).starts_with("--set") {
        return format!(
            "{} ns (--set update_ns)",
            ns(c.terms.default_ns(Term::Update))
        );
    }
    if c.terms.by_fs(Term::Update).is_empty() {
        return "0 (not measured)".into();
    }
    let all: Vec<String> = c
        .terms
        .by_fs(Term::Update)
        .iter()
        .map(|(f, v)| format!("{} ns ({f}, live pair)", ns(*v)))
        .collect();
    all.join(", ")
}

/// The precise-read cost `m` was replayed at and where it came from, short:
/// `22.8 ns (syscall:realtime − syscall:realtime_coarse)`, `1616 ns (rdtscp, trapped)`.
pub fn price(m: &ModelReport) -> String {
    format!(
        "{} ns ({})",
        ns(m.costs.precise_read_ns),
        price_source(&m.costs.sources.precise_read)
    )
}

/// The line under the answer table that says where its prices come from: the models priced
/// differently, or, under `--emulate-trap`, why every model is priced at the trapped read.
pub fn price_note(r: &Report) -> String {
    let all = prices(r.simulation.iter());
    let mut out = format!("\nPrecise reads priced at {}.", all.join("; at "));
    if r.profile.emulate_trap {
        out += " Under the emulated trap every model is priced at the trapped counter read, not \
                the measured syscall:realtime − syscall:realtime_coarse (the emulation traps only \
                user-mode reads): a hypervisor that traps RDTSC traps the kernel's TSC reads too.";
    }
    out + "\n"
}

/// The short form of a `costs.sources.precise_read`.
fn price_source(src: &str) -> String {
    if src.starts_with("--set") {
        return "--set precise_read_ns".into();
    }
    if src.contains("derived.precise_read_ns") {
        return "syscall:realtime − syscall:realtime_coarse".into();
    }
    let what = src
        .strip_prefix("profile ")
        .unwrap_or(src)
        .split_whitespace()
        .next()
        .unwrap_or(src);
    if src.contains(crate::sim::costs::EMULATED_PRICE) {
        format!("{what}, trapped")
    } else {
        what.to_string()
    }
}

/// One clause per distinct price among `models` (each model named once, in order):
/// `22.8 ns for linux@6.18 (syscall:realtime − syscall:realtime_coarse)`.
pub fn prices<'a>(models: impl Iterator<Item = &'a ModelReport>) -> Vec<String> {
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for m in models {
        let p = price(m);
        match groups.iter_mut().find(|(q, _)| *q == p) {
            Some((_, names)) if names.contains(&m.model) => {}
            Some((_, names)) => names.push(m.model.clone()),
            None => groups.push((p, vec![m.model.clone()])),
        }
    }
    groups
        .into_iter()
        .map(|(p, names)| {
            let (cost, src) = p.split_once(" (").unwrap_or((&p, ""));
            let src = src.trim_end_matches(')');
            format!("{cost} for {} ({src})", names.join(", "))
        })
        .collect()
}

/// A model's stock estimate and its fastest one; the stock setting itself when nothing beats it
/// by more than 0.1% (a tie is not a reason to change a default).
pub(super) fn stock_and_best(
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
            crate::report::SWEEP_SCENARIO
        );
        out += &t.markdown();
    }
    out
}

/// One sentence on what the knob buys in the swept scenario, at this machine's costs, with the
/// precise-read price of the best setting's model beside it and every model's price after.
pub fn sentence(r: &Report) -> String {
    let sc = crate::report::SWEEP_SCENARIO;
    let models = || {
        r.simulation
            .iter()
            .filter(move |m| m.scenario == sc || m.scenario == format!("run:{sc}"))
    };
    let best = models()
        .flat_map(|m| m.estimates.iter().map(move |e| (m, e)))
        .max_by(|a, b| a.1.speedup.total_cmp(&b.1.speedup));
    let first_gain = r
        .sweep
        .iter()
        .flat_map(|s| s.break_even.iter())
        .filter_map(|b| b.value.map(|v| (v, &b.policy)))
        .min_by(|a, b| a.0.total_cmp(&b.0));
    let Some(((m, e), (v, p))) = best.zip(first_gain) else {
        return String::new();
    };
    let all = prices(models());
    let gain = format!(
        "a 5% gain needs a precise read of {} or more ({p})",
        duration(v)
    );
    if all.len() == 1 {
        let why = match r.profile.derived.precise_read_ns {
            Some(d) if r.profile.emulate_trap => format!(
                ", the trapped read, not the {} ns measured above: a hypervisor that traps \
                 RDTSC traps the kernel's TSC reads too, which the emulation does not",
                ns(d.point)
            ),
            _ => String::new(),
        };
        format!(
            " Replaying {sc}, the best knob setting buys {:.3}× ({}) with every model's \
             precise read priced at {}{why}; {gain}.",
            e.speedup,
            e.policy,
            price(m),
        )
    } else {
        format!(
            " Replaying {sc}, the best knob setting buys {:.3}× ({}) with a precise read \
             priced at {}; {gain}. The replay priced a precise read at {}.",
            e.speedup,
            e.policy,
            price(m),
            all.join("; at ")
        )
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
