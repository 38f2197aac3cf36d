//! The printed forms of [`BenchReport`]: the clocksource rows (measured against predicted
//! change per op), the kernel A/B rows, the runs, notes; the CSV of every comparison; the SVG
//! of measured against predicted change; and the A/B's commit-message paragraph.

use serde::Serialize;

mod commit;
mod kernel;
mod knob;
mod report;
mod svg;

pub use commit::commit_message;
pub use report::report_section;
pub use svg::svg;

use super::table::{Align, Table};
use super::{Block, Render, Style};
use crate::fmt::ns;
use crate::stats::Estimate;
use crate::vm::bench::compare::{AGREE_WITHIN, EQUIVALENCE_LEVEL, EQUIVALENCE_SHARE, LEVEL};
use crate::vm::bench::counted::Counted;
use crate::vm::bench::{BenchComparison, BenchReport};

impl Render for BenchReport {
    fn kind(&self) -> Option<crate::input::Kind> {
        Some(crate::input::Kind::VmBench)
    }

    fn json(&self) -> impl Serialize + '_ {
        self
    }

    fn blocks(&self, style: Style) -> Vec<Block> {
        let mut blocks = Vec::new();
        let cs: Vec<&BenchComparison> = self
            .comparisons
            .iter()
            .filter(|c| c.kind == crate::vm::bench::ComparisonKind::Clocksource)
            .collect();
        if !cs.is_empty() {
            blocks.push(Block::Heading(
                "clock cost → throughput: Δ ns/op between clocksources, measured within each boot, against the model".into(),
            ));
            blocks.push(Block::Table(clocksource_table(&cs)));
            blocks.push(Block::Blank);
        }
        let ks: Vec<&BenchComparison> = self
            .comparisons
            .iter()
            .filter(|c| c.kind == crate::vm::bench::ComparisonKind::Kernel)
            .collect();
        if !ks.is_empty() {
            blocks.push(Block::Heading(format!(
                "kernel A/B: change per op, each loop divided by the {} timed before it",
                self.kernel_control
            )));
            blocks.push(Block::Table(kernel::kernel_table(&ks)));
            blocks.push(Block::Blank);
            let lkp = kernel::lkp_blocks(&ks, style);
            if !lkp.is_empty() {
                blocks.push(Block::Heading(
                    "kernel A/B in LKP's layout: each boot's median ns/op is one run; LKP's rule \
                     (sorted, n>>5 trimmed at each end, at most 3; the new minimum above the old \
                     median and the new median above the old maximum, or the reverse; the means \
                     more than 1.01 apart) beside the row's word"
                        .into(),
                ));
                blocks.extend(lkp);
            }
        }
        if !self.knob.is_empty() {
            blocks.push(Block::Heading(
                "live knob: write + statx asking for the times against the size only, in the guest; the update priced on one write per query, held on four".into(),
            ));
            blocks.push(Block::Table(knob::knob_table(&self.knob)));
            blocks.push(Block::Blank);
        }
        blocks.push(Block::Heading("runs: ns per op over boots × rounds".into()));
        blocks.push(Block::Table(runs_table(self)));
        blocks.push(Block::Blank);
        blocks.push(Block::list("", notes(self)));
        blocks
    }

    fn csv(&self) -> Table {
        let mut head = vec![
            ("kind", Align::Left),
            ("kernel", Align::Left),
            ("fs", Align::Left),
            ("workload", Align::Left),
            ("clocksource", Align::Left),
            ("from", Align::Left),
            ("to", Align::Left),
            ("measured_delta_ns", Align::Right),
            ("measured_lower_ns", Align::Right),
            ("measured_upper_ns", Align::Right),
            ("predicted_delta_ns", Align::Right),
            ("precise_reads_per_op", Align::Right),
            ("coarse_reads_per_op", Align::Right),
            ("percent_change", Align::Right),
            ("percent_lower", Align::Right),
            ("percent_upper", Align::Right),
            ("pairs", Align::Right),
            ("verdict", Align::Left),
        ];
        let all: Vec<&BenchComparison> = self.comparisons.iter().collect();
        let counted = any_counted(&all);
        if counted {
            head.extend([
                ("counted_from_precise_per_op", Align::Right),
                ("counted_from_coarse_per_op", Align::Right),
                ("counted_to_precise_per_op", Align::Right),
                ("counted_to_coarse_per_op", Align::Right),
            ]);
        }
        let mut t = Table::new(&head);
        let n = |v: Option<f64>| v.map_or(String::new(), |x| x.to_string());
        for c in &self.comparisons {
            let m = &c.measured_delta_ns;
            let mut cells = vec![
                c.kind.name().to_string(),
                kernel_label(c),
                c.fs.to_string(),
                c.workload.to_string(),
                c.clocksource.map_or_else(String::new, |cs| cs.to_string()),
                c.from.clone(),
                c.to.clone(),
                m.point.to_string(),
                m.lower.to_string(),
                m.upper.to_string(),
                n(c.predicted_delta_ns),
                n(c.model_from.as_ref().map(|r| r.precise_per_op)),
                n(c.model_from.as_ref().map(|r| r.coarse_per_op)),
                n(c.percent_change.map(|p| p.point)),
                n(c.percent_change.map(|p| p.lower)),
                n(c.percent_change.map(|p| p.upper)),
                c.pairs.to_string(),
                c.verdict.name().into(),
            ];
            if counted {
                let (f, t) = (c.counted_from, c.counted_to);
                cells.extend([
                    n(f.map(|x| x.precise_per_op)),
                    n(f.map(|x| x.coarse_per_op)),
                    n(t.map(|x| x.precise_per_op)),
                    n(t.map(|x| x.coarse_per_op)),
                ]);
            }
            t.row(cells);
        }
        t
    }
}

