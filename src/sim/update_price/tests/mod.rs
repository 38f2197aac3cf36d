//! The update price's arithmetic on pairs recorded on this project's machine (AMD EPYC KVM
//! guest, Linux 6.18, 1 GiB loop images), with the profile recorded in the same run.

use super::*;
use crate::kernel::ClockFn;
use crate::price::{recipe, solve, Costs, Term, TermPrice};
use crate::probe::Profile;
use crate::sim::config::{LoopSource, SimulateConfig};
use crate::sim::costs::profile_by_fs;
use crate::sim::{costs, estimate};
use crate::trace::FsKind;
use crate::workload::pair::PairResult;

/// The query's price from `chmod` alone (its one recipe that runs).
fn chmod_query(
    model: crate::kernel::ModelId,
    costs: Costs,
    chmod: &PairResult,
) -> Option<crate::stats::Estimate> {
    solve(model, costs, &[chmod], |p, part| {
        pair_delta_in(model, costs, p, part)
    })
    .price(Term::Query)
}

fn recorded() -> (Profile, Vec<PairResult>) {
    let profile: Profile =
        serde_json::from_str(include_str!("../../../../tests/data/profile-kvm-amd.json")).unwrap();
    let v: serde_json::Value =
        serde_json::from_str(include_str!("../../../../tests/data/update-pairs-amd.json")).unwrap();
    let pairs = serde_json::from_value(v["pairs"].clone()).unwrap();
    (profile, pairs)
}

fn pair<'a>(pairs: &'a [PairResult], dir_ends: &str) -> &'a PairResult {
    pairs.iter().find(|p| p.dir.ends_with(dir_ends)).unwrap()
}

#[test]
fn the_price_is_the_pair_less_the_model_reads_over_its_updates() {
    let (profile, pairs) = recorded();
    for p in pairs.iter().filter(|p| p.fs_type != "btrfs") {
        let f = price(&[p], &profile);
        let (dr, du) = (f.reads_delta_ns.unwrap(), f.updates_delta.unwrap());
        // linux@6.18, multigrain: a queried write reads the fine clock twice more than a
        // coarse one, and stores once; the control stores once per tick only.
        assert!((du - 1.0).abs() < 0.01, "{}: {du}", p.dir);
        let precise = profile.derived.precise_read_ns.unwrap().point;
        assert!(dr > 1.5 * precise && dr < 2.5 * precise, "{}: {dr}", p.dir);
        let u = f.price(Term::Update).unwrap();
        assert!(((p.delta_ns.point - dr) / du - u.point).abs() < 1e-9);
        assert!(u.lower <= u.point && u.point <= u.upper);
        assert!(
            f.multigrain && f.reason.contains("live pair"),
            "{}",
            f.reason
        );
    }
    // The journal and the log are most of it: ext4 and xfs above 3× tmpfs's.
    let at = |d| {
        price(&[pair(&pairs, d)], &profile)
            .price(Term::Update)
            .unwrap()
            .point
    };
    assert!(at("m-ext4") > 3.0 * at("/dev/shm"));
    assert!(at("m-xfs") > 3.0 * at("/dev/shm"));
    // Without a journal, ext4's update costs less than with one.
    assert!(at("m-ext4-nojournal") < at("m-ext4"));
}

#[test]
fn a_kernel_without_multigrain_prices_nothing_and_says_why() {
    let (profile, pairs) = recorded();
    let mut p = pair(&pairs, "m-ext4").clone();
    p.kernel_release = Some("6.12.57+deb13-cloud-amd64".into());
    p.multigrain_expected = false;
    p.multigrain_observed = false;
    p.check = Some(crate::workload::pair::equal_sides_check(
        p.delta_ns,
        p.control_ns,
    ));
    let f = price(&[&p], &profile);
    assert!(f.price(Term::Update).is_none());
    assert_eq!(f.model.as_deref(), Some("linux@6.12"));
    assert!(f.reason.contains("no multigrain") && f.reason.contains("NOT equal"));
}

