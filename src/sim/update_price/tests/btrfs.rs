//! btrfs, where every write stores its time whatever the question: the query priced on the
//! write, the update through the read's atime.

use super::*;

#[test]
fn btrfs_stores_every_write_so_the_question_prices_no_update() {
    let (profile, pairs) = recorded();
    let f = price(&[pair(&pairs, "m-btrfs")], &profile);
    assert!(f.price(Term::Update).is_none());
    assert!(f.updates_delta.unwrap().abs() < 0.01);
    assert!(f.reason.contains("not needed by the knob"), "{}", f.reason);
}

#[test]
fn btrfs_prices_the_query_on_the_write() {
    // btrfs stores every write's time whatever the question, so the knob's Δ on write-stat
    // is one fine read and one query, and that pair prices the query. A chmod's fine stamp
    // adds less to a chmod than to a write beyond the reads the model counts, so chmod-stat's own
    // price falls short of the write (the recorded pairs: 96.5 ns live).
    let profile = repriced();
    let f = profile
        .filesystems
        .iter()
        .find(|f| f.fs_type == "btrfs")
        .unwrap();
    let (w, c) = (f.pair.as_ref().unwrap(), f.query_pair.as_ref().unwrap());
    let model = model_of(w);
    let cfg = SimulateConfig::new(LoopSource::Scenario("write-stat".into()));
    let (costs, sources) = costs::resolve(model, Some(&profile), &cfg).unwrap();
    assert_eq!(
        costs.on(Term::Query, FsKind::Btrfs),
        f.price(Term::Query).unwrap().point
    );
    assert!(
        sources.term(Term::Query).contains("write-stat"),
        "{sources:?}"
    );
    let s = pattern_scenario(Pattern::Write { writes: 1 }, FsKind::Btrfs, true)
        .unwrap()
        .compile();
    let knob = |costs: Costs| {
        let e = estimate::estimates(model, costs, &s, w.control_ns.point, 100_000);
        let ns = |name: &str| {
            e.iter()
                .find(|x| x.policy.ends_with(name))
                .unwrap()
                .ns_per_op
        };
        ns(":multigrain") - ns(":coarse")
    };
    let live = w.delta_ns.point;
    let predicted = knob(costs);
    assert!(
        (predicted - live).abs() <= 0.05 * live,
        "predicted {predicted:.1} against live {live:.1}"
    );
    // At chmod-stat's price the write falls short.
    let (as_measured, _) = costs::resolve_as_measured(model, Some(&profile), &cfg).unwrap();
    let at_chmod = costs.with_on(
        Term::Query,
        FsKind::Btrfs,
        chmod_query(model, as_measured, c).unwrap().point,
    );
    assert!(knob(at_chmod) < predicted, "{}", knob(at_chmod));
    // Without the query's price, the reads alone miss it.
    let bare = costs.with(Term::Query, TermPrice::ZERO);
    assert!((knob(bare) - live).abs() > 0.15 * live);
}

#[test]
fn btrfs_prices_the_atime_update_on_the_read_after_the_write() {
    // `probe --dir` on a btrfs loop image: write-stat stores on both sides, so its c/mtime
    // update is neither priced nor needed by the knob; the read after the write moves the
    // atime on the queried side only, and write-read-stat prices that atime update.
    let profile: Profile = serde_json::from_str(include_str!(
        "../../../../tests/data/update-btrfs-read-amd.json"
    ))
    .unwrap();
    let f = &profile.filesystems[0];
    assert_eq!(f.fs_type, "btrfs");
    let (w, q, fl, r) = (
        f.pair.as_ref().unwrap(),
        f.query_pair.as_ref().unwrap(),
        f.floor_pair.as_ref().unwrap(),
        f.read_pair.as_ref().unwrap(),
    );
    assert_eq!(r.pattern, Pattern::WriteRead);
    // Without the read pair: no update price, and why.
    let alone = price(&[w, q, fl], &profile);
    assert!(alone.price(Term::Update).is_none());
    assert!(alone.price(Term::AtimeUpdate).is_none());
    assert!(
        alone.reason.contains("not needed by the knob"),
        "{}",
        alone.reason
    );
    // With it: the read pair's Δ less its reads and query, over its one more atime update.
    let with = price(&[w, q, fl, r], &profile);
    assert!(with.price(Term::Update).is_none());
    let a = with.price(Term::AtimeUpdate).unwrap();
    let model = model_of(w);
    let cfg = SimulateConfig::new(LoopSource::Scenario("write-stat".into()));
    let (costs, _) = costs::resolve_as_measured(model, Some(&profile), &cfg).unwrap();
    let fs = FsKind::Btrfs;
    let costs = costs
        .with_on(
            Term::FloorRead,
            fs,
            with.price(Term::FloorRead).unwrap().point,
        )
        .with_on(Term::FineExcess, fs, 0.0);
    let d = pair_delta(model, costs, r).unwrap();
    assert!(d[Term::Update].abs() < 0.01, "{d:?}");
    assert!((d[Term::AtimeUpdate] - 1.0).abs() < 0.01, "{d:?}");
    assert!((d[Term::Query] - 1.0).abs() < 0.01, "{d:?}");
    // The query as write-stat priced it: the atime update is what the read pair adds beyond.
    assert_eq!(with.query_pattern.as_deref(), Some("write-stat"));
    let qn = with.price(Term::Query).unwrap().point;
    let reads = d.reads_ns + d.terms_ns(&costs, fs, &[Term::FloorRead, Term::FineExcess]);
    let by_hand = (r.delta_ns.point - reads - d[Term::Query] * qn) / d[Term::AtimeUpdate];
    assert!((by_hand - a.point).abs() < 1e-6, "{by_hand} {a:?}");
    assert!(a.lower <= a.point && a.point <= a.upper);
    assert_eq!(
        with.priced_by(Term::AtimeUpdate),
        Some("write-read-stat pair against write-stat")
    );
    // The kernel's count: the read pair takes one fine stamp per queried iteration (the
    // write's), none without.
    let k = r.kernel_counts.as_ref().unwrap();
    assert!((k.queried["fine_stamps"] - 1.0).abs() < 0.01);
    assert!(k.control["fine_stamps"] < 0.01);
}
