//! The rules on figures recorded on real runs (this repository's KVM/EPYC development machine,
//! `tscope probe --json` with and without `--emulate-trap`), not invented ones.

use super::*;
use crate::detect::sync::{PairResult, SyncResult};
use crate::stats::Estimate;

fn est(p: f64) -> Option<Estimate> {
    Some(Estimate {
        point: p,
        lower: p * 0.99,
        upper: p * 1.01,
    })
}

#[test]
fn vdso_fallback_rules() {
    // vdso:monotonic 20.2 ns vs syscall 145.5 ns: served by the vDSO.
    let v = vdso_fallback("monotonic", est(20.2), est(145.5), Some("tsc"));
    assert!(!v.holds, "{v:?}");
    // vdso:process_cputime 368 ns vs 364 ns: glibc makes the syscall (a real fallback).
    let v = vdso_fallback("process_cputime", est(368.3), est(364.2), Some("tsc"));
    assert!(v.holds);
    // Under hpet every vDSO read is a syscall, and the cause names the clocksource.
    let v = vdso_fallback("monotonic", est(1530.0), est(1490.0), Some("hpet"));
    assert!(v.holds);
    assert!(v.evidence["likely_cause"]
        .as_str()
        .unwrap()
        .contains("VDSO_CLOCKMODE_NONE"));
    // Trapped TSC inside the vDSO: far slower than the syscall, not a fallback.
    let v = vdso_fallback("monotonic", est(2950.0), est(146.0), Some("tsc"));
    assert!(!v.holds);
    assert!(v.summary.contains("trapped"));
}

#[test]
fn kvm_clock_cause_mentions_the_stable_bit() {
    assert!(fallback_cause(Some("kvm-clock")).contains("STABLE_BIT"));
}

fn pair(warps: u64, back: u64, bounds: Option<[i64; 2]>) -> PairResult {
    PairResult {
        cpus: [0, 1],
        handoffs: 1000,
        warps,
        max_backwards_ticks: back,
        offset_bounds_ticks: bounds,
        pinned: true,
    }
}

#[test]
fn sync_rules() {
    let hz = Some(2.6e9);
    let ok = SyncResult {
        pairs: vec![pair(0, 0, Some([-260, 390]))],
        skipped: None,
    };
    let v = tsc_unsynchronized(&ok, hz);
    assert!(!v.holds);
    assert_eq!(v.evidence["skew_bound_ns"].as_f64().unwrap().round(), 150.0);
    let bad = SyncResult {
        pairs: vec![pair(12, 2600, Some([1500, 2600]))],
        skipped: None,
    };
    let v = tsc_unsynchronized(&bad, hz);
    assert!(v.holds);
    assert_eq!(
        v.evidence["max_backwards_ns"].as_f64().unwrap().round(),
        1000.0
    );
    let one = SyncResult {
        pairs: vec![],
        skipped: Some("only one CPU".into()),
    };
    let v = tsc_unsynchronized(&one, hz);
    assert!(!v.holds && v.summary.contains("only one CPU"));
}

#[test]
fn clock_warp_rules() {
    let calm = ClockWatch {
        id: "vdso:monotonic".into(),
        ..Default::default()
    };
    assert!(!clock_warps(std::slice::from_ref(&calm)).holds);
    let back = ClockWatch {
        id: "rdtsc".into(),
        backwards: 1,
        max_backwards_ns: Some(40.0),
        ..Default::default()
    };
    let v = clock_warps(&[calm, back]);
    assert!(v.holds && v.summary.contains("rdtsc"));
}

#[test]
fn forward_jumps_alone_are_inconclusive() {
    let jump = ClockWatch {
        id: "vdso:monotonic".into(),
        forward_jumps: 1,
        ..Default::default()
    };
    let v = clock_warps(std::slice::from_ref(&jump));
    assert!(!v.holds, "{v:?}");
    assert_eq!(v.state, VerdictState::Inconclusive);
    assert!(v.inconclusive_reason.unwrap().contains("preempted"));
    let back = ClockWatch {
        backwards: 1,
        ..jump
    };
    assert_eq!(clock_warps(&[back]).state, VerdictState::Yes);
}

