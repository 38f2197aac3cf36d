//! Attributes: `O_TRUNC` opens, truncate, chmod/chown, utimens (`notify_change()` and the
//! filesystem's setattr) and stat (the query that makes the next change fine-grained).

use super::{
    btrfs, recalled, src, LinuxRow, COUNTED_AT, EXT4_READ_AT, STAT_NO_TIMES, STAT_QUERIES,
};
use crate::kernel::table::{Row, Versions, FILES};
use crate::kernel::Effect::{
    LinuxNotifyChange, LinuxQuery, LinuxRootTimes, LinuxSetCtime, LinuxTruncateIfNonEmpty,
    LinuxWritten,
};
use crate::kernel::Target::Inode;
use crate::trace::{FsKind, Syscall};

pub(super) const ROWS: &[LinuxRow] = &[
    // notify_change() reads (and from 6.13 setattr_copy_mgtime() again); btrfs_setsize() reads
    // only for a truncate() without ATTR_CTIME|ATTR_MTIME, which O_TRUNC sets, but sets
    // BTRFS_INODE_FLUSH_ON_CLOSE for size 0 and calls btrfs_truncate() -> btrfs_update_inode();
    // btrfs_setattr() then btrfs_dirty_inode() -> btrfs_update_inode().
    Row {
        kernels: Versions::ALL,
        syscalls: &[Syscall::OpenTrunc],
        filesystems: &[FsKind::Btrfs],
        effects: &[
            LinuxNotifyChange { target: Inode },
            LinuxWritten(false),
            LinuxRootTimes { reads: 2 },
        ],
        source: btrfs(
            "fs/attr.c, fs/btrfs/inode.c",
            "notify_change; btrfs_setattr -> btrfs_setsize -> btrfs_truncate, btrfs_dirty_inode",
        ),
    },
    // ext4_setattr() calls ext4_truncate() whenever the new size is <= the old one ("even if
    // i_size didn't change, to truncate possible preallocated blocks"), and ext4_truncate()
    // always ends with `i_mtime = i_ctime = current_time()`: one read after notify_change()'s,
    // empty file or not (the size-change branch reads only when the file grows). Counted:
    // vfsmix on ext4, 6.1, 6.12 and 7.2.
    Row {
        kernels: Versions::ALL,
        syscalls: &[Syscall::OpenTrunc],
        filesystems: &[FsKind::Ext4],
        effects: &[
            LinuxNotifyChange { target: Inode },
            LinuxSetCtime { target: Inode },
        ],
        source: src(
            "fs/attr.c, fs/ext4/inode.c",
            "notify_change; ext4_setattr -> ext4_truncate",
            EXT4_READ_AT,
            true,
        ),
    },
    // do_truncate() -> notify_change(): current_time() into ia_ctime/ia_mtime; the
    // filesystem's setattr reads again only when the size changes (shmem_setattr: `if (newsize
    // != oldsize)`), and from 6.13 setattr_copy_mgtime() takes inode_set_ctime_current() on
    // FS_MGTIME filesystems. Counted: vfsmix's O_TRUNC of an empty file takes 1 read on
    // 6.1/6.12 and 2 on 7.2.
    Row {
        kernels: Versions::ALL,
        syscalls: &[Syscall::OpenTrunc],
        filesystems: FILES,
        effects: &[
            LinuxNotifyChange { target: Inode },
            LinuxTruncateIfNonEmpty { target: Inode },
        ],
        source: src(
            "fs/attr.c, mm/shmem.c",
            "notify_change, setattr_copy_mgtime, shmem_setattr",
            COUNTED_AT,
            true,
        ),
    },
    Row {
        kernels: Versions::ALL,
        syscalls: &[Syscall::Truncate],
        filesystems: FILES,
        effects: &[
            LinuxNotifyChange { target: Inode },
            LinuxSetCtime { target: Inode },
        ],
        source: recalled(
            "fs/attr.c, mm/shmem.c",
            "notify_change, shmem_setattr (size changes)",
        ),
    },
    Row {
        kernels: Versions::ALL,
        syscalls: &[Syscall::Setattr, Syscall::Utimens],
        filesystems: FILES,
        effects: &[LinuxNotifyChange { target: Inode }],
        source: recalled("fs/attr.c", "notify_change, setattr_copy(_mgtime)"),
    },
    Row {
        kernels: Versions::ALL,
        syscalls: &[Syscall::Stat],
        filesystems: FILES,
        effects: &[LinuxQuery { target: Inode }],
        source: STAT_QUERIES,
    },
    Row {
        kernels: Versions::ALL,
        syscalls: &[Syscall::StatNoTimes],
        filesystems: FILES,
        effects: &[],
        source: STAT_NO_TIMES,
    },
];
