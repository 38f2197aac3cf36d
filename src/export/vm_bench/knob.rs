//! The live-knob table of `vm bench`: per kernel and file system, the guest's update price
//! and each pair's live Δ against the model's at that price.

use super::super::table::{Align, Table};
use crate::fmt::ns;
use crate::price::Term;
use crate::vm::bench::knob::KnobRow;

pub(super) fn knob_table(rows: &[KnobRow]) -> Table {
    let mut t = Table::new(&[
        ("kernel", Align::Left),
        ("fs", Align::Left),
        ("pair", Align::Left),
        ("Δ ns measured", Align::Right),
        ("Δ predicted", Align::Right),
        ("update priced at", Align::Right),
        ("verdict", Align::Left),
    ]);
    for k in rows {
        let priced = k
            .price
            .price(Term::Update)
            .map_or_else(|| "-".to_string(), |u| ns(u.point));
        for (i, r) in k.rows.iter().enumerate() {
            let verdict = if k.price.price(Term::Update).is_none() && i > 0 {
                "not priced".to_string()
            } else if k.price.price(Term::Update).is_none() {
                // No price: the pair is the kernel's check (no multigrain).
                k.price
                    .pair
                    .as_ref()
                    .and_then(|p| p.check.clone())
                    .unwrap_or_else(|| k.price.reason.clone())
            } else if i == 0 {
                "calibration".to_string()
            } else if r.undecided {
                "undecided (noisy)".to_string()
            } else if r.within_goal {
                "agrees".to_string()
            } else {
                "disagrees".to_string()
            };
            t.row(vec![
                k.kernel_release.clone(),
                k.fs.to_string(),
                r.case.split(" on ").next().unwrap_or(&r.case).to_string(),
                ns(r.measured),
                ns(r.predicted),
                priced.clone(),
                verdict,
            ]);
        }
    }
    t
}
