//! The guest's clocksource, switched at run time: the name written to sysfs, and what the
//! kernel reads back (it may refuse a request; the run then says so and is never relabelled).

pub const CURRENT: &str = "/sys/devices/system/clocksource/clocksource0/current_clocksource";
pub const AVAILABLE: &str = "/sys/devices/system/clocksource/clocksource0/available_clocksource";

/// A sysfs or procfs file, trimmed; empty when unreadable.
pub fn read(path: &str) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// Switches the clocksource to `name` and reads back what the kernel uses.
pub fn switch(name: &str) -> (String, Option<String>) {
    let wrote = std::fs::write(CURRENT, name);
    let used = read(CURRENT);
    let error = match wrote {
        Err(e) => Some(format!("writing '{name}' to {CURRENT}: {e}")),
        Ok(()) if used != name => Some(format!(
            "the kernel kept '{used}' after '{name}' was written to {CURRENT} (available: {})",
            read(AVAILABLE)
        )),
        Ok(()) => None,
    };
    (used, error)
}

/// Whether `/proc/kallsyms` text has a text symbol `name`.
pub fn has_symbol(kallsyms: &str, name: &str) -> bool {
    kallsyms.lines().any(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        matches!(f.as_slice(), [_, t, n, ..] if (*t == "t" || *t == "T") && *n == name)
    })
}
