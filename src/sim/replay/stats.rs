//! The totals of one replay: reads per clock function, updates, queries, cost and accuracy
//! counters.

use crate::kernel::ClockFn;

/// Totals of one replay.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats {
    pub ops: u64,
    /// Ops that end an iteration (will-it-scale "ops").
    pub iterations: u64,
    /// Reads per clock function, indexed by `ClockFn as usize`.
    pub reads: [u64; ClockFn::ALL.len()],
    /// Timestamp stores (Linux: only when the time moved, each dirtying the inode), every kind.
    pub updates: u64,
    /// Of `updates`, Linux atime stores (`touch_atime()`), priced apart.
    pub atime_updates: u64,
    /// Linux: of `updates` on the write path (`file_update_time()`), an inode's first since it
    /// was created, each priced at
    /// [`Term::FirstUpdate`](crate::price::Term::FirstUpdate) on its filesystem beyond the
    /// update's own price.
    pub first_updates: u64,
    /// Linux multigrain: stats that mark an inode's ctime queried (the first that asks for the
    /// times after each store: `fill_mg_cmtime`'s atomic `fetch_or` of `I_CTIME_QUERIED`),
    /// each priced at [`Term::Query`](crate::price::Term::Query) on its filesystem.
    pub queries: u64,
    /// Linux multigrain: coarse reads that returned the floor, ahead of the tick
    /// (`ktime_get_coarse_real_ts64_mg()` after a fine stamp in the same tick), each priced at
    /// [`Term::FloorRead`](crate::price::Term::FloorRead) on its filesystem beyond the coarse read.
    pub floored_reads: u64,
    /// Linux multigrain: `inode_set_ctime_current()` calls on a multigrain inode that moved
    /// its stored ctime (a new time, or the queried flag to clear): what the kernel's
    /// `ctime_swaps` counter counts ([`crate::probe::multigrain`]).
    pub ctime_swaps: u64,
    /// Linux ext4 and xfs: syncs that forced the journal's commit, a full fsync finding the
    /// file's last timestamp store not yet committed, or any sync whose writeback allocates a
    /// file's first data (each priced at [`Term::SyncCommit`](crate::price::Term::SyncCommit)
    /// on its filesystem).
    pub sync_commits: u64,
    pub total_ns: f64,
    pub timestamp_ns: f64,
    pub modifications: u64,
    pub successive_pairs: u64,
    pub successive_equal: u64,
    pub cross_pairs: u64,
    pub cross_equal: u64,
    pub cross_inverted: u64,
    pub max_staleness_ns: f64,
    /// Bit `ClockFn as usize` set when that clock produced a modification's timestamp.
    pub stamp_clocks: u8,
}

impl Stats {
    /// Iterations, or ops when the trace has no iteration marks.
    pub fn units(&self) -> u64 {
        if self.iterations > 0 {
            self.iterations
        } else {
            self.ops
        }
    }

    /// Counter and coarse reads.
    pub fn counter_reads(&self) -> u64 {
        ClockFn::ALL
            .iter()
            .filter(|c| c.is_counter())
            .map(|&c| self.reads[c as usize])
            .sum()
    }

    pub fn coarse_reads(&self) -> u64 {
        ClockFn::ALL
            .iter()
            .filter(|c| !c.is_counter())
            .map(|&c| self.reads[c as usize])
            .sum()
    }
}
