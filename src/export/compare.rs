//! The printed forms of a [`Comparison`]: the machines, the sources side by side with ratios to
//! the first input, and the verdicts where detect results were given.

use serde::Serialize;

use super::table::{Align, Table};
use super::{Block, Render, Style};
use crate::compare::lkp::Decision;
use crate::compare::{ratio, Change, Comparison, SourceRow, Unit, UnitChoice};
use crate::fmt::{csv_num, estimate, ns, opt};
use crate::stats::Estimate;

impl Render for Comparison {
    fn kind(&self) -> Option<crate::input::Kind> {
        Some(crate::input::Kind::Compare)
    }

    fn json(&self) -> impl Serialize + '_ {
        self
    }

    fn blocks(&self, style: Style) -> Vec<Block> {
        let mut b = Vec::new();
        if let Some(note) = machine_note(self) {
            b.extend([Block::Text(note), Block::Blank]);
        }
        if let Some(note) = clock_note(self) {
            b.extend([Block::Text(note), Block::Blank]);
        }
        b.extend([Block::Text(noise_note(self)), Block::Blank]);
        b.extend([Block::Table(machines(self)), Block::Blank]);
        if self.sources.iter().any(|r| !r.lkp.is_empty()) {
            b.extend(lkp_blocks(self, style));
        } else {
            b.push(Block::Table(sources(self)));
        }
        if !self.verdicts.is_empty() {
            b.extend([Block::Blank, Block::Table(verdicts(self))]);
        }
        b
    }

    fn csv(&self) -> Table {
        let mut head = vec!["source".to_string()];
        let unit = self.unit.as_str();
        let lkp = self.sources.iter().any(|r| !r.lkp.is_empty());
        for (i, c) in self.columns.iter().enumerate() {
            head.push(format!("{}_{unit}", c.label));
            head.push(format!("{}_lower_{unit}", c.label));
            head.push(format!("{}_upper_{unit}", c.label));
            if i > 0 {
                head.push(format!("{}_ratio", c.label));
                head.push(format!("{}_ratio_plus_minus", c.label));
                head.push(format!("{}_change", c.label));
                head.push(format!("{}_ratio_lower", c.label));
                head.push(format!("{}_ratio_upper", c.label));
                head.push(format!("{}_noise_pct", c.label));
                head.push(format!("{}_judged_lower", c.label));
                head.push(format!("{}_judged_upper", c.label));
                head.push(format!("{}_judged_unit", c.label));
                if lkp {
                    head.push(format!("{}_lkp_base_mean_ns", c.label));
                    head.push(format!("{}_lkp_mean_ns", c.label));
                    head.push(format!("{}_lkp_change_pct", c.label));
                    head.push(format!("{}_lkp", c.label));
                }
            }
        }
        let head: Vec<&str> = head.iter().map(String::as_str).collect();
        let mut t = Table::plain(&head);
        for r in &self.sources {
            let mut cells = vec![r.id.clone()];
            for (i, c) in costs(self, r).iter().enumerate() {
                cells.push(csv_num(c.map(|e| e.point)));
                cells.push(csv_num(c.map(|e| e.lower)));
                cells.push(csv_num(c.map(|e| e.upper)));
                if i > 0 {
                    cells.push(csv_num(r.ratio_to_first[i - 1]));
                    cells.push(csv_num(r.ratio_plus_minus[i - 1]));
                    cells.push(r.change[i - 1].map_or(String::new(), |c| c.as_str().into()));
                    let interval = r.ratio_interval[i - 1];
                    cells.push(csv_num(interval.map(|e| e.lower)));
                    cells.push(csv_num(interval.map(|e| e.upper)));
                    cells.push(csv_num(r.noise_pct.get(i - 1).copied().flatten()));
                    let judged = r.judged_interval.get(i - 1).copied().flatten();
                    cells.push(csv_num(judged.map(|e| e.lower)));
                    cells.push(csv_num(judged.map(|e| e.upper)));
                    cells.push(r.unit_at(i - 1, self.unit).as_str().into());
                    if lkp {
                        let l = r.lkp.get(i - 1).and_then(Option::as_ref);
                        cells.push(csv_num(l.map(|l| l.base.mean)));
                        cells.push(csv_num(l.map(|l| l.new.mean)));
                        cells.push(csv_num(l.and_then(|l| l.change_pct)));
                        cells.push(l.map_or(String::new(), |l| decision_str(l.decision).into()));
                    }
                }
            }
            t.row(cells);
        }
        t
    }
}

