//! Linux: `current_time()` copies the coarse clock (the last tick); writers call
//! `file_update_time()` which only updates and dirties the inode when that time moved
//! (`inode_needs_update_time()`). Since 6.13, filesystems with `FS_MGTIME` (tmpfs, ext4, xfs,
//! btrfs) hand out a fine-grained ctime — a clocksource read that also raises a global floor
//! (`ktime_get_real_ts64_mg()`) — only when someone queried the ctime (stat) since the last
//! change. Sources (torvalds/linux):
//!
//! - fs/inode.c: `current_time`, `inode_needs_update_time`, `file_update_time`,
//!   `inode_set_ctime_current`, `touch_atime`/`atime_needs_update`, `file_accessed`
//!   (include/linux/fs.h), `generic_update_time`, `inode_update_timestamps`
//! - kernel/time/timekeeping.c: `ktime_get_coarse_real_ts64_mg`, `ktime_get_real_ts64_mg`
//! - fs/stat.c: `generic_fillattr` → `fill_mg_cmtime` (sets `I_CTIME_QUERIED`)
//! - fs/pipe.c: `pipe_write` → `file_update_time`, `pipe_read` → `file_accessed`
//! - mm/shmem.c: `shmem_mknod`, `shmem_unlink`, `shmem_mmap` (`file_accessed`), no
//!   `page_mkwrite` in `shmem_vm_ops`; fs/ext4/inode.c `ext4_page_mkwrite` → `file_update_time`
//! - fs/attr.c: `notify_change` (`current_time` into `ia_ctime`), `setattr_copy`
//!
//! See docs/kernel-models.md for the per-syscall table and which counts are uncertain.

use super::{act, Action, Effect, Target};
use crate::trace::{FsKind, Syscall};

/// The timestamp work of `syscall` on `fs` in Linux (both Linux models; the policy decides
/// coarse, multigrain or precise reads).
pub fn action(syscall: Syscall, fs: FsKind) -> Action {
    use Effect::*;
    use Target::*;
    let update = |modify| LinuxUpdateIfChanged {
        target: Inode,
        modify,
    };
    if fs == FsKind::Pipefs {
        return match syscall {
            // pipe_write(): file_update_time(filp) after a successful write.
            Syscall::Write => act(&[update(true)]),
            // pipe_read(): file_accessed(filp) → touch_atime().
            Syscall::Read => act(&[update(false)]),
            Syscall::Stat => act(&[LinuxQuery { target: Inode }]),
            _ => act(&[]),
        };
    }
    match syscall {
        Syscall::Read | Syscall::Mmap => act(&[update(false)]),
        Syscall::Readdir => act(&[LinuxUpdateIfChanged {
            target: Inode,
            modify: false,
        }]),
        Syscall::Write => act(&[update(true)]),
        // tmpfs has no page_mkwrite: a store through a shared mapping changes no timestamp.
        Syscall::MmapStore if fs == FsKind::Tmpfs => act(&[]),
        Syscall::MmapStore => act(&[update(true)]),
        Syscall::Create | Syscall::Mkdir => act(&[
            NewInode,
            LinuxSetCtime { target: Inode },
            LinuxSetCtime { target: Dir },
        ]),
        // shmem_unlink(): dir mtime = dir ctime = inode_set_ctime_current(inode) — one read
        // applied to both; other filesystems call inode_set_ctime_current() on each.
        Syscall::Unlink | Syscall::Rmdir if fs == FsKind::Tmpfs => {
            act(&[LinuxSetCtime { target: Inode }, LinuxCopyCtimeToDir])
        }
        Syscall::Unlink | Syscall::Rmdir | Syscall::Rename | Syscall::Link => act(&[
            LinuxSetCtime { target: Dir },
            LinuxSetCtime { target: Inode },
        ]),
        Syscall::OpenTrunc | Syscall::Truncate | Syscall::Setattr | Syscall::Utimens => act(&[
            LinuxCurrentTime { target: Inode },
            LinuxSetCtime { target: Inode },
        ]),
        Syscall::Stat => act(&[LinuxQuery { target: Inode }]),
        Syscall::Open
        | Syscall::Close
        | Syscall::Lseek
        | Syscall::Munmap
        | Syscall::Fsync
        | Syscall::Other => act(&[]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipes_check_the_coarse_time_on_both_ends() {
        assert!(matches!(
            action(Syscall::Write, FsKind::Pipefs)[0],
            Effect::LinuxUpdateIfChanged { modify: true, .. }
        ));
        assert!(matches!(
            action(Syscall::Read, FsKind::Pipefs)[0],
            Effect::LinuxUpdateIfChanged { modify: false, .. }
        ));
        assert_eq!(action(Syscall::MmapStore, FsKind::Tmpfs)[0], Effect::None);
    }
}
