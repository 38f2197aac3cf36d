//! Clocksource forensics: what the kernel log says happened to the clocksources (a TSC marked
//! unstable, a watchdog's verdict, a switch), which boot options steer that, and whether this
//! machine meets the kernel's exemption from the TSC watchdog. Everything here is a pure
//! function over text except [`gather`].
//!
//! The lines matched are the kernel's own format strings: `mark_tsc_unstable` and
//! `tsc_cs_mark_unstable` in `arch/x86/kernel/tsc.c` ("Marking TSC unstable due to %s");
//! `clocksource_watchdog`, `cs_watchdog_read` and `__clocksource_select` in
//! `kernel/time/clocksource.c` ("timekeeping watchdog on CPU%d: Marking clocksource '%s' as
//! unstable because the skew is too large:", "wd-%s-wd excessive read-back delay of …, marking
//! %s unstable", "Switched to clocksource %s"); `check_tsc_sync_source` in
//! `arch/x86/kernel/tsc_sync.c` ("Measured %Ld cycles TSC warp between CPUs, turning off TSC
//! clock."). Older kernels' wording ("Switching to clocksource", "Clocksource %s unstable
//! (delta = …)", "read-back delay …, marking unstable") is matched too.

use serde::{Deserialize, Serialize};

use super::kmsg::{self, KernelLog, Record};

/// What one matched log line records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// "Marking TSC unstable due to …" (`mark_tsc_unstable`, `tsc_cs_mark_unstable`).
    TscUnstable,
    /// The watchdog saw the clocksource drift from the watchdog clock by more than the margin.
    WatchdogSkew,
    /// The watchdog could not read clocksource and watchdog close enough together, retried,
    /// and marked the clocksource unstable.
    ReadBackDelay,
    /// The watchdog skipped a check (the machine was too busy, or the interval too long).
    WatchdogSkipped,
    /// The boot-time cross-CPU check saw the TSC go backwards.
    TscWarp,
    /// "Switched to clocksource X".
    Switch,
}

/// One matched line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogEvent {
    pub kind: EventKind,
    /// The clocksource the line is about (`tsc` for the TSC lines).
    pub clocksource: Option<String>,
    /// Seconds since boot, where the log carries them.
    pub time_s: Option<f64>,
    /// The line itself, as the kernel wrote it.
    pub line: String,
}

fn quoted(text: &str) -> Option<String> {
    let (_, rest) = text.split_once('\'')?;
    Some(rest.split_once('\'')?.0.to_string())
}

fn word_after<'a>(text: &'a str, marker: &str) -> Option<&'a str> {
    let (_, rest) = text.split_once(marker)?;
    rest.split_whitespace().next()
}

/// Classifies one record; `None` for lines the rules do not use.
pub fn event(r: &Record) -> Option<LogEvent> {
    let t = r.text.as_str();
    let (kind, cs) = if t.contains("Marking TSC unstable due to") {
        (EventKind::TscUnstable, Some("tsc".to_string()))
    } else if t.contains("Marking clocksource '") && t.contains("as unstable") {
        (EventKind::WatchdogSkew, quoted(t))
    } else if t.starts_with("Clocksource ") && t.contains(" unstable (delta") {
        (
            EventKind::WatchdogSkew,
            word_after(t, "Clocksource ").map(str::to_string),
        )
    } else if t.contains("read-back delay") && t.contains("marking") && t.contains("unstable") {
        let cs = word_after(t, "wd-")
            .and_then(|w| w.strip_suffix("-wd"))
            .map(str::to_string);
        (EventKind::ReadBackDelay, cs)
    } else if t.contains("clock-skew test skipped")
        || t.contains("skipping watchdog check")
        || (t.contains("timekeeping watchdog") && t.contains("wd-wd read-back delay of"))
    {
        let cs = word_after(t, "wd-")
            .and_then(|w| w.strip_suffix("-wd"))
            .map(str::to_string);
        (EventKind::WatchdogSkipped, cs)
    } else if t.contains("TSC warp between CPUs") {
        (EventKind::TscWarp, Some("tsc".to_string()))
    } else if let Some(cs) = word_after(t, "Switched to clocksource ")
        .or_else(|| word_after(t, "Switching to clocksource "))
    {
        (EventKind::Switch, Some(cs.to_string()))
    } else {
        return None;
    };
    Some(LogEvent {
        kind,
        clocksource: cs,
        time_s: r.time_s,
        line: t.trim_end().to_string(),
    })
}

