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
}