#[test]
fn simulate_prices_each_update_on_its_filesystem_and_holds_to_three_writes_per_query() {
    let (mut profile, pairs) = recorded();
    profile.filesystems = pairs.iter().map(|p| price(&[p], &profile)).collect();
    let (update, src) = profile_by_fs(Some(&profile), Term::Update);
    let by_fs = update.by_fs;
    assert!(by_fs[FsKind::Ext4 as usize].is_some() && by_fs[FsKind::Other as usize].is_none());
    assert!(src.contains("live pair"), "{src}");
    // The first ext4 entry wins (the plain mount, not lazytime's or nojournal's).
    let ext4 = pair(&pairs, "m-ext4");
    let first = for_fs(&profile, FsKind::Ext4).unwrap();
    assert_eq!(first.dir, ext4.dir);
    // One write per query is the calibration: the model gives the pair's Δ back. Three writes
    // per query: the model says the second and third writes find the floor and skip the
    // update, so the Δ per iteration stays that of one update and one fine read.
    let model = model_of(ext4);
    let cfg = SimulateConfig::new(LoopSource::Scenario("write-stat".into()));
    let (costs, _) = costs::resolve(model, Some(&profile), &cfg).unwrap();
    let delta = |writes| {
        let s = pattern_scenario(Pattern::Write { writes }, FsKind::Ext4, true)
            .unwrap()
            .compile();
        let e = estimate::estimates(model, costs, &s, 1000.0 * writes as f64, 100_000);
        let ns = |name: &str| {
            e.iter()
                .find(|x| x.policy.ends_with(name))
                .unwrap()
                .ns_per_op
        };
        ns(":multigrain") - ns(":coarse")
    };
    let d1 = delta(1);
    assert!(
        (d1 - ext4.delta_ns.point).abs() < 0.05 * ext4.delta_ns.point,
        "{d1}"
    );
    assert!((delta(3) - d1).abs() < 0.05 * d1);
}

/// A `probe --dir` profile recorded on this project's machine (AMD EPYC KVM guest, Linux
/// 6.18): tmpfs, then 1 GiB loop images of ext4, xfs and btrfs, each with its write-stat and
/// chmod-stat pairs.
fn priced() -> Profile {
    serde_json::from_str(include_str!(
        "../../../../tests/data/update-priced-amd.json"
    ))
    .unwrap()
}

/// [`priced`], priced again by this build from its recorded pairs.
fn repriced() -> Profile {
    let mut profile = priced();
    profile.filesystems = profile
        .filesystems
        .iter()
        .map(|f| {
            let pairs = [f.pair.as_ref().unwrap(), f.query_pair.as_ref().unwrap()];
            price(&pairs, &profile)
        })
        .collect();
    profile
}

#[test]
fn the_query_is_priced_apart_and_the_update_is_what_remains() {
    let profile = priced();
    assert_eq!(profile.filesystems.len(), 4);
    for (f, again) in profile.filesystems.iter().zip(repriced().filesystems) {
        let (w, c) = (f.pair.as_ref().unwrap(), f.query_pair.as_ref().unwrap());
        assert_eq!(c.pattern, Pattern::Chmod);
        // chmod-stat: the inode is stored on both sides, so the model's Δ is its reads (two
        // fine reads: notify_change's current_time finds no apparent change, then
        // inode_set_ctime_current) and one query.
        let model = model_of(c);
        let cfg = SimulateConfig::new(LoopSource::Scenario("write-stat".into()));
        let (costs, _) = costs::resolve_as_measured(model, Some(&profile), &cfg).unwrap();
        let side =
            |queried, ns| side_counts(model, costs, Pattern::Chmod, c.fs_kind(), queried, ns, 1);
        let d = side(true, c.queried_ns.point).unwrap() - side(false, c.control_ns.point).unwrap();
        assert!(
            d[Term::Update].abs() < 0.01 && (d[Term::Query] - 1.0).abs() < 0.01,
            "{d:?}"
        );
        let precise = profile.derived.precise_read_ns.unwrap().point;
        assert!((d.reads_ns - 2.0 * precise).abs() < 0.1 * precise, "{d:?}");
        let chmod = chmod_query(model, costs, c).unwrap();
        assert!((chmod.point - (c.delta_ns.point - d.reads_ns)).abs() < 1e-9);
        assert!(
            chmod.lower <= chmod.point && chmod.point <= chmod.upper && chmod.lower > 0.0,
            "{chmod:?}"
        );
        let q = again.price(Term::Query).unwrap();
        if f.fs_type == "btrfs" {
            // The question adds no update to btrfs's write, so write-stat prices the query:
            // its Δ less its reads, over its queries; chmod-stat's price is said.
            assert_eq!(again.query_pattern.as_deref(), Some("write-stat"));
            let (dr, dq) = (again.reads_delta_ns.unwrap(), again.queries_delta.unwrap());
            assert!((q.point - (w.delta_ns.point - dr) / dq).abs() < 1e-9);
            assert!(again.price(Term::Update).is_none());
            assert!(
                again.reason.contains("chmod-stat would price it"),
                "{}",
                again.reason
            );
            continue;
        }
        assert_eq!(again.query_pattern.as_deref(), Some("chmod-stat"));
        // The same price as when the profile was probed, up to the replay's span (the model
        // now replays each loop for a span of its time, not a fixed count of iterations).
        let was = f.price(Term::Query).unwrap();
        for (a, b) in [
            (q.point, was.point),
            (q.lower, was.lower),
            (q.upper, was.upper),
        ] {
            assert!((a - b).abs() < 0.05, "{}: {q:?} against {was:?}", f.dir);
        }
        // The same point as when the profile was probed; the interval now adds the query's
        // and the write pair's errors in quadrature, inside the worst case the profile holds.
        let (u0, u1) = (
            f.price(Term::Update).unwrap(),
            again.price(Term::Update).unwrap(),
        );
        assert!(
            (u0.point - u1.point).abs() < 0.05,
            "{}: {u0:?} {u1:?}",
            f.dir
        );
        assert!(
            u0.lower <= u1.lower + 0.05 && u1.upper <= u0.upper + 0.05,
            "{u0:?} {u1:?}"
        );
        let u = f.price(Term::Update).unwrap();
        let (dr, dq) = (f.reads_delta_ns.unwrap(), f.queries_delta.unwrap());
        let du = f.updates_delta.unwrap();
        assert!((u.point - (w.delta_ns.point - dr - dq * was.point) / du).abs() < 1e-6);
        // The query's interval widens the update's.
        assert!(u.upper - u.lower >= w.delta_ns.upper - w.delta_ns.lower - 1e-9);
        assert!(f.reason.contains("chmod-stat"), "{}", f.reason);
    }
    // Without its chmod-stat pair the update holds the query's work, and says so.
    let ext4 = &profile.filesystems[1];
    let alone = price(&[ext4.pair.as_ref().unwrap()], &profile);
    assert!(alone.price(Term::Query).is_none());
    let diff = alone.price(Term::Update).unwrap().point - ext4.price(Term::Update).unwrap().point;
    let dq = ext4.queries_delta.unwrap() / ext4.updates_delta.unwrap();
    assert!((diff - dq * ext4.price(Term::Query).unwrap().point).abs() < 0.05);
    assert!(
        alone.reason.contains("no chmod-stat pair"),
        "{}",
        alone.reason
    );
}