/// Every matched line of a log, in order.
pub fn events(records: &[Record]) -> Vec<LogEvent> {
    records.iter().filter_map(event).collect()
}

/// The clocksource names the kernel registers (`struct clocksource.name` in
/// arch/*/kernel and drivers/clocksource/): a name outside these is not evidence.
pub const KNOWN_CLOCKSOURCES: [&str; 24] = [
    "tsc",
    "tsc-early",
    "hpet",
    "acpi_pm",
    "pit",
    "jiffies",
    "refined-jiffies",
    "kvm-clock",
    "xen",
    "hyperv_clocksource_tsc_page",
    "hyperv_clocksource_msr",
    "lguest",
    "vmware-tsc",
    "arch_sys_counter",
    "arch_mem_counter",
    "riscv_clocksource",
    "timebase",
    "mips",
    "MIPS",
    "s390-tod",
    "tod",
    "clock-tod",
    "cyclone",
    "scx200_hrt",
];

/// Why a matched line is not evidence: written by a process (a user facility), or naming a
/// clocksource the kernel does not register.
fn refusal(r: &Record, e: &LogEvent) -> Option<String> {
    if !r.from_kernel() {
        return Some(format!(
            "written by a process (syslog facility {}), not the kernel",
            r.facility.unwrap_or(0)
        ));
    }
    match e.clocksource.as_deref() {
        Some(cs) if !KNOWN_CLOCKSOURCES.contains(&cs) => Some(format!(
            "names a clocksource the kernel does not register ({})",
            crate::fmt::safe::cell(cs).into_owned()
        )),
        _ => None,
    }
}

/// A matched line that was not taken as evidence, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IgnoredLine {
    /// The line, control characters escaped.
    pub line: String,
    pub why: String,
}

/// The kernel log as the rules see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogSummary {
    /// `/dev/kmsg` or `syslog(2)`.
    pub source: String,
    pub records: usize,
    /// Whether the log still holds the boot messages (the ring buffer has not wrapped).
    pub from_boot: bool,
    /// Seconds since boot of the oldest record.
    pub first_record_s: Option<f64>,
    pub truncated: bool,
    pub events: Vec<LogEvent>,
    /// Lines that look like clock messages but are not evidence: a process wrote them (a user
    /// facility in `/dev/kmsg`), or they name no clocksource the kernel registers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignored: Vec<IgnoredLine>,
}

impl LogSummary {
    /// Summarises a log read.
    pub fn of(log: &KernelLog) -> LogSummary {
        let (mut kept, mut ignored) = (Vec::new(), Vec::new());
        for r in &log.records {
            let Some(e) = event(r) else { continue };
            match refusal(r, &e) {
                None => kept.push(e),
                Some(why) => ignored.push(IgnoredLine {
                    line: crate::fmt::safe::cell(&e.line).into_owned(),
                    why,
                }),
            }
        }
        LogSummary {
            source: log.source.clone(),
            records: log.records.len(),
            from_boot: log.from_boot(),
            first_record_s: log.records.first().and_then(|r| r.time_s),
            truncated: log.truncated,
            events: kept,
            ignored,
        }
    }

    /// Summarises a recorded log's text (any of the three shapes [`kmsg::parse`] reads).
    pub fn of_text(source: &str, text: &str) -> LogSummary {
        LogSummary::of(&KernelLog {
            source: source.to_string(),
            records: kmsg::parse(text),
            truncated: false,
        })
    }
}

/// The boot options that change what happens to the TSC and the clocksource.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BootOptions {
    /// Each `tsc=` value (`reliable`, `unstable`, `nowatchdog`, `watchdog`, `recalibrate`, …).
    pub tsc: Vec<String>,
    /// `clocksource=`.
    pub clocksource: Option<String>,
    pub notsc: bool,
    /// What each option present does, one sentence each.
    pub effects: Vec<String>,
}

