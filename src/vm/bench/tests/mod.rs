//! The host side on guest output: the console parser and the rows built from the slots.

mod recorded;

use super::fixtures::{recorded, report, CONSOLE_6_1, CONSOLE_7_2};
use super::guest::{GuestHeader, Slot, SlotCosts, SlotRun};
use super::readtime::ReadPath;
use super::*;
use crate::vm::boot::clock::Clocksource::{Hpet, Tsc};
use crate::workload::WorkloadName::{Pingpong, Pipe1, Vfsmix, WriteOnly, WriteStat};

/// A slot on `cs` whose workloads cost `ns` each times the boot's `speed`, and whose precise
/// read costs `precise` × `speed`.
fn slot(round: u32, cs: Clocksource, speed: f64, precise: f64, ns: &[(WorkloadName, f64)]) -> Slot {
    Slot {
        round,
        clocksource_requested: cs,
        clocksource_used: cs.into(),
        switch_error: None,
        costs: Some(SlotCosts {
            precise_read_ns: precise * speed,
            precise_read_lower_ns: precise * speed - 5.0,
            precise_read_upper_ns: precise * speed + 5.0,
            precise_read_in_write_ns: Some(precise * speed),
            coarse_read_ns: 60.0 * speed,
            syscall_ns: 400.0 * speed,
            spin_ns: 900.0 * speed,
        }),
        runs: ns
            .iter()
            .map(|&(w, n)| SlotRun {
                fs: FsKind::Tmpfs,
                workload: w,
                iterations: 100,
                ns_per_op: n * speed,
                control_ns: Some(400.0 * speed),
            })
            .collect(),
        errors: Vec::new(),
    }
}

#[test]
fn slots_become_runs_and_paired_clocksource_rows() {
    // 7.2: write-stat pays two precise reads more on hpet (precise 300 → 600 ns: +600 ns per
    // op); pipe1 pays nothing. Boots differ in speed by up to 30%, rounds by 5%.
    let mut boots = Vec::new();
    for (b, speed) in [(0u32, 1.0), (1, 1.3), (2, 1.15)] {
        let mut slots = Vec::new();
        for r in 0..3u32 {
            let s = speed * (1.0 + 0.05 * f64::from(r));
            slots.push(slot(
                r,
                Tsc,
                s,
                300.0,
                &[(Pipe1, 17_000.0), (WriteStat, 30_000.0)],
            ));
            slots.push(slot(
                r,
                Hpet,
                s,
                600.0,
                &[(Pipe1, 17_000.0), (WriteStat, 30_600.0)],
            ));
        }
        boots.push(BenchBoot {
            header: Some(GuestHeader::default()),
            slots,
            ..BenchBoot::new(b, Tsc)
        });
    }
    let k = BenchKernel {
        kernel_package: "linux-image-cloud-amd64@sid".into(),
        kernel_release: Some("7.2.13+deb14-cloud-amd64".into()),
        hz: 250,
        hz_source: HzSource::Config,
        boots,
    };
    let mut r = report(vec![k], &[Tsc, Hpet], &[Pipe1, WriteStat]);
    super::fill::fill(&mut r);
    assert_eq!(r.runs.len(), 4);
    assert!(r.runs.iter().all(|x| x.samples == 9 && x.boots == 3));
    assert!(r
        .runs
        .iter()
        .all(|x| x.interval_method == Some(compare::IntervalMethod::BootsT)));
    assert_eq!(r.comparisons.len(), 2);
    let pipe = &r.comparisons[0];
    assert_eq!(
        (pipe.workload, pipe.from.as_str(), pipe.to.as_str()),
        (Pipe1, "tsc", "hpet")
    );
    assert_eq!(pipe.measured_delta_ns, crate::stats::Estimate::exact(0.0));
    assert_eq!(pipe.verdict, compare::Verdict::Agrees);
    let ws = &r.comparisons[1];
    assert_eq!(ws.pairs, 9);
    assert_eq!(ws.interval_method, Some(compare::IntervalMethod::BootsT));
    let m = ws.model_from.as_ref().unwrap();
    assert!(m.precise_per_op > 0.5, "{m:?}");
    assert!(
        ws.measured_delta_ns.lower > 400.0 && ws.measured_delta_ns.upper < 1100.0,
        "{:?}",
        ws.measured_delta_ns
    );
    assert!(ws.predicted_delta_ns.unwrap() > 0.0);
    // The JSON contract's names.
    let j = serde_json::to_value(&r).unwrap();
    for key in [
        "kernel_release",
        "clocksource_requested",
        "clocksource_used",
        "fs",
        "workload",
    ] {
        assert!(j["runs"][0].get(key).is_some(), "{key}");
    }
    for key in ["precise_read_ns", "coarse_read_ns", "syscall_ns"] {
        assert!(j["runs"][0]["costs"].get(key).is_some(), "{key}");
    }
    for key in ["point", "lower", "upper"] {
        assert!(j["runs"][0]["ns_per_op"].get(key).is_some(), "{key}");
        assert!(
            j["comparisons"][0]["measured_delta_ns"].get(key).is_some(),
            "{key}"
        );
    }
    assert_eq!(j["comparisons"][1]["kind"], "clocksource");
    assert!(j["comparisons"][1]["verdict"].is_string());
    assert!(j["comparisons"][1]["predicted_delta_ns"].is_number());
}