fn machines(cmp: &Comparison) -> Table {
    let mut t = Table::new(&[
        ("input", Align::Left),
        ("cpu", Align::Left),
        ("kernel", Align::Left),
        ("clocksource", Align::Left),
        ("hypervisor", Align::Left),
        ("precise_read_ns", Align::Right),
    ]);
    for c in &cmp.columns {
        let hv = c.hypervisor.clone().unwrap_or_else(|| "none".into());
        t.row(vec![
            c.label.clone(),
            c.cpu.clone().unwrap_or_default(),
            c.kernel.clone().unwrap_or_default(),
            c.clocksource.clone().unwrap_or_default(),
            if c.emulate_trap {
                format!("{hv} (+emulated trap)")
            } else {
                hv
            },
            opt(c.precise_read_ns.as_ref(), estimate),
        ]);
    }
    t
}

fn sources(cmp: &Comparison) -> Table {
    let labels: Vec<String> = cmp.columns.iter().map(|c| c.label.clone()).collect();
    let mut heads: Vec<(String, Align)> = vec![("source".into(), Align::Left)];
    for (i, l) in labels.iter().enumerate() {
        heads.push((format!("{l} {}", cmp.unit.as_str()), Align::Right));
        if i > 0 {
            heads.push((format!("{l}/{}", labels[0]), Align::Right));
        }
    }
    let refs: Vec<(&str, Align)> = heads.iter().map(|(h, a)| (h.as_str(), *a)).collect();
    let mut t = Table::new(&refs);
    for r in &cmp.sources {
        let mut cells = vec![r.id.clone()];
        for (i, c) in costs(cmp, r).iter().enumerate() {
            cells.push(opt(c.as_ref(), |e| ns(e.point)));
            if i > 0 {
                cells.push(ratio_cell(cmp, r, i - 1));
            }
        }
        t.row(cells);
    }
    t
}

/// [`judged_cell`], and where compare judged the row in core cycles, `(cycles; ns r×)`: the
/// ratio in ns beside it.
fn ratio_cell(cmp: &Comparison, r: &SourceRow, k: usize) -> String {
    let cell = judged_cell(cmp, r, k);
    if r.unit_at(k, cmp.unit) == cmp.unit {
        return cell;
    }
    let beside = r.ns_ratio_interval.get(k).copied().flatten().map_or_else(
        || "-".to_string(),
        |e| ratio::format(&e, Change::of_interval(&e)),
    );
    format!("{cell} (cycles; ns {beside})")
}

/// `1.03 ± 0.02× slower`: the ratio, its 95% interval and the word that interval decides,
/// hyperfine-style; `x.xx× no change (unbounded)` where an interval reaches 0. A row whose
/// word is its path's shows the path's interval, marked `(path)`.
fn judged_cell(cmp: &Comparison, r: &SourceRow, k: usize) -> String {
    let Some(x) = r.ratio_to_first[k] else {
        return "-".into();
    };
    let change = r.change[k].unwrap_or(Change::NoChange);
    if r.path_word.get(k).copied().unwrap_or(false) {
        let label = cmp.columns.get(k + 1).map_or("", |c| c.label.as_str());
        if let Some(p) = cmp
            .paths
            .iter()
            .find(|p| p.label == label && p.members.contains(&r.id))
        {
            return format!(
                "{} {} (path)",
                ratio::format(&p.interval, change),
                change.as_str()
            );
        }
    }
    let judged = r.judged_interval.get(k).copied().flatten();
    let shifted = judged
        .zip(r.ratio_interval[k])
        .is_some_and(|(j, i)| (j.point - i.point).abs() > 1e-12 * i.point.abs());
    let mark = if r.with_machine.get(k).copied().unwrap_or(false) {
        " ~"
    } else {
        ""
    };
    match (judged.or(r.ratio_interval[k]), shifted) {
        (Some(j), true) => format!(
            "{} {}{mark}, {x:.3}× before the shift",
            ratio::format(&j, change),
            change.as_str()
        ),
        (Some(j), false) => format!("{} {}{mark}", ratio::format(&j, change), change.as_str()),
        (None, _) => format!("{x:.2}× {} (unbounded)", change.as_str()),
    }
}

