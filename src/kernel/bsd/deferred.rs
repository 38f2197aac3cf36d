//! Deferred timestamps: FreeBSD and DragonFly tmpfs and UFS, NetBSD FFS (its tmpfs has rows of
//! its own, walked first). An operation sets `IN_CHANGE|IN_UPDATE`-style flags; getattr,
//! close, setattr and fsync flush them with one `vfs_timestamp()` (`tmpfs_itimes`,
//! `ufs_itimes`).

use super::{defer, stamp, BsdRow, Cite, Kernel, FLUSH, FREEBSD_ALL};
use crate::kernel::table::{Row, FILES, TMPFS};
use crate::kernel::Effect::NewInode;
use crate::kernel::Target::{Dir, Inode};
use crate::trace::Syscall;

const ANY_BSD: &[Kernel] = &[FREEBSD_ALL, Kernel::DragonFly, Kernel::NetBsd];
const FREEBSD_DRAGONFLY: &[Kernel] = &[FREEBSD_ALL, Kernel::DragonFly];

/// The flag code of the kernel and filesystem matched, checked as `status`.
const fn flags(function: &'static str, status: &'static str) -> Cite {
    Cite::Deferred { function, status }
}

pub(super) const ROWS: &[BsdRow] = &[
    Row {
        kernels: FREEBSD_DRAGONFLY,
        syscalls: &[Syscall::Create, Syscall::Mkdir],
        filesystems: TMPFS,
        effects: &[NewInode, stamp(Inode, true), defer(Dir, true)],
        source: flags(
            "tmpfs_alloc_node: vfs_timestamp(&nnode->tn_atime); tmpfs_dir_attach: dir flags",
            "recalled",
        ),
    },
    Row {
        kernels: ANY_BSD,
        syscalls: &[Syscall::Create, Syscall::Mkdir],
        filesystems: FILES,
        effects: &[NewInode, defer(Inode, true), defer(Dir, true)],
        source: flags(
            "ufs_makeinode: IN_CHANGE|IN_UPDATE on inode and directory",
            "recalled",
        ),
    },
    Row {
        kernels: ANY_BSD,
        syscalls: &[Syscall::Read, Syscall::Readdir],
        filesystems: FILES,
        effects: &[defer(Inode, false)],
        source: flags("read: access flag", "recalled"),
    },
    Row {
        kernels: ANY_BSD,
        syscalls: &[Syscall::Write, Syscall::MmapStore],
        filesystems: FILES,
        effects: &[defer(Inode, true)],
        source: flags("write / tmpfs_check_mtime: status flags", "recalled"),
    },
    // FreeBSD/DragonFly tmpfs_truncate returns early when the size does not change (the empty
    // file of vfsmix's O_TRUNC open): no flag is set; tmpfs_setattr still ends with
    // tmpfs_update(), which flushes whatever is pending.
    Row {
        kernels: FREEBSD_DRAGONFLY,
        syscalls: &[Syscall::OpenTrunc],
        filesystems: TMPFS,
        effects: &[FLUSH],
        source: flags(
            "tmpfs_setattr -> tmpfs_truncate (same size: early return) -> tmpfs_update",
            "cited",
        ),
    },
    Row {
        kernels: ANY_BSD,
        syscalls: &[
            Syscall::OpenTrunc,
            Syscall::Truncate,
            Syscall::Setattr,
            Syscall::Utimens,
        ],
        filesystems: FILES,
        effects: &[defer(Inode, true), FLUSH],
        source: flags("setattr: flags, then tmpfs_update/ufs_itimes", "recalled"),
    },
    // A BSD getattr fills every time whatever was asked (there is no statx mask).
    Row {
        kernels: ANY_BSD,
        syscalls: &[
            Syscall::Stat,
            Syscall::StatNoTimes,
            Syscall::Close,
            Syscall::Fsync,
            Syscall::Fdatasync,
        ],
        filesystems: FILES,
        effects: &[FLUSH],
        source: flags(
            "getattr/close/fsync -> tmpfs_itimes/ufs_itimes: one vfs_timestamp if pending",
            "read",
        ),
    },
    Row {
        kernels: ANY_BSD,
        syscalls: &[
            Syscall::Unlink,
            Syscall::Rmdir,
            Syscall::Rename,
            Syscall::Link,
        ],
        filesystems: FILES,
        effects: &[defer(Inode, true), defer(Dir, true)],
        source: flags(
            "tmpfs_remove / ufs_remove: flags on inode and directory",
            "recalled",
        ),
    },
    Row {
        kernels: ANY_BSD,
        syscalls: &[
            Syscall::Open,
            Syscall::Lseek,
            Syscall::Mmap,
            Syscall::Munmap,
            Syscall::Other,
        ],
        filesystems: FILES,
        effects: &[],
        source: flags("(no timestamp work)", "recalled"),
    },
];
