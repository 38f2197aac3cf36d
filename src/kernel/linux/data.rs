//! Reads, writes and mappings: `file_accessed()` and `file_update_time()`, and btrfs's own
//! write path.

use super::{
    btrfs, recalled, src, LinuxRow, COUNTED_AT, FILE_UPDATE_TIME, FILE_UPDATE_TIME_ONE_READ,
    TOUCH_ATIME,
};
use crate::kernel::model::{LINUX_MULTIGRAIN, LINUX_UPDATE_TIME_REREAD};
use crate::kernel::table::{Row, Versions, FILES};
use crate::kernel::{Effect, Source, Target};
use crate::trace::{FsKind, Syscall};

const WRITE_ITER: Source = recalled(
    "mm/shmem.c, fs/ext4/file.c",
    "write_iter -> file_modified -> file_update_time",
);

/// A store through a shared mapping dirties the page on its first write fault:
/// fault_dirty_shared_page() calls file_update_time() itself when the vma has no page_mkwrite
/// (tmpfs), and ext4_page_mkwrite() calls it otherwise. Counted on 6.1, 6.12 and 7.2 (vfsmix:
/// file_update_time 2 per op, write and store).
const PAGE_MKWRITE: Source = src(
    "mm/memory.c, fs/ext4/inode.c",
    "fault_dirty_shared_page (if !page_mkwrite) / ext4_page_mkwrite -> file_update_time",
    COUNTED_AT,
    true,
);

pub(super) const ROWS: &[LinuxRow] = &[
    Row {
        kernels: Versions::ALL,
        syscalls: &[Syscall::Read, Syscall::Mmap, Syscall::Readdir],
        filesystems: FILES,
        effects: &[TOUCH_ATIME],
        source: recalled(
            "mm/shmem.c, mm/filemap.c",
            "shmem_file_read_iter, shmem_mmap, generic_file_mmap -> file_accessed",
        ),
    },
    // From 6.13 ("btrfs: convert to multigrain timestamps") btrfs_write_check() sets
    // `inode_set_mtime_to_ts(inode, inode_set_ctime_current(inode))` unconditionally. Counted:
    // write-stat on 7.2 takes 1 ktime_get_coarse_real_ts64_mg + 1 ktime_get_real_ts64_mg per
    // op, not file_update_time()'s 2 + 1 + 1.
    Row {
        kernels: Versions::from(LINUX_MULTIGRAIN),
        syscalls: &[Syscall::Write],
        filesystems: &[FsKind::Btrfs],
        effects: &[
            Effect::LinuxSetCtime {
                target: Target::Inode,
            },
            Effect::LinuxWritten(true),
        ],
        source: btrfs(
            "fs/btrfs/file.c",
            "btrfs_write_check -> inode_set_ctime_current",
        ),
    },
    // Before 6.13 btrfs_write_check() calls update_time_for_write(): one current_time(),
    // stored in mtime and ctime when it differs, never read again (not file_update_time()).
    Row {
        kernels: Versions::before(LINUX_MULTIGRAIN),
        syscalls: &[Syscall::Write],
        filesystems: &[FsKind::Btrfs],
        effects: &[FILE_UPDATE_TIME_ONE_READ],
        source: btrfs(
            "fs/btrfs/file.c",
            "btrfs_write_check -> update_time_for_write -> current_time",
        ),
    },
    Row {
        kernels: Versions::before(LINUX_UPDATE_TIME_REREAD),
        syscalls: &[Syscall::Write],
        filesystems: FILES,
        effects: &[FILE_UPDATE_TIME_ONE_READ],
        source: WRITE_ITER,
    },
    Row {
        kernels: Versions::from(LINUX_UPDATE_TIME_REREAD),
        syscalls: &[Syscall::Write],
        filesystems: FILES,
        effects: &[FILE_UPDATE_TIME],
        source: WRITE_ITER,
    },
    Row {
        kernels: Versions::before(LINUX_UPDATE_TIME_REREAD),
        syscalls: &[Syscall::MmapStore],
        filesystems: FILES,
        effects: &[FILE_UPDATE_TIME_ONE_READ],
        source: PAGE_MKWRITE,
    },
    Row {
        kernels: Versions::from(LINUX_UPDATE_TIME_REREAD),
        syscalls: &[Syscall::MmapStore],
        filesystems: FILES,
        effects: &[FILE_UPDATE_TIME],
        source: PAGE_MKWRITE,
    },
];
