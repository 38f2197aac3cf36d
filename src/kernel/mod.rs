//! Kernel models: for each OS, per syscall and filesystem kind, which timestamp work the kernel
//! does — how many reads, of which clock function (a coarse tick copy or a counter read), and
//! when a changed timestamp dirties the inode. Policies are the knob settings of a model.
//!
//! The tables are static rows of cited facts ([`table::Row`]): what a row matches (kernel
//! versions, syscalls, filesystems), its timestamp work ([`Effect`]s) and its source. A small
//! walk finds the first row that holds; [`crate::sim`] gives the effects meaning. The rows are
//! what `tscope simulate --explain` prints and `docs/kernel-models.md` embeds; the module doc
//! of [`linux`] and [`bsd`] names the functions too.

pub mod bsd;
pub mod explain;
pub mod linux;
pub mod model;
pub mod table;

use serde::Serialize;

pub use model::{Family, ModelId, ModelSpec, Version};

use crate::trace::{FsKind, Syscall};

impl ModelId {
    /// The timestamp work of `syscall` on `fs` under this model, and its source.
    pub fn rule(self, syscall: Syscall, fs: FsKind) -> Rule {
        match self.family {
            Family::Linux => linux::rule(self.version, syscall, fs),
            Family::Freebsd => bsd::rule(bsd::Os::FreeBsd(self.version), syscall, fs),
            Family::Dragonfly => bsd::rule(bsd::Os::DragonFly, syscall, fs),
            Family::Netbsd | Family::NetbsdKnob => bsd::rule(bsd::Os::NetBsd, syscall, fs),
        }
    }

    /// The timestamp work of `syscall` on `fs` under this model.
    pub fn action(self, syscall: Syscall, fs: FsKind) -> Action {
        self.rule(syscall, fs).action
    }

    /// The whole table, indexed by `syscall as usize * FsKind::ALL.len() + fs as usize`.
    pub fn table(self) -> Vec<Action> {
        let mut t = Vec::with_capacity(Syscall::ALL.len() * FsKind::ALL.len());
        for s in Syscall::ALL {
            for f in FsKind::ALL {
                t.push(self.action(s, f));
            }
        }
        t
    }
}

/// Where a count comes from: repository, file, function, and the release or commit it was read
/// at (`status` says whether it was read in the source or recalled).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Source {
    pub repo: &'static str,
    pub file: &'static str,
    pub function: &'static str,
    pub at: &'static str,
    /// `read` (checked against the source text) or `recalled` (not re-read: first suspect).
    pub status: &'static str,
}

/// One table entry: the effects and the source behind them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rule {
    pub action: Action,
    pub source: Source,
}

/// Index of `(syscall, fs)` in [`ModelId::table`].
#[inline]
pub fn table_index(syscall: Syscall, fs: FsKind) -> usize {
    syscall as usize * FsKind::ALL.len() + fs as usize
}

/// One knob setting of a model, named `<model>:<value>`.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    pub model: ModelId,
    pub value: String,
    pub kind: PolicyKind,
    /// The setting a stock kernel runs with (speedups are relative to it).
    pub stock: bool,
}

impl Policy {
    /// `<family>:<value>`, e.g. `freebsd:3` (the version is not part of a policy's name).
    pub fn name(&self) -> String {
        format!("{}:{}", self.model.name(), self.value)
    }

    /// Finds a policy by its name, `MODEL:VALUE`, where MODEL is a family (its newest version),
    /// `family@version`, or the alias `linux-multigrain`.
    pub fn parse(name: &str) -> Option<Policy> {
        let (m, v) = name.split_once(':')?;
        let model = ModelId::parse(m)?;
        model.policies().into_iter().find(|p| p.value == v)
    }

    /// The policy of the same value in `model` (same family), if it has one.
    pub fn for_model(&self, model: ModelId) -> Option<Policy> {
        if model.family != self.model.family {
            return None;
        }
        model.policies().into_iter().find(|p| p.value == self.value)
    }
}

/// What a policy changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PolicyKind {
    /// The clock function `vfs_timestamp()` uses.
    Bsd { vfs_clock: ClockFn },
    /// How Linux `current_time()` / `inode_set_ctime_current()` read the clock, and whether
    /// they read it through the multigrain functions (`mg_clock_fns`, Linux ≥ 6.13: every
    /// coarse read is `ktime_get_coarse_real_ts64_mg()`, the fine read of
    /// `inode_set_ctime_current()` is `ktime_get_real_ts64_mg()`, whatever the policy).
    Linux { mode: LinuxMode, mg_clock_fns: bool },
}

/// Linux timestamp granularity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinuxMode {
    /// `ktime_get_coarse_real_ts64()`: the time of the last tick.
    Coarse,
    /// ≥ 6.13 on `FS_MGTIME` filesystems: coarse unless the ctime was queried, then a
    /// fine-grained read that also raises the global floor.
    Multigrain,
    /// What-if: every timestamp reads the clocksource (`ktime_get_real_ts64()`).
    Precise,
}