/// Where the noise between runs came from, each run set aside, each machine-wide shift and
/// each path's one word, in one line each.
fn noise_note(cmp: &Comparison) -> String {
    let mut lines = vec![format!("Noise: {}.", cmp.noise.detail)];
    lines.extend(cmp.disturbed.iter().map(|d| {
        format!(
            "Disturbed: {} run {} moved {:+.1}% (median over {} sources) against its other \
             runs: set aside, the machine was shared.",
            d.label, d.run, d.percent, d.sources
        )
    }));
    lines.extend(cmp.shifts.iter().map(|s| format!("Shift: {}.", s.summary)));
    lines.extend(cmp.paths.iter().map(|p| format!("Path: {}.", p.summary)));
    if cmp
        .sources
        .iter()
        .any(|r| r.with_machine.iter().any(|w| *w))
    {
        lines.push(
            "~ the within-run interval alone would call a change; the source moved with the \
             machine or within the noise."
                .into(),
        );
    }
    lines.join("\n") + "\n"
}

/// A row's costs in the comparison's unit, one per input.
fn costs(cmp: &Comparison, r: &SourceRow) -> Vec<Option<Estimate>> {
    match cmp.unit {
        Unit::Ns => r.cost_ns.clone(),
        Unit::Cycles if r.cost_cycles.is_empty() => vec![None; r.cost_ns.len()],
        Unit::Cycles => r.cost_cycles.clone(),
    }
}

/// The notice above the tables when the ratios are in cycles, or when they are in ns and the
/// inputs' core clocks differ (the ns ratios then carry the clock; compare judges the counter
/// reads in cycles unless `--unit` fixed ns).
fn clock_note(cmp: &Comparison) -> Option<String> {
    if let (UnitChoice::Auto, Some((a, b))) = (cmp.unit_choice, cmp.clock_apart()) {
        let cycles: Vec<&str> = cmp
            .sources
            .iter()
            .filter(|r| r.judged_unit.contains(&Unit::Cycles))
            .map(|r| r.id.as_str())
            .collect();
        let judged = if cycles.is_empty() {
            String::new()
        } else {
            format!(
                "; the counter reads ({}) are judged in core cycles, which it does not move, \
                 their ns ratio beside",
                cycles.join(", ")
            )
        };
        return Some(format!(
            "Core clock {a:.2} vs {b:.2} GHz while probing: the ns ratios carry that change \
             ({:+.1}%){judged}.\n",
            (a / b - 1.0) * 100.0
        ));
    }
    match (cmp.unit, cmp.clock_apart()) {
        (Unit::Cycles, _) => Some(
            "Ratios in core cycles (cost_cycles): a change of the core clock between the runs \
             does not move them.\n"
                .into(),
        ),
        (Unit::Ns, Some((a, b))) => Some(format!(
            "Core clock {a:.2} vs {b:.2} GHz while probing: the ns ratios carry that change \
             ({:+.1}%); `--unit cycles` compares without it.\n",
            (a / b - 1.0) * 100.0
        )),
        (Unit::Ns, None) => None,
    }
}

/// The notice above the tables when the inputs come from different machines, or from one
/// machine under different clocksources (the change a patch author compares: judged as one).
fn machine_note(cmp: &Comparison) -> Option<String> {
    if cmp.machine_differences.is_empty() {
        return None;
    }
    let what: Vec<String> = cmp
        .machine_differences
        .iter()
        .map(|d| {
            let values: Vec<&str> = d
                .values
                .iter()
                .map(|v| v.as_deref().unwrap_or("?"))
                .collect();
            format!("{} {}", d.field, values.join(" vs "))
        })
        .collect();
    if cmp.clocksource_only() {
        return Some(format!(
            "One machine, another clocksource ({}): the ratios are what the clocksource \
             changes.\n",
            what.join("; ")
        ));
    }
    Some(format!(
        "Different machines ({}): the ratios compare machines, not a change on one machine.\n",
        what.join("; ")
    ))
}