#[test]
fn thin_or_unpinned_sync_checks_are_inconclusive() {
    let hz = Some(2.6e9);
    // 397 handoffs: what the check made under a CPU load.
    let mut few = pair(0, 0, Some([-260, 390]));
    few.handoffs = 397;
    let v = tsc_unsynchronized(
        &SyncResult {
            pairs: vec![few],
            skipped: None,
        },
        hz,
    );
    assert_eq!(v.state, VerdictState::Inconclusive, "{v:?}");
    assert!(!v.holds && v.summary.starts_with("inconclusive: only 397"));
    let one_way = pair(0, 0, None);
    let v = tsc_unsynchronized(
        &SyncResult {
            pairs: vec![one_way],
            skipped: None,
        },
        hz,
    );
    assert_eq!(v.state, VerdictState::Inconclusive);
    let mut unpinned = pair(0, 0, Some([-260, 390]));
    unpinned.pinned = false;
    let v = tsc_unsynchronized(
        &SyncResult {
            pairs: vec![unpinned],
            skipped: None,
        },
        hz,
    );
    assert!(v.inconclusive_reason.unwrap().contains("pin"));
    // A backwards step is proof however few handoffs there were.
    let mut warped = pair(3, 2600, Some([1500, 2600]));
    warped.handoffs = 10;
    let v = tsc_unsynchronized(
        &SyncResult {
            pairs: vec![warped],
            skipped: None,
        },
        hz,
    );
    assert_eq!(v.state, VerdictState::Yes);
}

#[test]
fn an_interval_across_a_threshold_is_inconclusive() {
    // The vDSO at 60 ns against a 110 ns syscall, both wide: the ratio spans 0.5.
    let wide = |p: f64, w: f64| {
        Some(Estimate {
            point: p,
            lower: p - w,
            upper: p + w,
        })
    };
    let v = vdso_fallback(
        "monotonic",
        wide(60.0, 10.0),
        wide(110.0, 10.0),
        Some("tsc"),
    );
    assert_eq!(v.state, VerdictState::Inconclusive, "{v:?}");
    let v = vdso_fallback("monotonic", est(26.0), est(153.0), Some("tsc"));
    assert_eq!(v.state, VerdictState::No);
}

