//! NetBSD tmpfs takes the time eagerly: `tmpfs_update(vp, TMPFS_UPDATE_*)` → `vfs_timestamp()`
//! in each operation.

use super::{src, stamp, BsdRow, Cite, Kernel, NETBSD};
use crate::kernel::table::{Row, TMPFS};
use crate::kernel::Effect::NewInode;
use crate::kernel::Target::{Dir, Inode};
use crate::trace::Syscall;

const NETBSD_ONLY: &[Kernel] = &[Kernel::NetBsd];

/// NetBSD's tmpfs vnode code at trunk, checked as `status`.
const fn tmpfs(function: &'static str, status: &'static str) -> Cite {
    Cite::At(src(
        NETBSD,
        "sys/fs/tmpfs/tmpfs_vnops.c, tmpfs_subr.c",
        function,
        "trunk",
        status,
    ))
}

pub(super) const ROWS: &[BsdRow] = &[
    Row {
        kernels: NETBSD_ONLY,
        syscalls: &[Syscall::Create, Syscall::Mkdir],
        filesystems: TMPFS,
        effects: &[NewInode, stamp(Inode, true), stamp(Dir, true)],
        source: tmpfs(
            "tmpfs_newvnode (new node), tmpfs_construct_node -> tmpfs_update(dvp, MTIME|CTIME)",
            "cited",
        ),
    },
    Row {
        kernels: NETBSD_ONLY,
        syscalls: &[Syscall::Read, Syscall::Readdir],
        filesystems: TMPFS,
        effects: &[stamp(Inode, false)],
        source: tmpfs("tmpfs_read -> tmpfs_update(vp, ATIME)", "read"),
    },
    Row {
        kernels: NETBSD_ONLY,
        syscalls: &[Syscall::Write],
        filesystems: TMPFS,
        effects: &[stamp(Inode, true)],
        source: tmpfs("tmpfs_write -> tmpfs_update(vp, MTIME|CTIME)", "read"),
    },
    // open(O_TRUNC) of an empty file (vfsmix: the lseek does not extend it): tmpfs_chsize
    // returns before tmpfs_update when the size does not change, and tmpfs_setattr no longer
    // calls tmpfs_update at its end.
    Row {
        kernels: NETBSD_ONLY,
        syscalls: &[Syscall::OpenTrunc],
        filesystems: TMPFS,
        effects: &[],
        source: tmpfs(
            "tmpfs_setattr -> tmpfs_chsize (same size: returns before tmpfs_update)",
            "cited",
        ),
    },
    Row {
        kernels: NETBSD_ONLY,
        syscalls: &[Syscall::Truncate, Syscall::Setattr],
        filesystems: TMPFS,
        effects: &[stamp(Inode, true)],
        source: tmpfs(
            "tmpfs_chsize/tmpfs_truncate, tmpfs_chmod -> tmpfs_update",
            "recalled",
        ),
    },
    // tmpfs_chtimes stores the times it is given; no vfs_timestamp() (a UTIME_NOW time taken by
    // the syscall layer is not counted).
    Row {
        kernels: NETBSD_ONLY,
        syscalls: &[Syscall::Utimens],
        filesystems: TMPFS,
        effects: &[],
        source: tmpfs("tmpfs_chtimes (no timestamp taken)", "cited"),
    },
    Row {
        kernels: NETBSD_ONLY,
        syscalls: &[Syscall::MmapStore],
        filesystems: TMPFS,
        effects: &[stamp(Inode, true)],
        source: tmpfs(
            "tmpfs_getpages (VM_PROT_WRITE) -> tmpfs_update(vp, ATIME|MTIME)",
            "read",
        ),
    },
    Row {
        kernels: NETBSD_ONLY,
        syscalls: &[Syscall::Unlink, Syscall::Rmdir],
        filesystems: TMPFS,
        effects: &[stamp(Dir, true)],
        source: tmpfs("tmpfs_remove -> tmpfs_update(dvp, MTIME|CTIME)", "read"),
    },
    Row {
        kernels: NETBSD_ONLY,
        syscalls: &[Syscall::Rename, Syscall::Link],
        filesystems: TMPFS,
        effects: &[stamp(Dir, true), stamp(Inode, true)],
        source: tmpfs("tmpfs_link, tmpfs_rename", "read"),
    },
    Row {
        kernels: NETBSD_ONLY,
        syscalls: &[
            Syscall::Open,
            Syscall::Close,
            Syscall::Stat,
            Syscall::StatNoTimes,
            Syscall::Lseek,
            Syscall::Mmap,
            Syscall::Munmap,
            Syscall::Fsync,
            Syscall::Fdatasync,
            Syscall::Other,
        ],
        filesystems: TMPFS,
        effects: &[],
        source: tmpfs("tmpfs_getattr, tmpfs_fsync (no timestamp)", "read"),
    },
];
