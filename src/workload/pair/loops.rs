//! The pair's loops: the files one side works on, and one timed block of a pattern's
//! iterations, the calls of its tail ([`crate::price::Tail`]) timed on their own.

use std::ffi::CString;
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::Instant;

use super::{Pattern, RECORDED};
use crate::error::Context;
use crate::sys::fs as sfs;
use crate::trace::Syscall;
use crate::workload::write::EqualTally;

/// The file one side works on: the pattern's path, and (for [`Pattern::Write`]) the open file.
pub(super) struct Target {
    path: CString,
    fd: Option<std::os::fd::OwnedFd>,
    /// The second file that [`Pattern::ChmodRead`] reads (one byte long).
    read: Option<std::os::fd::OwnedFd>,
    /// The other files that [`Pattern::ChmodOthers`] chmods.
    others: Vec<std::os::fd::OwnedFd>,
    /// The files opened and closed around each timed call of a pattern that sets its calls
    /// apart ([`crate::price::Tail::apart`]).
    spacers: Vec<CString>,
}

/// The share of a block's calls set apart that [`trimmed_mean`] leaves out, the slowest: an
/// interrupt or a preemption falls on one call and would move the block's sum by its whole
/// length.
const TRIM_SLOWEST: f64 = 0.05;

/// `call` set apart: an `open` (read-only) of `spacer` before it and its `close` after, the
/// call alone timed (ns) into `calls`.
fn apart(
    spacer: &CString,
    calls: &mut Vec<u64>,
    call: impl FnOnce() -> crate::error::Result<()>,
) -> crate::error::Result<()> {
    let g = sfs::open(spacer, libc::O_RDONLY, 0).context("opening a spacer of the pair")?;
    let from = Instant::now();
    call()?;
    calls.push(from.elapsed().as_nanos() as u64);
    sfs::close(g).context("closing a spacer of the pair")
}

/// The mean of `calls` less their slowest [`TRIM_SLOWEST`] (0 for none).
fn trimmed_mean(calls: &mut [u64]) -> f64 {
    calls.sort_unstable();
    let keep = calls.len() - (calls.len() as f64 * TRIM_SLOWEST) as usize;
    if keep == 0 {
        return 0.0;
    }
    calls[..keep].iter().sum::<u64>() as f64 / keep as f64
}

/// What one block took: ns per iteration, the whole and in the pattern's tail
/// ([`crate::price::Tail`]; 0 where it has none).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Timed {
    pub(super) whole: f64,
    pub(super) tail: f64,
}

