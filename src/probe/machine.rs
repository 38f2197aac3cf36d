//! Facts about the machine a profile was measured on, and the TSC frequency: what CPUID says
//! (leaves 0x15, 0x16, 0x40000010) beside what a calibration against `CLOCK_MONOTONIC_RAW`
//! measures. Both are reported when both exist; neither is assumed.

use std::fs;

use serde::{Deserialize, Serialize};

use crate::sys;

const CLOCKSOURCE_DIR: &str = "/sys/devices/system/clocksource/clocksource0";

/// The machine a profile was measured on.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Machine {
    pub cpu_vendor: Option<String>,
    pub cpu_model: Option<String>,
    pub cpu_family: Option<u32>,
    pub cpu_model_number: Option<u32>,
    pub kernel_release: Option<String>,
    pub clocksource: Clocksource,
    /// `CPUID.1:ECX[31]`: set by every mainstream hypervisor.
    pub hypervisor_bit: bool,
    /// The signature in CPUID leaf 0x40000000, when the hypervisor bit is set.
    pub hypervisor_signature: Option<String>,
    pub cpus_online: usize,
    /// The CPU the measuring thread was pinned to, if pinning succeeded.
    pub pinned_cpu: Option<usize>,
    pub tsc: TscFacts,
}

/// Both sysfs clocksource files: decide from `current`, not from what is `available`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Clocksource {
    pub current: Option<String>,
    pub available: Vec<String>,
}

/// What the CPU says about its time-stamp counter.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TscFacts {
    /// `CPUID.80000007H:EDX[8]`.
    pub invariant: bool,
    /// `CPUID.80000001H:EDX[27]`.
    pub rdtscp: bool,
    /// `CPUID.(7,0):ECX[22]`.
    pub rdpid: bool,
    /// Leaf 0x15: crystal × ratio, in Hz.
    pub cpuid_15_hz: Option<f64>,
    /// Leaf 0x16: processor base frequency, in Hz (Intel's "nominal" frequency, not always
    /// the TSC rate).
    pub cpuid_16_base_hz: Option<f64>,
    /// Leaf 0x40000010 (VMware/KVM timing leaf): TSC frequency in Hz.
    pub cpuid_40000010_hz: Option<f64>,
    /// Measured against CLOCK_MONOTONIC_RAW over the whole probe run, in Hz.
    pub calibrated_hz: Option<f64>,
    /// Time between the two calibration points, in seconds.
    pub calibration_span_s: Option<f64>,
}

impl TscFacts {
    /// The frequency used to convert between ticks and nanoseconds: calibrated if measured,
    /// else the first CPUID leaf that gives one.
    pub fn hz(&self) -> Option<f64> {
        self.calibrated_hz
            .or(self.cpuid_15_hz)
            .or(self.cpuid_40000010_hz)
    }
}

