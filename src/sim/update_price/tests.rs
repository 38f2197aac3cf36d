//! The update price's arithmetic on pairs recorded on this project's machine (AMD EPYC KVM
//! guest, Linux 6.18, 1 GiB loop images), with the profile recorded in the same run.

use super::*;
use crate::workload::pair::PairResult;

fn recorded() -> (Profile, Vec<PairResult>) {
    let profile: Profile =
        serde_json::from_str(include_str!("../../../tests/data/profile-kvm-amd.json")).unwrap();
    let v: serde_json::Value =
        serde_json::from_str(include_str!("../../../tests/data/update-pairs-amd.json")).unwrap();
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
        let f = price(p, &profile);
        let (dr, du) = (f.reads_delta_ns.unwrap(), f.updates_delta.unwrap());
        // linux@6.18, multigrain: a queried write reads the fine clock twice more than a
        // coarse one, and stores once; the control stores once per tick only.
        assert!((du - 1.0).abs() < 0.01, "{}: {du}", p.dir);
        let precise = profile.derived.precise_read_ns.unwrap().point;
        assert!(dr > 1.5 * precise && dr < 2.5 * precise, "{}: {dr}", p.dir);
        let u = f.update_ns.unwrap();
        assert!(((p.delta_ns.point - dr) / du - u.point).abs() < 1e-9);
        assert!(u.lower <= u.point && u.point <= u.upper);
        assert!(
            f.multigrain && f.reason.contains("live pair"),
            "{}",
            f.reason
        );
    }
    // The journal and the log are most of it: ext4 and xfs above 3× tmpfs's.
    let at = |d| price(pair(&pairs, d), &profile).update_ns.unwrap().point;
    assert!(at("m-ext4") > 3.0 * at("/dev/shm"));
    assert!(at("m-xfs") > 3.0 * at("/dev/shm"));
    // Without a journal, ext4's update costs less than with one.
    assert!(at("m-ext4-nojournal") < at("m-ext4"));
}

#[test]
fn btrfs_stores_every_write_so_the_question_prices_no_update() {
    let (profile, pairs) = recorded();
    let f = price(pair(&pairs, "m-btrfs"), &profile);
    assert!(f.update_ns.is_none());
    assert!(f.updates_delta.unwrap().abs() < 0.01);
    assert!(f.reason.contains("not needed by the knob"), "{}", f.reason);
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
    let f = price(&p, &profile);
    assert!(f.update_ns.is_none());
    assert_eq!(f.model.as_deref(), Some("linux@6.12"));
    assert!(f.reason.contains("no multigrain") && f.reason.contains("NOT equal"));
}

#[test]
fn simulate_prices_each_update_on_its_filesystem_and_holds_to_three_writes_per_query() {
    let (mut profile, pairs) = recorded();
    profile.filesystems = pairs.iter().map(|p| price(p, &profile)).collect();
    let (_, by_fs, src) = costs::update_prices(Some(&profile));
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
