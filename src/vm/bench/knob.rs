//! The live knob inside a real kernel: the pair of [`crate::workload::pair`] (write + statx
//! asking for the times, against write + statx asking for the size only) run in the guest on
//! every mounted file system, after the rounds of the first boot of each kernel, on the first
//! requested clocksource.
//!
//! On a kernel with multigrain timestamps (≥ 6.13) the one-write pair prices the guest's
//! inode update with the guest's own paired read costs
//! ([`crate::sim::update_price::price_at`]); the four-writes pair is then held to the model at
//! that price ([`crate::sim::validate::update::row`]): the live-knob rows. On an older kernel the
//! two sides must come out equal, and the pair says whether they did. The price also enters the
//! kernel rows' prediction ([`update_price`]): a kernel A/B of write-stat changes the updates
//! per op, not only the reads.

use serde::{Deserialize, Serialize};

pub(crate) use super::pairs::PATTERNS;
use super::rows::release;
use super::{BenchKernel, BenchReport};
use crate::probe::update::FsUpdate;
use crate::sim::result::Row;
use crate::sim::validate::update::{row, Prices};
use crate::sim::Costs;
use crate::trace::FsKind;
use crate::vm::boot::clock::ClocksourceName;
use crate::workload::pair::PairResult;

/// One kernel × file system: the update priced from the guest's one-write pair, and the
/// pairs held to the model at that price.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct KnobRow {
    pub kernel_release: String,
    pub fs: FsKind,
    /// The clocksource the pairs ran on, as the guest read it back.
    pub clocksource: ClocksourceName,
    /// The guest's paired precise and coarse read costs on that clocksource (medians of the
    /// slots), ns.
    pub precise_read_ns: f64,
    pub coarse_read_ns: f64,
    /// The price, as `probe --dir` gives it (`update_ns` null with a reason where the kernel
    /// shows no multigrain: then `check` of each pair says whether the sides came out equal).
    pub price: FsUpdate,
    /// Each pair's live Δ against the model's at the price (the first is the calibration).
    pub rows: Vec<Row>,
}

/// The median of the slots' costs on `cs` for kernel `k` (`NaN` when none).
fn slot_costs(k: &BenchKernel, cs: &ClocksourceName) -> (f64, f64) {
    let mut precise = Vec::new();
    let mut coarse = Vec::new();
    for c in k
        .boots
        .iter()
        .flat_map(|b| &b.slots)
        .filter(|s| s.clocksource_used == *cs)
        .filter_map(|s| s.costs.as_ref())
    {
        precise.push(c.precise_read_ns);
        coarse.push(c.coarse_read_ns);
    }
    (
        crate::stats::median(&precise).unwrap_or(f64::NAN),
        crate::stats::median(&coarse).unwrap_or(f64::NAN),
    )
}

/// The live-knob rows of every kernel whose guest ran the pairs.
pub(crate) fn rows(r: &BenchReport) -> Vec<KnobRow> {
    let mut out = Vec::new();
    for k in &r.kernels {
        let Some(g) = k.boots.iter().find_map(|b| b.pairs.as_ref()) else {
            continue;
        };
        let (precise, coarse) = slot_costs(k, &g.clocksource);
        let costs = Costs::reads(
            if precise.is_finite() { precise } else { 0.0 },
            if coarse.is_finite() { coarse } else { 0.0 },
            1e9 / f64::from(k.hz.max(1)),
        );
        for &fs in &r.filesystems {
            let on_fs: Vec<&PairResult> =
                g.pairs.iter().filter(|p| p.fs_type == fs.name()).collect();
            let Some(calibration) = on_fs.iter().find(|p| p.pattern == PATTERNS[0]) else {
                continue;
            };
            let price = crate::sim::update_price::price_at(&[calibration], costs);
            let prices = Prices::of(&price, "the guest's write-stat pair", costs);
            let rows = on_fs
                .iter()
                .map(|p| row(p, costs, &prices, p.pattern == PATTERNS[0]))
                .collect();
            out.push(KnobRow {
                kernel_release: release(k),
                fs,
                clocksource: g.clocksource.clone(),
                precise_read_ns: precise,
                coarse_read_ns: coarse,
                price,
                rows,
            });
        }
    }
    out
}

