//! Hypervisor identification from CPUID leaves 0x40000000 + n·0x100.
//!
//! A hypervisor may publish several interfaces: KVM with Hyper-V enlightenments shows
//! "Microsoft Hv" at 0x40000000 and "KVMKVMKVM" at 0x40000100; Xen with Viridian does the same
//! with "XenVMMXenVMM". The vendor reported is therefore the first non-Hyper-V signature when
//! one exists (the real hypervisor behind an emulated Hyper-V interface), else the first.
//! Feature leaves decoded (bit numbers from the public headers):
//! - KVM 0x40000001 EAX: `KVM_FEATURE_CLOCKSOURCE` (0), `CLOCKSOURCE2` (3), `STEAL_TIME` (5),
//!   `CLOCKSOURCE_STABLE_BIT` (24) — Linux `arch/x86/include/uapi/asm/kvm_para.h`.
//! - Hyper-V 0x40000003 EAX: `HV_MSR_TIME_REF_COUNT_AVAILABLE` (1),
//!   `HV_MSR_REFERENCE_TSC_AVAILABLE` (9), `HV_ACCESS_FREQUENCY_MSRS` (11),
//!   `HV_ACCESS_TSC_INVARIANT` (15) — Linux `include/hyperv/hvgdk_mini.h` (formerly
//!   `arch/x86/include/asm/hyperv-tlfs.h`).
//! - Xen base+3 sub-leaf 0: EAX flags `XEN_CPUID_TSC_EMULATED` (0), `HOST_TSC_RELIABLE` (1),
//!   `RDTSCP_INSTR_AVAIL` (2); EBX the TSC mode (0 default, 1 always emulate, 2 never emulate,
//!   3 pvrdtscp); ECX the guest TSC frequency in kHz — Xen `xen/include/public/arch-x86/cpuid.h`.
//! - 0x40000010 (VMware's timing leaf, also offered by KVM/QEMU with `vmware-cpuid-freq`):
//!   EAX the TSC frequency in kHz, EBX the APIC bus frequency in kHz.

use serde::{Deserialize, Serialize};

use super::source::{register_bytes, CpuidSource};

/// One hypervisor interface found in the CPUID range.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HypervisorLeaf {
    /// The base leaf, e.g. 0x40000000.
    pub base: u32,
    /// EAX of the base leaf: the highest leaf of this interface.
    pub max_leaf: u32,
    /// The 12-byte signature (EBX, ECX, EDX), NULs dropped.
    pub signature: String,
    /// The hypervisor the signature names.
    pub vendor: String,
}

/// Everything found in the hypervisor range.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HypervisorLeaves {
    pub leaves: Vec<HypervisorLeaf>,
    pub kvm: Option<KvmFeatures>,
    pub hyperv: Option<HypervFeatures>,
    pub xen: Option<XenTsc>,
    /// Leaf 0x40000010 EAX: TSC frequency in kHz (VMware, KVM with vmware-cpuid-freq).
    pub tsc_khz_40000010: Option<u32>,
}

/// KVM paravirtual clock features.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KvmFeatures {
    pub eax: u32,
    pub clocksource: bool,
    pub clocksource2: bool,
    pub steal_time: bool,
    /// `PVCLOCK_TSC_STABLE_BIT` may be set: kvm-clock can be read in the vDSO.
    pub clocksource_stable_bit: bool,
}

/// Hyper-V timing privileges.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HypervFeatures {
    pub eax: u32,
    pub time_ref_count: bool,
    /// The reference TSC page: hyperv_clocksource_tsc_page, readable in the vDSO.
    pub reference_tsc: bool,
    pub frequency_msrs: bool,
    pub tsc_invariant: bool,
}

/// Xen's TSC leaf.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct XenTsc {
    pub emulated: bool,
    pub host_tsc_reliable: bool,
    pub tsc_mode: u32,
    pub tsc_mode_name: String,
    pub guest_tsc_khz: Option<u32>,
}

/// The hypervisor a signature names.
pub fn vendor_of(signature: &str) -> String {
    let name = match signature {
        "KVMKVMKVM" => "KVM",
        "Linux KVM Hv" => "KVM (Hyper-V emulation)",
        "Microsoft Hv" => "Hyper-V",
        "VMwareVMware" => "VMware",
        "XenVMMXenVMM" => "Xen",
        "TCGTCGTCGTCG" => "QEMU TCG",
        "bhyve bhyve" => "bhyve",
        "ACRNACRNACRN" => "ACRN",
        "VBoxVBoxVBox" => "VirtualBox",
        "prl hyperv" | "lrpepyh  vr" => "Parallels",
        "Jailhouse" => "Jailhouse",
        "IntelTDX" => "Intel TDX",
        "QNXQVMBSQG" => "QNX hypervisor",
        "HAXMHAXMHAXM" => "Intel HAXM",
        "EVMMEVMMEVMM" => "Intel KGT",
        "SRESRESRESRE" => "Lockheed Martin LMHS",
        "UnisysSpar64" => "Unisys s-Par",
        "MicrosoftXTA" => "Microsoft x86-to-ARM",
        "VirtualApple" => "Apple Rosetta 2",
        _ => return format!("unknown ({signature:?})"),
    };
    name.to_string()
}