#[test]
fn tasks_share_the_multigrain_floor_as_the_kernel_counts() {
    // Two tasks in step, each writing and stat'ing its own file: a task whose queried ctime
    // the other's fine stamp has passed takes the floor's time without a fine read, so the
    // two take turns. The live kernel's multigrain_timestamps counted 0.52–0.57 fine stamps
    // per task's iteration on tmpfs, ext4, xfs and btrfs (scripts/update-figures), where
    // independent copies would take 1.
    let (profile, pairs) = recorded();
    let w = pairs.iter().find(|p| p.fs_type == "tmpfs").unwrap();
    let model = model_of(w);
    let cfg = SimulateConfig::new(LoopSource::Scenario("write-stat".into()));
    let (costs, _) = costs::resolve_as_measured(model, Some(&profile), &cfg).unwrap();
    let write = Pattern::Write { writes: 1 };
    let side = |queried, tasks| {
        side_counts(model, costs, write, FsKind::Tmpfs, queried, 1300.0, tasks).unwrap()
    };
    let one = side(true, 1) - side(false, 1);
    let two = side(true, 2) - side(false, 2);
    assert!((one.fine_stamps - 1.0).abs() < 0.01, "{one:?}");
    assert!((two.fine_stamps - 0.5).abs() < 0.05, "{two:?}");
    // Every task's ctime still moves: the update is each task's own.
    assert!((two[Term::Update] - 1.0).abs() < 0.01, "{two:?}");
    assert!(two.reads_ns < 0.75 * one.reads_ns, "{one:?} {two:?}");
}

/// A profile probed with `--dir /dev/shm --dir <ext4 loop image>`: every filesystem with its
/// write-stat, chmod-stat and chmod-stat-read16 pairs.
fn floored() -> Profile {
    serde_json::from_str(include_str!("../../../../tests/data/update-floor-amd.json")).unwrap()
}

