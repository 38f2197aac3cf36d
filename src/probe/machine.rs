//! Facts about the machine a profile was measured on, and the TSC frequency: what CPUID says
//! (leaves 0x15, 0x16, 0x40000010) beside what a calibration against `CLOCK_MONOTONIC_RAW`
//! measures. Both are reported when both exist; neither is assumed.

use std::fs;

use serde::{Deserialize, Serialize};

use crate::sys;

const CLOCKSOURCE_DIR: &str = "/sys/devices/system/clocksource/clocksource0";

/// The machine a profile was measured on. The one machine-facts type: `tscope run` embeds it
/// (`workload::result::RunMachine`) and `detect` shares its gatherers and [`CpuFacts`].
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
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

/// What the standard CPUID leaves say, decoded once by raw-cpuid for both the live CPU and a
/// recorded dump (`detect::cpuid` replays those through [`raw_cpuid::CpuIdReader`]). Field
/// names are those of `tscope detect`'s `facts.cpu` (a contract); [`Machine`] and
/// [`TscFacts`] show the same facts under the profile's names.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuFacts {
    pub vendor: Option<String>,
    pub brand: Option<String>,
    pub family: Option<u32>,
    pub model: Option<u32>,
    pub stepping: Option<u32>,
    /// `CPUID.1:ECX[31]`.
    pub hypervisor_bit: bool,
    /// `CPUID.80000007H:EDX[8]`.
    pub invariant_tsc: bool,
    /// `CPUID.80000001H:EDX[27]`.
    pub rdtscp: bool,
    /// `CPUID.(7,0):ECX[22]`.
    pub rdpid: bool,
    /// Leaf 0x15: TSC/crystal ratio and crystal Hz, and the TSC Hz they give.
    pub leaf_15_tsc_hz: Option<f64>,
    /// Leaf 0x16: base frequency in MHz (the nominal core clock, not always the TSC rate).
    pub leaf_16_base_mhz: Option<u32>,
}

impl CpuFacts {
    /// Decodes the standard leaves. raw-cpuid reports a leaf beyond its range's maximum
    /// (leaf 0 or 0x80000000) as absent: Intel CPUs answer those with the highest basic leaf's
    /// data, which would decode as garbage.
    pub fn decode<R: raw_cpuid::CpuIdReader>(c: &raw_cpuid::CpuId<R>) -> Self {
        let text = |s: &str| {
            let s = s.trim_matches(char::from(0)).trim();
            (!s.is_empty()).then(|| s.to_string())
        };
        let fi = c.get_feature_info();
        CpuFacts {
            vendor: c.get_vendor_info().and_then(|v| text(v.as_str())),
            brand: c
                .get_processor_brand_string()
                .and_then(|b| text(b.as_str())),
            family: fi.as_ref().map(family),
            model: fi.as_ref().map(model),
            stepping: fi.as_ref().map(|f| u32::from(f.stepping_id())),
            hypervisor_bit: fi.as_ref().is_some_and(|f| f.has_hypervisor()),
            invariant_tsc: c
                .get_advanced_power_mgmt_info()
                .is_some_and(|p| p.has_invariant_tsc()),
            rdtscp: c
                .get_extended_processor_and_feature_identifiers()
                .is_some_and(|e| e.has_rdtscp()),
            rdpid: c.get_extended_feature_info().is_some_and(|e| e.has_rdpid()),
            // EAX = denominator, EBX = numerator, ECX = crystal Hz (0 when not enumerated).
            leaf_15_tsc_hz: c
                .get_tsc_info()
                .filter(|t| t.denominator() != 0 && t.numerator() != 0)
                .filter(|t| t.nominal_frequency() != 0)
                .map(|t| {
                    f64::from(t.nominal_frequency()) * f64::from(t.numerator())
                        / f64::from(t.denominator())
                }),
            leaf_16_base_mhz: c
                .get_processor_frequency_info()
                .map(|p| u32::from(p.processor_base_frequency()))
                .filter(|&m| m != 0),
        }
    }
}

