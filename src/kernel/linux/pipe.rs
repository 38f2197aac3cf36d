//! FIFOs and anonymous pipes. A FIFO (named pipe), on whatever file system holds it: its
//! descriptors take `pipefifo_fops`, whose `fifo_pipe_write()` calls `file_update_time()` and
//! `fifo_pipe_read()` `file_accessed()` after a successful transfer (fs/pipe.c since commit
//! f017b0a4951f "pipe: don't update {a,c,m}time for anonymous pipes", v6.15); before,
//! `pipe_write()` and `pipe_read()` did so for every pipe. The inode is the file system's
//! (tmpfs, ext4, …), so a multigrain file system's functions read its clock (`_mg`).
//!
//! pipefs's rows answer every call on an anonymous pipe: the table walks them first.

use super::{
    src, LinuxRow, AT_613, FILE_UPDATE_TIME, FILE_UPDATE_TIME_ONE_READ, STAT_NO_TIMES,
    STAT_QUERIES, TOUCH_ATIME,
};
use crate::kernel::model::{LINUX_NO_ANON_PIPE_TIME, LINUX_UPDATE_TIME_REREAD};
use crate::kernel::table::{Row, Versions, ANY_FS, ANY_SYSCALL, PIPEFS};
use crate::kernel::{Effect, Source, Target};
use crate::trace::Syscall;

/// Where the FIFO functions were read: the commit that split them from the anonymous pipe's.
const FIFO_AT: &str = "v6.15: f017b0a4951f 'pipe: don't update {a,c,m}time for anonymous pipes'";
/// `pipe_write()`: `file_update_time(filp)` after a successful write.
const PIPE_WRITE: Source = src("fs/pipe.c", "pipe_write -> file_update_time", AT_613, true);
/// `pipe_read()`: `file_accessed(filp)` → `touch_atime()`.
const PIPE_READ: Source = src("fs/pipe.c", "pipe_read -> file_accessed", AT_613, true);

pub(super) const ROWS: &[LinuxRow] = &[
    Row {
        kernels: Versions::before(LINUX_UPDATE_TIME_REREAD),
        syscalls: &[Syscall::FifoWrite],
        filesystems: ANY_FS,
        effects: &[FILE_UPDATE_TIME_ONE_READ],
        source: PIPE_WRITE,
    },
    Row {
        kernels: Versions::between(LINUX_UPDATE_TIME_REREAD, LINUX_NO_ANON_PIPE_TIME),
        syscalls: &[Syscall::FifoWrite],
        filesystems: ANY_FS,
        effects: &[FILE_UPDATE_TIME],
        source: PIPE_WRITE,
    },
    Row {
        kernels: Versions::from(LINUX_NO_ANON_PIPE_TIME),
        syscalls: &[Syscall::FifoWrite],
        filesystems: ANY_FS,
        effects: &[FILE_UPDATE_TIME],
        source: src(
            "fs/pipe.c",
            "fifo_pipe_write -> file_update_time",
            FIFO_AT,
            true,
        ),
    },
    Row {
        kernels: Versions::before(LINUX_NO_ANON_PIPE_TIME),
        syscalls: &[Syscall::FifoRead],
        filesystems: ANY_FS,
        effects: &[TOUCH_ATIME],
        source: PIPE_READ,
    },
    Row {
        kernels: Versions::from(LINUX_NO_ANON_PIPE_TIME),
        syscalls: &[Syscall::FifoRead],
        filesystems: ANY_FS,
        effects: &[TOUCH_ATIME],
        source: src(
            "fs/pipe.c",
            "fifo_pipe_read -> file_accessed",
            FIFO_AT,
            true,
        ),
    },
    Row {
        kernels: Versions::ALL,
        syscalls: &[Syscall::StatNoTimes],
        filesystems: PIPEFS,
        effects: &[],
        source: STAT_NO_TIMES,
    },
    Row {
        kernels: Versions::ALL,
        syscalls: &[Syscall::Stat],
        filesystems: PIPEFS,
        effects: &[Effect::LinuxQuery {
            target: Target::Inode,
        }],
        source: STAT_QUERIES,
    },
    // "pipe: don't update {a,c,m}time for anonymous pipes" (Oleg Nesterov, merged for 6.15):
    // pipeanon_fops use anon_pipe_read/anon_pipe_write, which call neither file_accessed() nor
    // file_update_time(); only FIFOs (fifo_pipe_*) still do. Every other call on a pipe.
    Row {
        kernels: Versions::from(LINUX_NO_ANON_PIPE_TIME),
        syscalls: ANY_SYSCALL,
        filesystems: PIPEFS,
        effects: &[],
        source: src(
            "fs/pipe.c",
            "anon_pipe_read, anon_pipe_write (pipeanon_fops)",
            "v6.15: patch 'pipe: don't update {a,c,m}time for anonymous pipes'",
            true,
        ),
    },
    Row {
        kernels: Versions::before(LINUX_UPDATE_TIME_REREAD),
        syscalls: &[Syscall::Write],
        filesystems: PIPEFS,
        effects: &[FILE_UPDATE_TIME_ONE_READ],
        source: PIPE_WRITE,
    },
    Row {
        kernels: Versions::between(LINUX_UPDATE_TIME_REREAD, LINUX_NO_ANON_PIPE_TIME),
        syscalls: &[Syscall::Write],
        filesystems: PIPEFS,
        effects: &[FILE_UPDATE_TIME],
        source: PIPE_WRITE,
    },
    Row {
        kernels: Versions::before(LINUX_NO_ANON_PIPE_TIME),
        syscalls: &[Syscall::Read],
        filesystems: PIPEFS,
        effects: &[TOUCH_ATIME],
        source: PIPE_READ,
    },
    // Every other call on a pipe before 6.15.
    Row {
        kernels: Versions::before(LINUX_NO_ANON_PIPE_TIME),
        syscalls: ANY_SYSCALL,
        filesystems: PIPEFS,
        effects: &[],
        source: src("fs/pipe.c", "(no timestamp work)", AT_613, true),
    },
];
