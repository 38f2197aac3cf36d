//! Tests of `vm bench` on recorded guest output: three boots as the replicates, and
//! `--count` without a guest (`vm count`'s rows from a guest's raw counts, taken into the
//! bench's rows, the table and the commit paragraph).

use crate::trace::FsKind::Tmpfs;
use crate::vm::bench::fixtures::{recorded, report, CONSOLE_6_1, CONSOLE_7_2};
use crate::vm::bench::guest::Slot;
use crate::vm::bench::{compare, parse_console, BenchReport, ComparisonKind};
use crate::vm::boot::clock::Clocksource::{AcpiPm, Hpet, Tsc};
use crate::workload::WorkloadName::{Pipe1, WriteOnly, WriteStat};

/// Three boots of 6.1 from a quiet default run (12 rounds of tsc/hpet each).
const CONSOLES_6_1_QUIET: [&str; 3] = [
    include_str!("../../../../tests/data/vm-bench/6.1-quiet-boot1.console"),
    include_str!("../../../../tests/data/vm-bench/6.1-quiet-boot2.console"),
    include_str!("../../../../tests/data/vm-bench/6.1-quiet-boot3.console"),
];

#[test]
fn three_recorded_boots_are_the_replicates() {
    let mut k = recorded(CONSOLES_6_1_QUIET[0]);
    for (i, c) in CONSOLES_6_1_QUIET.iter().enumerate().skip(1) {
        let mut b = recorded(c).boots.remove(0);
        b.index = i as u32;
        k.boots.push(b);
    }
    let mut r = report(vec![k], &[Tsc, Hpet], &[Pipe1, WriteStat]);
    crate::vm::bench::fill::fill(&mut r);
    let pipe = r
        .comparisons
        .iter()
        .find(|c| c.kind == crate::vm::bench::ComparisonKind::Clocksource && c.workload == Pipe1)
        .unwrap();
    assert_eq!(pipe.interval_method, Some(compare::IntervalMethod::BootsT));
    assert_eq!(pipe.pairs, 36);
    // By hand: each boot's median of its 12 paired differences, then t(0.975, 2) = 4.303.
    let medians: Vec<f64> = CONSOLES_6_1_QUIET
        .iter()
        .map(|c| {
            let slots = parse_console(c).unwrap().slots;
            let ns = |s: &Slot| {
                s.runs
                    .iter()
                    .find(|x| x.workload == Pipe1)
                    .unwrap()
                    .ns_per_op
            };
            let d: Vec<f64> = slots
                .chunks(2)
                .map(|p| {
                    let on = |cs: &str| ns(p.iter().find(|s| s.clocksource_used == cs).unwrap());
                    on("hpet") - on("tsc")
                })
                .collect();
            crate::stats::median(&d).unwrap()
        })
        .collect();
    let mean = medians.iter().sum::<f64>() / 3.0;
    let var = medians.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / 2.0;
    let half = 4.303 * (var / 3.0).sqrt();
    let e = pipe.measured_delta_ns;
    assert!((e.point - mean).abs() < 1e-9, "{e:?} {medians:?}");
    assert!(
        (e.upper - e.point - half).abs() < 1e-2 * half,
        "{e:?} ±{half}"
    );
    // Three boots' spread is wider than the rounds of any one boot would say.
    assert!(e.upper - e.lower > 0.0);
    assert!(r
        .runs
        .iter()
        .all(|x| x.boots == 3 && x.interval_method == Some(compare::IntervalMethod::BootsT)));
}

/// What `vm count` reports for write-stat on `release` (1,000 iterations): `precise` fine
/// reads and `coarse` tick reads per op.
fn counted_guest(release: &str, precise: u64, coarse: u64) -> crate::vm::count::guest::GuestCount {
    use crate::vm::count::guest::{GuestCount, WorkloadCount};
    let (p, c) = if release.starts_with("7.") {
        ("ktime_get_real_ts64_mg", "ktime_get_coarse_real_ts64_mg")
    } else {
        ("ktime_get_real_ts64", "ktime_get_coarse_real_ts64")
    };
    GuestCount {
        release: release.into(),
        probes: vec![(p.into(), p.into()), (c.into(), c.into())],
        runs: vec![WorkloadCount {
            workload: crate::workload::WorkloadName::WriteStat,
            fs: crate::trace::FsKind::Tmpfs,
            iterations: 1000,
            ns_per_op: 30_000.0,
            baseline_hits: [(c.to_string(), 4u64)].into_iter().collect(),
            hits: [
                (p.to_string(), precise * 1000),
                (c.to_string(), coarse * 1000 + 4),
            ]
            .into_iter()
            .collect(),
            ..WorkloadCount::default()
        }],
        ..GuestCount::default()
    }
}

