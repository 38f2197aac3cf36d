//! The checks every `vm` room that boots a guest shares (`vm guest`, `vm count`, `vm bench`).

use crate::cli::vm::BootArgs;
use crate::error::ConfigError;

/// Range-checks the options every room that boots a guest shares, and its `--timeout`.
pub fn check_boot(b: &BootArgs, timeout: u64) -> Result<(), ConfigError> {
    if !(1..=3600).contains(&timeout) {
        return Err(ConfigError::range("timeout", "1..=3600 seconds", timeout));
    }
    if !(128..=65536).contains(&b.memory) {
        return Err(ConfigError::range("memory", "128..=65536 MiB", b.memory));
    }
    Ok(())
}
