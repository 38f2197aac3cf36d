//! Replay semantics on hand-built traces: deferred BSD flags, Linux update dedup and the
//! multigrain floor.

use super::{Costs, Replay, Stats};
use crate::kernel::{ModelId, Policy};
use crate::trace::{FsKind, Op, Syscall, NO_INODE};

const COSTS: Costs = Costs::reads(100.0, 10.0, 1e6);

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

#[test]
fn a_base_cost_per_position_sets_each_ops_time() {
    // FreeBSD tmpfs stamps three deferred writes at the close: the staleness of the first is
    // the time of the three writes, 10 + 20 + 30 ns by position.
    let mut w = op(Syscall::Write, 0);
    w.ends_iteration = false;
    let ops = [w, w, w, op(Syscall::Close, 0)];
    let p = Policy::parse("freebsd:3").unwrap();
    let table = p.model.table();
    let replay = |ops: &[Op]| {
        Replay::new(&table, p.kind, COSTS, 1000.0, 2)
            .with_base_by_position(vec![10.0, 20.0, 30.0, 940.0])
            .run(ops.iter().copied())
    };
    let s = replay(&ops);
    assert_eq!(s.max_staleness_ns, 60.0);
    assert_eq!(s.total_ns, 1000.0 + COSTS.precise_read_ns);
    // An op that ends an iteration sends the next back to position 0: ops that each end one
    // all cost position 0's 10 ns.
    let s = replay(&[
        op(Syscall::Write, 0),
        op(Syscall::Write, 0),
        op(Syscall::Close, 0),
    ]);
    assert_eq!(s.max_staleness_ns, 20.0);
}

/// vfsmix on a multigrain kernel (linux@6.15) at 2 ms per iteration and a 4 ms tick,
/// its base cost spread by `weights` (`None`: evenly): the fine reads per op.
fn vfsmix_fine_reads(weights: Option<Vec<f64>>) -> f64 {
    vfsmix_fine_reads_at(weights, None)
}

/// The same, each op's timestamps taken `stamp_at` into it.
fn vfsmix_fine_reads_at(weights: Option<Vec<f64>>, stamp_at: Option<Vec<Vec<f64>>>) -> f64 {
    vfsmix_reads(weights, stamp_at, None, "ktime_get_real_ts64_mg")
}

/// The same, the reads per op of `function`.
fn vfsmix_reads(
    weights: Option<Vec<f64>>,
    stamp_at: Option<Vec<Vec<f64>>>,
    coarse_lag_ns: Option<f64>,
    function: &str,
) -> f64 {
    let text = crate::trace::bundled::get("vfsmix").unwrap();
    let mut s = crate::trace::Scenario::from_json(text, "t")
        .unwrap()
        .compile();
    s.op_weights = weights;
    s.op_stamp_at = stamp_at;
    s.coarse_lag_ns = coarse_lag_ns;
    let model = ModelId::parse("linux@6.15").unwrap();
    let policy = &model.policies()[0];
    let costs = Costs {
        tick_ns: 4e6,
        ..COSTS
    };
    let st = crate::sim::estimate::replay(&model.table(), policy, costs, &s, 2e6, 20_000);
    let e = crate::sim::estimate::estimate(policy, &st, 1.0, 1, &costs);
    e.reads_per_op_by_function
        .get(function)
        .copied()
        .unwrap_or(0.0)
}

#[test]
fn the_tick_moves_inside_the_slow_syscalls() {
    // O_TRUNC (op 5) reads a fine time when the file's ctime was queried (lstat) and the
    // coarse clock has not moved since create (op 1) stamped it: one minus the chance that
    // the tick moves between the two, which is the time from create's start to O_TRUNC's
    // start over the tick.
    let fast_first = [
        1.0, 1.0, 1.0, 1.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0,
    ];
    let slow_first = [
        100.0, 100.0, 100.0, 100.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0,
    ];
    let expect = |w: &[f64]| {
        let share: f64 = w[..4].iter().sum::<f64>() / w.iter().sum::<f64>();
        1.0 - share * 2e6 / 4e6
    };
    let even = vfsmix_fine_reads(None);
    let fast = vfsmix_fine_reads(Some(fast_first.to_vec()));
    let slow = vfsmix_fine_reads(Some(slow_first.to_vec()));
    assert!((even - expect(&[1.0; 11])).abs() < 0.02, "{even}");
    assert!((fast - expect(&fast_first)).abs() < 0.02, "{fast}");
    assert!((slow - expect(&slow_first)).abs() < 0.02, "{slow}");
    // Equal weights are the even spread (to rounding of the op's time).
    assert!((vfsmix_fine_reads(Some(vec![3.0; 11])) - even).abs() < 1e-3);
}

#[test]
fn spread_ignores_weights_that_are_not_positive() {
    use crate::sim::estimate::spread;
    assert_eq!(spread(100.0, &[1.0, 3.0]), [25.0, 75.0]);
    assert_eq!(spread(100.0, &[-1.0, f64::NAN, 2.0]), [0.0, 0.0, 100.0]);
    assert!(spread(100.0, &[0.0, -1.0]).is_empty());
    assert!(spread(100.0, &[]).is_empty());
}

