//! A fine read's in-path excess: chmod-stat with 16 reads of the same file against 1, on a
//! profile probed with `--dir /dev/shm --dir <ext4 lazytime loop image>` on this project's
//! machine (AMD EPYC KVM guest, Linux 6.18).

use super::*;

fn fine() -> Profile {
    serde_json::from_str(include_str!("../../../../tests/data/update-fine-amd.json")).unwrap()
}

fn pairs_of(f: &FsUpdate) -> Vec<&PairResult> {
    f.pairs()
}

#[test]
fn the_reads_of_the_queried_file_price_a_fine_read_inside_the_op() {
    let profile = fine();
    let f = &profile.filesystems[0];
    assert_eq!(f.fs_type, "tmpfs");
    let again = price(&pairs_of(f), &profile);
    let e = again.price(Term::FineExcess).unwrap();
    // (The profile's own prices, which the probe did not have yet, move it by a hair.)
    assert!(
        (e.point - f.price(Term::FineExcess).unwrap().point).abs() < 0.05,
        "{e:?}"
    );
    assert!(e.lower <= e.point && e.point <= e.upper, "{e:?}");
    assert!(again.reason.contains("inside the op"), "{}", again.reason);
    // Both pairs move the atime once (the first read: fs/inode.c inode_update_atime reads
    // current_time again, read at 7.2.13) and query once, so between them the model counts
    // only reads: 15 fine reads (each read's current_time finds the queried ctime on the
    // floor) and 15 floored ones.
    let (s, b) = (
        f.fine_pair.as_ref().unwrap(),
        f.fine_base_pair.as_ref().unwrap(),
    );
    let model = model_of(s);
    let cfg = SimulateConfig::new(LoopSource::Scenario("write-stat".into()));
    let (mut costs, _) = costs::resolve_as_measured(model, Some(&profile), &cfg).unwrap();
    let fs = s.fs_kind();
    costs = costs
        .with_on(
            Term::FloorRead,
            fs,
            again.price(Term::FloorRead).unwrap().point,
        )
        .with_on(Term::FineExcess, fs, 0.0);
    let d = |costs: Costs| {
        let side = |p: &PairResult| {
            let (q, c) = pair_sides(model, costs, p).unwrap();
            q - c
        };
        side(s) - side(b)
    };
    let bare = d(costs);
    assert!((bare[Term::FineExcess] - 15.0).abs() < 0.3, "{bare:?}");
    assert!((bare[Term::FloorRead] - 15.0).abs() < 0.3, "{bare:?}");
    assert!(
        bare[Term::Update].abs() < 0.05 && bare[Term::Query].abs() < 0.05,
        "{bare:?}"
    );
    // At the excess found, the model's reads between the pairs are the live difference.
    costs = costs.with_on(Term::FineExcess, fs, e.point);
    let live = s.delta_ns.point - b.delta_ns.point;
    let model_reads = d(costs).priced_ns(&costs, fs);
    assert!((model_reads - live).abs() < 1.0, "{model_reads} {live}");
    // The chmod pair's two fine reads carry the excess now: the query is what remains
    // (priced without the reads pair, against a profile that has no excess either).
    let mut bare = profile.clone();
    bare.filesystems
        .iter_mut()
        .for_each(|f| f.prices.set(Term::FineExcess, None));
    let without_fine: Vec<&PairResult> = pairs_of(f)
        .into_iter()
        .filter(|p| p.pattern != recipe::FINE)
        .collect();
    let without = price(&without_fine, &bare);
    assert!(without.price(Term::FineExcess).is_none());
    let (q0, q1) = (
        without.price(Term::Query).unwrap().point,
        again.price(Term::Query).unwrap().point,
    );
    assert!(
        (q0 - q1 - 2.0 * e.point).abs() < 0.5,
        "{q0} {q1} {}",
        e.point
    );
}

#[test]
fn the_excess_prices_every_fine_read_in_the_estimates() {
    let profile = fine();
    let model = model_of(profile.filesystems[0].pair.as_ref().unwrap());
    let cfg = SimulateConfig::new(LoopSource::Scenario("write-stat".into()));
    let (costs, sources) = costs::resolve(model, Some(&profile), &cfg).unwrap();
    let e = profile.filesystems[0]
        .price(Term::FineExcess)
        .unwrap()
        .point;
    assert_eq!(costs.on(Term::FineExcess, FsKind::Tmpfs), e);
    // A filesystem not measured takes the first measured excess: the read is the
    // timekeeper's.
    assert_eq!(costs.on(Term::FineExcess, FsKind::Xfs), e);
    assert!(
        sources.term(Term::FineExcess).contains("tmpfs"),
        "{sources:?}"
    );
    // A write after a query on tmpfs takes two fine reads: its reads cost two excesses more.
    let s = pattern_scenario(Pattern::Write { writes: 1 }, FsKind::Tmpfs, true)
        .unwrap()
        .compile();
    let with = counts_at(model, costs, &s, 1300.0);
    let fine = with[Term::FineExcess];
    assert!((fine - 2.0).abs() < 0.05, "{with:?}");
    let bare = costs.with(Term::FineExcess, TermPrice::ZERO);
    let st = |c: Costs| {
        let r = estimate::replay(&model.table(), &model.policies()[0], c, &s, 1000.0, 20_000);
        r.timestamp_ns / r.units() as f64
    };
    let (a, b) = (st(costs), st(bare));
    assert!((a - b - fine * e).abs() < 0.05 * e, "{a} {b} {fine}");
}
