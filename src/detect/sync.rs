//! Cross-CPU TSC synchronisation, measured the way Linux's `arch/x86/kernel/tsc_sync.c`
//! (`check_tsc_warp`) does: two threads pinned to two CPUs take turns, under a lock, reading
//! the TSC (`lfence; rdtsc`) and comparing it with the last value the other CPU stored.
//!
//! Bounds: if CPU A stores `a` and CPU B then reads `b`, real time moved forward in between, so
//! `b − a ≥ offset(B) − offset(A)`. The smallest such difference in each direction bounds the
//! offset from both sides: `offset(B) − offset(A) ∈ [−min(a − b), min(b − a)]`. A negative
//! difference (a backwards step across CPUs) proves the TSCs are out of step by at least that
//! much; otherwise the interval's half-width is the skew bound, limited by how fast a cache
//! line moves between the two CPUs.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::sys;

/// The result for one pair of CPUs, in TSC ticks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairResult {
    pub cpus: [usize; 2],
    /// Turns where the reading CPU differed from the one that stored the last value.
    pub handoffs: u64,
    /// Handoffs where the TSC went backwards.
    pub warps: u64,
    /// The largest backwards step, in ticks.
    pub max_backwards_ticks: u64,
    /// Bounds on `tsc(cpus[1]) − tsc(cpus[0])` in ticks, when both directions were seen.
    pub offset_bounds_ticks: Option<[i64; 2]>,
    /// Both threads were pinned to their CPUs (false: a `sched_setaffinity` failed, so the
    /// two may have shared one CPU and the pair proves nothing).
    #[serde(default = "pinned_default")]
    pub pinned: bool,
}

fn pinned_default() -> bool {
    true
}

impl PairResult {
    /// The largest |offset| the bounds allow, in ticks.
    pub fn skew_bound_ticks(&self) -> Option<u64> {
        self.offset_bounds_ticks
            .map(|[lo, hi]| lo.unsigned_abs().max(hi.unsigned_abs()))
    }
}

/// What the sync check found.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SyncResult {
    pub pairs: Vec<PairResult>,
    /// Why the check did not run, if it did not.
    pub skipped: Option<String>,
}

const NOBODY: usize = usize::MAX;

struct Shared {
    lock: AtomicBool,
    last: AtomicU64,
    who: AtomicUsize,
    stop: AtomicBool,
}

/// Per-thread findings: (handoffs, warps, max backwards, min delta into this thread, pinned).
type Side = (u64, u64, u64, Option<i64>, bool);

fn side(shared: &Shared, me: usize, cpu: usize) -> Side {
    // A failed pin is reported (the pair is then inconclusive), not ignored.
    let pinned = sys::cpu::pin_to_cpu(cpu).is_ok();
    let (mut handoffs, mut warps, mut max_back, mut min_delta) = (0u64, 0u64, 0u64, None::<i64>);
    while !shared.stop.load(Ordering::Relaxed) {
        if shared
            .lock
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            std::hint::spin_loop();
            continue;
        }
        let prev = shared.last.load(Ordering::Relaxed);
        let prev_who = shared.who.load(Ordering::Relaxed);
        let now = read_tsc();
        shared.last.store(now, Ordering::Relaxed);
        shared.who.store(me, Ordering::Relaxed);
        shared.lock.store(false, Ordering::Release);
        if prev_who != me && prev_who != NOBODY {
            handoffs += 1;
            let d = now.wrapping_sub(prev) as i64;
            min_delta = Some(min_delta.map_or(d, |m: i64| m.min(d)));
            if d < 0 {
                warps += 1;
                max_back = max_back.max(d.unsigned_abs());
            }
        }
    }
    (handoffs, warps, max_back, min_delta, pinned)
}

#[cfg(target_arch = "x86_64")]
fn read_tsc() -> u64 {
    sys::tsc::lfence_rdtsc()
}

#[cfg(not(target_arch = "x86_64"))]
fn read_tsc() -> u64 {
    0
}

/// Runs the check on one pair for `duration`.
pub fn check_pair(a: usize, b: usize, duration: Duration) -> PairResult {
    let shared = Shared {
        lock: AtomicBool::new(false),
        last: AtomicU64::new(0),
        who: AtomicUsize::new(NOBODY),
        stop: AtomicBool::new(false),
    };
    let (sa, sb) = std::thread::scope(|s| {
        let ta = s.spawn(|| side(&shared, 0, a));
        let tb = s.spawn(|| side(&shared, 1, b));
        std::thread::sleep(duration);
        shared.stop.store(true, Ordering::Relaxed);
        (ta.join().unwrap_or_default(), tb.join().unwrap_or_default())
    });
    // sa's deltas are b→a handoffs: a − b ≥ offset(A) − offset(B).
    let bounds = match (sa.3, sb.3) {
        (Some(min_ba), Some(min_ab)) => Some([-min_ba, min_ab]),
        _ => None,
    };
    PairResult {
        cpus: [a, b],
        handoffs: sa.0 + sb.0,
        warps: sa.1 + sb.1,
        max_backwards_ticks: sa.2.max(sb.2),
        offset_bounds_ticks: bounds,
        pinned: sa.4 && sb.4,
    }
}

/// Checks every pair of the CPUs this thread may use, spending about `budget` in all (at
/// least 2 ms a pair).
pub fn check(budget: Duration) -> SyncResult {
    let cpus = match sys::cpu::allowed_cpus() {
        Ok(c) => c,
        Err(e) => {
            return SyncResult {
                pairs: vec![],
                skipped: Some(format!("sched_getaffinity: {e}")),
            }
        }
    };
    if cfg!(not(target_arch = "x86_64")) {
        return SyncResult {
            pairs: vec![],
            skipped: Some("x86_64 only".into()),
        };
    }
    if cpus.len() < 2 {
        return SyncResult {
            pairs: vec![],
            skipped: Some(format!(
                "only one CPU ({}) is available to this process: there is no other CPU to be out \
                 of step with",
                cpus.first().map_or("none".to_string(), |c| c.to_string())
            )),
        };
    }
    let n_pairs = cpus.len() * (cpus.len() - 1) / 2;
    let per_pair = (budget / n_pairs as u32).max(Duration::from_millis(2));
    let mut pairs = Vec::with_capacity(n_pairs);
    for (i, &a) in cpus.iter().enumerate() {
        for &b in &cpus[i + 1..] {
            pairs.push(check_pair(a, b, per_pair));
        }
    }
    // Only the helper threads were pinned: the caller's affinity is unchanged.
    SyncResult {
        pairs,
        skipped: None,
    }
}
