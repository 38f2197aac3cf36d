//! `tscope probe --histogram SOURCE`: the distribution of the differences between successive
//! reads of one clock, read back to back for a bounded time, in the layout of PostgreSQL's
//! `pg_test_timing` (`src/bin/pg_test_timing/pg_test_timing.c`): log2 buckets of nanoseconds
//! (bucket `i` holds the durations in `[2^(i-1), 2^i − 1]`, bucket 0 the zeros), then the exact
//! durations observed in ascending order until their running share reaches a cutoff (99.99%
//! by default), and the largest duration always. A database administrator can put the two
//! outputs side by side.
//!
//! Timing model: each loop reads the clock once and takes the difference with the previous
//! read, so a delta is one read's cost plus the loop's own few instructions, or the clock's
//! resolution when that is coarser. Every 1024 reads the loop checks the deadline and the stop
//! flag, then reads afresh, so no delta contains the check. Counters (`rdtsc` …) are tallied in
//! ticks and converted at the end with the TSC frequency calibrated over the whole run against
//! `CLOCK_MONOTONIC_RAW` (read through the syscall, so `--emulate-trap` leaves it exact).
//! Differences that go backwards are counted apart, never bucketed (pg_test_timing exits on
//! the first).

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::machine;
use super::source::Source;
use crate::error::ConfigError;
use crate::sys::{self, clock};

/// The version of the histogram JSON this build writes.
pub const HISTOGRAM_SCHEMA_VERSION: u32 = 1;

/// pg_test_timing's default test duration.
pub const DEFAULT_DURATION: Duration = Duration::from_secs(3);

/// pg_test_timing's default cutoff of the exact durations list, in percent.
pub const DEFAULT_CUTOFF_PERCENT: f64 = 99.99;

/// Differences below this many native units (ns or ticks) are counted in an array; larger ones
/// are kept exactly in a list, which a bounded run keeps bounded (each lasts ≥ 65 µs of ns or
/// ≥ 65 536 ticks).
const DIRECT: usize = 1 << 16;

/// Reads between two checks of the deadline and the stop flag.
const CHECK_EVERY: u32 = 1024;

/// A validated histogram configuration.
#[derive(Debug, Clone)]
pub struct HistogramConfig {
    pub source: Source,
    pub duration: Duration,
    pub cutoff_percent: f64,
    pub pin: bool,
    pub emulate_trap: bool,
}

impl HistogramConfig {
    /// The configuration for `source` with pg_test_timing's defaults; refuses a source that
    /// reads no time (`rdpid`, `cpuid`, `syscall:getppid`).
    pub fn new(source: Source) -> Result<HistogramConfig, ConfigError> {
        if !source.reads_time() {
            return Err(ConfigError::Invalid(format!(
                "--histogram {source}: it reads no time, so it has no deltas; pick a clock \
                 (rdtsc, vdso:monotonic, syscall:realtime, ...; `tscope probe --list`)"
            )));
        }
        Ok(HistogramConfig {
            source,
            duration: DEFAULT_DURATION,
            cutoff_percent: DEFAULT_CUTOFF_PERCENT,
            pin: true,
            emulate_trap: false,
        })
    }
}

/// One log2 bucket: the durations `≤ le_ns` and above the bucket before.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bucket {
    pub le_ns: u64,
    pub count: u64,
    pub percent: f64,
    pub running_percent: f64,
}

/// One exact duration and how often it was seen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Observed {
    pub ns: u64,
    pub count: u64,
    pub percent: f64,
    pub running_percent: f64,
}

/// What `probe --histogram` measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Histogram {
    pub schema_version: u32,
    pub tool: String,
    pub source: String,
    pub duration_s: f64,
    pub wall_s: f64,
    /// A stop signal ended the run before `duration_s`.
    #[serde(rename = "interrupted")]
    pub stopped: bool,
    pub emulate_trap: bool,
    pub pinned_cpu: Option<usize>,
    /// The rate ticks were converted at (counters only).
    pub tsc_hz: Option<f64>,
    /// Reads of the clock.
    pub reads: u64,
    /// Differences bucketed (forward or zero): the buckets' counts sum to it.
    pub deltas: u64,
    /// Differences that went backwards (not bucketed).
    pub backwards: u64,
    pub max_backwards_ns: Option<u64>,
    /// The loop's wall time per read, pg_test_timing's "average loop time including overhead".
    pub average_loop_ns: f64,
    pub buckets: Vec<Bucket>,
    pub cutoff_percent: f64,
    /// Exact durations in ascending order until the running share reaches the cutoff.
    pub observed: Vec<Observed>,
    /// The largest duration, always (also the last of `observed` when the list reached it).
    pub largest: Option<Observed>,
}

