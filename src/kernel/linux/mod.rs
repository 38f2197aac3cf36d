//! Linux: `current_time()` copies the coarse clock (the last tick); writers call
//! `file_update_time()` which only updates and dirties the inode when that time moved
//! (`inode_needs_update_time()`). Since 6.13, filesystems with `FS_MGTIME` (tmpfs, ext4, xfs,
//! btrfs) hand out a fine-grained ctime — a clocksource read that also raises a global floor
//! (`ktime_get_real_ts64_mg()`) — only when someone queried the ctime (stat) since the last
//! change. Sources (torvalds/linux):
//!
//! - fs/inode.c: `current_time`, `inode_needs_update_time`, `file_update_time`,
//!   `inode_set_ctime_current`, `touch_atime`/`atime_needs_update`, `file_accessed`
//!   (include/linux/fs.h), `generic_update_time`, `inode_update_timestamps`
//! - kernel/time/timekeeping.c: `ktime_get_coarse_real_ts64_mg`, `ktime_get_real_ts64_mg`
//! - fs/stat.c: `generic_fillattr` → `fill_mg_cmtime` (sets `I_CTIME_QUERIED`)
//! - fs/pipe.c: `pipe_write` → `file_update_time`, `pipe_read` → `file_accessed` until 6.14;
//!   from 6.15 anonymous pipes use `anon_pipe_read`/`anon_pipe_write`, which take no time,
//!   and FIFOs `fifo_pipe_read`/`fifo_pipe_write`, which still do (commit f017b0a4951f)
//! - mm/shmem.c: `shmem_mknod`, `shmem_unlink`, `shmem_mmap` (`file_accessed`), no
//!   `page_mkwrite` in `shmem_vm_ops`; fs/ext4/inode.c `ext4_page_mkwrite` → `file_update_time`
//! - fs/attr.c: `notify_change` (`current_time` into `ia_ctime`), `setattr_copy`
//!
//! The table is [`rows`]: static rows per syscall family (pipes, data, names, attributes,
//! sync), each with the versions, syscalls and filesystems it holds for, its effects and its
//! source. See docs/kernel-models.md for the per-syscall table and which counts are uncertain.

mod attr;
mod data;
mod names;
mod pipe;
mod sync;

use super::table::{Row, Versions};
use super::{Effect, Rule, Source, Target, Version};
use crate::trace::{FsKind, Syscall};

/// A row of the Linux table: it holds for a range of versions.
pub type LinuxRow = Row<Versions, Source>;

/// The table, in the order it is walked: FIFOs and pipes first (pipefs's rows answer every
/// call on a pipe), then each syscall family, whose filesystem-specific rows come before the
/// general row of the same syscall.
const TABLES: [&[LinuxRow]; 5] = [pipe::ROWS, data::ROWS, names::ROWS, attr::ROWS, sync::ROWS];

/// Every row of the Linux table, in walking order.
pub fn rows() -> impl Iterator<Item = &'static LinuxRow> {
    TABLES.into_iter().flatten()
}

/// The timestamp work of `syscall` on `fs` in Linux `version` (the policy decides coarse,
/// multigrain or precise reads; multigrain only from 6.13, see [`super::ModelId::policies`]):
/// the first row that holds for them.
pub fn rule(version: Version, syscall: Syscall, fs: FsKind) -> Rule {
    let row = rows()
        .find(|r| r.kernels.contains(version) && r.matches(syscall, fs))
        .expect("the Linux table has a row for every syscall on every filesystem");
    Rule {
        action: row.action(),
        source: row.source,
    }
}

const LINUX: &str = "torvalds/linux";
/// Where the pre-6.15 counts were read (fs/pipe.c before the anonymous-pipe series, fs/inode.c
/// and timekeeping.c of the multigrain code).
const AT_613: &str = "v6.13-v6.14";
const RECALLED_AT: &str = "v6.13-v6.18 (recalled, not re-read)";
/// Where the ext4 counts were read: Debian's `linux-source-6.1` 6.1.172-1 (v6.1.172), and
/// counted on 6.1, 6.12 and 7.2 by `tscope vm count --fs ext4`.
const EXT4_READ_AT: &str = "v6.1.172 (read; counted by tscope vm count --fs ext4 on 6.1-7.2)";
/// Where the btrfs counts were read: Debian's `linux-source-6.1` 6.1.172-1,
/// `linux-source-6.12` 6.12.117-1 and `linux-source-7.2` 7.2.13-1, and counted on the three
/// kernels by `tscope vm count --fs btrfs`.
const BTRFS_READ_AT: &str =
    "v6.1.172, v6.12.117, v7.2.13 (read; counted by tscope vm count --fs btrfs on 6.1-7.2)";
/// Where the counts of a store through a mapping, a tmpfs unlink and an `O_TRUNC` open were
/// read, and counted by `tscope vm count` (vfsmix on 6.1, 6.12 and 7.2).
const COUNTED_AT: &str = "v6.1-v7.2 (read; counted by tscope vm count)";

const fn src(file: &'static str, function: &'static str, at: &'static str, read: bool) -> Source {
    Source {
        repo: LINUX,
        file,
        function,
        at,
        status: if read { "read" } else { "recalled" },
    }
}

/// A source written from knowledge of the code, not re-read.
const fn recalled(file: &'static str, function: &'static str) -> Source {
    src(file, function, RECALLED_AT, false)
}

/// A btrfs source, read at [`BTRFS_READ_AT`]. Every `btrfs_update_inode()` and every new inode
/// also reads `ktime_get_real_ts64()` in `btrfs_update_root_times()` (fs/btrfs/root-tree.c)
/// for the subvolume root item's ctime: vfsmix counts 7 such reads per op on 6.1, 6.12 and 7.2
/// — create 2, `O_TRUNC` 2, the flush at close 1, unlink 2.
const fn btrfs(file: &'static str, function: &'static str) -> Source {
    src(file, function, BTRFS_READ_AT, true)
}

/// A `statx` that asks for no time: no query, no timestamp work (`generic_fillattr` calls
/// `fill_mg_cmtime`, which sets the queried flag, only for STATX_CTIME|STATX_MTIME).
const STAT_NO_TIMES: Source = src("fs/stat.c", "generic_fillattr", AT_613, true);
/// A stat marks the ctime queried.
const STAT_QUERIES: Source = recalled("fs/stat.c", "generic_fillattr -> fill_mg_cmtime");

/// `touch_atime()` (`file_accessed()`): `atime_needs_update()` reads the clock, and the update
/// reads it again to store a changed atime (`touch_atime()` before 6.6,
/// `inode_update_timestamps()` → `current_time()` after).
const TOUCH_ATIME: Effect = Effect::LinuxUpdateIfChanged {
    target: Target::Inode,
    modify: false,
    reread: true,
};
/// `file_update_time()` before 6.6: a changed m/ctime is stored as the `current_time()` it
/// read (v6.1.55 fs/inode.c file_modified_flags: `__file_update_time(file, &now, ret)`).
const FILE_UPDATE_TIME_ONE_READ: Effect = Effect::LinuxUpdateIfChanged {
    target: Target::Inode,
    modify: true,
    reread: false,
};
/// `file_update_time()` from 6.6: `inode_update_timestamps()` reads again through
/// `inode_set_ctime_current()` to store a changed m/ctime.
const FILE_UPDATE_TIME: Effect = Effect::LinuxUpdateIfChanged {
    target: Target::Inode,
    modify: true,
    reread: true,
};

#[cfg(test)]
mod tests;
