use super::*;

fn action(v: (u16, u16), s: Syscall, fs: FsKind) -> super::super::Action {
    rule(Version::new(v.0, v.1), s, fs).action
}

#[test]
fn pipes_check_the_coarse_time_on_both_ends_before_6_15() {
    assert!(matches!(
        action((6, 12), Syscall::Write, FsKind::Pipefs)[0],
        Effect::LinuxUpdateIfChanged { modify: true, .. }
    ));
    assert!(matches!(
        action((6, 14), Syscall::Read, FsKind::Pipefs)[0],
        Effect::LinuxUpdateIfChanged { modify: false, .. }
    ));
    // tmpfs has no page_mkwrite: fault_dirty_shared_page() calls file_update_time().
    assert!(matches!(
        action((6, 18), Syscall::MmapStore, FsKind::Tmpfs)[0],
        Effect::LinuxUpdateIfChanged { modify: true, .. }
    ));
}

#[test]
fn a_changed_mtime_is_read_again_from_6_6_and_atime_always() {
    let reread = |v, s| match action(v, s, FsKind::Tmpfs)[0] {
        Effect::LinuxUpdateIfChanged { reread, .. } => reread,
        e => panic!("{e:?}"),
    };
    assert!(!reread((6, 1), Syscall::Write));
    assert!(reread((6, 6), Syscall::Write));
    assert!(reread((6, 1), Syscall::Read));
}

#[test]
fn tmpfs_unlink_evicts_and_o_trunc_reads_only_for_a_size_change() {
    let u = action((6, 1), Syscall::Unlink, FsKind::Tmpfs);
    assert_eq!(u[2], Effect::LinuxEvict);
    let t = action((6, 12), Syscall::OpenTrunc, FsKind::Tmpfs);
    assert!(matches!(t[0], Effect::LinuxNotifyChange { .. }));
    assert!(matches!(t[1], Effect::LinuxTruncateIfNonEmpty { .. }));
}

#[test]
fn btrfs_writes_without_file_update_time_and_reads_the_root_times() {
    // Before 6.13 update_time_for_write(): one read, never reread (even from 6.6).
    assert!(matches!(
        action((6, 12), Syscall::Write, FsKind::Btrfs)[0],
        Effect::LinuxUpdateIfChanged { reread: false, .. }
    ));
    assert!(matches!(
        action((6, 13), Syscall::Write, FsKind::Btrfs)[0],
        Effect::LinuxSetCtime {
            target: Target::Inode
        }
    ));
    let root_reads = |s| {
        action((6, 1), s, FsKind::Btrfs)
            .iter()
            .map(|e| match e {
                Effect::LinuxRootTimes { reads } => *reads,
                Effect::LinuxFlushOnClose => 1,
                _ => 0,
            })
            .sum::<u8>()
    };
    let vfsmix = [
        Syscall::Create,
        Syscall::OpenTrunc,
        Syscall::Close,
        Syscall::Unlink,
    ];
    assert_eq!(vfsmix.map(root_reads), [2, 2, 1, 2]);
    // xfs and ext4 keep their rules: no root item.
    assert!(!action((6, 1), Syscall::Create, FsKind::Xfs)
        .iter()
        .any(|e| matches!(e, Effect::LinuxRootTimes { .. })));
}

#[test]
fn anonymous_pipes_take_no_timestamp_from_6_15() {
    for v in [(6, 15), (6, 18), (7, 0)] {
        for s in [Syscall::Write, Syscall::Read] {
            assert_eq!(
                action(v, s, FsKind::Pipefs),
                [Effect::None; 4],
                "{v:?} {s:?}"
            );
        }
    }
    let r = rule(Version::new(6, 15), Syscall::Write, FsKind::Pipefs);
    assert_eq!(r.source.file, "fs/pipe.c");
    assert!(r.source.function.contains("anon_pipe_write"));
}

#[test]
fn fifos_keep_their_timestamps_on_every_version_and_file_system() {
    for v in [(6, 1), (6, 12), (6, 15), (7, 2)] {
        // What a pipe took before 6.15, whatever the file system's own write does.
        let pipe_before = if v >= (6, 15) { (6, 14) } else { v };
        for fs in [FsKind::Tmpfs, FsKind::Ext4, FsKind::Btrfs] {
            assert_eq!(
                action(v, Syscall::FifoWrite, fs),
                action(pipe_before, Syscall::Write, FsKind::Pipefs),
                "{v:?} {fs:?}"
            );
            assert_ne!(action(v, Syscall::FifoRead, fs), [Effect::None; 4]);
        }
    }
    let new = rule(Version::new(6, 15), Syscall::FifoWrite, FsKind::Tmpfs).source;
    assert_eq!(
        (new.file, new.function),
        ("fs/pipe.c", "fifo_pipe_write -> file_update_time")
    );
    assert!(new.at.contains("f017b0a4951f"));
    let old = rule(Version::new(6, 14), Syscall::FifoRead, FsKind::Tmpfs).source;
    assert_eq!(old.function, "pipe_read -> file_accessed");
}

/// The versions where some row starts or ends, and one before them all: every range of
/// versions the table tells apart has one of them.
fn probe_versions() -> Vec<Version> {
    let mut v: Vec<Version> = rows().flat_map(|r| r.kernels.bounds()).collect();
    v.push(Version::new(0, 0));
    v.sort();
    v.dedup();
    v
}

#[test]
fn the_table_answers_every_call_and_every_row_is_reached() {
    let mut reached = vec![false; rows().count()];
    for v in probe_versions() {
        for s in Syscall::ALL {
            for fs in FsKind::ALL {
                let first = rows()
                    .position(|r| r.kernels.contains(v) && r.matches(s, fs))
                    .unwrap_or_else(|| panic!("no row for {v} {s:?} {fs:?}"));
                reached[first] = true;
            }
        }
    }
    for (row, reached) in rows().zip(reached) {
        assert!(reached, "shadowed by the rows before it: {row:?}");
    }
}

#[test]
fn every_row_fits_an_action_and_says_how_it_was_checked() {
    for r in rows() {
        assert!(r.effects.len() <= 4, "{r:?}");
        assert!(!r.syscalls.is_empty() && !r.filesystems.is_empty(), "{r:?}");
        assert!(
            ["read", "recalled"].contains(&r.source.status),
            "{:?}",
            r.source
        );
        assert_eq!(r.source.repo, "torvalds/linux");
    }
}
