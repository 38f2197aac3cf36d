//! The importer's running tallies: trace time ([`Clock`]) and the `-T` durations
//! ([`Histogram`]).

/// Trace time: seconds of `-tt` (since midnight, wrapping) or `-ttt` → ns since the first call,
/// never going backwards (calls are emitted in completion order, stamped with their start).
#[derive(Debug, Default)]
pub(super) struct Clock {
    first: Option<f64>,
    day_offset: f64,
    pub(super) last_ns: u64,
}

impl Clock {
    pub(super) fn ns(&mut self, t: f64) -> u64 {
        let first = *self.first.get_or_insert(t);
        let mut rel = t - first + self.day_offset;
        if t < 86_400.0 && rel * 1e9 < self.last_ns as f64 - 43_200e9 {
            self.day_offset += 86_400.0;
            rel += 86_400.0;
        }
        self.last_ns = self.last_ns.max((rel * 1e9).round().max(0.0) as u64);
        self.last_ns
    }
}

/// Durations in log-spaced buckets (16 per factor of two, 1 ns .. 2^40 ns): a median within
/// about 2%, in constant memory.
#[derive(Debug)]
pub(super) struct Histogram {
    counts: Vec<u64>,
    n: u64,
    /// The last duration added (its bits) and its bucket.
    last: (u64, usize),
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            counts: vec![0; Self::BUCKETS],
            n: 0,
            last: (1f64.to_bits(), 0),
        }
    }
}

impl Histogram {
    const PER_OCTAVE: f64 = 16.0;
    const BUCKETS: usize = 40 * 16;

    pub(super) fn add(&mut self, ns: f64) {
        // `-T` durations repeat (microseconds): the last value's bucket is kept.
        if ns.to_bits() != self.last.0 {
            let b = (ns.max(1.0).log2() * Self::PER_OCTAVE) as usize;
            self.last = (ns.to_bits(), b.min(Self::BUCKETS - 1));
        }
        self.counts[self.last.1] += 1;
        self.n += 1;
    }

    pub(super) fn median(&self) -> Option<f64> {
        let half = self.n.div_ceil(2);
        let mut seen = 0;
        for (b, &c) in self.counts.iter().enumerate() {
            seen += c;
            if c > 0 && seen >= half {
                return Some(((b as f64 + 0.5) / Self::PER_OCTAVE).exp2());
            }
        }
        None
    }
}
