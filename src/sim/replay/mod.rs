//! Deterministic replay of a trace under one policy: per-op cost, per-inode timestamp state
//! (stored times, multigrain "queried" flag, deferred BSD flags) and accuracy counters.
//!
//! Time model: a single virtual clock. An op with a recorded `time_ns` sets it; otherwise the
//! clock advances by the op's modelled cost (base cost per op plus its timestamp work), so the
//! coarse tick moves as it would while the loop runs. The base cost is the same for every op,
//! or, given [`Replay::with_base_by_position`], each position of the loop has its own (`vm
//! count` measures where a guest's time goes), so the tick moves mostly inside the slow ops.
//! Every timestamp of an op is taken at the op's start, or, given
//! [`Replay::with_stamp_at_by_position`], each of them that far into the op's base cost (`vm
//! count` measures where in each syscall the kernel reads its clocks); the clock still advances
//! by the whole op afterwards. Memory is one small record per inode id, whatever the trace length.

use crate::kernel::{table_index, Action, ClockFn, Effect, PolicyKind, Target};
use crate::trace::{FsKind, InodeId, Op, FS_KINDS, NO_INODE};

mod linux;
mod stats;
pub use crate::price::Costs;
use crate::price::Term;
pub use stats::Stats;
#[cfg(test)]
mod tests;

#[derive(Debug, Clone, Copy)]
struct Inode {
    mtime: f64,
    ctime: f64,
    atime: f64,
    last_stamp: f64,
    has_stamp: bool,
    queried: bool,
    /// Linux: written since created or truncated (an `O_TRUNC` open changes its size).
    nonempty: bool,
    pending_mod: bool,
    pending_access: bool,
    pending_since: f64,
    /// The journal transaction (of its filesystem, [`Replay::transactions`]) that holds its
    /// last timestamp store; 0: none.
    stored_in: u64,
    /// Its first data since created or truncated is not yet written back: the next sync
    /// allocates its blocks and size in the running transaction and commits it.
    allocating: bool,
    /// Linux: the write path has updated its c/mtime since it was created.
    updated: bool,
}

const FRESH: Inode = Inode {
    mtime: f64::NEG_INFINITY,
    ctime: f64::NEG_INFINITY,
    atime: f64::NEG_INFINITY,
    last_stamp: 0.0,
    has_stamp: false,
    queried: false,
    nonempty: false,
    pending_mod: false,
    pending_access: false,
    pending_since: 0.0,
    stored_in: 0,
    allocating: false,
    updated: false,
};

/// How long a journal transaction stays open before the filesystem commits it on its own:
/// ext4's `commit=` default (`JBD2_DEFAULT_MAX_COMMIT_AGE`, 5 s, include/linux/jbd2.h), xfs's
/// log worker (`xfs_syncd_centisecs`, 30 s, fs/xfs/xfs_globals.c); `None`: no journal the
/// replay follows.
fn commit_age_ns(fs: FsKind) -> Option<f64> {
    match fs {
        FsKind::Ext4 => Some(5e9),
        FsKind::Xfs => Some(30e9),
        _ => None,
    }
}

/// One replay in progress.
#[derive(Debug)]
pub struct Replay<'a> {
    table: &'a [Action],
    policy: PolicyKind,
    costs: Costs,
    base_ns_per_op: f64,
    /// Base cost of each position of the loop (empty: `base_ns_per_op` for every op).
    base_by_position: Vec<f64>,
    /// Where in each position's base cost its successive timestamps are taken (fractions;
    /// empty: at the op's start).
    stamp_at_by_position: Vec<Vec<f64>>,
    /// The op being stepped: its start, base cost, position, and how many Linux timestamps
    /// (coarse reads) it has begun.
    op_start: f64,
    op_base: f64,
    op_position: usize,
    op_stamps: usize,
    /// The filesystem of the op being stepped (a floored read is priced on it).
    op_fs: FsKind,
    /// How far the Linux coarse clock's value is behind the time (0: it shows the tick's
    /// grid time from the tick on).
    coarse_lag_ns: f64,
    /// The position of the next op in its iteration.
    position: usize,
    inodes: Vec<Inode>,
    now: f64,
    /// Linux multigrain floor (`mg_floor`): the latest fine-grained time handed out.
    floor: f64,
    last_mod: (InodeId, f64),
    op_cost: f64,
    /// The open journal transaction of each filesystem kind (from 1), and when its first store
    /// landed (NaN: nothing stored since the last commit).
    transactions: [u64; FS_KINDS],
    opened_at: [f64; FS_KINDS],
    stats: Stats,
}

