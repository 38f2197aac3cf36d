//! The terms of the price: what each one is, its names in the JSON and on the command line,
//! and what a filesystem without a price of its own takes.

/// A part of the kernel's timestamp work that a live pair prices per filesystem. The reads
/// themselves (`precise_read_ns`, `coarse_read_ns`) come from the probe and are not terms: every
/// term is priced beyond them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Term {
    /// What a coarse read that returns the multigrain floor costs beyond one that returns the
    /// tick's time (`ktime_get_coarse_real_ts64_mg()` converts the floor with
    /// `ktime_to_timespec64()` while the floor is ahead of the tick).
    FloorRead,
    /// What a Linux fine read (`ktime_get_real_ts64`, `ktime_get_real_ts64_mg`) costs inside
    /// the op that takes it beyond the precise read's price (the syscall pair's, a bare
    /// `clock_gettime` with the least work before the read): `read_tsc()` is
    /// `rdtsc_ordered()`, which waits for the work before it.
    FineExcess,
    /// What `inode_set_ctime_current()` costs when it stores a new ctime beyond finding the
    /// stored one equal to the time it read (fs/inode.c: the `try_cmpxchg` of `i_ctime_nsec`
    /// and the store of `i_ctime_sec`, which also clears `I_CTIME_QUERIED`, against the early
    /// return of `ctime_xchg_skip`): the kernel's `ctime_swaps` counter counts them. A
    /// multigrain floor ahead of the tick moves the ctime of every inode changed in the rest
    /// of the tick, queried or not, so a program takes many more of them than queries.
    CtimeSwap,
    /// What a multigrain ctime query brings beyond the reads and the update the model counts
    /// (`fill_mg_cmtime`'s `fetch_or` of `I_CTIME_QUERIED`, and the fine stamp's floor and
    /// ctime compare-exchanges).
    Query,
    /// The filesystem's own work of storing a changed c/mtime on the write path
    /// (`file_update_time()` → `inode_update_time(S_MTIME|S_CTIME|S_VERSION)`: ext4's journal
    /// handle, xfs's transaction, btrfs's delayed inode, tmpfs's bare dirtying).
    Update,
    /// What an inode's first c/mtime update on the write path since it was created
    /// (`file_update_time()`) costs beyond a later one, measured per filesystem by the
    /// create-write-stat-write-unlink pair. A program that makes a file and writes it after a
    /// stat in a later call (a database's journal, an archive's members) takes one per file on
    /// the queried side, where the control, writing in the tick the file was made, stores
    /// nothing. The kernel path is the update's own; what a new inode adds to it (its first
    /// `__mark_inode_dirty()`, the first log of its timestamps in ext4's journal or xfs's
    /// log) the pair measures as a whole: an atime update that dirtied the inode before does
    /// not take it away.
    FirstUpdate,
    /// The filesystem's own work of storing a moved atime (`touch_atime()` →
    /// `inode_update_time(S_ATIME)`): a path of its own where the filesystem makes it one —
    /// `generic_update_time()` marks an atime-only change `I_DIRTY_TIME` under lazytime where
    /// a c/mtime change bumps `i_version` and is `I_DIRTY_SYNC` (journaled on ext4), and
    /// `xfs_vn_update_time()` leaves a lazytime atime to the VFS where it logs a c/mtime change.
    AtimeUpdate,
    /// The journal commit a full `fsync` forces because the file's last timestamp store is not
    /// committed yet: ext4's `ext4_fsync_journal()` waits for the inode's `i_sync_tid`, which
    /// every journaled inode store moves (fdatasync waits for `i_datasync_tid`, which a
    /// timestamp alone does not); xfs's `xfs_file_fsync()` forces the log up to the inode's
    /// last commit (fdatasync skips a change of `XFS_ILOG_TIMESTAMP` alone). Where the
    /// question stamps a write that the control would not, the question adds the commit.
    SyncCommit,
}

