//! The trace model: a stream of operations (syscall, inode identity, filesystem kind, task,
//! optional time) that `simulate` replays under kernel models.
//!
//! A trace is consumed as an iterator of [`Op`]s so that memory stays flat in trace length: a
//! scenario expands its loop lazily ([`scenario::ScenarioOps`]), and a streaming importer (the
//! [`strace::import`]) only has to yield `Op`s, interning inode identities to dense
//! [`InodeId`]s as it goes. Everything an importer needs is here: [`Syscall::parse`] maps real
//! syscall names (and their common variants) onto the operations the models know, and
//! [`Interner`] turns path/fd identities into ids.

pub mod bundled;
pub mod scenario;
pub mod strace;

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

pub use scenario::{CompiledScenario, Scenario, ScenarioOps, SCENARIO_SCHEMA_VERSION};

/// A dense inode identity within one trace (index into per-inode state).
pub type InodeId = u32;

/// "No inode" (for example the parent directory of an operation that has none).
pub const NO_INODE: InodeId = u32::MAX;

/// The operations the kernel models know. Real syscall names map onto these through
/// [`Syscall::parse`]; anything else is [`Syscall::Other`] (no timestamp work).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Syscall {
    /// `read`/`pread`: data read (atime).
    Read,
    /// `write`/`pwrite`: data written (mtime, ctime).
    Write,
    /// `open(O_CREAT)` that creates the file (new inode; parent directory mtime, ctime).
    Create,
    /// `open` of an existing file without `O_TRUNC`.
    Open,
    /// `open(O_TRUNC)` of an existing file (mtime, ctime through setattr).
    OpenTrunc,
    Close,
    /// `stat`/`lstat`/`fstat`/`statx`: reads the timestamps.
    Stat,
    /// `statx` whose mask asks for neither `STATX_MTIME` nor `STATX_CTIME` (e.g. `STATX_SIZE`):
    /// the same call, but on Linux it does not query the ctime, so it never makes the next
    /// change fine-grained (the control of the live knob pair).
    StatNoTimes,
    Lseek,
    /// `mmap` of a file (Linux: `file_accessed`).
    Mmap,
    Munmap,
    /// The first store to a shared file mapping: a write fault (`page_mkwrite`/`getpages`).
    MmapStore,
    /// `unlink` (parent directory mtime, ctime).
    Unlink,
    /// `truncate`/`ftruncate`.
    Truncate,
    /// `fsync`/`syncfs`: data and every metadata change, a timestamp's included.
    Fsync,
    /// `fdatasync`: data, and the metadata needed to read it back (size, allocation), not a
    /// timestamp alone.
    Fdatasync,
    /// `chmod`/`chown`/`fchmod`: ctime only.
    Setattr,
    /// `utimensat`/`futimens`: explicit times (ctime from the clock).
    Utimens,
    Rename,
    Mkdir,
    Rmdir,
    /// `getdents`: directory atime.
    Readdir,
    Link,
    /// `read` from a named pipe (FIFO): atime of the FIFO's inode on its file system.
    FifoRead,
    /// `write` to a named pipe (FIFO): mtime and ctime of the FIFO's inode.
    FifoWrite,
    /// A syscall no model takes a timestamp for.
    Other,
}

impl Syscall {
    /// Every operation, in table order.
    pub const ALL: [Syscall; 26] = [
        Syscall::Read,
        Syscall::Write,
        Syscall::Create,
        Syscall::Open,
        Syscall::OpenTrunc,
        Syscall::Close,
        Syscall::Stat,
        Syscall::StatNoTimes,
        Syscall::Lseek,
        Syscall::Mmap,
        Syscall::Munmap,
        Syscall::MmapStore,
        Syscall::Unlink,
        Syscall::Truncate,
        Syscall::Fsync,
        Syscall::Fdatasync,
        Syscall::Setattr,
        Syscall::Utimens,
        Syscall::Rename,
        Syscall::Mkdir,
        Syscall::Rmdir,
        Syscall::Readdir,
        Syscall::Link,
        Syscall::FifoRead,
        Syscall::FifoWrite,
        Syscall::Other,
    ];

