//! `getppid` (the null system call: entry and exit, nothing else) and `sched_yield`.
//!
//! The seed reports `sched_yield` as a no-op on one system when the binary is not linked with
//! pthread. Here each sched_yield task counts its context switches over the loop
//! (`getrusage(RUSAGE_THREAD)`), then times raw `getppid` and `sched_yield` in paired batches
//! in the same pinned thread (the median of each one's batches). A yield that enters the
//! scheduler costs clearly more than the null call even when nothing else is runnable (it goes
//! through `schedule()`, which picks the same task again and so counts no switch); with another
//! runnable task on the CPU it also switches.

use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use super::result::{RunResult, SchedYieldCheck};
use super::runner::{count_until_stop, step, StepError, Workload};
use crate::measure::{self, PairedConfig};
use crate::sys::clock::syscall_getppid;
use crate::sys::cpu::context_switches;
use crate::sys::mem::{Control, Slot};
use crate::sys::worker;

const SETUP: u32 = 100;

/// The null system call.
#[derive(Debug)]
pub struct Getppid;

impl Workload for Getppid {
    type Worker = ();

    fn prepare(&self, _task: usize) -> crate::error::Result<Vec<()>> {
        Ok(vec![()])
    }

    fn run(&self, _: (), slot: &Slot, control: &Control) -> Result<(), StepError> {
        count_until_stop(slot, control, || {
            std::hint::black_box(syscall_getppid());
            Ok(())
        })
    }

    fn step_name(&self, _i: u32) -> String {
        "getppid".into()
    }
}

/// `sched_yield` with the scheduler check.
#[derive(Debug)]
pub struct SchedYield {
    /// Time spent timing each of getppid and sched_yield after the run.
    pub calibration: Duration,
}

/// The verdict rule: the call entered the scheduler if it costs at least 1.2 times the null
/// call, or if it switched at least once per ten calls.
pub fn entered_scheduler(ratio: f64, voluntary_per_call: f64) -> bool {
    ratio >= 1.2 || voluntary_per_call >= 0.1
}

impl Workload for SchedYield {
    type Worker = ();

    fn prepare(&self, _task: usize) -> crate::error::Result<Vec<()>> {
        Ok(vec![()])
    }

    fn run(&self, _: (), slot: &Slot, control: &Control) -> Result<(), StepError> {
        let (v0, i0) = context_switches().map_err(step(SETUP))?;
        count_until_stop(slot, control, || {
            worker::sched_yield().map_err(step(0))?;
            Ok(())
        })?;
        let (v1, i1) = context_switches().map_err(step(SETUP))?;
        slot.aux[0].store(v1.saturating_sub(v0), Relaxed);
        slot.aux[1].store(i1.saturating_sub(i0), Relaxed);
        // Paired batches (measure::paired_difference): a moment of preemption or another task
        // on the CPU lands on a few batches of either and moves neither median, where two
        // means over two windows one after the other take it whole into one of them.
        let cfg = PairedConfig {
            budget: 2 * self.calibration,
            resamples: 100,
            ..PairedConfig::quick(1)
        };
        let paired = measure::paired_difference(&cfg, syscall_getppid, || {
            let _ = worker::sched_yield();
        })
        .ok_or_else(|| std::io::Error::other("too few paired batches of getppid and sched_yield"))
        .map_err(step(SETUP))?;
        let (getppid, yield_ns) = (paired.a_ns, paired.b_ns);
        slot.aux[2].store((getppid * 1000.0) as u64, Relaxed);
        slot.aux[3].store((yield_ns * 1000.0) as u64, Relaxed);
        Ok(())
    }

    fn step_name(&self, i: u32) -> String {
        if i == 0 { "sched_yield" } else { "getrusage" }.into()
    }

    fn finish(&self, run: &mut RunResult, slots: &[&Slot]) {
        let (mut vol, mut invol, mut calls) = (0u64, 0u64, 0u64);
        let mut getppid = Vec::new();
        let mut yields = Vec::new();
        for (t, s) in slots.iter().enumerate() {
            let (v, i) = (s.aux[0].load(Relaxed), s.aux[1].load(Relaxed));
            vol += v;
            invol += i;
            calls += s.iterations.load(Relaxed);
            getppid.push(s.aux[2].load(Relaxed) as f64 / 1000.0);
            yields.push(s.aux[3].load(Relaxed) as f64 / 1000.0);
            if let Some(tr) = run.per_task.get_mut(t) {
                tr.voluntary_switches = Some(v);
                tr.involuntary_switches = Some(i);
            }
        }
        let g = crate::stats::median(&getppid).unwrap_or(0.0);
        let y = crate::stats::median(&yields).unwrap_or(0.0);
        let ratio = if g > 0.0 { y / g } else { 0.0 };
        let per = |n: u64| {
            if calls > 0 {
                n as f64 / calls as f64
            } else {
                0.0
            }
        };
        let entered = entered_scheduler(ratio, per(vol));
        let summary = format!(
            "sched_yield {} the scheduler: {y:.0} ns per call against {g:.0} ns for getppid ({ratio:.2}x), {:.3} voluntary switches per call",
            if entered { "entered" } else { "did NOT enter (a no-op?)" },
            per(vol)
        );
        run.sched_yield = Some(SchedYieldCheck {
            yield_ns: y,
            getppid_ns: g,
            ratio,
            voluntary_switches_per_call: per(vol),
            involuntary_switches_per_call: per(invol),
            entered_scheduler: entered,
            summary,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdict_rule() {
        assert!(entered_scheduler(2.0, 0.0));
        assert!(entered_scheduler(1.0, 0.5));
        assert!(!entered_scheduler(1.05, 0.0));
        assert!(!entered_scheduler(0.0, 0.0));
    }
}
