//! The shape of the kernel tables: rows of cited facts. A row says which calls it matches
//! (kernels, syscalls, filesystems), the timestamp work they do ([`Effect`]s, in kernel order)
//! and where that was read. A table is walked in order and the first matching row holds, so a
//! filesystem's own row comes before the general one of the same syscall.

use super::{act, Action, Effect};
use crate::trace::{FsKind, Syscall};

use super::Version;

/// Kernel releases a row holds for: from `from` (inclusive) up to `until` (exclusive); `None`
/// leaves that end open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Versions {
    pub from: Option<Version>,
    pub until: Option<Version>,
}

impl Versions {
    /// Every release.
    pub const ALL: Versions = Versions {
        from: None,
        until: None,
    };

    /// `version` and every later release.
    pub const fn from(version: Version) -> Versions {
        Versions {
            from: Some(version),
            until: None,
        }
    }

    /// The releases before `version`.
    pub const fn before(version: Version) -> Versions {
        Versions {
            from: None,
            until: Some(version),
        }
    }

    /// From `from` up to, not including, `until`.
    pub const fn between(from: Version, until: Version) -> Versions {
        Versions {
            from: Some(from),
            until: Some(until),
        }
    }

    pub fn contains(self, version: Version) -> bool {
        self.from.is_none_or(|f| version >= f) && self.until.is_none_or(|u| version < u)
    }

    /// The releases where the range starts or ends (what a test probes).
    pub fn bounds(self) -> impl Iterator<Item = Version> {
        self.from.into_iter().chain(self.until)
    }
}

/// One row of a kernel table. `K` says which kernels it holds for (Linux: [`Versions`]; BSD:
/// which kernels), `C` its citation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Row<K: 'static, C: 'static> {
    pub kernels: K,
    pub syscalls: &'static [Syscall],
    pub filesystems: &'static [FsKind],
    /// The timestamp work, in kernel order: at most four effects (an [`Action`]).
    pub effects: &'static [Effect],
    pub source: C,
}

impl<K, C> Row<K, C> {
    /// Whether the row is about `syscall` on `fs` (whichever kernel).
    pub fn matches(&self, syscall: Syscall, fs: FsKind) -> bool {
        self.syscalls.contains(&syscall) && self.filesystems.contains(&fs)
    }

    pub fn action(&self) -> Action {
        act(self.effects)
    }
}

/// Every filesystem kind, pipefs included.
pub const ANY_FS: &[FsKind] = &FsKind::ALL;
/// Every filesystem but pipefs: where files live.
pub const FILES: &[FsKind] = &[
    FsKind::Tmpfs,
    FsKind::Ext4,
    FsKind::Xfs,
    FsKind::Btrfs,
    FsKind::Ufs,
    FsKind::Other,
];
pub const PIPEFS: &[FsKind] = &[FsKind::Pipefs];
pub const TMPFS: &[FsKind] = &[FsKind::Tmpfs];
/// Every call (what a table's catch-all row of a filesystem matches).
pub const ANY_SYSCALL: &[Syscall] = &Syscall::ALL;