/// The options on a kernel command line (words after a lone `--` go to init and are ignored).
pub fn boot_options(cmdline: &str) -> BootOptions {
    let mut o = BootOptions::default();
    for w in cmdline.split_whitespace().take_while(|w| *w != "--") {
        if let Some(v) = w.strip_prefix("tsc=") {
            o.tsc.push(v.to_string());
        } else if let Some(v) = w.strip_prefix("clocksource=") {
            o.clocksource = Some(v.to_string());
        } else if w == "notsc" {
            o.notsc = true;
        }
    }
    for v in &o.tsc {
        let effect = match v.as_str() {
            "reliable" => {
                "tsc=reliable: the TSC is trusted; no watchdog checks it and the \
                           boot-time cross-CPU sync check is skipped"
            }
            "nowatchdog" => "tsc=nowatchdog: the clocksource watchdog does not check the TSC",
            "unstable" => {
                "tsc=unstable: the TSC is marked unstable at boot and never used as \
                           the clocksource"
            }
            "watchdog" => "tsc=watchdog: the TSC may serve as the watchdog of other clocksources",
            "recalibrate" => {
                "tsc=recalibrate: the TSC frequency is checked against HPET or \
                              the PM timer"
            }
            _ => continue,
        };
        o.effects.push(effect.to_string());
    }
    if o.notsc {
        o.effects
            .push("notsc: the TSC is marked unstable at boot and never used".into());
    }
    if let Some(cs) = &o.clocksource {
        o.effects.push(format!(
            "clocksource={cs}: the kernel selects {cs} over its own rating while {cs} is \
             usable for high-resolution timers"
        ));
    }
    o
}

/// Whether the kernel exempts this machine's TSC from the clocksource watchdog:
/// `check_system_tsc_reliable` in `arch/x86/kernel/tsc.c` calls
/// `tsc_disable_clocksource_watchdog` when the boot CPU has constant_tsc, nonstop_tsc and
/// tsc_adjust and the machine has at most four packages (`topology_max_packages() <= 4`;
/// older kernels estimated sockets from online memory nodes, at most two); the tsc_reliable
/// flag, `tsc=reliable` and `tsc=nowatchdog` switch the watchdog off for the TSC too (`tsc_init`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WatchdogExemption {
    pub constant_tsc: bool,
    pub nonstop_tsc: bool,
    pub tsc_adjust: bool,
    /// Distinct `physical_package_id`s in sysfs.
    pub packages: Option<usize>,
    /// All four conditions hold.
    pub meets: bool,
    /// The tsc_reliable CPU flag (set by hypervisors that promise a stable TSC).
    pub tsc_reliable_flag: bool,
    /// Whether the watchdog still checks the TSC: none of the exemption, the flag,
    /// `tsc=reliable` or `tsc=nowatchdog` applies.
    pub watchdog_checks_tsc: bool,
}

/// The exemption from the CPU flags (`/proc/cpuinfo`), the package count and the boot options.
pub fn exemption(
    flags: &[String],
    packages: Option<usize>,
    boot: &BootOptions,
) -> WatchdogExemption {
    let has = |f: &str| flags.iter().any(|x| x == f);
    let (constant_tsc, nonstop_tsc, tsc_adjust) =
        (has("constant_tsc"), has("nonstop_tsc"), has("tsc_adjust"));
    let meets = constant_tsc && nonstop_tsc && tsc_adjust && packages.is_some_and(|p| p <= 4);
    let tsc_reliable_flag = has("tsc_reliable");
    let off_by_option = boot
        .tsc
        .iter()
        .any(|v| v == "reliable" || v == "nowatchdog");
    WatchdogExemption {
        constant_tsc,
        nonstop_tsc,
        tsc_adjust,
        packages,
        meets,
        tsc_reliable_flag,
        watchdog_checks_tsc: !(meets || tsc_reliable_flag || off_by_option),
    }
}

