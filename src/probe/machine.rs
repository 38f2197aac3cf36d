//! Facts about the machine a profile was measured on, and the TSC frequency: what CPUID says
//! (leaves 0x15, 0x16, 0x40000010, decoded by [`crate::cpuid`]) beside what a calibration
//! against `CLOCK_MONOTONIC_RAW` measures. Both are reported when both exist; neither is
//! assumed.

use std::fs;

use serde::{Deserialize, Serialize};

use crate::cpuid::{hypervisor, CpuidSource, LiveCpuid, StandardLeaves};
use crate::sys;

const CLOCKSOURCE_DIR: &str = "/sys/devices/system/clocksource/clocksource0";

/// The machine a profile was measured on. The one machine-facts type: `tscope run` embeds it
/// (`workload::result::RunMachine`) and `detect` shares its gatherers; both
/// decode CPUID through [`crate::cpuid`].
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Machine {
    /// This host's application-specific ID ([`super::host_id`]): one host, one ID, without its
    /// machine ID. Absent where `/etc/machine-id` is absent or unreadable, as in documents
    /// written before it was recorded (so those read back and write out unchanged).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_id: Option<String>,
    pub cpu_vendor: Option<String>,
    pub cpu_model: Option<String>,
    pub cpu_family: Option<u32>,
    pub cpu_model_number: Option<u32>,
    /// The `microcode` revision `/proc/cpuinfo` gives for the first CPU (absent where it is
    /// not published, and in profiles written before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub microcode: Option<String>,
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

/// The first `key : value` line of `/proc/cpuinfo` text.
pub fn cpuinfo_field(text: &str, key: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == key).then(|| v.trim().to_string())
    })
}

/// Gathers the machine facts (the TSC calibration is filled in later by the probe).
pub fn gather() -> Machine {
    let (cpu, hv_sig, cpuid_40000010_hz) = live_cpuid(&LiveCpuid);
    Machine {
        host_id: super::host_id::host_id(),
        cpu_vendor: cpu.vendor,
        cpu_model: cpu.brand,
        cpu_family: cpu.family,
        cpu_model_number: cpu.model,
        microcode: fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|t| cpuinfo_field(&t, "microcode")),
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
fn live_cpuid(src: &dyn CpuidSource) -> (StandardLeaves, Option<String>, Option<f64>) {
    let cpu = StandardLeaves::read(src);
    let hv = cpu.hypervisor_bit;
    let hv_sig =
        hv.then(|| hypervisor::raw_signature(src.leaf(0x4000_0000, 0).unwrap_or_default()));
    let hz = hv
        .then(|| hypervisor::tsc_khz_40000010(src))
        .flatten()
        .map(|khz| f64::from(khz) * 1e3);
    (cpu, hv_sig, hz)
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
    fn cpuinfo_fields_are_read_by_key() {
        let text = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmicrocode\t: 0xa201016\n";
        assert_eq!(
            cpuinfo_field(text, "microcode").as_deref(),
            Some("0xa201016")
        );
        assert_eq!(cpuinfo_field(text, "stepping"), None);
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
