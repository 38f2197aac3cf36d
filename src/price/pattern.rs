//! The loops of the live pairs: what one iteration does, each side the same but for the
//! question the stat asks.

use serde::{Deserialize, Serialize};

use crate::trace::Syscall;

/// The calls at the end of a pattern's iteration that the live pair also times on their own
/// (as one stretch, or each call alone where the pattern sets them apart with other calls):
/// the reads or chmods after chmod-stat, where the floored reads, the fine
/// reads and the ctime swaps sit. Their Δ leaves out the chmod and the statx before them,
/// whose update and query carry most of the whole iteration's spread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tail {
    /// The kind of the calls.
    pub syscall: Syscall,
    /// How many of them an iteration issues.
    pub calls: u32,
    /// The ops of the iteration before them.
    pub head: usize,
    /// Whether an `open` and a `close` of another file sit around each of them (untimed).
    pub apart: bool,
}

impl Tail {
    /// The ops of the iteration the tail spans: its calls, with an `open` and a `close` around
    /// each where set apart. Ops after them (a close, an unlink) are not the tail's.
    pub fn ops(&self) -> usize {
        self.calls as usize * if self.apart { 3 } else { 1 }
    }
}

/// What one iteration of the pair does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Pattern {
    /// `writes` × pwrite, then statx, on one file. The writes are its tail, timed on their
    /// own: with the times asked for, the first stores a fine stamp (the update) where the
    /// control's stores once per tick.
    Write { writes: u32 },
    /// create (`O_CREAT|O_EXCL`), pwrite, statx, close, unlink: a new inode every iteration.
    Create,
    /// create (`O_CREAT|O_EXCL`), pwrite, statx, pwrite, close, unlink: a new inode every
    /// iteration, written twice. The first write falls in the tick the file was made, so it
    /// stores no time on either side; with the times asked for, the second finds the ctime
    /// queried and stores a fine stamp, the inode's first update since it was made, where the
    /// control's finds the tick's time stored and stores nothing. The second write is the
    /// tail, timed on its own: it prices the first update beyond the update write-stat prices.
    CreateRewrite,
    /// `fchmod` to the same mode, then statx, on one file: a change whose inode store happens
    /// on both sides (`notify_change` always dirties the inode), so the question changes only
    /// the reads and the query's own work. The statx is its tail, timed on its own: it prices
    /// the query, whose work (`fill_mg_cmtime`'s `fetch_or` of `I_CTIME_QUERIED`) is all in it.
    Chmod,
    /// [`Pattern::Chmod`], then `reads` × `pread` of 1 byte of a second file on the same
    /// filesystem. Each read's `touch_atime` → `current_time()` reads the coarse clock; with
    /// the times asked for, the fchmod's fine stamp has raised the multigrain floor ahead of
    /// the tick, so each of those reads returns the floor. Against [`Pattern::Chmod`] it
    /// prices the floored read.
    ChmodRead { reads: u32 },
    /// [`Pattern::Chmod`], then `reads` × `pread` of 1 byte of the same file. With the times
    /// asked for, each read's `current_time()` finds the ctime queried and equal to the floor
    /// (the fchmod's fine stamp), and reads the fine clock (`ktime_get_real_ts64`); the first
    /// read moves the atime (relatime), the others find it later than the ctime. Against
    /// [`Pattern::ChmodRead`] it prices a fine read inside the read path.
    ChmodReadSame { reads: u32 },
    /// [`Pattern::Chmod`], then one `fchmod` of each of `files` other files on the same
    /// filesystem. Each of those reads the coarse clock twice (`notify_change` →
    /// `current_time()`, `setattr_copy_mgtime` → `inode_set_ctime_current()`), and with the
    /// times asked for both return the floor, which differs from the ctime the file took in
    /// the iteration before (the floor then was an earlier fine stamp): its ctime moves. Without,
    /// both return the tick, equal to the stored ctime but once per tick. Against
    /// [`Pattern::ChmodRead`] with as many reads it prices the ctime swap.
    ChmodOthers { files: u32 },
    /// [`Pattern::ChmodRead`] with each read set apart: an `open` (read-only) of another
    /// file before it and its `close` after, neither of which takes a timestamp. A floored
    /// read between a program's other calls costs more than one of a run of reads, whose code
    /// stays hot; this is the floored read a program takes. Only the reads are timed in the
    /// tail.
    ChmodReadApart { reads: u32 },
    /// [`Pattern::ChmodOthers`] with each chmod set apart as [`Pattern::ChmodReadApart`]'s
    /// reads are: the ctime swap between a program's other calls.
    ChmodOthersApart { files: u32 },
    /// pwrite, then `pread` of 1 byte of the same file, then statx. With the times asked
    /// for, the write's fine stamp puts the mtime after the atime, so the read moves the
    /// atime (relatime, `touch_atime`); without, the write keeps the tick's time and the read
    /// finds the atime equal to it. It prices the update where every write stores its time
    /// whatever the question (btrfs).
    WriteRead,
    /// pwrite, statx, then `fsync`, on one file. With the times asked for, every write takes a
    /// fine stamp and stores it, so every fsync finds a store its journal has not committed
    /// and commits it; without, the write stores once per tick and most fsyncs find nothing
    /// to commit. It prices the commit (ext4, xfs).
    WriteFsync,
    /// The file syscalls of a program recorded with `tscope record`, replayed live as a loop
    /// of `ops` syscalls ([`crate::workload::replayed`]).
    Recorded { ops: u32 },
}

