//! The error vocabulary of the library, with `thiserror`: [`Error`] is what every fallible
//! library function returns; [`ConfigError`] is every command line or setting that cannot be
//! run; [`FileError`] a file that cannot be written. Messages say what went wrong and what to
//! do next. `anyhow` is used only at the edge (`commands/` and `main`), which prints the chain
//! with `{:#}` ("reading 'x.json': No such file or directory").
//!
//! [`Context`] gives library code the `.context(..)` / `.with_context(..)` habit on any
//! `Result` or `Option`, and [`fail!`](crate::fail) / [`ensure!`](crate::ensure) return an
//! [`Error::Failed`], so a message reads the same wherever it comes from.
//!
//! This is the ground floor: it imports no feature module, so every module can use it without
//! a cycle. A feature's own error type (an unknown probe source, a malformed scenario) converts
//! into [`Error`] or [`ConfigError`] where that type is defined.

use std::path::PathBuf;

/// The result of a fallible library function.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why a library call failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A setting that cannot be run.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A file that cannot be written.
    #[error(transparent)]
    File(#[from] FileError),
    /// A system call or file operation failed; the context says which.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// A JSON document that does not serialise or parse.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// What was being done when `source` failed.
    #[error("{what}")]
    Context {
        what: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },
    /// A module's own error type (a malformed scenario, a compare input), shown as it is.
    #[error(transparent)]
    Other(BoxError),
    /// A failure said in one line (a measurement that failed, a tool that is missing, a
    /// workload that stopped early).
    #[error("{0}")]
    Failed(String),
    /// A stop signal (SIGINT, SIGTERM, SIGHUP) cut the work short, deep in a call that has
    /// nothing to return yet: the domain unwinds with it, removing its scratch on the way, and
    /// [`unless_stopped`] turns it into the result's `stopped` mark where there is a result.
    #[error("interrupted")]
    Interrupted,
}

impl Error {
    /// Whether this error, or any error it wraps as context, is [`Error::Interrupted`]: a
    /// variant check, so a message that merely reads "interrupted" does not mislead.
    pub fn is_interrupted(&self) -> bool {
        match self {
            Error::Interrupted => true,
            Error::Context { source, .. } => source
                .downcast_ref::<Error>()
                .is_some_and(Error::is_interrupted),
            _ => false,
        }
    }
}

/// A stoppable step's value: `Some` when it finished, `None` when a stop signal cut it short
/// (it unwound with [`Error::Interrupted`]); any other error as it is. This is where an
/// interruption deep in the domain becomes the `stopped` mark of the result it returns.
pub fn unless_stopped<T>(step: Result<T>) -> Result<Option<T>> {
    match step {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.is_interrupted() => Ok(None),
        Err(e) => Err(e),
    }
}

impl Error {
    /// Wraps any error as the cause of `what`.
    pub fn context(what: impl Into<String>, source: impl Into<BoxError>) -> Error {
        Error::Context {
            what: what.into(),
            source: source.into(),
        }
    }
}

/// Any error, boxed: the cause inside [`Error::Context`].
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// `.context(what)` and `.with_context(|| what)` on a `Result` (the error becomes the cause)
/// or an `Option` (`None` becomes [`Error::Failed`]).
pub trait Context<T> {
    fn context(self, what: impl Into<String>) -> Result<T>;
    fn with_context<S: Into<String>>(self, what: impl FnOnce() -> S) -> Result<T>;
}

impl<T, E: Into<BoxError>> Context<T> for std::result::Result<T, E> {
    fn context(self, what: impl Into<String>) -> Result<T> {
        self.map_err(|e| Error::context(what, e))
    }

    fn with_context<S: Into<String>>(self, what: impl FnOnce() -> S) -> Result<T> {
        self.map_err(|e| Error::context(what(), e))
    }
}

impl<T> Context<T> for Option<T> {
    fn context(self, what: impl Into<String>) -> Result<T> {
        self.ok_or_else(|| Error::Failed(what.into()))
    }

    fn with_context<S: Into<String>>(self, what: impl FnOnce() -> S) -> Result<T> {
        self.ok_or_else(|| Error::Failed(what().into()))
    }
}

/// An [`Error::Failed`] with a formatted message.
#[macro_export]
macro_rules! failure {
    ($($arg:tt)*) => {
        $crate::error::Error::Failed(format!($($arg)*))
    };
}

/// Returns an [`Error::Failed`] with a formatted message from the enclosing function.
#[macro_export]
macro_rules! fail {
    ($($arg:tt)*) => {
        return Err($crate::error::Error::Failed(format!($($arg)*)).into())
    };
}

/// Fails with a formatted message unless the condition holds.
#[macro_export]
macro_rules! ensure {
    ($cond:expr, $($arg:tt)*) => {
        if !$cond {
            $crate::fail!($($arg)*);
        }
    };
}

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
         vdso_fallback:<clock>, tsc_unsynchronized, clock_warps, tsc_marked_unstable, \
         clocksource_switched, vdso_inconsistent, tsc_frequency_mismatch"
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interruption_is_a_variant_even_under_context() {
        let e: Result<()> = Err(Error::Interrupted);
        let wrapped = e.context("fetching a kernel").unwrap_err();
        assert!(wrapped.is_interrupted());
        // A failure that merely says the word is not an interruption.
        let said = || Error::Failed("interrupted".into());
        assert!(!said().is_interrupted());
        assert_eq!(unless_stopped(Err::<u8, _>(wrapped)).unwrap(), None);
        assert_eq!(unless_stopped(Ok(3)).unwrap(), Some(3));
        assert!(unless_stopped::<u8>(Err(said())).is_err());
    }
}