#[test]
fn counted_calls_sit_beside_the_kernel_rows() {
    let (k61, k72) = (recorded(CONSOLE_6_1), recorded(CONSOLE_7_2));
    let (r61, r72) = (
        crate::vm::bench::rows::release(&k61),
        crate::vm::bench::rows::release(&k72),
    );
    let mut count_rows =
        crate::vm::count::rows::rows("a", 250, &counted_guest(&r61, 0, 2)).unwrap();
    count_rows.extend(crate::vm::count::rows::rows("b", 250, &counted_guest(&r72, 2, 1)).unwrap());
    let counted = crate::vm::bench::counted::from_rows(&count_rows, Tsc);
    assert_eq!(counted.len(), 2);
    let lookup = crate::vm::bench::counted::lookup;
    let c72 = lookup(&counted, &r72, Tmpfs, WriteStat).unwrap();
    assert_eq!((c72.precise_per_op, c72.coarse_per_op), (2.0, 1.0));
    let c61 = lookup(&counted, &r61, Tmpfs, WriteStat).unwrap();
    assert_eq!((c61.precise_per_op, c61.coarse_per_op), (0.0, 2.0));
    assert!(lookup(&counted, &r61, Tmpfs, Pipe1).is_none());

    let workloads = [Pipe1, WriteStat];
    let mut plain = report(vec![k61.clone(), k72.clone()], &[Tsc, Hpet], &workloads);
    crate::vm::bench::fill::fill(&mut plain);
    let mut r = report(vec![k61, k72], &[Tsc, Hpet], &workloads);
    r.counted = counted;
    crate::vm::bench::fill::fill(&mut r);
    let ws = |r: &BenchReport, kind: ComparisonKind| {
        r.comparisons
            .iter()
            .find(|c| c.kind == kind && c.workload == WriteStat && c.clocksource != Some(Hpet))
            .cloned()
            .unwrap()
    };
    let k = ws(&r, ComparisonKind::Kernel);
    assert_eq!(k.counted_from, Some(c61));
    assert_eq!(k.counted_to, Some(c72));
    // Without the counts nothing changes: the same rows, no counted fields, none in the JSON.
    let p = ws(&plain, ComparisonKind::Kernel);
    assert_eq!((p.counted_from, p.counted_to), (None, None));
    assert_eq!(p.measured_delta_ns, k.measured_delta_ns);
    let j = serde_json::to_value(&plain).unwrap();
    assert!(j.get("counted").is_none());
    assert!(j["comparisons"][0].get("counted_from").is_none());
    let j = serde_json::to_value(&r).unwrap();
    assert_eq!(j["counted"][0]["precise_per_op"], 0.0);
    let row = j["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["kind"] == "kernel" && c["workload"] == "write-stat")
        .unwrap();
    assert_eq!(row["counted_to"]["precise_per_op"], 2.0);
    // The clocksource row of the kernel carries its own counts.
    let cs = r
        .comparisons
        .iter()
        .find(|c| {
            c.kind == crate::vm::bench::ComparisonKind::Clocksource
                && c.kernel_release.as_ref() == Some(&r72)
                && c.workload == WriteStat
        })
        .unwrap();
    assert_eq!(cs.counted_from, Some(c72));
}

/// Four boots of 7.2 alternating tsc, hpet and acpi_pm (`vm bench --kernel-package
/// linux-image-cloud-amd64@sid --clocksource tsc,hpet,acpi_pm --workload
/// write-only,write-stat,pipe1 --boots 4 --seed 2`, under TCG). In the second boot pipe1 ran
/// at 4–16 µs per op on every clocksource, against about 1.8 µs in the other three.
const CONSOLES_7_2_THREE_CS: [&str; 4] = [
    include_str!("../../../../tests/data/vm-bench/7.2-three-cs-boot1.console"),
    include_str!("../../../../tests/data/vm-bench/7.2-three-cs-boot2.console"),
    include_str!("../../../../tests/data/vm-bench/7.2-three-cs-boot3.console"),
    include_str!("../../../../tests/data/vm-bench/7.2-three-cs-boot4.console"),
];

fn boots(consoles: &[&str]) -> crate::vm::bench::BenchKernel {
    let mut k = recorded(consoles[0]);
    for (i, c) in consoles.iter().enumerate().skip(1) {
        let mut b = recorded(c).boots.remove(0);
        b.index = i as u32;
        k.boots.push(b);
    }
    k
}

#[test]
fn a_boot_off_the_others_pace_is_named_and_kept() {
    let k = boots(&CONSOLES_7_2_THREE_CS);
    let cs = [Tsc, Hpet, AcpiPm];
    let mut r = report(vec![k], &cs, &[WriteOnly, WriteStat, Pipe1]);
    r.boots = 4;
    crate::vm::bench::fill::fill(&mut r);
    // pipe1 in the second boot, on each of the three clocksources, and nothing else.
    assert_eq!(r.disturbed.len(), 3, "{:#?}", r.disturbed);
    for (d, cs) in r.disturbed.iter().zip(cs) {
        assert_eq!((d.boot, d.workload, d.clocksource), (2, Pipe1, cs));
        assert_eq!(d.boot_clocksource, Hpet);
        assert!(
            d.ratio > crate::vm::bench::disturbed::DISTURBED_RATIO,
            "{d:?}"
        );
        // Its control moved within the range a whole boot moves; the workload did not.
        assert!((0.67..1.5).contains(&d.control_ratio), "{d:?}");
    }
    // The boot stays in the run: four boots behind pipe1's figure.
    let run = r.runs.iter().find(|x| x.workload == Pipe1).unwrap();
    assert_eq!(run.boots, 4);
    let note = r.disturbed[0].note(4);
    assert!(note.starts_with("disturbed boot: 7.2"), "{note}");
    assert!(
        note.contains("boot 2 of 4 (started on hpet): tmpfs/pipe1 on tsc"),
        "{note}"
    );
    let j = serde_json::to_value(&r).unwrap();
    assert_eq!(j["disturbed"][0]["workload"], "pipe1");
}

#[test]
fn quiet_boots_name_no_disturbed_boot() {
    let k = boots(&CONSOLES_6_1_QUIET);
    let mut r = report(vec![k], &[Tsc, Hpet], &[Pipe1, WriteStat]);
    crate::vm::bench::fill::fill(&mut r);
    assert!(r.disturbed.is_empty(), "{:#?}", r.disturbed);
    assert!(serde_json::to_value(&r).unwrap().get("disturbed").is_none());
}
