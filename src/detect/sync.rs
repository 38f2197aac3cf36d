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
//!
//! The interval's width, `min(b − a) + min(a − b)`, is the round trip the bound was measured
//! over: the offsets cancel, leaving the fastest A→B plus the fastest B→A handoff. Every pair of
//! the CPUs this process may use is checked, and [`SyncResult::matrix`] lays the pairs out as a
//! matrix over the CPUs, the form `tsc_unsynchronized` is decided from.

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

    /// The round trip the bounds were measured over, in ticks: the fastest handoff each way
    /// (`hi − lo`; the offsets cancel).
    pub fn round_trip_ticks(&self) -> Option<i64> {
        self.offset_bounds_ticks
            .map(|[lo, hi]| hi.saturating_sub(lo))
    }
}

/// The pairs laid out over the CPUs: entry `[i][j]` is about `tsc(cpus[j]) − tsc(cpus[i])`.
/// Each unordered pair is measured once; `[j][i]` is its mirror (`[−hi, −lo]`, the same round
/// trip). `None` on the diagonal and where a pair saw no handoff in one direction.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SyncMatrix {
    pub cpus: Vec<usize>,
    /// Bounds `[lo, hi]` on `tsc(cpus[j]) − tsc(cpus[i])`, in ticks.
    pub offset_bounds_ticks: Vec<Vec<Option<[i64; 2]>>>,
    /// The round trip each bound was measured over, in ticks.
    pub round_trip_ticks: Vec<Vec<Option<i64>>>,
}

impl SyncMatrix {
    /// Entries `(i, j)`, `i < j`, whose bounds exclude zero: the two TSCs are proven out of
    /// step (the interval excludes zero exactly when a handoff saw the TSC go backwards).
    pub fn out_of_step(&self) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for (i, row) in self.offset_bounds_ticks.iter().enumerate() {
            for (j, b) in row.iter().enumerate().skip(i + 1) {
                if b.is_some_and(|[lo, hi]| lo > 0 || hi < 0) {
                    out.push((i, j));
                }
            }
        }
        out
    }

    /// Off-diagonal entries with no bound, as `(cpu, cpu)` pairs (`i < j`).
    pub fn unbounded(&self) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for (i, row) in self.offset_bounds_ticks.iter().enumerate() {
            for (j, b) in row.iter().enumerate().skip(i + 1) {
                if b.is_none() {
                    out.push((self.cpus[i], self.cpus[j]));
                }
            }
        }
        out
    }
}

/// What the sync check found.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SyncResult {
    pub pairs: Vec<PairResult>,
    /// Why the check did not run, if it did not.
    pub skipped: Option<String>,
}

impl SyncResult {
    /// The pairs as a matrix over every CPU that appears in one, in ascending order.
    pub fn matrix(&self) -> SyncMatrix {
        let mut cpus: Vec<usize> = self.pairs.iter().flat_map(|p| p.cpus).collect();
        cpus.sort_unstable();
        cpus.dedup();
        let n = cpus.len();
        let mut bounds_m = vec![vec![None; n]; n];
        let mut rt_m = vec![vec![None; n]; n];
        let index = |cpu: usize| cpus.binary_search(&cpu).ok();
        for p in &self.pairs {
            let (Some(i), Some(j)) = (index(p.cpus[0]), index(p.cpus[1])) else {
                continue;
            };
            if i == j {
                continue;
            }
            let bounds = p.offset_bounds_ticks;
            bounds_m[i][j] = bounds;
            bounds_m[j][i] = bounds.map(|[lo, hi]| [hi.saturating_neg(), lo.saturating_neg()]);
            rt_m[i][j] = p.round_trip_ticks();
            rt_m[j][i] = p.round_trip_ticks();
        }
        SyncMatrix {
            cpus,
            offset_bounds_ticks: bounds_m,
            round_trip_ticks: rt_m,
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::verdict::{tsc_unsynchronized, VerdictState};

    /// This machine's pair as `detect --json` recorded it: 4,661 handoffs, offset in
    /// [−76.9, 63.1] ns at 2.6 GHz.
    fn recorded(cpus: [usize; 2]) -> PairResult {
        PairResult {
            cpus,
            handoffs: 4661,
            warps: 0,
            max_backwards_ticks: 0,
            offset_bounds_ticks: Some([-200, 164]),
            pinned: true,
        }
    }

    #[test]
    fn the_matrix_mirrors_each_pair() {
        let sync = SyncResult {
            pairs: vec![recorded([0, 1]), recorded([0, 3]), recorded([1, 3])],
            skipped: None,
        };
        let m = sync.matrix();
        assert_eq!(m.cpus, [0, 1, 3]);
        for i in 0..3 {
            assert_eq!(m.offset_bounds_ticks[i][i], None);
            assert_eq!(m.round_trip_ticks[i][i], None);
            for j in 0..3 {
                if i == j {
                    continue;
                }
                let [lo, hi] = m.offset_bounds_ticks[i][j].unwrap();
                assert_eq!(m.offset_bounds_ticks[j][i], Some([-hi, -lo]));
                assert_eq!(m.round_trip_ticks[i][j], Some(364));
                assert_eq!(m.round_trip_ticks[j][i], Some(364));
            }
        }
        assert!(m.out_of_step().is_empty() && m.unbounded().is_empty());
    }

    #[test]
    fn an_interval_that_excludes_zero_is_out_of_step() {
        // CPU 1 stored a value CPU 0 then read 2,600 ticks lower: the TSCs are apart.
        let mut bad = recorded([0, 1]);
        bad.warps = 12;
        bad.max_backwards_ticks = 2600;
        bad.offset_bounds_ticks = Some([1500, 2600]);
        let sync = SyncResult {
            pairs: vec![bad],
            skipped: None,
        };
        assert_eq!(sync.matrix().out_of_step(), [(0, 1)]);
        let v = tsc_unsynchronized(&sync, Some(2.6e9));
        assert_eq!(v.state, VerdictState::Yes);
        assert_eq!(v.evidence["out_of_step"][0], serde_json::json!([0, 1]));
        let row1 = &v.evidence["matrix"]["offset_bounds_ns"][1];
        assert_eq!(row1[0][0].as_f64().unwrap().round(), -1000.0);
        assert!(v.summary.contains("12 times"), "{}", v.summary);
    }

    #[test]
    fn one_pair_is_singular_and_the_matrix_is_in_the_evidence() {
        let sync = SyncResult {
            pairs: vec![recorded([0, 1])],
            skipped: None,
        };
        let v = tsc_unsynchronized(&sync, Some(2.6e9));
        assert_eq!(v.state, VerdictState::No, "{v:?}");
        assert!(v.summary.contains("over 1 pair;"), "{}", v.summary);
        assert!(!v.summary.contains("1 pairs"));
        let m = &v.evidence["matrix"];
        assert_eq!(m["cpus"], serde_json::json!([0, 1]));
        assert!(m["offset_bounds_ns"][0][0].is_null());
        assert_eq!(m["round_trip_ns"][0][1].as_f64().unwrap().round(), 140.0);
        assert_eq!(m["round_trip_ticks"][1][0], 364);
    }
}