/// What the loop tallied, in the source's native unit.
struct Tally {
    direct: Vec<u64>,
    big: Vec<u64>,
    reads: u64,
    backwards: u64,
    max_back: u64,
    stopped: bool,
}

/// Reads `read` back to back until `duration` has passed or a stop signal arrives.
#[inline(never)]
fn tally<F: FnMut() -> u64>(mut read: F, duration: Duration) -> Tally {
    let mut t = Tally {
        direct: vec![0; DIRECT],
        big: Vec::new(),
        reads: 0,
        backwards: 0,
        max_back: 0,
        stopped: false,
    };
    let started = Instant::now();
    loop {
        let mut prev = read();
        t.reads += 1;
        for _ in 0..CHECK_EVERY {
            let cur = black_box(read());
            match cur.checked_sub(prev) {
                Some(d) if (d as usize) < DIRECT => t.direct[d as usize] += 1,
                Some(d) => t.big.push(d),
                None => {
                    t.backwards += 1;
                    t.max_back = t.max_back.max(prev - cur);
                }
            }
            prev = cur;
        }
        t.reads += u64::from(CHECK_EVERY);
        if sys::signal::stop_requested() {
            t.stopped = true;
            break;
        }
        if started.elapsed() >= duration {
            break;
        }
    }
    t
}

/// Runs the source's loop; `None` when it is not a clock this build can read here.
fn tally_source(src: Source, duration: Duration) -> Option<Tally> {
    let ns = |r: std::io::Result<u64>| r.unwrap_or(0);
    #[cfg(target_arch = "x86_64")]
    use crate::sys::tsc;
    let t = match src {
        #[cfg(target_arch = "x86_64")]
        Source::Rdtsc => tally(tsc::rdtsc, duration),
        #[cfg(target_arch = "x86_64")]
        Source::LfenceRdtsc => tally(tsc::lfence_rdtsc, duration),
        #[cfg(target_arch = "x86_64")]
        Source::Rdtscp => tally(|| tsc::rdtscp().0, duration),
        Source::Vdso(c) => {
            let id = c.id();
            tally(|| ns(clock::vdso_clock_gettime(id)), duration)
        }
        Source::Syscall(c) => {
            let id = c.id();
            tally(|| ns(clock::syscall_clock_gettime(id)), duration)
        }
        Source::VdsoGettimeofday => tally(|| ns(clock::vdso_gettimeofday()), duration),
        Source::SyscallGettimeofday => tally(|| ns(clock::syscall_gettimeofday()), duration),
        Source::VdsoTime => tally(|| ns(clock::vdso_time()), duration),
        Source::StdInstant => {
            let base = Instant::now();
            tally(|| base.elapsed().as_nanos() as u64, duration)
        }
        Source::StdSystemTime => tally(
            || {
                SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos() as u64)
            },
            duration,
        ),
        Source::QuantaNow | Source::QuantaRaw => {
            let q = quanta::Clock::new();
            if src == Source::QuantaNow {
                let base = q.now();
                tally(|| q.now().duration_since(base).as_nanos() as u64, duration)
            } else {
                let base = q.raw();
                tally(|| q.delta_as_nanos(base, q.raw()), duration)
            }
        }
        _ => return None,
    };
    Some(t)
}