fn kernel_label(c: &BenchComparison) -> String {
    match (&c.kernel_release, &c.kernels) {
        (Some(k), _) => k.clone(),
        (None, Some(ks)) => ks.join(" → "),
        _ => String::new(),
    }
}

/// `point [lower, upper]`, signed.
fn signed(e: &Estimate) -> String {
    let s = |v: f64| {
        if v > 0.0 {
            format!("+{}", ns(v))
        } else {
            ns(v)
        }
    };
    format!("{} [{}, {}]", s(e.point), s(e.lower), s(e.upper))
}

/// `−9.8% ± 1.2%` (the half-width of the interval).
pub fn percent(e: &Estimate) -> String {
    let half = (e.upper - e.lower) / 2.0;
    let sign = if e.point < 0.0 { "−" } else { "+" };
    format!("{sign}{:.1}% ± {:.1}%", e.point.abs(), half)
}

fn reads(c: &BenchComparison) -> String {
    c.model_from.as_ref().map_or("-".into(), |m| {
        format!("{} {:.2}/{:.2}", m.model, m.precise_per_op, m.coarse_per_op)
    })
}

fn verdict_cell(c: &BenchComparison) -> String {
    match c.verdict {
        crate::vm::bench::compare::Verdict::Undecided => {
            format!("undecided (noise ±{} ns)", ns(c.noise_ns))
        }
        crate::vm::bench::compare::Verdict::Agrees
            if c.equivalence.is_some_and(|e| e.equivalent)
                && !crate::vm::bench::compare::holds(&c.measured_delta_ns, 0.0) =>
        {
            format!(
                "agrees (equivalent: within ±{} ns)",
                ns(c.equivalence.map_or(0.0, |e| e.margin_ns))
            )
        }
        v => v.name().into(),
    }
}