/// A kernel clock function, as the kernel names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ClockFn {
    /// Linux `ktime_get_coarse_real_ts64()`: copies the tick's time (`current_time()` before
    /// 6.13).
    LinuxCoarse,
    /// Linux `ktime_get_real_ts64()`: reads the clocksource (the precise what-if; from 6.13
    /// the fine read of a multigrain `current_time()`).
    LinuxFine,
    /// Linux ≥ 6.13 `ktime_get_coarse_real_ts64_mg()`: the later of the tick's time and the
    /// multigrain floor (every coarse read of `current_time()` / `inode_set_ctime_current()`).
    LinuxCoarseMg,
    /// Linux ≥ 6.13 `ktime_get_real_ts64_mg()`: reads the clocksource and raises the floor
    /// (the fine read of a multigrain `inode_set_ctime_current()`).
    LinuxFineMg,
    /// BSD `time_second`: a global read.
    TimeSecond,
    /// BSD `getnanotime()`: the time at the last `tc_windup()`, no counter read.
    Getnanotime,
    /// BSD `microtime()`: reads the timecounter, truncated to µs.
    Microtime,
    /// BSD `nanotime()`: reads the timecounter.
    Nanotime,
}

impl ClockFn {
    pub const ALL: [ClockFn; 8] = [
        ClockFn::LinuxCoarse,
        ClockFn::LinuxFine,
        ClockFn::LinuxCoarseMg,
        ClockFn::LinuxFineMg,
        ClockFn::TimeSecond,
        ClockFn::Getnanotime,
        ClockFn::Microtime,
        ClockFn::Nanotime,
    ];

    /// The kernel function name.
    pub fn kernel_name(self) -> &'static str {
        match self {
            ClockFn::LinuxCoarse => "ktime_get_coarse_real_ts64",
            ClockFn::LinuxFine => "ktime_get_real_ts64",
            ClockFn::LinuxCoarseMg => "ktime_get_coarse_real_ts64_mg",
            ClockFn::LinuxFineMg => "ktime_get_real_ts64_mg",
            ClockFn::TimeSecond => "time_second",
            ClockFn::Getnanotime => "getnanotime",
            ClockFn::Microtime => "microtime",
            ClockFn::Nanotime => "nanotime",
        }
    }

    /// Whether it reads the hardware counter (rdtscp in a VM: the expensive kind).
    pub fn is_counter(self) -> bool {
        matches!(
            self,
            ClockFn::LinuxFine | ClockFn::LinuxFineMg | ClockFn::Microtime | ClockFn::Nanotime
        )
    }

    /// The value it returns at true time `t_ns`, for a tick of `tick_ns`.
    #[inline]
    pub fn value(self, t_ns: f64, tick_ns: f64) -> f64 {
        match self {
            ClockFn::LinuxCoarse | ClockFn::LinuxCoarseMg | ClockFn::Getnanotime => {
                (t_ns / tick_ns).floor() * tick_ns
            }
            ClockFn::LinuxFine | ClockFn::LinuxFineMg => t_ns,
            ClockFn::TimeSecond => (t_ns / 1e9).floor() * 1e9,
            ClockFn::Microtime => (t_ns / 1e3).floor() * 1e3,
            ClockFn::Nanotime => t_ns.floor(),
        }
    }

    /// The granularity of the values it returns.
    pub fn resolution_ns(self, tick_ns: f64) -> f64 {
        match self {
            ClockFn::LinuxCoarse | ClockFn::LinuxCoarseMg | ClockFn::Getnanotime => tick_ns,
            ClockFn::LinuxFine | ClockFn::LinuxFineMg | ClockFn::Nanotime => 1.0,
            ClockFn::TimeSecond => 1e9,
            ClockFn::Microtime => 1e3,
        }
    }
}

/// Which inode an effect acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The inode the syscall names.
    Inode,
    /// Its parent directory.
    Dir,
}

