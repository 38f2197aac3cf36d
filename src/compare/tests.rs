//! What-ifs built from a recorded profile: a change of one source against little noise, a
//! whole-run shift, and repeated runs with one of them disturbed.

use super::*;
use crate::probe::between::{BetweenRuns, SourceRuns};

fn recorded() -> Profile {
    let text = include_str!("../../tests/data/compare/plain/plain-1.json");
    serde_json::from_str(text).unwrap()
}

fn input(label: &str, profile: Profile) -> Input {
    Input {
        label: label.into(),
        path: format!("{label}.json").into(),
        profile,
        verdicts: Vec::new(),
    }
}

/// Every source of `p` scaled by `k(index, id)` (its cost in ns and in cycles).
fn scaled(p: &Profile, k: impl Fn(usize, &str) -> f64) -> Profile {
    let mut out = p.clone();
    for (i, s) in out.sources.iter_mut().enumerate() {
        let f = k(i, &s.id);
        for e in [s.cost_ns.as_mut(), s.cost_cycles.as_mut()]
            .into_iter()
            .flatten()
        {
            e.point *= f;
            e.lower *= f;
            e.upper *= f;
        }
    }
    out
}

/// A small deterministic wobble of about ±0.3%: two runs are never identical.
fn wobble(i: usize) -> f64 {
    1.0 + 0.003 * (i as f64 * 1.7).sin()
}

/// `p` as a `--repeat` profile of `runs`, each source's points its own point times `spread`.
fn repeated(p: &Profile, spread: &[f64]) -> Profile {
    let mut out = p.clone();
    out.between_runs = Some(BetweenRuns {
        runs: spread.len() as u32,
        method: "what-if".into(),
    });
    for s in &mut out.sources {
        if let Some(c) = s.cost_ns {
            let points_ns: Vec<f64> = spread.iter().map(|k| c.point * k).collect();
            let noise_pct = crate::probe::between::noise_pct(&points_ns).unwrap_or(0.0);
            s.between_runs = Some(SourceRuns {
                points_ns,
                noise_pct,
            });
        }
    }
    out
}

fn words(c: &Comparison) -> Vec<(String, Change)> {
    c.sources
        .iter()
        .filter_map(|r| Some((r.id.clone(), r.change[0]?)))
        .filter(|(_, w)| *w != Change::NoChange)
        .collect()
}

#[test]
fn ten_percent_on_one_source_against_one_percent_noise_is_caught() {
    let base = recorded();
    let changed = |id: &'static str| {
        scaled(&base, move |i, s| {
            wobble(i) * if s == id { 1.10 } else { 1.0 }
        })
    };
    // Plain probes: the prior.
    for id in ["syscall:getppid", "vdso:monotonic", "rdtscp"] {
        let c = compare_with_noise(
            &[input("a", base.clone()), input("b", changed(id))],
            None,
            &[],
        );
        assert_eq!(c.noise.kind, "prior");
        assert_eq!(words(&c), vec![(id.to_string(), Change::Slower)], "{id}");
    }
    // Five runs each at about 1% noise between two runs.
    let spread = [1.0, 1.0025, 0.9975, 1.002, 0.998];
    let a = repeated(&base, &spread);
    let b = repeated(&changed("vdso:monotonic"), &spread);
    let c = compare_with_noise(&[input("a", a), input("b", b)], None, &[]);
    assert_eq!(c.noise.kind, "repeat");
    let r = c.sources.iter().find(|r| r.id == "vdso:monotonic").unwrap();
    assert!(r.noise_pct[0].unwrap() < 1.5, "{:?}", r.noise_pct);
    assert_eq!(
        words(&c),
        vec![("vdso:monotonic".to_string(), Change::Slower)]
    );
    // Apart from its path: named so, not given the path's word.
    let p = c.paths.iter().find(|p| p.apart.contains(&r.id)).unwrap();
    assert_eq!(p.change, Change::NoChange);
}