#[test]
fn a_refused_clocksource_is_reported_not_relabelled() {
    let mut s = slot(0, Hpet, 1.0, 300.0, &[]);
    s.clocksource_used = "tsc".into();
    s.switch_error = Some("the kernel kept 'tsc'".into());
    s.costs = None;
    let k = BenchKernel {
        kernel_release: Some("6.1.0-48-cloud-amd64".into()),
        hz: 250,
        boots: vec![BenchBoot {
            slots: vec![slot(0, Tsc, 1.0, 300.0, &[(Pipe1, 30_000.0)]), s],
            ..BenchBoot::new(0, Tsc)
        }],
        ..BenchKernel::default()
    };
    let mut r = report(vec![k], &[Tsc, Hpet], &[Pipe1]);
    super::fill::fill(&mut r);
    let hpet = r
        .runs
        .iter()
        .find(|x| x.clocksource_requested == Hpet)
        .unwrap();
    assert_eq!(hpet.clocksource_used, "tsc");
    assert!(hpet.ns_per_op.is_none() && hpet.refused.is_some());
    assert_eq!(r.refused.len(), 1);
    assert!(r.comparisons.is_empty());
}

#[test]
fn kernel_rows_cancel_the_boot_speed_with_the_control() {
    let kernel = |rel: &str, pipe: f64, speed: f64| BenchKernel {
        kernel_release: Some(rel.into()),
        hz: 250,
        boots: vec![BenchBoot {
            slots: (0..4)
                .map(|r| {
                    slot(
                        r,
                        Tsc,
                        speed * (1.0 + 0.01 * f64::from(r)),
                        300.0,
                        &[(Pipe1, pipe)],
                    )
                })
                .collect(),
            ..BenchBoot::new(0, Tsc)
        }],
        ..BenchKernel::default()
    };
    // B is 10% faster per op, but its boot ran 30% slower.
    let mut r = report(
        vec![
            kernel("6.12.117+deb13-cloud-amd64", 20_000.0, 1.0),
            kernel("7.2.13+deb14-cloud-amd64", 18_000.0, 1.3),
        ],
        &[Tsc],
        &[Pipe1],
    );
    super::fill::fill(&mut r);
    let c = r
        .comparisons
        .iter()
        .find(|c| c.kind == crate::vm::bench::ComparisonKind::Kernel)
        .unwrap();
    let p = c.percent_change.unwrap();
    assert!((p.point + 10.0).abs() < 1e-9, "{p:?}");
    assert_eq!(c.significant, Some(true));
    assert!(c.raw_percent_change.unwrap().point > 0.0);
    assert_eq!(
        c.interval_method,
        Some(compare::IntervalMethod::RoundsBootstrap)
    );
    let (a, b) = (c.model_from.as_ref().unwrap(), c.model_to.as_ref().unwrap());
    assert!(
        a.coarse_per_op > 1.5 && b.coarse_per_op < 0.01,
        "{a:?} {b:?}"
    );
}

