//! `mem`: sv_mem's test from the seed ("Testing memory performance"). `--size` is split
//! evenly between `--threads` threads; each thread maps its share (anonymous, private), and
//! once all threads are ready they start together:
//!
//! 1. **pre-fault**: touch (write) one byte of every 4 KiB page of the share — one page
//!    fault and one zeroed page per touch — timed in ms;
//! 2. **copy** in `--block`-sized blocks, timed in MiB/s: `wr` copies a block-sized source
//!    into every block of the share, `rd` copies every block of the share into a block-sized
//!    buffer, `rw` copies the share's first half onto its second half.
//!
//! The output has sv_mem's shape: one line per thread with `preflt` and `memcpy`, and a total
//! transfer rate (all bytes over the time from the first copy's start to the last one's end).

use std::hint::black_box;
use std::sync::Barrier;
use std::time::Instant;

use crate::error::Context;

use super::config::MemConfig;
use super::result::{MemOp, MemReport, MemRun, MemThread};
use crate::sys;
use crate::sys::mem::AnonMapping;

/// Bytes between two looks at the stop flag.
const SEGMENT: usize = 16 << 20;
const PAGE: usize = 4096;

struct ThreadOut {
    line: MemThread,
    start: Instant,
    end: Instant,
    stopped: bool,
}

/// Touches one byte per page; returns whether a stop signal cut it short (checked every
/// [`SEGMENT`] bytes: pre-faulting gigabytes in a guest takes seconds).
fn prefault(buf: &mut [u8]) -> bool {
    for seg in buf.chunks_mut(SEGMENT) {
        let mut i = 0;
        while i < seg.len() {
            seg[i] = 1;
            i += PAGE;
        }
        if sys::signal::stop_requested() {
            return true;
        }
    }
    black_box(buf);
    false
}

/// Copies per `op`; returns the bytes copied and whether a stop signal cut it short.
fn copy(op: MemOp, buf: &mut [u8], block: usize) -> (u64, bool) {
    let mut bytes = 0u64;
    let seg = SEGMENT.max(block) / block * block;
    match op {
        MemOp::Wr => {
            let src = vec![0xa5u8; block];
            for s in buf.chunks_mut(seg) {
                for d in s.chunks_exact_mut(block) {
                    d.copy_from_slice(&src);
                    bytes += block as u64;
                }
                if sys::signal::stop_requested() {
                    return (bytes, true);
                }
            }
            black_box(buf);
        }
        MemOp::Rd => {
            let mut dst = vec![0u8; block];
            for s in buf.chunks(seg) {
                for b in s.chunks_exact(block) {
                    dst.copy_from_slice(b);
                    black_box(&mut dst);
                    bytes += block as u64;
                }
                if sys::signal::stop_requested() {
                    return (bytes, true);
                }
            }
        }
        MemOp::Rw => {
            let half = buf.len() / 2;
            let (a, b) = buf.split_at_mut(half);
            for (sa, sb) in a.chunks(seg).zip(b.chunks_mut(seg)) {
                for (s, d) in sa.chunks_exact(block).zip(sb.chunks_exact_mut(block)) {
                    d.copy_from_slice(s);
                    bytes += block as u64;
                }
                if sys::signal::stop_requested() {
                    return (bytes, true);
                }
            }
            black_box(b);
        }
    }
    (bytes, false)
}

fn one_thread(
    i: usize,
    share: usize,
    cfg: &MemConfig,
    cpu: Option<usize>,
    barrier: &Barrier,
) -> crate::error::Result<ThreadOut> {
    let pinned = cpu.map(sys::cpu::pin_to_cpu).transpose();
    let mapped = AnonMapping::new(share);
    barrier.wait();
    pinned.with_context(|| format!("pinning mem thread {} to CPU {cpu:?}", i + 1))?;
    let mut map = mapped.with_context(|| format!("mapping {share} bytes for thread {}", i + 1))?;
    let buf = map.as_mut_slice();
    let t0 = Instant::now();
    let prefault_stopped = prefault(buf);
    let t1 = Instant::now();
    let (bytes, stopped) = if prefault_stopped {
        (0, true)
    } else {
        copy(cfg.op, buf, cfg.block as usize)
    };
    let t2 = Instant::now();
    let copy_s = (t2 - t1).as_secs_f64();
    Ok(ThreadOut {
        line: MemThread {
            thread: i + 1,
            cpu,
            bytes,
            prefault_ms: (t1 - t0).as_secs_f64() * 1e3,
            copy_ms: copy_s * 1e3,
            copy_mib_per_sec: if copy_s > 0.0 {
                bytes as f64 / (1u64 << 20) as f64 / copy_s
            } else {
                0.0
            },
        },
        start: t1,
        end: t2,
        stopped,
    })
}

