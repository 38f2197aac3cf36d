//! The loops `vm bench` times inside the guest: each workload's one definition
//! ([`crate::workload::single::run_loop`]), timed from outside with one clock read before the
//! first iteration and one after the last (a counting hook), so the loop's own cost does not depend on
//! the clocksource: no timestamp is taken per iteration, only a counter is bumped. Its set-up
//! and teardown fall outside the span, except pingpong's, whose loop tells no hook: its span
//! is the whole call (a fork and a kill, constant across clocksources).

use std::path::Path;
use std::time::{Duration, Instant};

use crate::error::Result;
use crate::workload::def::{OpHook, LOOPS};
use crate::workload::{single, WorkloadName};

/// The workloads the guest can time, by name: every workload with a single-threaded loop.
pub const WORKLOADS: [&str; LOOPS.len()] = {
    let mut out = [""; LOOPS.len()];
    let mut i = 0;
    while i < LOOPS.len() {
        out[i] = LOOPS[i].as_str();
        i += 1;
    }
    out
};

/// Times the iterations of one loop: the clock is read when the loop begins and when its last
/// iteration ends, never in between.
struct Span {
    left: u64,
    start: Option<Instant>,
    end: Option<Instant>,
}

impl OpHook for Span {
    fn begin(&mut self) {
        self.start = Some(Instant::now());
    }

    fn end_iteration(&mut self) {
        self.left = self.left.saturating_sub(1);
        if self.left == 0 {
            self.end = Some(Instant::now());
        }
    }
}

/// Runs `iterations` of `workload` in `dir`, set-up and teardown included, and returns the
/// time of the iterations alone.
pub fn run_loop(workload: &str, dir: &Path, iterations: u64) -> Result<Duration> {
    let Some(w) = WorkloadName::parse(workload).filter(|w| LOOPS.contains(w)) else {
        crate::fail!(
            "unknown workload '{workload}' (one of {})",
            WORKLOADS.join(", ")
        )
    };
    let mut span = Span {
        left: iterations,
        start: None,
        end: None,
    };
    let called = Instant::now();
    single::run_loop(w, dir, iterations, &mut span)?;
    let returned = Instant::now();
    Ok(match (span.start, span.end) {
        (Some(s), Some(e)) => e.duration_since(s),
        // No iteration ran (a baseline of 0): from the start to the return.
        (Some(s), None) => returned.duration_since(s),
        _ => returned.duration_since(called),
    })
}
