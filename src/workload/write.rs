//! `write-only` and `write-stat`: one file per task, created once in the scratch directory.
//! Per iteration: `pwrite(fd, 1 byte, offset 0)`, and for write-stat `fstat(fd)` after it.
//!
//! Both count how many successive modifications got an mtime equal to the previous one —
//! what `make`, racy-git and NFS change detection see. On a multigrain file system (Linux ≥
//! 6.13: ext4, tmpfs, xfs, btrfs) a stat marks the inode's ctime as queried and the next
//! change then takes a fine-grained timestamp, so write-stat sees no equal mtimes there.
//!
//! write-stat reads each mtime from its own `fstat`. write-only cannot: a stat would turn it
//! into write-stat. A change to an inode nobody queried is stamped with the coarse clock
//! (`ktime_get_coarse_real_ts64_mg`, i.e. `CLOCK_REALTIME_COARSE`, raised to the multigrain
//! floor if a fine-grained stamp was handed out in this tick), so write-only reads
//! `CLOCK_REALTIME_COARSE` through the vDSO after each write (a few ns) and takes that as the
//! mtime. Every [`CHECK_EVERY`] writes, and once after the loop, an `fstat` compares the
//! inferred value with the real mtime (the pair that stat perturbs is left out of the count).
//! A mismatch means the multigrain floor moved: some other process took a fine-grained
//! timestamp during that tick, which also changes this file's next mtime, so the inferred
//! equal share overstates the real one on a busy machine.

use std::ffi::CString;

use crate::error::Context;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::atomic::Ordering::Relaxed;

use super::def::OpHook;
use super::result::{MtimeCheck, RunResult};
use super::runner::{count_until_stop, step, StepError, Workload};
use crate::sys::clock::{id, vdso_clock_gettime};
use crate::sys::fs::{self, Mtime};
use crate::sys::mem::{Control, Slot};

const SETUP: u32 = 100;
const CHECK: u32 = 101;

/// write-only checks its inferred mtime against a real `fstat` every this many writes (tens of
/// ms here, longer than a 4 ms tick, so one check's own perturbation has passed by the next).
pub const CHECK_EVERY: u64 = 1 << 16;

/// What follows each write: nothing (write-only), `fstat` (write-stat), or `statx` asking for
/// the size only (write-stat-control).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatKind {
    None,
    Fstat,
    StatxSize,
}

impl StatKind {
    /// The stat of workload `w`.
    pub fn of(w: super::WorkloadName) -> StatKind {
        match w {
            super::WorkloadName::WriteStat => StatKind::Fstat,
            super::WorkloadName::WriteStatControl => StatKind::StatxSize,
            _ => StatKind::None,
        }
    }
}

/// write-only, write-stat or write-stat-control.
#[derive(Debug)]
pub struct WriteFile {
    pub dir: PathBuf,
    pub stat: StatKind,
}

/// Counts successive equal values.
#[derive(Debug, Default, Clone, Copy)]
pub struct EqualTally {
    prev: Option<Mtime>,
    pub pairs: u64,
    pub equal: u64,
}

impl EqualTally {
    #[inline(always)]
    pub fn push(&mut self, m: Mtime) {
        if let Some(p) = self.prev {
            self.pairs += 1;
            self.equal += u64::from(p == m);
        }
        self.prev = Some(m);
    }

    /// Takes `m` as the new previous value without counting a pair.
    pub fn restart(&mut self, m: Mtime) {
        self.prev = Some(m);
    }

    pub fn last(&self) -> Option<Mtime> {
        self.prev
    }

    /// The pairs of several tallies (each of its own file) together.
    pub fn sum(tallies: &[EqualTally]) -> EqualTally {
        EqualTally {
            prev: None,
            pairs: tallies.iter().map(|t| t.pairs).sum(),
            equal: tallies.iter().map(|t| t.equal).sum(),
        }
    }

    /// The share of pairs that were equal (0 without pairs).
    pub fn share(&self) -> f64 {
        if self.pairs == 0 {
            0.0
        } else {
            self.equal as f64 / self.pairs as f64
        }
    }
}

fn coarse_now() -> std::io::Result<Mtime> {
    let ns = vdso_clock_gettime(id::REALTIME_COARSE)?;
    Ok(Mtime {
        sec: (ns / 1_000_000_000) as i64,
        nsec: (ns % 1_000_000_000) as i64,
    })
}

