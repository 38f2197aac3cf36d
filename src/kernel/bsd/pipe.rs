//! Pipes and FIFOs. Pipes are not vnodes: `sys_pipe.c` stamps them itself, with
//! `vfs_timestamp()` (FreeBSD before `pipe_timestamp()`, DragonFly) or `getnanotime()`
//! (FreeBSD from `pipe_timestamp()`, NetBSD). A FIFO's reads and writes go through the pipe
//! code (FreeBSD's fifo_vnops hand the descriptor pipe fileops): modelled as a pipe's,
//! recalled, not read for FIFOs. The calls on a pipe other than read and write take no time.

use super::{getnanotime, src, stamp, BsdRow, Cite, Kernel, DRAGONFLY, FREEBSD, NETBSD};
use crate::kernel::model::FREEBSD_PIPE_GETNANOTIME;
use crate::kernel::table::{Row, Versions, ANY_FS, ANY_SYSCALL, PIPEFS};
use crate::kernel::Source;
use crate::kernel::Target::Inode;
use crate::trace::Syscall;

const PIPE_C: &str = "sys/kern/sys_pipe.c";

/// FreeBSD from [`FREEBSD_PIPE_GETNANOTIME`] (its release is assumed, not read).
const FREEBSD_NEW: &[Kernel] = &[Kernel::FreeBsd(Versions::from(FREEBSD_PIPE_GETNANOTIME))];
const FREEBSD_OLD: &[Kernel] = &[Kernel::FreeBsd(Versions::before(FREEBSD_PIPE_GETNANOTIME))];

const PIPE_TIMESTAMP: Source = src(
    FREEBSD,
    PIPE_C,
    "pipe_read, pipe_write -> pipe_timestamp -> getnanotime",
    "004248ee (release of the change not dated here)",
    "read",
);
const FREEBSD_VFS_TIMESTAMP: Source = src(
    FREEBSD,
    PIPE_C,
    "pipe_read, pipe_write -> vfs_timestamp",
    "before pipe_timestamp() (release not dated here)",
    "read",
);
const DRAGONFLY_VFS_TIMESTAMP: Source = src(
    DRAGONFLY,
    PIPE_C,
    "pipe_read (when nread), pipe_write -> vfs_timestamp",
    "master",
    "read",
);
const NETBSD_GETNANOTIME: Source = src(
    NETBSD,
    PIPE_C,
    "pipe_read (rpipe->pipe_atime), pipe_write (wpipe->pipe_mtime) -> getnanotime",
    "every version in the index",
    "read",
);

/// A pipe's source, for a FIFO: recalled, not read for FIFOs.
const fn fifo(pipe: Source) -> Cite {
    Cite::At(Source {
        status: "recalled",
        ..pipe
    })
}

