//! Each workload of [`super::def::LOOPS`] as one loop in the calling thread: what a guest's
//! PID 1 runs (`vm count` counts it with kprobes, `vm bench` times it). No thread is started;
//! pingpong forks its responder. The iteration is the same body the will-it-scale runner
//! repeats ([`super::pipe::pipe1_iteration`], [`super::write::write_iteration`],
//! [`super::vfsmix::vfsmix_iteration`], pingpong's initiator and responder).

use std::ffi::CString;
use std::os::fd::AsFd;
use std::path::Path;

use super::def::OpHook;
use super::name::WorkloadName;
use super::runner::{StepError, Workload};
use super::write::EqualTally;
use super::{pipe, vfsmix, write};
use crate::error::{Context, Result};
use crate::sys::{self, fs, worker};

/// What a loop found besides its time.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LoopOutcome {
    /// write-stat: the share of successive writes whose `fstat` mtime equals the previous one
    /// (`None` for other workloads, or fewer than two iterations).
    pub equal_mtime_share: Option<f64>,
}

/// Runs `iterations` iterations of `w` in the calling thread, its files in `dir`, setup and
/// teardown included (so `iterations` = 0 runs them alone: a baseline). `hook` is told the
/// loop's start, the end of every op (in [`super::def::positions`] order; pingpong: none) and
/// of every iteration. An error for a workload without a single-threaded loop.
pub fn run_loop<H: OpHook>(
    w: WorkloadName,
    dir: &Path,
    iterations: u64,
    hook: &mut H,
) -> Result<LoopOutcome> {
    let name = w.as_str();
    let failed = |step: String, e: StepError| crate::failure!("{name}: {step}: {}", e.error);
    let mut outcome = LoopOutcome::default();
    match w {
        WorkloadName::Pipe1 => {
            let (r, wr) = worker::pipe().with_context(|| format!("{name}: pipe"))?;
            hook.begin();
            for _ in 0..iterations {
                pipe::pipe1_iteration(r.as_fd(), wr.as_fd(), hook)
                    .map_err(|e| failed(pipe::Pipe1.step_name(e.step), e))?;
                hook.end_iteration();
            }
        }
        WorkloadName::Fifo1 => {
            let path = pipe::fifo_path(dir, 0)?;
            let steps = pipe::Fifo1 {
                dir: dir.to_path_buf(),
            };
            let (r, wr) = pipe::open_fifo(&path).map_err(|e| failed(steps.step_name(e.step), e))?;
            hook.begin();
            for _ in 0..iterations {
                pipe::pipe1_iteration(r.as_fd(), wr.as_fd(), hook)
                    .map_err(|e| failed(steps.step_name(e.step), e))?;
                hook.end_iteration();
            }
            pipe::close_fifo(&path, r, wr).map_err(|e| failed(steps.step_name(e.step), e))?;
        }
        WorkloadName::Pingpong => {
            pingpong(iterations).map_err(|e| failed(pipe::pingpong_step_name(e.step), e))?
        }
        WorkloadName::WriteOnly | WorkloadName::WriteStat | WorkloadName::WriteStatControl => {
            let stat = write::StatKind::of(w);
            let path = CString::new(format!("{}/{name}.file", dir.display()))
                .context("a scratch path with a NUL byte")?;
            let flags = libc::O_RDWR | libc::O_CREAT | libc::O_TRUNC;
            let fd = fs::open(&path, flags, 0o600).with_context(|| format!("{name}: open"))?;
            let mut tally = EqualTally::default();
            let steps = write::WriteFile {
                dir: dir.to_path_buf(),
                stat,
            };
            hook.begin();
            for _ in 0..iterations {
                write::write_iteration(fd.as_fd(), stat, &mut tally, hook)
                    .map_err(|e| failed(steps.step_name(e.step), e))?;
                hook.end_iteration();
            }
            fs::close(fd).with_context(|| format!("{name}: close"))?;
            fs::unlink(&path).with_context(|| format!("{name}: unlink"))?;
            outcome.equal_mtime_share = (stat != write::StatKind::None && tally.pairs > 0)
                .then(|| tally.equal as f64 / tally.pairs as f64);
        }
        WorkloadName::Vfsmix => {
            let page = sys::mem::page_size();
            let mut names = vfsmix::NameBuf::new(dir, "vfsmix", 0);
            hook.begin();
            for seq in 0..iterations {
                vfsmix::vfsmix_iteration(names.set(seq), page, hook).map_err(|e| {
                    let step = vfsmix::STEPS
                        .get(e.step as usize)
                        .copied()
                        .unwrap_or("setup");
                    failed(step.to_string(), e)
                })?;
                hook.end_iteration();
            }
        }
        other => crate::fail!(
            "{} has no single-threaded loop (loops: {})",
            other.as_str(),
            super::def::LOOPS.map(WorkloadName::as_str).join(", ")
        ),
    }
    Ok(outcome)
}

/// pingpong with a forked responder: a byte goes to the child over one pipe and comes back
/// over another.
fn pingpong(iterations: u64) -> std::result::Result<(), StepError> {
    let setup = |e| StepError {
        step: 100,
        error: e,
    };
    let (r1, w1) = worker::pipe().map_err(setup)?;
    let (r2, w2) = worker::pipe().map_err(setup)?;
    let child =
        worker::fork_worker(|| i32::from(pipe::respond(r1.as_fd(), w2.as_fd(), || {}).is_err()))
            .map_err(setup)?;
    let mut result = Ok(());
    for _ in 0..iterations {
        result = pipe::initiator_iteration(w1.as_fd(), r2.as_fd());
        if result.is_err() {
            break;
        }
    }
    // The child holds a copy of the write end too, so it never sees end of file: end it.
    let _ = worker::kill(child);
    let _ = worker::wait(child, true);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts what a hook is told.
    #[derive(Default)]
    struct Count {
        begun: u32,
        ops: u64,
        iterations: u64,
    }

    impl OpHook for Count {
        fn begin(&mut self) {
            self.begun += 1;
        }
        fn op(&mut self) {
            self.ops += 1;
        }
        fn end_iteration(&mut self) {
            self.iterations += 1;
        }
    }

    #[test]
    fn every_loop_runs_and_tells_its_hook_each_position() {
        let dir = tempfile::tempdir().unwrap();
        for w in super::super::def::LOOPS {
            let mut c = Count::default();
            let out = run_loop(w, dir.path(), 3, &mut c).unwrap();
            let per = super::super::def::positions(w).len() as u64;
            assert_eq!(c.ops, 3 * per, "{w:?}");
            if per > 0 {
                assert_eq!((c.begun, c.iterations), (1, 3), "{w:?}");
            }
            assert_eq!(
                out.equal_mtime_share.is_some(),
                w == WorkloadName::WriteStat
            );
            // Nothing is left behind in the directory.
            assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "{w:?}");
        }
        let e = run_loop(WorkloadName::Mem, dir.path(), 1, &mut ()).unwrap_err();
        assert!(e.to_string().contains("no single-threaded loop"), "{e}");
    }
}
