//! The will-it-scale runner.
//!
//! Semantics (as will-it-scale's `main.c`): every task runs its workload's iteration in a
//! loop and increments its own counter, alone in a 128-byte block of shared memory
//! (`MAP_SHARED | MAP_ANONYMOUS`, so forked processes and threads are handled alike). The
//! parent starts the tasks, waits for the warm-up, then reads every counter once per interval
//! (one second by default) and records the per-interval total and the slowest and fastest
//! task. The parent sleeps in between; it is not pinned and takes no part in the loop.
//!
//! A worker's loop costs, per iteration, one relaxed load of the stop word (a cache line
//! nobody writes during the run) and one load/add/store to its own counter: a few cycles
//! against the ~1 µs of a pipe1 iteration (`benches/workload.rs` measures it).
//!
//! Stopping: the parent raises the shared stop word; workers finish their iteration, clean
//! up (close, unlink) and exit. Processes that do not exit within 5 s are killed; all are
//! reaped. A SIGINT/SIGTERM to the parent ends the sampling early and marks the run
//! stopped (`partial` in its JSON).

use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

use crate::error::Context;
use crate::fail as bail;

use super::plan::RunPlan;
use super::result::{Mode, RunResult};
use super::summary::assemble;
use crate::sys;
use crate::sys::mem::{Control, SharedBlock, Slot};
use crate::sys::worker::{self, Exit, Pid};

/// Worker states in [`Slot::state`].
pub const STARTING: u64 = 0;
pub const RUNNING: u64 = 1;
pub const FINISHED: u64 = 2;
pub const FAILED: u64 = 3;

/// A failed step of an iteration: its index in the workload's definition and the error.
#[derive(Debug)]
pub struct StepError {
    pub step: u32,
    pub error: std::io::Error,
}

/// `result.map_err(step(i))`: tags an I/O error with the step that failed.
pub fn step(i: u32) -> impl FnOnce(std::io::Error) -> StepError {
    move |error| StepError { step: i, error }
}

/// A workload the runner can run.
pub trait Workload: Sync {
    /// What one worker owns (descriptors, paths), prepared by the parent before forking or
    /// spawning, then moved into the worker.
    type Worker: Send;

    /// Workers per task: 1, or 2 for pingpong (initiator, responder). Only the first worker of
    /// a task counts iterations.
    fn workers_per_task(&self) -> usize {
        1
    }

    /// The workers of task `task`, in role order.
    fn prepare(&self, task: usize) -> crate::error::Result<Vec<Self::Worker>>;

    /// Runs one worker until the stop word is raised, counting into `slot.iterations`.
    fn run(&self, worker: Self::Worker, slot: &Slot, control: &Control) -> Result<(), StepError>;

    /// The name of step `i` of an iteration, for error messages.
    fn step_name(&self, i: u32) -> String;

    /// Adds workload-specific figures from the counting workers' finished slots.
    fn finish(&self, _run: &mut RunResult, _slots: &[&Slot]) {}
}

/// Counts iterations of `body` into `slot` until `control.stop` is raised.
#[inline(always)]
pub fn count_until_stop<F>(slot: &Slot, control: &Control, mut body: F) -> Result<(), StepError>
where
    F: FnMut() -> Result<(), StepError>,
{
    let it = &slot.iterations;
    if let Some(mut inject) = super::inject::active() {
        // `simulate --validate`: emulated kernel timestamp reads after each iteration.
        while control.stop.load(Relaxed) == 0 {
            body()?;
            inject.iteration();
            it.store(it.load(Relaxed) + 1, Relaxed);
        }
        return Ok(());
    }
    while control.stop.load(Relaxed) == 0 {
        body()?;
        it.store(it.load(Relaxed) + 1, Relaxed);
    }
    Ok(())
}

fn worker_main<W: Workload>(
    w: &W,
    worker: W::Worker,
    cpu: Option<usize>,
    slot: &Slot,
    control: &Control,
) -> i32 {
    if let Some(c) = cpu {
        if let Err(e) = sys::cpu::pin_to_cpu(c) {
            fail(slot, u32::MAX, &e);
            return 1;
        }
    }
    slot.state.store(RUNNING, Relaxed);
    match w.run(worker, slot, control) {
        Ok(()) => {
            slot.state.store(FINISHED, Relaxed);
            0
        }
        Err(e) => {
            fail(slot, e.step, &e.error);
            1
        }
    }
}