/// The 12-byte signature of a hypervisor base leaf (EBX, ECX, EDX) as text, trailing NULs
/// dropped, whatever it holds: what a probe profile records as `hypervisor_signature`.
pub fn raw_signature(regs: [u32; 4]) -> String {
    String::from_utf8_lossy(&register_bytes(&regs[1..]))
        .trim_end_matches('\0')
        .to_string()
}

/// The signature of a base leaf when it is one: printable ASCII padded with NULs, trimmed.
fn signature(r: [u32; 4]) -> Option<String> {
    let bytes = register_bytes(&r[1..]);
    let trimmed: Vec<u8> = bytes.iter().copied().take_while(|&b| b != 0).collect();
    let printable = !trimmed.is_empty() && trimmed.iter().all(|b| (0x20..0x7f).contains(b));
    let rest_nul = bytes[trimmed.len()..].iter().all(|&b| b == 0);
    (printable && rest_nul).then(|| String::from_utf8_lossy(&trimmed).trim().to_string())
}

/// Leaf 0x40000010 EAX, the TSC frequency in kHz, when leaf 0x40000000 names a maximum that
/// reaches it and the value is not zero. Only meaningful when the hypervisor bit is set.
pub fn tsc_khz_40000010(src: &dyn CpuidSource) -> Option<u32> {
    let max = src.leaf(0x4000_0000, 0)?[0];
    if max < 0x4000_0010 {
        return None;
    }
    src.leaf(0x4000_0010, 0).map(|r| r[0]).filter(|&k| k != 0)
}

/// Scans 0x40000000..0x40010000 in 0x100 steps for hypervisor interfaces.
pub fn scan(src: &dyn CpuidSource) -> HypervisorLeaves {
    let mut out = HypervisorLeaves::default();
    for base in (0x4000_0000u32..0x4001_0000).step_by(0x100) {
        let Some(r) = src.leaf(base, 0) else { continue };
        let Some(sig) = signature(r) else { continue };
        // A valid interface names a maximum inside its own 0x100 block (0 is tolerated:
        // some old hypervisors leave it zero).
        if r[0] != 0 && !(base..base + 0x100).contains(&r[0]) {
            continue;
        }
        let vendor = vendor_of(&sig);
        let max_leaf = if r[0] == 0 { base + 1 } else { r[0] };
        let leaf = |n: u32| {
            if base + n <= max_leaf {
                src.leaf(base + n, 0)
            } else {
                None
            }
        };
        match sig.as_str() {
            "KVMKVMKVM" if out.kvm.is_none() => {
                out.kvm = leaf(1).map(|r| KvmFeatures {
                    eax: r[0],
                    clocksource: r[0] & 1 != 0,
                    clocksource2: r[0] & (1 << 3) != 0,
                    steal_time: r[0] & (1 << 5) != 0,
                    clocksource_stable_bit: r[0] & (1 << 24) != 0,
                });
            }
            "Microsoft Hv" if out.hyperv.is_none() => {
                out.hyperv = leaf(3).map(|r| HypervFeatures {
                    eax: r[0],
                    time_ref_count: r[0] & (1 << 1) != 0,
                    reference_tsc: r[0] & (1 << 9) != 0,
                    frequency_msrs: r[0] & (1 << 11) != 0,
                    tsc_invariant: r[0] & (1 << 15) != 0,
                });
            }
            "XenVMMXenVMM" if out.xen.is_none() => {
                out.xen = leaf(3).map(|r| XenTsc {
                    emulated: r[0] & 1 != 0,
                    host_tsc_reliable: r[0] & (1 << 1) != 0,
                    tsc_mode: r[1],
                    tsc_mode_name: match r[1] {
                        0 => "default",
                        1 => "always_emulate",
                        2 => "never_emulate",
                        3 => "pvrdtscp",
                        _ => "unknown",
                    }
                    .to_string(),
                    guest_tsc_khz: Some(r[2]).filter(|&k| k != 0),
                });
            }
            _ => {}
        }
        if base == 0x4000_0000 {
            out.tsc_khz_40000010 = tsc_khz_40000010(src);
        }
        out.leaves.push(HypervisorLeaf {
            base,
            max_leaf,
            signature: sig,
            vendor,
        });
    }
    out
}

impl HypervisorLeaves {
    /// The hypervisor actually running: the first interface that is not Hyper-V's, if any
    /// (Hyper-V's interface is emulated by KVM, Xen and others), else the first.
    pub fn vendor(&self) -> Option<&str> {
        self.leaves
            .iter()
            .find(|l| l.signature != "Microsoft Hv")
            .or(self.leaves.first())
            .map(|l| l.vendor.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_signature_decodes_kvm_leaf() {
        // "KVMKVMKVM\0\0\0" as EBX, ECX, EDX of leaf 0x40000000.
        let regs = [0x4000_0001, 0x4b4d_564b, 0x564b_4d56, 0x0000_004d];
        assert_eq!(raw_signature(regs), "KVMKVMKVM");
        assert_eq!(signature(regs).as_deref(), Some("KVMKVMKVM"));
        // Not a signature: no text at all.
        assert_eq!(raw_signature([0; 4]), "");
        assert_eq!(signature([0; 4]), None);
    }
}