/// One piece of timestamp work a syscall does in the kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Effect {
    #[default]
    None,
    /// The inode is new (create, mkdir): its state starts afresh.
    NewInode,
    /// BSD: `vfs_timestamp()` now and store it (a modification when `modify`, else atime).
    VfsTimestamp { target: Target, modify: bool },
    /// BSD: a fixed clock function whatever the knob (NetBSD pipes: `getnanotime()`).
    Fixed {
        clock: ClockFn,
        target: Target,
        modify: bool,
    },
    /// BSD: set `IN_CHANGE|IN_UPDATE` (modify) or `IN_ACCESS`; the time is taken later.
    Defer { target: Target, modify: bool },
    /// BSD: `ufs_itimes()` / `tmpfs_itimes()`: one `vfs_timestamp()` if anything is pending.
    Flush { target: Target },
    /// Linux `file_update_time()` (modify) / `touch_atime()`: `current_time()`, and the
    /// update (`mark_inode_dirty`) only when the time moved. `reread`: the update reads the
    /// clock again — always for atime (`touch_atime()` before 6.6,
    /// `inode_update_timestamps()` → `current_time()` after); for m/ctime from 6.6 on
    /// (`inode_update_timestamps()` → `inode_set_ctime_current()`), while 6.1's
    /// `file_update_time()` stores the time it already read.
    LinuxUpdateIfChanged {
        target: Target,
        modify: bool,
        reread: bool,
    },
    /// Linux `inode_set_ctime_current()` (+ mtime = ctime): create, unlink, setattr.
    LinuxSetCtime { target: Target },
    /// Linux `shmem_unlink()`: the directory's mtime and ctime are set to the inode's new
    /// ctime (no further read).
    LinuxCopyCtimeToDir,
    /// Linux `notify_change()`: `current_time()` fills `ia_ctime`/`ia_mtime`, which
    /// `setattr_copy()` stores — except on `FS_MGTIME` filesystems from 6.13, where
    /// `setattr_copy_mgtime()` takes `inode_set_ctime_current()` instead (a second read).
    LinuxNotifyChange { target: Target },
    /// Linux `shmem_setattr()`/`ext4_setattr()` with `ATTR_SIZE`: a ctime read
    /// (`current_time()` on 6.1, `inode_set_ctime_current()` from 6.6) only when the size
    /// changes — an `O_TRUNC` open of an empty file takes none. The replay tracks whether a
    /// file was written since it was created or truncated.
    LinuxTruncateIfNonEmpty { target: Target },
    /// Linux tmpfs eviction when the last link and reference go (unlink of a closed file):
    /// `shmem_evict_inode()` → `shmem_truncate_range()` reads the ctime once more
    /// (`current_time()` on 6.1, `inode_set_ctime_current()` from 6.6) for an inode nobody
    /// sees again.
    LinuxEvict,
    /// Linux `generic_fillattr()` → `fill_mg_cmtime()`: marks the ctime queried.
    LinuxQuery { target: Target },
    /// btrfs `btrfs_update_root_times()`: `ktime_get_real_ts64()` (a clocksource read, never
    /// an inode timestamp) into the subvolume root item's ctime, on every
    /// `btrfs_update_inode()` and for every new inode: `reads` of them.
    LinuxRootTimes { reads: u8 },
    /// btrfs `btrfs_release_file()`: a file truncated to size 0 (`BTRFS_INODE_FLUSH_ON_CLOSE`)
    /// is flushed at close, and writing back its small data as an inline extent
    /// (`cow_file_range_inline()` → `btrfs_update_inode()`) reads the root times once. The
    /// replay reads once when the file was written since it was created or truncated.
    LinuxFlushOnClose,
    /// The file now holds data written since it was created or truncated (`true`), or was just
    /// truncated (`false`): what [`Effect::LinuxTruncateIfNonEmpty`] and
    /// [`Effect::LinuxFlushOnClose`] look at, for syscalls whose timestamp effect does not say
    /// so itself (btrfs writes from 6.13, btrfs `O_TRUNC`).
    LinuxWritten(bool),
    /// Linux `fsync` (`full`) or `fdatasync` on a journaling filesystem (ext4, xfs): the
    /// running transaction is committed when it holds what the sync must make durable. A full
    /// fsync waits for the file's last timestamp store (ext4 `ext4_fsync_journal()` and the
    /// inode's `i_sync_tid`; xfs `xfs_file_fsync()` forcing the log to the inode's last
    /// commit); both wait for the blocks and size of a file's first data since it was created
    /// or truncated, which the writeback the sync starts allocates in the running transaction
    /// (delayed allocation), whatever the times. One commit carries every inode's stores, so
    /// the replay keeps one transaction per filesystem, which a commit closes.
    LinuxSync { full: bool },
}

/// Up to four effects of one syscall, in kernel order.
pub type Action = [Effect; 4];

/// An action from a slice of effects.
pub(crate) fn act(effects: &[Effect]) -> Action {
    let mut a = [Effect::None; 4];
    a[..effects.len()].copy_from_slice(effects);
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_names_parse_back_and_each_model_has_one_stock() {
        for m in ModelId::all_newest() {
            let ps = m.policies();
            assert_eq!(ps.iter().filter(|p| p.stock).count(), 1, "{m}");
            assert!(ps[0].stock);
            for p in ps {
                assert_eq!(Policy::parse(&p.name()), Some(p.clone()));
            }
        }
        assert_eq!(
            Policy::parse("freebsd:2").unwrap().kind,
            PolicyKind::Bsd {
                vfs_clock: ClockFn::Microtime
            }
        );
        assert!(Policy::parse("freebsd:7").is_none());
    }

    #[test]
    fn clock_values_truncate() {
        assert_eq!(ClockFn::Microtime.value(12_345.6, 4e6), 12_000.0);
        assert_eq!(ClockFn::LinuxCoarse.value(9e6, 4e6), 8e6);
        assert_eq!(ClockFn::TimeSecond.value(2.5e9, 4e6), 2e9);
    }
}