#[test]
fn a_stamp_offset_per_position_takes_the_timestamps_inside_the_op() {
    // As above, the close's flush now half-way through the close's 940 ns: the first
    // write's staleness is 60 + 470 ns; the loop's time is the same.
    let mut w = op(Syscall::Write, 0);
    w.ends_iteration = false;
    let ops = [w, w, w, op(Syscall::Close, 0)];
    let p = Policy::parse("freebsd:3").unwrap();
    let table = p.model.table();
    let replay = |at: Option<Vec<Vec<f64>>>| {
        let r = Replay::new(&table, p.kind, COSTS, 1000.0, 2)
            .with_base_by_position(vec![10.0, 20.0, 30.0, 940.0]);
        match at {
            Some(at) => r.with_stamp_at_by_position(at),
            None => r,
        }
        .run(ops.iter().copied())
    };
    let s = replay(Some(vec![vec![], vec![0.0], vec![0.0], vec![0.5]]));
    assert_eq!(s.max_staleness_ns, 530.0);
    assert_eq!(s.total_ns, 1000.0 + COSTS.precise_read_ns);
    // Offsets of 0, or none, are the op's start: the replay without the option.
    let plain = replay(None);
    assert_eq!(plain.max_staleness_ns, 60.0);
    assert_eq!(replay(Some(vec![vec![0.0]; 4])), plain);
    assert_eq!(replay(Some(Vec::new())), plain);
    // Without a base cost per position there are no positions: nothing moves.
    let even = |at: Vec<Vec<f64>>| {
        Replay::new(&table, p.kind, COSTS, 250.0, 2)
            .with_stamp_at_by_position(at)
            .run(ops.iter().copied())
    };
    assert_eq!(even(vec![vec![1.0]; 4]), even(Vec::new()));
}

#[test]
fn a_create_that_stamps_later_leaves_less_time_for_the_tick_to_move() {
    // The multigrain fine read of O_TRUNC (op 5) is taken when the tick has not moved since
    // the create (op 1) stamped the ctime: the later in the create its stamp, the shorter the
    // time in between, the more fine reads; at offset 0 it is the replay without offsets.
    let slow_first = [
        100.0, 100.0, 100.0, 100.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0,
    ];
    let fine_at = |f: f64| {
        let mut at = vec![Vec::new(); 11];
        at[0] = vec![f];
        vfsmix_fine_reads_at(Some(slow_first.to_vec()), Some(at))
    };
    let start = vfsmix_fine_reads_at(Some(slow_first.to_vec()), None);
    assert_eq!(fine_at(0.0), start);
    let (half, end) = (fine_at(0.5), fine_at(1.0));
    assert!(start < half && half < end, "{start} {half} {end}");
    // At most the whole create's share of a tick (100 of 407 of 2 ms, over 4 ms) more.
    assert!(end - start > 0.05 && end - start <= 100.0 / 407.0 * 0.5 + 0.02);
}

#[test]
fn each_timestamp_of_an_op_has_its_own_place() {
    // vfsmix's O_TRUNC on a multigrain kernel takes two timestamps: notify_change()'s
    // current_time() (a plain fine read when the ctime was queried and the tick has not moved
    // since the create) and setattr_copy_mgtime()'s inode_set_ctime_current() (the _mg fine
    // read, same test). Both at one place: as many of each. The second at the end of a long
    // O_TRUNC: the tick moves in between in some ops, and the second takes fewer.
    let mut w = vec![1.0; 11];
    w[4] = 400.0;
    let reads = |at4: Vec<f64>, f: &str| {
        let mut at = vec![Vec::new(); 11];
        at[4] = at4;
        vfsmix_reads(Some(w.clone()), Some(at), None, f)
    };
    let (plain, mg) = ("ktime_get_real_ts64", "ktime_get_real_ts64_mg");
    assert!((reads(vec![0.0, 0.0], plain) - reads(vec![0.0, 0.0], mg)).abs() < 1e-9);
    let (p, m) = (reads(vec![0.0, 1.0], plain), reads(vec![0.0, 1.0], mg));
    // Between the two: O_TRUNC's 400 of 410 of 2 ms, over a 4 ms tick.
    assert!((p - m - 400.0 / 410.0 * 0.5).abs() < 0.03, "{p} {m}");
    // One entry stands for every stamp of the op.
    assert_eq!(reads(vec![0.5], mg), reads(vec![0.5, 0.5, 0.5], mg));
}

#[test]
fn a_coarse_clock_that_lags_by_more_than_an_iteration_never_passes_the_floor() {
    // Multigrain: O_TRUNC's fine read raises the floor to the time; the coarse clock shows
    // later ticks lag_ns before the tick. Lagging more than an iteration (2 ms), a tick's
    // value is never after the previous iteration's fine stamp: every O_TRUNC sees no change
    // and reads the fine clock, and the writes after it never reread.
    let reads = |lag: Option<f64>, f: &str| vfsmix_reads(None, None, lag, f);
    let (fine, coarse) = ("ktime_get_real_ts64_mg", "ktime_get_coarse_real_ts64_mg");
    assert!(reads(None, fine) < 0.9, "{}", reads(None, fine));
    assert_eq!(reads(Some(3e6), fine), 1.0);
    assert_eq!(reads(Some(0.0), fine), reads(None, fine));
    assert!(reads(Some(3e6), coarse) < reads(None, coarse));
    assert_eq!(reads(Some(3e6), coarse), reads(Some(3e6), coarse).round());
    // Before multigrain (linux@6.12 reads only the coarse clock): a lag changes nothing.
    let model = ModelId::parse("linux@6.12").unwrap();
    let (table, p) = (model.table(), &model.policies()[0]);
    let text = crate::trace::bundled::get("vfsmix").unwrap();
    let s = crate::trace::Scenario::from_json(text, "t")
        .unwrap()
        .compile();
    let run = |lag: f64| {
        Replay::new(&table, p.kind, COSTS, 2e5, s.inodes)
            .with_coarse_lag(lag)
            .run(s.stream(2_000))
            .reads
    };
    assert_eq!(run(0.0), run(3e6));
}
