//! Facts the kernel publishes: clocksource files, `/proc/cpuinfo` TSC flags, DMI strings and
//! which KVM module backs `/dev/kvm`. The clocksource is the probe's machine fact (its type and
//! gatherer live in `probe::machine`, the one machine-facts module); the rest only `detect`
//! and `vm` need.

use std::fs;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::probe::machine::{self, Clocksource};

/// What sysfs and procfs say.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct HostFacts {
    pub clocksource: Clocksource,
    /// TSC-related flags present in `/proc/cpuinfo` (first CPU).
    pub cpuinfo_tsc_flags: Vec<String>,
    /// `/sys/class/dmi/id/{sys_vendor,product_name,bios_vendor}` where readable.
    pub dmi: Dmi,
    pub kvm: KvmHost,
}

/// DMI strings (often name the cloud or hypervisor: "QEMU", "Amazon EC2", "Microsoft
/// Corporation", "VMware, Inc.").
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Dmi {
    pub sys_vendor: Option<String>,
    pub product_name: Option<String>,
    pub bios_vendor: Option<String>,
}

/// Whether this machine can itself run guests, and with which module.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct KvmHost {
    pub dev_kvm: bool,
    /// `kvm_intel`, `kvm_amd` or `kvm_pvm` (a software hypervisor that only runs PVM-built
    /// guest kernels), from `/sys/module`.
    pub module: Option<String>,
    /// Whether stock guest kernels can run under hardware virtualisation here.
    pub hardware_virtualisation: bool,
}

/// The flags of interest in `/proc/cpuinfo`.
pub const TSC_FLAGS: [&str; 8] = [
    "tsc",
    "rdtscp",
    "constant_tsc",
    "nonstop_tsc",
    "tsc_reliable",
    "tsc_known_freq",
    "tsc_adjust",
    "hypervisor",
];

fn read(path: impl AsRef<Path>) -> Option<String> {
    fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// The TSC flags in the first `flags` line of a `/proc/cpuinfo` text.
pub fn tsc_flags(cpuinfo: &str) -> Vec<String> {
    let Some(line) = cpuinfo.lines().find(|l| l.starts_with("flags")) else {
        return Vec::new();
    };
    let flags: Vec<&str> = line
        .split(':')
        .nth(1)
        .unwrap_or("")
        .split_whitespace()
        .collect();
    TSC_FLAGS
        .iter()
        .filter(|f| flags.contains(f))
        .map(|f| f.to_string())
        .collect()
}

/// Gathers the host facts.
pub fn gather() -> HostFacts {
    let module = ["kvm_intel", "kvm_amd", "kvm_pvm"]
        .iter()
        .find(|m| Path::new("/sys/module").join(m).exists())
        .map(|m| m.to_string());
    HostFacts {
        clocksource: machine::clocksource(),
        cpuinfo_tsc_flags: read("/proc/cpuinfo")
            .map(|c| tsc_flags(&c))
            .unwrap_or_default(),
        dmi: Dmi {
            sys_vendor: read("/sys/class/dmi/id/sys_vendor"),
            product_name: read("/sys/class/dmi/id/product_name"),
            bios_vendor: read("/sys/class/dmi/id/bios_vendor"),
        },
        kvm: KvmHost {
            dev_kvm: Path::new("/dev/kvm").exists(),
            hardware_virtualisation: matches!(module.as_deref(), Some("kvm_intel" | "kvm_amd")),
            module,
        },
    }
}

/// Where some kernels expose `tsc_khz` (not upstream Linux).
pub const SYSFS_TSC_KHZ: &str = "/sys/devices/system/cpu/cpu0/tsc_freq_khz";

/// `tsc_freq_khz` from sysfs, `Ok(None)` when this kernel has no such file.
pub fn sysfs_tsc_khz() -> Result<Option<u64>, String> {
    match fs::read_to_string(SYSFS_TSC_KHZ) {
        Ok(s) => s
            .trim()
            .parse::<u64>()
            .map(Some)
            .map_err(|e| format!("{SYSFS_TSC_KHZ}: {:?} is not a number: {e}", s.trim())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("{SYSFS_TSC_KHZ}: {e}")),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn picks_tsc_flags_from_the_first_flags_line() {
        let text = "processor\t: 0\nflags\t\t: fpu tsc msr rdtscp constant_tsc nonstop_tsc \
                    tsc_known_freq hypervisor\nflags\t\t: tsc_reliable\n";
        assert_eq!(
            super::tsc_flags(text),
            [
                "tsc",
                "rdtscp",
                "constant_tsc",
                "nonstop_tsc",
                "tsc_known_freq",
                "hypervisor"
            ]
        );
        assert!(super::tsc_flags("no flags here").is_empty());
    }
}
