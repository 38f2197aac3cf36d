use super::*;

fn action(os: Os, s: Syscall, fs: FsKind) -> super::super::Action {
    rule(os, s, fs).action
}
const OLD: Os = Os::FreeBsd(Version::new(12, 4));
const NEW: Os = Os::FreeBsd(Version::new(14, 3));

#[test]
fn freebsd_pipes_moved_from_vfs_timestamp_to_getnanotime() {
    assert!(matches!(
        action(OLD, Syscall::Read, FsKind::Pipefs)[0],
        Effect::VfsTimestamp { .. }
    ));
    let getnanotime = Effect::Fixed {
        clock: ClockFn::Getnanotime,
        target: Target::Inode,
        modify: true,
    };
    assert_eq!(action(NEW, Syscall::Write, FsKind::Pipefs)[0], getnanotime);
    assert_eq!(
        action(Os::NetBsd, Syscall::Write, FsKind::Pipefs)[0],
        getnanotime
    );
    assert!(matches!(
        action(Os::DragonFly, Syscall::Write, FsKind::Pipefs)[0],
        Effect::VfsTimestamp { .. }
    ));
    assert_eq!(
        rule(NEW, Syscall::Read, FsKind::Pipefs).source.file,
        "sys/kern/sys_pipe.c"
    );
}

#[test]
fn netbsd_tmpfs_takes_no_time_at_a_same_size_truncate_or_chtimes() {
    assert_eq!(
        action(Os::NetBsd, Syscall::OpenTrunc, FsKind::Tmpfs),
        [Effect::None; 4]
    );
    assert_eq!(
        action(Os::NetBsd, Syscall::Utimens, FsKind::Tmpfs),
        [Effect::None; 4]
    );
    // FreeBSD tmpfs: no pending flag from the truncate, only setattr's flush.
    let a = action(NEW, Syscall::OpenTrunc, FsKind::Tmpfs);
    assert_eq!(
        a[0],
        Effect::Flush {
            target: Target::Inode
        }
    );
    assert_eq!(a[1], Effect::None);
}

#[test]
fn netbsd_tmpfs_vfsmix_counts_five_vfs_timestamps() {
    use Syscall::*;
    let seq = [
        Stat, Create, Stat, Lseek, Close, OpenTrunc, Write, Mmap, MmapStore, Munmap, Close, Unlink,
    ];
    let n: usize = seq
        .iter()
        .map(|&s| {
            action(Os::NetBsd, s, FsKind::Tmpfs)
                .iter()
                .filter(|e| matches!(e, Effect::VfsTimestamp { .. }))
                .count()
        })
        .sum();
    assert_eq!(n, 5);
}

#[test]
fn fifos_take_a_pipes_work_recalled() {
    for os in [OLD, NEW, Os::DragonFly, Os::NetBsd] {
        for (fifo, pipe) in [
            (Syscall::FifoWrite, Syscall::Write),
            (Syscall::FifoRead, Syscall::Read),
        ] {
            let p = rule(os, pipe, FsKind::Pipefs);
            for fs in FsKind::ALL {
                let f = rule(os, fifo, fs);
                assert_eq!(f.action, p.action, "{os:?} {fifo:?} {fs:?}");
                assert_eq!(f.source.status, "recalled");
                assert_eq!(
                    (f.source.repo, f.source.function),
                    (p.source.repo, p.source.function)
                );
            }
        }
    }
}

/// Every kernel the rows tell apart: FreeBSD where a row's versions start or end, and before.
fn probe_kernels() -> Vec<Os> {
    let mut v: Vec<Version> = rows()
        .flat_map(|r| r.kernels.iter())
        .flat_map(|k| match k {
            Kernel::FreeBsd(versions) => versions.bounds().collect(),
            _ => Vec::new(),
        })
        .collect();
    v.push(Version::new(0, 0));
    v.sort();
    v.dedup();
    let mut os: Vec<Os> = v.into_iter().map(Os::FreeBsd).collect();
    os.extend([Os::DragonFly, Os::NetBsd]);
    os
}

#[test]
fn the_tables_answer_every_call_and_every_row_is_reached() {
    let mut reached = vec![false; rows().count()];
    for os in probe_kernels() {
        for s in Syscall::ALL {
            for fs in FsKind::ALL {
                let first = rows()
                    .position(|r| r.kernels.iter().any(|k| k.holds(os)) && r.matches(s, fs))
                    .unwrap_or_else(|| panic!("no row for {os:?} {s:?} {fs:?}"));
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
        assert!(!r.kernels.is_empty(), "{r:?}");
        assert!(!r.syscalls.is_empty() && !r.filesystems.is_empty(), "{r:?}");
        let status = match r.source {
            Cite::At(s) => s.status,
            Cite::Deferred { status, .. } => status,
        };
        assert!(["read", "cited", "recalled"].contains(&status), "{r:?}");
    }
}
