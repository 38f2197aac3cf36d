use crate::export::{export, Format};
use crate::trace::FsKind;
use crate::vm::bench::{self, BenchBoot, BenchKernel, BenchReport};
use crate::vm::boot::accel::AccelChoice;
use crate::vm::boot::clock::Clocksource;
use crate::vm::boot::kconfig::HzSource;
use crate::vm::boot::qemu::Accel;
use crate::workload::WorkloadName;

/// One kernel of one recorded boot's console.
fn kernel(text: &str) -> BenchKernel {
    let c = bench::parse_console(text).unwrap();
    BenchKernel {
        kernel_package: "recorded".into(),
        kernel_release: c.header.as_ref().map(|h| h.release.clone()),
        hz: 250,
        hz_source: HzSource::Config,
        boots: vec![BenchBoot {
            header: c.header,
            slots: c.slots,
            reads: c.reads,
            pairs: c.pairs,
            ..BenchBoot::new(0, Clocksource::Tsc)
        }],
    }
}

/// A report built from the consoles recorded in tests/data/vm-bench (6.1 and 7.2, first
/// boot each).
fn recorded() -> BenchReport {
    let mut r = BenchReport {
        schema_version: bench::VM_BENCH_SCHEMA_VERSION,
        tool: "tscope test".into(),
        created_unix_s: 0,
        accel: AccelChoice {
            requested: "tcg".into(),
            used: Accel::Tcg,
            emulation: true,
            kvm_module: None,
            note: None,
        },
        seed: 1,
        boots: 1,
        rounds: 12,
        slot_ms: 60,
        clocksources: vec![Clocksource::Tsc, Clocksource::Hpet],
        filesystems: vec![FsKind::Tmpfs],
        workloads: vec![
            WorkloadName::Pipe1,
            WorkloadName::Pingpong,
            WorkloadName::WriteOnly,
            WorkloadName::WriteStat,
            WorkloadName::Vfsmix,
        ],
        kernels: vec![
            kernel(include_str!(
                "../../../tests/data/vm-bench/6.1-boot1.console"
            )),
            kernel(include_str!(
                "../../../tests/data/vm-bench/7.2-boot1.console"
            )),
        ],
        runs: Vec::new(),
        comparisons: Vec::new(),
        refused: Vec::new(),
        kernel_control: bench::rows::KERNEL_CONTROL.into(),
        counted: Vec::new(),
        count_errors: Vec::new(),
        disturbed: Vec::new(),
        knob: Vec::new(),
        host_cpu: Some("a test CPU".into()),
        host_kernel: None,
        stopped: false,
    };
    bench::fill::fill(&mut r);
    r
}

#[test]
fn every_form_renders_and_the_paragraph_keeps_72_columns() {
    let r = recorded();
    let text = String::from_utf8(export(&r, Format::Table).unwrap()).unwrap();
    assert!(
        text.contains("tsc → hpet") && text.contains("write-stat"),
        "{text}"
    );
    assert!(text.contains("TCG: emulated figures"), "{text}");
    let md = String::from_utf8(export(&r, Format::Markdown).unwrap()).unwrap();
    assert!(md.contains("### kernel A/B"), "{md}");
    let csv = String::from_utf8(export(&r, Format::Csv).unwrap()).unwrap();
    assert_eq!(csv.lines().count(), 1 + r.comparisons.len());
    let json: serde_json::Value =
        serde_json::from_slice(&export(&r, Format::Json).unwrap()).unwrap();
    assert_eq!(
        json["comparisons"].as_array().unwrap().len(),
        r.comparisons.len()
    );
    assert!(super::svg(&r).unwrap().contains("write-stat/tmpfs"));
    let msg = super::commit_message(&r, "tscope vm bench --kernel-package a --kernel-package b");
    assert!(msg.lines().all(|l| l.chars().count() <= 72), "{msg}");
    assert!(
        msg.contains("emulated figures") && msg.contains("a test CPU"),
        "{msg}"
    );
    assert!(msg.contains("write-stat on tmpfs, tsc"), "{msg}");
}

#[test]
fn percent_reads_as_a_change_with_its_half_width() {
    let e = crate::stats::Estimate {
        point: -9.8,
        lower: -11.0,
        upper: -8.6,
    };
    assert_eq!(super::percent(&e), "−9.8% ± 1.2%");
}

#[test]
fn a_count_within_rounding_of_zero_prints_as_zero() {
    assert_eq!(super::per_op(-0.0005), "0.00");
    assert_eq!(super::per_op(1.999), "2.00");
    assert_eq!(super::per_op(-0.25), "-0.25");
}