fn read_trimmed(path: &str) -> Option<String> {
    fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

/// Reads both clocksource files.
pub fn clocksource() -> Clocksource {
    Clocksource {
        current: read_trimmed(&format!("{CLOCKSOURCE_DIR}/current_clocksource")),
        available: read_trimmed(&format!("{CLOCKSOURCE_DIR}/available_clocksource"))
            .map(|s| s.split_whitespace().map(str::to_string).collect())
            .unwrap_or_default(),
    }
}

/// Gathers the machine facts (the TSC calibration is filled in later by the probe).
pub fn gather() -> Machine {
    #[cfg(target_arch = "x86_64")]
    let (vendor, model, family, model_number, hv_bit, hv_sig, tsc) = cpuid_facts();
    #[cfg(not(target_arch = "x86_64"))]
    let (vendor, model, family, model_number, hv_bit, hv_sig, tsc) =
        (None, None, None, None, false, None, TscFacts::default());
    Machine {
        cpu_vendor: vendor,
        cpu_model: model,
        cpu_family: family,
        cpu_model_number: model_number,
        kernel_release: sys::cpu::kernel_release().ok(),
        clocksource: clocksource(),
        hypervisor_bit: hv_bit,
        hypervisor_signature: hv_sig,
        cpus_online: std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
        pinned_cpu: None,
        tsc,
    }
}

type CpuidFacts = (
    Option<String>,
    Option<String>,
    Option<u32>,
    Option<u32>,
    bool,
    Option<String>,
    TscFacts,
);

#[cfg(target_arch = "x86_64")]
fn cpuid_facts() -> CpuidFacts {
    use raw_cpuid::CpuId;
    let c = CpuId::new();
    let vendor = c.get_vendor_info().map(|v| v.as_str().to_string());
    let brand = c
        .get_processor_brand_string()
        .map(|b| b.as_str().trim().to_string());
    let fi = c.get_feature_info();
    let family = fi.as_ref().map(|f| u32::from(f.family_id()));
    let model = fi.as_ref().map(|f| u32::from(f.model_id()));
    let hv_bit = fi.as_ref().is_some_and(|f| f.has_hypervisor());
    let hv_sig = hv_bit.then(|| hypervisor_signature(sys::tsc::cpuid(0x4000_0000)));
    let ext = c.get_extended_processor_and_feature_identifiers();
    let tsc = TscFacts {
        invariant: c
            .get_advanced_power_mgmt_info()
            .is_some_and(|p| p.has_invariant_tsc()),
        rdtscp: ext.as_ref().is_some_and(|e| e.has_rdtscp()),
        rdpid: c.get_extended_feature_info().is_some_and(|e| e.has_rdpid()),
        cpuid_15_hz: c
            .get_tsc_info()
            .and_then(|t| t.tsc_frequency())
            .map(|hz| hz as f64),
        cpuid_16_base_hz: c
            .get_processor_frequency_info()
            .map(|p| f64::from(p.processor_base_frequency()) * 1e6)
            .filter(|&hz| hz > 0.0),
        cpuid_40000010_hz: hv_bit
            .then(|| c.get_hypervisor_info())
            .flatten()
            .and_then(|h| h.tsc_frequency())
            .map(|khz| f64::from(khz) * 1e3)
            .filter(|&hz| hz > 0.0),
        calibrated_hz: None,
        calibration_span_s: None,
    };
    (vendor, brand, family, model, hv_bit, hv_sig, tsc)
}

/// The 12-byte signature of a hypervisor leaf (EBX, ECX, EDX), trailing NULs dropped.
pub fn hypervisor_signature(regs: [u32; 4]) -> String {
    let bytes: Vec<u8> = [regs[1], regs[2], regs[3]]
        .iter()
        .flat_map(|r| r.to_le_bytes())
        .collect();
    String::from_utf8_lossy(&bytes)
        .trim_end_matches('\0')
        .to_string()
}

/// One calibration point: a TSC value and the `CLOCK_MONOTONIC_RAW` time at which it was read.
#[derive(Debug, Clone, Copy)]
pub struct CalibrationPoint {
    pub tsc: u64,
    pub raw_ns: f64,
}

/// Reads a TSC value bracketed by two raw-syscall `CLOCK_MONOTONIC_RAW` reads, keeping the
/// tightest of a few tries. The syscall path is used because the kernel reads the clocksource
/// itself: it is not subject to `PR_SET_TSC` and so stays correct under `--emulate-trap`.
#[cfg(target_arch = "x86_64")]
pub fn calibration_point() -> Option<CalibrationPoint> {
    use crate::sys::clock::{id, syscall_clock_gettime};
    let mut best: Option<(u64, CalibrationPoint)> = None;
    for _ in 0..7 {
        let a = syscall_clock_gettime(id::MONOTONIC_RAW).ok()?;
        let tsc = sys::tsc::rdtsc();
        let b = syscall_clock_gettime(id::MONOTONIC_RAW).ok()?;
        let width = b.saturating_sub(a);
        let p = CalibrationPoint {
            tsc,
            raw_ns: (a as f64 + b as f64) / 2.0,
        };
        if best.is_none_or(|(w, _)| width < w) {
            best = Some((width, p));
        }
    }
    best.map(|(_, p)| p)
}

/// TSC frequency in Hz between two calibration points, with the span in seconds.
pub fn calibrate(a: CalibrationPoint, b: CalibrationPoint) -> Option<(f64, f64)> {
    let span_ns = b.raw_ns - a.raw_ns;
    if span_ns <= 0.0 || b.tsc <= a.tsc {
        return None;
    }
    Some(((b.tsc - a.tsc) as f64 * 1e9 / span_ns, span_ns / 1e9))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signature_decodes_kvm_leaf() {
        // "KVMKVMKVM\0\0\0" as EBX, ECX, EDX of leaf 0x40000000.
        let regs = [0x4000_0001, 0x4b4d_564b, 0x564b_4d56, 0x0000_004d];
        assert_eq!(hypervisor_signature(regs), "KVMKVMKVM");
    }

    #[test]
    fn calibration_rejects_backwards_points() {
        let a = CalibrationPoint {
            tsc: 1000,
            raw_ns: 0.0,
        };
        let b = CalibrationPoint {
            tsc: 3_000_001_000,
            raw_ns: 1e9,
        };
        let (hz, span) = calibrate(a, b).unwrap();
        assert!((hz - 3e9).abs() < 1.0 && (span - 1.0).abs() < 1e-12);
        assert!(calibrate(b, a).is_none());
    }
}
