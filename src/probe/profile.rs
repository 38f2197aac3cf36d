//! The profile: the serde model `probe` produces and `simulate`, `compare` and `report` read.
//! Its JSON form is a contract documented in `docs/schema.md`.

use serde::{Deserialize, Serialize};

use super::machine::Machine;
use super::resolution::Watch;
use crate::stats::Estimate;
use crate::warnings::Warning;

/// The version of the profile JSON this build writes.
pub const PROFILE_SCHEMA_VERSION: u32 = 1;

/// Everything one `probe` run measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Profile {
    pub schema_version: u32,
    pub tool: String,
    pub created_unix_s: u64,
    /// Seed of every bootstrap in this run (source `i` uses `seed + i`).
    pub seed: u64,
    pub quick: bool,
    pub emulate_trap: bool,
    pub confidence_level: f64,
    pub wall_s: f64,
    /// CPU time the measuring thread got during sampling, as a share of the sampling wall
    /// time: near 1 on an idle CPU, lower when another task shared it.
    #[serde(default)]
    pub cpu_share: Option<f64>,
    /// Involuntary context switches of the measuring thread over the whole run; null when the
    /// counters could not be read (unknown, never a made-up 0).
    #[serde(default)]
    pub involuntary_switches: Option<u64>,
    /// The core clock while sampling (absent where it is not read, and in profiles from
    /// versions before it was).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_clock: Option<super::coreclock::CoreClock>,
    /// The sampler's timer and its measured cost per sample (removed by the regression).
    pub timer: Timer,
    pub machine: Machine,
    pub sources: Vec<SourceResult>,
    pub derived: Derived,
    /// The price of an inode timestamp update per filesystem (`probe --dir DIR`), from the
    /// live knob pair on each; empty when no directory was given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub filesystems: Vec<super::update::FsUpdate>,
    /// `--repeat N`: how the runs were taken (each source's `between_runs` holds its points
    /// and noise); absent for one run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub between_runs: Option<super::between::BetweenRuns>,
    pub warnings: Vec<Notice>,
}

impl Profile {
    /// The result for source `id`, if it was probed.
    pub fn source(&self, id: &str) -> Option<&SourceResult> {
        self.sources.iter().find(|s| s.id == id)
    }

    /// The cost of `id` in nanoseconds, if it was probed and is supported.
    pub fn cost_ns(&self, id: &str) -> Option<Estimate> {
        self.source(id).and_then(|s| s.cost_ns)
    }

    /// HZ as the coarse clocks' update periods imply it, rounded: the highest HZ a coarse
    /// source implies, when the next highest confirms it within [`HZ_AGREEMENT`]; `None`
    /// otherwise, and for a quick profile. A watch that misses ticks sees a multiple of the
    /// period and implies a lower HZ: the recorded KVM profile's four coarse sources imply 125,
    /// 250, 250 and 6; the quick watches of `detect` on a loaded 250 HZ guest implied 71, 56,
    /// 50 and 45 in one run, 83 and 83 in another, too short to tell.
    pub fn implied_hz(&self) -> Option<u32> {
        if self.quick {
            return None;
        }
        let mut hz: Vec<f64> = self
            .sources
            .iter()
            .filter(|s| s.id.ends_with("_coarse"))
            .filter_map(|s| s.implied_hz)
            .filter(|h| h.is_finite() && *h > 0.0)
            .collect();
        hz.sort_by(|a, b| b.total_cmp(a));
        match hz[..] {
            [high, next, ..] if high - next <= HZ_AGREEMENT * high => Some(high.round() as u32),
            _ => None,
        }
    }
}

/// How close (relative) two coarse sources' implied HZ must be for [`Profile::implied_hz`] to
/// take them as one.
pub const HZ_AGREEMENT: f64 = 0.05;