pub(super) fn clocksource_table(rows: &[&BenchComparison]) -> Table {
    let counted_calls = any_counted(rows);
    let mut head = vec![
        ("kernel", Align::Left),
        ("fs", Align::Left),
        ("workload", Align::Left),
        ("change", Align::Left),
        ("measured Δ ns/op", Align::Right),
        ("predicted Δ", Align::Right),
        ("model precise/coarse per op", Align::Left),
    ];
    if counted_calls {
        head.push(("counted precise/coarse per op", Align::Left));
    }
    head.extend([
        ("Δ precise read ns: syscall; priced", Align::Right),
        ("counted reads/op", Align::Right),
        ("pairs", Align::Right),
        ("verdict", Align::Left),
    ]);
    let mut t = Table::new(&head);
    for c in rows {
        let counted = match (c.counted_reads_from, c.counted_reads_to) {
            (Some(a), Some(b)) => format!("{a:.2} → {b:.2}"),
            (None, Some(b)) => format!("? → {b:.2}"),
            _ => "-".into(),
        };
        let mut cells = vec![
            kernel_label(c),
            c.fs.to_string(),
            c.workload.to_string(),
            format!("{} → {}", c.from, c.to),
            signed(&c.measured_delta_ns),
            c.predicted_delta_ns.map_or("-".into(), ns),
            reads(c),
        ];
        if counted_calls {
            cells.push(counted_cell(c.counted_from.as_ref()));
        }
        cells.extend([
            format!(
                "{}; {}",
                c.delta_precise_read_ns.as_ref().map_or("-".into(), signed),
                match c.precise_read_price.as_deref() {
                    Some("in-path") => c
                        .delta_precise_read_price_ns
                        .as_ref()
                        .map_or("-".into(), |e| format!("{} in path", signed(e))),
                    _ => "-".into(),
                }
            ),
            counted,
            c.pairs.to_string(),
            verdict_cell(c),
        ]);
        t.row(cells);
    }
    t
}

/// `--count`'s columns: only when some row was counted.
fn any_counted(rows: &[&BenchComparison]) -> bool {
    rows.iter()
        .any(|c| c.counted_from.is_some() || c.counted_to.is_some())
}

/// A count per op to two decimals; a count within rounding of 0 (a baseline can leave
/// −0.0005) is 0.00, never −0.00.
pub(super) fn per_op(v: f64) -> String {
    format!("{:.2}", if v.abs() < 0.005 { 0.0 } else { v })
}

/// `p/c` (precise/coarse calls per op counted by kprobes), `-` when not counted.
fn counted_cell(c: Option<&Counted>) -> String {
    c.map_or("-".into(), |c| {
        format!("{}/{}", per_op(c.precise_per_op), per_op(c.coarse_per_op))
    })
}

fn runs_table(r: &BenchReport) -> Table {
    let mut t = Table::new(&[
        ("kernel", Align::Left),
        ("clocksource", Align::Left),
        ("fs", Align::Left),
        ("workload", Align::Left),
        ("ns/op", Align::Right),
        ("precise read ns", Align::Right),
        ("coarse read ns", Align::Right),
        ("null syscall ns", Align::Right),
        ("boots × rounds", Align::Right),
    ]);
    for run in &r.runs {
        let cs = if run.clocksource_used == run.clocksource_requested {
            run.clocksource_used.to_string()
        } else {
            format!(
                "{} (refused: {})",
                run.clocksource_requested, run.clocksource_used
            )
        };
        t.row(vec![
            run.kernel_release.clone(),
            cs,
            run.fs.to_string(),
            run.workload.to_string(),
            run.ns_per_op
                .as_ref()
                .map_or("-".into(), crate::fmt::estimate),
            ns(run.costs.precise_read_ns),
            ns(run.costs.coarse_read_ns),
            ns(run.costs.syscall_ns),
            run.samples.to_string(),
        ]);
    }
    t
}

/// How the report's intervals were formed: Student's t over the boots (the unit of
/// replication), or, with one boot, a bootstrap of its rounds, which carries no spread between
/// boots.
pub(super) fn interval_note(r: &BenchReport) -> String {
    use crate::vm::bench::compare::IntervalMethod as M;
    let one = r
        .comparisons
        .iter()
        .filter_map(|c| c.interval_method)
        .chain(r.runs.iter().filter_map(|x| x.interval_method))
        .any(|m| m == M::RoundsBootstrap);
    if one {
        format!(
            "{:.0}% percentile bootstrap of one boot's rounds (seed {}): one boot carries no \
             spread between boots, so these intervals are narrower than a rerun would show",
            LEVEL * 100.0,
            r.seed
        )
    } else {
        format!(
            "{:.0}% Student t over the boots' medians (df boots − 1; kernel rows: Welch's t on \
             their logs): the boot is the unit of replication",
            LEVEL * 100.0
        )
    }
}

