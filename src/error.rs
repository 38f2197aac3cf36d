//! The error vocabulary of the library: one [`ConfigError`] for every command line or setting
//! that cannot be run, one [`FileError`] for files that cannot be written. Messages say what
//! went wrong and what to do next.
//!
//! This is the ground floor: it imports no feature module, so every module can use it without
//! a cycle. A feature error that belongs in a configuration (an unknown probe source, say)
//! arrives here as its message.

use std::path::PathBuf;

/// A command line or setting that cannot be run, said in one line with what to do instead.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A number or name outside what the option accepts.
    #[error("--{name} must be {what}, got {value}")]
    OutOfRange {
        name: &'static str,
        what: String,
        value: String,
    },
    /// An option given to a command or workload it does not apply to.
    #[error("--{name} applies to {applies} only; {hint}")]
    NotApplicable {
        name: &'static str,
        applies: &'static str,
        hint: &'static str,
    },
    /// A byte size that does not parse.
    #[error("--{name}: cannot read '{value}' as a size; use a number with an optional k, m, g or t suffix (powers of 1024), e.g. 16g or 1k")]
    BadSize { name: &'static str, value: String },
    /// A directory option naming no directory.
    #[error("--dir '{0}' is not an existing directory; create it or pick another")]
    BadDir(PathBuf),
    /// More memory asked for than the machine has available.
    #[error("--size {size} is more than the {available} bytes of memory available now (MemAvailable in /proc/meminfo); use a smaller --size")]
    TooBig { size: u64, available: u64 },
    /// A `--fail-on` name that is not a verdict.
    #[error(
        "unknown verdict '{0}'; valid: rdtsc_trapped, rdtscp_trapped, vdso_fallback, \
         vdso_fallback:<clock>, tsc_unsynchronized, clock_warps"
    )]
    UnknownVerdict(String),
    /// `--emulate-trap` cannot be set up.
    #[error("--emulate-trap: {0}")]
    Trap(String),
    /// An output path that cannot be written, found before anything is measured.
    #[error("cannot write '{path}': {why}")]
    Output { path: PathBuf, why: String },
    /// Any other invalid setting, already phrased for the user (it names its option).
    #[error("{0}")]
    Invalid(String),
}

impl ConfigError {
    /// [`ConfigError::OutOfRange`] from anything printable.
    pub fn range(name: &'static str, what: impl Into<String>, value: impl ToString) -> Self {
        ConfigError::OutOfRange {
            name,
            what: what.into(),
            value: value.to_string(),
        }
    }
}

/// Errors writing files.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("cannot write '{path}' (check the directory exists and is writable)")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}
