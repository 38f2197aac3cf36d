//! The kernel A/B table of `vm bench`: each kernel row's change, the models' reads and
//! updates per op, the measured against the predicted Δ; and the same rows in the 0-day test
//! robot's (LKP's) layout, LKP's decision on the boots beside the row's word.

use super::super::lkp::{layout, Line};
use super::super::table::{Align, Table};
use super::super::{Block, Style};
use super::{any_counted, counted_cell, kernel_label, percent, signed, verdict_cell};
use crate::compare::Change;
use crate::fmt::ns;
use crate::vm::bench::BenchComparison;

pub(super) fn kernel_table(rows: &[&BenchComparison]) -> Table {
    let counted = any_counted(rows);
    let mut head = vec![
        ("kernels", Align::Left),
        ("fs", Align::Left),
        ("workload", Align::Left),
        ("clocksource", Align::Left),
        ("change", Align::Right),
        ("raw change", Align::Right),
        ("significant", Align::Left),
        ("models precise/coarse/updates per op", Align::Left),
    ];
    if counted {
        head.push(("counted precise/coarse per op", Align::Left));
    }
    head.extend([
        ("Δ ns/op measured", Align::Right),
        ("predicted", Align::Right),
        ("verdict", Align::Left),
    ]);
    let mut t = Table::new(&head);
    for c in rows {
        let models = match (&c.model_from, &c.model_to) {
            (Some(a), Some(b)) => format!(
                "{:.2}/{:.2}/{:.2} → {:.2}/{:.2}/{:.2}",
                a.precise_per_op,
                a.coarse_per_op,
                a.updates_per_op,
                b.precise_per_op,
                b.coarse_per_op,
                b.updates_per_op
            ),
            _ => "-".into(),
        };
        let mut cells = vec![
            kernel_label(c),
            c.fs.to_string(),
            c.workload.to_string(),
            c.clocksource.map_or_else(String::new, |cs| cs.to_string()),
            c.percent_change.as_ref().map_or("-".into(), percent),
            c.raw_percent_change.as_ref().map_or("-".into(), percent),
            match c.significant {
                Some(true) => "yes".into(),
                Some(false) => "no".into(),
                None => String::new(),
            },
            models,
        ];
        if counted {
            cells.push(format!(
                "{} → {}",
                counted_cell(c.counted_from.as_ref()),
                counted_cell(c.counted_to.as_ref())
            ));
        }
        cells.extend([
            signed(&c.measured_delta_ns),
            match (
                c.predicted_delta_ns,
                c.predicted_update_delta_ns,
                c.update_price_ns,
            ) {
                (Some(p), Some(u), Some(price)) => {
                    format!("{} ({} of updates at {})", ns(p), ns(u), ns(price))
                }
                (p, _, _) => p.map_or("-".into(), ns),
            },
            verdict_cell(c),
        ]);
        t.row(cells);
    }
    t
}

/// Per pair of kernels, LKP's table ([`crate::export::lkp`]) of the kernel rows that carry
/// LKP's decision: one metric per file system, workload and clocksource
/// (`pipe1.tmpfs.tsc.ns_per_op`), the row's word beside LKP's and why they differ. Empty
/// when no row carries it.
pub(super) fn lkp_blocks(rows: &[&BenchComparison], style: Style) -> Vec<Block> {
    let mut pairs: Vec<(&str, &str)> = Vec::new();
    for c in rows.iter().filter(|c| c.lkp.is_some()) {
        if !pairs.contains(&(c.from.as_str(), c.to.as_str())) {
            pairs.push((&c.from, &c.to));
        }
    }
    let mut b = Vec::new();
    for (from, to) in pairs {
        let lines: Vec<Line> = rows
            .iter()
            .filter(|c| c.from == from && c.to == to)
            .filter_map(|c| {
                let l = c.lkp.as_ref()?;
                let word = crate::vm::bench::lkp::word(c);
                Some(Line {
                    base: Some(l.base.clone()),
                    new: Some(l.new.clone()),
                    change_pct: l.change_pct,
                    metric: format!(
                        "{}.{}.{}.ns_per_op",
                        c.workload,
                        c.fs,
                        c.clocksource.map_or("", |cs| cs.name())
                    ),
                    beside: vec![
                        l.decision.as_str().into(),
                        word.map_or("-", Change::as_str).into(),
                        l.note.clone().unwrap_or_default(),
                    ],
                })
            })
            .collect();
        let text = layout(from, to, &["LKP", "tscope", "why they differ"], &lines);
        b.push(Block::Text(if style.is_markdown() {
            format!("```text\n{text}```\n")
        } else {
            text
        }));
        b.push(Block::Blank);
    }
    b
}
