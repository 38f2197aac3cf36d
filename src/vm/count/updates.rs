//! The inode timestamp updates a guest's run counted, for the `update` row: from 6.13 the
//! kernel's own count of ctime updates (debugfs `multigrain_timestamps` `ctime_updates`: every
//! `inode_set_ctime_current()` that stored a new time, on every filesystem); before, the write
//! path's update functions ([`kprobe::UPDATE_FUNCTIONS`]: `generic_update_time`, and xfs's own
//! when its module's symbol was probed).

use super::guest::{GuestCount, WorkloadCount};
use super::kprobe;
use crate::trace::FsKind;

/// The function name of the update row before 6.13: the sum of [`kprobe::UPDATE_FUNCTIONS`].
pub(crate) const UPDATE_ROW: &str = "inode_update (generic_update_time + xfs_vn_update_time)";
/// The function name of the update row from 6.13: the kernel's own count.
pub(crate) const UPDATE_ROW_MG: &str = "inode_update (multigrain:ctime_updates)";

/// The update functions of [`kprobe::UPDATE_FUNCTIONS`] the guest probed.
fn probed(g: &GuestCount) -> Vec<&'static str> {
    kprobe::UPDATE_FUNCTIONS
        .iter()
        .copied()
        .filter(|f| g.probes.iter().any(|(p, _)| p == f))
        .collect()
}

/// The row's name, the updates per op, and whether that count covers every update of the
/// run's filesystem; `None` when the guest counted none.
pub(crate) fn count(g: &GuestCount, run: &WorkloadCount) -> Option<(&'static str, f64, bool)> {
    let per = |n: u64, b: u64| (n as f64 - b as f64) / run.iterations.max(1) as f64;
    if let Some(&n) = run.multigrain.get("ctime_updates") {
        let b = run
            .baseline_multigrain
            .get("ctime_updates")
            .copied()
            .unwrap_or(0);
        return Some((UPDATE_ROW_MG, per(n, b), true));
    }
    let updaters = probed(g);
    if updaters.is_empty() {
        return None;
    }
    let hit = |f: &str, base: bool| {
        let m = if base { &run.baseline_hits } else { &run.hits };
        m.get(f).copied().unwrap_or(0)
    };
    let k = updaters
        .iter()
        .map(|f| per(hit(f, false), hit(f, true)))
        .sum();
    let covers = match run.fs {
        FsKind::Tmpfs | FsKind::Ext4 => updaters.contains(&"generic_update_time"),
        FsKind::Xfs => updaters.contains(&"xfs_vn_update_time"),
        _ => false,
    };
    Some((UPDATE_ROW, k, covers))
}

/// The symbols the row's count came from (none for the kernel's own counter).
pub(crate) fn symbols(g: &GuestCount, row: &str) -> Vec<String> {
    if row != UPDATE_ROW {
        return Vec::new();
    }
    let updaters = probed(g);
    g.probes
        .iter()
        .filter(|(f, _)| updaters.contains(&f.as_str()))
        .map(|(_, s)| s.clone())
        .collect()
}
