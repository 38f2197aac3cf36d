//! Each term's price for an estimate: `--set`, else the profile's `filesystems[]` (Linux),
//! else none (a BSD's code is not this machine's to measure), and where it came from in words.

use super::fields::TermSources;
use super::{Term, TermPrice};
use crate::probe::update::FsUpdate;
use crate::probe::Profile;

/// `term`'s prices in the profile: each filesystem kind's first measured entry; on any other
/// filesystem 0, or for a read term the first measured entry's. The source in words.
pub fn by_fs(profile: Option<&Profile>, term: Term) -> (TermPrice, String) {
    let entries: &[FsUpdate] = profile
        .map(|p| p.filesystems.as_slice())
        .unwrap_or_default();
    let mut price = TermPrice::ZERO;
    let mut named = Vec::new();
    let mut first: Option<(f64, &str)> = None;
    for f in entries {
        let Some(e) = f.prices.get(term) else {
            continue;
        };
        first.get_or_insert((e.point, &f.fs_type));
        let slot = &mut price.by_fs[f.fs_kind() as usize];
        if slot.is_none() {
            *slot = Some(e.point);
            named.push(format!(
                "{} {:.1} ns [{:.1}, {:.1}] ({})",
                f.fs_kind(),
                e.point,
                e.lower,
                e.upper,
                f.label()
            ));
        }
    }
    let Some((point, fs)) = first else {
        let unpriced: Vec<String> = entries
            .iter()
            .map(|f| format!("{} ({})", f.fs_type, f.reason))
            .collect();
        let why = if unpriced.is_empty() {
            "the profile measured no filesystem (probe --dir DIR)".to_string()
        } else {
            format!("the profile could not price it on {}", unpriced.join("; "))
        };
        return (
            price,
            format!(
                "not measured, taken as 0: {why}; {}; --set {}=… for a what-if",
                term.unmeasured(),
                term.field()
            ),
        );
    };
    let other = if term.is_read() {
        price.default_ns = point;
        format!("{fs}'s")
    } else {
        "0 (not measured)".to_string()
    };
    (
        price,
        format!(
            "profile filesystems[].{} ({}): {}; any other filesystem at {other}",
            term.field(),
            term.measured_by(),
            named.join(", ")
        ),
    )
}

/// Every term's prices for a model: `set(term)` where given (`--set`), else the profile's for
/// a Linux model, else 0 with why.
pub fn resolve_terms(
    linux: bool,
    profile: Option<&Profile>,
    set: impl Fn(Term) -> Option<f64>,
) -> ([TermPrice; Term::COUNT], TermSources) {
    let mut prices = [TermPrice::ZERO; Term::COUNT];
    let mut sources = TermSources::default();
    for t in Term::ALL {
        let (p, src) = match set(t) {
            Some(v) => (TermPrice::uniform(v), format!("--set {}", t.field())),
            None if linux => by_fs(profile, t),
            None => (TermPrice::ZERO, t.not_linux().to_string()),
        };
        prices[t as usize] = p;
        sources.0[t as usize] = src;
    }
    (prices, sources)
}
