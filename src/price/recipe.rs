//! The calibration pairs, one recipe each: the term a pair isolates, what it is held against,
//! when it isolates it, and the terms priced before it.

use super::{Part, Pattern, Term};
use crate::trace::FsKind;

/// write-stat: a write then a statx, asking for the times or for the size only.
pub const WRITE: Pattern = Pattern::Write { writes: 1 };
/// chmod-stat: a chmod then a statx; the chmod stores the inode on both sides.
pub const CHMOD: Pattern = Pattern::Chmod;
/// chmod-stat-read16: 16 reads of a second file after chmod-stat, each returning the floor on
/// the queried side and the tick on the control.
pub const FLOOR: Pattern = Pattern::ChmodRead { reads: 16 };
/// chmod-stat-read16-apart: [`FLOOR`] with each read between an open and a close of another
/// file: the floored read as a program takes it, between its other calls.
pub const FLOOR_APART: Pattern = Pattern::ChmodReadApart { reads: 16 };
/// chmod-stat-chmod16-others-apart: [`SWAP`] with each chmod set apart as [`FLOOR_APART`]'s
/// reads are.
pub const SWAP_APART: Pattern = Pattern::ChmodOthersApart { files: 16 };
/// chmod-stat-read16-same: 16 reads of the file the query marked, each taking a fine read on
/// the queried side.
pub const FINE: Pattern = Pattern::ChmodReadSame { reads: 16 };
/// chmod-stat-read1-same: [`FINE`] with one read: the same atime update and query, 15 fine
/// reads fewer.
pub const FINE_BASE: Pattern = Pattern::ChmodReadSame { reads: 1 };
/// chmod-stat-chmod16-others: 16 other files chmodded after chmod-stat, each ctime moving
/// to the floor on the queried side.
pub const SWAP: Pattern = Pattern::ChmodOthers { files: 16 };
/// write-read-stat: a read after the write, which moves the atime on the queried side only.
pub const WRITE_READ: Pattern = Pattern::WriteRead;

/// create-write-stat-write-unlink: a new file written twice around the statx, the second
/// write timed on its own.
pub const FIRST: Pattern = Pattern::CreateRewrite;

/// write-stat-fsync: an fsync after the write-stat pair's write and statx.
pub const WRITE_FSYNC: Pattern = Pattern::WriteFsync;

/// One calibration: `term = (Δpair − Δagainst − the priced terms the model counts) / units of
/// term`, where every Δ is queried − control ns per iteration, measured, and every count is
/// the model's for the same two loops replayed at their measured speed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Recipe {
    /// The term it prices.
    pub term: Term,
    /// The pair whose Δ prices it.
    pub pair: Pattern,
    /// A second pair whose Δ is taken from the first (its own control side otherwise): the two
    /// differ in the term's units only.
    pub against: Option<Pattern>,
    /// The part of each pair's iteration read: the whole, or the calls of its tail timed on
    /// their own (and the model's units in those calls only).
    pub part: Part,
    /// The least units of the term between the sides for the pair to price it.
    pub min_units: f64,
    /// Terms that must not move between the sides (by `tolerance` units or more) unless
    /// priced first: else the pair does not isolate the term.
    pub apart: &'static [Term],
    /// How far an unpriced term of `apart` may move.
    pub tolerance: f64,
    /// The terms priced before it where their own pairs can (the solver walks
    /// [`Term::ALL`] in this order); a term not priced leaves its work in this one's price.
    pub needs: &'static [Term],
    /// Measured only where no earlier recipe priced the term.
    pub lazy: bool,
    /// Why the pair isolates the term, in words.
    pub why: &'static str,
    /// The filesystems whose model counts units of the term (`None`: every one): elsewhere
    /// the pair is not measured, as it could price nothing.
    pub only_on: Option<&'static [FsKind]>,
}