#[test]
fn old_files_without_a_state_still_read() {
    let v: Verdict =
        serde_json::from_str(r#"{"holds": true, "evidence": {}, "summary": "x"}"#).unwrap();
    assert!(v.holds && v.inconclusive_reason.is_none());
    let json = serde_json::to_value(Verdict::inconclusive("thin".into(), Value::Null)).unwrap();
    assert_eq!(json["state"], "inconclusive");
    assert_eq!(json["inconclusive_reason"], "thin");
    assert_eq!(json["holds"], false);
}

/// An estimate with its interval given.
fn span(point: f64, lower: f64, upper: f64) -> Option<Estimate> {
    Some(Estimate {
        point,
        lower,
        upper,
    })
}

#[test]
fn no_vdso_mode_decides_a_fallback_whatever_the_timing() {
    // The TCG acpi_pm guest of docs/vm.md: vdso:monotonic 751 ns, syscall 624 ns (ratio 1.2);
    // with a TCG-wide interval on the vDSO read the ratio's interval crosses 0.5: inconclusive alone.
    let noisy = (span(751.0, 300.0, 1300.0), span(624.0, 560.0, 690.0));
    let t = vdso_fallback("monotonic", noisy.0, noisy.1, Some("tsc"));
    assert_eq!(t.state, VerdictState::Inconclusive, "{t:?}");
    for cs in ["acpi_pm", "hpet"] {
        for clock in READS_CLOCKSOURCE {
            let v = vdso_fallback(clock, noisy.0, noisy.1, Some(cs));
            assert_eq!(v.state, VerdictState::Yes, "{cs} {clock}: {v:?}");
            assert!(v.holds && v.inconclusive_reason.is_none());
            assert_eq!(v.evidence["decided_by"], "clocksource");
            assert_eq!(v.evidence["vdso_capability"], "none");
            assert_eq!(v.evidence["vdso_clock_mode"], "VDSO_CLOCKMODE_NONE");
            assert_eq!(v.evidence["timing_state"], "inconclusive");
            let d = v.evidence["disagreement"].as_str().unwrap();
            assert!(
                d.starts_with("timing says inconclusive") && d.contains(cs),
                "{d}"
            );
            assert!(v.summary.contains(d), "{}", v.summary);
        }
    }
    // A clear fallback (hpet: 764 against 725 ns): fact and timing agree, nothing to flag.
    let v = vdso_fallback("realtime", est(764.0), est(725.0), Some("hpet"));
    assert_eq!(v.state, VerdictState::Yes);
    assert_eq!(v.evidence["timing_state"], "yes");
    assert!(v.evidence["disagreement"].is_null());
    assert!(v.evidence["kernel_source"]
        .as_str()
        .unwrap()
        .contains("arch/x86/kernel/hpet.c"));
}

#[test]
fn timing_that_looks_like_the_vdso_is_overruled_and_said_so() {
    // 84.5 ns against 525 ns is what the vDSO serving monotonic looks like in a TCG guest on
    // tsc; on acpi_pm that cannot be the vDSO, and the evidence names the conflict.
    let tsc = vdso_fallback("monotonic", est(84.5), est(525.0), Some("tsc"));
    assert_eq!(tsc.state, VerdictState::No);
    assert_eq!(tsc.evidence["decided_by"], "timing");
    assert_eq!(tsc.evidence["vdso_capability"], "yes");
    let v = vdso_fallback("monotonic", est(84.5), est(525.0), Some("acpi_pm"));
    assert_eq!(v.state, VerdictState::Yes, "{v:?}");
    assert_eq!(v.evidence["timing_state"], "no");
    let d = v.evidence["disagreement"].as_str().unwrap();
    assert!(
        d.starts_with("timing says served by the vDSO")
            && d.contains("clocksource acpi_pm has no vDSO mode"),
        "{d}"
    );
    // Slower than the syscall reads as a trapped counter on tsc, but on hpet the vDSO reads no
    // counter at all.
    assert_eq!(
        vdso_fallback("monotonic", est(2950.0), est(1000.0), Some("tsc")).state,
        VerdictState::No
    );
    let v = vdso_fallback("monotonic", est(2950.0), est(1000.0), Some("hpet"));
    assert!(v.holds);
    assert!(v.evidence["disagreement"]
        .as_str()
        .unwrap()
        .contains("slower than the syscall"));
}

#[test]
fn coarse_clocks_and_possible_modes_follow_the_timing() {
    // The coarse clocks never read the clocksource: acpi_pm's vdso:realtime_coarse 101 ns
    // against a 361 ns syscall is served by the vDSO.
    let v = vdso_fallback("realtime_coarse", est(101.0), est(361.0), Some("acpi_pm"));
    assert_eq!(v.state, VerdictState::No, "{v:?}");
    assert_eq!(v.evidence["reads_clocksource"], false);
    assert_eq!(v.evidence["decided_by"], "timing");
    // kvm-clock, xen and unknown names: the vDSO may or may not serve them, the timing says.
    let noisy = (span(751.0, 300.0, 1300.0), span(624.0, 560.0, 690.0));
    for cs in [
        Some("kvm-clock"),
        Some("xen"),
        Some("arch_sys_counter"),
        Some("riscv_clocksource"),
        None,
    ] {
        let v = vdso_fallback("monotonic", est(20.2), est(145.5), cs);
        assert_eq!(v.state, VerdictState::No, "{cs:?}");
        let v = vdso_fallback("monotonic", noisy.0, noisy.1, cs);
        assert_eq!(v.state, VerdictState::Inconclusive, "{cs:?}");
        assert!(v.evidence["disagreement"].is_null());
    }
    assert_eq!(vdso_capability(Some("kvm-clock")), VdsoCapability::Possible);
    assert_eq!(
        vdso_capability(Some("riscv_clocksource")),
        VdsoCapability::Unknown
    );
    assert_eq!(vdso_capability(None), VdsoCapability::Unknown);
}

#[test]
fn the_clocksource_table_agrees_with_the_capable_list() {
    for row in CLOCKSOURCE_VDSO {
        let none = row.capability == VdsoCapability::None;
        assert_eq!(none, row.mode == "VDSO_CLOCKMODE_NONE", "{row:?}");
        assert!(row.kernel.contains(".c"), "{row:?}");
    }
    for cs in VDSO_CAPABLE {
        assert_ne!(vdso_capability(Some(cs)), VdsoCapability::None, "{cs}");
    }
    // Not measured is still not measured, whatever the clocksource.
    let v = vdso_fallback("monotonic", None, est(624.0), Some("acpi_pm"));
    assert!(!v.holds && v.evidence["skipped"].is_string());
}

#[test]
fn causes_follow_the_table() {
    assert!(fallback_cause(Some("xen")).contains("PVCLOCK_TSC_STABLE_BIT"));
    assert!(fallback_cause(Some("tsc")).contains("vDSO-capable"));
    assert!(fallback_cause(Some("acpi_pm")).contains("VDSO_CLOCKMODE_NONE"));
    assert!(fallback_cause(Some("riscv_clocksource")).contains("not in tscope's table"));
}
