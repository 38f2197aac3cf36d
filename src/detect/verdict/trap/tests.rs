//! The trap rule on distributions recorded with `tscope detect --json`, with and without
//! `--emulate-trap` (`tests/data/trap/`, how each was taken in its README and `recorded`).

use super::*;
use crate::detect::verdict::VerdictState;

fn recorded(name: &str) -> TrapSamples {
    let path = format!("{}/tests/data/trap/{name}.json", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let v: Value = serde_json::from_str(&text).unwrap();
    serde_json::from_value(v["samples"].clone()).unwrap()
}

fn decide(s: &TrapSamples, read: Option<Distribution>) -> Verdict {
    trapped(
        "rdtsc",
        s,
        &TrapInputs {
            read,
            probe_cost_ns: None,
        },
    )
}

#[test]
fn native_reads_are_not_trapped() {
    let s = recorded("kvm-xeon-native");
    for read in [s.rdtsc, s.rdtscp] {
        let v = decide(&s, read);
        assert_eq!(v.state, VerdictState::No, "{v:?}");
        assert!(v.summary.contains("a native read"), "{}", v.summary);
        // The evidence carries the whole distribution and both baselines.
        for k in ["read", "native", "cpuid", "null_syscall"] {
            assert!(v.evidence[k]["cost_ns"]["p99"].is_number(), "{k}");
        }
        let cycles = v.evidence["read_cycles"]["p50"].as_f64().unwrap();
        assert!(cycles < NATIVE_MAX_CYCLES, "{cycles}");
    }
}

#[test]
fn emulated_traps_are_found() {
    let s = recorded("kvm-xeon-emulate-trap");
    for read in [s.rdtsc, s.rdtscp] {
        let v = decide(&s, read);
        assert_eq!(v.state, VerdictState::Yes, "{v:?}");
        // A signal round trip: far above the null syscall, below the cpuid exit here.
        assert_eq!(v.evidence["floor_from"], "null_syscall");
        assert!(v.evidence["ratio_p10_to_floor"].as_f64().unwrap() > 10.0);
        assert!(v.evidence["read_cycles"]["p10"].as_f64().unwrap() > 10.0 * NATIVE_MAX_CYCLES);
    }
}

#[test]
fn cpuid_is_a_floor_only_where_it_exits() {
    let s = recorded("kvm-xeon-native");
    let v = decide(&s, s.rdtsc);
    assert_eq!(v.evidence["cpuid_exits"], true);
    // Under TCG cpuid is a helper call, on bare metal a slow native instruction: not a floor.
    for (hv, vendor) in [(true, Some("QEMU TCG")), (false, None)] {
        let other = TrapSamples {
            hypervisor: hv,
            hypervisor_vendor: vendor.map(str::to_string),
            ..s.clone()
        };
        let v = decide(&other, other.rdtsc);
        assert_eq!(v.evidence["cpuid_exits"], false, "{vendor:?}");
        assert_eq!(v.state, VerdictState::No);
    }
    // Bare metal with the trapped figures: the null syscall floor still finds the trap.
    let t = TrapSamples {
        hypervisor: false,
        hypervisor_vendor: None,
        ..recorded("kvm-xeon-emulate-trap")
    };
    assert_eq!(decide(&t, t.rdtsc).state, VerdictState::Yes);
}

#[test]
fn a_cpuid_floor_cheaper_than_a_syscall_is_used() {
    // A hypervisor whose exits cost less than a null syscall: the recorded cpuid scaled to
    // 600 core cycles at p10 (still an exit) and the null syscall to ten times its cost.
    let mut s = recorded("kvm-xeon-native");
    let c = s.native.unwrap().cost_ns.p50 / 64.0;
    let mut cpuid = s.cpuid.unwrap();
    cpuid.cost_ns = cpuid.cost_ns.scale(600.0 * c / cpuid.cost_ns.p10);
    s.cpuid = Some(cpuid);
    s.null_syscall = s.null_syscall.map(|mut d| {
        d.cost_ns = d.cost_ns.scale(10.0);
        d
    });
    let v = decide(&s, s.rdtsc);
    assert_eq!(v.evidence["cpuid_exits"], true);
    assert_eq!(v.evidence["floor_from"], "cpuid");
}

#[test]
fn native_fast_low_percentiles_under_a_trap_level_median_are_inconclusive() {
    // Half of the reads as in the native run, half as in the trapped one: p10 native, p50
    // at a trap's cost. Neither answer is safe.
    let native = recorded("kvm-xeon-native");
    let trapped_run = recorded("kvm-xeon-emulate-trap");
    let (n, t) = (native.rdtsc.unwrap(), trapped_run.rdtsc.unwrap());
    let mixed = Distribution {
        cost_ns: Percentiles {
            p1: n.cost_ns.p1,
            p10: n.cost_ns.p10,
            p50: t.cost_ns.p1,
            p90: t.cost_ns.p50,
            p99: t.cost_ns.p99,
        },
        ..t
    };
    let v = decide(&native, Some(mixed));
    assert_eq!(v.state, VerdictState::Inconclusive, "{v:?}");
    assert!(v.inconclusive_reason.unwrap().contains("p10"));
}

#[test]
fn without_any_floor_a_trap_is_a_thousand_cycles() {
    let mut s = recorded("kvm-xeon-emulate-trap");
    s.null_syscall = None;
    s.hypervisor = false;
    let v = decide(&s, s.rdtsc);
    assert_eq!(v.evidence["floor_from"], "none");
    assert_eq!(v.state, VerdictState::Yes, "{v:?}");
}

#[test]
fn unmeasured_reads_are_skipped_not_held() {
    let s = recorded("kvm-xeon-native");
    let v = decide(&s, None);
    assert!(!v.holds && v.evidence["skipped"].is_string());
    let off = TrapSamples {
        skipped: Some("x86_64 only".into()),
        ..TrapSamples::default()
    };
    let v = decide(&off, None);
    assert!(!v.holds && v.summary.contains("x86_64 only"), "{v:?}");
}
