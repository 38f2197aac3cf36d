//! `pagezero`: one 4 KiB page zeroed with `rep stosq`, `rep stosb` (ERMS), the seed's
//! alignment-checking compiler output, and libc `memset` — the four in `sys::zero`.
//!
//! - **hot**: the same page-aligned page again and again (it stays in L1): the sampler of
//!   `measure` (batches of d, 2d, …, nd calls, Theil–Sen slope, bootstrap interval) gives ns
//!   per page;
//! - **cold**: every page of a buffer much larger than the last-level cache (`--size`,
//!   default 256 MiB), in order, after one untimed pass that faults the pages in; the median of
//!   five passes, with the fastest and slowest pass as bounds. The passes are interleaved
//!   (pass 1 of every variant, then pass 2, ...).

use std::time::Instant;

use crate::error::Context;

use super::result::{PagezeroReport, PagezeroResult};
use crate::measure::{self, SamplerConfig};
use crate::sys;
use crate::sys::mem::AnonMapping;
use crate::sys::zero::{self, PAGE};

type ZeroFn = fn(&mut [u8; PAGE]);

/// The variants, by the names the report uses.
pub const VARIANTS: [(&str, ZeroFn); 4] = [
    ("rep_stosq", zero::stosq),
    ("rep_stosb", zero::stosb),
    ("aligncheck", zero::aligncheck),
    ("memset", zero::memset),
];

const PASSES: usize = 5;

#[repr(C, align(4096))]
struct Page([u8; PAGE]);

fn gib_per_sec(ns_per_page: f64) -> f64 {
    if ns_per_page > 0.0 {
        PAGE as f64 / ns_per_page // bytes per ns = GB/s
            * 1e9
            / (1u64 << 30) as f64
    } else {
        0.0
    }
}

fn cold_pass(buf: &mut [u8], f: ZeroFn) -> f64 {
    let start = Instant::now();
    let mut pages = 0u64;
    for p in buf.chunks_exact_mut(PAGE) {
        f(p.try_into().expect("chunks of exactly one page"));
        pages += 1;
    }
    std::hint::black_box(&mut *buf);
    start.elapsed().as_nanos() as f64 / pages.max(1) as f64
}

/// Runs all variants hot and cold; returns the report and whether a stop signal cut it short.
pub fn run(cold_bytes: u64, cpu: Option<usize>) -> crate::error::Result<(PagezeroReport, bool)> {
    if let Some(c) = cpu {
        sys::cpu::pin_to_cpu(c).with_context(|| format!("pinning to CPU {c}"))?;
    }
    let leaf7 = sys::tsc::cpuid_count(7, 0);
    let mut report = PagezeroReport {
        erms: leaf7[1] & (1 << 9) != 0,
        fsrm: leaf7[3] & (1 << 4) != 0,
        cold_buffer_bytes: cold_bytes,
        results: Vec::new(),
    };
    let mut page = Box::new(Page([1; PAGE]));
    let cfg = SamplerConfig::full(1);
    for (name, f) in VARIANTS {
        if sys::signal::stop_requested() {
            return Ok((report, true));
        }
        let m =
            measure::measure(&cfg, || f(&mut page.0)).context("sampling a page-zeroing loop")?;
        report.results.push(PagezeroResult {
            variant: name.into(),
            cache: "hot".into(),
            ns_per_page: m.cost_ns.point,
            gib_per_sec: gib_per_sec(m.cost_ns.point),
            ns_per_page_lower: m.cost_ns.lower,
            ns_per_page_upper: m.cost_ns.upper,
        });
    }
    let mut map = AnonMapping::new(cold_bytes as usize)
        .with_context(|| format!("mapping the {cold_bytes}-byte cold buffer"))?;
    let buf = map.as_mut_slice();
    cold_pass(buf, zero::memset);
    // Interleaved: pass p runs every variant once, so that drift and other work on the machine
    // fall on all variants alike.
    let mut passes = vec![Vec::with_capacity(PASSES); VARIANTS.len()];
    for _ in 0..PASSES {
        for (i, (_, f)) in VARIANTS.iter().enumerate() {
            if sys::signal::stop_requested() {
                return Ok((report, true));
            }
            passes[i].push(cold_pass(buf, *f));
        }
    }
    for ((name, _), passes) in VARIANTS.iter().zip(&passes) {
        let ns = crate::stats::median(passes).unwrap_or(0.0);
        report.results.push(PagezeroResult {
            variant: name.to_string(),
            cache: "cold".into(),
            ns_per_page: ns,
            gib_per_sec: gib_per_sec(ns),
            ns_per_page_lower: passes.iter().copied().fold(f64::INFINITY, f64::min),
            ns_per_page_upper: passes.iter().copied().fold(0.0, f64::max),
        });
    }
    Ok((report, false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_zeroes_exactly_one_page() {
        // A page-aligned buffer with guard bytes on both sides, zeroed at several alignments
        // (the aligncheck prologue paths run at odd addresses).
        #[repr(C, align(4096))]
        struct Buf([u8; 3 * PAGE]);
        for (name, f) in VARIANTS {
            for off in [PAGE, PAGE + 1, PAGE + 2, PAGE + 3, PAGE + 5, PAGE + 7] {
                let mut b = Box::new(Buf([0xff; 3 * PAGE]));
                let page: &mut [u8; PAGE] = (&mut b.0[off..off + PAGE]).try_into().unwrap();
                f(page);
                assert!(
                    b.0[off..off + PAGE].iter().all(|&x| x == 0),
                    "{name} @{off}"
                );
                assert_eq!(b.0[off - 1], 0xff, "{name} @{off}: wrote before the page");
                assert_eq!(b.0[off + PAGE], 0xff, "{name} @{off}: wrote past the page");
            }
        }
    }

    #[test]
    fn rates_convert() {
        assert!((gib_per_sec(PAGE as f64) - 1e9 / (1u64 << 30) as f64).abs() < 1e-9);
        assert_eq!(gib_per_sec(0.0), 0.0);
    }
}