impl Pattern {
    /// The calls timed on their own at the end of an iteration, where the pattern has them.
    pub fn tail(self) -> Option<Tail> {
        let (syscall, calls) = match self {
            Pattern::ChmodRead { reads }
            | Pattern::ChmodReadSame { reads }
            | Pattern::ChmodReadApart { reads } => (Syscall::Read, reads),
            Pattern::ChmodOthers { files } | Pattern::ChmodOthersApart { files } => {
                (Syscall::Setattr, files)
            }
            Pattern::Write { writes } => {
                return Some(Tail {
                    syscall: Syscall::Write,
                    calls: writes,
                    head: 0,
                    apart: false,
                })
            }
            Pattern::Chmod => {
                return Some(Tail {
                    syscall: Syscall::Stat,
                    calls: 1,
                    head: 1,
                    apart: false,
                })
            }
            Pattern::CreateRewrite => {
                return Some(Tail {
                    syscall: Syscall::Write,
                    calls: 1,
                    head: 3,
                    apart: false,
                })
            }
            _ => return None,
        };
        Some(Tail {
            syscall,
            calls,
            head: 2,
            apart: matches!(
                self,
                Pattern::ChmodReadApart { .. } | Pattern::ChmodOthersApart { .. }
            ),
        })
    }

    /// Iterations of a block of this pattern for `iterations` of a pattern that stays in the
    /// page cache: an fsync that commits waits for the device, about a thousand times a write,
    /// so its blocks are cut to keep a block's time alike (and at least 10 iterations).
    pub fn block_iterations(self, iterations: u64) -> u64 {
        match self {
            Pattern::WriteFsync => (iterations / 200).max(10),
            _ => iterations,
        }
    }

    /// A short name: `write-stat`, `write3-stat`, `create-write-stat-unlink`.
    pub fn name(self) -> String {
        match self {
            Pattern::Write { writes: 1 } => "write-stat".into(),
            Pattern::Write { writes } => format!("write{writes}-stat"),
            Pattern::Create => "create-write-stat-unlink".into(),
            Pattern::CreateRewrite => "create-write-stat-write-unlink".into(),
            Pattern::Chmod => "chmod-stat".into(),
            Pattern::ChmodRead { reads } => format!("chmod-stat-read{reads}"),
            Pattern::ChmodReadSame { reads } => format!("chmod-stat-read{reads}-same"),
            Pattern::ChmodOthers { files } => format!("chmod-stat-chmod{files}-others"),
            Pattern::ChmodReadApart { reads } => format!("chmod-stat-read{reads}-apart"),
            Pattern::ChmodOthersApart { files } => {
                format!("chmod-stat-chmod{files}-others-apart")
            }
            Pattern::WriteRead => "write-read-stat".into(),
            Pattern::WriteFsync => "write-stat-fsync".into(),
            Pattern::Recorded { ops } => format!("recorded loop of {ops} ops"),
        }
    }
}