#[test]
fn each_boot_starts_on_the_next_clocksource_and_only_the_first_counts() {
    use crate::vm::boot::plan::Plan;
    let mut cfg = BenchConfig::new();
    cfg.workloads = vec![crate::workload::WorkloadName::Pipe1];
    cfg.count_reads = 300;
    let plans: Vec<_> = (0..3)
        .map(|b| match plan(&cfg, b) {
            Plan::Bench(p) => p,
            other => panic!("a bench run's plan is a bench plan, not {other:?}"),
        })
        .collect();
    assert_eq!(plans[0].clocksources, [Clocksource::Tsc, Clocksource::Hpet]);
    assert_eq!(plans[1].clocksources, [Clocksource::Hpet, Clocksource::Tsc]);
    assert_eq!(plans[2].clocksources, [Clocksource::Tsc, Clocksource::Hpet]);
    assert_eq!((plans[0].reads, plans[1].reads), (300, 0));
    assert_ne!(plans[0].seed, plans[1].seed);
    // The host's defaults are the guest's: nothing is left for the guest to assume.
    assert_eq!(
        (plans[0].rounds, plans[0].slot_ms),
        (cfg.rounds, cfg.slot_ms)
    );
    let line = |b| crate::vm::boot::pipeline::cmdline(&cfg.boot, &cfg, b);
    let (a, b) = (line(0), line(1));
    assert!(
        a.contains("clocksource=tsc") && b.contains("clocksource=hpet"),
        "{a} | {b}"
    );
    assert!(!a.contains("tscope."), "{a}");
}

#[test]
fn a_console_cut_inside_a_slot_keeps_the_slots_before() {
    let h = serde_json::to_string(&GuestHeader::default()).unwrap();
    let s = serde_json::to_string(&slot(0, Tsc, 1.0, 300.0, &[(Pipe1, 1.0)])).unwrap();
    let console = format!(
        "noise\n{}\n{h}\n{}\n{}\n{s}\n{}\n{}\n{{\"round\":",
        serial::begin("bench"),
        serial::end("bench"),
        serial::begin("slot-0"),
        serial::end("slot-0"),
        serial::begin("slot-1"),
    );
    assert!(parse_console(&console).is_err());
    let c = parse_console(closed_part(&console)).unwrap();
    assert!(c.header.is_some());
    assert_eq!(c.slots.len(), 1);
}

/// Consoles recorded from real guests (`vm bench --console-dir`, default matrix under TCG):
/// bookworm's 6.1 and sid's 7.2, first boot each (with the read-counting pass).
#[test]
fn recorded_consoles_parse_into_slots_and_read_counts() {
    for (console, release) in [(CONSOLE_6_1, "6.1."), (CONSOLE_7_2, "7.2.")] {
        let c = parse_console(console).unwrap();
        let h = c.header.as_ref().unwrap();
        assert!(h.release.starts_with(release), "{}", h.release);
        assert!(h.errors.is_empty(), "{:?}", h.errors);
        assert!(h.available_clocksources.iter().any(|c| c == "hpet"));
        assert_eq!(c.slots.len(), 24);
        for (i, s) in c.slots.iter().enumerate() {
            assert_eq!(s.round as usize, i / 2);
            assert_eq!(s.clocksource_used, s.clocksource_requested);
            assert!(s.switch_error.is_none());
            let costs = s.costs.unwrap();
            assert!(costs.precise_read_ns > 0.0 && costs.syscall_ns > 0.0);
            assert_eq!(s.runs.len(), 5);
            assert!(s.runs.iter().all(|r| r.ns_per_op > 0.0 && r.iterations > 0));
        }
        // hpet is dearer to read than tsc in every round.
        for pair in c.slots.chunks(2) {
            let cost = |cs: &str| {
                let s = pair.iter().find(|s| s.clocksource_used == cs).unwrap();
                s.costs.unwrap().precise_read_ns
            };
            assert!(cost("hpet") > cost("tsc"));
        }
        let reads = c.reads.unwrap();
        let write_stat = reads
            .counts
            .iter()
            .find(|r| r.clocksource == Hpet && r.workload == WriteStat)
            .unwrap();
        // The multigrain kernel reads the clocksource twice per write-stat op; 6.1 never.
        let want = if release == "7.2." { 2.0 } else { 0.0 };
        assert!(
            (write_stat.reads_per_op - want).abs() < 0.2,
            "{write_stat:?}"
        );
    }
}