pub(super) const ROWS: &[BsdRow] = &[
    // FreeBSD from pipe_timestamp().
    Row {
        kernels: FREEBSD_NEW,
        syscalls: &[Syscall::Write],
        filesystems: PIPEFS,
        effects: &[getnanotime(true)],
        source: Cite::At(PIPE_TIMESTAMP),
    },
    Row {
        kernels: FREEBSD_NEW,
        syscalls: &[Syscall::Read],
        filesystems: PIPEFS,
        effects: &[getnanotime(false)],
        source: Cite::At(PIPE_TIMESTAMP),
    },
    Row {
        kernels: FREEBSD_NEW,
        syscalls: &[Syscall::FifoWrite],
        filesystems: ANY_FS,
        effects: &[getnanotime(true)],
        source: fifo(PIPE_TIMESTAMP),
    },
    Row {
        kernels: FREEBSD_NEW,
        syscalls: &[Syscall::FifoRead],
        filesystems: ANY_FS,
        effects: &[getnanotime(false)],
        source: fifo(PIPE_TIMESTAMP),
    },
    Row {
        kernels: FREEBSD_NEW,
        syscalls: ANY_SYSCALL,
        filesystems: PIPEFS,
        effects: &[],
        source: Cite::At(PIPE_TIMESTAMP),
    },
    // FreeBSD before pipe_timestamp().
    Row {
        kernels: FREEBSD_OLD,
        syscalls: &[Syscall::Write],
        filesystems: PIPEFS,
        effects: &[stamp(Inode, true)],
        source: Cite::At(FREEBSD_VFS_TIMESTAMP),
    },
    Row {
        kernels: FREEBSD_OLD,
        syscalls: &[Syscall::Read],
        filesystems: PIPEFS,
        effects: &[stamp(Inode, false)],
        source: Cite::At(FREEBSD_VFS_TIMESTAMP),
    },
    Row {
        kernels: FREEBSD_OLD,
        syscalls: &[Syscall::FifoWrite],
        filesystems: ANY_FS,
        effects: &[stamp(Inode, true)],
        source: fifo(FREEBSD_VFS_TIMESTAMP),
    },
    Row {
        kernels: FREEBSD_OLD,
        syscalls: &[Syscall::FifoRead],
        filesystems: ANY_FS,
        effects: &[stamp(Inode, false)],
        source: fifo(FREEBSD_VFS_TIMESTAMP),
    },
    Row {
        kernels: FREEBSD_OLD,
        syscalls: ANY_SYSCALL,
        filesystems: PIPEFS,
        effects: &[],
        source: Cite::At(FREEBSD_VFS_TIMESTAMP),
    },
    // DragonFly: FreeBSD's old pipe code.
    Row {
        kernels: &[Kernel::DragonFly],
        syscalls: &[Syscall::Write],
        filesystems: PIPEFS,
        effects: &[stamp(Inode, true)],
        source: Cite::At(DRAGONFLY_VFS_TIMESTAMP),
    },
    Row {
        kernels: &[Kernel::DragonFly],
        syscalls: &[Syscall::Read],
        filesystems: PIPEFS,
        effects: &[stamp(Inode, false)],
        source: Cite::At(DRAGONFLY_VFS_TIMESTAMP),
    },
    Row {
        kernels: &[Kernel::DragonFly],
        syscalls: &[Syscall::FifoWrite],
        filesystems: ANY_FS,
        effects: &[stamp(Inode, true)],
        source: fifo(DRAGONFLY_VFS_TIMESTAMP),
    },
    Row {
        kernels: &[Kernel::DragonFly],
        syscalls: &[Syscall::FifoRead],
        filesystems: ANY_FS,
        effects: &[stamp(Inode, false)],
        source: fifo(DRAGONFLY_VFS_TIMESTAMP),
    },
    Row {
        kernels: &[Kernel::DragonFly],
        syscalls: ANY_SYSCALL,
        filesystems: PIPEFS,
        effects: &[],
        source: Cite::At(DRAGONFLY_VFS_TIMESTAMP),
    },
    // NetBSD.
    Row {
        kernels: &[Kernel::NetBsd],
        syscalls: &[Syscall::Write],
        filesystems: PIPEFS,
        effects: &[getnanotime(true)],
        source: Cite::At(NETBSD_GETNANOTIME),
    },
    Row {
        kernels: &[Kernel::NetBsd],
        syscalls: &[Syscall::Read],
        filesystems: PIPEFS,
        effects: &[getnanotime(false)],
        source: Cite::At(NETBSD_GETNANOTIME),
    },
    Row {
        kernels: &[Kernel::NetBsd],
        syscalls: &[Syscall::FifoWrite],
        filesystems: ANY_FS,
        effects: &[getnanotime(true)],
        source: fifo(NETBSD_GETNANOTIME),
    },
    Row {
        kernels: &[Kernel::NetBsd],
        syscalls: &[Syscall::FifoRead],
        filesystems: ANY_FS,
        effects: &[getnanotime(false)],
        source: fifo(NETBSD_GETNANOTIME),
    },
    Row {
        kernels: &[Kernel::NetBsd],
        syscalls: ANY_SYSCALL,
        filesystems: PIPEFS,
        effects: &[],
        source: Cite::At(NETBSD_GETNANOTIME),
    },
];
