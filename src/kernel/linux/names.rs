//! Directory entries: create, mkdir, unlink, rmdir, rename, link. Each stamps the inode and
//! its directory through `inode_set_ctime_current()`; the filesystems differ in how many reads
//! and in which order.

use super::{btrfs, recalled, src, LinuxRow, COUNTED_AT, EXT4_READ_AT};
use crate::kernel::table::{Row, Versions, FILES, TMPFS};
use crate::kernel::Effect::{
    LinuxCopyCtimeToDir, LinuxEvict, LinuxRootTimes, LinuxSetCtime, NewInode,
};
use crate::kernel::Target::{Dir, Inode};
use crate::kernel::Version;
use crate::trace::{FsKind, Syscall};

pub(super) const ROWS: &[LinuxRow] = &[
    // btrfs_create_new_inode(): current_time() for the inode and btrfs_update_root_times();
    // btrfs_add_link(): the directory's m/ctime and btrfs_update_inode(dir).
    Row {
        kernels: Versions::ALL,
        syscalls: &[Syscall::Create],
        filesystems: &[FsKind::Btrfs],
        effects: &[
            NewInode,
            LinuxSetCtime { target: Inode },
            LinuxSetCtime { target: Dir },
            LinuxRootTimes { reads: 2 },
        ],
        source: btrfs(
            "fs/btrfs/inode.c, fs/btrfs/root-tree.c",
            "btrfs_create_new_inode, btrfs_add_link -> btrfs_update_inode -> \
             btrfs_update_root_times",
        ),
    },
    Row {
        kernels: Versions::ALL,
        syscalls: &[Syscall::Create, Syscall::Mkdir],
        filesystems: FILES,
        effects: &[
            NewInode,
            LinuxSetCtime { target: Inode },
            LinuxSetCtime { target: Dir },
        ],
        source: recalled(
            "mm/shmem.c, fs/ext4/namei.c",
            "shmem_mknod, ext4_create -> inode_set_ctime_current",
        ),
    },
    // __btrfs_unlink_inode(): a ctime read for the inode and one for the directory (6.1.172
    // reads the inode's twice and copies it to the directory: two reads all the same),
    // btrfs_update_inode(dir); btrfs_unlink_inode(): btrfs_update_inode(inode).
    Row {
        kernels: Versions::ALL,
        syscalls: &[Syscall::Unlink],
        filesystems: &[FsKind::Btrfs],
        effects: &[
            LinuxSetCtime { target: Dir },
            LinuxSetCtime { target: Inode },
            LinuxRootTimes { reads: 2 },
        ],
        source: btrfs(
            "fs/btrfs/inode.c",
            "__btrfs_unlink_inode, btrfs_unlink_inode -> btrfs_update_inode",
        ),
    },
    // shmem_unlink(): dir mtime = dir ctime = inode_set_ctime_current(inode) — one read applied
    // to both; then the last iput evicts the inode: shmem_evict_inode() ->
    // shmem_truncate_range() reads once more (current_time() before 6.6,
    // inode_set_ctime_current() after). Counted: vfsmix on 6.1, 6.12, 7.2.
    Row {
        kernels: Versions::ALL,
        syscalls: &[Syscall::Unlink, Syscall::Rmdir],
        filesystems: TMPFS,
        effects: &[
            LinuxSetCtime { target: Inode },
            LinuxCopyCtimeToDir,
            LinuxEvict,
        ],
        source: src(
            "mm/shmem.c",
            "shmem_unlink; shmem_evict_inode -> shmem_truncate_range",
            COUNTED_AT,
            true,
        ),
    },
    // ext4: __ext4_unlink() reads for the directory and for the inode; the last iput then
    // evicts it, and ext4_evict_inode() calls ext4_truncate() when the inode has blocks — which
    // ends with `i_mtime = i_ctime = current_time()` (one more read). A file truncated to size
    // 0 and then written has its blocks allocated at close (auto_da_alloc: ext4_truncate() sets
    // EXT4_STATE_DA_ALLOC_CLOSE, ext4_release_file() calls ext4_alloc_da_blocks()), so vfsmix's
    // file has them. Counted: vfsmix on ext4, 6.1, 6.12 and 7.2 (+2 per op with the O_TRUNC
    // read, see the attribute rows).
    Row {
        kernels: Versions::ALL,
        syscalls: &[Syscall::Unlink],
        filesystems: &[FsKind::Ext4],
        effects: &[
            LinuxSetCtime { target: Dir },
            LinuxSetCtime { target: Inode },
            LinuxEvict,
        ],
        source: src(
            "fs/ext4/namei.c, fs/ext4/inode.c",
            "__ext4_unlink; ext4_evict_inode -> ext4_truncate (i_blocks != 0)",
            EXT4_READ_AT,
            true,
        ),
    },
    // ext4_rename(): ext4_add_entry() -> add_dirent_to_buf() stamps the new directory, then the
    // renamed inode's ctime, then the old directory's ctime and mtime; xfs_rename() the same
    // order (the target directory at xfs_dir_createname(), the source inode, the source
    // directory). Within one directory, the directory is stamped again after the inode: on a
    // multigrain kernel it ends on the floor that the inode's fine stamp raised, so a later
    // change of the queried directory takes a fine stamp of its own. Counted: a recorded git
    // cycle's creates after its renames, call by call, with 6.18's multigrain counters
    // (simulate update --validate --validate-strace).
    Row {
        kernels: Versions::ALL,
        syscalls: &[Syscall::Rename],
        filesystems: &[FsKind::Ext4, FsKind::Xfs],
        effects: &[
            LinuxSetCtime { target: Dir },
            LinuxSetCtime { target: Inode },
            LinuxSetCtime { target: Dir },
        ],
        source: src(
            "fs/ext4/namei.c, fs/xfs/xfs_inode.c, fs/xfs/libxfs/xfs_dir2.c",
            "ext4_rename; xfs_rename (-> xfs_dir_rename_children from 6.12)",
            "v6.1.172, v7.2.13 (read)",
            true,
        ),
    },
    // btrfs_rename() (6.12, 7.2): simple_rename_timestamp() stamps the directory and the inode;
    // __btrfs_unlink_inode() the inode and the directory again, and btrfs_add_link() the
    // directory once more; btrfs_update_inode() of the old directory, the inode and the new
    // directory each reads the root's times. The later stamps find the queried flags cleared
    // and take the floor, so the model keeps one of them on the directory (two coarse reads
    // fewer than the kernel: an action holds four effects). Before 6.12 the general row holds.
    Row {
        kernels: Versions::from(Version::new(6, 12)),
        syscalls: &[Syscall::Rename],
        filesystems: &[FsKind::Btrfs],
        effects: &[
            LinuxSetCtime { target: Dir },
            LinuxSetCtime { target: Inode },
            LinuxSetCtime { target: Dir },
            LinuxRootTimes { reads: 3 },
        ],
        source: src(
            "fs/btrfs/inode.c, fs/libfs.c",
            "btrfs_rename -> simple_rename_timestamp, __btrfs_unlink_inode, btrfs_add_link",
            "v6.12.117, v7.2.13 (read)",
            true,
        ),
    },
    // tmpfs: shmem_rename2() -> simple_rename_timestamp() (fs/libfs.c; read at 6.12 and 7.2,
    // from 6.6 as recalled): the directory, then the inode.
    Row {
        kernels: Versions::from(Version::new(6, 6)),
        syscalls: &[Syscall::Rename],
        filesystems: TMPFS,
        effects: &[
            LinuxSetCtime { target: Dir },
            LinuxSetCtime { target: Inode },
        ],
        source: src(
            "mm/shmem.c, fs/libfs.c",
            "shmem_rename2 -> simple_rename_timestamp",
            "v6.12.117, v7.2.13 (read)",
            true,
        ),
    },
    // 6.1's shmem_rename2() reads one current_time() and stores it in both.
    Row {
        kernels: Versions::before(Version::new(6, 6)),
        syscalls: &[Syscall::Rename],
        filesystems: TMPFS,
        effects: &[LinuxSetCtime { target: Inode }, LinuxCopyCtimeToDir],
        source: src("mm/shmem.c", "shmem_rename2", "v6.1.172 (read)", true),
    },
    Row {
        kernels: Versions::ALL,
        syscalls: &[
            Syscall::Unlink,
            Syscall::Rmdir,
            Syscall::Rename,
            Syscall::Link,
        ],
        filesystems: FILES,
        effects: &[
            LinuxSetCtime { target: Dir },
            LinuxSetCtime { target: Inode },
        ],
        source: recalled("fs/ext4/namei.c", "ext4_unlink -> inode_set_ctime_current"),
    },
];