/// One block of `n` iterations with `mask`. The calls of the pattern's tail are timed as one
/// stretch in each iteration (two clock reads, the same work on both sides).
pub(super) fn block(
    t: &Target,
    pattern: Pattern,
    mask: u32,
    n: u64,
    tally: &mut EqualTally,
) -> crate::error::Result<Timed> {
    let started = Instant::now();
    let mut tail = std::time::Duration::ZERO;
    // Each call of a tail set apart, timed alone (ns).
    let mut calls: Vec<u64> = Vec::new();
    match pattern {
        Pattern::Write { writes } => {
            let fd = t.fd.as_ref().expect("a write pattern has its file open");
            let f = fd.as_fd();
            for _ in 0..n {
                // The writes timed on their own: the statx's query stays out.
                let from = Instant::now();
                for _ in 0..writes {
                    sfs::pwrite_byte(f, b'x', 0).context("pwrite in the pair's loop")?;
                }
                tail += from.elapsed();
                tally.push(sfs::statx_mtime(f, mask).context("statx in the pair's loop")?);
            }
        }
        Pattern::WriteRead => {
            let fd = t.fd.as_ref().expect("a write pattern has its file open");
            let f = fd.as_fd();
            for _ in 0..n {
                sfs::pwrite_byte(f, b'x', 0).context("pwrite in the pair's loop")?;
                sfs::pread_byte(f, 0).context("pread in the pair's loop")?;
                tally.push(sfs::statx_mtime(f, mask).context("statx in the pair's loop")?);
            }
        }
        Pattern::WriteFsync => {
            let fd = t.fd.as_ref().expect("a write pattern has its file open");
            let f = fd.as_fd();
            for _ in 0..n {
                sfs::pwrite_byte(f, b'x', 0).context("pwrite in the pair's loop")?;
                tally.push(sfs::statx_mtime(f, mask).context("statx in the pair's loop")?);
                sfs::fsync(f).context("fsync in the pair's loop")?;
            }
        }
        Pattern::Chmod => {
            let fd = t.fd.as_ref().expect("a chmod pattern has its file open");
            let f = fd.as_fd();
            for _ in 0..n {
                sfs::fchmod(f, 0o600).context("fchmod in the pair's loop")?;
                // The statx timed on its own: the query's work is all in it. fchmod moves the
                // ctime only: the tally compares ctimes.
                let from = Instant::now();
                let stamp = sfs::statx_ctime(f, mask).context("statx in the pair's loop")?;
                tail += from.elapsed();
                tally.push(stamp);
            }
        }
        Pattern::ChmodRead { .. }
        | Pattern::ChmodReadSame { .. }
        | Pattern::ChmodOthers { .. }
        | Pattern::ChmodReadApart { .. }
        | Pattern::ChmodOthersApart { .. } => {
            let shape = pattern.tail().expect("a chmod pattern with calls after it");
            let fd = t.fd.as_ref().expect("a chmod pattern has its file open");
            let f = fd.as_fd();
            // The file the reads read: the queried one (read-same), else the second one.
            let r = match (pattern, &t.read) {
                (Pattern::ChmodReadSame { .. }, _) | (_, None) => f,
                (_, Some(r)) => r.as_fd(),
            };
            // The tail's k-th call.
            let call = |k: usize| match shape.syscall {
                Syscall::Setattr => {
                    sfs::fchmod(t.others[k].as_fd(), 0o600).context("fchmod in the pair's loop")
                }
                _ => sfs::pread_byte(r, 0)
                    .map(drop)
                    .context("pread in the pair's loop"),
            };
            for _ in 0..n {
                sfs::fchmod(f, 0o600).context("fchmod in the pair's loop")?;
                // fchmod moves the ctime only: the tally compares ctimes.
                tally.push(sfs::statx_ctime(f, mask).context("statx in the pair's loop")?);
                if shape.apart {
                    for (k, s) in t.spacers.iter().enumerate() {
                        apart(s, &mut calls, || call(k))?;
                    }
                } else {
                    let from = Instant::now();
                    for k in 0..shape.calls as usize {
                        call(k)?;
                    }
                    tail += from.elapsed();
                }
            }
        }
        Pattern::Create | Pattern::CreateRewrite => {
            let flags = libc::O_RDWR | libc::O_CREAT | libc::O_EXCL;
            // Successive files, not one file: the tally compares each new file's mtime with
            // the previous file's, as make compares a target with its prerequisite.
            for _ in 0..n {
                let fd = sfs::open(&t.path, flags, 0o600).context("creating the pair's file")?;
                let f = fd.as_fd();
                sfs::pwrite_byte(f, b'x', 0).context("pwrite in the pair's loop")?;
                tally.push(sfs::statx_mtime(f, mask).context("statx in the pair's loop")?);
                if pattern == Pattern::CreateRewrite {
                    // The second write, the new inode's first update, timed on its own.
                    let from = Instant::now();
                    sfs::pwrite_byte(f, b'y', 0).context("pwrite in the pair's loop")?;
                    tail += from.elapsed();
                }
                sfs::close(fd).context("closing the pair's file")?;
                sfs::unlink(&t.path).context("unlinking the pair's file")?;
            }
        }
        Pattern::Recorded { .. } => crate::fail!("{RECORDED}"),
    }
    let whole = started.elapsed().as_nanos() as f64 / n as f64;
    let tail = match pattern.tail() {
        // Per iteration: the calls' trimmed mean times the calls an iteration issues.
        Some(t) if t.apart => trimmed_mean(&mut calls) * f64::from(t.calls),
        _ => tail.as_nanos() as f64 / n as f64,
    };
    Ok(Timed { whole, tail })
}

