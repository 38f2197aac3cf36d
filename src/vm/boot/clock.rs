//! The x86 clocksources a guest can be booted on or switched to, by the kernel's names for them
//! (`clocksource=NAME`, `current_clocksource` in sysfs); and [`ClocksourceName`], a name as the
//! kernel reports it, which may be one tscope never asks for.

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
}

impl std::fmt::Display for Clocksource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A clocksource as the kernel names it in sysfs (`current_clocksource`,
/// `available_clocksource`): one of [`Clocksource`], or any other name kept as the kernel wrote
/// it (`tsc-early`, `jiffies`, `refined-jiffies`, another architecture's, or empty where the file
/// could not be read). What a guest reports is its kernel's word, so a document records it as
/// said and reads back whatever a guest said; serialized as the name.
#[derive(Debug, Clone, Deserialize)]
#[serde(from = "String")]
pub enum ClocksourceName {
    Known(Clocksource),
    /// A name outside [`Clocksource`] (never one of its names: [`From`] sorts them).
    Other(String),
}

impl ClocksourceName {
    /// The kernel's word.
    pub fn as_str(&self) -> &str {
        match self {
            ClocksourceName::Known(c) => c.name(),
            ClocksourceName::Other(name) => name,
        }
    }

    /// The clocksource this name runs: the one it names, and `tsc-early` (the TSC before its
    /// frequency is refined) as the TSC; `None` for any other name.
    pub fn running(&self) -> Option<Clocksource> {
        match self {
            ClocksourceName::Known(c) => Some(*c),
            ClocksourceName::Other(name) if name == "tsc-early" => Some(Clocksource::Tsc),
            ClocksourceName::Other(_) => None,
        }
    }
}

/// Nothing read: the empty name.
impl Default for ClocksourceName {
    fn default() -> Self {
        ClocksourceName::Other(String::new())
    }
}

impl From<Clocksource> for ClocksourceName {
    fn from(c: Clocksource) -> Self {
        ClocksourceName::Known(c)
    }
}

impl From<&str> for ClocksourceName {
    fn from(name: &str) -> Self {
        Clocksource::parse(name).map_or_else(|| ClocksourceName::Other(name.into()), Into::into)
    }
}

impl From<String> for ClocksourceName {
    fn from(name: String) -> Self {
        match Clocksource::parse(&name) {
            Some(c) => ClocksourceName::Known(c),
            None => ClocksourceName::Other(name),
        }
    }
}

impl PartialEq for ClocksourceName {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for ClocksourceName {}

impl PartialEq<Clocksource> for ClocksourceName {
    fn eq(&self, other: &Clocksource) -> bool {
        self.as_str() == other.name()
    }
}

impl PartialEq<str> for ClocksourceName {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for ClocksourceName {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl Serialize for ClocksourceName {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl std::fmt::Display for ClocksourceName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
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
        let cb = |name: &str| {
            ClocksourceName::from(name)
                .running()
                .map(Clocksource::read_callback)
        };
        assert_eq!(cb("tsc"), Some("read_tsc"));
        assert_eq!(cb("tsc-early"), Some("read_tsc"));
        assert_eq!(cb("kvm-clock"), Some("kvm_clock_get_cycles"));
        assert_eq!(cb("acpi_pm"), Some("acpi_pm_read"));
        assert_eq!(cb("hpet"), Some("read_hpet"));
        assert_eq!(cb("jiffies"), None);
    }

    #[test]
    fn a_reported_name_reads_back_and_writes_as_the_kernel_said_it() {
        for name in [
            "tsc",
            "kvm-clock",
            "tsc-early",
            "jiffies",
            "refined-jiffies",
            "",
        ] {
            let json = format!("\"{name}\"");
            let n: ClocksourceName = serde_json::from_str(&json).unwrap();
            assert_eq!(n.as_str(), name);
            assert_eq!(serde_json::to_string(&n).unwrap(), json);
        }
        assert_eq!(
            ClocksourceName::from("hpet"),
            ClocksourceName::Known(Clocksource::Hpet)
        );
        assert_eq!(ClocksourceName::from("hpet"), Clocksource::Hpet);
        assert_ne!(ClocksourceName::from("tsc-early"), Clocksource::Tsc);
        assert_eq!(ClocksourceName::default().as_str(), "");
    }
}