fn verdicts(cmp: &Comparison) -> Table {
    let mut heads: Vec<(String, Align)> = vec![("verdict".into(), Align::Left)];
    heads.extend(cmp.columns.iter().map(|c| (c.label.clone(), Align::Left)));
    heads.push(("".into(), Align::Left));
    let refs: Vec<(&str, Align)> = heads.iter().map(|(h, a)| (h.as_str(), *a)).collect();
    let mut t = Table::new(&refs);
    for v in &cmp.verdicts {
        let mut cells = vec![v.name.clone()];
        cells.extend(v.holds.iter().map(|h| match h {
            Some(true) => "YES".to_string(),
            Some(false) => "no".to_string(),
            None => "-".to_string(),
        }));
        cells.push(if v.differs {
            "≠ differs".into()
        } else {
            String::new()
        });
        t.row(cells);
    }
    t
}

/// The JSON name of LKP's decision, as the CSV writes it.
fn decision_str(d: Decision) -> &'static str {
    match d {
        Decision::Increase => "increase",
        Decision::Decrease => "decrease",
        Decision::RangesOverlap => "ranges_overlap",
        Decision::WithinThreshold => "within_threshold",
        Decision::TooFewSamples => "too_few_samples",
    }
}

/// Under `--lkp`: a line on the rule and the samples, then per input after the first LKP's
/// table ([`super::lkp`]) with LKP's word, tscope's, and why they differ.
fn lkp_blocks(cmp: &Comparison, style: Style) -> Vec<Block> {
    let one_run = cmp
        .sources
        .iter()
        .flat_map(|r| r.lkp.iter().flatten())
        .all(|l| l.decision == Decision::TooFewSamples);
    let mut intro = String::from(
        "LKP's rule on each source's runs: sorted, n>>5 dropped at each end (at most 3); a \
         change\nwhen the new minimum is above the old median and the new median above the old \
         maximum\n(or the reverse), and the ratio of the means is over 1.01. tscope's word is \
         compare's own, judged\nagainst the noise (the Noise: line).\n",
    );
    if one_run {
        intro += "These profiles hold one run each: LKP's rule needs repeated runs (record \
                  them with\n`tscope probe --repeat N`).\n";
    }
    let mut b = vec![Block::Text(intro)];
    let base = cmp.columns.first().map_or("", |c| c.label.as_str());
    for (k, col) in cmp.columns.iter().enumerate().skip(1) {
        let lines: Vec<super::lkp::Line> = cmp
            .sources
            .iter()
            .filter_map(|r| {
                let l = r.lkp.get(k - 1)?.as_ref()?;
                let tscope = r.change.get(k - 1).copied().flatten();
                let in_cycles = r.unit_at(k - 1, cmp.unit) != cmp.unit;
                Some(super::lkp::Line {
                    base: Some(l.base.clone()),
                    new: Some(l.new.clone()),
                    change_pct: l.change_pct,
                    metric: format!("{}.cost_ns", r.id),
                    beside: vec![
                        l.decision.as_str().into(),
                        match (tscope, in_cycles) {
                            (Some(c), true) => format!("{} (cycles)", c.as_str()),
                            (c, _) => c.map_or("-", Change::as_str).into(),
                        },
                        l.note.clone().unwrap_or_default(),
                    ],
                })
            })
            .collect();
        let tscope = format!("tscope ({})", cmp.unit.as_str());
        let text = super::lkp::layout(
            base,
            &col.label,
            &["LKP", &tscope, "why they differ"],
            &lines,
        );
        b.push(Block::Blank);
        b.push(Block::Text(if style.is_markdown() {
            format!("```text\n{text}```\n")
        } else {
            text
        }));
    }
    b
}
