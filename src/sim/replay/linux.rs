//! The Linux effects of the replay: `current_time()`, `inode_set_ctime_current()`, the
//! multigrain floor, and which kernel function each read is (`ktime_get_coarse_real_ts64`
//! before 6.13, `ktime_get_coarse_real_ts64_mg` / `ktime_get_real_ts64_mg` from 6.13 —
//! torvalds/linux fs/inode.c and kernel/time/timekeeping.c, read at 0026766d).

use super::Replay;
use crate::kernel::{ClockFn, Effect, LinuxMode, PolicyKind};
use crate::price::Term;
use crate::trace::{FsKind, InodeId, Op, NO_INODE};

impl Replay<'_> {
    /// Applies one Linux effect (the BSD ones are in [`Replay::apply`]).
    pub(super) fn apply_linux(&mut self, effect: Effect, op: &Op) {
        match effect {
            Effect::LinuxUpdateIfChanged {
                target,
                modify,
                reread,
            } => {
                let id = Self::target(op, target);
                if id == NO_INODE {
                    return;
                }
                let mg = self.multigrain(op.fs);
                let now = self.current_time(id, mg);
                if modify {
                    self.file_update_time(id, op.fs, mg, now, reread);
                } else {
                    self.touch_atime(id, op.fs, mg, now.0);
                }
            }
            Effect::LinuxSetCtime { target } => {
                let id = Self::target(op, target);
                if id != NO_INODE {
                    self.set_ctime_and_mtime(id, op.fs);
                }
            }
            Effect::LinuxCopyCtimeToDir if op.dir != NO_INODE && op.inode != NO_INODE => {
                self.copy_ctime_to_dir(op);
            }
            Effect::LinuxNotifyChange { target } => {
                let id = Self::target(op, target);
                if id != NO_INODE {
                    self.notify_change(id, op.fs);
                }
            }
            Effect::LinuxTruncateIfNonEmpty { target } => {
                let id = Self::target(op, target);
                if id != NO_INODE && std::mem::take(&mut self.inodes[id as usize].nonempty) {
                    self.set_ctime_and_mtime(id, op.fs);
                }
            }
            Effect::LinuxEvict if op.inode != NO_INODE => {
                let mg = self.multigrain(op.fs);
                self.set_ctime_current(op.inode, mg);
            }
            Effect::LinuxQuery { target } => {
                let id = Self::target(op, target);
                if id != NO_INODE && self.multigrain(op.fs) {
                    self.mark_ctime_queried(id, op.fs);
                }
            }
            // btrfs: fine reads into the root item, no inode timestamp (src/kernel/linux/mod.rs).
            Effect::LinuxRootTimes { reads } => {
                for _ in 0..reads {
                    self.read(ClockFn::LinuxFine);
                }
            }
            Effect::LinuxFlushOnClose
                if op.inode != NO_INODE && self.inodes[op.inode as usize].nonempty =>
            {
                self.read(ClockFn::LinuxFine);
            }
            Effect::LinuxWritten(written) if op.inode != NO_INODE => {
                self.inodes[op.inode as usize].nonempty = written;
            }
            Effect::LinuxSync { full } if op.inode != NO_INODE => self.sync(op.inode, op.fs, full),
            _ => {}
        }
    }

    /// `file_update_time()` of inode `id` with `now` from `current_time()`: m/ctime move where
    /// `now` differs from either (read again through `inode_set_ctime_current()` with `reread`,
    /// from 6.6), and the file's first data marks its blocks to allocate.
    #[inline]
    fn file_update_time(
        &mut self,
        id: InodeId,
        fs: FsKind,
        mg: bool,
        (now_v, now_clock): (f64, ClockFn),
        reread: bool,
    ) {
        let ino = self.inodes[id as usize];
        // A file's first data since created or truncated: blocks and size to allocate at
        // writeback, a journaled change whatever the times.
        if !std::mem::replace(&mut self.inodes[id as usize].nonempty, true) {
            self.inodes[id as usize].allocating = true;
        }
        if now_v != ino.mtime || now_v != ino.ctime {
            let (v, clock) = if reread {
                self.set_ctime_current(id, mg)
            } else {
                // Before 6.6: the time current_time() read becomes m/ctime.
                self.store_ctime(id, now_v);
                (now_v, now_clock)
            };
            self.inodes[id as usize].mtime = v;
            self.update(id, fs);
            self.first_update(id, fs);
            self.record_mod(id, v, self.now, clock);
        } else {
            let clock = self.coarse_clock();
            self.record_mod(id, ino.mtime, self.now, clock);
        }
    }

    /// A c/mtime update on the write path (`file_update_time()`): the inode's first since it
    /// was created is priced apart.
    fn first_update(&mut self, id: InodeId, fs: FsKind) {
        if !std::mem::replace(&mut self.inodes[id as usize].updated, true) {
            self.stats.first_updates += 1;
            self.op_cost += self.costs.on(Term::FirstUpdate, fs);
        }
    }

    /// `touch_atime()` of inode `id` under relatime, with `now_v` from `current_time()`: the
    /// atime moves when it is not after the m/ctime (always on a pipe) and differs from now,
    /// read again for the update.
    #[inline]
    fn touch_atime(&mut self, id: InodeId, fs: FsKind, mg: bool, now_v: f64) {
        let ino = self.inodes[id as usize];
        let relatime_ok = fs == FsKind::Pipefs || ino.atime <= ino.mtime || ino.atime <= ino.ctime;
        if relatime_ok && now_v != ino.atime {
            let v = self.current_time(id, mg).0;
            self.inodes[id as usize].atime = v;
            self.update_atime(id, fs);
        }
    }

    /// The directory's m/ctime set to the inode's ctime, the directory dirtied: a modification.
    #[inline]
    fn copy_ctime_to_dir(&mut self, op: &Op) {
        let v = self.inodes[op.inode as usize].ctime;
        let dir = &mut self.inodes[op.dir as usize];
        dir.mtime = v;
        // inode_set_ctime_to_ts() stores the bare nanoseconds: the directory's
        // I_CTIME_QUERIED flag goes with the old value (fs/inode.c).
        dir.ctime = v;
        dir.queried = false;
        self.update(op.dir, op.fs);
        let clock = self.coarse_clock();
        self.record_mod(op.dir, v, self.now, clock);
    }

    /// `notify_change()` setting m/ctime to now on inode `id`.
    #[inline]
    fn notify_change(&mut self, id: InodeId, fs: FsKind) {
        let mg = self.multigrain(fs);
        let (v, clock) = self.current_time(id, mg);
        if mg {
            // setattr_copy_mgtime(): inode_set_ctime_current(), mtime = that.
            self.set_ctime_and_mtime(id, fs);
        } else {
            // setattr_copy(): ia_ctime / ia_mtime as notify_change() read them.
            self.store_ctime(id, v);
            self.inodes[id as usize].mtime = v;
            self.update(id, fs);
            self.record_mod(id, v, self.now, clock);
        }
    }

    /// A stat on a multigrain filesystem: the ctime marked queried (`I_CTIME_QUERIED`), at its
    /// cost the first time.
    #[inline]
    fn mark_ctime_queried(&mut self, id: InodeId, fs: FsKind) {
        let ino = &mut self.inodes[id as usize];
        if !ino.queried {
            ino.queried = true;
            self.stats.queries += 1;
            self.op_cost += self.costs.on(Term::Query, fs);
        }
    }

    /// `inode_set_ctime_current()`, mtime = ctime, the inode dirtied: a modification.
    fn set_ctime_and_mtime(&mut self, id: InodeId, fs: FsKind) {
        let mg = self.multigrain(fs);
        let (v, clock) = self.set_ctime_current(id, mg);
        let ino = &mut self.inodes[id as usize];
        ino.mtime = v;
        if ino.atime == f64::NEG_INFINITY {
            // A new inode: simple_inode_init_ts() sets atime too.
            ino.atime = v;
        }
        self.update(id, fs);
        self.record_mod(id, v, self.now, clock);
    }

    pub(super) fn linux_mode(&self) -> LinuxMode {
        match self.policy {
            PolicyKind::Linux { mode, .. } => mode,
            PolicyKind::Bsd { .. } => LinuxMode::Coarse,
        }
    }

    /// Whether the kernel reads through the `_mg` clock functions (Linux ≥ 6.13).
    fn mg_clock_fns(&self) -> bool {
        matches!(
            self.policy,
            PolicyKind::Linux {
                mg_clock_fns: true,
                ..
            }
        )
    }

    fn multigrain(&self, fs: FsKind) -> bool {
        self.linux_mode() == LinuxMode::Multigrain && fs.linux_multigrain()
    }

    /// The coarse clock function of this kernel (the precise what-if reads the fine one).
    pub(super) fn coarse_clock(&self) -> ClockFn {
        if self.linux_mode() == LinuxMode::Precise {
            ClockFn::LinuxFine
        } else if self.mg_clock_fns() {
            ClockFn::LinuxCoarseMg
        } else {
            ClockFn::LinuxCoarse
        }
    }

    /// A coarse read; on a multigrain kernel (`ktime_get_coarse_real_ts64_mg()`) the later of
    /// the tick and the floor.
    #[inline]
    fn coarse_mg(&mut self) -> f64 {
        self.begin_stamp();
        let clock = self.coarse_clock();
        let coarse = self.read(clock);
        if self.linux_mode() == LinuxMode::Multigrain && self.floor > coarse {
            // The floor is ahead of the tick: it is converted to a timespec and returned.
            self.stats.floored_reads += 1;
            self.op_cost += self.costs.on(Term::FloorRead, self.op_fs);
            self.floor
        } else {
            coarse
        }
    }

    /// fs/inode.c `current_time()`.
    #[inline]
    fn current_time(&mut self, id: InodeId, mg: bool) -> (f64, ClockFn) {
        if self.linux_mode() == LinuxMode::Precise {
            return (self.read(ClockFn::LinuxFine), ClockFn::LinuxFine);
        }
        // ktime_get_coarse_real_ts64_mg(): on a multigrain kernel, never behind the floor,
        // whatever the filesystem.
        let c = self.coarse_mg();
        let coarse = self.coarse_clock();
        if !mg {
            return (c, coarse);
        }
        let ino = self.inodes[id as usize];
        if ino.queried && c == ino.ctime {
            // "If there is no apparent change, then get a fine-grained timestamp": a plain
            // ktime_get_real_ts64(), which does not raise the floor.
            return (self.read(ClockFn::LinuxFine), ClockFn::LinuxFine);
        }
        (c, coarse)
    }

    /// Stores `v` as the ctime (`inode_set_ctime_to_ts()`), clearing the queried flag.
    fn store_ctime(&mut self, id: InodeId, v: f64) {
        let ino = &mut self.inodes[id as usize];
        ino.ctime = v;
        ino.queried = false;
    }

    /// fs/inode.c `inode_set_ctime_current()`.
    #[inline]
    fn set_ctime_current(&mut self, id: InodeId, mg: bool) -> (f64, ClockFn) {
        let (v, clock) = if self.linux_mode() == LinuxMode::Precise {
            (self.read(ClockFn::LinuxFine), ClockFn::LinuxFine)
        } else {
            let c = self.coarse_mg();
            let coarse = self.coarse_clock();
            let ino = self.inodes[id as usize];
            if mg && ino.queried && c <= ino.ctime {
                // ktime_get_real_ts64_mg(): fine-grained, and raises the floor.
                let f = self.read(ClockFn::LinuxFineMg);
                self.floor = self.floor.max(f);
                (f, ClockFn::LinuxFineMg)
            } else {
                (c, coarse)
            }
        };
        let ino = self.inodes[id as usize];
        if mg && (ino.queried || v != ino.ctime) {
            // fs/inode.c inode_set_ctime_current(): "No need to cmpxchg if it's exactly the
            // same" — a stored time with I_CTIME_QUERIED set never is.
            self.stats.ctime_swaps += 1;
            self.op_cost += self.costs.on(Term::CtimeSwap, self.op_fs);
        }
        self.store_ctime(id, v);
        (v, clock)
    }
}
