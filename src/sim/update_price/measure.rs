//! Measuring a filesystem's prices on the live kernel: the pairs of one directory, and
//! every directory of a probe.

use super::Pattern;
use crate::price::recipe;
use crate::probe::update::FsUpdate;
use crate::probe::Profile;

/// Measures `cfg`'s write-stat pair, then every other pair the recipes name up front
/// ([`recipe::patterns_up_front`]) on the same directory, and prices them against `profile`'s
/// reads; a lazy recipe's pairs are measured where the term is still unpriced (btrfs's update,
/// through the read's atime). The other pairs are skipped where the write pair saw no
/// multigrain timestamps (nothing to price).
pub fn measure_and_price(
    cfg: &crate::workload::pair::PairConfig,
    profile: &Profile,
) -> crate::error::Result<FsUpdate> {
    let measure = |pattern: Pattern| {
        let mut q = cfg.clone();
        q.pattern = pattern;
        q.iterations = pattern.block_iterations(cfg.iterations);
        crate::workload::pair::measure(&q)
    };
    let mut pairs = vec![crate::workload::pair::measure(cfg)?];
    if !pairs[0].multigrain_observed {
        return Ok(super::price(&[&pairs[0]], profile));
    }
    let fs = pairs[0].fs_kind();
    for pattern in recipe::patterns_up_front(fs).into_iter().skip(1) {
        pairs.push(measure(pattern)?);
    }
    let mut priced = super::price(&pairs.iter().collect::<Vec<_>>(), profile);
    for r in recipe::RECIPES
        .iter()
        .filter(|r| r.lazy && r.applies_on(fs))
    {
        if priced.price(r.term).is_some() {
            continue;
        }
        let missing: Vec<Pattern> = r
            .patterns()
            .filter(|p| !pairs.iter().any(|q| q.pattern == *p))
            .collect();
        for p in missing {
            pairs.push(measure(p)?);
        }
        priced = super::price(&pairs.iter().collect::<Vec<_>>(), profile);
    }
    Ok(priced)
}

/// The live pair on each of `dirs` (one per filesystem: a directory on a device already
/// measured is skipped), priced against `profile`'s reads. A pair that fails is a line in
/// the returned errors, not the end of the others.
pub fn measure_all(
    profile: &Profile,
    dirs: &[std::path::PathBuf],
    quick: bool,
) -> (Vec<FsUpdate>, Vec<String>) {
    use std::os::unix::fs::MetadataExt;
    let (mut out, mut errors, mut devices) = (Vec::new(), Vec::new(), Vec::new());
    for dir in dirs {
        match std::fs::metadata(dir) {
            Ok(m) if devices.contains(&m.dev()) => continue,
            Ok(m) => devices.push(m.dev()),
            Err(e) => {
                errors.push(format!("{}: {e}", dir.display()));
                continue;
            }
        }
        let cfg = crate::workload::pair::PairConfig::for_price(dir.clone(), recipe::WRITE, quick);
        match measure_and_price(&cfg, profile) {
            Ok(priced) => out.push(priced),
            Err(e) => errors.push(format!("the live pair on {}: {e:#}", dir.display())),
        }
    }
    (out, errors)
}
