//! The rules on figures recorded on real runs (this repository's KVM/EPYC development machine,
//! `tscope probe --json` with and without `--emulate-trap`), not invented ones.

use super::*;
use crate::detect::sync::{PairResult, SyncResult};

fn est(p: f64) -> Option<Estimate> {
    Some(Estimate {
        point: p,
        lower: p * 0.99,
        upper: p * 1.01,
    })
}

/// rdtsc natively: 8.51 ns = 22.1 ticks at 2596 MHz; getppid 110 ns; cpuid 3577 ns.
fn native() -> TrapInputs {
    TrapInputs {
        cost_ns: est(8.51),
        cost_ticks: Some(22.1),
        cpuid_ns: est(3577.0),
        null_syscall_ns: est(110.1),
    }
}

#[test]
fn native_rdtsc_is_not_trapped() {
    let v = trapped("rdtsc", &native());
    assert!(!v.holds, "{v:?}");
    assert!(v.summary.contains("native read"));
    assert_eq!(v.evidence["native_max_ticks"], NATIVE_MAX_TICKS);
}

#[test]
fn trapped_rdtsc_is_found() {
    // With PR_TSC_SIGSEGV: 2.9 µs per read = ~7500 ticks.
    let t = TrapInputs {
        cost_ns: est(2900.0),
        cost_ticks: Some(7528.0),
        ..native()
    };
    let v = trapped("rdtsc", &t);
    assert!(v.holds, "{v:?}");
    assert!(v.evidence["ratio_to_null_syscall"].as_f64().unwrap() > 20.0);
}

#[test]
fn slow_but_cheaper_than_a_syscall_is_not_a_trap() {
    // 300 ticks but far below a kernel entry: e.g. an emulated CPU; both conditions are needed.
    let t = TrapInputs {
        cost_ns: est(30.0),
        cost_ticks: Some(300.0),
        ..native()
    };
    assert!(!trapped("rdtsc", &t).holds);
}

#[test]
fn unmeasured_source_is_skipped_not_held() {
    let v = trapped("rdtscp", &TrapInputs::default());
    assert!(!v.holds);
    assert!(v.evidence["skipped"].is_string());
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
