//! fsync, fdatasync and close (what makes a change durable), and the calls that take no
//! timestamp.

use super::{btrfs, recalled, src, LinuxRow};
use crate::kernel::table::{Row, Versions, FILES};
use crate::kernel::Effect::{LinuxFlushOnClose, LinuxSync};
use crate::kernel::Source;
use crate::trace::{FsKind, Syscall};

/// Where the fsync rules were read, and how the running kernel counted them.
const SYNC_AT: &str = "v6.18 (read; counted on 6.18 by the jbd2_start_commit and \
                       xlog_iclog_write tracepoints, scripts/fsync-commits)";

/// A full fsync of a file whose last timestamp store is not committed yet forces the commit.
const FSYNC_COMMITS: Source = src(
    "fs/ext4/fsync.c, fs/xfs/xfs_file.c",
    "ext4_sync_file -> ext4_fsync_journal (waits for i_sync_tid), \
     xfs_file_fsync -> xfs_fsync_flush_log (forces the log to the inode's last commit)",
    SYNC_AT,
    true,
);

/// fdatasync skips a timestamp-only change: ext4 waits for `i_datasync_tid`, which only a
/// change of what reading the data needs moves (a new file's first blocks and size, which
/// its writeback allocates); xfs forces no log for `XFS_ILOG_TIMESTAMP` alone.
const FDATASYNC_SKIPS: Source = src(
    "fs/ext4/fsync.c, fs/ext4/inode.c, fs/xfs/xfs_file.c",
    "ext4_fsync_journal (datasync: i_datasync_tid, ext4_update_inode_fsync_trans), \
     xfs_file_fsync (datasync: no log force for XFS_ILOG_TIMESTAMP alone)",
    SYNC_AT,
    true,
);

const JOURNALING: &[FsKind] = &[FsKind::Ext4, FsKind::Xfs];

pub(super) const ROWS: &[LinuxRow] = &[
    // btrfs_release_file(): test_and_clear_bit(BTRFS_INODE_FLUSH_ON_CLOSE) -> filemap_flush: a
    // small file is written back inline (cow_file_range_inline -> btrfs_update_inode).
    Row {
        kernels: Versions::ALL,
        syscalls: &[Syscall::Close],
        filesystems: &[FsKind::Btrfs],
        effects: &[LinuxFlushOnClose],
        source: btrfs(
            "fs/btrfs/file.c, fs/btrfs/inode.c",
            "btrfs_release_file -> filemap_flush -> cow_file_range_inline -> btrfs_update_inode",
        ),
    },
    Row {
        kernels: Versions::ALL,
        syscalls: &[Syscall::Fsync],
        filesystems: JOURNALING,
        effects: &[LinuxSync { full: true }],
        source: FSYNC_COMMITS,
    },
    Row {
        kernels: Versions::ALL,
        syscalls: &[Syscall::Fdatasync],
        filesystems: JOURNALING,
        effects: &[LinuxSync { full: false }],
        source: FDATASYNC_SKIPS,
    },
    Row {
        kernels: Versions::ALL,
        syscalls: &[Syscall::Fdatasync],
        filesystems: FILES,
        effects: &[],
        source: FDATASYNC_SKIPS,
    },
    Row {
        kernels: Versions::ALL,
        syscalls: &[
            Syscall::Open,
            Syscall::Close,
            Syscall::Lseek,
            Syscall::Munmap,
            Syscall::Fsync,
            Syscall::Other,
        ],
        filesystems: FILES,
        effects: &[],
        source: recalled("-", "(no timestamp work)"),
    },
];