/// One iteration of write-only, write-stat or write-stat-control on the open file `f`:
/// `pwrite` one byte at offset 0 (step 0) and, for the stats, `fstat` or `statx(STATX_SIZE)`
/// (step 1), whose mtime goes into `tally`; `hook` told the end of each.
#[inline(always)]
pub fn write_iteration<H: OpHook>(
    f: BorrowedFd<'_>,
    stat: StatKind,
    tally: &mut EqualTally,
    hook: &mut H,
) -> Result<(), StepError> {
    fs::pwrite_byte(f, b'x', 0).map_err(step(0))?;
    hook.op();
    match stat {
        StatKind::None => {}
        StatKind::Fstat => {
            tally.push(fs::fstat_mtime(f).map_err(step(1))?);
            hook.op();
        }
        StatKind::StatxSize => {
            tally.push(fs::statx_mtime(f, crate::probe::update::CONTROL_MASK).map_err(step(1))?);
            hook.op();
        }
    }
    Ok(())
}

impl Workload for WriteFile {
    type Worker = CString;

    fn prepare(&self, task: usize) -> crate::error::Result<Vec<CString>> {
        let mut p = self.dir.as_os_str().as_bytes().to_vec();
        p.extend_from_slice(format!("/write.{task}").as_bytes());
        Ok(vec![
            CString::new(p).context("a scratch path with a NUL byte")?
        ])
    }

    fn run(&self, path: CString, slot: &Slot, control: &Control) -> Result<(), StepError> {
        let flags = libc::O_RDWR | libc::O_CREAT | libc::O_EXCL;
        let fd = fs::open(&path, flags, 0o600).map_err(step(SETUP))?;
        let f = fd.as_fd();
        let mut tally = EqualTally::default();
        if self.stat != StatKind::None {
            count_until_stop(slot, control, || {
                write_iteration(f, self.stat, &mut tally, &mut ())
            })?;
        } else {
            let (mut since, mut checks, mut mismatches, mut skip) = (0u64, 0u64, 0u64, false);
            count_until_stop(slot, control, || {
                write_iteration(f, StatKind::None, &mut tally, &mut ())?;
                let m = coarse_now().map_err(step(CHECK))?;
                if skip {
                    // The write after a check's stat took a fine-grained stamp: the kernel's
                    // mtime differs from the previous one where the inference says equal.
                    tally.restart(m);
                    skip = false;
                } else {
                    tally.push(m);
                }
                since += 1;
                if since == CHECK_EVERY {
                    since = 0;
                    checks += 1;
                    mismatches += u64::from(fs::fstat_mtime(f).map_err(step(CHECK))? != m);
                    skip = true;
                }
                Ok(())
            })?;
            let real = fs::fstat_mtime(f).map_err(step(CHECK))?;
            checks += 1;
            mismatches += u64::from(tally.last() != Some(real) && !skip);
            slot.aux[2].store(checks, Relaxed);
            slot.aux[3].store(mismatches, Relaxed);
        }
        slot.aux[0].store(tally.pairs, Relaxed);
        slot.aux[1].store(tally.equal, Relaxed);
        fs::close(fd).map_err(step(SETUP))?;
        fs::unlink(&path).map_err(step(SETUP))?;
        Ok(())
    }

    fn step_name(&self, i: u32) -> String {
        match i {
            0 => "pwrite".into(),
            1 if self.stat == StatKind::StatxSize => "statx".into(),
            1 => "fstat".into(),
            CHECK => "reading the mtime".into(),
            _ => "creating or removing the file".into(),
        }
    }

    fn finish(&self, run: &mut RunResult, slots: &[&Slot]) {
        let (mut pairs, mut equal, mut checks, mut mismatches) = (0, 0, 0, 0);
        for (t, s) in slots.iter().enumerate() {
            let (p, e) = (s.aux[0].load(Relaxed), s.aux[1].load(Relaxed));
            pairs += p;
            equal += e;
            checks += s.aux[2].load(Relaxed);
            mismatches += s.aux[3].load(Relaxed);
            if let Some(tr) = run.per_task.get_mut(t) {
                tr.mtime_pairs = Some(p);
                tr.equal_successive_mtimes = Some(e);
            }
        }
        let inferred = self.stat == StatKind::None;
        run.mtimes = Some(MtimeCheck {
            source: match self.stat {
                StatKind::Fstat => "fstat",
                StatKind::StatxSize => "statx",
                StatKind::None => "realtime_coarse",
            }
            .into(),
            pairs,
            equal,
            equal_share: if pairs > 0 {
                equal as f64 / pairs as f64
            } else {
                0.0
            },
            inference_checked: inferred.then_some(checks > 0 && mismatches == 0),
            inference_checks: inferred.then_some(checks),
            inference_mismatches: inferred.then_some(mismatches),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tally_counts_successive_equal_values() {
        let mut t = EqualTally::default();
        let m = |sec, nsec| Mtime { sec, nsec };
        for v in [m(1, 0), m(1, 0), m(1, 5), m(1, 5), m(1, 5), m(2, 5)] {
            t.push(v);
        }
        assert_eq!((t.pairs, t.equal), (5, 3));
        assert_eq!(t.last(), Some(m(2, 5)));
        assert_eq!(EqualTally::default().pairs, 0);
    }
}
