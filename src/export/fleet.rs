//! `tscope fleet`: the grouped decision table ([`FleetReport`]), the stored rows
//! ([`Listing`]), `fleet add`'s summary, and the SVG of each group's cost distribution.

use serde::Serialize;

use super::bars::{log_bars, Bar};
use super::{Align, Block, Render, Style, Table};
use crate::fleet::columns::FACT_COLUMNS;
use crate::fleet::decisions::{FleetReport, Spread};
use crate::fleet::{AddSummary, Listing};
use crate::fmt::{csv_num, ns_cell, pct};

fn ratio(v: Option<f64>) -> String {
    v.map_or("-".into(), |x| format!("{x:.4}×"))
}

fn spread_cells(s: &Spread, cell: fn(Option<f64>) -> String) -> Vec<String> {
    vec![
        s.machines.to_string(),
        cell(s.p10),
        cell(s.median),
        cell(s.p90),
    ]
}

impl Render for FleetReport {
    fn kind(&self) -> Option<crate::input::Kind> {
        Some(crate::input::Kind::FleetReport)
    }

    fn json(&self) -> impl Serialize + '_ {
        self
    }

    fn blocks(&self, _style: Style) -> Vec<Block> {
        let mut out = vec![
            Block::Text(format!(
                "{} machine(s) from {} document(s) (one machine per host_id; a document without \
                 one is a machine of its own) in {} group(s); speedups replayed under {} for {} \
                 ({} distinct cost sets: {})\n",
                self.machines,
                self.documents,
                self.groups.len(),
                self.models.join(", "),
                self.scenarios.join(", "),
                self.replays,
                self.replay_note
            )),
            Block::Blank,
        ];
        for g in &self.groups {
            out.push(Block::Heading(format!(
                "{}: {} machine(s)",
                g.name, g.machines
            )));
            let mut t = Table::new(&[
                ("cost (ns)", Align::Left),
                ("machines", Align::Right),
                ("p10", Align::Right),
                ("median", Align::Right),
                ("p90", Align::Right),
            ]);
            for c in &g.costs {
                let mut row = vec![c.name.trim_end_matches("_ns").to_string()];
                row.extend(spread_cells(&c.spread, ns_cell));
                t.row(row);
            }
            out.push(Block::Table(t));
            out.push(Block::Blank);
            if !g.verdicts.is_empty() {
                let mut t = Table::new(&[
                    ("verdict", Align::Left),
                    ("machines", Align::Right),
                    ("holds", Align::Right),
                    ("inconclusive", Align::Right),
                ]);
                for v in &g.verdicts {
                    t.row(vec![
                        v.name.clone(),
                        v.machines.to_string(),
                        pct(v.holds_share),
                        v.inconclusive.to_string(),
                    ]);
                }
                out.push(Block::Table(t));
                out.push(Block::Blank);
            }
            let mut t = Table::new(&[
                ("scenario", Align::Left),
                ("model", Align::Left),
                ("policy", Align::Left),
                ("machines", Align::Right),
                ("p10", Align::Right),
                ("median", Align::Right),
                ("p90", Align::Right),
            ]);
            for s in g.speedups.iter().filter(|s| !s.stock) {
                let mut row = vec![s.scenario.clone(), s.model.clone(), s.policy.clone()];
                row.extend(spread_cells(&s.spread, ratio));
                t.row(row);
            }
            out.push(Block::Table(t));
            out.push(Block::Blank);
        }
        out
    }

    fn csv(&self) -> Table {
        let mut t = Table::plain(&[
            "group",
            "section",
            "name",
            "scenario",
            "model",
            "policy",
            "machines",
            "p10",
            "median",
            "p90",
            "holds_share",
        ]);
        for g in &self.groups {
            let n = g.machines.to_string();
            t.row(vec![
                g.name.clone(),
                "group".into(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                n,
                String::new(),
                String::new(),
                String::new(),
                String::new(),
            ]);
            let spread = |s: &Spread| {
                vec![
                    s.machines.to_string(),
                    csv_num(s.p10),
                    csv_num(s.median),
                    csv_num(s.p90),
                ]
            };
            for c in &g.costs {
                let mut row = vec![
                    g.name.clone(),
                    "cost".into(),
                    c.name.clone(),
                    String::new(),
                    String::new(),
                    String::new(),
                ];
                row.extend(spread(&c.spread));
                row.push(String::new());
                t.row(row);
            }
            for v in &g.verdicts {
                t.row(vec![
                    g.name.clone(),
                    "verdict".into(),
                    v.name.clone(),
                    String::new(),
                    String::new(),
                    String::new(),
                    v.machines.to_string(),
                    String::new(),
                    String::new(),
                    String::new(),
                    format!("{}", v.holds_share),
                ]);
            }
            for s in &g.speedups {
                let mut row = vec![
                    g.name.clone(),
                    "speedup".into(),
                    String::new(),
                    s.scenario.clone(),
                    s.model.clone(),
                    s.policy.clone(),
                ];
                row.extend(spread(&s.spread));
                row.push(String::new());
                t.row(row);
            }
        }
        t
    }
}

