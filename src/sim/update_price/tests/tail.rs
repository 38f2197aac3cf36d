//! The tails: the reads or chmods after chmod-stat, timed on their own (each set apart between
//! an open and a close of another file, or in a run), price the floored read, the fine read's
//! excess and the ctime swap from the model's units in those calls only, and a document
//! without them falls back to the whole iterations' recipes.

use super::*;
use crate::price::Part;

/// A profile probed with `--dir /dev/shm --dir <ext4 loop image>` whose pattern pairs carry
/// their tails' Δ (`by_call`).
fn tailed() -> Profile {
    serde_json::from_str(include_str!("../../../../tests/data/update-tail-amd.json")).unwrap()
}

/// The same, its floored reads and swaps set apart (`chmod-stat-read16-apart`,
/// `chmod-stat-chmod16-others-apart`), as `probe --dir` measures them.
fn apart() -> Profile {
    serde_json::from_str(include_str!("../../../../tests/data/update-apart-amd.json")).unwrap()
}

fn costs_of(profile: &Profile, model: crate::kernel::ModelId) -> Costs {
    let cfg = SimulateConfig::new(LoopSource::Scenario("write-stat".into()));
    costs::resolve_as_measured(model, Some(profile), &cfg)
        .unwrap()
        .0
        .reads_only()
}

#[test]
fn the_tails_hold_only_the_units_of_their_calls() {
    let profile = tailed();
    for f in &profile.filesystems {
        let model = model_of(f.pair.as_ref().unwrap());
        let costs = costs_of(&profile, model);
        let tail = |p: &Option<PairResult>| {
            pair_delta_in(model, costs, p.as_ref().unwrap(), Part::Tail).unwrap()
        };
        // 16 reads of a second file: each returns the floor on the queried side, the tick on
        // the control; nothing else moves between them.
        let floor = tail(&f.floor_pair);
        assert!((floor[Term::FloorRead] - 16.0).abs() < 0.2, "{floor:?}");
        for t in [Term::Query, Term::Update, Term::CtimeSwap, Term::FineExcess] {
            assert!(floor[t].abs() < 0.01, "{t:?} {floor:?}");
        }
        // 16 chmods of other files: two floored reads and one swap each.
        let swap = tail(&f.swap_pair);
        // (Less the iterations that a tick ends in.)
        assert!((swap[Term::CtimeSwap] - 16.0).abs() < 0.5, "{swap:?}");
        assert!(
            (swap[Term::FloorRead] - 2.0 * swap[Term::CtimeSwap]).abs() < 0.1,
            "{swap:?}"
        );
        assert!(swap[Term::Query].abs() < 0.01, "{swap:?}");
        // 16 reads of the queried file against 1: fine reads between them, one atime move on
        // each.
        let fine = tail(&f.fine_pair) - tail(&f.fine_base_pair);
        assert!((fine[Term::FineExcess] - 15.0).abs() < 0.3, "{fine:?}");
        assert!(fine[Term::AtimeUpdate].abs() < 0.05, "{fine:?}");
        // The whole iteration holds the tail and the chmod-stat before it.
        let whole = pair_delta_in(model, costs, f.floor_pair.as_ref().unwrap(), Part::Whole);
        assert!(whole.unwrap()[Term::Query] > 0.99);
        // Several tasks have no tail.
        let mut tasks = f.floor_pair.clone().unwrap();
        tasks.tasks = 2;
        assert!(pair_delta_in(model, costs, &tasks, Part::Tail).is_none());
    }
}

