//! The ctime swap: chmods of other files after chmod-stat move their ctimes to the floor on
//! the queried side and leave them at the tick on the control, so that against
//! chmod-stat-read16 the pair differs in swaps and floored reads only.

use super::*;
use crate::price::recipe::Recipe;
use crate::price::{Counts, Part};

/// One side of `pattern` on `fs`, as the model counts it at `ns` per iteration.
fn side(pattern: Pattern, fs: FsKind, queried: bool, ns: f64) -> Counts {
    let (profile, pairs) = recorded();
    let model = model_of(&pairs[0]);
    let cfg = SimulateConfig::new(LoopSource::Scenario("write-stat".into()));
    let (costs, _) = costs::resolve_as_measured(model, Some(&profile), &cfg).unwrap();
    side_counts(model, costs, pattern, fs, queried, ns, 1).unwrap()
}

fn delta(pattern: Pattern, fs: FsKind, ns: f64) -> Counts {
    side(pattern, fs, true, ns) - side(pattern, fs, false, ns)
}

#[test]
fn chmods_of_other_files_swap_each_ctime_once_on_the_queried_side_only() {
    for fs in [FsKind::Tmpfs, FsKind::Ext4, FsKind::Xfs, FsKind::Btrfs] {
        // 5 µs an iteration: many iterations a tick.
        let swap = delta(recipe::SWAP, fs, 5_000.0);
        let floor = delta(recipe::FLOOR, fs, 5_000.0);
        let between = swap - floor;
        // Each other file's ctime moves to the new floor once an iteration; the control's
        // once a tick.
        assert!(
            (between[Term::CtimeSwap] - 16.0).abs() < 0.1,
            "{fs:?} {between:?}"
        );
        // Two floored reads a chmod (notify_change, inode_set_ctime_current) against one a
        // read.
        assert!(
            (between[Term::FloorRead] - 16.0).abs() < 0.1,
            "{fs:?} {between:?}"
        );
        for t in [
            Term::Query,
            Term::Update,
            Term::AtimeUpdate,
            Term::FineExcess,
        ] {
            assert!(between[t].abs() < 0.05, "{fs:?} {t:?} {between:?}");
        }
        // The pair's own chmod-stat swaps its ctime on both pairs alike.
        assert!(
            (floor[Term::CtimeSwap] - 1.0).abs() < 0.05,
            "{fs:?} {floor:?}"
        );
    }
}

#[test]
fn every_term_priced_after_the_swap_takes_it_out_first() {
    // The swap is priced from the other files' chmods timed on their own (each set apart,
    // else in a run), else against the floor pair, after the reads; the query's, the
    // update's, the first update's, the atime's and the commit's pairs all take some swaps,
    // so each takes the swap out before pricing its own term; the query's statx timed on its
    // own takes none, and needs no term before it.
    let swaps: Vec<_> = Recipe::of(Term::CtimeSwap)
        .map(|r| (r.pair, r.against, r.part, r.lazy))
        .collect();
    assert_eq!(
        swaps,
        [
            (recipe::SWAP_APART, None, Part::Tail, false),
            (recipe::SWAP, None, Part::Tail, true),
            (recipe::SWAP, Some(recipe::FLOOR), Part::Whole, true),
        ]
    );
    assert!(Recipe::of(Term::CtimeSwap).all(|r| r.needs.contains(&Term::FloorRead)));
    let stat_alone = |r: &Recipe| r.term == Term::Query && r.part == Part::Tail;
    for t in [
        Term::Query,
        Term::Update,
        Term::FirstUpdate,
        Term::AtimeUpdate,
        Term::SyncCommit,
    ] {
        assert!(
            Recipe::of(t)
                .filter(|q| !stat_alone(q))
                .all(|q| q.needs.contains(&Term::CtimeSwap)),
            "{t:?}"
        );
    }
    let stat: Vec<_> = Recipe::of(Term::Query).filter(|r| stat_alone(r)).collect();
    assert_eq!(stat.len(), 1);
    assert_eq!(stat[0].pair, recipe::CHMOD);
    assert!(stat[0].needs.is_empty());
}