#[test]
fn the_counted_calls_stand_in_the_paragraph_and_the_tables_only_with_count() {
    use crate::vm::bench::counted::{Counted, CountedRow};
    let plain = recorded();
    let mut r = recorded();
    let names = r.kernel_names();
    r.counted = [(0.0, 2.0), (2.0, 1.0)]
        .iter()
        .zip(&names)
        .map(|(&(p, c), k)| CountedRow {
            kernel_release: k.clone(),
            clocksource: Clocksource::Tsc,
            fs: FsKind::Tmpfs,
            workload: WorkloadName::WriteStat,
            counted: Counted {
                precise_per_op: p,
                coarse_per_op: c,
            },
        })
        .collect();
    bench::fill::fill(&mut r);
    let text = super::commit_message(&r, "tscope vm bench --count");
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("precise reads 0.00 → 2.00, coarse 2.00 → 1.00 per op counted by kprobes"),
        "{text}"
    );
    assert!(text.lines().all(|l| l.chars().count() <= 72), "{text}");
    let table = String::from_utf8(export(&r, Format::Table).unwrap()).unwrap();
    assert!(table.contains("counted precise/coarse per op"), "{table}");
    assert!(table.contains("0.00/2.00 → 2.00/1.00"), "{table}");
    let csv = String::from_utf8(export(&r, Format::Csv).unwrap()).unwrap();
    assert!(csv
        .lines()
        .next()
        .unwrap()
        .contains("counted_to_precise_per_op"));
    // Without --count: none of it.
    let text = super::commit_message(&plain, "tscope vm bench");
    assert!(!text.contains("kprobes"));
    let table = String::from_utf8(export(&plain, Format::Table).unwrap()).unwrap();
    assert!(!table.contains("counted precise/coarse"));
    let csv = String::from_utf8(export(&plain, Format::Csv).unwrap()).unwrap();
    assert!(!csv.contains("counted_to"));
}

/// A disturbed boot is named under the tables, in the table and the Markdown alike.
#[test]
fn a_disturbed_boot_is_a_note_under_the_tables() {
    let mut r = recorded();
    r.boots = 4;
    r.disturbed = vec![bench::disturbed::DisturbedBoot {
        kernel_release: "7.2.13+deb14-cloud-amd64".into(),
        boot: 2,
        boot_clocksource: Clocksource::Hpet,
        clocksource: Clocksource::Tsc,
        fs: FsKind::Tmpfs,
        workload: WorkloadName::Pipe1,
        ns_per_op: 9345.4,
        others_ns_per_op: 1807.6,
        control_ratio: 1.27,
        ratio: 4.07,
    }];
    let want = "disturbed boot: 7.2.13+deb14-cloud-amd64 boot 2 of 4 (started on hpet): \
                tmpfs/pipe1 on tsc ran 9345 ns/op, 5.2× the other boots' median 1808 ns/op \
                while its null syscall moved ×1.27";
    assert!(super::notes(&r).iter().any(|n| n.starts_with(want)));
    for f in [Format::Table, Format::Markdown] {
        let text = String::from_utf8(export(&r, f).unwrap()).unwrap();
        assert!(text.contains("disturbed boot: 7.2.13"), "{text}");
    }
}

#[test]
fn the_live_knob_rows_stand_in_the_table_the_report_and_the_paragraph() {
    let mut r = recorded();
    r.clocksources = vec![Clocksource::Tsc];
    r.workloads = vec![WorkloadName::WriteStat];
    r.filesystems = vec![FsKind::Tmpfs, FsKind::Ext4, FsKind::Xfs];
    r.kernels = vec![
        kernel(include_str!(
            "../../../tests/data/vm-bench/knob-6.12.console"
        )),
        kernel(include_str!(
            "../../../tests/data/vm-bench/knob-7.2.console"
        )),
    ];
    bench::fill::fill(&mut r);
    let text = String::from_utf8(export(&r, Format::Table).unwrap()).unwrap();
    assert!(
        text.contains("live knob") && text.contains("write4-stat"),
        "{text}"
    );
    assert!(
        text.contains("calibration") && text.contains("the pair checks out"),
        "{text}"
    );
    let section = super::report_section(&r, "tscope vm bench");
    assert!(section.contains("The live knob in the guest"), "{section}");
    assert!(section.contains("| write4-stat |"), "{section}");
    let msg = super::commit_message(&r, "tscope vm bench");
    assert!(msg.contains("inode updates 0.00"), "{msg}");
    assert!(msg.lines().all(|l| l.chars().count() <= 72), "{msg}");
}

/// The recorded kernel A/B (docs/figures/vm-bench-ab.json: 6.12 against 7.2, three boots
/// each, tsc and hpet, six workloads on tmpfs), its kernel rows' LKP decisions dropped and
/// filled again from its boots, as `vm bench` and `show` fill them.
fn recorded_ab() -> BenchReport {
    let text = include_str!("../../../docs/figures/vm-bench-ab.json");
    let mut r: BenchReport = serde_json::from_str(text).unwrap();
    for c in &mut r.comparisons {
        c.lkp = None;
    }
    crate::vm::bench::lkp::apply(&mut r);
    r
}