/// Task `k`'s file in `dir` (opened for a write pattern).
pub(super) fn target(dir: &Path, k: u32, pattern: Pattern) -> crate::error::Result<Target> {
    let mut p = dir.as_os_str().as_bytes().to_vec();
    p.extend_from_slice(format!("/pair{k}").as_bytes());
    let path = CString::new(p).context("a scratch path with a NUL byte")?;
    let flags = libc::O_RDWR | libc::O_CREAT | libc::O_EXCL;
    let fd = match pattern {
        Pattern::Write { .. }
        | Pattern::WriteRead
        | Pattern::WriteFsync
        | Pattern::Chmod
        | Pattern::ChmodRead { .. }
        | Pattern::ChmodReadSame { .. }
        | Pattern::ChmodOthers { .. }
        | Pattern::ChmodReadApart { .. }
        | Pattern::ChmodOthersApart { .. } => {
            Some(sfs::open(&path, flags, 0o600).context("creating the pair's file")?)
        }
        Pattern::Create | Pattern::CreateRewrite => None,
        Pattern::Recorded { .. } => crate::fail!("{RECORDED}"),
    };
    if let (Pattern::ChmodReadSame { .. }, Some(f)) = (pattern, &fd) {
        // One byte for the reads to read back.
        sfs::pwrite_byte(f.as_fd(), b'x', 0).context("writing the pair's file")?;
    }
    let read = match pattern {
        Pattern::ChmodRead { .. } | Pattern::ChmodReadApart { .. } => {
            let mut p = path.as_bytes().to_vec();
            p.extend_from_slice(b"-read");
            let rp = CString::new(p).context("a scratch path with a NUL byte")?;
            let r = sfs::open(&rp, flags, 0o600).context("creating the pair's second file")?;
            sfs::pwrite_byte(r.as_fd(), b'x', 0).context("writing the pair's second file")?;
            Some(r)
        }
        _ => None,
    };
    let others = match pattern {
        Pattern::ChmodOthers { files } | Pattern::ChmodOthersApart { files } => (1..=files)
            .map(|k| {
                let mut p = path.as_bytes().to_vec();
                p.extend_from_slice(format!("-other{k}").as_bytes());
                let op = CString::new(p).context("a scratch path with a NUL byte")?;
                sfs::open(&op, flags, 0o600).context("creating one of the pair's other files")
            })
            .collect::<crate::error::Result<Vec<_>>>()?,
        _ => Vec::new(),
    };
    let spacers = match pattern.tail() {
        Some(t) if t.apart => (1..=t.calls)
            .map(|k| {
                let mut p = path.as_bytes().to_vec();
                p.extend_from_slice(format!("-spacer{k}").as_bytes());
                let sp = CString::new(p).context("a scratch path with a NUL byte")?;
                sfs::open(&sp, flags, 0o600)
                    .context("creating one of the pair's spacers")
                    .map(|_| sp)
            })
            .collect::<crate::error::Result<Vec<_>>>()?,
        _ => Vec::new(),
    };
    Ok(Target {
        path,
        fd,
        read,
        others,
        spacers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_trimmed_mean_leaves_out_the_slowest_twentieth() {
        // 95 calls of 100 ns, 5 of 10 µs (an interrupt each): the mean of the 95.
        let mut calls: Vec<u64> = std::iter::repeat_n(100, 95)
            .chain(std::iter::repeat_n(10_000, 5))
            .collect();
        assert_eq!(trimmed_mean(&mut calls), 100.0);
        // Fewer than 20 calls: none left out.
        assert_eq!(trimmed_mean(&mut [10, 20, 30]), 20.0);
        assert_eq!(trimmed_mean(&mut []), 0.0);
    }
}