impl<'a> Replay<'a> {
    /// A replay of `table` (from [`crate::kernel::ModelId::table`]) under `policy`.
    /// `inodes` pre-sizes the per-inode state (it grows on demand).
    pub fn new(
        table: &'a [Action],
        policy: PolicyKind,
        costs: Costs,
        base_ns_per_op: f64,
        inodes: usize,
    ) -> Self {
        Replay {
            table,
            policy,
            costs,
            base_ns_per_op,
            base_by_position: Vec::new(),
            stamp_at_by_position: Vec::new(),
            op_start: 0.0,
            op_base: 0.0,
            op_position: 0,
            op_stamps: 0,
            op_fs: FsKind::Pipefs,
            coarse_lag_ns: 0.0,
            position: 0,
            inodes: vec![FRESH; inodes],
            now: 0.0,
            floor: f64::NEG_INFINITY,
            last_mod: (NO_INODE, 0.0),
            op_cost: 0.0,
            transactions: [1; FS_KINDS],
            opened_at: [f64::NAN; FS_KINDS],
            stats: Stats::default(),
        }
    }

    /// The same replay with a base cost per position of the loop instead of one for every
    /// op: the op after one that `ends_iteration` is position 0, and positions wrap around
    /// `base_ns.len()` (an empty list keeps the single base cost).
    pub fn with_base_by_position(mut self, base_ns: Vec<f64>) -> Self {
        self.base_by_position = base_ns;
        self
    }

    /// The same replay with each position's timestamps taken inside the op instead of at its
    /// start: the k-th Linux timestamp of the op (each begins with a coarse read:
    /// `current_time()`, `inode_set_ctime_current()`) at `at[position][k]` × that position's
    /// base cost, the last entry for any further one; BSD effects at `at[position][0]`. The
    /// clock still advances by the whole op afterwards. Only with
    /// [`Self::with_base_by_position`], position for position; a missing or empty entry is
    /// the op's start, and an empty list changes nothing.
    pub fn with_stamp_at_by_position(mut self, at: Vec<Vec<f64>>) -> Self {
        self.stamp_at_by_position = at;
        self
    }

    /// The same replay with the Linux coarse clock `lag_ns` behind: it moves every tick as
    /// before, but shows the time `lag_ns` before the tick (`vm count` measures it in the
    /// guest: the timekeeper's grid and the tick interrupt are out of phase, fixed at boot).
    /// Only comparisons of coarse values with fine ones see it: the multigrain floor and
    /// fine-grained ctimes, and staleness. 0 changes nothing.
    pub fn with_coarse_lag(mut self, lag_ns: f64) -> Self {
        self.coarse_lag_ns = lag_ns;
        self
    }

    /// The base cost of the next op, `op`, its position, and the position after it.
    #[inline]
    fn base_of(&mut self, op: &Op) -> (f64, usize) {
        if self.base_by_position.is_empty() {
            return (self.base_ns_per_op, 0);
        }
        let p = self.position;
        self.position = if op.ends_iteration {
            0
        } else {
            (p + 1) % self.base_by_position.len()
        };
        (self.base_by_position[p], p)
    }

    /// Where in the op being stepped its `k`-th timestamp is taken (ns after its start).
    #[inline]
    fn stamp_at(&self, k: usize) -> f64 {
        match self.stamp_at_by_position.get(self.op_position) {
            Some(at) if !at.is_empty() => at[k.min(at.len() - 1)] * self.op_base,
            _ => 0.0,
        }
    }

    /// A Linux timestamp of the op begins (its coarse read): the clock moves to its place.
    #[inline]
    pub(super) fn begin_stamp(&mut self) {
        if !self.stamp_at_by_position.is_empty() {
            self.now = self.op_start + self.stamp_at(self.op_stamps);
            self.op_stamps += 1;
        }
    }

    /// Whether an op of table index `index` (`kernel::table_index`) has no timestamp work
    /// under this replay: stepping it only counts it and moves the clock to its time.
    pub fn effectless_at(&self, index: usize) -> bool {
        self.table
            .get(index)
            .is_none_or(|a| matches!(a[0], Effect::None))
    }

    /// Counts `n` ops without timestamp work that were not stepped (an strace replay leaves out
    /// the ops that no policy stamps, `sim::streamed`): their number and base cost. For a
    /// replay with a single base cost, where a skipped op only counts.
    pub fn count_skipped(&mut self, n: u64) {
        debug_assert!(self.base_by_position.is_empty());
        self.stats.ops += n;
        self.stats.total_ns += self.base_ns_per_op * n as f64;
    }