/// `items` by their names, `sep` between.
pub(super) fn joined<T: std::fmt::Display>(items: &[T], sep: &str) -> String {
    let names: Vec<String> = items.iter().map(T::to_string).collect();
    names.join(sep)
}

pub(super) fn notes(r: &BenchReport) -> Vec<String> {
    let mut notes = vec![format!(
        "accel {}{}; {} boot(s) per kernel, {} round(s) per boot alternating {} (A B, then B A), \
         {} ms per workload per visit; intervals: {}",
        r.accel.used.name(),
        if r.accel.emulation {
            " (TCG: emulated figures, not hardware figures)"
        } else {
            ""
        },
        r.boots,
        r.rounds,
        joined(&r.clocksources, "/"),
        r.slot_ms,
        interval_note(r),
    )];
    notes.push(format!(
        "verdict: agrees when the prediction lies in the measured interval or within {:.0}% of \
         the measured Δ and the interval excludes 0; a model without precise reads predicts no \
         change and agrees with an interval that holds 0, or whose {:.0}% interval lies within \
         ±{:.0}% of the op (equivalent to 0: two one-sided tests); undecided when the interval \
         holds both 0 and the prediction (the noise is stated)",
        AGREE_WITHIN * 100.0,
        EQUIVALENCE_LEVEL * 100.0,
        EQUIVALENCE_SHARE * 100.0
    ));
    if r.comparisons
        .iter()
        .any(|c| c.kind == crate::vm::bench::ComparisonKind::Kernel)
    {
        notes.push(format!(
            "kernel rows: boots of two kernels cannot be paired, so each loop's ns/op is divided \
             by the {} timed right before it (it moves with the boot's speed); the raw change \
             is shown beside it; a kernel row's verdict says whether the models' timestamp \
             difference accounts for the change",
            r.kernel_control
        ));
    }
    if let Some(c) = r.counted.first() {
        notes.push(format!(
            "counted precise/coarse per op: timestamp calls counted by vm count's kprobes \
             (ktime_get_real_ts64[_mg] / ktime_get_coarse_real_ts64[_mg], per op less a \
             zero-iteration baseline), one extra boot per kernel on {}",
            c.clocksource
        ));
    }
    for e in &r.count_errors {
        notes.push(format!("counting: {e}"));
    }
    for k in &r.kernels {
        let rel = k.kernel_release.as_deref().unwrap_or("?");
        let ok = k.boots.iter().filter(|b| b.error.is_none()).count();
        notes.push(format!(
            "{} ({rel}, HZ {} from {}): {ok} of {} boot(s) complete, {:.0} s",
            k.kernel_package,
            k.hz,
            k.hz_source,
            k.boots.len(),
            k.boots.iter().map(|b| b.wall_s).sum::<f64>()
        ));
        for b in &k.boots {
            if let Some(e) = &b.error {
                notes.push(format!("{rel}: boot {}: {e}", b.index + 1));
            }
            for e in b.header.iter().flat_map(|h| &h.errors) {
                notes.push(format!("{rel}: boot {}: in the guest: {e}", b.index + 1));
            }
            for e in b.reads.iter().flat_map(|r| &r.errors) {
                notes.push(format!("{rel}: read counts: {e}"));
            }
        }
    }
    for c in &r.comparisons {
        if let Some(d) = &c.diagnosis {
            notes.push(format!(
                "{} {}/{} {} → {}: {d}",
                kernel_label(c),
                c.fs,
                c.workload,
                c.from,
                c.to
            ));
        }
    }
    for x in &r.refused {
        notes.push(format!("refused: {x}"));
    }
    for d in &r.disturbed {
        notes.push(d.note(r.boots as usize));
    }
    if r.stopped {
        notes.push("interrupted: the rows are what was measured before the signal".into());
    }
    notes
}

#[cfg(test)]
mod tests;
