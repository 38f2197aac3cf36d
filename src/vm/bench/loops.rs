//! The loops `vm bench` times inside the guest: each workload's one definition
//! ([`crate::workload::single::run_loop`], the body `vm count` counts and `tscope run`
//! repeats), behind one function, [`run_loop`].
//!
//! A loop takes no timestamp of its own: the time runs from the loop's start (its set-up —
//! pingpong's fork aside — done) to the end of its last iteration, one clock read at each end,
//! so that the loop's own cost does not depend on the clocksource. Pingpong tells no start:
//! its time includes the fork and the child's end.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::error::Result;
use crate::workload::def::{OpHook, LOOPS};
use crate::workload::WorkloadName;

/// Reads the clock when the loop starts and after its `n`-th iteration, never in between.
struct Ends {
    n: u64,
    done: u64,
    start: Option<Instant>,
    end: Option<Instant>,
}

impl OpHook for Ends {
    fn begin(&mut self) {
        self.start = Some(Instant::now());
    }

    fn end_iteration(&mut self) {
        self.done += 1;
        if self.done == self.n {
            self.end = Some(Instant::now());
        }
    }
}

/// Runs `iterations` of `workload` in `dir`, set-up and teardown included, and returns the
/// time of the iterations (with pingpong's set-up and teardown: it tells no start).
pub(crate) fn run_loop(w: WorkloadName, dir: &Path, iterations: u64) -> Result<Duration> {
    if !LOOPS.contains(&w) {
        let loops: Vec<&str> = LOOPS.iter().map(|w| w.as_str()).collect();
        crate::fail!(
            "workload '{w}' has no loop the guest can time (one of {})",
            loops.join(", ")
        );
    }
    let mut ends = Ends {
        n: iterations,
        done: 0,
        start: None,
        end: None,
    };
    let called = Instant::now();
    crate::workload::single::run_loop(w, dir, iterations, &mut ends)?;
    let returned = Instant::now();
    let start = ends.start.unwrap_or(called);
    let end = ends.end.unwrap_or(returned);
    Ok(end.saturating_duration_since(start))
}