#[test]
fn the_tails_price_the_read_terms_and_the_swap() {
    let profile = tailed();
    for f in &profile.filesystems {
        let pairs = f.pairs();
        let again = price(&pairs, &profile);
        let model = model_of(pairs[0]);
        let costs = costs_of(&profile, model);
        let r = f.floor_pair.as_ref().unwrap();
        let t = r.by_call[0].delta_ns;
        let d = pair_delta_in(model, costs, r, Part::Tail).unwrap();
        let by_hand = (t.point - d.reads_ns) / d[Term::FloorRead];
        let fl = again.price(Term::FloorRead).unwrap();
        assert!((fl.point - by_hand).abs() < 1e-9, "{fl:?} {by_hand}");
        assert!(fl.lower <= fl.point && fl.point <= fl.upper);
        assert_eq!(
            again.priced_by(Term::FloorRead),
            Some("chmod-stat-read16 [16 × read] pair")
        );
        assert_eq!(
            again.priced_by(Term::CtimeSwap),
            Some("chmod-stat-chmod16-others [16 × setattr] pair")
        );
        assert!(again
            .priced_by(Term::FineExcess)
            .is_some_and(|w| w.contains("[1 × read]")));
        // The whole iterations' recipe is said beside it as a prediction.
        assert!(
            again.reason.contains("chmod-stat-read16 would price it at"),
            "{}",
            again.reason
        );
        // The swap: the tail's Δ less its floored reads at the floored read's price.
        let s = f.swap_pair.as_ref().unwrap();
        let ds = pair_delta_in(model, costs, s, Part::Tail).unwrap();
        let by_hand = (s.by_call[0].delta_ns.point
            - ds.reads_ns
            - ds[Term::FloorRead] * fl.point
            - ds[Term::FineExcess] * again.price(Term::FineExcess).unwrap().point)
            / ds[Term::CtimeSwap];
        let sw = again.price(Term::CtimeSwap).unwrap().point;
        assert!((sw - by_hand).abs() < 1e-6, "{sw} {by_hand}");
    }
}

#[test]
fn a_document_without_tails_prices_by_the_whole_iterations() {
    let profile = tailed();
    for f in &profile.filesystems {
        let stripped: Vec<PairResult> = f
            .pairs()
            .into_iter()
            .map(|p| {
                let mut p = p.clone();
                p.by_call.clear();
                p
            })
            .collect();
        let refs: Vec<&PairResult> = stripped.iter().collect();
        let again = price(&refs, &profile);
        assert_eq!(
            again.priced_by(Term::FloorRead),
            Some("chmod-stat-read16 pair against chmod-stat")
        );
        assert_eq!(
            again.priced_by(Term::CtimeSwap),
            Some("chmod-stat-chmod16-others pair against chmod-stat-read16")
        );
    }
}

#[test]
fn calls_set_apart_price_the_floored_read_and_the_swap_first() {
    let profile = apart();
    for f in &profile.filesystems {
        let pairs = f.pairs();
        let model = model_of(pairs[0]);
        let costs = costs_of(&profile, model);
        let (r, s) = (
            f.floor_apart_pair.as_ref().unwrap(),
            f.swap_apart_pair.as_ref().unwrap(),
        );
        // The run-of-calls pairs are lazy: measured only where these do not price.
        assert!(f.floor_pair.is_none() && f.swap_pair.is_none());
        // The opens and closes around each call take no timestamp: the tail holds the same
        // units as the run of calls.
        // (Less the iterations a tick ends in: an iteration set apart is several times
        // longer than one in a run.)
        let dr = pair_delta_in(model, costs, r, Part::Tail).unwrap();
        assert!(
            dr[Term::FloorRead] > 15.0 && dr[Term::FloorRead] <= 16.0,
            "{dr:?}"
        );
        assert!(dr.reads_ns.abs() < 1e-6 && dr[Term::CtimeSwap].abs() < 0.01);
        let ds = pair_delta_in(model, costs, s, Part::Tail).unwrap();
        assert!(
            ds[Term::CtimeSwap] > 15.0 && ds[Term::CtimeSwap] <= 16.0,
            "{ds:?}"
        );
        assert!((ds[Term::FloorRead] - 2.0 * ds[Term::CtimeSwap]).abs() < 0.1);
        let again = price(&pairs, &profile);
        assert_eq!(
            again.priced_by(Term::FloorRead),
            Some("chmod-stat-read16-apart [16 × read] pair")
        );
        assert_eq!(
            again.priced_by(Term::CtimeSwap),
            Some("chmod-stat-chmod16-others-apart [16 × setattr] pair")
        );
        let fl = again.price(Term::FloorRead).unwrap();
        let by_hand = (r.by_call[0].delta_ns.point - dr.reads_ns) / dr[Term::FloorRead];
        assert!((fl.point - by_hand).abs() < 1e-9, "{fl:?} {by_hand}");
        // Measured and kept: the profile's price is the one priced again.
        assert!((f.price(Term::FloorRead).unwrap().point - fl.point).abs() < 1e-9);
    }
}