/// Everything the two forensic verdicts are decided from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Forensics {
    /// The log, when it could be read.
    pub log: Option<LogSummary>,
    /// Why the log could not be read.
    pub log_error: Option<String>,
    /// `/proc/cmdline`, where readable.
    pub cmdline: Option<String>,
    pub boot_options: BootOptions,
    pub watchdog_exemption: WatchdogExemption,
}

/// Distinct package ids under `/sys/devices/system/cpu/cpu*/topology/`.
fn packages() -> Option<usize> {
    let mut ids = std::collections::BTreeSet::new();
    for e in std::fs::read_dir("/sys/devices/system/cpu").ok()?.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name
            .strip_prefix("cpu")
            .is_none_or(|n| n.parse::<u32>().is_err())
        {
            continue;
        }
        if let Ok(id) = std::fs::read_to_string(e.path().join("topology/physical_package_id")) {
            ids.insert(id.trim().to_string());
        }
    }
    (!ids.is_empty()).then_some(ids.len())
}

/// Summarises the log (as [`kmsg::read_kernel_log`] returned it) and reads the command line
/// and the topology; `flags` are `/proc/cpuinfo`'s TSC flags.
pub fn gather(flags: &[String], log: &Result<KernelLog, String>) -> Forensics {
    let cmdline = std::fs::read_to_string("/proc/cmdline")
        .ok()
        .map(|s| s.trim().to_string());
    let boot_options = boot_options(cmdline.as_deref().unwrap_or(""));
    let (log, log_error) = match log {
        Ok(l) => (Some(LogSummary::of(l)), None),
        Err(e) => (None, Some(e.clone())),
    };
    Forensics {
        log,
        log_error,
        watchdog_exemption: exemption(flags, packages(), &boot_options),
        boot_options,
        cmdline,
    }
}

/// Recorded logs (`tests/data/kmsg/`) as the rules' inputs, for this module's tests and the
/// verdicts'.
#[cfg(test)]
pub mod fixture {
    use super::*;

    /// The text of a recorded log.
    pub fn text(name: &str) -> &'static str {
        match name {
            "this-host-kvm.kmsg" => include_str!("../../../tests/data/kmsg/this-host-kvm.kmsg"),
            "tsc-unstable-guest.log" => {
                include_str!("../../../tests/data/kmsg/tsc-unstable-guest.log")
            }
            "watchdog-skew-acpi_pm.log" => {
                include_str!("../../../tests/data/kmsg/watchdog-skew-acpi_pm.log")
            }
            "watchdog-skew-kvm-clock-guest.log" => {
                include_str!("../../../tests/data/kmsg/watchdog-skew-kvm-clock-guest.log")
            }
            "tsc-sync-warp.log" => include_str!("../../../tests/data/kmsg/tsc-sync-warp.log"),
            "read-back-delay.log" => include_str!("../../../tests/data/kmsg/read-back-delay.log"),
            "forged-user-lines.kmsg" => {
                include_str!("../../../tests/data/kmsg/forged-user-lines.kmsg")
            }
            _ => panic!("no recorded log {name}"),
        }
    }

    /// The forensics of a recorded log on a machine with `flags`, booted with `cmdline`.
    pub fn forensics(name: &str, cmdline: &str, flags: &[&str]) -> Forensics {
        let flags: Vec<String> = flags.iter().map(|f| f.to_string()).collect();
        let boot_options = boot_options(cmdline);
        Forensics {
            log: Some(LogSummary::of_text("recorded", text(name))),
            log_error: None,
            cmdline: Some(cmdline.to_string()),
            watchdog_exemption: exemption(&flags, Some(1), &boot_options),
            boot_options,
        }
    }

    /// The forensics when the log could not be read.
    pub fn unreadable(reason: &str) -> Forensics {
        Forensics {
            log: None,
            log_error: Some(reason.to_string()),
            cmdline: None,
            boot_options: BootOptions::default(),
            watchdog_exemption: WatchdogExemption::default(),
        }
    }
}

#[cfg(test)]
mod tests;
