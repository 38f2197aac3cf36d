//! The guest's clocksource, switched at run time: the name written to sysfs, and what the
//! kernel reads back (it may refuse a request; the run then says so and is never relabelled).

use crate::vm::boot::clock::{Clocksource, ClocksourceName};

pub(crate) const CURRENT: &str = "/sys/devices/system/clocksource/clocksource0/current_clocksource";
pub(crate) const AVAILABLE: &str =
    "/sys/devices/system/clocksource/clocksource0/available_clocksource";

/// A sysfs or procfs file, trimmed; empty when unreadable.
pub(crate) fn read(path: &str) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// Waits, at most `limit`, until every name of `wanted` that the kernel still offers only in
/// its early form (`tsc-early`) is available. x86 boots on `tsc-early` and registers `tsc`
/// only when `tsc_refine_calibration_work` (arch/x86/kernel/tsc.c) has refined the
/// calibration, about a second after boot; a guest that starts its rounds sooner would have
/// its first switches to `tsc` refused. Returns whether every such name came.
pub(crate) fn await_late(wanted: &[Clocksource], limit: std::time::Duration) -> bool {
    let start = std::time::Instant::now();
    loop {
        if !still_early(wanted, &read(AVAILABLE)) {
            return true;
        }
        if start.elapsed() >= limit {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Whether `available` (sysfs's list) offers some name of `wanted` only as `NAME-early`.
fn still_early(wanted: &[Clocksource], available: &str) -> bool {
    let offered: Vec<&str> = available.split_whitespace().collect();
    wanted
        .iter()
        .any(|w| !offered.contains(&w.name()) && offered.contains(&format!("{w}-early").as_str()))
}

/// Switches the clocksource to `cs` and reads back what the kernel uses.
pub(crate) fn switch(cs: Clocksource) -> (ClocksourceName, Option<String>) {
    let name = cs.name();
    let wrote = std::fs::write(CURRENT, name);
    let used = ClocksourceName::from(read(CURRENT));
    let error = match wrote {
        Err(e) => Some(format!("writing '{name}' to {CURRENT}: {e}")),
        Ok(()) if used != cs => Some(format!(
            "the kernel kept '{used}' after '{name}' was written to {CURRENT} (available: {})",
            read(AVAILABLE)
        )),
        Ok(()) => None,
    };
    (used, error)
}

/// Whether `/proc/kallsyms` text has a text symbol `name`.
pub(crate) fn has_symbol(kallsyms: &str, name: &str) -> bool {
    kallsyms.lines().any(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        matches!(f.as_slice(), [_, t, n, ..] if (*t == "t" || *t == "T") && *n == name)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tsc_early_is_waited_for_and_an_absent_clocksource_is_not() {
        use Clocksource::{Hpet, KvmClock, Tsc};
        assert!(still_early(&[Tsc, Hpet], "tsc-early hpet acpi_pm"));
        assert!(!still_early(&[Tsc, Hpet], "tsc hpet acpi_pm"));
        // kvm-clock is not offered at all (a TCG guest): nothing to wait for.
        assert!(!still_early(&[KvmClock], "tsc-early hpet acpi_pm"));
        assert!(!still_early(&[Hpet], ""));
    }
}