/// Every recipe, each term's in the order they are tried: the first that isolates its term
/// prices it; the others that can are said beside it as predictions.
pub const RECIPES: [Recipe; 16] = [
    Recipe {
        term: Term::FloorRead,
        pair: FLOOR_APART,
        against: None,
        part: Part::Tail,
        min_units: 1.0,
        apart: &[Term::Query, Term::Update],
        tolerance: 0.5,
        needs: &[],
        lazy: false,
        only_on: None,
        why: "a coarse read that returns the floor beyond one that returns the tick, as a \
              program takes it: the reads after the query's fine stamp, each timed alone \
              between an open and a close of another file (a run of reads keeps the floor's \
              code hot and prices less)",
    },
    Recipe {
        term: Term::FloorRead,
        pair: FLOOR,
        against: None,
        part: Part::Tail,
        min_units: 1.0,
        apart: &[Term::Query, Term::Update],
        tolerance: 0.5,
        needs: &[],
        lazy: true,
        only_on: None,
        why: "a coarse read that returns the floor beyond one that returns the tick: the reads \
              after the query's fine stamp, timed on their own, so the chmod's and the query's \
              spread stays out",
    },
    Recipe {
        term: Term::FloorRead,
        pair: FLOOR,
        against: Some(CHMOD),
        part: Part::Whole,
        min_units: 1.0,
        apart: &[Term::Query, Term::Update],
        tolerance: 0.5,
        needs: &[],
        lazy: true,
        only_on: None,
        why: "a coarse read that returns the floor beyond one that returns the tick: the reads \
              after the query's fine stamp, against the chmod-stat pair's",
    },
    Recipe {
        term: Term::FineExcess,
        pair: FINE,
        against: Some(FINE_BASE),
        part: Part::Tail,
        min_units: 4.0,
        apart: &[Term::Query, Term::Update],
        tolerance: 0.05,
        needs: &[Term::FloorRead],
        lazy: false,
        only_on: None,
        why: "a fine read inside the op beyond the precise read's price: the reads of the \
              queried file timed on their own, 16 against 1; both move the atime once, so \
              between them lie only reads",
    },
    Recipe {
        term: Term::FineExcess,
        pair: FINE,
        against: Some(FINE_BASE),
        part: Part::Whole,
        min_units: 4.0,
        apart: &[Term::Query, Term::Update],
        tolerance: 0.05,
        needs: &[Term::FloorRead],
        lazy: false,
        only_on: None,
        why: "a fine read inside the op beyond the precise read's price: both pairs move the \
              atime once and query once, so between them lie only reads",
    },
    Recipe {
        term: Term::CtimeSwap,
        pair: SWAP_APART,
        against: None,
        part: Part::Tail,
        min_units: 4.0,
        apart: &[Term::Query, Term::Update, Term::AtimeUpdate],
        tolerance: 0.5,
        needs: &[Term::FloorRead, Term::FineExcess],
        lazy: false,
        only_on: None,
        why: "a ctime that moves beyond one that stays, as a program takes it: the other \
              files' chmods, each timed alone between an open and a close of another file, \
              each ctime moving to the floor on the queried side and staying at the tick on \
              the control; between the sides lie floored reads and swaps",
    },
    Recipe {
        term: Term::CtimeSwap,
        pair: SWAP,
        against: None,
        part: Part::Tail,
        min_units: 4.0,
        apart: &[Term::Query, Term::Update, Term::AtimeUpdate],
        tolerance: 0.5,
        needs: &[Term::FloorRead, Term::FineExcess],
        lazy: true,
        only_on: None,
        why: "a ctime that moves beyond one that stays: the other files' chmods timed on their \
              own, each ctime moving to the floor on the queried side and staying at the tick \
              on the control; between the sides lie floored reads and swaps",
    },
    Recipe {
        term: Term::CtimeSwap,
        pair: SWAP,
        against: Some(FLOOR),
        part: Part::Whole,
        min_units: 4.0,
        apart: &[Term::Query, Term::Update, Term::AtimeUpdate],
        tolerance: 0.5,
        needs: &[Term::FloorRead, Term::FineExcess],
        lazy: true,
        only_on: None,
        why: "a ctime that moves beyond one that stays: the other files' ctimes move to the \
              floor on the queried side and stay at the tick on the control, and both pairs \
              query once after the same chmod, so between them lie floored reads and swaps",
    },
    Recipe {
        term: Term::Query,
        pair: CHMOD,
        against: None,
        part: Part::Tail,
        min_units: 0.5,
        apart: &[Term::Update],
        tolerance: 0.5,
        needs: &[],
        lazy: false,
        only_on: None,
        why: "the statx timed on its own: the query's work (fill_mg_cmtime's fetch_or of \
              I_CTIME_QUERIED) is all in it, and it reads no clock",
    },
    Recipe {
        term: Term::Query,
        pair: WRITE,
        against: None,
        part: Part::Whole,
        min_units: 0.5,
        apart: &[Term::Update],
        tolerance: 0.5,
        needs: &[Term::FloorRead, Term::FineExcess, Term::CtimeSwap],
        lazy: false,
        only_on: None,
        why: "the question adding no update to the write (every write stores its time), \
              write-stat isolates what it adds to a write",
    },
    Recipe {
        term: Term::Query,
        pair: CHMOD,
        against: None,
        part: Part::Whole,
        min_units: 0.5,
        apart: &[Term::Update],
        tolerance: 0.5,
        needs: &[Term::FloorRead, Term::FineExcess, Term::CtimeSwap],
        lazy: false,
        only_on: None,
        why: "the inode stored on both sides",
    },
    Recipe {
        term: Term::Update,
        pair: WRITE,
        against: Some(CHMOD),
        part: Part::Whole,
        min_units: 0.5,
        apart: &[],
        tolerance: 0.5,
        needs: &[
            Term::FloorRead,
            Term::FineExcess,
            Term::CtimeSwap,
            Term::Query,
        ],
        lazy: false,
        only_on: None,
        why: "against chmod-stat, whose chmod takes the same fine stamp, fine read, floored \
              reads, swap and query after it and stores the inode on both sides: between the \
              two lies the write's update alone, whatever a fine read costs inside either op",
    },
    Recipe {
        term: Term::Update,
        pair: WRITE,
        against: None,
        part: Part::Whole,
        min_units: 0.5,
        apart: &[],
        tolerance: 0.5,
        needs: &[
            Term::FloorRead,
            Term::FineExcess,
            Term::CtimeSwap,
            Term::Query,
        ],
        lazy: false,
        only_on: None,
        why: "live pair: the queried write stores its time, the control's once per tick",
    },
    Recipe {
        term: Term::FirstUpdate,
        pair: FIRST,
        against: Some(WRITE),
        part: Part::Tail,
        min_units: 0.5,
        apart: &[Term::Query, Term::AtimeUpdate],
        tolerance: 0.5,
        needs: &[
            Term::FloorRead,
            Term::FineExcess,
            Term::CtimeSwap,
            Term::Update,
        ],
        lazy: false,
        only_on: None,
        why: "the second write of a file made in the same iteration, timed on its own: with \
              the times asked for it stores a fine stamp, the new inode's first update, where \
              the control's finds the tick's time stored; against write-stat's write, the same \
              update on a kept file",
    },
    Recipe {
        term: Term::AtimeUpdate,
        pair: WRITE_READ,
        against: Some(WRITE),
        part: Part::Whole,
        min_units: 0.5,
        apart: &[],
        tolerance: 0.5,
        needs: &[
            Term::FloorRead,
            Term::FineExcess,
            Term::CtimeSwap,
            Term::Query,
            Term::Update,
        ],
        lazy: false,
        only_on: None,
        why: "the read after a fine-stamped write moves the atime only with the times asked \
              for (relatime: the atime is not later than the mtime); against write-stat, the \
              read alone lies between them, its floored reads and its atime update, whatever a \
              fine read costs inside the write",
    },
    Recipe {
        term: Term::SyncCommit,
        pair: WRITE_FSYNC,
        against: None,
        part: Part::Whole,
        min_units: 0.2,
        apart: &[],
        tolerance: 0.5,
        needs: &[
            Term::FloorRead,
            Term::FineExcess,
            Term::CtimeSwap,
            Term::Query,
            Term::Update,
        ],
        lazy: false,
        why: "the fsync after a fine-stamped write finds its store uncommitted and commits it; \
              the control's write stores once per tick, and its fsync then commits that store \
              only",
        only_on: Some(&[FsKind::Ext4, FsKind::Xfs]),
    },
];

impl Recipe {
    /// The recipes of `term`, in the order they are tried.
    pub fn of(term: Term) -> impl Iterator<Item = &'static Recipe> {
        RECIPES.iter().filter(move |r| r.term == term)
    }

    /// Whether the model counts units of its term on `fs`.
    pub fn applies_on(&self, fs: FsKind) -> bool {
        self.only_on.is_none_or(|on| on.contains(&fs))
    }

    /// The pairs it needs.
    pub fn patterns(&self) -> impl Iterator<Item = Pattern> {
        std::iter::once(self.pair).chain(self.against)
    }
}

/// Every pattern `fs`'s price is measured with up front (the lazy recipes' wait until an
/// earlier recipe of their term fails), write-stat first.
pub fn patterns_up_front(fs: FsKind) -> Vec<Pattern> {
    let mut out = vec![WRITE];
    for r in RECIPES.iter().filter(|r| !r.lazy && r.applies_on(fs)) {
        for p in r.patterns() {
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}
