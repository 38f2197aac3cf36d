//! The prices of a profile as the estimates use them: a filesystem's entry, the live pair
//! whose loop is a scenario's, and what an unpriced filesystem would cost at its nearest
//! measured one.

use super::model_of;
use super::{pattern_scenario, Pattern};
use crate::kernel::ModelId;
use crate::price::Term;
use crate::probe::update::FsUpdate;
use crate::probe::Profile;
use crate::sim::{estimate, Costs};
use crate::trace::{CompiledScenario, FsKind, Scenario};
use crate::workload::pair::PairResult;

/// The scenario of write-stat on the filesystem of a priced entry, named `write-stat@FS`: the
/// report's row per filesystem (its base comes from the same live pair).
pub fn write_stat_on(f: &FsUpdate) -> Scenario {
    let mut s = pattern_scenario(Pattern::Write { writes: 1 }, f.fs_kind(), true)
        .expect("write-stat is a pattern");
    s.name = format!("write-stat@{}", f.fs_type);
    s.description = format!(
        "write-stat on {} ({}): pwrite then statx asking for the times",
        f.dir,
        f.mount_options.join(",")
    );
    s
}

/// The profile's update price for `fs`: the first measured entry of that kind.
pub fn for_fs(profile: &Profile, fs: FsKind) -> Option<&FsUpdate> {
    profile
        .filesystems
        .iter()
        .find(|f| f.fs_kind() == fs && f.price(Term::Update).is_some())
}

/// The profile's live pair whose loop is `compiled`'s (the same syscalls, the stat asking for
/// the times, on the same filesystem), and the model of the kernel it ran on: a base cost
/// measured on this machine instead of the scenario's.
pub fn live_pair_for<'p>(
    profile: &'p Profile,
    compiled: &CompiledScenario,
) -> Option<(&'p PairResult, ModelId)> {
    let shape = |c: &CompiledScenario| -> Vec<(crate::trace::Syscall, FsKind)> {
        c.ops.iter().map(|o| (o.syscall, o.fs)).collect()
    };
    let want = shape(compiled);
    if compiled.tasks != 1 {
        return None;
    }
    profile.filesystems.iter().find_map(|f| {
        let pair = f.pair.as_ref()?;
        let fs = pair.fs_kind();
        let same = shape(&pattern_scenario(pair.pattern, fs, true)?.compile());
        (same == want && pair.tasks == 1).then(|| (pair, model_of(pair)))
    })
}

/// Where a filesystem whose updates have no price of their own in the profile borrows one
/// from, nearest first (disk filesystems from disk filesystems).
fn nearest_kinds(fs: FsKind) -> &'static [FsKind] {
    use FsKind::*;
    match fs {
        Ext4 => &[Xfs, Btrfs, Tmpfs],
        Xfs => &[Ext4, Btrfs, Tmpfs],
        Btrfs => &[Xfs, Ext4, Tmpfs],
        Tmpfs => &[Ext4, Xfs, Btrfs],
        _ => &[Ext4, Xfs, Btrfs, Tmpfs],
    }
}

/// Notes for each filesystem of the loop whose updates the model counts but the profile does
/// not price: the estimate is at 0 for them, and what the best setting buys at the nearest
/// measured filesystem's price.
pub fn unmeasured_update_notes(
    model: ModelId,
    costs: Costs,
    compiled: &CompiledScenario,
    base: f64,
    iterations: u64,
    estimates: &[estimate::PolicyEstimate],
) -> Vec<String> {
    let best = |es: &[estimate::PolicyEstimate]| {
        es.iter()
            .max_by(|a, b| a.speedup.total_cmp(&b.speedup))
            .map(|e| (e.policy.clone(), e.speedup))
    };
    let updates = estimates.iter().any(|e| e.inode_updates_per_op > 0.0);
    if !updates || costs.term(Term::Update).default_ns != 0.0 {
        return Vec::new();
    }
    let mut kinds: Vec<FsKind> = compiled.ops.iter().map(|o| o.fs).collect();
    kinds.sort();
    kinds.dedup();
    let mut notes = Vec::new();
    for fs in kinds {
        if fs == FsKind::Pipefs || costs.term(Term::Update).by_fs[fs as usize].is_some() {
            continue;
        }
        let near = nearest_kinds(fs)
            .iter()
            .find_map(|&k| Some((k, costs.term(Term::Update).by_fs[k as usize]?)));
        let Some((near, price)) = near else {
            notes.push(format!(
                "{fs}: its inode updates are priced at 0 (no filesystem's update price in the \
                 profile: tscope probe --dir DIR on a {fs} directory measures it)"
            ));
            continue;
        };
        let at = costs.with_on(Term::Update, fs, price);
        let there = estimate::estimates(model, at, compiled, base, iterations);
        let (now, then) = (best(estimates), best(&there));
        if let (Some((p0, s0)), Some((p1, s1))) = (now, then) {
            notes.push(format!(
                "{fs}: its inode updates are not priced in this profile, so they count 0 here \
                 (best {p0}, {s0:.3}×); at {near}'s measured {price:.1} ns, the nearest \
                 measured filesystem, the best setting is {p1} at {s1:.3}× (tscope probe \
                 --dir DIR on a {fs} directory measures its own)"
            ));
        }
    }
    notes
}
