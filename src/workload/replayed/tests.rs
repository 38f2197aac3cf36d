use super::*;

fn op(syscall: Syscall, inode: u32, dir: u32) -> Op {
    Op {
        syscall,
        fs: FsKind::Ext4,
        inode,
        dir,
        task: 7,
        time_ns: None,
        ends_iteration: false,
    }
}

/// Every op of two passes is possible from the loop's initial state: the loop repeats.
fn repeats(l: &LiveLoop) {
    let mut st = initial_state(&l.initial);
    for pass in 0..2 {
        for (k, op) in l.ops.iter().enumerate() {
            let n = op.node as usize;
            assert!(
                step(&mut st[n], *op, l.dirs[n]),
                "pass {pass}, op {k}: {op:?}"
            );
        }
    }
}

#[test]
fn a_create_to_unlink_loop_is_kept_as_it_is() {
    let ops = [
        op(Syscall::Create, 1, 0),
        op(Syscall::Write, 1, NO_INODE),
        op(Syscall::Stat, 1, NO_INODE),
        op(Syscall::Close, 1, NO_INODE),
        op(Syscall::Unlink, 1, 0),
    ];
    let l = LiveLoop::from_ops("t", &ops).unwrap();
    let calls: Vec<Syscall> = l.ops.iter().map(|o| o.syscall).collect();
    assert_eq!(calls, ops.iter().map(|o| o.syscall).collect::<Vec<_>>());
    // Inode 0 is named only as a parent: the scratch directory. Inode 1 is a file, absent
    // before the loop.
    assert_eq!(l.dirs, vec![true, false]);
    assert_eq!(l.initial, vec![true, false]);
    assert!(l.ops.iter().all(|o| o.node == 1));
    assert_eq!((l.kept, l.appended, l.stats()), (5, 0, 1));
    assert!(l.left_out.is_empty());
    repeats(&l);
}

#[test]
fn what_a_pass_leaves_different_is_put_back_at_its_end() {
    let ops = [
        // A file that exists before (its first call is a stat), removed by the program.
        op(Syscall::Stat, 5, NO_INODE),
        op(Syscall::Unlink, 5, 9),
        // A file created, written, kept and left open.
        op(Syscall::Create, 6, 9),
        op(Syscall::Write, 6, NO_INODE),
        // A directory made and kept.
        op(Syscall::Mkdir, 7, 9),
    ];
    let l = LiveLoop::from_ops("t", &ops).unwrap();
    let tail: Vec<(Syscall, u32)> = l.ops[5..].iter().map(|o| (o.syscall, o.node)).collect();
    // Nodes: 0 root (inode 9), 1 = inode 5, 2 = inode 6, 3 = inode 7.
    assert_eq!(
        tail,
        vec![
            (Syscall::Create, 1),
            (Syscall::Close, 1),
            (Syscall::Close, 2),
            (Syscall::Unlink, 2),
            (Syscall::Rmdir, 3),
        ]
    );
    assert_eq!(l.initial, vec![true, true, false, false]);
    assert_eq!(l.dirs, vec![true, false, false, true]);
    assert_eq!(l.appended, 5);
    repeats(&l);
}

#[test]
fn impossible_calls_mappings_and_pipes_are_left_out_and_counted() {
    let mut pipe = op(Syscall::Write, 3, NO_INODE);
    pipe.fs = FsKind::Pipefs;
    let ops = [
        op(Syscall::Create, 1, 0),
        op(Syscall::Close, 1, NO_INODE),
        op(Syscall::Unlink, 1, 0),
        // Read after the last name went and no descriptor is open: impossible.
        op(Syscall::Read, 1, NO_INODE),
        op(Syscall::Close, 1, NO_INODE),
        op(Syscall::Mmap, 2, NO_INODE),
        op(Syscall::Other, NO_INODE, NO_INODE),
        pipe,
    ];
    let l = LiveLoop::from_ops("t", &ops).unwrap();
    assert_eq!(l.len(), 3);
    assert_eq!(l.left_out.get("impossible"), Some(&2));
    assert_eq!(l.left_out.get("mmap"), Some(&1));
    assert_eq!(l.left_out.get("write on a pipe"), Some(&1));
    assert!(!l.left_out.contains_key("other"));
    repeats(&l);
}

#[test]
fn a_recording_without_file_calls_is_refused() {
    let e = LiveLoop::from_ops("t", &[op(Syscall::Mmap, 1, NO_INODE)]).unwrap_err();
    assert!(e.to_string().contains("no file calls"), "{e}");
}

#[test]
fn the_models_loop_differs_between_the_sides_only_in_the_stats() {
    let ops = [
        op(Syscall::Open, 4, NO_INODE),
        op(Syscall::Write, 4, NO_INODE),
        op(Syscall::Close, 4, NO_INODE),
        op(Syscall::Stat, 4, NO_INODE),
        op(Syscall::Link, 4, 8),
        op(Syscall::Unlink, 4, 8),
        op(Syscall::Readdir, 8, NO_INODE),
    ];
    let l = LiveLoop::from_ops("t", &ops).unwrap();
    let q = l.scenario(FsKind::Xfs, true);
    let c = l.scenario(FsKind::Xfs, false);
    assert_eq!(q.ops.len(), c.ops.len());
    assert_eq!(q.inodes, 2);
    for (a, b) in q.ops.iter().zip(&c.ops) {
        assert_eq!(a.fs, FsKind::Xfs);
        assert_eq!((a.inode, a.dir), (b.inode, b.dir));
        match a.syscall {
            Syscall::Stat => assert_eq!(b.syscall, Syscall::StatNoTimes),
            s => assert_eq!(b.syscall, s),
        }
        let namespace = matches!(a.syscall, Syscall::Link | Syscall::Unlink);
        assert_eq!(a.dir, if namespace { ROOT } else { NO_INODE });
        assert_eq!(a.task, 0);
    }
    // The readdir of the parent is the scratch directory's.
    assert_eq!(q.ops[6].inode, ROOT);
    assert!(q.ops.last().unwrap().ends_iteration);
    assert_eq!(q.ops.iter().filter(|o| o.ends_iteration).count(), 1);
    repeats(&l);
}