fn fail(slot: &Slot, step: u32, e: &std::io::Error) {
    let errno = e.raw_os_error().unwrap_or(0) as u32;
    slot.error
        .store((u64::from(step) << 32) | u64::from(errno), Relaxed);
    slot.state.store(FAILED, Relaxed);
}

fn failure<W: Workload>(w: &W, slots: &[Slot]) -> Option<String> {
    slots.iter().enumerate().find_map(|(i, s)| {
        (s.state.load(Relaxed) == FAILED).then(|| {
            let v = s.error.load(Relaxed);
            let step = (v >> 32) as u32;
            let what = if step == u32::MAX {
                "pinning to its CPU".to_string()
            } else {
                w.step_name(step)
            };
            let err = std::io::Error::from_raw_os_error((v & 0xffff_ffff) as i32);
            format!("worker {i} failed at {what}: {err}")
        })
    })
}

/// Sleeps until `deadline`; `false` if a stop signal arrived first (seen within 50 ms: the
/// sleep resumes after a signal, so the flag is polled; 20 wake-ups a second cost the workers
/// nothing measurable).
fn sleep_until(deadline: Instant) -> bool {
    loop {
        if sys::signal::stop_requested() {
            return false;
        }
        let now = Instant::now();
        if now >= deadline {
            return true;
        }
        std::thread::sleep((deadline - now).min(Duration::from_millis(50)));
    }
}

/// What the parent saw while sampling.
struct Sampled {
    totals: Vec<f64>,
    per_task: Vec<Vec<f64>>,
    stopped: bool,
    error: Option<String>,
}

fn snapshot(slots: &[Slot], per_task: usize) -> Vec<u64> {
    slots
        .iter()
        .step_by(per_task)
        .map(|s| s.iterations.load(Relaxed))
        .collect()
}

