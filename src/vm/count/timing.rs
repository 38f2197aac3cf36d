//! The timing pass of `vm count`'s guest ([`crate::vm::count::guest`]): a timer that sums the
//! time of each op of a workload's loop ([`OpTimer`], told by the loop as its
//! [`OpHook`]; the ops are [`crate::workload::def::positions`]), so that the model spreads an
//! op's time over its syscalls as the guest spent it.

use std::time::Instant;

use crate::workload::def::OpHook;

/// Iterations of a timing pass at most (vfsmix on ext4 under TCG: about 3 s).
pub(crate) const TIMING_ITERATIONS: u64 = 1_000;

/// Where a loop's time goes: the time from the end of one op to the end of the next, summed
/// per position in the iteration, and how often the coarse clock (`CLOCK_REALTIME_COARSE`,
/// the vDSO's copy of the kernel's tick time) moved in that span. Off, it does nothing (the
/// counted runs).
#[derive(Debug, Default)]
pub(crate) struct OpTimer {
    on: bool,
    sums_ns: Vec<f64>,
    /// Coarse-clock moves per position.
    pub tick_moves: Vec<u64>,
    position: usize,
    last: Option<Instant>,
    last_coarse: Option<u64>,
    /// Iterations timed.
    pub iterations: u64,
}

impl OpTimer {
    /// A timer that times nothing.
    #[cfg(test)]
    pub(crate) fn off() -> Self {
        OpTimer::default()
    }

    /// A timer for a loop of `ops` ops.
    pub(crate) fn on(ops: usize) -> Self {
        OpTimer {
            on: true,
            sums_ns: vec![0.0; ops],
            tick_moves: vec![0; ops],
            ..OpTimer::default()
        }
    }

    /// Mean ns per position less `clock_read_ns` (at least 0); empty when nothing ran.
    pub(crate) fn means(&self, clock_read_ns: f64) -> Vec<f64> {
        if self.iterations == 0 {
            return Vec::new();
        }
        let n = self.iterations as f64;
        self.sums_ns
            .iter()
            .map(|s| (s / n - clock_read_ns).max(0.0))
            .collect()
    }
}

impl OpHook for OpTimer {
    /// The loop starts now.
    fn begin(&mut self) {
        if self.on {
            self.last = Some(Instant::now());
            self.last_coarse = coarse_now();
        }
    }

    /// An op ended now.
    #[inline]
    fn op(&mut self) {
        if !self.on {
            return;
        }
        let now = Instant::now();
        let coarse = coarse_now();
        if let (Some(last), Some(sum)) = (self.last, self.sums_ns.get_mut(self.position)) {
            *sum += now.duration_since(last).as_nanos() as f64;
        }
        if let (Some(a), Some(b), Some(n)) = (
            self.last_coarse,
            coarse,
            self.tick_moves.get_mut(self.position),
        ) {
            *n += u64::from(a != b);
        }
        self.last = Some(now);
        self.last_coarse = coarse;
        self.position += 1;
    }

    /// An iteration ended (after its last op).
    #[inline]
    fn end_iteration(&mut self) {
        if self.on {
            self.position = 0;
            self.iterations += 1;
        }
    }
}

/// `CLOCK_REALTIME_COARSE` through the vDSO (which serves the coarse clocks whatever the
/// clocksource: no syscall).
fn coarse_now() -> Option<u64> {
    crate::sys::clock::vdso_clock_gettime(crate::sys::clock::id::REALTIME_COARSE).ok()
}

/// The mean cost of what [`OpTimer`] reads per op (`Instant::now()` and the coarse clock),
/// over 1,000 back-to-back pairs.
pub(crate) fn clock_read_ns() -> f64 {
    const N: u32 = 1_000;
    let started = Instant::now();
    for _ in 0..N {
        std::hint::black_box(Instant::now());
        std::hint::black_box(coarse_now());
    }
    started.elapsed().as_nanos() as f64 / f64::from(N)
}

/// How late the coarse clock shows each tick: a spin reading `CLOCK_REALTIME_COARSE` until it
/// has moved `moves` times (or `max_ns` passed), and at each move `CLOCK_REALTIME` − the new
/// coarse value. The kernel's coarse time is the last tick's grid point (the timekeeper
/// accumulates whole tick intervals), visible once the tick is processed; a multigrain kernel
/// compares it with fine stamps, so a tick processed late can look like no move. Sorted, ns.
pub(crate) fn coarse_lag_ns(moves: usize, max_ns: u64) -> Vec<u64> {
    use crate::sys::clock::{id, vdso_clock_gettime};
    let started = Instant::now();
    let mut lags = Vec::with_capacity(moves);
    let Some(mut last) = coarse_now() else {
        return lags;
    };
    while lags.len() < moves && (started.elapsed().as_nanos() as u64) < max_ns {
        let Some(c) = coarse_now() else { break };
        if c != last {
            if let Ok(fine) = vdso_clock_gettime(id::REALTIME) {
                lags.push(fine.saturating_sub(c));
            }
            last = c;
        }
    }
    lags.sort_unstable();
    lags
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_timer_sums_per_position_and_off_times_nothing() {
        let mut t = OpTimer::on(2);
        t.begin();
        for _ in 0..3 {
            t.op();
            std::hint::black_box((0..1000).sum::<u64>());
            t.op();
            t.end_iteration();
        }
        assert_eq!(t.iterations, 3);
        assert_eq!(t.tick_moves.len(), 2);
        let m = t.means(0.0);
        assert_eq!(m.len(), 2);
        assert!(m.iter().all(|&x| x >= 0.0));
        // A clock read dearer than the op leaves 0, not a negative time.
        assert!(t.means(1e12).iter().all(|&x| x == 0.0));
        let mut off = OpTimer::off();
        off.begin();
        off.op();
        off.end_iteration();
        assert_eq!(off.iterations, 0);
        assert!(off.means(0.0).is_empty());
    }
}
