//! Error types. Messages say what went wrong and what to do next.

use std::path::PathBuf;

/// Errors from validating arguments into a configuration.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("--{name} must be {what}, got {value}")]
    OutOfRange {
        name: &'static str,
        what: &'static str,
        value: String,
    },
    #[error(
        "unknown verdict '{0}'; valid: rdtsc_trapped, rdtscp_trapped, vdso_fallback, \
         vdso_fallback:<clock>, tsc_unsynchronized, clock_warps"
    )]
    UnknownVerdict(String),
    #[error("--emulate-trap: {0}")]
    Trap(String),
    #[error(transparent)]
    UnknownSource(#[from] crate::probe::source::UnknownSource),
}

/// Errors reading or writing files.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("cannot write '{path}' (check the directory exists and is writable)")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}
