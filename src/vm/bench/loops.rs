//! The loops `vm bench` times inside the guest, behind one function ([`run_loop`]) so that
//! the guest side does not care where a workload is defined.
//!
//! Each loop issues exactly its workload's system calls (one per `crate::sys` call) and
//! takes no timestamp of its own: [`run_loop`] times the iterations with one clock read at
//! each end (its set-up — pingpong's fork — and teardown outside), so the loop's own cost does
//! not depend on the clocksource.

use std::ffi::CString;
use std::os::fd::AsFd;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::error::{Context, Result};
use crate::sys::{self, fs, worker};

/// The workloads the guest can time, by name.
pub const WORKLOADS: [&str; 5] = ["pipe1", "pingpong", "write-only", "write-stat", "vfsmix"];

/// Runs `iterations` of `workload` in `dir`, set-up and teardown included, and returns the
/// time of the iterations alone (one clock read before the first, one after the last).
pub fn run_loop(workload: &str, dir: &Path, iterations: u64) -> Result<Duration> {
    let io = |what: &str| format!("{workload}: {what}");
    let started;
    let elapsed;
    match workload {
        "pipe1" => {
            let (r, w) = worker::pipe().with_context(|| io("pipe"))?;
            started = Instant::now();
            for _ in 0..iterations {
                worker::write_byte(w.as_fd(), 1).with_context(|| io("write"))?;
                worker::read_byte(r.as_fd()).with_context(|| io("read"))?;
            }
            elapsed = started.elapsed();
        }
        "pingpong" => elapsed = pingpong(iterations).with_context(|| io("pingpong"))?,
        "write-only" | "write-stat" => {
            let path =
                CString::new(format!("{}/{workload}.file", dir.display())).context("file name")?;
            let flags = libc::O_RDWR | libc::O_CREAT | libc::O_TRUNC;
            let fd = fs::open(&path, flags, 0o600).with_context(|| io("open"))?;
            let stat = workload == "write-stat";
            started = Instant::now();
            for _ in 0..iterations {
                fs::pwrite_byte(fd.as_fd(), 1, 0).with_context(|| io("pwrite"))?;
                if stat {
                    std::hint::black_box(fs::fstat_mtime(fd.as_fd()).with_context(|| io("fstat"))?);
                }
            }
            elapsed = started.elapsed();
            fs::close(fd).with_context(|| io("close"))?;
            fs::unlink(&path).with_context(|| io("unlink"))?;
        }
        "vfsmix" => {
            let page = sys::mem::page_size();
            let mut names = crate::workload::vfsmix::NameBuf::new(dir, "vfsmix", 0);
            started = Instant::now();
            for seq in 0..iterations {
                let path = names.set(seq);
                let excl = libc::O_RDWR | libc::O_CREAT | libc::O_EXCL;
                let fd = fs::open(path, excl, 0o600).with_context(|| io("open"))?;
                fs::lstat(path).with_context(|| io("lstat"))?;
                fs::lseek(fd.as_fd(), page as i64 - 1).with_context(|| io("lseek"))?;
                fs::close(fd).with_context(|| io("close"))?;
                let trunc = libc::O_RDWR | libc::O_CREAT | libc::O_TRUNC;
                let fd = fs::open(path, trunc, 0o600).with_context(|| io("open"))?;
                worker::write_byte(fd.as_fd(), 1).with_context(|| io("write"))?;
                sys::mem::store_through_shared_mapping(fd.as_fd(), page)
                    .with_context(|| io("mmap"))?;
                fs::close(fd).with_context(|| io("close"))?;
                fs::unlink(path).with_context(|| io("unlink"))?;
            }
            elapsed = started.elapsed();
        }
        other => crate::fail!(
            "unknown workload '{other}' (one of {})",
            WORKLOADS.join(", ")
        ),
    }
    Ok(elapsed)
}

/// will-it-scale pingpong: a byte goes to a child over one pipe and comes back over another;
/// the time of the `n` round trips.
fn pingpong(n: u64) -> std::io::Result<Duration> {
    let (r1, w1) = worker::pipe()?;
    let (r2, w2) = worker::pipe()?;
    let child = worker::fork_worker(|| {
        while let Ok(Some(b)) = worker::read_byte(r1.as_fd()) {
            if worker::write_byte(w2.as_fd(), b).is_err() {
                return 1;
            }
        }
        0
    })?;
    let started = Instant::now();
    for _ in 0..n {
        worker::write_byte(w1.as_fd(), 1)?;
        worker::read_byte(r2.as_fd())?;
    }
    let elapsed = started.elapsed();
    // The child holds a copy of the write end too, so it never sees EOF: end it.
    let _ = worker::kill(child);
    let _ = worker::wait(child, true);
    Ok(elapsed)
}