/// The parent's part: wait for the workers, warm up, sample.
fn sample<W: Workload>(
    w: &W,
    plan: &RunPlan,
    block: &SharedBlock,
    mut alive: impl FnMut() -> Option<String>,
) -> Sampled {
    let slots = block.slots();
    let per = w.workers_per_task();
    let mut out = Sampled {
        totals: Vec::new(),
        per_task: vec![Vec::new(); plan.tasks],
        stopped: false,
        error: None,
    };
    let started = Instant::now();
    while slots.iter().any(|s| s.state.load(Relaxed) == STARTING) {
        if let Some(e) = failure(w, slots).or_else(&mut alive) {
            out.error = Some(e);
            return out;
        }
        if started.elapsed() > Duration::from_secs(30) {
            out.error = Some("workers did not start within 30 s".into());
            return out;
        }
        if sys::signal::stop_requested() {
            out.stopped = true;
            return out;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    if !sleep_until(Instant::now() + plan.warmup) {
        out.stopped = true;
        return out;
    }
    let mut prev = snapshot(slots, per);
    let mut prev_t = Instant::now();
    let mut next = prev_t + plan.interval;
    while out.totals.len() < plan.samples {
        if !sleep_until(next) {
            out.stopped = true;
            break;
        }
        let now_counts = snapshot(slots, per);
        let now = Instant::now();
        let dt = (now - prev_t).as_secs_f64();
        let mut total = 0.0;
        for (t, (a, b)) in now_counts.iter().zip(&prev).enumerate() {
            let rate = a.wrapping_sub(*b) as f64 / dt;
            out.per_task[t].push(rate);
            total += rate;
        }
        out.totals.push(total);
        prev = now_counts;
        prev_t = now;
        next += plan.interval;
        if let Some(e) = failure(w, slots).or_else(&mut alive) {
            out.error = Some(e);
            break;
        }
    }
    out
}

/// Runs `plan` under workload `w` and returns its result.
pub fn run<W: Workload>(w: &W, plan: &RunPlan) -> crate::error::Result<RunResult> {
    let per = w.workers_per_task();
    let n = plan.tasks * per;
    let block = SharedBlock::new(n).context("mapping the shared counters")?;
    let mut workers: Vec<Option<W::Worker>> = Vec::with_capacity(n);
    for t in 0..plan.tasks {
        let ws = w
            .prepare(t)
            .with_context(|| format!("preparing task {t}"))?;
        debug_assert_eq!(ws.len(), per);
        workers.extend(ws.into_iter().map(Some));
    }
    let cpu_of = |i: usize| plan.cpu(i / per, i % per, per);
    let control = block.control();
    let slots = block.slots();

    let sampled = match plan.mode {
        Mode::Threads => std::thread::scope(|scope| {
            let mut handles = Vec::with_capacity(n);
            for (i, wk) in workers.iter_mut().enumerate() {
                let wk = wk.take().expect("each worker is started once");
                let cpu = cpu_of(i);
                let slot = &slots[i];
                let h = std::thread::Builder::new()
                    .name(format!("tscope-w{i}"))
                    .spawn_scoped(scope, move || worker_main(w, wk, cpu, slot, control));
                match h {
                    Ok(h) => handles.push(h),
                    Err(e) => {
                        control.stop.store(1, Relaxed);
                        return Sampled {
                            totals: vec![],
                            per_task: vec![],
                            stopped: false,
                            error: Some(format!("spawning a worker thread: {e}")),
                        };
                    }
                }
            }
            let s = sample(w, plan, &block, || None);
            control.stop.store(1, Relaxed);
            for h in handles {
                let _ = h.join();
            }
            s
        }),
        Mode::Processes => {
            let mut pids: Vec<Pid> = Vec::with_capacity(n);
            let mut spawn_error = None;
            for i in 0..n {
                let cpu = cpu_of(i);
                let slot = &slots[i];
                let r = worker::fork_worker(|| {
                    let mine = workers[i].take().expect("each worker is started once");
                    // Close this child's copies of every other worker's descriptors, so that a
                    // pipe's reader sees end-of-file when its writer exits.
                    workers.clear();
                    worker_main(w, mine, cpu, slot, control)
                });
                match r {
                    Ok(pid) => pids.push(pid),
                    Err(e) => {
                        spawn_error = Some(format!("fork: {e}"));
                        break;
                    }
                }
            }
            drop(workers);
            let mut exits: Vec<Option<Exit>> = vec![None; pids.len()];
            let s = if let Some(e) = spawn_error {
                Sampled {
                    totals: vec![],
                    per_task: vec![],
                    stopped: false,
                    error: Some(e),
                }
            } else {
                sample(w, plan, &block, || {
                    for (i, &pid) in pids.iter().enumerate() {
                        if exits[i].is_none() {
                            if let Ok(Some(x)) = worker::wait(pid, false) {
                                exits[i] = Some(x);
                                return Some(format!("worker {i} exited early: {x:?}"));
                            }
                        }
                    }
                    None
                })
            };
            control.stop.store(1, Relaxed);
            reap(&pids, &mut exits);
            s
        }
    };
    if let Some(e) = sampled.error.or_else(|| failure(w, slots)) {
        bail!("{e}");
    }
    let mut result = assemble(plan, per, sampled.totals, sampled.per_task, sampled.stopped);
    for (t, tr) in result.per_task.iter_mut().enumerate() {
        tr.iterations = slots[t * per].iterations.load(Relaxed);
    }
    let counted: Vec<&Slot> = slots.iter().step_by(per).collect();
    w.finish(&mut result, &counted);
    Ok(result)
}

/// Waits up to 5 s for every child, then kills and reaps the rest.
fn reap(pids: &[Pid], exits: &mut [Option<Exit>]) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let mut pending = false;
        for (i, &pid) in pids.iter().enumerate() {
            if exits[i].is_none() {
                match worker::wait(pid, false) {
                    Ok(Some(x)) => exits[i] = Some(x),
                    Ok(None) => pending = true,
                    Err(_) => exits[i] = Some(Exit::Code(-1)),
                }
            }
        }
        if !pending {
            return;
        }
        if Instant::now() > deadline {
            for (i, &pid) in pids.iter().enumerate() {
                if exits[i].is_none() {
                    let _ = worker::kill(pid);
                    exits[i] = worker::wait(pid, true).ok().flatten();
                }
            }
            return;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}