    /// Replays every op of `ops` and returns the totals.
    pub fn run<I: IntoIterator<Item = Op>>(mut self, ops: I) -> Stats {
        for op in ops {
            self.step(op);
        }
        self.stats
    }

    /// Replays one op.
    #[inline]
    pub fn step(&mut self, op: Op) {
        if let Some(t) = op.time_ns {
            self.now = t as f64;
        }
        // By reference: each effect is loaded from the table where it lies (a copy of the
        // 16-byte action on the stack, read back 4 bytes at a time, stalled store forwarding).
        let table: &'a [Action] = self.table;
        let action: &'a Action = &table[table_index(op.syscall, op.fs)];
        let (base, position) = self.base_of(&op);
        if matches!(action[0], Effect::None) {
            // No timestamp work (most of an strace log): the same totals, without the
            // per-inode state (ids are sized on first use, so skipping `ensure` changes nothing).
            let total = base;
            self.stats.total_ns += total;
            self.stats.ops += 1;
            self.stats.iterations += op.ends_iteration as u64;
            if op.time_ns.is_none() {
                self.now += total;
            }
            return;
        }
        self.ensure(op.inode);
        self.ensure(op.dir);
        self.op_cost = 0.0;
        self.op_fs = op.fs;
        let start = self.now;
        if !self.stamp_at_by_position.is_empty() {
            (self.op_start, self.op_base, self.op_position) = (start, base, position);
            self.op_stamps = 0;
            self.now = start + self.stamp_at(0);
        }
        for &effect in action {
            if matches!(effect, Effect::None) {
                break;
            }
            self.apply(effect, &op);
        }
        self.now = start;
        let total = base + self.op_cost;
        self.stats.total_ns += total;
        self.stats.timestamp_ns += self.op_cost;
        self.stats.ops += 1;
        self.stats.iterations += op.ends_iteration as u64;
        if op.time_ns.is_none() {
            self.now += total;
        }
    }

    /// The totals so far.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    #[inline]
    fn ensure(&mut self, id: InodeId) {
        if id != NO_INODE && id as usize >= self.inodes.len() {
            self.inodes.resize(id as usize + 1, FRESH);
        }
    }

    #[inline]
    fn read(&mut self, clock: ClockFn) -> f64 {
        self.stats.reads[clock as usize] += 1;
        self.op_cost += self.costs.read_cost(clock);
        if matches!(clock, ClockFn::LinuxFine | ClockFn::LinuxFineMg) {
            self.op_cost += self.costs.on(Term::FineExcess, self.op_fs);
        }
        let v = clock.value(self.now, self.costs.tick_ns);
        if self.coarse_lag_ns != 0.0
            && matches!(clock, ClockFn::LinuxCoarse | ClockFn::LinuxCoarseMg)
        {
            v - self.coarse_lag_ns
        } else {
            v
        }
    }

    #[inline]
    fn update(&mut self, id: InodeId, fs: FsKind) {
        self.stats.updates += 1;
        self.op_cost += self.costs.on(Term::Update, fs);
        self.journal_store(id, fs);
    }

    /// A store of `id`'s times lands in its filesystem's open transaction (after closing one
    /// that the filesystem has committed on its own by now).
    fn journal_store(&mut self, id: InodeId, fs: FsKind) {
        let Some(age) = commit_age_ns(fs) else {
            return;
        };
        self.commit_if_aged(fs, age);
        let k = fs as usize;
        if self.opened_at[k].is_nan() {
            self.opened_at[k] = self.now;
        }
        self.inodes[id as usize].stored_in = self.transactions[k];
    }

    /// Closes `fs`'s open transaction where it has been open `age` ns: the filesystem's own
    /// commit took it, and no fsync pays for it.
    fn commit_if_aged(&mut self, fs: FsKind, age: f64) {
        let k = fs as usize;
        if self.now - self.opened_at[k] >= age {
            self.transactions[k] += 1;
            self.opened_at[k] = f64::NAN;
        }
    }

