//! Measuring a filesystem's prices on the live kernel: the pairs of one directory, and
//! every directory of a probe.

use super::{price, Pairs, Pattern};
use crate::probe::update::FsUpdate;
use crate::probe::Profile;

/// The pair that prices the floored read against chmod-stat: 16 reads after the query's fine
/// stamp, each returning the floor on the queried side and the tick on the control.
pub const FLOOR_PATTERN: Pattern = Pattern::ChmodRead { reads: 16 };

/// The pair that prices a fine read's in-path excess against [`FINE_BASE_PATTERN`]: 16 reads
/// of the file the query marked, each taking a fine read on the queried side.
pub const FINE_PATTERN: Pattern = Pattern::ChmodReadSame { reads: 16 };

/// [`FINE_PATTERN`] with one read: the same atime update and query, 15 fine reads fewer.
pub const FINE_BASE_PATTERN: Pattern = Pattern::ChmodReadSame { reads: 1 };

/// Measures `cfg`'s write-stat pair, the chmod-stat pair and the chmod-stat pair with reads
/// after it ([`FLOOR_PATTERN`]) on the same directory, and prices them against `profile`'s
/// reads. The chmod pairs are skipped where the write pair saw no multigrain timestamps
/// (nothing to price). Where the model counts no update that the question adds to write-stat
/// (btrfs stores every write's time), the write-read-stat pair prices the update through the
/// read's atime.
pub fn measure_and_price(
    cfg: &crate::workload::pair::PairConfig,
    profile: &Profile,
) -> crate::error::Result<FsUpdate> {
    let measure = |pattern| {
        let mut q = cfg.clone();
        q.pattern = pattern;
        crate::workload::pair::measure(&q)
    };
    let pair = crate::workload::pair::measure(cfg)?;
    if !pair.multigrain_observed {
        return Ok(price(Pairs::of(&pair), profile));
    }
    let query = measure(Pattern::Chmod)?;
    let floor = measure(FLOOR_PATTERN)?;
    let fine = measure(FINE_PATTERN)?;
    let fine_base = measure(FINE_BASE_PATTERN)?;
    let pairs = Pairs {
        query: Some(&query),
        floor: Some(&floor),
        fine: Some(&fine),
        fine_base: Some(&fine_base),
        ..Pairs::of(&pair)
    };
    let priced = price(pairs, profile);
    if priced.update_ns.is_some() || priced.updates_delta.is_none_or(|d| d >= 0.5) {
        return Ok(priced);
    }
    let read = measure(Pattern::WriteRead)?;
    Ok(price(
        Pairs {
            read: Some(&read),
            ..pairs
        },
        profile,
    ))
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
        let cfg = crate::workload::pair::PairConfig::for_price(
            dir.clone(),
            Pattern::Write { writes: 1 },
            quick,
        );
        match measure_and_price(&cfg, profile) {
            Ok(priced) => out.push(priced),
            Err(e) => errors.push(format!("the live pair on {}: {e:#}", dir.display())),
        }
    }
    (out, errors)
}