/// One source's figures.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SourceResult {
    pub id: String,
    pub kind: String,
    pub supported: bool,
    /// Why the source is unsupported, or a remark on a supported one.
    pub reason: Option<String>,
    /// Cost of one call (regression slope), with its interval.
    pub cost_ns: Option<Estimate>,
    /// The same in TSC ticks, when the TSC frequency is known.
    pub cost_ticks: Option<Estimate>,
    /// The cost in core cycles: each batch's per-call nanoseconds times the core clock measured
    /// beside it, under the same estimator (absent where the clock is not read, and in
    /// profiles from versions before it was). Steady where the nanoseconds follow the host's
    /// turbo.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_cycles: Option<Estimate>,
    /// The point estimate of each round (their median is `cost_ns.point`).
    pub round_points_ns: Vec<f64>,
    /// Intercept of the regression (fixed cost per sample plus slope error × batch size).
    pub intercept_ns: Option<f64>,
    /// Relative width of the interval, `(upper - lower) / point`.
    pub relative_ci_width: Option<f64>,
    /// Smallest non-zero step between successive reads, in ns.
    pub resolution_ns: Option<f64>,
    /// What `clock_getres` (or the interface's unit) claims, in ns.
    pub getres_ns: Option<f64>,
    /// Coarse clocks: median step between distinct values (the tick), in ns.
    pub update_period_ns: Option<f64>,
    /// Coarse clocks: the `HZ` that update period implies.
    pub implied_hz: Option<f64>,
    pub monotonic_violations: u64,
    pub max_backwards_ns: Option<f64>,
    /// Forward steps over 1 ms between successive reads.
    pub forward_jumps_over_1ms: u64,
    /// Involuntary context switches while the source was watched: each can explain one
    /// forward jump (the thread was off the CPU, the clock was not).
    /// Null when the counters could not be read.
    #[serde(default)]
    pub watch_involuntary_switches: Option<u64>,
    pub reads_watched: u64,
    pub samples: usize,
    /// Batches that shared their core with another hardware thread (their lanes read at least
    /// `CONTENDED` times the source's fastest; `probe::coreclock::CoreShare`); absent where
    /// the lanes were not timed, and in profiles from versions before they were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contended_batches: Option<usize>,
    /// Whether those batches were left out of the cost (they are when at least 5% of the
    /// batches, and 8, ran with the core to themselves); written only when true, so profiles
    /// from versions before it read back and write out byte for byte.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub contended_excluded: bool,
    pub batch_unit: u64,
    pub iterations: u64,
    /// Null when the counters could not be read.
    #[serde(default)]
    pub involuntary_switches: Option<u64>,
    /// Rounds added because the first ones were noisy.
    #[serde(default)]
    pub extra_rounds: usize,
    /// Still noisy after the extra rounds: read the interval, not the point.
    #[serde(default)]
    pub noisy: bool,
    /// Counter reads: the cost at each code placement of the loop (absent for other sources,
    /// under `--emulate-trap`, and in profiles from versions before it was measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<super::placement::Placement>,
    /// `--repeat N`: every run's point and the noise between two runs
    /// ([`super::between`]); absent for one run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub between_runs: Option<super::between::SourceRuns>,
    /// The source's native unit: "ns" for clocks, "ticks" for counters.
    #[serde(skip)]
    pub(crate) native_unit_ticks: bool,
    #[serde(skip)]
    pub(crate) watch: Option<Watch>,
}

impl SourceResult {
    /// A source this machine cannot measure.
    pub fn unsupported(id: String, kind: String, reason: String) -> Self {
        SourceResult {
            id,
            kind,
            supported: false,
            reason: Some(reason),
            cost_ns: None,
            cost_ticks: None,
            cost_cycles: None,
            intercept_ns: None,
            round_points_ns: Vec::new(),
            relative_ci_width: None,
            resolution_ns: None,
            getres_ns: None,
            update_period_ns: None,
            implied_hz: None,
            monotonic_violations: 0,
            max_backwards_ns: None,
            forward_jumps_over_1ms: 0,
            watch_involuntary_switches: Some(0),
            reads_watched: 0,
            samples: 0,
            contended_batches: None,
            contended_excluded: false,
            batch_unit: 0,
            iterations: 0,
            involuntary_switches: Some(0),
            extra_rounds: 0,
            noisy: false,
            placement: None,
            between_runs: None,
            native_unit_ticks: false,
            watch: None,
        }
    }

