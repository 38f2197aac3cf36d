//! The kernel's own counts beside the kprobes of `vm count`.
//!
//! - **Multigrain counters.** From 6.13 (the multigrain series, "fs: add percpu counters for
//!   significant multigrain timestamp events"), with `CONFIG_DEBUG_FS`, fs/inode.c's
//!   `mgts_show()` prints four per-CPU sums to `/sys/kernel/debug/multigrain_timestamps`:
//!   `ctime_updates ctime_swaps fine_stamps floor_swaps` — calls of
//!   `inode_set_ctime_current()` on a multigrain inode, successful swaps of its `i_ctime_nsec`,
//!   fine-grained stamps it took (`ktime_get_real_ts64_mg()`), and swaps of the timekeeper's
//!   floor (`timekeeping_get_mg_floor_swaps()`). The guest mounts debugfs and reads the file
//!   around each run as it reads `kprobe_profile`; `fine_stamps` per op then checks the kprobe
//!   count of `ktime_get_real_ts64_mg`.
//! - **The clocksource's read callback** (`read_tsc`, `read_hpet`, `acpi_pm_read`,
//!   `kvm_clock_get_cycles`) of the clocksource the guest runs on: probed beside the
//!   `ktime_get_*` leaves, it counts every read of the clock, whoever asks (the tick, hrtimers,
//!   a vDSO fallback), not only the timestamps.

use std::collections::BTreeMap;

use crate::error::Result;

/// The multigrain counters' debugfs file.
pub const MULTIGRAIN_FILE: &str = "/sys/kernel/debug/multigrain_timestamps";
const DEBUGFS: &str = "/sys/kernel/debug";

/// The counters in the order `mgts_show()` prints them.
pub const MULTIGRAIN_COUNTERS: [&str; 4] =
    ["ctime_updates", "ctime_swaps", "fine_stamps", "floor_swaps"];

/// The counters in the file's text (four unsigned numbers, one line).
pub fn parse_multigrain(text: &str) -> Result<BTreeMap<String, u64>> {
    let numbers: Vec<u64> = text
        .split_whitespace()
        .map(|w| w.parse::<u64>())
        .collect::<std::result::Result<_, _>>()
        .map_err(|e| crate::failure!("{MULTIGRAIN_FILE}: '{}': {e}", text.trim()))?;
    crate::ensure!(
        numbers.len() == MULTIGRAIN_COUNTERS.len(),
        "{MULTIGRAIN_FILE}: {} numbers in '{}', 4 expected",
        numbers.len(),
        text.trim()
    );
    Ok(MULTIGRAIN_COUNTERS
        .iter()
        .map(|c| c.to_string())
        .zip(numbers)
        .collect())
}

/// Mounts debugfs (already mounted is fine) and reads the counters once: `Err` says why they
/// are absent (a kernel before 6.13, or without `CONFIG_DEBUG_FS`).
pub fn setup_multigrain() -> std::result::Result<(), String> {
    let mounted = crate::sys::guest::mount("debugfs", DEBUGFS, "debugfs");
    if let Err(e) = &mounted {
        if e.raw_os_error() != Some(libc::EBUSY) {
            return Err(format!("debugfs not mounted ({e})"));
        }
    }
    match std::fs::read_to_string(MULTIGRAIN_FILE) {
        Ok(text) => parse_multigrain(&text)
            .map(drop)
            .map_err(|e| format!("{e:#}")),
        Err(e) => Err(format!("no {MULTIGRAIN_FILE} ({e})")),
    }
}

/// The counters now; empty when they cannot be read.
pub fn read_multigrain() -> BTreeMap<String, u64> {
    std::fs::read_to_string(MULTIGRAIN_FILE)
        .ok()
        .and_then(|t| parse_multigrain(&t).ok())
        .unwrap_or_default()
}

/// The clocksource the guest runs on (`current_clocksource` in sysfs).
pub fn current_clocksource() -> Option<String> {
    std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// The read callback (`struct clocksource.read`) of the x86 clocksource `name`:
/// arch/x86/kernel/tsc.c `read_tsc` (`tsc`, `tsc-early`), arch/x86/kernel/hpet.c `read_hpet`,
/// drivers/clocksource/acpi_pm.c `acpi_pm_read`, arch/x86/kernel/kvmclock.c
/// `kvm_clock_get_cycles` (`kvm-clock`).
pub fn clocksource_read(name: &str) -> Option<&'static str> {
    Some(match name {
        "tsc" | "tsc-early" => "read_tsc",
        "hpet" => "read_hpet",
        "acpi_pm" => "acpi_pm_read",
        "kvm-clock" => "kvm_clock_get_cycles",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_counters_parse_and_bad_text_is_an_error() {
        let c = parse_multigrain("120 118 40 3\n").unwrap();
        assert_eq!(c["ctime_updates"], 120);
        assert_eq!(c["fine_stamps"], 40);
        assert_eq!(c["floor_swaps"], 3);
        assert!(parse_multigrain("1 2 3").is_err());
        assert!(parse_multigrain("1 2 x 4").is_err());
    }

    #[test]
    fn each_x86_clocksource_has_its_read_callback() {
        assert_eq!(clocksource_read("tsc"), Some("read_tsc"));
        assert_eq!(clocksource_read("kvm-clock"), Some("kvm_clock_get_cycles"));
        assert_eq!(clocksource_read("acpi_pm"), Some("acpi_pm_read"));
        assert_eq!(clocksource_read("jiffies"), None);
    }
}
