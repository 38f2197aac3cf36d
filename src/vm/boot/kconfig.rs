//! What a kernel's build configuration says that `vm count` needs: `CONFIG_HZ`, from the
//! package's `/boot/config-REL`, the `config-REL` beside a `--kernel vmlinuz-REL`, or — when no
//! configuration is at hand — the guest's own coarse-clock resolution (`TICK_NSEC`).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// `CONFIG_HZ` the models assume when neither the kernel's configuration nor the guest says.
pub const ASSUMED_HZ: u32 = 250;

/// Where a kernel's `CONFIG_HZ` comes from; serialized as the words the JSON has always had.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum HzSource {
    /// The package's `/boot/config-REL`, or the `config-REL` beside `--kernel`.
    #[serde(rename = "config")]
    Config,
    /// The guest's coarse-clock resolution ([`hz_from_tick_ns`]).
    #[serde(rename = "guest clock_getres(CLOCK_REALTIME_COARSE)")]
    GuestCoarseRes,
    /// Neither: [`ASSUMED_HZ`].
    #[serde(rename = "assumed")]
    Assumed,
    /// A document written before the field existed.
    #[default]
    #[serde(rename = "")]
    Unrecorded,
}

impl HzSource {
    /// The word the JSON carries.
    pub fn name(self) -> &'static str {
        match self {
            HzSource::Config => "config",
            HzSource::GuestCoarseRes => "guest clock_getres(CLOCK_REALTIME_COARSE)",
            HzSource::Assumed => "assumed",
            HzSource::Unrecorded => "",
        }
    }

    /// Whether the HZ was found rather than assumed.
    pub fn known(self) -> bool {
        matches!(self, HzSource::Config | HzSource::GuestCoarseRes)
    }
}

impl std::fmt::Display for HzSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A kernel's `CONFIG_HZ` and where it comes from: its configuration's (`config_hz`), else the
/// guest's coarse-clock resolution (`coarse_res_ns`, once a guest said it), else
/// [`ASSUMED_HZ`].
pub(crate) fn kernel_hz(config_hz: Option<u32>, coarse_res_ns: Option<u64>) -> (u32, HzSource) {
    match (config_hz, coarse_res_ns.and_then(hz_from_tick_ns)) {
        (Some(hz), _) => (hz, HzSource::Config),
        (None, Some(hz)) => (hz, HzSource::GuestCoarseRes),
        (None, None) => (ASSUMED_HZ, HzSource::Assumed),
    }
}

/// The `/boot` layout's configuration beside a kernel given by path: `vmlinuz-REL` (or
/// `vmlinux-REL`) → `config-REL` in the same directory, if it exists.
pub(crate) fn sibling_config(kernel: &Path) -> Option<PathBuf> {
    let name = kernel.file_name()?.to_str()?;
    let release = name
        .strip_prefix("vmlinuz-")
        .or_else(|| name.strip_prefix("vmlinux-"))?;
    let config = kernel.with_file_name(format!("config-{release}"));
    config.is_file().then_some(config)
}

/// `CONFIG_HZ` from a tick period in ns (`TICK_NSEC`, what `clock_getres` says of the coarse
/// clocks): 4,000,000 → 250; `None` for 0 or a period no kernel has.
pub(crate) fn hz_from_tick_ns(tick_ns: u64) -> Option<u32> {
    if tick_ns == 0 || tick_ns > 1_000_000_000 {
        return None;
    }
    u32::try_from((1_000_000_000 + tick_ns / 2) / tick_ns).ok()
}

/// `CONFIG_HZ` from a kernel configuration.
pub(crate) fn config_hz(config: &str) -> Option<u32> {
    config
        .lines()
        .find_map(|l| l.strip_prefix("CONFIG_HZ="))
        .and_then(|v| v.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hz_from_the_config_line_or_the_tick() {
        assert_eq!(
            config_hz("# x\nCONFIG_HZ_250=y\nCONFIG_HZ=250\n"),
            Some(250)
        );
        assert_eq!(config_hz("CONFIG_HZ_1000=y\n"), None);
        assert_eq!(hz_from_tick_ns(4_000_000), Some(250));
        // TICK_NSEC rounds: HZ=300 gives 3,333,333 ns.
        assert_eq!(hz_from_tick_ns(3_333_333), Some(300));
        assert_eq!(hz_from_tick_ns(1_000_000), Some(1000));
        assert_eq!(hz_from_tick_ns(0), None);
        assert_eq!(hz_from_tick_ns(2_000_000_000), None);
    }

    #[test]
    fn hz_comes_from_the_config_then_the_guest_then_the_assumption() {
        assert_eq!(
            kernel_hz(Some(100), Some(4_000_000)),
            (100, HzSource::Config)
        );
        assert_eq!(
            kernel_hz(None, Some(4_000_000)),
            (250, HzSource::GuestCoarseRes)
        );
        assert_eq!(kernel_hz(None, None), (ASSUMED_HZ, HzSource::Assumed));
        for s in [
            HzSource::Config,
            HzSource::GuestCoarseRes,
            HzSource::Assumed,
            HzSource::Unrecorded,
        ] {
            let json = serde_json::to_string(&s).unwrap();
            assert_eq!(json, format!("\"{}\"", s.name()));
            assert_eq!(serde_json::from_str::<HzSource>(&json).unwrap(), s);
        }
    }

    #[test]
    fn finds_the_boot_config_beside_a_kernel() {
        let dir = std::env::temp_dir().join(format!("tscope-kconfig-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let kernel = dir.join("vmlinuz-6.1.0-9-cloud-amd64");
        assert_eq!(sibling_config(&kernel), None);
        std::fs::write(dir.join("config-6.1.0-9-cloud-amd64"), "CONFIG_HZ=100\n").unwrap();
        assert_eq!(
            sibling_config(&kernel),
            Some(dir.join("config-6.1.0-9-cloud-amd64"))
        );
        assert_eq!(sibling_config(&dir.join("bzImage")), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