    /// Converts what was observed in native units into ns once the TSC frequency is known.
    pub(crate) fn finish(&mut self, tsc_hz: Option<f64>) {
        if let (Some(c), Some(hz)) = (self.cost_ns, tsc_hz) {
            self.cost_ticks = Some(super::ns_to_ticks(c, hz));
            if self.native_unit_ticks {
                self.getres_ns = Some(1e9 / hz);
            }
        }
        let Some(w) = self.watch.take() else { return };
        let to_ns = if self.native_unit_ticks {
            match tsc_hz {
                Some(hz) => 1e9 / hz,
                None => return,
            }
        } else {
            1.0
        };
        self.resolution_ns = w.min_step.map(|s| s as f64 * to_ns);
        self.monotonic_violations = w.backwards;
        self.max_backwards_ns = (w.backwards > 0).then_some(w.max_backwards as f64 * to_ns);
        self.forward_jumps_over_1ms = w.forward_jumps;
        self.reads_watched = w.reads;
        if self.update_period_ns.is_none() {
            // The smallest repeated step (robust to a preempted reader); the median of all steps
            // when no step repeated (a short watch).
            if let Some(period) = w
                .tick_step
                .or(w.median_step)
                .filter(|_| self.is_coarse_kind())
            {
                let ns = period * to_ns;
                self.update_period_ns = Some(ns);
                self.implied_hz = Some(1e9 / ns);
            }
        }
    }

    fn is_coarse_kind(&self) -> bool {
        self.id.ends_with("_coarse") || self.id == "vdso:time"
    }
}

/// The timer that timed every sample.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Timer {
    pub name: String,
    /// Median cost of an empty sample: two timer reads around a zero-iteration loop.
    pub overhead_ns: f64,
}

/// Figures derived from several sources.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Derived {
    /// `syscall:realtime − syscall:realtime_coarse`: the kernel-side cost of one precise
    /// clocksource read (both pay the same entry and exit; only the first reads the
    /// clocksource). What `simulate` charges for a precise timestamp.
    pub precise_read_ns: Option<Estimate>,
    /// How many `syscall:realtime`/`syscall:realtime_coarse` batch pairs `precise_read_ns` is
    /// the median of. Absent when not derived, and in profiles written before the pairing (so
    /// those round-trip through `show` byte for byte).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precise_read_pairs: Option<usize>,
    /// Of those pairs, the ones that shared their core with another hardware thread (left out
    /// of the median when enough others remain, as the sampler leaves out batches); absent
    /// in profiles from versions before the core's share was sensed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precise_read_contended_pairs: Option<usize>,
    /// `syscall:getppid`: the cost of entering and leaving the kernel.
    pub syscall_floor_ns: Option<Estimate>,
    /// The TSC frequency used for tick conversions (calibrated, else CPUID).
    pub tsc_hz: Option<f64>,
}

/// A warning as it appears in the JSON: a stable code and the advice.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Notice {
    pub code: String,
    pub message: String,
}

impl From<&Warning> for Notice {
    fn from(w: &Warning) -> Self {
        Notice {
            code: w.code().to_string(),
            message: w.to_string(),
        }
    }
}

impl Profile {
    /// Attaches the between-run figures of `others` (runs of the same probe in other processes)
    /// to `profile`, source by source.
    pub fn attach_runs(&mut self, others: &[Profile]) {
        let profile = self;
        let runs = 1 + others.len() as u32;
        profile.between_runs = Some(super::between::BetweenRuns {
            runs,
            method: format!(
                "{runs} runs of the probe, each in a process of its own, back to back; per source \
                 the 95% half-width of the ratio of two runs: t(0.975, {}) × a robust spread of \
                 the runs' log points × √2",
                runs.saturating_sub(1)
            ),
        });
        let mut unsteady = Vec::new();
        for s in &mut profile.sources {
            let Some(first) = s.cost_ns.map(|e| e.point) else {
                continue;
            };
            let mut points = vec![first];
            points.extend(
                others
                    .iter()
                    .filter_map(|o| o.source(&s.id).and_then(|x| x.cost_ns).map(|e| e.point)),
            );
            if let Some(noise) = super::between::noise_pct(&points) {
                if noise > super::between::NOISY_PCT {
                    unsteady.push(format!("{} ±{noise:.1}%", s.id));
                }
                s.between_runs = Some(super::between::SourceRuns {
                    points_ns: points,
                    noise_pct: noise,
                });
            }
        }
        if !unsteady.is_empty() {
            profile.warnings.push(Notice {
                code: "between_runs".into(),
                message: format!(
                    "runs of this probe differ by more than {:.0}% on {} ({runs} runs, 95% \
                     for two runs): another tenant, the core clock or the code's placement moves \
                     them; compare calls a change on these only beyond that",
                    super::between::NOISY_PCT,
                    unsteady.join(", ")
                ),
            });
        }
    }
}