    /// The name used in scenario files.
    pub fn name(self) -> &'static str {
        match self {
            Syscall::Read => "read",
            Syscall::Write => "write",
            Syscall::Create => "create",
            Syscall::Open => "open",
            Syscall::OpenTrunc => "open_trunc",
            Syscall::Close => "close",
            Syscall::Stat => "stat",
            Syscall::StatNoTimes => "stat_no_times",
            Syscall::Lseek => "lseek",
            Syscall::Mmap => "mmap",
            Syscall::Munmap => "munmap",
            Syscall::MmapStore => "mmap_store",
            Syscall::Unlink => "unlink",
            Syscall::Truncate => "truncate",
            Syscall::Fsync => "fsync",
            Syscall::Fdatasync => "fdatasync",
            Syscall::Setattr => "setattr",
            Syscall::Utimens => "utimens",
            Syscall::Rename => "rename",
            Syscall::Mkdir => "mkdir",
            Syscall::Rmdir => "rmdir",
            Syscall::Readdir => "readdir",
            Syscall::Link => "link",
            Syscall::FifoRead => "fifo_read",
            Syscall::FifoWrite => "fifo_write",
            Syscall::Other => "other",
        }
    }

    /// Maps a scenario name or a real syscall name (`pwrite64`, `newfstatat`, `openat`, …) to an
    /// operation; `None` when unknown. `openat` maps to [`Syscall::Open`]: an importer that sees
    /// `O_CREAT` creating a file or `O_TRUNC` says so with `create` / `open_trunc`.
    pub fn parse(name: &str) -> Option<Syscall> {
        if let Some(s) = Syscall::ALL.iter().find(|s| s.name() == name) {
            return Some(*s);
        }
        Some(match name {
            "pread" | "pread64" | "readv" | "preadv" | "preadv2" => Syscall::Read,
            "pwrite" | "pwrite64" | "writev" | "pwritev" | "pwritev2" => Syscall::Write,
            "creat" | "open_creat" => Syscall::Create,
            "openat" | "openat2" => Syscall::Open,
            "lstat" | "fstat" | "newfstatat" | "fstatat" | "fstatat64" | "statx" | "stat64"
            | "lstat64" | "fstat64" => Syscall::Stat,
            "statx_no_times" => Syscall::StatNoTimes,
            "_llseek" => Syscall::Lseek,
            "mmap2" => Syscall::Mmap,
            "store" | "page_mkwrite" | "page_fault" => Syscall::MmapStore,
            "unlinkat" => Syscall::Unlink,
            "ftruncate" | "ftruncate64" | "truncate64" => Syscall::Truncate,
            "syncfs" => Syscall::Fsync,
            "chmod" | "fchmod" | "fchmodat" | "chown" | "fchown" | "lchown" | "fchownat" => {
                Syscall::Setattr
            }
            "utimensat" | "futimens" | "utimes" | "utime" | "futimesat" => Syscall::Utimens,
            "renameat" | "renameat2" => Syscall::Rename,
            "mkdirat" => Syscall::Mkdir,
            "getdents" | "getdents64" => Syscall::Readdir,
            "linkat" => Syscall::Link,
            _ => return None,
        })
    }

    /// An `open` with `O_CREAT|O_EXCL` in `flags` is a [`Syscall::Create`], with `O_TRUNC` an
    /// [`Syscall::OpenTrunc`]; a stat whose `flags` are a statx mask without `STATX_MTIME` or
    /// `STATX_CTIME` a [`Syscall::StatNoTimes`] (`flags` as strace or a run record spells
    /// them, `|`-separated);
    /// anything else is returned unchanged. An importer that knows whether an `O_CREAT` open
    /// created the file (strace: the file did not exist before) should say `create` itself.
    pub fn refine_open(self, flags: Option<&str>) -> Syscall {
        let has = |f: &str| flags.is_some_and(|fl| fl.split('|').any(|x| x.trim() == f));
        match self {
            Syscall::Stat if flags.is_some_and(|f| f.starts_with("STATX_")) => {
                if flags.is_some_and(crate::trace::statx_mask_has_no_time) {
                    Syscall::StatNoTimes
                } else {
                    Syscall::Stat
                }
            }
            Syscall::Open if has("O_CREAT") && has("O_EXCL") => Syscall::Create,
            Syscall::Open if has("O_TRUNC") => Syscall::OpenTrunc,
            s => s,
        }
    }
}

/// Whether a `statx` mask as strace prints it (`STATX_SIZE`, `STATX_TYPE|STATX_MODE`,
/// `STATX_BASIC_STATS`, `0x7ff`) asks for neither the mtime nor the ctime. An unreadable mask
/// counts as asking (a stat), the call's usual form.
pub fn statx_mask_has_no_time(mask: &str) -> bool {
    const TIMES: u64 = 0x40 | 0x80; // STATX_MTIME | STATX_CTIME (include/uapi/linux/stat.h)
    let mut bits = 0u64;
    for part in mask.split('|').map(str::trim) {
        bits |= match part {
            "STATX_MTIME" | "STATX_CTIME" | "STATX_BASIC_STATS" | "STATX_ALL" => TIMES,
            p if p.starts_with("STATX_") => 0,
            p => match p.strip_prefix("0x").map(|h| u64::from_str_radix(h, 16)) {
                Some(Ok(v)) => v,
                _ => match p.parse::<u64>() {
                    Ok(v) => v,
                    Err(_) => return false,
                },
            },
        };
    }
    bits & TIMES == 0
}

impl fmt::Display for Syscall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The filesystem an inode lives on, as far as timestamp handling differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FsKind {
    /// Pipes (Linux pipefs; BSD `sys_pipe.c`, not a filesystem at all).
    #[serde(alias = "pipe")]
    Pipefs,
    Tmpfs,
    Ext4,
    Xfs,
    Btrfs,
    /// FreeBSD UFS, NetBSD FFS, and other BSD disk filesystems with deferred `IN_*` flags.
    #[serde(alias = "ffs")]
    Ufs,
    /// Anything else: a disk filesystem without multigrain timestamps.
    Other,
}

