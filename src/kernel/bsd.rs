//! FreeBSD, DragonFly and NetBSD: `vfs_timestamp()` (sys/kern/vfs_subr.c) is the clock of file
//! timestamps. FreeBSD and DragonFly switch it on `vfs.timestamp_precision` between
//! `time_second`, `getnanotime()`, `microtime()` and `nanotime()`; NetBSD always calls
//! `nanotime()`. Pipes are not vnodes: FreeBSD/DragonFly `sys_pipe.c` call `vfs_timestamp()` in
//! `pipe_read`/`pipe_write`, NetBSD `sys_pipe.c` calls `getnanotime()`; FreeBSD
//! does too since `pipe_timestamp()` (the release of that change is not dated here).
//!
//! Filesystems differ in *when* they take the time. NetBSD tmpfs (sys/fs/tmpfs/tmpfs_vnops.c,
//! tmpfs_subr.c `tmpfs_update`, `tmpfs_newvnode`) takes it eagerly in every modifying vnode operation. FreeBSD
//! tmpfs and UFS, DragonFly tmpfs and UFS, and NetBSD FFS set `IN_CHANGE|IN_UPDATE`-style flags
//! and take one `vfs_timestamp()` when the flags are flushed (`tmpfs_itimes`, `ufs_itimes`:
//! getattr, close, setattr, fsync).
//!
//! See docs/kernel-models.md for the per-syscall table and which counts are uncertain.

use super::{act, ClockFn, Effect, Rule, Source, Target, Version};
use crate::kernel::model::FREEBSD_PIPE_GETNANOTIME;
use crate::trace::{FsKind, Syscall};

/// The BSD kernels the models distinguish.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    /// FreeBSD at a version (pipes changed clock at [`FREEBSD_PIPE_GETNANOTIME`]).
    FreeBsd(Version),
    /// DragonFly: FreeBSD's old pipe code (`vfs_timestamp`), deferred tmpfs and UFS.
    DragonFly,
    NetBsd,
}

const FREEBSD: &str = "freebsd/freebsd-src";
const DRAGONFLY: &str = "DragonFlyBSD/DragonFlyBSD";
const NETBSD: &str = "NetBSD/src";

const fn src(
    repo: &'static str,
    file: &'static str,
    function: &'static str,
    at: &'static str,
    status: &'static str,
) -> Source {
    Source {
        repo,
        file,
        function,
        at,
        status,
    }
}

/// A FIFO's read or write: a pipe's (recalled, not read for FIFOs).
fn fifo(os: Os, syscall: Syscall) -> Rule {
    let s = if syscall == Syscall::FifoWrite {
        Syscall::Write
    } else {
        Syscall::Read
    };
    let mut rule = rule(os, s, FsKind::Pipefs);
    rule.source.status = "recalled";
    rule
}