    /// An fsync (`full`) or fdatasync of `id`: the commit of its filesystem's open
    /// transaction where that holds `id`'s last timestamp store (a full fsync only), or where
    /// the sync's writeback allocates `id`'s first data (both).
    fn sync(&mut self, id: InodeId, fs: FsKind, full: bool) {
        let Some(age) = commit_age_ns(fs) else {
            return;
        };
        self.commit_if_aged(fs, age);
        let k = fs as usize;
        let allocating = std::mem::take(&mut self.inodes[id as usize].allocating);
        if allocating || (full && self.inodes[id as usize].stored_in == self.transactions[k]) {
            self.stats.sync_commits += 1;
            self.op_cost += self.costs.on(Term::SyncCommit, fs);
            self.transactions[k] += 1;
            self.opened_at[k] = f64::NAN;
        }
    }

    /// A Linux atime store (`touch_atime()` → `inode_update_time(S_ATIME)`): an update of its
    /// own kind and price.
    #[inline]
    fn update_atime(&mut self, id: InodeId, fs: FsKind) {
        self.stats.updates += 1;
        self.stats.atime_updates += 1;
        self.op_cost += self.costs.on(Term::AtimeUpdate, fs);
        self.journal_store(id, fs);
    }

    #[inline]
    fn record_mod(&mut self, id: InodeId, stamp: f64, true_ns: f64, clock: ClockFn) {
        let s = &mut self.stats;
        s.modifications += 1;
        s.stamp_clocks |= 1 << clock as u8;
        let ino = &mut self.inodes[id as usize];
        if ino.has_stamp {
            s.successive_pairs += 1;
            s.successive_equal += (stamp == ino.last_stamp) as u64;
        }
        ino.last_stamp = stamp;
        ino.has_stamp = true;
        let (last_id, last_stamp) = self.last_mod;
        if last_id != NO_INODE && last_id != id {
            s.cross_pairs += 1;
            if stamp == last_stamp {
                s.cross_equal += 1;
            } else if stamp < last_stamp {
                s.cross_inverted += 1;
            }
        }
        self.last_mod = (id, stamp);
        let stale = (true_ns - stamp).abs();
        if stale > s.max_staleness_ns {
            s.max_staleness_ns = stale;
        }
    }

    fn target(op: &Op, t: Target) -> InodeId {
        match t {
            Target::Inode => op.inode,
            Target::Dir => op.dir,
        }
    }

    #[inline]
    fn apply(&mut self, effect: Effect, op: &Op) {
        match effect {
            Effect::None => {}
            Effect::NewInode => {
                if op.inode != NO_INODE {
                    self.inodes[op.inode as usize] = FRESH;
                }
            }
            Effect::VfsTimestamp { target, modify } => {
                if let PolicyKind::Bsd { vfs_clock } = self.policy {
                    self.stamp(Self::target(op, target), vfs_clock, modify, op.fs);
                }
            }
            Effect::Fixed {
                clock,
                target,
                modify,
            } => self.stamp(Self::target(op, target), clock, modify, op.fs),
            Effect::Defer { target, modify } => {
                let id = Self::target(op, target);
                if id == NO_INODE {
                    return;
                }
                let now = self.now;
                let ino = &mut self.inodes[id as usize];
                if !modify {
                    ino.pending_access = true;
                } else if ino.pending_mod {
                    // Coalesced: it will get the same time as the pending modification.
                    self.stats.modifications += 1;
                    self.stats.successive_pairs += 1;
                    self.stats.successive_equal += 1;
                } else {
                    ino.pending_mod = true;
                    ino.pending_since = now;
                }
            }
            Effect::Flush { target } => {
                let id = Self::target(op, target);
                let PolicyKind::Bsd { vfs_clock } = self.policy else {
                    return;
                };
                if id == NO_INODE {
                    return;
                }
                let ino = self.inodes[id as usize];
                if !(ino.pending_mod || ino.pending_access) {
                    return;
                }
                let v = self.read(vfs_clock);
                self.update(id, op.fs);
                let ino = &mut self.inodes[id as usize];
                ino.pending_access = false;
                ino.atime = v;
                if ino.pending_mod {
                    ino.pending_mod = false;
                    ino.mtime = v;
                    ino.ctime = v;
                    let since = ino.pending_since;
                    self.record_mod(id, v, since, vfs_clock);
                }
            }
            _ => self.apply_linux(effect, op),
        }
    }

    /// BSD: take `clock` now and store it on `id`.
    #[inline]
    fn stamp(&mut self, id: InodeId, clock: ClockFn, modify: bool, fs: FsKind) {
        if id == NO_INODE {
            return;
        }
        let v = self.read(clock);
        self.update(id, fs);
        let ino = &mut self.inodes[id as usize];
        if modify {
            ino.mtime = v;
            ino.ctime = v;
            self.record_mod(id, v, self.now, clock);
        } else {
            ino.atime = v;
        }
    }
}
