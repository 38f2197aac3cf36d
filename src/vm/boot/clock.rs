//! The x86 clocksources a guest can be booted on or switched to, by the kernel's names for them
//! (`clocksource=NAME`, `current_clocksource` in sysfs).

use serde::{Deserialize, Serialize};

/// One clocksource; serialized as the kernel's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Clocksource {
    #[serde(rename = "tsc")]
    Tsc,
    #[serde(rename = "hpet")]
    Hpet,
    #[serde(rename = "acpi_pm")]
    AcpiPm,
    #[serde(rename = "kvm-clock")]
    KvmClock,
}

impl Clocksource {
    /// Every clocksource, in the order the rooms name them.
    pub const ALL: [Clocksource; 4] = [
        Clocksource::Tsc,
        Clocksource::Hpet,
        Clocksource::AcpiPm,
        Clocksource::KvmClock,
    ];

    /// The kernel's name (`clocksource=NAME`).
    pub fn name(self) -> &'static str {
        match self {
            Clocksource::Tsc => "tsc",
            Clocksource::Hpet => "hpet",
            Clocksource::AcpiPm => "acpi_pm",
            Clocksource::KvmClock => "kvm-clock",
        }
    }

    /// The clocksource the kernel calls `name`.
    pub fn parse(name: &str) -> Option<Clocksource> {
        Clocksource::ALL.into_iter().find(|c| c.name() == name)
    }

    /// The clocksource sysfs `current_clocksource` names: [`Clocksource::parse`], and
    /// `tsc-early` (the TSC before its frequency is refined) as the TSC.
    pub fn parse_current(name: &str) -> Option<Clocksource> {
        match name {
            "tsc-early" => Some(Clocksource::Tsc),
            _ => Clocksource::parse(name),
        }
    }

    /// The read callback (`struct clocksource.read`): arch/x86/kernel/tsc.c `read_tsc`,
    /// arch/x86/kernel/hpet.c `read_hpet`, drivers/clocksource/acpi_pm.c `acpi_pm_read`,
    /// arch/x86/kernel/kvmclock.c `kvm_clock_get_cycles`.
    pub fn read_callback(self) -> &'static str {
        match self {
            Clocksource::Tsc => "read_tsc",
            Clocksource::Hpet => "read_hpet",
            Clocksource::AcpiPm => "acpi_pm_read",
            Clocksource::KvmClock => "kvm_clock_get_cycles",
        }
    }

    /// The read callback of the clocksource `current_clocksource` names, if it is one of these.
    pub fn current_read_callback(name: &str) -> Option<&'static str> {
        Clocksource::parse_current(name).map(Clocksource::read_callback)
    }
}

impl std::fmt::Display for Clocksource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_name_parses_back_and_serializes_as_the_kernels() {
        for c in Clocksource::ALL {
            assert_eq!(Clocksource::parse(c.name()), Some(c));
            assert_eq!(
                serde_json::to_string(&c).unwrap(),
                format!("\"{}\"", c.name())
            );
        }
        assert_eq!(Clocksource::parse("jiffies"), None);
    }

    #[test]
    fn each_x86_clocksource_has_its_read_callback() {
        let cb = Clocksource::current_read_callback;
        assert_eq!(cb("tsc"), Some("read_tsc"));
        assert_eq!(cb("tsc-early"), Some("read_tsc"));
        assert_eq!(cb("kvm-clock"), Some("kvm_clock_get_cycles"));
        assert_eq!(cb("acpi_pm"), Some("acpi_pm_read"));
        assert_eq!(cb("hpet"), Some("read_hpet"));
        assert_eq!(cb("jiffies"), None);
    }
}