/// How many [`FsKind`]s there are (a plain constant: array lengths in types need one).
pub const FS_KINDS: usize = 7;

impl FsKind {
    pub const ALL: [FsKind; FS_KINDS] = [
        FsKind::Pipefs,
        FsKind::Tmpfs,
        FsKind::Ext4,
        FsKind::Xfs,
        FsKind::Btrfs,
        FsKind::Ufs,
        FsKind::Other,
    ];

    pub fn name(self) -> &'static str {
        match self {
            FsKind::Pipefs => "pipefs",
            FsKind::Tmpfs => "tmpfs",
            FsKind::Ext4 => "ext4",
            FsKind::Xfs => "xfs",
            FsKind::Btrfs => "btrfs",
            FsKind::Ufs => "ufs",
            FsKind::Other => "other",
        }
    }

    /// Parses a name as scenario files and run records spell it (`ffs`, `pipe` accepted).
    pub fn parse(name: &str) -> Option<FsKind> {
        match name {
            "pipe" => Some(FsKind::Pipefs),
            "ffs" => Some(FsKind::Ufs),
            _ => FsKind::ALL.iter().copied().find(|f| f.name() == name),
        }
    }

    /// Linux filesystems with `FS_MGTIME` (multigrain timestamps, Linux ≥ 6.13).
    pub fn linux_multigrain(self) -> bool {
        matches!(
            self,
            FsKind::Tmpfs | FsKind::Ext4 | FsKind::Xfs | FsKind::Btrfs
        )
    }
}

impl fmt::Display for FsKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One operation of a trace. Small and `Copy`: the replay loop touches tens of millions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Op {
    pub syscall: Syscall,
    pub fs: FsKind,
    /// The inode the syscall acts on.
    pub inode: InodeId,
    /// The parent directory for namespace operations (create, unlink, …), else [`NO_INODE`].
    pub dir: InodeId,
    /// The task (thread or process) that issued it.
    pub task: u32,
    /// When it happened, in ns from the start of the trace (recorded traces); `None` lets the
    /// simulator advance a virtual clock by the modelled cost.
    pub time_ns: Option<u64>,
    /// This op ends one iteration (one "op" of ops/s, as will-it-scale counts them).
    pub ends_iteration: bool,
}

/// Interns identities (paths, `pipe:[1234]`, fd names) into dense [`InodeId`]s in first-seen
/// order, remembering each one's filesystem. Deterministic: no hash-map iteration reaches output.
#[derive(Debug, Default, Clone)]
pub struct Interner {
    ids: BTreeMap<String, InodeId>,
    names: Vec<String>,
    fs: Vec<FsKind>,
}

impl Interner {
    /// The id of `name`, created on first sight with filesystem `fs`. Returns the id and the
    /// filesystem it was first seen with.
    pub fn intern(&mut self, name: &str, fs: FsKind) -> (InodeId, FsKind) {
        if let Some(&id) = self.ids.get(name) {
            return (id, self.fs[id as usize]);
        }
        let id = self.names.len() as InodeId;
        self.ids.insert(name.to_string(), id);
        self.names.push(name.to_string());
        self.fs.push(fs);
        (id, fs)
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    pub fn name(&self, id: InodeId) -> Option<&str> {
        self.names.get(id as usize).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syscall_names_round_trip_and_aliases_map() {
        for s in Syscall::ALL {
            assert_eq!(Syscall::parse(s.name()), Some(s));
        }
        assert_eq!(Syscall::parse("pwrite64"), Some(Syscall::Write));
        assert_eq!(Syscall::parse("newfstatat"), Some(Syscall::Stat));
        assert_eq!(Syscall::parse("ioctl"), None);
        let open = Syscall::parse("openat").unwrap();
        assert_eq!(
            open.refine_open(Some("O_RDWR|O_CREAT|O_EXCL")),
            Syscall::Create
        );
        assert_eq!(
            open.refine_open(Some("O_WRONLY|O_TRUNC")),
            Syscall::OpenTrunc
        );
        assert_eq!(open.refine_open(Some("O_RDONLY")), Syscall::Open);
        assert_eq!(Syscall::Write.refine_open(Some("O_TRUNC")), Syscall::Write);
        assert_eq!(FsKind::parse("ffs"), Some(FsKind::Ufs));
        assert_eq!(FsKind::parse("zfs"), None);
    }

    #[test]
    fn interner_is_first_seen_order() {
        let mut i = Interner::default();
        assert_eq!(i.intern("b", FsKind::Tmpfs), (0, FsKind::Tmpfs));
        assert_eq!(i.intern("a", FsKind::Ext4), (1, FsKind::Ext4));
        assert_eq!(i.intern("b", FsKind::Ext4), (0, FsKind::Tmpfs));
        assert_eq!(i.len(), 2);
        assert_eq!(i.name(1), Some("a"));
    }
}