#[test]
fn the_kernel_ab_takes_lkps_rule_on_the_boots() {
    use crate::compare::lkp::Decision;
    let r = recorded_ab();
    let row = |w: WorkloadName, cs: Clocksource| {
        r.comparisons
            .iter()
            .find(|c| {
                c.kind == crate::vm::bench::ComparisonKind::Kernel
                    && c.workload == w
                    && c.clocksource == Some(cs)
            })
            .unwrap()
    };
    for c in r.comparisons.iter().filter(|c| c.kernels.is_some()) {
        let l = c.lkp.as_ref().unwrap();
        assert_eq!((l.base.samples, l.new.samples, l.base.trimmed), (3, 3, 0));
    }
    // fifo1 on tsc, by hand from the boots' medians of ns per op: 6.12 at 2919.27, 2942.37,
    // 3023.04; 7.2 at 3084.51, 3133.55, 3161.66. The new minimum is above the old median and
    // the new median above the old maximum, the means 1.0557 apart: LKP's increase. The row,
    // divided by the null syscall, holds 0: no change, and the note says why on both sides.
    let l = row(WorkloadName::Fifo1, Clocksource::Tsc)
        .lkp
        .as_ref()
        .unwrap();
    assert_eq!(l.decision, Decision::Increase);
    assert!((l.base.median - 2942.37).abs() < 0.01, "{l:?}");
    assert!((l.new.min - 3084.51).abs() < 0.01, "{l:?}");
    assert!((l.ratio.unwrap() - 1.0557).abs() < 1e-4, "{l:?}");
    assert!(!l.agrees);
    let note = l.note.as_deref().unwrap();
    assert!(
        note.starts_with(
            "LKP: the sample ranges lie apart and the ratio 1.056 is over 1.01; tscope: the \
             change divided by the syscall:getppid timed before each loop, +7.3%"
        ),
        "{note}"
    );
    assert!(note.ends_with("that holds 0"), "{note}");
    // pipe1 on tsc: 2803.05–2997.77 against 2618.89–2653.58, a decrease both sides call.
    let p = row(WorkloadName::Pipe1, Clocksource::Tsc);
    let l = p.lkp.as_ref().unwrap();
    assert_eq!(l.decision, Decision::Decrease);
    assert!(l.agrees && l.note.is_none(), "{l:?}");
    assert_eq!(
        crate::vm::bench::lkp::word(p),
        Some(crate::compare::Change::Faster)
    );
    // The whole-file round trip keeps it.
    let back: BenchReport = serde_json::from_slice(&export(&r, Format::Json).unwrap()).unwrap();
    let decisions = |r: &BenchReport| -> Vec<Option<Decision>> {
        r.comparisons
            .iter()
            .map(|c| c.lkp.as_ref().map(|l| l.decision))
            .collect()
    };
    assert_eq!(decisions(&back), decisions(&r));
}

#[test]
fn the_kernel_ab_prints_lkps_layout() {
    let r = recorded_ab();
    let text = String::from_utf8(export(&r, Format::Table).unwrap()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .position(|l| *l == "---------------- ---------------------------")
        .unwrap_or_else(|| panic!("no LKP table in\n{text}"));
    assert_eq!(lines[at - 1], "6.12.117+deb13-c 7.2.13+deb14-cloud-amd64");
    assert!(
        lines[at + 1].starts_with("         %stddev     %change         %stddev  "),
        "{}",
        lines[at + 1]
    );
    assert!(
        lines[at + 1].ends_with("LKP        tscope     why they differ"),
        "{}",
        lines[at + 1]
    );
    let line = |metric: &str| {
        *lines
            .iter()
            .find(|l| l.contains(&format!("  {metric}  ")))
            .unwrap_or_else(|| panic!("no {metric} in\n{text}"))
    };
    // The base mean in ten columns, `± N%` over 2%, `%change` ending at 27, the new mean at 38.
    let l = line("pipe1.tmpfs.tsc.ns_per_op");
    let cols = |a: usize, b: usize| l.chars().skip(a).take(b - a).collect::<String>();
    assert_eq!(cols(0, 16), "   2891.04 ±  3%", "{l}");
    assert_eq!(cols(16, 27), "      -8.8%", "{l}");
    assert_eq!(cols(27, 38), "    2637.07", "{l}");
    assert!(l.ends_with("decrease   faster"), "{l}");
    let l = line("write-stat.tmpfs.hpet.ns_per_op");
    assert!(l.ends_with("increase   slower"), "{l}");
    let l = line("fifo1.tmpfs.tsc.ns_per_op");
    assert!(
        l.contains("increase   no change  LKP: the sample ranges lie apart"),
        "{l}"
    );
    // Markdown keeps the layout in a fence.
    let md = String::from_utf8(export(&r, Format::Markdown).unwrap()).unwrap();
    assert!(
        md.contains("```text\n6.12.117+deb13-c 7.2.13+deb14-cloud-amd64\n"),
        "{md}"
    );
}