impl Term {
    /// Every term, in the order the solver prices them (each after the terms its recipes
    /// need).
    pub const ALL: [Term; 8] = [
        Term::FloorRead,
        Term::FineExcess,
        Term::CtimeSwap,
        Term::Query,
        Term::Update,
        Term::FirstUpdate,
        Term::AtimeUpdate,
        Term::SyncCommit,
    ];
    /// The order documents, tables and `--help` list them: the filesystem's own work (the
    /// update, the query) first, then the reads' parts.
    pub const LISTED: [Term; 8] = [
        Term::Update,
        Term::FirstUpdate,
        Term::AtimeUpdate,
        Term::SyncCommit,
        Term::Query,
        Term::CtimeSwap,
        Term::FloorRead,
        Term::FineExcess,
    ];
    /// How many terms there are.
    pub const COUNT: usize = Term::ALL.len();

    /// The term's name without its unit: the key of its source in `costs.sources`.
    pub fn key(self) -> &'static str {
        match self {
            Term::FloorRead => "floor_read",
            Term::FineExcess => "fine_excess",
            Term::CtimeSwap => "ctime_swap",
            Term::Query => "query",
            Term::Update => "update",
            Term::FirstUpdate => "first_update",
            Term::AtimeUpdate => "atime_update",
            Term::SyncCommit => "sync_commit",
        }
    }

    /// The JSON field and `--set` name of its price: `<key>_ns`.
    pub fn field(self) -> &'static str {
        match self {
            Term::FloorRead => "floor_read_ns",
            Term::FineExcess => "fine_excess_ns",
            Term::CtimeSwap => "ctime_swap_ns",
            Term::Query => "query_ns",
            Term::Update => "update_ns",
            Term::FirstUpdate => "first_update_ns",
            Term::AtimeUpdate => "atime_update_ns",
            Term::SyncCommit => "sync_commit_ns",
        }
    }

    /// What one unit of the term is, in words (a table's column, a sentence's subject).
    pub fn what(self) -> &'static str {
        match self {
            Term::FloorRead => "floored read",
            Term::FineExcess => "fine read in path +",
            Term::CtimeSwap => "ctime swap",
            Term::Query => "query",
            Term::Update => "update",
            Term::FirstUpdate => "first update",
            Term::AtimeUpdate => "atime update",
            Term::SyncCommit => "fsync commit",
        }
    }

    /// The term's name in a line of prose.
    pub fn label(self) -> &'static str {
        match self {
            Term::FloorRead => "floored read",
            Term::FineExcess => "in-path excess of a fine read",
            Term::CtimeSwap => "ctime swap",
            Term::Query => "ctime query",
            Term::Update => "inode update",
            Term::FirstUpdate => "first update of a new inode",
            Term::AtimeUpdate => "atime update",
            Term::SyncCommit => "journal commit forced by fsync",
        }
    }

    /// The term in a commit message's sentence: the words before its price and after.
    pub fn sentence(self) -> (&'static str, &'static str) {
        match self {
            Term::FloorRead => (
                "a coarse read that returns the multigrain floor",
                " ns more",
            ),
            Term::FineExcess => (
                "a fine read",
                " ns more inside the op than the syscall pair's",
            ),
            Term::CtimeSwap => ("a ctime that moves", " ns more than one that stays"),
            Term::Query => ("a ctime query", " ns"),
            Term::Update => ("an inode update", " ns"),
            Term::FirstUpdate => ("a new inode's first update", " ns more than a later one"),
            Term::AtimeUpdate => ("an atime update", " ns"),
            Term::SyncCommit => ("a journal commit that an fsync forces", " ns"),
        }
    }

    /// A read's part: the timekeeper's work, the same on every filesystem but for the work
    /// before it. A filesystem without a price of its own takes the first measured one, and a
    /// pair that cannot price it takes the profile's; a term that is the filesystem's own work
    /// (the query's and the update's) is 0 where not measured, and a pair that cannot price it
    /// leaves its work in the terms priced after it.
    pub fn is_read(self) -> bool {
        matches!(self, Term::FloorRead | Term::FineExcess)
    }

    /// What its units are called.
    pub fn units(self) -> &'static str {
        match self {
            Term::FloorRead => "floored reads",
            Term::FineExcess => "fine reads",
            Term::CtimeSwap => "ctime swaps",
            Term::Query => "queries",
            Term::Update => "updates",
            Term::FirstUpdate => "first updates",
            Term::AtimeUpdate => "atime updates",
            Term::SyncCommit => "fsync commits",
        }
    }

    /// Why a non-Linux model prices it at 0.
    pub fn not_linux(self) -> &'static str {
        match self {
            Term::FloorRead => "none: only Linux's multigrain coarse reads return a floor",
            Term::FineExcess => "none: priced for Linux's in-kernel fine reads only",
            Term::CtimeSwap => "none: only Linux's multigrain ctime is swapped in place",
            Term::Query => "none: only Linux's multigrain timestamps are queried",
            Term::Update => {
                "not measured, taken as 0: the live pair prices a Linux update, not this OS's; \
                 --set update_ns=… for a what-if"
            }
            Term::FirstUpdate => {
                "not measured, taken as 0: the live pair prices a Linux inode's first update, \
                 not this OS's"
            }
            Term::AtimeUpdate => {
                "not measured, taken as 0: the live pair prices a Linux atime update, not this \
                 OS's; --set atime_update_ns=… for a what-if"
            }
            Term::SyncCommit => {
                "not modelled: the models count a commit an fsync forces on Linux's ext4 and \
                 xfs only"
            }
        }
    }

    /// What a profile without a measured price of this term does with its work.
    pub fn unmeasured(self) -> &'static str {
        match self {
            Term::FloorRead => {
                "probe --dir DIR measures it with the chmod-stat pair and reads after it; the \
                 update and query prices then leave it out"
            }
            Term::FineExcess => {
                "a fine read inside the kernel costs the syscall pair's price; probe --dir DIR \
                 measures the excess, and the query and update prices then leave it out"
            }
            Term::CtimeSwap => {
                "probe --dir DIR measures it with chmods of 16 other files after chmod-stat; \
                 without it, the query's and the update's prices hold the swap their pairs take"
            }
            Term::Query => {
                "probe --dir DIR measures it with the chmod-stat pair; a filesystem's update \
                 price then holds it"
            }
            Term::Update => "probe --dir DIR measures it with the write-stat pair",
            Term::FirstUpdate => {
                "probe --dir DIR measures it with the create-write-stat-write-unlink pair; \
                 without it, a new inode's first update is priced as a later one"
            }
            Term::AtimeUpdate => {
                "probe --dir DIR measures it with the write-read-stat pair; an atime update is \
                 priced as a c/mtime update where the profile has no price of its own"
            }
            Term::SyncCommit => {
                "probe --dir DIR measures it with the write-stat-fsync pair; without it, the \
                 commits an fsync forces are counted and priced at 0"
            }
        }
    }

    /// Where the profile's measured prices come from, in words.
    pub fn measured_by(self) -> &'static str {
        match self {
            Term::FloorRead => "chmod-stat pair with reads after it, probe --dir",
            Term::FineExcess => "chmod-stat with 16 reads of the same file against 1, probe --dir",
            Term::CtimeSwap => {
                "chmod-stat with chmods of 16 other files against 16 reads of one, probe --dir"
            }
            Term::Query => {
                "chmod-stat pair, or write-stat where the question adds no update to the write; \
                 probe --dir"
            }
            Term::Update => "live pair, probe --dir",
            Term::FirstUpdate => "create-write-stat-write-unlink pair, probe --dir",
            Term::AtimeUpdate => "write-read-stat pair, probe --dir",
            Term::SyncCommit => "write-stat-fsync pair, probe --dir",
        }
    }

    /// The term whose price stands in for this one on a filesystem without a price of its
    /// own: an atime update costs a c/mtime update's where only that was measured (the price
    /// before the two were told apart).
    pub fn stand_in(self) -> Option<Term> {
        match self {
            Term::AtimeUpdate => Some(Term::Update),
            _ => None,
        }
    }
}

impl std::fmt::Display for Term {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.what())
    }
}