#[test]
fn a_floored_read_is_priced_from_the_reads_after_the_query_and_left_out_of_the_others() {
    let profile = floored();
    assert_eq!(profile.filesystems.len(), 2);
    for f in &profile.filesystems {
        let (w, q, r) = (
            f.pair.as_ref().unwrap(),
            f.query_pair.as_ref().unwrap(),
            f.floor_pair.as_ref().unwrap(),
        );
        assert_eq!(r.pattern, recipe::FLOOR);
        let model = model_of(w);
        let cfg = SimulateConfig::new(LoopSource::Scenario("write-stat".into()));
        let costs = costs::resolve_as_measured(model, Some(&profile), &cfg)
            .unwrap()
            .0
            .reads_only();
        // The model: each of the 16 reads returns the floor after the queried side's fine
        // stamp, none on the control; the chmod and the statx alike on both pairs.
        let d = |p: &PairResult| pair_sides(model, costs, p).map(|(a, b)| a - b).unwrap();
        let (dr, dq) = (d(r), d(q));
        // (Less the iterations that a tick ends before their reads.)
        assert!(
            (dr[Term::FloorRead] - dq[Term::FloorRead] - 16.0).abs() < 0.1,
            "{dr:?} {dq:?}"
        );
        assert!((dr.fine_stamps - dq.fine_stamps).abs() < 0.01);
        let again = price(&[w, q, r], &profile);
        let fl = again.price(Term::FloorRead).unwrap();
        let by_hand = (r.delta_ns.point - q.delta_ns.point - (dr.reads_ns - dq.reads_ns))
            / (dr[Term::FloorRead] - dq[Term::FloorRead]);
        assert!((fl.point - by_hand).abs() < 1e-9, "{} {by_hand}", fl.point);
        assert!(fl.lower <= fl.point && fl.point <= fl.upper);
        assert!(fl.point > 0.0, "{}: {fl:?}", f.fs_type);
        assert!(
            again.reason.contains("returns the floor"),
            "{}",
            again.reason
        );
        // The query's and the update's prices leave out the floored reads they hold: the
        // queried chmod-stat and write-stat sides each take the floor (write-stat twice:
        // current_time() and inode_set_ctime_current()), the controls never.
        let without = price(&[w, q], &profile_without_floor(&profile));
        let (qs, qc) = pair_sides(model, costs, q).unwrap();
        assert!(
            qs[Term::FloorRead] >= 0.99 && qc[Term::FloorRead] < 0.01,
            "{qs:?} {qc:?}"
        );
        let (ws, wc) = pair_sides(model, costs, w).unwrap();
        assert!(
            (ws[Term::FloorRead] - 2.0).abs() < 0.01 && wc[Term::FloorRead] < 0.01,
            "{ws:?} {wc:?}"
        );
        let dq_price =
            without.price(Term::Query).unwrap().point - again.price(Term::Query).unwrap().point;
        assert!((dq_price - (qs[Term::FloorRead] - qc[Term::FloorRead]) * fl.point).abs() < 1e-6);
    }
}

fn profile_without_floor(p: &Profile) -> Profile {
    let mut p = p.clone();
    for f in &mut p.filesystems {
        f.prices.set(Term::FloorRead, None);
        f.floor_pair = None;
    }
    p
}

#[test]
fn each_write_after_a_fine_stamp_takes_the_floor() {
    let profile = floored();
    let w = profile.filesystems[0].pair.as_ref().unwrap();
    let model = model_of(w);
    let cfg = SimulateConfig::new(LoopSource::Scenario("write-stat".into()));
    let costs = costs::resolve_as_measured(model, Some(&profile), &cfg)
        .unwrap()
        .0;
    let floor = costs.on(Term::FloorRead, w.fs_kind());
    assert!(floor > 0.0);
    for writes in [1, 3, 4] {
        let side = |queried| {
            side_counts(
                model,
                costs,
                Pattern::Write { writes },
                FsKind::Tmpfs,
                queried,
                w.queried_ns.point,
                1,
            )
            .unwrap()
        };
        let (q, c) = (side(true), side(false));
        // The first write's current_time() and inode_set_ctime_current(), and each later
        // write's current_time(): all return the floor of the fine stamp.
        assert!(
            (q[Term::FloorRead] - f64::from(writes + 1)).abs() < 0.01,
            "{writes}: {q:?}"
        );
        assert!(c[Term::FloorRead] < 0.01);
        // Each floored read costs the floor's price in the replay.
        let sc = pattern_scenario(Pattern::Write { writes }, FsKind::Tmpfs, true)
            .unwrap()
            .compile();
        let st = |c: Costs| {
            let r = estimate::replay(&model.table(), &model.policies()[0], c, &sc, 1000.0, 20_000);
            (r.timestamp_ns, r.floored_reads as f64)
        };
        let only_floor = costs
            .reads_only()
            .with(Term::FloorRead, *costs.term(Term::FloorRead));
        let ((a, n), (b, _)) = (st(only_floor), st(costs.reads_only()));
        // (The replay's base is fixed, so the dearer reads move a few ticks' edges.)
        assert!(
            (a - b - n * floor).abs() < 1e-3 * (a - b),
            "{a} {b} {n} {floor}"
        );
    }
}

