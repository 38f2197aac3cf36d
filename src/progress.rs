//! The one channel from domain work to the person waiting for it. Domain modules never print:
//! a long job (a report, a guest matrix, a kernel download) tells a [`Progress`] what it is
//! doing, and the command decides how that shows (a bar on a terminal, `tscope: …` lines on
//! stderr, or nothing). What a result must carry — warnings, skipped parts — goes into the
//! result itself, so that JSON readers see it too.
//!
//! Ground floor: imports nothing from the crate.

/// Receives progress from a long job. Both methods default to doing nothing.
pub trait Progress: Sync {
    /// One of a known number of steps starts (`what` says which).
    fn step(&self, what: &str) {
        let _ = what;
    }

    /// A line the user should see now: what is being fetched or built, a fallback taken.
    fn note(&self, line: &str) {
        let _ = line;
    }
}

/// Progress that goes nowhere (tests, nested jobs whose parent reports the steps).
#[derive(Debug, Clone, Copy, Default)]
pub struct Quiet;

impl Progress for Quiet {}