#[test]
fn recorded_consoles_give_every_row_a_verdict() {
    let mut r = report(
        vec![recorded(CONSOLE_6_1), recorded(CONSOLE_7_2)],
        &[Tsc, Hpet],
        &[Pipe1, Pingpong, WriteOnly, WriteStat, Vfsmix],
    );
    super::fill::fill(&mut r);
    assert_eq!(r.runs.len(), 2 * 2 * 5);
    assert!(r
        .runs
        .iter()
        .all(|x| x.samples == 12 && x.ns_per_op.is_some()));
    let cs: Vec<&BenchComparison> = r
        .comparisons
        .iter()
        .filter(|c| c.kind == crate::vm::bench::ComparisonKind::Clocksource)
        .collect();
    let ks: Vec<&BenchComparison> = r
        .comparisons
        .iter()
        .filter(|c| c.kind == crate::vm::bench::ComparisonKind::Kernel)
        .collect();
    assert_eq!((cs.len(), ks.len()), (10, 10));
    for c in &cs {
        assert_eq!(c.pairs, 12);
        let m = c.model_from.as_ref().unwrap();
        assert!(c.predicted_delta_ns.is_some());
        let e = c.measured_delta_ns;
        assert!(e.lower <= e.point && e.point <= e.upper);
        if c.kernel_release.as_deref().unwrap().starts_with("6.1.") || c.workload == Pipe1 {
            assert_eq!(m.precise_per_op, 0.0, "{c:?}");
        }
    }
    let ws = cs
        .iter()
        .find(|c| {
            c.workload == WriteStat && c.kernel_release.as_deref().unwrap().starts_with("7.2.")
        })
        .unwrap();
    assert!((ws.model_from.as_ref().unwrap().precise_per_op - 2.0).abs() < 0.1);
    assert!(ws.counted_reads_to.is_some());
    for k in &ks {
        assert!(k.percent_change.is_some() && k.significant.is_some());
        assert_eq!(k.kernels.as_ref().unwrap().len(), 2);
    }
    // One boot each: no spread between boots to read, and the rows say so.
    let one = Some(compare::IntervalMethod::RoundsBootstrap);
    assert!(r.comparisons.iter().all(|c| c.interval_method == one));
    assert!(r.runs.iter().all(|x| x.interval_method == one));
    let j = serde_json::to_value(&r).unwrap();
    assert_eq!(j["comparisons"][0]["interval_method"], "rounds_bootstrap");
}

/// A 7.2 boot (2 rounds, pipe1 and write-stat) whose read pass timed the precise-read leaves
/// with function_graph, on tsc and on hpet, in a clock syscall loop and in each workload.
const CONSOLE_7_2_TIMES: &str =
    include_str!("../../../../tests/data/vm-bench/7.2-readtime.console");

#[test]
fn the_in_path_read_time_prices_the_prediction() {
    let k = recorded(CONSOLE_7_2_TIMES);
    let times = &k.boots[0].reads.as_ref().unwrap().times;
    let get = |cs: Clocksource, w: ReadPath| {
        times
            .iter()
            .find(|t| t.clocksource == cs && t.workload == w)
            .unwrap_or_else(|| panic!("no {cs} {w:?}"))
            .read_ns
            .point
    };
    let (sys, ws) = (ReadPath::Syscall, ReadPath::Loop(WriteStat));
    let (sys, path) = (get(Hpet, sys) - get(Tsc, sys), get(Hpet, ws) - get(Tsc, ws));
    // pipe1 takes no precise read on 7.2: nothing traced there.
    assert!(times.iter().all(|t| t.workload != ReadPath::Loop(Pipe1)));
    let mut r = report(vec![k], &[Tsc, Hpet], &[Pipe1, WriteStat]);
    super::fill::fill(&mut r);
    let row = |w: WorkloadName| {
        r.comparisons
            .iter()
            .find(|c| c.kind == crate::vm::bench::ComparisonKind::Clocksource && c.workload == w)
            .unwrap()
    };
    let ws = row(WriteStat);
    assert_eq!(ws.precise_read_price.as_deref(), Some("in-path"));
    assert_eq!(ws.delta_read_in_path_ns.unwrap().point, path);
    assert_eq!(ws.delta_read_in_syscall_ns.unwrap().point, sys);
    let m = ws.model_from.as_ref().unwrap();
    let d_coarse = ws.delta_coarse_read_ns.unwrap().point;
    let at = |p: f64| m.precise_per_op * p + m.coarse_per_op * d_coarse;
    let d_syscall = ws.delta_precise_read_ns.unwrap().point;
    let price = d_syscall + path - sys;
    assert_eq!(ws.delta_precise_read_price_ns.unwrap().point, price);
    assert!((ws.predicted_delta_ns.unwrap() - at(price)).abs() < 1e-9);
    assert!((ws.predicted_syscall_delta_ns.unwrap() - at(d_syscall)).abs() < 1e-9);
    let p1 = row(Pipe1);
    assert_eq!(p1.precise_read_price.as_deref(), Some("syscall"));
    assert!(p1.delta_read_in_path_ns.is_none());
}