#[test]
fn the_replay_by_position_puts_each_fine_stamp_on_its_call() {
    let profile = floored();
    let w = profile.filesystems[0].pair.as_ref().unwrap();
    let model = model_of(w);
    let stock = &model.policies()[0];
    let costs = Costs::reads(20.0, 5.0, 4e6);
    let sc = pattern_scenario(Pattern::Write { writes: 2 }, FsKind::Tmpfs, true)
        .unwrap()
        .compile();
    let by = estimate::replay_by_position(
        &model.table(),
        stock,
        costs,
        &sc,
        1000.0,
        10_000,
        ClockFn::LinuxFineMg,
    );
    // write, write, stat: the first write after the query takes the fine stamp and stores it;
    // the second finds the floor; the stat takes none.
    assert_eq!(by.len(), 3);
    assert!(
        (by[0].0 - 1.0).abs() < 0.01 && (by[0].1 - 1.0).abs() < 0.01,
        "{by:?}"
    );
    assert!(by[1].0 < 0.01 && by[1].1 < 0.01, "{by:?}");
    assert!(by[2].0 < 0.01 && by[2].1 < 0.01, "{by:?}");
    let all = estimate::replay(&model.table(), stock, costs, &sc, 1000.0, 10_000);
    let total: f64 = by.iter().map(|b| b.0).sum();
    assert!((total - all.reads[ClockFn::LinuxFineMg as usize] as f64 / 10_000.0).abs() < 1e-9);
}

#[test]
fn the_replay_by_position_puts_each_atime_store_on_its_read() {
    let profile = floored();
    let w = profile.filesystems[0].pair.as_ref().unwrap();
    let model = model_of(w);
    let stock = &model.policies()[0];
    let costs = Costs::reads(20.0, 5.0, 4e6);
    let by = |queried: bool| {
        let sc = pattern_scenario(Pattern::WriteRead, FsKind::Tmpfs, queried)
            .unwrap()
            .compile();
        estimate::replay_by_position(
            &model.table(),
            stock,
            costs,
            &sc,
            1000.0,
            10_000,
            ClockFn::LinuxFineMg,
        )
    };
    let (q, c) = (by(true), by(false));
    // write, read, stat: relatime moves the atime at the read that follows a fine-stamped
    // write (the atime is not later than the mtime), and only there; the control's write
    // keeps the tick, which the atime already holds.
    let at = |v: &[(f64, f64, f64)]| v.iter().map(|b| b.2).collect::<Vec<_>>();
    assert!((q[1].2 - 1.0).abs() < 0.01, "{:?}", at(&q));
    assert!(q[0].2.abs() < 0.01 && q[2].2.abs() < 0.01, "{:?}", at(&q));
    assert!(c.iter().map(|b| b.2).sum::<f64>() < 0.05, "{:?}", at(&c));
}

mod btrfs;
mod fine;
mod first;
mod swap;
mod sync;
mod tail;

#[test]
fn the_counts_by_call_add_up_to_the_loops_and_sit_on_their_calls() {
    let profile = floored();
    let w = profile.filesystems[0].pair.as_ref().unwrap();
    let model = model_of(w);
    let costs = Costs::reads(20.0, 5.0, 4e6);
    // write, write, stat on tmpfs with the times asked for: the first write takes the fine
    // stamp and stores it; the stat marks the ctime queried.
    let sc = pattern_scenario(Pattern::Write { writes: 2 }, FsKind::Tmpfs, true)
        .unwrap()
        .compile();
    let by = counts_by_call(model, costs, &sc, 1000.0);
    let kinds: Vec<_> = by.iter().map(|(s, _)| s.name()).collect();
    assert_eq!(kinds, ["write", "stat"]);
    let all = counts_at(model, costs, &sc, 1000.0);
    let sum = by
        .iter()
        .fold(crate::price::Counts::default(), |a, (_, c)| a + *c);
    for t in Term::ALL {
        assert!(
            (sum[t] - all[t]).abs() < 1e-9,
            "{t:?}: {sum:?} against {all:?}"
        );
    }
    assert!((sum.reads_ns - all.reads_ns).abs() < 1e-6);
    assert!((sum.fine_stamps - all.fine_stamps).abs() < 1e-9);
    let (write, stat) = (by[0].1, by[1].1);
    assert!((write.fine_stamps - 1.0).abs() < 0.01, "{write:?}");
    assert!((write[Term::Update] - 1.0).abs() < 0.01, "{write:?}");
    assert!((stat[Term::Query] - 1.0).abs() < 0.01, "{stat:?}");
    assert_eq!(stat.fine_stamps, 0.0);
}
