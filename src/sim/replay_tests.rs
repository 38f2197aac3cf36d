//! Replay semantics on hand-built traces: deferred BSD flags, Linux update dedup and the
//! multigrain floor.

use super::replay::{Costs, Replay, Stats};
use crate::kernel::{ModelId, Policy};
use crate::trace::{FsKind, Op, Syscall, NO_INODE};

const COSTS: Costs = Costs {
    precise_read_ns: 100.0,
    coarse_read_ns: 10.0,
    update_ns: 0.0,
    tick_ns: 1e6,
};

fn op(syscall: Syscall, inode: u32) -> Op {
    Op {
        syscall,
        fs: FsKind::Tmpfs,
        inode,
        dir: NO_INODE,
        task: 0,
        time_ns: None,
        ends_iteration: true,
    }
}

fn run(policy: &str, ops: &[Op]) -> Stats {
    let p = Policy::parse(policy).unwrap();
    let table = p.model.table();
    Replay::new(&table, p.kind, COSTS, 1000.0, 2).run(ops.iter().copied())
}

#[test]
fn freebsd_tmpfs_coalesces_writes_until_close() {
    let ops = [
        op(Syscall::Write, 0),
        op(Syscall::Write, 0),
        op(Syscall::Write, 0),
        op(Syscall::Close, 0),
        op(Syscall::Close, 0),
    ];
    let s = run("freebsd:3", &ops);
    // One nanotime at the first close; the second close finds nothing pending.
    assert_eq!(s.counter_reads(), 1);
    assert_eq!(s.modifications, 3);
    assert_eq!((s.successive_pairs, s.successive_equal), (2, 2));
    // Ops cost 1000 ns each (no reads until the close): the first write at 0 ns is stamped at
    // the close, 3000 ns later.
    assert_eq!(s.max_staleness_ns, 3.0 * 1000.0);
}

#[test]
fn linux_skips_the_update_within_a_tick() {
    let ops = [
        op(Syscall::Write, 0),
        op(Syscall::Write, 0),
        op(Syscall::Write, 0),
    ];
    let s = run("linux:coarse", &ops);
    // current_time each time, inode_set_ctime_current only the first time.
    assert_eq!(s.coarse_reads(), 4);
    assert_eq!(s.updates, 1);
    assert_eq!((s.successive_pairs, s.successive_equal), (2, 2));
}

#[test]
fn multigrain_floor_keeps_a_later_coarse_stamp_from_going_backwards() {
    // A is stat'ed, so its next write gets a fine-grained time t (and raises the floor); B is
    // not, so it gets a coarse time — but never below the floor: equal to t, not earlier.
    let ops = [
        op(Syscall::Write, 0),
        op(Syscall::Stat, 0),
        op(Syscall::Write, 0),
        op(Syscall::Write, 1),
    ];
    let s = run("linux-multigrain:multigrain", &ops);
    assert_eq!(s.counter_reads(), 2);
    // One pair of consecutive modifications across inodes: A's second write, then B's.
    assert_eq!(s.cross_pairs, 1);
    assert_eq!(s.cross_inverted, 0);
    assert_eq!(s.cross_equal, 1);
    // The old model name is an alias of linux@6.13, whose stock policy is multigrain.
    let alias = ModelId::parse("linux-multigrain").unwrap();
    assert_eq!(alias.label(), "linux@6.13");
    assert_eq!(alias.policies()[0].name(), "linux:multigrain");
    assert_eq!(
        ModelId::parse("linux@6.12").unwrap().policies()[0].name(),
        "linux:coarse"
    );
}