/// Measures the histogram. Fails when the source cannot be read here (no RDTSCP, a clock id
/// the kernel refuses) or a counter's rate cannot be calibrated.
pub fn run(cfg: &HistogramConfig) -> crate::error::Result<Histogram> {
    let src = cfg.source;
    if let Some(why) = unreadable(src) {
        crate::fail!("--histogram {src}: not readable here: {why}");
    }
    let original = sys::cpu::allowed_cpus().ok();
    let pinned_cpu = cfg
        .pin
        .then(|| sys::cpu::current_cpu().and_then(|c| sys::cpu::pin_to_cpu(c).map(|()| c)))
        .and_then(Result::ok);
    let counter = matches!(src, Source::Rdtsc | Source::LfenceRdtsc | Source::Rdtscp);
    #[cfg(target_arch = "x86_64")]
    let cal_start = counter.then(machine::calibration_point).flatten();
    let started = Instant::now();
    let t = tally_source(src, cfg.duration);
    let wall_s = started.elapsed().as_secs_f64();
    #[cfg(target_arch = "x86_64")]
    let hz = cal_start
        .zip(machine::calibration_point())
        .and_then(|(a, b)| machine::calibrate(a, b))
        .map(|(hz, _)| hz);
    #[cfg(not(target_arch = "x86_64"))]
    let hz: Option<f64> = None;
    if let (Some(_), Some(cpus)) = (pinned_cpu, &original) {
        let _ = sys::cpu::set_affinity(cpus);
    }
    let Some(t) = t else {
        crate::fail!("--histogram {src}: this build cannot read it on this architecture");
    };
    let to_ns: Box<dyn Fn(u64) -> u64> = match (counter, hz) {
        (false, _) => Box::new(|v| v),
        (true, Some(hz)) => Box::new(move |v| (v as f64 * 1e9 / hz).round() as u64),
        (true, None) => crate::fail!(
            "--histogram {src}: the TSC frequency could not be calibrated against \
             CLOCK_MONOTONIC_RAW, so its ticks have no duration"
        ),
    };
    let mut counts: BTreeMap<u64, u64> = BTreeMap::new();
    for (v, &n) in t.direct.iter().enumerate().filter(|(_, &n)| n > 0) {
        *counts.entry(to_ns(v as u64)).or_default() += n;
    }
    for &v in &t.big {
        *counts.entry(to_ns(v)).or_default() += 1;
    }
    let (buckets, observed, largest) = summarise(&counts, cfg.cutoff_percent);
    Ok(Histogram {
        schema_version: HISTOGRAM_SCHEMA_VERSION,
        tool: format!("tscope {}", env!("CARGO_PKG_VERSION")),
        source: src.to_string(),
        duration_s: cfg.duration.as_secs_f64(),
        wall_s,
        stopped: t.stopped,
        emulate_trap: cfg.emulate_trap,
        pinned_cpu,
        tsc_hz: hz.filter(|_| counter),
        reads: t.reads,
        deltas: counts.values().sum(),
        backwards: t.backwards,
        max_backwards_ns: (t.backwards > 0).then(|| to_ns(t.max_back)),
        average_loop_ns: wall_s * 1e9 / t.reads.max(1) as f64,
        buckets,
        cutoff_percent: cfg.cutoff_percent,
        observed,
        largest,
    })
}

/// Why `src` cannot be read on this machine, if it cannot.
fn unreadable(src: Source) -> Option<String> {
    match src {
        Source::Rdtscp if !machine::gather().tsc.rdtscp => {
            Some("CPUID.80000001H:EDX[27] (RDTSCP) is clear".into())
        }
        Source::Vdso(c) => clock::vdso_clock_gettime(c.id())
            .err()
            .map(|e| e.to_string()),
        Source::Syscall(c) => clock::syscall_clock_gettime(c.id())
            .err()
            .map(|e| e.to_string()),
        _ => None,
    }
}

/// The log2 buckets (0 up to the highest used, as pg_test_timing prints them), the exact
/// durations up to `cutoff_percent`, and the largest duration.
pub fn summarise(
    counts: &BTreeMap<u64, u64>,
    cutoff_percent: f64,
) -> (Vec<Bucket>, Vec<Observed>, Option<Observed>) {
    let total: u64 = counts.values().sum();
    let pct = |n: u64| n as f64 * 100.0 / total.max(1) as f64;
    let mut by_bit = [0u64; 65];
    for (&ns, &n) in counts {
        by_bit[(u64::BITS - ns.leading_zeros()) as usize] += n;
    }
    let top = by_bit.iter().rposition(|&n| n > 0).unwrap_or(0);
    let mut running = 0u64;
    let buckets = (0..=top)
        .filter(|_| total > 0)
        .map(|i| {
            running += by_bit[i];
            Bucket {
                le_ns: if i == 64 { u64::MAX } else { (1u64 << i) - 1 },
                count: by_bit[i],
                percent: pct(by_bit[i]),
                running_percent: pct(running),
            }
        })
        .collect();
    let mut observed = Vec::new();
    let mut running = 0u64;
    for (&ns, &n) in counts {
        running += n;
        observed.push(Observed {
            ns,
            count: n,
            percent: pct(n),
            running_percent: pct(running),
        });
        if pct(running) >= cutoff_percent {
            break;
        }
    }
    let largest = counts.iter().next_back().map(|(&ns, &n)| Observed {
        ns,
        count: n,
        percent: pct(n),
        running_percent: 100.0,
    });
    (buckets, observed, largest)
}

#[cfg(test)]
mod tests;
