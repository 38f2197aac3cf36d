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
//! The table is [`rows`]: static rows for pipes and FIFOs, NetBSD's eager tmpfs, and the
//! deferring filesystems, each with the kernels, syscalls and filesystems it holds for, its
//! effects and its source. See docs/kernel-models.md for the per-syscall table and which
//! counts are uncertain.

mod deferred;
mod pipe;
mod tmpfs;

use super::table::{Row, Versions};
use super::{ClockFn, Effect, Rule, Source, Target, Version};
use crate::trace::{FsKind, Syscall};

/// The BSD kernels the models distinguish.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    /// FreeBSD at a version (pipes changed clock at
    /// [`super::model::FREEBSD_PIPE_GETNANOTIME`]).
    FreeBsd(Version),
    /// DragonFly: FreeBSD's old pipe code (`vfs_timestamp`), deferred tmpfs and UFS.
    DragonFly,
    NetBsd,
}

/// Which kernels a BSD row holds for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    FreeBsd(Versions),
    DragonFly,
    NetBsd,
}

impl Kernel {
    pub fn holds(self, os: Os) -> bool {
        match (self, os) {
            (Kernel::FreeBsd(versions), Os::FreeBsd(v)) => versions.contains(v),
            (Kernel::DragonFly, Os::DragonFly) | (Kernel::NetBsd, Os::NetBsd) => true,
            _ => false,
        }
    }
}

/// Where a BSD row was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cite {
    /// One place, whichever kernel the row matched.
    At(Source),
    /// The flag-deferring code, one reading for every kernel and filesystem the row holds
    /// for: the matched kernel's repository, its tmpfs or UFS vnode code, `function`, checked
    /// as `status` (a recalled one at the kernel's branch, not re-read).
    Deferred {
        function: &'static str,
        status: &'static str,
    },
}

/// A row of a BSD table.
pub type BsdRow = Row<&'static [Kernel], Cite>;

/// The tables, in the order they are walked: pipes and FIFOs, NetBSD's tmpfs, then the
/// filesystems that defer the time to a flush.
const TABLES: [&[BsdRow]; 3] = [pipe::ROWS, tmpfs::ROWS, deferred::ROWS];

/// Every row of the BSD tables, in walking order.
pub fn rows() -> impl Iterator<Item = &'static BsdRow> {
    TABLES.into_iter().flatten()
}

/// The timestamp work of `syscall` on `fs` in a BSD kernel, and its source: the first row
/// that holds for them.
pub fn rule(os: Os, syscall: Syscall, fs: FsKind) -> Rule {
    let row = rows()
        .find(|r| r.kernels.iter().any(|k| k.holds(os)) && r.matches(syscall, fs))
        .expect("the BSD tables have a row for every syscall on every filesystem");
    Rule {
        action: row.action(),
        source: source(row.source, os, fs),
    }
}

/// The source a citation names for `os` and `fs`.
fn source(cite: Cite, os: Os, fs: FsKind) -> Source {
    let (function, status) = match cite {
        Cite::At(source) => return source,
        Cite::Deferred { function, status } => (function, status),
    };
    let (repo, branch) = match os {
        Os::FreeBsd(_) => (FREEBSD, "main (recalled, not re-read)"),
        Os::DragonFly => (DRAGONFLY, "master (recalled, not re-read)"),
        Os::NetBsd => (NETBSD, "trunk (recalled, not re-read)"),
    };
    Source {
        repo,
        file: if fs == FsKind::Tmpfs {
            "sys/fs/tmpfs/tmpfs_subr.c, tmpfs_vnops.c"
        } else {
            "sys/ufs/ufs/ufs_vnops.c"
        },
        function,
        at: if status == "recalled" {
            branch
        } else {
            "main/master/trunk as indexed"
        },
        status,
    }
}

const FREEBSD: &str = "freebsd/freebsd-src";
const DRAGONFLY: &str = "DragonFlyBSD/DragonFlyBSD";
const NETBSD: &str = "NetBSD/src";

/// FreeBSD at every version.
const FREEBSD_ALL: Kernel = Kernel::FreeBsd(Versions::ALL);

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

/// `vfs_timestamp()` now, stored as a modification (`modify`) or access time.
const fn stamp(target: Target, modify: bool) -> Effect {
    Effect::VfsTimestamp { target, modify }
}

/// `getnanotime()` whatever the knob (a pipe's time).
const fn getnanotime(modify: bool) -> Effect {
    Effect::Fixed {
        clock: ClockFn::Getnanotime,
        target: Target::Inode,
        modify,
    }
}

/// A change (`modify`) or access flag; the time is taken at the flush.
const fn defer(target: Target, modify: bool) -> Effect {
    Effect::Defer { target, modify }
}

/// `tmpfs_itimes()` / `ufs_itimes()`: one `vfs_timestamp()` if a flag is pending.
const FLUSH: Effect = Effect::Flush {
    target: Target::Inode,
};

#[cfg(test)]
mod tests;
