//! `tscope vm exits`: the micro-VM's one number, checked.

use crate::cli::vm::ExitsArgs;
use crate::commands::Global;
use crate::error::ConfigError;

/// The most iterations of each exit kind `vm exits` runs.
pub const MAX_EXITS_ITERATIONS: u32 = 1_000_000;

/// Validates `vm exits` arguments: the iterations of each exit kind (the micro-VM's whole
/// configuration).
pub fn config(a: &ExitsArgs, _global: &Global) -> Result<u32, ConfigError> {
    if a.iterations == 0 {
        return Err(ConfigError::range("iterations", "at least 1", 0));
    }
    if a.iterations > MAX_EXITS_ITERATIONS {
        return Err(ConfigError::range(
            "iterations",
            format!("1..={MAX_EXITS_ITERATIONS}"),
            a.iterations,
        ));
    }
    Ok(a.iterations)
}