/// Where a row came from, before its facts in `fleet export --csv`.
const ORIGIN_COLUMNS: [&str; 7] = [
    "id",
    "hash",
    "kind",
    "schema_version",
    "label",
    "source",
    "added_unix_s",
];

/// The columns `fleet export --csv` writes, in order: where the row came from, then the
/// store's fact columns, `verdicts` split by state.
fn export_columns() -> Vec<&'static str> {
    let facts = FACT_COLUMNS.iter().filter(|c| **c != "verdicts");
    ORIGIN_COLUMNS
        .iter()
        .chain(facts)
        .chain(&["verdicts_yes", "verdicts_inconclusive"])
        .copied()
        .collect()
}

impl Render for Listing {
    fn json(&self) -> impl Serialize + '_ {
        &self.rows
    }

    fn blocks(&self, _style: Style) -> Vec<Block> {
        let mut t = Table::new(&[
            ("id", Align::Right),
            ("hash", Align::Left),
            ("kind", Align::Left),
            ("host", Align::Left),
            ("label", Align::Left),
            ("cpu", Align::Left),
            ("hypervisor", Align::Left),
            ("clocksource", Align::Left),
            ("kernel", Align::Left),
            ("precise read (ns)", Align::Right),
        ]);
        let o = |s: &Option<String>| s.clone().unwrap_or_else(|| "-".into());
        for r in &self.rows {
            let f = &r.facts;
            t.row(vec![
                r.id.to_string(),
                r.hash.chars().take(12).collect(),
                r.kind.name().into(),
                f.host_id
                    .as_ref()
                    .map_or("-".into(), |h| h.chars().take(8).collect()),
                o(&r.label),
                o(&f.cpu_model),
                o(&f.hypervisor),
                o(&f.clocksource),
                o(&f.kernel),
                ns_cell(f.precise_read_ns),
            ]);
        }
        vec![
            Block::Text(format!("{} document(s)\n", self.rows.len())),
            Block::Table(t),
        ]
    }

    fn csv(&self) -> Table {
        let mut t = Table::plain(&export_columns());
        let s = |v: &Option<String>| v.clone().unwrap_or_default();
        let i = |v: Option<i64>| v.map_or(String::new(), |x| x.to_string());
        let b = |v: Option<bool>| v.map_or(String::new(), |x| x.to_string());
        for r in &self.rows {
            let f = &r.facts;
            let with = |state: &str| {
                f.verdicts.as_ref().map_or(String::new(), |v| {
                    v.iter()
                        .filter(|(_, s)| s.as_str() == state)
                        .map(|(n, _)| n.as_str())
                        .collect::<Vec<_>>()
                        .join(" ")
                })
            };
            t.row(vec![
                r.id.to_string(),
                r.hash.clone(),
                r.kind.name().into(),
                r.schema_version.to_string(),
                s(&r.label),
                r.source.clone(),
                r.added_unix_s.to_string(),
                s(&f.host_id),
                i(f.created_unix_s),
                s(&f.cpu_vendor),
                s(&f.cpu_model),
                i(f.cpu_family),
                i(f.cpu_model_number),
                i(f.cpu_stepping),
                s(&f.microcode),
                s(&f.hypervisor),
                s(&f.dmi_product),
                s(&f.kernel),
                s(&f.clocksource),
                s(&f.clocksources_available),
                csv_num(f.hz),
                b(f.tsc_invariant),
                s(&f.tsc_flags),
                f.emulate_trap.to_string(),
                b(f.in_vm),
                csv_num(f.precise_read_ns),
                csv_num(f.vdso_ns),
                csv_num(f.syscall_ns),
                csv_num(f.rdtsc_ns),
                csv_num(f.counter_ns),
                csv_num(f.coarse_read_ns),
                csv_num(f.tick_ns),
                with("yes"),
                with("inconclusive"),
            ]);
        }
        t
    }
}

/// `fleet add`'s summary, one line per refused file after the totals.
pub fn add_summary(s: &AddSummary) -> String {
    let out = format!(
        "{}: {} document(s) added, {} already stored, {} file(s) or line(s) refused{}\n",
        super::safe::cell(&s.store),
        s.added,
        s.present,
        s.failed.len(),
        if s.failed.is_empty() {
            ""
        } else {
            " (each said on stderr)"
        }
    );
    out
}

/// Each group's cost distribution: a bar per (group, cost) at the median, its whisker from
/// p10 to p90, on a log axis.
pub fn svg(r: &FleetReport) -> crate::error::Result<String> {
    const NAMES: [&str; 4] = [
        "precise read",
        "vDSO clock_gettime",
        "syscall clock_gettime",
        "rdtsc",
    ];
    let mut bars = Vec::new();
    for g in &r.groups {
        for (series, c) in g.costs.iter().enumerate() {
            let s = &c.spread;
            let (Some(m), Some(lo), Some(hi)) = (s.median, s.p10, s.p90) else {
                continue;
            };
            bars.push(Bar {
                label: format!("{} ({})", g.name, s.machines),
                series: series.min(NAMES.len() - 1),
                value: m,
                lower: lo,
                upper: hi,
            });
        }
    }
    log_bars(
        &format!(
            "What a timestamp costs across {} machine(s): median, p10–p90 per group",
            r.machines
        ),
        "cost per call",
        &bars,
        &NAMES,
    )
}