/// The timestamp work of `syscall` on `fs` in a BSD kernel, and its source.
pub fn rule(os: Os, syscall: Syscall, fs: FsKind) -> Rule {
    use Effect::*;
    use Target::*;
    let stamp = |target, modify| VfsTimestamp { target, modify };
    let r = |effects: &[Effect], source: Source| Rule {
        action: act(effects),
        source,
    };
    let (repo, at) = match os {
        Os::FreeBsd(_) => (FREEBSD, "main (recalled, not re-read)"),
        Os::DragonFly => (DRAGONFLY, "master (recalled, not re-read)"),
        Os::NetBsd => (NETBSD, "trunk (recalled, not re-read)"),
    };
    // A FIFO's reads and writes go through the pipe code (FreeBSD's fifo_vnops hand the
    // descriptor pipe fileops): modelled as a pipe's, recalled, not read for FIFOs.
    if matches!(syscall, Syscall::FifoRead | Syscall::FifoWrite) {
        return fifo(os, syscall);
    }
    if fs == FsKind::Pipefs {
        let getnanotime = |modify| Fixed {
            clock: ClockFn::Getnanotime,
            target: Inode,
            modify,
        };
        let (clock, source) = match os {
            Os::FreeBsd(v) if v >= FREEBSD_PIPE_GETNANOTIME => (
                getnanotime as fn(bool) -> Effect,
                src(
                    FREEBSD,
                    "sys/kern/sys_pipe.c",
                    "pipe_read, pipe_write -> pipe_timestamp -> getnanotime",
                    "004248ee (release of the change not dated here)",
                    "read",
                ),
            ),
            Os::FreeBsd(_) => (
                (|m| VfsTimestamp {
                    target: Inode,
                    modify: m,
                }) as fn(bool) -> Effect,
                src(
                    FREEBSD,
                    "sys/kern/sys_pipe.c",
                    "pipe_read, pipe_write -> vfs_timestamp",
                    "before pipe_timestamp() (release not dated here)",
                    "read",
                ),
            ),
            Os::DragonFly => (
                (|m| VfsTimestamp {
                    target: Inode,
                    modify: m,
                }) as fn(bool) -> Effect,
                src(
                    DRAGONFLY,
                    "sys/kern/sys_pipe.c",
                    "pipe_read (when nread), pipe_write -> vfs_timestamp",
                    "master",
                    "read",
                ),
            ),
            Os::NetBsd => (
                getnanotime as fn(bool) -> Effect,
                src(
                    NETBSD,
                    "sys/kern/sys_pipe.c",
                    "pipe_read (rpipe->pipe_atime), pipe_write (wpipe->pipe_mtime) -> getnanotime",
                    "every version in the index",
                    "read",
                ),
            ),
        };
        return match syscall {
            Syscall::Write => r(&[clock(true)], source),
            Syscall::Read => r(&[clock(false)], source),
            _ => r(&[], source),
        };
    }
    if os == Os::NetBsd && fs == FsKind::Tmpfs {
        let t = |function, status| {
            src(
                NETBSD,
                "sys/fs/tmpfs/tmpfs_vnops.c, tmpfs_subr.c",
                function,
                "trunk",
                status,
            )
        };
        // Eager: tmpfs_update(vp, TMPFS_UPDATE_*) → vfs_timestamp() in each operation.
        return match syscall {
            Syscall::Create | Syscall::Mkdir => r(
                &[NewInode, stamp(Inode, true), stamp(Dir, true)],
                t("tmpfs_newvnode (new node), tmpfs_construct_node -> tmpfs_update(dvp, MTIME|CTIME)", "cited"),
            ),
            Syscall::Read | Syscall::Readdir => {
                r(&[stamp(Inode, false)], t("tmpfs_read -> tmpfs_update(vp, ATIME)", "read"))
            }
            Syscall::Write => r(
                &[stamp(Inode, true)],
                t("tmpfs_write -> tmpfs_update(vp, MTIME|CTIME)", "read"),
            ),
            // open(O_TRUNC) of an empty file (vfsmix: the lseek does not extend it):
            // tmpfs_chsize returns before tmpfs_update when the size does not change, and
            // tmpfs_setattr no longer calls tmpfs_update at its end.
            Syscall::OpenTrunc => r(
                &[],
                t("tmpfs_setattr -> tmpfs_chsize (same size: returns before tmpfs_update)", "cited"),
            ),
            Syscall::Truncate | Syscall::Setattr => r(
                &[stamp(Inode, true)],
                t("tmpfs_chsize/tmpfs_truncate, tmpfs_chmod -> tmpfs_update", "recalled"),
            ),
            // tmpfs_chtimes stores the times it is given; no vfs_timestamp() (a UTIME_NOW
            // time taken by the syscall layer is not counted).
            Syscall::Utimens => r(&[], t("tmpfs_chtimes (no timestamp taken)", "cited")),
            Syscall::MmapStore => r(
                &[stamp(Inode, true)],
                t("tmpfs_getpages (VM_PROT_WRITE) -> tmpfs_update(vp, ATIME|MTIME)", "read"),
            ),
            Syscall::Unlink | Syscall::Rmdir => r(
                &[stamp(Dir, true)],
                t("tmpfs_remove -> tmpfs_update(dvp, MTIME|CTIME)", "read"),
            ),
            Syscall::Rename | Syscall::Link => r(
                &[stamp(Dir, true), stamp(Inode, true)],
                t("tmpfs_link, tmpfs_rename", "read"),
            ),
            Syscall::Open
            | Syscall::Close
            | Syscall::Stat
            | Syscall::StatNoTimes
            | Syscall::Lseek
            | Syscall::Mmap
            | Syscall::Munmap
            | Syscall::Fsync
            | Syscall::Fdatasync
            | Syscall::Other => r(&[], t("tmpfs_getattr, tmpfs_fsync (no timestamp)", "read")),
            Syscall::FifoRead | Syscall::FifoWrite => fifo(os, syscall),
        };
    }
    // Deferred: FreeBSD/DragonFly tmpfs and UFS, NetBSD FFS.
    let defer = |target, modify| Defer { target, modify };
    let flush = Flush { target: Inode };
    let (tfile, ufile) = (
        "sys/fs/tmpfs/tmpfs_subr.c, tmpfs_vnops.c",
        "sys/ufs/ufs/ufs_vnops.c",
    );
    let file = if fs == FsKind::Tmpfs { tfile } else { ufile };
    let d = |function, status: &'static str| {
        let at = if status == "recalled" {
            at
        } else {
            "main/master/trunk as indexed"
        };
        src(repo, file, function, at, status)
    };
    match syscall {
        Syscall::Create | Syscall::Mkdir if fs == FsKind::Tmpfs => r(
            &[NewInode, stamp(Inode, true), defer(Dir, true)],
            d(
                "tmpfs_alloc_node: vfs_timestamp(&nnode->tn_atime); tmpfs_dir_attach: dir flags",
                "recalled",
            ),
        ),
        Syscall::Create | Syscall::Mkdir => r(
            &[NewInode, defer(Inode, true), defer(Dir, true)],
            d(
                "ufs_makeinode: IN_CHANGE|IN_UPDATE on inode and directory",
                "recalled",
            ),
        ),
        Syscall::Read | Syscall::Readdir => {
            r(&[defer(Inode, false)], d("read: access flag", "recalled"))
        }
        Syscall::Write | Syscall::MmapStore => r(
            &[defer(Inode, true)],
            d("write / tmpfs_check_mtime: status flags", "recalled"),
        ),
        // FreeBSD/DragonFly tmpfs_truncate returns early when the size does not change (the
        // empty file of vfsmix's O_TRUNC open): no flag is set; tmpfs_setattr still ends with
        // tmpfs_update(), which flushes whatever is pending.
        Syscall::OpenTrunc if fs == FsKind::Tmpfs && os != Os::NetBsd => r(
            &[flush],
            d(
                "tmpfs_setattr -> tmpfs_truncate (same size: early return) -> tmpfs_update",
                "cited",
            ),
        ),
        Syscall::OpenTrunc | Syscall::Truncate | Syscall::Setattr | Syscall::Utimens => r(
            &[defer(Inode, true), flush],
            d("setattr: flags, then tmpfs_update/ufs_itimes", "recalled"),
        ),
        // A BSD getattr fills every time whatever was asked (there is no statx mask).
        Syscall::Stat
        | Syscall::StatNoTimes
        | Syscall::Close
        | Syscall::Fsync
        | Syscall::Fdatasync => r(
            &[flush],
            d(
                "getattr/close/fsync -> tmpfs_itimes/ufs_itimes: one vfs_timestamp if pending",
                "read",
            ),
        ),
        Syscall::Unlink | Syscall::Rmdir | Syscall::Rename | Syscall::Link => r(
            &[defer(Inode, true), defer(Dir, true)],
            d(
                "tmpfs_remove / ufs_remove: flags on inode and directory",
                "recalled",
            ),
        ),
        Syscall::Open | Syscall::Lseek | Syscall::Mmap | Syscall::Munmap | Syscall::Other => {
            r(&[], d("(no timestamp work)", "recalled"))
        }
        Syscall::FifoRead | Syscall::FifoWrite => fifo(os, syscall),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn action(os: Os, s: Syscall, fs: FsKind) -> super::super::Action {
        rule(os, s, fs).action
    }
    const OLD: Os = Os::FreeBsd(Version::new(12, 4));
    const NEW: Os = Os::FreeBsd(Version::new(14, 3));

    #[test]
    fn freebsd_pipes_moved_from_vfs_timestamp_to_getnanotime() {
        assert!(matches!(
            action(OLD, Syscall::Read, FsKind::Pipefs)[0],
            Effect::VfsTimestamp { .. }
        ));
        let getnanotime = Effect::Fixed {
            clock: ClockFn::Getnanotime,
            target: Target::Inode,
            modify: true,
        };
        assert_eq!(action(NEW, Syscall::Write, FsKind::Pipefs)[0], getnanotime);
        assert_eq!(
            action(Os::NetBsd, Syscall::Write, FsKind::Pipefs)[0],
            getnanotime
        );
        assert!(matches!(
            action(Os::DragonFly, Syscall::Write, FsKind::Pipefs)[0],
            Effect::VfsTimestamp { .. }
        ));
        assert_eq!(
            rule(NEW, Syscall::Read, FsKind::Pipefs).source.file,
            "sys/kern/sys_pipe.c"
        );
    }

    #[test]
    fn netbsd_tmpfs_takes_no_time_at_a_same_size_truncate_or_chtimes() {
        assert_eq!(
            action(Os::NetBsd, Syscall::OpenTrunc, FsKind::Tmpfs),
            [Effect::None; 4]
        );
        assert_eq!(
            action(Os::NetBsd, Syscall::Utimens, FsKind::Tmpfs),
            [Effect::None; 4]
        );
        // FreeBSD tmpfs: no pending flag from the truncate, only setattr's flush.
        let a = action(NEW, Syscall::OpenTrunc, FsKind::Tmpfs);
        assert_eq!(
            a[0],
            Effect::Flush {
                target: Target::Inode
            }
        );
        assert_eq!(a[1], Effect::None);
    }

    #[test]
    fn netbsd_tmpfs_vfsmix_counts_five_vfs_timestamps() {
        use Syscall::*;
        let seq = [
            Stat, Create, Stat, Lseek, Close, OpenTrunc, Write, Mmap, MmapStore, Munmap, Close,
            Unlink,
        ];
        let n: usize = seq
            .iter()
            .map(|&s| {
                action(Os::NetBsd, s, FsKind::Tmpfs)
                    .iter()
                    .filter(|e| matches!(e, Effect::VfsTimestamp { .. }))
                    .count()
            })
            .sum();
        assert_eq!(n, 5);
    }
}
