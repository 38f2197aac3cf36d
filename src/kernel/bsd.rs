//! FreeBSD, DragonFly and NetBSD: `vfs_timestamp()` (sys/kern/vfs_subr.c) is the clock of file
//! timestamps. FreeBSD and DragonFly switch it on `vfs.timestamp_precision` between
//! `time_second`, `getnanotime()`, `microtime()` and `nanotime()`; NetBSD always calls
//! `nanotime()`. Pipes are not vnodes: FreeBSD/DragonFly `sys_pipe.c` call `vfs_timestamp()` in
//! `pipe_read`/`pipe_write`, NetBSD `sys_pipe.c` calls `getnanotime()`.
//!
//! Filesystems differ in *when* they take the time. NetBSD tmpfs (sys/fs/tmpfs/tmpfs_vnops.c,
//! tmpfs_subr.c `tmpfs_update`) takes it eagerly in every modifying vnode operation. FreeBSD
//! tmpfs and UFS, DragonFly tmpfs and UFS, and NetBSD FFS set `IN_CHANGE|IN_UPDATE`-style flags
//! and take one `vfs_timestamp()` when the flags are flushed (`tmpfs_itimes`, `ufs_itimes`:
//! getattr, close, setattr, fsync).
//!
//! See docs/kernel-models.md for the per-syscall table and which counts are uncertain.

use super::{act, Action, ClockFn, Effect, Target};
use crate::trace::{FsKind, Syscall};

/// The two BSD families the models distinguish.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    /// FreeBSD and DragonFly (same pipe code and deferred tmpfs/UFS).
    FreeBsd,
    NetBsd,
}

/// The timestamp work of `syscall` on `fs` in a BSD kernel.
pub fn action(os: Os, syscall: Syscall, fs: FsKind) -> Action {
    use Effect::*;
    use Target::*;
    let stamp = |target, modify| VfsTimestamp { target, modify };
    if fs == FsKind::Pipefs {
        let clock = |modify| match os {
            Os::FreeBsd => stamp(Inode, modify),
            Os::NetBsd => Fixed {
                clock: ClockFn::Getnanotime,
                target: Inode,
                modify,
            },
        };
        return match syscall {
            Syscall::Write => act(&[clock(true)]),
            Syscall::Read => act(&[clock(false)]),
            _ => act(&[]),
        };
    }
    if os == Os::NetBsd && fs == FsKind::Tmpfs {
        // Eager: tmpfs_update(vp, TMPFS_UPDATE_*) → vfs_timestamp() in each operation.
        return match syscall {
            // tmpfs_alloc_node(): vfs_timestamp(&tn_atime); parent: tmpfs_update(dvp, M|C).
            Syscall::Create | Syscall::Mkdir => {
                act(&[NewInode, stamp(Inode, true), stamp(Dir, true)])
            }
            Syscall::Read | Syscall::Readdir => act(&[stamp(Inode, false)]),
            Syscall::Write
            | Syscall::OpenTrunc
            | Syscall::Truncate
            | Syscall::Setattr
            | Syscall::Utimens => act(&[stamp(Inode, true)]),
            // tmpfs_getpages() with VM_PROT_WRITE: tmpfs_update(vp, ATIME|MTIME).
            Syscall::MmapStore => act(&[stamp(Inode, true)]),
            // tmpfs_remove(): tmpfs_update(dvp, MTIME|CTIME) (the last link: no inode ctime).
            Syscall::Unlink | Syscall::Rmdir => act(&[stamp(Dir, true)]),
            Syscall::Rename | Syscall::Link => act(&[stamp(Dir, true), stamp(Inode, true)]),
            Syscall::Open
            | Syscall::Close
            | Syscall::Stat
            | Syscall::Lseek
            | Syscall::Mmap
            | Syscall::Munmap
            | Syscall::Fsync
            | Syscall::Other => act(&[]),
        };
    }
    // Deferred: FreeBSD/DragonFly tmpfs and UFS, NetBSD FFS.
    let defer = |target, modify| Defer { target, modify };
    let flush = Flush { target: Inode };
    match syscall {
        Syscall::Create | Syscall::Mkdir if fs == FsKind::Tmpfs => {
            // FreeBSD tmpfs_alloc_node(): vfs_timestamp(&nnode->tn_atime) at birth.
            act(&[NewInode, stamp(Inode, true), defer(Dir, true)])
        }
        Syscall::Create | Syscall::Mkdir => act(&[NewInode, defer(Inode, true), defer(Dir, true)]),
        Syscall::Read | Syscall::Readdir => act(&[defer(Inode, false)]),
        Syscall::Write | Syscall::MmapStore => act(&[defer(Inode, true)]),
        Syscall::OpenTrunc | Syscall::Truncate | Syscall::Setattr | Syscall::Utimens => {
            act(&[defer(Inode, true), flush])
        }
        Syscall::Stat | Syscall::Close | Syscall::Fsync => act(&[flush]),
        Syscall::Unlink | Syscall::Rmdir | Syscall::Rename | Syscall::Link => {
            act(&[defer(Inode, true), defer(Dir, true)])
        }
        Syscall::Open | Syscall::Lseek | Syscall::Mmap | Syscall::Munmap | Syscall::Other => {
            act(&[])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipes_use_vfs_timestamp_on_freebsd_and_getnanotime_on_netbsd() {
        assert!(matches!(
            action(Os::FreeBsd, Syscall::Read, FsKind::Pipefs)[0],
            Effect::VfsTimestamp { .. }
        ));
        assert!(matches!(
            action(Os::NetBsd, Syscall::Write, FsKind::Pipefs)[0],
            Effect::Fixed {
                clock: ClockFn::Getnanotime,
                ..
            }
        ));
    }
}