// Intel SDM vol. 2A CPUID "Feature Information", whatever the vendor: the extended family is
// added only for family 0xF, the extended model is prepended for family 0x6 and 0xF. raw-cpuid's
// `family_id`/`model_id` switch to AMD's rule on an AMD vendor string, which misreads a CPU
// template that shows an Intel signature under an AMD vendor (Firecracker's T2A: model 0x3f,
// not 0xf) and disagrees with the model Linux prints in /proc/cpuinfo.
fn family(f: &raw_cpuid::FeatureInfo) -> u32 {
    let base = u32::from(f.base_family_id());
    if base == 0xf {
        base + u32::from(f.extended_family_id())
    } else {
        base
    }
}

fn model(f: &raw_cpuid::FeatureInfo) -> u32 {
    let base = u32::from(f.base_model_id());
    if matches!(f.base_family_id(), 0x6 | 0xf) {
        (u32::from(f.extended_model_id()) << 4) | base
    } else {
        base
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

/// `/proc/loadavg`'s three load averages (1, 5, 15 minutes).
pub fn load_average() -> Option<[f64; 3]> {
    fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|t| parse_loadavg(&t))
}

/// The three load averages of a `/proc/loadavg` text.
pub fn parse_loadavg(text: &str) -> Option<[f64; 3]> {
    let mut it = text.split_whitespace().map(|x| x.parse::<f64>().ok());
    Some([it.next()??, it.next()??, it.next()??])
}

/// CPU 0's frequency governor (`scaling_governor`), when cpufreq is there.
pub fn scaling_governor() -> Option<String> {
    read_trimmed("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
}

/// The logical CPUs online.
pub fn cpus_online() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// Gathers the machine facts (the TSC calibration is filled in later by the probe).
pub fn gather() -> Machine {
    #[cfg(target_arch = "x86_64")]
    let (cpu, hv_sig, cpuid_40000010_hz) = live_cpuid();
    #[cfg(not(target_arch = "x86_64"))]
    let (cpu, hv_sig, cpuid_40000010_hz) = (CpuFacts::default(), None, None);
    Machine {
        cpu_vendor: cpu.vendor,
        cpu_model: cpu.brand,
        cpu_family: cpu.family,
        cpu_model_number: cpu.model,
        kernel_release: sys::cpu::kernel_release().ok(),
        clocksource: clocksource(),
        hypervisor_bit: cpu.hypervisor_bit,
        hypervisor_signature: hv_sig,
        cpus_online: cpus_online(),
        pinned_cpu: None,
        tsc: TscFacts {
            invariant: cpu.invariant_tsc,
            rdtscp: cpu.rdtscp,
            rdpid: cpu.rdpid,
            cpuid_15_hz: cpu.leaf_15_tsc_hz,
            cpuid_16_base_hz: cpu.leaf_16_base_mhz.map(|mhz| f64::from(mhz) * 1e6),
            cpuid_40000010_hz,
            calibrated_hz: None,
            calibration_span_s: None,
        },
    }
}

/// The standard-leaf facts of this CPU, the hypervisor signature and the timing leaf's TSC
/// frequency in Hz (both only when the hypervisor bit is set).
#[cfg(target_arch = "x86_64")]
fn live_cpuid() -> (CpuFacts, Option<String>, Option<f64>) {
    let c = raw_cpuid::CpuId::new();
    let cpu = CpuFacts::decode(&c);
    let hv_sig = cpu
        .hypervisor_bit
        .then(|| hypervisor_signature(sys::tsc::cpuid(0x4000_0000)));
    let hz = cpu
        .hypervisor_bit
        .then(|| c.get_hypervisor_info())
        .flatten()
        .and_then(|h| h.tsc_frequency())
        .map(|khz| f64::from(khz) * 1e3)
        .filter(|&hz| hz > 0.0);
    (cpu, hv_sig, hz)
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
    fn loadavg_parses() {
        assert_eq!(
            parse_loadavg("5.71 3.09 1.41 3/250 1234\n"),
            Some([5.71, 3.09, 1.41])
        );
        assert_eq!(parse_loadavg("5.71"), None);
    }

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
