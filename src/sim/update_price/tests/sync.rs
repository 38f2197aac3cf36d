//! The commit a full fsync forces: counted where the file's last timestamp store is not yet
//! committed (ext4, xfs), never for fdatasync, and priced by the write-stat-fsync pair.

use super::*;
use crate::price::Counts;

/// One side of write-stat-fsync on `fs`, as the model counts it at `ns` per iteration.
fn side(fs: FsKind, queried: bool, ns: f64) -> Counts {
    let (profile, pairs) = recorded();
    let model = model_of(&pairs[0]);
    let cfg = SimulateConfig::new(LoopSource::Scenario("write-stat".into()));
    let (costs, _) = costs::resolve_as_measured(model, Some(&profile), &cfg).unwrap();
    side_counts(model, costs, recipe::WRITE_FSYNC, fs, queried, ns, 1).unwrap()
}

#[test]
fn a_full_fsync_commits_what_the_question_stored_and_the_control_once_per_tick() {
    for fs in [FsKind::Ext4, FsKind::Xfs] {
        // 60 µs an iteration, as on a RAM-backed image: every queried write stores a fine
        // stamp and its fsync commits it; the control's write stores once per tick (4 ms
        // here), so about one fsync in 67 commits. scripts/fsync-commits counted 1.000 and
        // 0.017 commits per iteration on ext4 (0.020 on xfs) at that speed.
        let (q, c) = (side(fs, true, 60_000.0), side(fs, false, 60_000.0));
        assert!((q[Term::SyncCommit] - 1.0).abs() < 1e-9, "{fs:?} {q:?}");
        assert!(
            c[Term::SyncCommit] > 0.0 && c[Term::SyncCommit] < 0.05,
            "{fs:?} {c:?}"
        );
        assert_eq!(c[Term::SyncCommit], c[Term::Update], "{fs:?} {c:?}");
        // Slower than the tick, the control stores every time too: the question adds nothing.
        let slow = side(fs, true, 5e6) - side(fs, false, 5e6);
        assert!(slow[Term::SyncCommit].abs() < 1e-9, "{fs:?} {slow:?}");
    }
    // tmpfs and btrfs keep no journal the model follows.
    for fs in [FsKind::Tmpfs, FsKind::Btrfs] {
        assert_eq!(side(fs, true, 60_000.0)[Term::SyncCommit], 0.0, "{fs:?}");
    }
}

/// `ops` (syscall names) on one ext4 file, replayed 1000 times by the stock Linux model.
fn replayed(ops: &[&str]) -> crate::sim::replay::Stats {
    let (profile, pairs) = recorded();
    let model = model_of(&pairs[0]);
    let iteration: Vec<serde_json::Value> = ops
        .iter()
        .map(|s| serde_json::json!({ "syscall": s, "inode": "file", "fs": "ext4" }))
        .collect();
    let json = serde_json::json!({
        "schema_version": 1, "name": "sync", "description": "fsyncs", "iteration": iteration,
    });
    let scenario = crate::trace::Scenario::from_json(&json.to_string(), "a test").unwrap();
    let compiled = scenario.compile();
    let cfg = SimulateConfig::new(LoopSource::Scenario("write-stat".into()));
    let (costs, _) = costs::resolve_as_measured(model, Some(&profile), &cfg).unwrap();
    let stock = &model.policies()[0];
    estimate::replay(&model.table(), stock, costs, &compiled, 60_000.0, 1000)
}

#[test]
fn fdatasync_commits_no_timestamp_and_one_commit_carries_every_store() {
    // fdatasync waits for what reading the data needs: a stamp alone forces nothing, the
    // first data of the file (its blocks and size, allocated at writeback) one commit.
    let s = replayed(&["write", "stat", "fdatasync"]);
    assert!(s.updates >= 999, "{s:?}");
    assert_eq!(s.sync_commits, 1, "{s:?}");
    // Two fsyncs after one store: the first commits it, the second finds nothing open.
    let s = replayed(&["write", "stat", "fsync", "fsync"]);
    assert_eq!(s.sync_commits, 1000, "{s:?}");
    // A new file's first data commits at its sync whatever was asked (git's objects and lock
    // files: create, write, fsync): the question adds no commit there, as the kernel's
    // journal count said (0.000 per pass of a git cycle with core.fsync=all on ext4).
    for sync in ["fsync", "fdatasync"] {
        let (asked, not) = (
            replayed(&["create", "write", "stat", sync, "close", "unlink"]),
            replayed(&["create", "write", "stat_no_times", sync, "close", "unlink"]),
        );
        assert_eq!(
            (asked.sync_commits, not.sync_commits),
            (1000, 1000),
            "{sync}"
        );
    }
    // The strace importer keeps the two apart.
    assert_eq!(
        crate::trace::Syscall::parse("fdatasync"),
        Some(crate::trace::Syscall::Fdatasync)
    );
    assert_eq!(
        crate::trace::Syscall::parse("syncfs"),
        Some(crate::trace::Syscall::Fsync)
    );
}
