//! vDSO against syscall, interleaved: each clock is read through the vDSO and through the raw
//! syscall back to back, alternately, while the thread is moved between CPUs
//! (`sched_setaffinity`) every few reads, and every read is compared with the one before it —
//! what vdsotest's `verify` does. The two paths read one timekeeper, so a later read below an
//! earlier one means the vDSO's copy of the clock (or a CPU's counter) disagrees with the
//! kernel's.
//!
//! Timing model: none — the figures are orderings, not costs. Each round pins the thread to the
//! next allowed CPU and takes [`PAIRS_PER_ROUND`] vDSO/syscall pairs; a clock stops after
//! [`ROUNDS`] rounds or its share of the budget, whichever comes first.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::probe::Clock;
use crate::sys::{clock, cpu};

/// Rounds per clock (a CPU change before each when more than one CPU is allowed).
pub const ROUNDS: usize = 64;
/// vDSO/syscall pairs per round.
pub const PAIRS_PER_ROUND: usize = 16;

/// One clock's comparison.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClockOrder {
    pub clock: String,
    /// Successive reads compared (each read against the one before it, alternating paths).
    pub reads_compared: u64,
    /// Comparisons where the later read was below the earlier one.
    pub inversions: u64,
    /// The smallest later-minus-earlier difference, ns (negative: a backwards step).
    pub worst_step_ns: Option<i64>,
    /// Why the clock could not be read, if it could not.
    pub error: Option<String>,
}

/// The whole check.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct InterleaveResult {
    pub clocks: Vec<ClockOrder>,
    /// The CPUs the thread was moved between.
    pub cpus: Vec<usize>,
    /// Rounds that ran on a different CPU than the round before.
    pub migrations: u64,
    /// Why moving the thread failed, when it did.
    pub pin_error: Option<String>,
}

/// Folds one comparison into a clock's figures.
pub fn compare(o: &mut ClockOrder, earlier: u64, later: u64) {
    let d = later as i128 - earlier as i128;
    let d = d.clamp(i64::MIN as i128, i64::MAX as i128) as i64;
    o.reads_compared += 1;
    if d < 0 {
        o.inversions += 1;
    }
    o.worst_step_ns = Some(o.worst_step_ns.map_or(d, |w| w.min(d)));
}

/// Reads `c` alternately through both paths for one round, comparing each read with `prev`.
#[inline(never)]
fn round(c: Clock, o: &mut ClockOrder, prev: &mut Option<u64>) -> std::io::Result<()> {
    let id = std::hint::black_box(c.id());
    for _ in 0..PAIRS_PER_ROUND {
        let a = clock::vdso_clock_gettime(id)?;
        let b = clock::syscall_clock_gettime(id)?;
        if let Some(p) = *prev {
            compare(o, p, a);
        }
        compare(o, a, b);
        *prev = Some(b);
    }
    Ok(())
}

/// Runs the check over every vDSO-served clock within `budget`, then restores the thread's
/// CPU set.
pub fn check(budget: Duration) -> InterleaveResult {
    let allowed = cpu::allowed_cpus().unwrap_or_default();
    let clocks: Vec<Clock> = Clock::ALL.into_iter().filter(|c| c.vdso_served()).collect();
    let per_clock = budget / clocks.len().max(1) as u32;
    let mut r = InterleaveResult {
        cpus: allowed.clone(),
        ..InterleaveResult::default()
    };
    let mut last_cpu = cpu::current_cpu().ok();
    for c in clocks {
        let mut o = ClockOrder {
            clock: c.name().to_string(),
            ..ClockOrder::default()
        };
        let start = Instant::now();
        let mut prev = None;
        for i in 0..ROUNDS {
            if allowed.len() > 1 && r.pin_error.is_none() {
                let target = allowed[i % allowed.len()];
                match cpu::pin_to_cpu(target) {
                    Ok(()) => {
                        let now = cpu::current_cpu().ok();
                        if now.is_some() && now != last_cpu {
                            r.migrations += 1;
                        }
                        last_cpu = now;
                    }
                    Err(e) => r.pin_error = Some(format!("sched_setaffinity to CPU {target}: {e}")),
                }
            }
            if let Err(e) = round(c, &mut o, &mut prev) {
                o.error = Some(e.to_string());
                break;
            }
            if start.elapsed() >= per_clock {
                break;
            }
        }
        r.clocks.push(o);
    }
    if allowed.len() > 1 {
        let _ = cpu::set_affinity(&allowed);
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compare_counts_backwards_steps_and_keeps_the_worst() {
        let mut o = ClockOrder::default();
        compare(&mut o, 100, 150);
        compare(&mut o, 150, 140);
        compare(&mut o, 140, 140);
        assert_eq!((o.reads_compared, o.inversions), (3, 1));
        assert_eq!(o.worst_step_ns, Some(-10));
        compare(&mut o, u64::MAX, 0);
        assert_eq!(o.worst_step_ns, Some(i64::MIN));
    }

    #[test]
    fn the_live_check_compares_every_clock_and_restores_the_cpu_set() {
        let before = cpu::allowed_cpus().unwrap();
        let r = check(Duration::from_millis(20));
        assert_eq!(cpu::allowed_cpus().unwrap(), before);
        assert_eq!(r.clocks.len(), 7);
        for c in &r.clocks {
            assert!(c.error.is_some() || c.reads_compared > 0, "{c:?}");
        }
    }
}
