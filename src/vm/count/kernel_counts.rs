//! The kernel's own counts beside the kprobes of `vm count`.
//!
//! - **Multigrain counters** ([`crate::probe::multigrain`]): the guest mounts debugfs and
//!   reads them around each run as it reads `kprobe_profile`; `fine_stamps` per op then checks
//!   the kprobe count of `ktime_get_real_ts64_mg`.
//! - **The clocksource's read callback** (`read_tsc`, `read_hpet`, `acpi_pm_read`,
//!   `kvm_clock_get_cycles`) of the clocksource the guest runs on: probed beside the
//!   `ktime_get_*` leaves, it counts every read of the clock, whoever asks (the tick, hrtimers,
//!   a vDSO fallback), not only the timestamps
//!   ([`crate::vm::boot::clock::Clocksource::read_callback`]).

use std::collections::BTreeMap;

use crate::vm::boot::clock::ClocksourceName;

pub(crate) use crate::probe::multigrain::COUNTERS as MULTIGRAIN_COUNTERS;
const DEBUGFS: &str = "/sys/kernel/debug";

/// Mounts debugfs (already mounted is fine) and reads the counters once: `Err` says why they
/// are absent (a kernel before 6.13, or without `CONFIG_DEBUG_FS`).
pub(crate) fn setup_multigrain() -> std::result::Result<(), String> {
    let mounted = crate::sys::guest::mount("debugfs", DEBUGFS, "debugfs");
    if let Err(e) = &mounted {
        if e.raw_os_error() != Some(libc::EBUSY) {
            return Err(format!("debugfs not mounted ({e})"));
        }
    }
    crate::probe::multigrain::read().map(drop)
}

/// The counters now; empty when they cannot be read.
pub(crate) fn read_multigrain() -> BTreeMap<String, u64> {
    crate::probe::multigrain::read().unwrap_or_default()
}

/// The clocksource the guest runs on (`current_clocksource` in sysfs).
pub(crate) fn current_clocksource() -> Option<ClocksourceName> {
    std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .map(ClocksourceName::from)
}
