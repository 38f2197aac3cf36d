//! A new inode's first c/mtime update on the write path: counted once per inode, on the
//! queried side of create-write-stat-write-unlink only, and priced against write-stat's write.

use super::*;
use crate::price::recipe::Recipe;
use crate::price::{Counts, Part};

/// One side of `pattern` on `fs`, as the model counts it at `ns` per iteration.
fn side(pattern: crate::price::Pattern, fs: FsKind, queried: bool, ns: f64) -> Counts {
    let (profile, pairs) = recorded();
    let model = model_of(&pairs[0]);
    let cfg = SimulateConfig::new(LoopSource::Scenario("write-stat".into()));
    let (costs, _) = costs::resolve_as_measured(model, Some(&profile), &cfg).unwrap();
    side_counts(model, costs, pattern, fs, queried, ns, 1).unwrap()
}

#[test]
fn a_new_file_written_after_its_stat_takes_its_first_update_on_the_queried_side_only() {
    for fs in [FsKind::Tmpfs, FsKind::Ext4, FsKind::Xfs] {
        // 5 µs an iteration, far inside a tick: the first write falls in the tick the file
        // was made on both sides; the second stores a fine stamp with the times asked for.
        let (q, c) = (
            side(recipe::FIRST, fs, true, 5_000.0),
            side(recipe::FIRST, fs, false, 5_000.0),
        );
        assert!((q[Term::FirstUpdate] - 1.0).abs() < 1e-9, "{fs:?} {q:?}");
        assert!(
            ((q - c)[Term::Update] - 1.0).abs() < 0.01,
            "{fs:?} {q:?} {c:?}"
        );
        assert!(c[Term::FirstUpdate] < 0.01, "{fs:?} {c:?}");
        // A kept file's update is never its first but once, whatever the question.
        let kept = side(recipe::WRITE, fs, true, 5_000.0);
        let d = kept - side(recipe::WRITE, fs, false, 5_000.0);
        assert!((d[Term::Update] - 1.0).abs() < 0.01, "{fs:?} {d:?}");
        assert!(kept[Term::FirstUpdate] < 0.01, "{fs:?} {kept:?}");
    }
    // btrfs stores every write's time on both sides: the first update falls on the first
    // write, queried or not, and the question adds none.
    let d = side(recipe::FIRST, FsKind::Btrfs, true, 5_000.0)
        - side(recipe::FIRST, FsKind::Btrfs, false, 5_000.0);
    assert!(d[Term::FirstUpdate].abs() < 0.01, "{d:?}");
}

#[test]
fn the_first_update_is_priced_from_the_second_write_against_write_stats_write() {
    let r: Vec<_> = Recipe::of(Term::FirstUpdate).collect();
    assert_eq!(r.len(), 1);
    assert_eq!(
        (r[0].pair, r[0].against, r[0].part),
        (recipe::FIRST, Some(recipe::WRITE), Part::Tail)
    );
    assert!(r[0].needs.contains(&Term::Update));
    // The tail is the second write alone: the close and the unlink after it are not counted.
    let tail = recipe::FIRST.tail().unwrap();
    assert_eq!((tail.head, tail.ops()), (3, 1));
}
