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
//! - fs/pipe.c: `pipe_write` → `file_update_time`, `pipe_read` → `file_accessed` until 6.14;
//!   from 6.15 anonymous pipes use `anon_pipe_read`/`anon_pipe_write`, which take no time,
//!   and FIFOs `fifo_pipe_read`/`fifo_pipe_write`, which still do (commit f017b0a4951f)
//! - mm/shmem.c: `shmem_mknod`, `shmem_unlink`, `shmem_mmap` (`file_accessed`), no
//!   `page_mkwrite` in `shmem_vm_ops`; fs/ext4/inode.c `ext4_page_mkwrite` → `file_update_time`
//! - fs/attr.c: `notify_change` (`current_time` into `ia_ctime`), `setattr_copy`
//!
//! See docs/kernel-models.md for the per-syscall table and which counts are uncertain.

use super::model::{LINUX_NO_ANON_PIPE_TIME, LINUX_UPDATE_TIME_REREAD};
use super::{act, Effect, Rule, Source, Target, Version};
use crate::trace::{FsKind, Syscall};

const LINUX: &str = "torvalds/linux";
/// Where the pre-6.15 counts were read (fs/pipe.c before the anonymous-pipe series, fs/inode.c
/// and timekeeping.c of the multigrain code).
const AT_613: &str = "v6.13-v6.14";
/// Where the FIFO functions were read: the commit that split them from the anonymous pipe's.
const FIFO_AT: &str = "v6.15: f017b0a4951f 'pipe: don't update {a,c,m}time for anonymous pipes'";
const RECALLED_AT: &str = "v6.13-v6.18 (recalled, not re-read)";
/// Where the ext4 counts were read: Debian's `linux-source-6.1` 6.1.172-1 (v6.1.172), and
/// counted on 6.1, 6.12 and 7.2 by `tscope vm count --fs ext4`.
const EXT4_READ_AT: &str = "v6.1.172 (read; counted by tscope vm count --fs ext4 on 6.1-7.2)";
/// Where the btrfs counts were read: Debian's `linux-source-6.1` 6.1.172-1,
/// `linux-source-6.12` 6.12.117-1 and `linux-source-7.2` 7.2.13-1, and counted on the three
/// kernels by `tscope vm count --fs btrfs`.
const BTRFS_READ_AT: &str =
    "v6.1.172, v6.12.117, v7.2.13 (read; counted by tscope vm count --fs btrfs on 6.1-7.2)";

const fn src(file: &'static str, function: &'static str, at: &'static str, read: bool) -> Source {
    Source {
        repo: LINUX,
        file,
        function,
        at,
        status: if read { "read" } else { "recalled" },
    }
}

/// A `statx` that asks for no time: no query, no timestamp work (`generic_fillattr` calls
/// `fill_mg_cmtime`, which sets the queried flag, only for STATX_CTIME|STATX_MTIME).
const STAT_NO_TIMES: Source = src("fs/stat.c", "generic_fillattr", AT_613, true);

/// Where the fsync rules were read, and how the running kernel counted them.
const SYNC_AT: &str = "v6.18 (read; counted on 6.18 by the jbd2_start_commit and \
                       xlog_iclog_write tracepoints, scripts/fsync-commits)";

/// A full fsync of a file whose last timestamp store is not committed yet forces the commit.
const FSYNC_COMMITS: Source = src(
    "fs/ext4/fsync.c, fs/xfs/xfs_file.c",
    "ext4_sync_file -> ext4_fsync_journal (waits for i_sync_tid), \
     xfs_file_fsync -> xfs_fsync_flush_log (forces the log to the inode's last commit)",
    SYNC_AT,
    true,
);