#[test]
fn a_whole_run_three_percent_slower_is_one_shift_and_no_row() {
    let base = recorded();
    let slow = scaled(&base, |i, _| 1.03 * wobble(i));
    let c = compare_with_noise(&[input("a", base), input("b", slow)], None, &[]);
    assert_eq!(c.shifts.len(), 1, "{:?}", c.shifts);
    assert!(c.shifts[0].kind.is_none());
    assert!((c.shifts[0].percent - 3.0).abs() < 0.3, "{:?}", c.shifts);
    assert!(words(&c).is_empty(), "{:?}", words(&c));
}

#[test]
fn one_disturbed_run_is_named_and_widens_nothing() {
    let base = recorded();
    let quiet = [1.0, 1.001, 0.999, 1.0005, 0.9995];
    let mut loaded = quiet;
    loaded[2] = 1.25;
    let a = repeated(&base, &loaded);
    let b = repeated(
        &scaled(&base, |_, s| if s == "rdtsc" { 1.10 } else { 1.0 }),
        &quiet,
    );
    let c = compare_with_noise(&[input("a", a), input("b", b)], None, &[]);
    assert_eq!(c.disturbed.len(), 1, "{:?}", c.disturbed);
    assert_eq!(
        (c.disturbed[0].label.as_str(), c.disturbed[0].run),
        ("a", 3)
    );
    assert!(c.disturbed[0].percent > 20.0);
    for r in &c.sources {
        let m = r.measured_noise_pct[0];
        assert!(m.is_none_or(|m| m < 1.0), "{}: {m:?}", r.id);
    }
    assert_eq!(words(&c), vec![("rdtsc".to_string(), Change::Slower)]);
    // The first run disturbed: the input is judged on the median of the others.
    let mut first = quiet;
    first[0] = 1.25;
    let a = scaled(&repeated(&base, &first), |_, _| 1.25);
    let c = compare_with_noise(
        &[input("a", a), input("b", repeated(&base, &quiet))],
        None,
        &[],
    );
    assert_eq!(c.disturbed[0].run, 1);
    assert!(words(&c).is_empty(), "{:?}", words(&c));
    assert!(c.shifts.is_empty(), "{:?}", c.shifts);
}

/// `p` on a core clock `clock` times as fast, each source costing `cycles(id)` times its core
/// cycles: its nanoseconds move by `cycles / clock`.
fn clocked(p: &Profile, clock: f64, cycles: impl Fn(&str) -> f64) -> Profile {
    let mut out = scaled(p, |i, id| wobble(i) * cycles(id) / clock);
    for s in &mut out.sources {
        if let Some(e) = s.cost_cycles.as_mut() {
            let k = clock;
            e.point *= k;
            e.lower *= k;
            e.upper *= k;
        }
    }
    let c = out
        .core_clock
        .as_mut()
        .expect("the recorded profile read its core clock");
    c.ghz *= clock;
    c.ghz_min *= clock;
    c.ghz_max *= clock;
    out
}

fn row<'a>(c: &'a Comparison, id: &str) -> &'a SourceRow {
    c.sources.iter().find(|r| r.id == id).unwrap()
}

