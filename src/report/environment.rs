//! What a reviewer asks before trusting a figure: when and with which build it was measured,
//! the kernel and its command line, the CPU down to stepping and microcode, the speculative
//! execution mitigations (they set the price of every syscall), the frequency policy, the
//! hypervisor, clocksource and HZ — and every what-if that was in force, so an emulated trap is
//! never mistaken for the machine's own behaviour.
//!
//! Each fact is read from where the kernel publishes it; a fact the machine does not publish
//! is `None` ("not published"), never guessed.

use std::fs;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::probe::Profile;

/// The environment of one report.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Environment {
    /// When the report was measured, UTC, ISO 8601 (`2026-12-01T06:40:00Z`).
    pub date_utc: String,
    pub tscope_version: String,
    /// The git revision tscope was built from (`-dirty` with uncommitted changes), or
    /// "unknown" outside a git tree.
    pub git_revision: String,
    pub kernel_release: Option<String>,
    pub kernel_cmdline: Option<String>,
    /// `/sys/devices/system/cpu/vulnerabilities/*`: (name, the kernel's status line).
    pub vulnerabilities: Vec<(String, String)>,
    pub cpufreq_driver: Option<String>,
    pub governor: Option<String>,
    /// `/sys/devices/system/cpu/cpufreq/boost` (1 on, 0 off), where published.
    pub boost: Option<String>,
    /// `intel_pstate` or `amd_pstate` status (active, passive, guided), where published.
    pub pstate_status: Option<String>,
    pub cpu_vendor: Option<String>,
    pub cpu_brand: Option<String>,
    pub cpu_family: Option<u32>,
    pub cpu_model: Option<u32>,
    pub cpu_stepping: Option<u32>,
    /// The `microcode` revision `/proc/cpuinfo` gives for the first CPU.
    pub microcode: Option<String>,
    /// The hypervisor's vendor, "none" without the hypervisor bit.
    pub hypervisor: String,
    pub clocksource: Option<String>,
    /// HZ as the coarse clocks' update period implies it (`probe`), rounded.
    pub hz: Option<u32>,
    /// Every what-if in force, in words; empty for a plain measurement.
    pub what_ifs: Vec<String>,
}

/// What `--emulate-trap` is, in the words every output uses.
pub const EMULATED_TRAP: &str = "RDTSC trapped by tscope --emulate-trap, not by the hypervisor";

impl Environment {
    /// Gathers the environment now; `profile` supplies the facts the probe already read.
    pub fn gather(profile: &Profile, cpu: &crate::cpuid::StandardLeaves, hypervisor: &str) -> Self {
        let read = |p: &str| {
            fs::read_to_string(p)
                .ok()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
        };
        let m = &profile.machine;
        let mut what_ifs = Vec::new();
        if profile.emulate_trap {
            what_ifs.push(EMULATED_TRAP.to_string());
        }
        Environment {
            date_utc: iso8601_utc(SystemTime::now()),
            tscope_version: env!("CARGO_PKG_VERSION").to_string(),
            git_revision: env!("TSCOPE_GIT_REVISION").to_string(),
            kernel_release: m.kernel_release.clone(),
            kernel_cmdline: read("/proc/cmdline"),
            vulnerabilities: vulnerabilities(Path::new("/sys/devices/system/cpu/vulnerabilities")),
            cpufreq_driver: read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_driver"),
            governor: crate::probe::machine::scaling_governor(),
            boost: read("/sys/devices/system/cpu/cpufreq/boost"),
            pstate_status: read("/sys/devices/system/cpu/intel_pstate/status")
                .map(|s| format!("intel_pstate {s}"))
                .or_else(|| {
                    read("/sys/devices/system/cpu/amd_pstate/status")
                        .map(|s| format!("amd_pstate {s}"))
                }),
            cpu_vendor: cpu.vendor.clone(),
            cpu_brand: cpu.brand.clone().or_else(|| m.cpu_model.clone()),
            cpu_family: cpu.family,
            cpu_model: cpu.model,
            cpu_stepping: cpu.stepping,
            microcode: m.microcode.clone(),
            hypervisor: hypervisor.to_string(),
            clocksource: m.clocksource.current.clone(),
            hz: profile
                .sources
                .iter()
                .filter(|s| s.id.ends_with("_coarse"))
                .find_map(|s| s.implied_hz)
                .map(|hz| hz.round() as u32),
            what_ifs,
        }
    }

    /// The mitigations in one line (see [`mitigations_summary`]).
    pub fn mitigations(&self) -> String {
        mitigations_summary(&self.vulnerabilities)
    }
}

/// Vulnerability entries in one line: how many say "Mitigation", "Vulnerable" and "Not
/// affected", then the mitigated and vulnerable ones by name.
pub fn mitigations_summary(entries: &[(String, String)]) -> String {
    {
        if entries.is_empty() {
            return "not published".into();
        }
        let mut mitigated = Vec::new();
        let mut vulnerable = Vec::new();
        let mut unaffected = 0;
        for (name, status) in entries {
            if status.starts_with("Not affected") {
                unaffected += 1;
            } else if status.starts_with("Vulnerable") {
                vulnerable.push(name.as_str());
            } else {
                mitigated.push(name.as_str());
            }
        }
        let mut out = format!(
            "{} mitigated, {} vulnerable, {unaffected} not affected",
            mitigated.len(),
            vulnerable.len()
        );
        if !mitigated.is_empty() {
            out += &format!("; mitigated: {}", mitigated.join(", "));
        }
        if !vulnerable.is_empty() {
            out += &format!("; vulnerable: {}", vulnerable.join(", "));
        }
        out
    }
}

/// Every file of the vulnerabilities directory, sorted by name.
fn vulnerabilities(dir: &Path) -> Vec<(String, String)> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<(String, String)> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let status = fs::read_to_string(e.path()).ok()?;
            Some((
                e.file_name().to_string_lossy().into_owned(),
                status.trim().to_string(),
            ))
        })
        .collect();
    v.sort();
    v
}

/// `t` as `YYYY-MM-DDTHH:MM:SSZ` (proleptic Gregorian, UTC).
pub fn iso8601_utc(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil-from-days (Howard Hinnant's algorithm), days since 1970-01-01.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn dates_are_utc_iso8601() {
        assert_eq!(iso8601_utc(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        // 2000-02-29 (a leap day) 12:34:56 and 2026-12-01 06:40:00.
        let at = |s| UNIX_EPOCH + Duration::from_secs(s);
        assert_eq!(iso8601_utc(at(951_827_696)), "2000-02-29T12:34:56Z");
        assert_eq!(iso8601_utc(at(1_796_107_200)), "2026-12-01T06:40:00Z");
    }

    #[test]
    fn mitigations_are_summarised_by_kind() {
        let entries: Vec<(String, String)> = vec![
            ("meltdown".into(), "Not affected".into()),
            ("spectre_v2".into(), "Mitigation: Retpolines".into()),
            ("srbds".into(), "Vulnerable: no microcode".into()),
        ];
        assert_eq!(mitigations_summary(&[]), "not published");
        assert_eq!(
            mitigations_summary(&entries),
            "1 mitigated, 1 vulnerable, 1 not affected; mitigated: spectre_v2; vulnerable: srbds"
        );
    }
}