/// fdatasync skips a timestamp-only change: ext4 waits for `i_datasync_tid`, which only a
/// change of what reading the data needs moves (a new file's first blocks and size, which
/// its writeback allocates); xfs forces no log for `XFS_ILOG_TIMESTAMP` alone.
const FDATASYNC_SKIPS: Source = src(
    "fs/ext4/fsync.c, fs/ext4/inode.c, fs/xfs/xfs_file.c",
    "ext4_fsync_journal (datasync: i_datasync_tid, ext4_update_inode_fsync_trans), \
     xfs_file_fsync (datasync: no log force for XFS_ILOG_TIMESTAMP alone)",
    SYNC_AT,
    true,
);

/// The timestamp work of `syscall` on `fs` in Linux `version` (the policy decides coarse,
/// multigrain or precise reads; multigrain only from 6.13, see [`super::ModelId::policies`]).
pub fn rule(version: Version, syscall: Syscall, fs: FsKind) -> Rule {
    use Effect::*;
    use Target::*;
    // Before 6.6 file_update_time() stored the current_time() it had read (v6.1.55
    // fs/inode.c file_modified_flags: `__file_update_time(file, &now, ret)`); from 6.6
    // inode_update_timestamps() reads again through inode_set_ctime_current(). An atime
    // update always reads twice (atime_needs_update, then touch_atime / the update).
    let reread_ctime = version >= LINUX_UPDATE_TIME_REREAD;
    let update = |modify: bool| LinuxUpdateIfChanged {
        target: Inode,
        modify,
        reread: reread_ctime || !modify,
    };
    let r = |effects: &[Effect], source: Source| Rule {
        action: act(effects),
        source,
    };
    // A FIFO (named pipe), on whatever file system holds it: its descriptors take
    // pipefifo_fops, whose fifo_pipe_write() calls file_update_time() and fifo_pipe_read()
    // file_accessed() after a successful transfer (fs/pipe.c since commit f017b0a4951f "pipe:
    // don't update {a,c,m}time for anonymous pipes", v6.15); before, pipe_write() and
    // pipe_read() did so for every pipe. The inode is the file system's (tmpfs, ext4, …), so a
    // multigrain file system's functions read its clock (`_mg`).
    if matches!(syscall, Syscall::FifoWrite | Syscall::FifoRead) {
        return fifo(version, syscall == Syscall::FifoWrite);
    }
    if fs == FsKind::Pipefs {
        if syscall == Syscall::StatNoTimes {
            return r(&[], STAT_NO_TIMES);
        }
        if version >= LINUX_NO_ANON_PIPE_TIME && syscall != Syscall::Stat {
            // "pipe: don't update {a,c,m}time for anonymous pipes" (Oleg Nesterov, merged for
            // 6.15): pipeanon_fops use anon_pipe_read/anon_pipe_write, which call neither
            // file_accessed() nor file_update_time(); only FIFOs (fifo_pipe_*) still do.
            return r(
                &[],
                src(
                    "fs/pipe.c",
                    "anon_pipe_read, anon_pipe_write (pipeanon_fops)",
                    "v6.15: patch 'pipe: don't update {a,c,m}time for anonymous pipes'",
                    true,
                ),
            );
        }
        return match syscall {
            // pipe_write(): file_update_time(filp) after a successful write.
            Syscall::Write => r(
                &[update(true)],
                src("fs/pipe.c", "pipe_write -> file_update_time", AT_613, true),
            ),
            // pipe_read(): file_accessed(filp) → touch_atime().
            Syscall::Read => r(
                &[update(false)],
                src("fs/pipe.c", "pipe_read -> file_accessed", AT_613, true),
            ),
            Syscall::Stat => r(
                &[LinuxQuery { target: Inode }],
                src(
                    "fs/stat.c",
                    "generic_fillattr -> fill_mg_cmtime",
                    RECALLED_AT,
                    false,
                ),
            ),
            _ => r(&[], src("fs/pipe.c", "(no timestamp work)", AT_613, true)),
        };
    }
    let recalled = |file, function| src(file, function, RECALLED_AT, false);
    if fs == FsKind::Btrfs {
        if let Some(rule) = btrfs(version, syscall) {
            return rule;
        }
    }
    match syscall {
        Syscall::Read | Syscall::Mmap | Syscall::Readdir => r(
            &[update(false)],
            recalled(
                "mm/shmem.c, mm/filemap.c",
                "shmem_file_read_iter, shmem_mmap, generic_file_mmap -> file_accessed",
            ),
        ),
        Syscall::Write => r(
            &[update(true)],
            recalled(
                "mm/shmem.c, fs/ext4/file.c",
                "write_iter -> file_modified -> file_update_time",
            ),
        ),
        // A store through a shared mapping dirties the page on its first write fault:
        // fault_dirty_shared_page() calls file_update_time() itself when the vma has no
        // page_mkwrite (tmpfs), and ext4_page_mkwrite() calls it otherwise. Counted on 6.1,
        // 6.12 and 7.2 (vfsmix: file_update_time 2 per op, write and store).
        Syscall::MmapStore => r(
            &[update(true)],
            src(
                "mm/memory.c, fs/ext4/inode.c",
                "fault_dirty_shared_page (if !page_mkwrite) / ext4_page_mkwrite -> \
                 file_update_time",
                "v6.1-v7.2 (read; counted by tscope vm count)",
                true,
            ),
        ),
        Syscall::Create | Syscall::Mkdir => r(
            &[
                NewInode,
                LinuxSetCtime { target: Inode },
                LinuxSetCtime { target: Dir },
            ],
            recalled(
                "mm/shmem.c, fs/ext4/namei.c",
                "shmem_mknod, ext4_create -> inode_set_ctime_current",
            ),
        ),
        // shmem_unlink(): dir mtime = dir ctime = inode_set_ctime_current(inode) — one read
        // applied to both; then the last iput evicts the inode: shmem_evict_inode() ->
        // shmem_truncate_range() reads once more (current_time() before 6.6,
        // inode_set_ctime_current() after). Counted: vfsmix on 6.1, 6.12, 7.2.
        Syscall::Unlink | Syscall::Rmdir if fs == FsKind::Tmpfs => r(
            &[
                LinuxSetCtime { target: Inode },
                LinuxCopyCtimeToDir,
                LinuxEvict,
            ],
            src(
                "mm/shmem.c",
                "shmem_unlink; shmem_evict_inode -> shmem_truncate_range",
                "v6.1-v7.2 (read; counted by tscope vm count)",
                true,
            ),
        ),
        // ext4: __ext4_unlink() reads for the directory and for the inode; the last iput
        // then evicts it, and ext4_evict_inode() calls ext4_truncate() when the inode has
        // blocks — which ends with `i_mtime = i_ctime = current_time()` (one more read). A file
        // truncated to size 0 and then written has its blocks allocated at close
        // (auto_da_alloc: ext4_truncate() sets EXT4_STATE_DA_ALLOC_CLOSE, ext4_release_file()
        // calls ext4_alloc_da_blocks()), so vfsmix's file has them. Counted: vfsmix on ext4,
        // 6.1, 6.12 and 7.2 (+2 per op with the O_TRUNC read below).
        Syscall::Unlink if fs == FsKind::Ext4 => r(
            &[
                LinuxSetCtime { target: Dir },
                LinuxSetCtime { target: Inode },
                LinuxEvict,
            ],
            src(
                "fs/ext4/namei.c, fs/ext4/inode.c",
                "__ext4_unlink; ext4_evict_inode -> ext4_truncate (i_blocks != 0)",
                EXT4_READ_AT,
                true,
            ),
        ),
        // ext4_rename(): ext4_add_entry() -> add_dirent_to_buf() stamps the new directory, then
        // the renamed inode's ctime, then the old directory's ctime and mtime; xfs_rename() the
        // same order (the target directory at xfs_dir_createname(), the source inode, the
        // source directory). Within one directory, the directory is stamped again after the
        // inode: on a multigrain kernel it ends on the floor that the inode's fine stamp
        // raised, so a later change of the queried directory takes a fine stamp of its own.
        // Counted: a recorded git cycle's creates after its renames, call by call, with 6.18's
        // multigrain counters (simulate update --validate --validate-strace).
        Syscall::Rename if matches!(fs, FsKind::Ext4 | FsKind::Xfs) => r(
            &[
                LinuxSetCtime { target: Dir },
                LinuxSetCtime { target: Inode },
                LinuxSetCtime { target: Dir },
            ],
            src(
                "fs/ext4/namei.c, fs/xfs/xfs_inode.c, fs/xfs/libxfs/xfs_dir2.c",
                "ext4_rename; xfs_rename (-> xfs_dir_rename_children from 6.12)",
                "v6.1.172, v7.2.13 (read)",
                true,
            ),
        ),
        // tmpfs: shmem_rename2() -> simple_rename_timestamp() (fs/libfs.c; read at 6.12 and 7.2,
        // from 6.6 as recalled): the directory, then the inode; 6.1 reads one current_time()
        // and stores it in both.
        Syscall::Rename if fs == FsKind::Tmpfs && version >= Version::new(6, 6) => r(
            &[
                LinuxSetCtime { target: Dir },
                LinuxSetCtime { target: Inode },
            ],
            src(
                "mm/shmem.c, fs/libfs.c",
                "shmem_rename2 -> simple_rename_timestamp",
                "v6.12.117, v7.2.13 (read)",
                true,
            ),
        ),
        Syscall::Rename if fs == FsKind::Tmpfs => r(
            &[LinuxSetCtime { target: Inode }, LinuxCopyCtimeToDir],
            src("mm/shmem.c", "shmem_rename2", "v6.1.172 (read)", true),
        ),
        Syscall::Unlink | Syscall::Rmdir | Syscall::Rename | Syscall::Link => r(
            &[
                LinuxSetCtime { target: Dir },
                LinuxSetCtime { target: Inode },
            ],
            recalled("fs/ext4/namei.c", "ext4_unlink -> inode_set_ctime_current"),
        ),
        // do_truncate() -> notify_change(): current_time() into ia_ctime/ia_mtime; the
        // filesystem's setattr reads again only when the size changes (shmem_setattr:
        // `if (newsize != oldsize)`), and from 6.13 setattr_copy_mgtime() takes
        // inode_set_ctime_current() on FS_MGTIME filesystems. Counted: vfsmix's O_TRUNC of
        // an empty file takes 1 read on 6.1/6.12 and 2 on 7.2.
        // ext4_setattr() calls ext4_truncate() whenever the new size is <= the old one ("even
        // if i_size didn't change, to truncate possible preallocated blocks"), and
        // ext4_truncate() always ends with `i_mtime = i_ctime = current_time()`: one read after
        // notify_change()'s, empty file or not (the size-change branch reads only when the
        // file grows). Counted: vfsmix on ext4, 6.1, 6.12 and 7.2.
        Syscall::OpenTrunc if fs == FsKind::Ext4 => r(
            &[
                LinuxNotifyChange { target: Inode },
                LinuxSetCtime { target: Inode },
            ],
            src(
                "fs/attr.c, fs/ext4/inode.c",
                "notify_change; ext4_setattr -> ext4_truncate",
                EXT4_READ_AT,
                true,
            ),
        ),
        Syscall::OpenTrunc => r(
            &[
                LinuxNotifyChange { target: Inode },
                LinuxTruncateIfNonEmpty { target: Inode },
            ],
            src(
                "fs/attr.c, mm/shmem.c",
                "notify_change, setattr_copy_mgtime, shmem_setattr",
                "v6.1-v7.2 (read; counted by tscope vm count)",
                true,
            ),
        ),
        Syscall::Truncate => r(
            &[
                LinuxNotifyChange { target: Inode },
                LinuxSetCtime { target: Inode },
            ],
            recalled(
                "fs/attr.c, mm/shmem.c",
                "notify_change, shmem_setattr (size changes)",
            ),
        ),
        Syscall::Setattr | Syscall::Utimens => r(
            &[LinuxNotifyChange { target: Inode }],
            recalled("fs/attr.c", "notify_change, setattr_copy(_mgtime)"),
        ),
        Syscall::Stat => r(
            &[LinuxQuery { target: Inode }],
            recalled("fs/stat.c", "generic_fillattr -> fill_mg_cmtime"),
        ),
        Syscall::StatNoTimes => r(&[], STAT_NO_TIMES),
        Syscall::Fsync if matches!(fs, FsKind::Ext4 | FsKind::Xfs) => {
            r(&[LinuxSync { full: true }], FSYNC_COMMITS)
        }
        Syscall::Fdatasync if matches!(fs, FsKind::Ext4 | FsKind::Xfs) => {
            r(&[LinuxSync { full: false }], FDATASYNC_SKIPS)
        }
        Syscall::Fdatasync => r(&[], FDATASYNC_SKIPS),
        Syscall::Open
        | Syscall::Close
        | Syscall::Lseek
        | Syscall::Munmap
        | Syscall::Fsync
        | Syscall::Other => r(&[], recalled("-", "(no timestamp work)")),
        // Answered above, before any file system's rule.
        Syscall::FifoRead | Syscall::FifoWrite => fifo(version, syscall == Syscall::FifoWrite),
    }
}

