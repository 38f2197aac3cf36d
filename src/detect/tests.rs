//! CPUID decoding against real dumps (`tests/data/cpuid/`, sources in its README).

use super::hypervisor_summary;
use crate::cpuid::{CpuidDump, CpuidFacts};

fn decode(name: &str) -> CpuidFacts {
    let path = format!("{}/tests/data/cpuid/{name}.txt", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    CpuidFacts::decode(&CpuidDump::parse(&text).unwrap())
}

#[test]
fn bare_metal_has_no_hypervisor() {
    for name in [
        "baremetal-amd-epyc-7401p",
        "baremetal-intel-i5-2520m",
        "baremetal-intel-i7-6600u",
    ] {
        let f = decode(name);
        assert!(!f.hypervisor_bit, "{name}");
        assert!(f.hypervisor.leaves.is_empty(), "{name}");
        assert!(f.invariant_tsc && f.rdtscp, "{name}");
        let s = hypervisor_summary(&f);
        assert!(
            !s.present && s.vendor.is_none() && s.note.is_none(),
            "{name}: {s:?}"
        );
    }
    let epyc = decode("baremetal-amd-epyc-7401p");
    assert_eq!(epyc.vendor.as_deref(), Some("AuthenticAMD"));
    assert_eq!(
        epyc.brand.as_deref(),
        Some("AMD EPYC 7401P 24-Core Processor")
    );
    assert_eq!(
        (epyc.family, epyc.model, epyc.stepping),
        (Some(0x17), Some(1), Some(2))
    );
    let skl = decode("baremetal-intel-i7-6600u");
    assert_eq!((skl.family, skl.model), (Some(6), Some(0x4e)));
    // Leaf 0x15 enumerates the ratio but not the crystal (ECX = 0): no frequency from it.
    assert_eq!(skl.leaf_15_tsc_hz, None);
    assert_eq!(skl.leaf_16_base_mhz, Some(0xaf0));
}

#[test]
fn kvm_guests_and_the_stable_bit() {
    for name in [
        "kvm-firecracker-amd-epyc",
        "kvm-firecracker-t2a-ec2-m6a-metal-amd-epyc",
        "kvm-firecracker-t2cl-ec2-m5-metal-intel-xeon",
        "kvm-qemu-cpu-host-intel-i7-8650u",
    ] {
        let f = decode(name);
        assert!(f.hypervisor_bit, "{name}");
        assert_eq!(f.hypervisor.vendor(), Some("KVM"), "{name}");
        let kvm = f.hypervisor.kvm.as_ref().unwrap();
        assert!(
            kvm.clocksource2 && kvm.clocksource_stable_bit,
            "{name}: {kvm:?}"
        );
    }
    // QEMU does not expose invtsc unless asked.
    assert!(!decode("kvm-qemu-cpu-host-intel-i7-8650u").invariant_tsc);
    assert!(decode("kvm-firecracker-amd-epyc").invariant_tsc);
}

#[test]
fn hyperv_reference_tsc_and_tdx() {
    let f = decode("hyperv-intel-xeon-e5-2680v3");
    assert_eq!(f.hypervisor.vendor(), Some("Hyper-V"));
    let hv = f.hypervisor.hyperv.as_ref().unwrap();
    assert!(hv.reference_tsc && hv.time_ref_count && !hv.tsc_invariant);
    let tdx = decode("hyperv-azure-tdx-intel-sapphire-rapids");
    assert_eq!(tdx.hypervisor.vendor(), Some("Hyper-V"));
    assert!(tdx.hypervisor.hyperv.as_ref().unwrap().tsc_invariant);
    assert_eq!(tdx.confidential_guest.as_deref(), Some("Intel TDX"));
    // 25 MHz crystal × 84 / 1 = 2.1 GHz.
    assert_eq!(tdx.leaf_15_tsc_hz, Some(2.1e9));
    // The 0x40000100 block is all zero: not a second interface.
    assert_eq!(tdx.hypervisor.leaves.len(), 1);
}

#[test]
fn vmware_timing_leaf() {
    assert_eq!(
        decode("vmware-intel-i5-2520m").hypervisor.tsc_khz_40000010,
        Some(2_501_000)
    );
    let f = decode("vmware-intel-xeon-x5570");
    assert_eq!(f.hypervisor.vendor(), Some("VMware"));
    assert_eq!(f.hypervisor.tsc_khz_40000010, Some(2_926_000));
}

#[test]
fn xen_tsc_mode() {
    let f = decode("xen-ec2-c3large-intel-xeon-e5-2680v2");
    assert_eq!(f.hypervisor.vendor(), Some("Xen"));
    let x = f.hypervisor.xen.as_ref().unwrap();
    assert_eq!((x.tsc_mode, x.tsc_mode_name.as_str()), (2, "never_emulate"));
    assert!(!x.emulated && x.host_tsc_reliable);
    assert_eq!(x.guest_tsc_khz, Some(0x002a_9f50));
    let old = decode("xen-intel-xeon-e5-2680v2-cpuidjl");
    assert_eq!(
        old.hypervisor.xen.as_ref().unwrap().tsc_mode_name,
        "default"
    );
}

#[test]
fn qemu_tcg() {
    let max = decode("qemu-tcg-max");
    assert_eq!(max.hypervisor.vendor(), Some("QEMU TCG"));
    assert!(max.rdtscp && !max.invariant_tsc);
    assert!(!decode("qemu-tcg-qemu64").rdtscp);
}

#[test]
fn dump_errors_name_the_line() {
    let err = CpuidDump::parse("# c\n0x0 0x0 0x1 0x2 0x3\n").unwrap_err();
    assert_eq!(err.line, 2);
    let err = CpuidDump::parse("0x0 0x0 0x1 0x2 0x3 zz\n").unwrap_err();
    assert!(err.to_string().contains("'zz'"), "{err}");
}

#[test]
fn family_and_model_follow_the_sdm_whatever_the_vendor() {
    // Firecracker's T2A template: an AMD vendor string over an Intel Haswell signature
    // (0x306f2). The SDM rule (and /proc/cpuinfo) give model 0x3f; AMD's rule would give 0xf.
    let t2a = decode("kvm-firecracker-t2a-ec2-m6a-metal-amd-epyc");
    assert_eq!(t2a.vendor.as_deref(), Some("AuthenticAMD"));
    assert_eq!((t2a.family, t2a.model), (Some(6), Some(0x3f)));
}

/// kvm-clock's vDSO mode on the recorded KVM guests: every dump sets
/// `KVM_FEATURE_CLOCKSOURCE_STABLE_BIT`, so the mode stays conditional there and the timing
/// decides. No recorded dump lacks the bit, so the other side is tested through the pure rule
/// with the bit's documented meaning (cleared: kvm-clock keeps `VDSO_CLOCKMODE_NONE`).
#[test]
fn kvm_clock_vdso_mode_follows_the_cpuid_stable_bit() {
    use super::verdict::{vdso_capability_given, vdso_fallback_given, VdsoCapability};
    use crate::stats::Estimate;
    for name in [
        "kvm-firecracker-amd-epyc",
        "kvm-firecracker-t2a-ec2-m6a-metal-amd-epyc",
        "kvm-firecracker-t2cl-ec2-m5-metal-intel-xeon",
        "kvm-qemu-cpu-host-intel-i7-8650u",
    ] {
        let bit = decode(name)
            .hypervisor
            .kvm
            .map(|k| k.clocksource_stable_bit);
        assert_eq!(bit, Some(true), "{name}");
        assert_eq!(
            vdso_capability_given(Some("kvm-clock"), bit),
            VdsoCapability::Possible,
            "{name}"
        );
    }
    assert_eq!(decode("baremetal-amd-epyc-7401p").hypervisor.kvm, None);
    assert_eq!(
        vdso_capability_given(Some("kvm-clock"), Some(false)),
        VdsoCapability::None
    );
    assert_eq!(
        vdso_capability_given(Some("tsc"), Some(false)),
        VdsoCapability::Yes
    );
    // Timing that says "served by the vDSO" cannot overrule the missing mode.
    let est = |p: f64| {
        Some(Estimate {
            point: p,
            lower: p * 0.99,
            upper: p * 1.01,
        })
    };
    let v = vdso_fallback_given(
        "monotonic",
        est(20.0),
        est(150.0),
        Some("kvm-clock"),
        Some(false),
    );
    assert!(v.holds, "{v:?}");
    assert_eq!(v.evidence["decided_by"], "clocksource");
    assert!(v.evidence["disagreement"].is_string(), "{v:?}");
    let v = vdso_fallback_given(
        "monotonic",
        est(20.0),
        est(150.0),
        Some("kvm-clock"),
        Some(true),
    );
    assert!(!v.holds, "{v:?}");
    assert_eq!(v.evidence["decided_by"], "timing");
    // The coarse clocks never read the clocksource.
    let v = vdso_fallback_given(
        "monotonic_coarse",
        est(5.0),
        est(150.0),
        Some("kvm-clock"),
        Some(false),
    );
    assert!(!v.holds, "{v:?}");
}