/// The bracketed choice in a sysfs multiple-choice file: `always [madvise] never` → `madvise`.
pub fn bracketed(text: &str) -> Option<String> {
    let start = text.find('[')?;
    let end = start + text[start..].find(']')?;
    Some(text[start + 1..end].to_string())
}

/// Whether a virtio balloon with free page reporting (feature bit 5,
/// `VIRTIO_BALLOON_F_REPORTING`) is bound: the guest then hands freed pages back to the host,
/// and touching them again can fault on the host too, so the pre-fault time depends on what the
/// guest did before (here: 6.5 s for 2 GiB on a first run, 1.4–2 s on reruns). `None` without a
/// balloon.
pub fn free_page_reporting() -> Option<bool> {
    let devices = std::fs::read_dir("/sys/bus/virtio/devices").ok()?;
    for d in devices.flatten() {
        let driver = std::fs::read_link(d.path().join("driver")).ok();
        if driver.is_some_and(|p| p.ends_with("virtio_balloon")) {
            let features = std::fs::read_to_string(d.path().join("features")).ok()?;
            return Some(features.as_bytes().get(5) == Some(&b'1'));
        }
    }
    None
}

fn thp_mode() -> Option<String> {
    std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
        .ok()
        .and_then(|t| bracketed(&t))
}

/// Runs every thread count of `cfg`; returns the report and whether a stop signal cut it short.
pub fn run(cfg: &MemConfig, cpus: Option<&[usize]>) -> crate::error::Result<(MemReport, bool)> {
    let mut report = MemReport {
        op: cfg.op,
        size_bytes: cfg.size,
        block_bytes: cfg.block,
        transparent_hugepage: thp_mode(),
        free_page_reporting: free_page_reporting(),
        runs: Vec::new(),
    };
    for &threads in &cfg.threads {
        if sys::signal::stop_requested() {
            return Ok((report, true));
        }
        let share = (cfg.size / threads as u64) as usize;
        let barrier = Barrier::new(threads);
        let outs: Vec<crate::error::Result<ThreadOut>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|i| {
                    let cpu = cpus.map(|c| c[i % c.len()]);
                    let barrier = &barrier;
                    s.spawn(move || one_thread(i, share, cfg, cpu, barrier))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(crate::failure!("a mem thread panicked")))
                })
                .collect()
        });
        let outs: Vec<ThreadOut> = outs.into_iter().collect::<crate::error::Result<_>>()?;
        let stopped = outs.iter().any(|o| o.stopped);
        report.runs.push(summarize(threads, &outs));
        if stopped {
            return Ok((report, true));
        }
    }
    Ok((report, false))
}

fn summarize(threads: usize, outs: &[ThreadOut]) -> MemRun {
    let start = outs.iter().map(|o| o.start).min();
    let end = outs.iter().map(|o| o.end).max();
    let bytes: u64 = outs.iter().map(|o| o.line.bytes).sum();
    let span = match (start, end) {
        (Some(s), Some(e)) => (e - s).as_secs_f64(),
        _ => 0.0,
    };
    MemRun {
        threads,
        per_thread: outs.iter().map(|o| o.line.clone()).collect(),
        total_mib_per_sec: if span > 0.0 {
            bytes as f64 / (1u64 << 20) as f64 / span
        } else {
            0.0
        },
        sum_mib_per_sec: outs.iter().map(|o| o.line.copy_mib_per_sec).sum(),
        max_prefault_ms: outs.iter().map(|o| o.line.prefault_ms).fold(0.0, f64::max),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysfs_choice() {
        assert_eq!(
            bracketed("always [madvise] never\n").as_deref(),
            Some("madvise")
        );
        assert_eq!(bracketed("always madvise never"), None);
    }

    #[test]
    fn copies_count_whole_blocks() {
        let mut buf = vec![0u8; 10 * 1024 + 100];
        assert_eq!(copy(MemOp::Wr, &mut buf, 1024), (10 * 1024, false));
        assert_eq!(buf[0], 0xa5);
        assert_eq!(
            buf[10 * 1024],
            0,
            "the tail shorter than a block is left alone"
        );
        assert_eq!(copy(MemOp::Rd, &mut buf, 1024).0, 10 * 1024);
        let mut buf = vec![7u8; 8192];
        buf[4096..].fill(0);
        assert_eq!(copy(MemOp::Rw, &mut buf, 1024).0, 4096);
        assert!(buf.iter().all(|&b| b == 7));
    }
}
