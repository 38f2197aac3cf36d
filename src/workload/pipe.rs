//! `pipe1` and `pingpong`.
//!
//! pipe1 is will-it-scale's `tests/pipe1.c`: each task creates one pipe and, per iteration,
//! writes one byte into it and reads it back: `write(pipe:0)`, `read(pipe:0)`. No task ever
//! waits for another, so it measures the pipe's system-call path (and its timestamp updates:
//! `file_update_time` on write, `file_accessed` on read) without a wake-up.
//!
//! pingpong is the classic pipe-test (Ingo Molnar's `pipe-test-1m.c`): a pair of tasks, an
//! initiator and a responder, bounce one byte over two pipes, so every iteration is two
//! cross-task wake-ups. One iteration (counted by the initiator) is: initiator `write(pipe:0)`,
//! responder `read(pipe:0)`, responder `write(pipe:1)`, initiator `read(pipe:1)`. The pair runs
//! on one CPU (every bounce a context switch there) or on two (every bounce a cross-CPU
//! wake-up), see `--placement`.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use super::def::OpHook;
use super::runner::{count_until_stop, step, StepError, Workload};
use crate::sys::mem::{Control, Slot};
use crate::sys::worker;

/// The step index used for errors outside the iteration (creating the pipe).
const SETUP: u32 = 100;

fn eof() -> io::Error {
    io::Error::new(io::ErrorKind::UnexpectedEof, "the pipe was closed")
}

/// One iteration of pipe1 (and of fifo1, over a FIFO's two ends): write one byte into `w`
/// (step 0), read it back from `r` (step 1), `hook` told the end of each.
#[inline(always)]
pub fn pipe1_iteration<H: OpHook>(
    r: BorrowedFd<'_>,
    w: BorrowedFd<'_>,
    hook: &mut H,
) -> Result<(), StepError> {
    if worker::write_byte(w, 0).map_err(step(0))? != 1 {
        return Err(step(0)(io::ErrorKind::WriteZero.into()));
    }
    hook.op();
    worker::read_byte(r)
        .map_err(step(1))?
        .ok_or_else(|| step(1)(eof()))?;
    hook.op();
    Ok(())
}

/// One round trip of a pingpong pair's initiator: write one byte to `to` (step 0), read the
/// answer from `from` (step 3).
#[inline(always)]
pub fn initiator_iteration(to: BorrowedFd<'_>, from: BorrowedFd<'_>) -> Result<(), StepError> {
    if worker::write_byte(to, 1).map_err(step(0))? != 1 {
        return Err(step(0)(io::ErrorKind::WriteZero.into()));
    }
    worker::read_byte(from)
        .map_err(step(3))?
        .ok_or_else(|| step(3)(eof()))?;
    Ok(())
}

/// A pingpong pair's responder: reads `from` (step 1) and writes each byte back to `to`
/// (step 2) until end of file, counting each answer with `answered`.
pub fn respond(
    from: BorrowedFd<'_>,
    to: BorrowedFd<'_>,
    mut answered: impl FnMut(),
) -> Result<(), StepError> {
    while let Some(b) = worker::read_byte(from).map_err(step(1))? {
        if worker::write_byte(to, b).map_err(step(2))? != 1 {
            return Err(step(2)(io::ErrorKind::WriteZero.into()));
        }
        answered();
    }
    Ok(())
}

/// The name of pingpong's step `i`.
pub fn pingpong_step_name(i: u32) -> String {
    match i {
        0 => "initiator write".into(),
        1 => "responder read".into(),
        2 => "responder write".into(),
        3 => "initiator read".into(),
        _ => "pipe".into(),
    }
}

/// will-it-scale pipe1.
#[derive(Debug)]
pub struct Pipe1;

impl Workload for Pipe1 {
    type Worker = ();

    fn prepare(&self, _task: usize) -> crate::error::Result<Vec<()>> {
        Ok(vec![()])
    }

    fn run(&self, _: (), slot: &Slot, control: &Control) -> Result<(), StepError> {
        let (r, w) = worker::pipe().map_err(step(SETUP))?;
        let (r, w) = (r.as_fd(), w.as_fd());
        count_until_stop(slot, control, || pipe1_iteration(r, w, &mut ()))
    }

    fn step_name(&self, i: u32) -> String {
        match i {
            0 => "write".into(),
            1 => "read".into(),
            _ => "pipe".into(),
        }
    }
}

/// One side of a pingpong pair.
#[derive(Debug)]
pub enum PingpongWorker {
    /// Writes to pipe 0, reads pipe 1; counts round trips; stops when told.
    Initiator { to: OwnedFd, from: OwnedFd },
    /// Reads pipe 0, writes back to pipe 1, until pipe 0 reaches end of file.
    Responder { from: OwnedFd, to: OwnedFd },
}

/// Two tasks bouncing a byte.
#[derive(Debug)]
pub struct Pingpong;

impl Workload for Pingpong {
    type Worker = PingpongWorker;

    fn workers_per_task(&self) -> usize {
        2
    }

    fn prepare(&self, _task: usize) -> crate::error::Result<Vec<PingpongWorker>> {
        let (r0, w0) = worker::pipe()?;
        let (r1, w1) = worker::pipe()?;
        Ok(vec![
            PingpongWorker::Initiator { to: w0, from: r1 },
            PingpongWorker::Responder { from: r0, to: w1 },
        ])
    }

    fn run(&self, worker: PingpongWorker, slot: &Slot, control: &Control) -> Result<(), StepError> {
        match worker {
            PingpongWorker::Initiator { to, from } => {
                let (to, from) = (to.as_fd(), from.as_fd());
                count_until_stop(slot, control, || initiator_iteration(to, from))
                // Dropping `to` here gives the responder end of file.
            }
            PingpongWorker::Responder { from, to } => {
                let (from, to) = (from.as_fd(), to.as_fd());
                let it = &slot.iterations;
                respond(from, to, || {
                    it.store(
                        it.load(std::sync::atomic::Ordering::Relaxed) + 1,
                        std::sync::atomic::Ordering::Relaxed,
                    );
                })
            }
        }
    }

    fn step_name(&self, i: u32) -> String {
        pingpong_step_name(i)
    }
}