#[test]
fn the_counter_reads_are_judged_in_cycles_when_the_core_clock_moved() {
    let base = recorded();
    // The clock 10% faster, rdtsc 10% dearer in core cycles (as a microcode change would
    // make it): in ns rdtsc stood still while every other source got 9% cheaper.
    let after = clocked(&base, 1.10, |id| if id == "rdtsc" { 1.10 } else { 1.0 });
    let inputs = [input("a", base.clone()), input("b", after)];
    let c = compare_with_noise(&inputs, None, &[]);
    assert_eq!(c.unit_choice, UnitChoice::Auto);
    assert_eq!(c.unit, Unit::Ns);
    for id in unit::CYCLE_BOUND {
        let r = row(&c, id);
        assert_eq!(r.judged_unit, vec![Unit::Cycles], "{id}");
        let ns = r.ns_ratio_interval[0].unwrap();
        assert!(ns.point < 1.0 || *id == "rdtsc", "{id}: {ns:?}");
    }
    let r = row(&c, "rdtsc");
    assert_eq!(r.change[0], Some(Change::Slower));
    assert!((r.ratio_to_first[0].unwrap() - 1.10).abs() < 0.01, "{r:?}");
    assert!((r.ns_ratio_interval[0].unwrap().point - 1.0).abs() < 0.01);
    // The other counters kept their cycles: no change, however far their ns moved.
    for id in ["rdtscp", "lfence_rdtsc", "rdpid", "quanta:raw"] {
        assert_eq!(row(&c, id).change[0], Some(Change::NoChange), "{id}");
    }
    // Every other source is judged in ns and moved with the clock: one shift, no word.
    assert_eq!(row(&c, "vdso:realtime").judged_unit, vec![Unit::Ns]);
    assert_eq!(c.shifts.len(), 1, "{:?}", c.shifts);
    assert!((c.shifts[0].percent + 9.1).abs() < 0.5, "{:?}", c.shifts);
    assert_eq!(words(&c), vec![("rdtsc".to_string(), Change::Slower)]);
    // In ns alone (`--unit ns`), rdtsc's standing still hides the change.
    let ns = compare_with_noise(&inputs, Some(Unit::Ns), &[]);
    assert_eq!(ns.unit_choice, UnitChoice::Fixed);
    assert_eq!(row(&ns, "rdtsc").judged_unit, vec![Unit::Ns]);
    assert!(row(&ns, "rdtsc").ns_ratio_interval.is_empty());
    assert_eq!(row(&ns, "rdtsc").change[0], Some(Change::NoChange));
}

#[test]
fn every_source_is_judged_in_ns_while_the_core_clock_stood_still() {
    let base = recorded();
    let after = clocked(&base, 1.01, |id| if id == "rdtsc" { 1.10 } else { 1.0 });
    let c = compare_with_noise(&[input("a", base), input("b", after)], None, &[]);
    for r in &c.sources {
        assert!(r.judged_unit.iter().all(|u| *u == Unit::Ns), "{}", r.id);
        assert!(r.ns_ratio_interval.is_empty(), "{}", r.id);
    }
    assert_eq!(words(&c), vec![("rdtsc".to_string(), Change::Slower)]);
}

#[test]
fn a_clock_moved_beyond_a_shift_leaves_the_counters_standing() {
    // +25%: past the largest shift named, so every ns row is faster; the counters' cycles
    // did not move, and they are judged on those.
    let base = recorded();
    let after = clocked(&base, 1.25, |_| 1.0);
    let c = compare_with_noise(&[input("a", base), input("b", after)], None, &[]);
    assert!(c.shifts.iter().all(|s| s.kind.is_some()), "{:?}", c.shifts);
    for id in unit::CYCLE_BOUND {
        assert_eq!(row(&c, id).change[0], Some(Change::NoChange), "{id}");
        let ns = row(&c, id).ns_ratio_interval[0].unwrap();
        assert!((ns.point - 0.8).abs() < 0.01, "{id}: {ns:?}");
    }
    assert_eq!(row(&c, "syscall:getppid").change[0], Some(Change::Faster));
}

#[test]
fn the_counters_vote_for_the_clocks_shift_in_ns_between_two_real_runs() {
    // The next recorded probe, its clock 10% faster and rdtsc 10% dearer in cycles, against
    // the first: the run-to-run spread of two real probes on top.
    let next: Profile =
        serde_json::from_str(include_str!("../../tests/data/compare/plain/plain-2.json")).unwrap();
    let after = clocked(&next, 1.10, |id| if id == "rdtsc" { 1.10 } else { 1.0 });
    let inputs = [input("a", recorded()), input("b", after)];
    let c = compare_with_noise(&inputs, None, &[]);
    let machine: Vec<&noise::Shift> = c.shifts.iter().filter(|s| s.kind.is_none()).collect();
    assert_eq!(machine.len(), 1, "{:?}", c.shifts);
    assert!((machine[0].percent + 9.1).abs() < 0.5, "{machine:?}");
    assert_eq!(words(&c), vec![("rdtsc".to_string(), Change::Slower)]);
    let ns = compare_with_noise(&inputs, Some(Unit::Ns), &[]);
    assert!(words(&ns).is_empty(), "{:?}", words(&ns));
}
