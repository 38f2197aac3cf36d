//! The live knob pair and the update prices it gives, as tables and lines (for `run
//! write-stat`, `probe --dir` and the report).

use super::table::{Align, Table};
use crate::price::Term;
use crate::sim::update_price::FsUpdate;
use crate::stats::Estimate;
use crate::workload::pair::PairResult;

fn ci(e: Estimate, digits: usize) -> String {
    format!(
        "{:.d$} [{:.d$}, {:.d$}]",
        e.point,
        e.lower,
        e.upper,
        d = digits
    )
}

/// One row per pair: filesystem, mount options, both sides, Δ and the ratio with intervals.
pub fn table(pairs: &[PairResult]) -> Table {
    let mut t = Table::new(&[
        ("dir", Align::Left),
        ("fs", Align::Left),
        ("mount options", Align::Left),
        ("loop", Align::Left),
        ("times asked ns/it", Align::Right),
        ("size only ns/it", Align::Right),
        ("Δ ns [95% CI]", Align::Right),
        ("ratio [95% CI]", Align::Right),
        ("equal mtimes (asked / not)", Align::Right),
        ("multigrain", Align::Left),
    ]);
    for p in pairs {
        t.row(vec![
            p.dir.clone(),
            p.fs_type.clone(),
            p.mount_options.join(","),
            p.pattern_name.clone(),
            format!("{:.1}", p.queried_ns.point),
            format!("{:.1}", p.control_ns.point),
            ci(p.delta_ns, 1),
            ci(p.ratio, 3),
            format!(
                "{:.1}% / {:.1}%",
                100.0 * p.queried_equal_mtimes,
                100.0 * p.control_equal_mtimes
            ),
            match (p.multigrain_expected, p.multigrain_observed) {
                (_, true) => "yes (seen)".into(),
                (true, false) => "expected, NOT seen".into(),
                (false, false) => "no".into(),
            },
        ]);
    }
    t
}

/// What a pair means, in words: its check where there is no multigrain.
pub fn lines(p: &PairResult) -> Vec<String> {
    let mut v = vec![format!(
        "{}: {} ABBA repetitions of {} iterations per block, pinned {}; the same loop with \
         statx asking for STATX_MTIME|STATX_CTIME against STATX_SIZE: asking marks the ctime \
         queried, so the next write takes a fine-grained time and stores it",
        p.pattern_name,
        p.repetitions,
        p.iterations_per_block,
        p.pinned_cpu
            .map(|c| format!("to CPU {c}"))
            .unwrap_or_else(|| "nowhere".into())
    )];
    if let Some(c) = &p.check {
        v.push(c.clone());
    }
    match (&p.kernel_counts, &p.kernel_counts_absent) {
        (Some(k), _) => {
            let side = |m: &std::collections::BTreeMap<String, f64>| {
                format!(
                    "{:.3} fine stamps, {:.3} ctime moves, {:.3} ctime stamps",
                    m.get("fine_stamps").unwrap_or(&f64::NAN),
                    m.get("ctime_swaps").unwrap_or(&f64::NAN),
                    m.get("ctime_updates").unwrap_or(&f64::NAN)
                )
            };
            v.push(format!(
                "the kernel's own counters ({}), per iteration: times asked {}; size only {}",
                k.source,
                side(&k.queried),
                side(&k.control)
            ));
        }
        (None, Some(why)) => v.push(format!("the kernel's multigrain counters: none ({why})")),
        (None, None) => {}
    }
    v
}

/// One row per filesystem priced: the query and update prices, the model's reads, queries
/// and updates they subtract and divide by, and how.
pub fn prices(fs: &[FsUpdate]) -> Table {
    // The terms in the order a reader subtracts them: the query, the reads' parts, the update.
    let terms = [
        Term::Query,
        Term::FloorRead,
        Term::FineExcess,
        Term::CtimeSwap,
        Term::Update,
        Term::AtimeUpdate,
    ];
    let titles: Vec<String> = terms
        .iter()
        .map(|t| format!("{} ns [95% CI]", t.what()))
        .collect();
    let mut headers = vec![
        ("dir", Align::Left),
        ("fs", Align::Left),
        ("mount options", Align::Left),
        ("live Δ ns", Align::Right),
        ("model's reads Δ ns", Align::Right),
        ("updates Δ", Align::Right),
        ("chmod-stat Δ ns", Align::Right),
    ];
    headers.extend(titles.iter().map(|h| (h.as_str(), Align::Right)));
    let mut t = Table::new(&headers);
    for f in fs {
        let mut row = vec![
            f.dir.clone(),
            f.fs_type.clone(),
            f.mount_options.join(","),
            f.pair
                .as_ref()
                .map(|p| format!("{:.1}", p.delta_ns.point))
                .unwrap_or_else(|| "-".into()),
            f.reads_delta_ns
                .map(|v| format!("{v:.1}"))
                .unwrap_or_else(|| "-".into()),
            f.updates_delta
                .map(|v| format!("{v:.3}"))
                .unwrap_or_else(|| "-".into()),
            f.query_pair
                .as_ref()
                .map(|p| format!("{:.1}", p.delta_ns.point))
                .unwrap_or_else(|| "-".into()),
        ];
        row.extend(terms.iter().map(|&term| {
            f.price(term)
                .map(|e| ci(e, 1))
                .unwrap_or_else(|| "not measured".into())
        }));
        t.row(row);
    }
    t
}

/// Each filesystem's reason, one line each.
pub fn reasons(fs: &[FsUpdate]) -> Vec<String> {
    fs.iter()
        .map(|f| format!("{}: {}", f.label(), f.reason))
        .collect()
}
