//! What each kind of work costs the replay: the reads, the update, the query, the floored
//! read and the in-path excess, per filesystem where measured.

use crate::kernel::ClockFn;
use crate::trace::FsKind;

/// An update price per filesystem, indexed by `FsKind as usize`. The length is a literal (a
/// constant path in an array type inside this struct breaks rustc 1.95's MIR check); the
/// assertion below keeps it in step with [`FsKind::ALL`].
pub type UpdateByFs = [Option<f64>; 7];
const _: () = assert!(crate::trace::FS_KINDS == 7);

/// What each kind of work costs, in ns, and the tick of the coarse clock.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Costs {
    /// One counter read (Linux `ktime_get_real_ts64`, BSD `nanotime`/`microtime`).
    pub precise_read_ns: f64,
    /// One coarse read (`ktime_get_coarse_real_ts64`, `getnanotime`, `time_second`).
    pub coarse_read_ns: f64,
    /// The work of storing a changed timestamp (Linux: `mark_inode_dirty`), per update, on a
    /// filesystem without a price of its own in `update_ns_by_fs`.
    pub update_ns: f64,
    /// The price of an update per filesystem, indexed by `FsKind as usize` (`None`: none of
    /// its own, `update_ns` holds): measured by `probe --dir` on the live kernel.
    pub update_ns_by_fs: UpdateByFs,
    /// Linux multigrain: what a ctime query brings beyond the reads and the update the model
    /// counts (the `fetch_or` that marks it, and the fine stamp's floor and ctime
    /// compare-exchanges), per query, on a filesystem without a price of its own.
    pub query_ns: f64,
    /// The query's price per filesystem, as `update_ns_by_fs`: measured by `probe --dir`
    /// (the chmod-stat pair).
    pub query_ns_by_fs: UpdateByFs,
    /// Linux multigrain: what a coarse read that returns the floor costs beyond one that
    /// returns the tick's time (`ktime_get_coarse_real_ts64_mg()` converts the floor with
    /// `ktime_to_timespec64()` while the floor is ahead of the tick), per such read, on a
    /// filesystem without a price of its own.
    pub floor_read_ns: f64,
    /// The floored read's price per filesystem, as `update_ns_by_fs`: measured by
    /// `probe --dir` (the chmod-stat pair with reads after it).
    pub floor_read_ns_by_fs: UpdateByFs,
    /// Linux: what a fine read (`ktime_get_real_ts64`, `ktime_get_real_ts64_mg`) costs inside
    /// the kernel op that takes it beyond `precise_read_ns` (the syscall pair's price, a bare
    /// `clock_gettime` with the least work before the read), per such read, on a filesystem
    /// without a price of its own.
    pub fine_excess_ns: f64,
    /// The in-path excess per filesystem, as `update_ns_by_fs`: measured by `probe --dir`
    /// (chmod-stat with 16 reads of the same file against 1).
    pub fine_excess_ns_by_fs: UpdateByFs,
    /// Period of the coarse clock (the tick).
    pub tick_ns: f64,
}

impl Costs {
    /// No filesystem has a price of its own.
    pub const UNIFORM: UpdateByFs = [None; 7];

    /// The price of one update on `fs`.
    #[inline]
    pub fn update_on(&self, fs: FsKind) -> f64 {
        self.update_ns_by_fs[fs as usize].unwrap_or(self.update_ns)
    }

    /// The price of one ctime query on `fs`.
    #[inline]
    pub fn query_on(&self, fs: FsKind) -> f64 {
        self.query_ns_by_fs[fs as usize].unwrap_or(self.query_ns)
    }

    /// What a floored coarse read costs beyond a plain one on `fs`.
    #[inline]
    pub fn floor_read_on(&self, fs: FsKind) -> f64 {
        self.floor_read_ns_by_fs[fs as usize].unwrap_or(self.floor_read_ns)
    }

    /// What a Linux fine read costs inside an op on `fs` beyond the precise read's price.
    #[inline]
    pub fn fine_excess_on(&self, fs: FsKind) -> f64 {
        self.fine_excess_ns_by_fs[fs as usize].unwrap_or(self.fine_excess_ns)
    }

    /// Reads at these prices and the coarse clock's tick, nothing else priced (no update,
    /// query, floored-read or in-path price).
    pub const fn reads(precise_read_ns: f64, coarse_read_ns: f64, tick_ns: f64) -> Costs {
        Costs {
            precise_read_ns,
            coarse_read_ns,
            update_ns: 0.0,
            update_ns_by_fs: Costs::UNIFORM,
            query_ns: 0.0,
            query_ns_by_fs: Costs::UNIFORM,
            floor_read_ns: 0.0,
            floor_read_ns_by_fs: Costs::UNIFORM,
            fine_excess_ns: 0.0,
            fine_excess_ns_by_fs: Costs::UNIFORM,
            tick_ns,
        }
    }

    /// The same costs without the update, query, floored-read and in-path prices: the reads
    /// alone at the syscall pair's prices.
    pub fn reads_only(self) -> Costs {
        Costs::reads(self.precise_read_ns, self.coarse_read_ns, self.tick_ns)
    }

    #[inline]
    pub(super) fn read_cost(&self, clock: ClockFn) -> f64 {
        if clock.is_counter() {
            self.precise_read_ns
        } else {
            self.coarse_read_ns
        }
    }
}