/// A FIFO's write (`write`) or read: file_update_time() or file_accessed() on the FIFO's inode.
fn fifo(version: Version, write: bool) -> Rule {
    let reread = version >= LINUX_UPDATE_TIME_REREAD || !write;
    let (function, at) = match (version >= LINUX_NO_ANON_PIPE_TIME, write) {
        (true, true) => ("fifo_pipe_write -> file_update_time", FIFO_AT),
        (true, false) => ("fifo_pipe_read -> file_accessed", FIFO_AT),
        (false, true) => ("pipe_write -> file_update_time", AT_613),
        (false, false) => ("pipe_read -> file_accessed", AT_613),
    };
    Rule {
        action: act(&[Effect::LinuxUpdateIfChanged {
            target: Target::Inode,
            modify: write,
            reread,
        }]),
        source: src("fs/pipe.c", function, at, true),
    }
}

/// The btrfs rules that differ from the generic ones; `None`: the generic rule holds. Every
/// `btrfs_update_inode()` and every new inode also reads `ktime_get_real_ts64()` in
/// `btrfs_update_root_times()` (fs/btrfs/root-tree.c) for the subvolume root item's ctime:
/// vfsmix counts 7 such reads per op on 6.1, 6.12 and 7.2 — create 2, `O_TRUNC` 2, the flush at
/// close 1, unlink 2.
fn btrfs(version: Version, syscall: Syscall) -> Option<Rule> {
    use Effect::*;
    use Target::*;
    let r = |effects: &[Effect], file, function| Rule {
        action: act(effects),
        source: src(file, function, BTRFS_READ_AT, true),
    };
    Some(match syscall {
        // Before 6.13 btrfs_write_check() calls update_time_for_write(): one current_time(),
        // stored in mtime and ctime when it differs, never read again (not
        // file_update_time()). From 6.13 ("btrfs: convert to multigrain timestamps") it sets
        // `inode_set_mtime_to_ts(inode, inode_set_ctime_current(inode))` unconditionally.
        // Counted: write-stat on 7.2 takes 1 ktime_get_coarse_real_ts64_mg + 1
        // ktime_get_real_ts64_mg per op, not file_update_time()'s 2 + 1 + 1.
        Syscall::Write if version >= super::model::LINUX_MULTIGRAIN => r(
            &[LinuxSetCtime { target: Inode }, LinuxWritten(true)],
            "fs/btrfs/file.c",
            "btrfs_write_check -> inode_set_ctime_current",
        ),
        Syscall::Write => r(
            &[LinuxUpdateIfChanged {
                target: Inode,
                modify: true,
                reread: false,
            }],
            "fs/btrfs/file.c",
            "btrfs_write_check -> update_time_for_write -> current_time",
        ),
        // btrfs_create_new_inode(): current_time() for the inode and btrfs_update_root_times();
        // btrfs_add_link(): the directory's m/ctime and btrfs_update_inode(dir).
        Syscall::Create => r(
            &[
                NewInode,
                LinuxSetCtime { target: Inode },
                LinuxSetCtime { target: Dir },
                LinuxRootTimes { reads: 2 },
            ],
            "fs/btrfs/inode.c, fs/btrfs/root-tree.c",
            "btrfs_create_new_inode, btrfs_add_link -> btrfs_update_inode -> \
             btrfs_update_root_times",
        ),
        // __btrfs_unlink_inode(): a ctime read for the inode and one for the directory (6.1.172
        // reads the inode's twice and copies it to the directory: two reads all the same),
        // btrfs_update_inode(dir); btrfs_unlink_inode(): btrfs_update_inode(inode).
        Syscall::Unlink => r(
            &[
                LinuxSetCtime { target: Dir },
                LinuxSetCtime { target: Inode },
                LinuxRootTimes { reads: 2 },
            ],
            "fs/btrfs/inode.c",
            "__btrfs_unlink_inode, btrfs_unlink_inode -> btrfs_update_inode",
        ),
        // btrfs_rename() (6.12, 7.2): simple_rename_timestamp() stamps the directory and the
        // inode; __btrfs_unlink_inode() the inode and the directory again, and btrfs_add_link()
        // the directory once more; btrfs_update_inode() of the old directory, the inode and the
        // new directory each reads the root's times. The later stamps find the queried flags
        // cleared and take the floor, so the model keeps one of them on the directory (two
        // coarse reads fewer than the kernel: an action holds four effects).
        Syscall::Rename if version >= Version::new(6, 12) => Rule {
            action: act(&[
                LinuxSetCtime { target: Dir },
                LinuxSetCtime { target: Inode },
                LinuxSetCtime { target: Dir },
                LinuxRootTimes { reads: 3 },
            ]),
            source: src(
                "fs/btrfs/inode.c, fs/libfs.c",
                "btrfs_rename -> simple_rename_timestamp, __btrfs_unlink_inode, btrfs_add_link",
                "v6.12.117, v7.2.13 (read)",
                true,
            ),
        },
        // notify_change() reads (and from 6.13 setattr_copy_mgtime() again); btrfs_setsize()
        // reads only for a truncate() without ATTR_CTIME|ATTR_MTIME, which O_TRUNC sets, but
        // sets BTRFS_INODE_FLUSH_ON_CLOSE for size 0 and calls btrfs_truncate() ->
        // btrfs_update_inode(); btrfs_setattr() then btrfs_dirty_inode() -> btrfs_update_inode().
        Syscall::OpenTrunc => r(
            &[
                LinuxNotifyChange { target: Inode },
                LinuxWritten(false),
                LinuxRootTimes { reads: 2 },
            ],
            "fs/attr.c, fs/btrfs/inode.c",
            "notify_change; btrfs_setattr -> btrfs_setsize -> btrfs_truncate, btrfs_dirty_inode",
        ),
        // btrfs_release_file(): test_and_clear_bit(BTRFS_INODE_FLUSH_ON_CLOSE) -> filemap_flush:
        // a small file is written back inline (cow_file_range_inline -> btrfs_update_inode).
        Syscall::Close => r(
            &[LinuxFlushOnClose],
            "fs/btrfs/file.c, fs/btrfs/inode.c",
            "btrfs_release_file -> filemap_flush -> cow_file_range_inline -> btrfs_update_inode",
        ),
        _ => return Option::None,
    })
}

#[cfg(test)]
mod tests;