/// The update price (ns) a kernel row from `from` to `to` on `fs` uses: `to`'s where its
/// guest priced one, else `from`'s, with the kernel it came from.
pub(crate) fn update_price(
    knob: &[KnobRow],
    from: &str,
    to: &str,
    fs: FsKind,
) -> Option<(f64, String)> {
    [to, from].into_iter().find_map(|k| {
        let row = knob.iter().find(|r| r.kernel_release == k && r.fs == fs)?;
        Some((
            row.price.price(crate::price::Term::Update)?.point,
            k.to_string(),
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{recorded, report};
    use super::*;
    use crate::vm::boot::clock::Clocksource;
    use crate::workload::WorkloadName;

    /// One boot each of 6.12 and 7.2 under TCG, write-stat on tmpfs, ext4 and xfs, with the
    /// pairs at 2,000 iterations per block.
    const CONSOLES: [&str; 2] = [
        include_str!("../../../tests/data/vm-bench/knob-6.12.console"),
        include_str!("../../../tests/data/vm-bench/knob-7.2.console"),
    ];

    fn filled() -> BenchReport {
        let kernels = CONSOLES.iter().map(|c| recorded(c)).collect();
        let mut r = report(kernels, &[Clocksource::Tsc], &[WorkloadName::WriteStat]);
        r.filesystems = vec![FsKind::Tmpfs, FsKind::Ext4, FsKind::Xfs];
        super::super::fill::fill(&mut r);
        r
    }

    #[test]
    fn the_guest_prices_the_update_where_the_kernel_has_multigrain_and_checks_it_elsewhere() {
        let r = filled();
        assert_eq!(r.knob.len(), 6, "{:#?}", r.knob);
        for k in &r.knob {
            let pair = k.price.pair.as_ref().unwrap();
            assert_eq!(k.rows.len(), PATTERNS.len(), "{k:#?}");
            if k.kernel_release.starts_with("6.12.") {
                assert!(!pair.multigrain_expected && !pair.multigrain_observed);
                assert!(k.price.price(crate::price::Term::Update).is_none());
                assert!(pair.check.as_deref().unwrap().contains("equal"), "{pair:?}");
            } else {
                assert!(pair.multigrain_observed, "{pair:?}");
                let u = k.price.price(crate::price::Term::Update).unwrap();
                assert!(
                    u.lower <= u.point && u.point <= u.upper && u.point > 0.0,
                    "{u:?}"
                );
                // The calibration agrees by construction; the four-writes pair is predicted
                // at that price from counts the model makes, within its goal.
                assert!((k.rows[0].predicted - k.rows[0].measured).abs() < 1e-6);
                assert!(
                    k.rows[1].within_goal || k.rows[1].undecided,
                    "{:#?}",
                    k.rows[1]
                );
            }
        }
    }

    #[test]
    fn the_kernel_row_prices_the_updates_the_new_kernel_adds() {
        let r = filled();
        for fs in [FsKind::Tmpfs, FsKind::Ext4, FsKind::Xfs] {
            let c = r
                .comparisons
                .iter()
                .find(|c| c.kind == crate::vm::bench::ComparisonKind::Kernel && c.fs == fs)
                .unwrap();
            let price = r
                .knob
                .iter()
                .find(|k| k.fs == fs && k.kernel_release.starts_with("7.2."))
                .and_then(|k| k.price.price(crate::price::Term::Update))
                .unwrap();
            assert_eq!(c.update_price_ns, Some(price.point));
            assert!(c.update_priced_on.as_deref().unwrap().starts_with("7.2."));
            let (from, to) = (c.model_from.as_ref().unwrap(), c.model_to.as_ref().unwrap());
            let du = to.updates_per_op - from.updates_per_op;
            assert!(du > 0.9, "{from:?} → {to:?}");
            let u = c.predicted_update_delta_ns.unwrap();
            assert!((u - du * price.point).abs() < 1e-6);
            assert!(
                c.predicted_delta_ns.unwrap() > u,
                "the reads add to the updates"
            );
        }
        // Without a priced update the prediction is the reads alone, and says nothing of one.
        let mut bare = filled();
        for k in &mut bare.kernels {
            for b in &mut k.boots {
                b.pairs = None;
            }
        }
        super::super::fill::fill(&mut bare);
        assert!(bare.knob.is_empty());
        let c = bare
            .comparisons
            .iter()
            .find(|c| c.kind == crate::vm::bench::ComparisonKind::Kernel)
            .unwrap();
        assert!(c.update_price_ns.is_none() && c.predicted_update_delta_ns.is_none());
    }
}
