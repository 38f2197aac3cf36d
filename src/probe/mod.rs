//! `tscope probe`: what every timestamp source costs here, its resolution, and whether it goes
//! backwards.
//!
//! Each source is measured by the [`crate::measure`] sampler (cost per call: the lower quartile
//! of its batches' per-call costs, seeded bootstrap interval, rounds until the interval is
//! tight), its batches interleaved with every other source's and the core clock timed between
//! them (`sampling.rs`, [`coreclock`]), and then watched by [`resolution::watch`]; `precise_read_ns` comes from its own
//! paired run ([`crate::measure::paired_difference`]). The TSC is
//! calibrated against `CLOCK_MONOTONIC_RAW` between the first and last source, so the whole
//! run is the calibration span. The measuring thread is pinned to the CPU it starts on.

pub mod advice;
pub mod between;
mod caveats;
pub mod check;
pub mod coreclock;
pub mod histogram;
pub mod host_id;
mod interleave;
pub mod journal;
pub mod machine;
pub mod multigrain;
pub mod placement;
pub mod profile;
mod readers;
pub mod resolution;
mod sampling;
pub mod source;
pub mod update;

use std::time::{Duration, Instant};

pub use profile::{Derived, Notice, Profile, SourceResult, Timer, PROFILE_SCHEMA_VERSION};
pub use source::{Clock, Source, SourceKind};

use crate::measure::{self, PairedConfig, SamplerConfig};
use crate::stats::Estimate;
use crate::sys;
use crate::warnings::Warning;
use caveats::{core_shared, no_interval, not_positive, switches_between};
use resolution::WatchConfig;

/// A validated probe configuration.
#[derive(Debug, Clone)]
pub struct ProbeConfig {
    pub sources: Vec<Source>,
    pub sampler: SamplerConfig,
    pub watch_fine: WatchConfig,
    pub watch_coarse: WatchConfig,
    /// The pairing that derives `precise_read_ns`.
    pub paired: PairedConfig,
    /// Rounds past the minimum stop once sampling has taken this long.
    pub sampling_cap: Duration,
    pub quick: bool,
    pub seed: u64,
    pub pin: bool,
    /// Whether TSC reads trap into the emulating SIGSEGV handler (set by `--emulate-trap`).
    pub emulate_trap: bool,
}

impl ProbeConfig {
    /// The default configuration for `sources` (all of them when empty).
    pub fn new(sources: Vec<Source>, quick: bool, seed: u64) -> Self {
        let sources = if sources.is_empty() {
            Source::all()
        } else {
            sources
        };
        let (sampler, paired, sampling_cap, fine, coarse) = if quick {
            (
                SamplerConfig::quick(seed),
                PairedConfig::quick(seed),
                Duration::from_millis(150),
                WatchConfig {
                    min_reads: 2_000,
                    min_changes: 3,
                    budget: Duration::from_millis(2),
                },
                WatchConfig {
                    min_reads: 100,
                    min_changes: 3,
                    budget: Duration::from_millis(25),
                },
            )
        } else {
            (
                SamplerConfig::full(seed),
                PairedConfig::full(seed),
                Duration::from_millis(1200),
                WatchConfig {
                    min_reads: 20_000,
                    min_changes: 5,
                    budget: Duration::from_millis(10),
                },
                WatchConfig {
                    min_reads: 100,
                    min_changes: 6,
                    budget: Duration::from_millis(60),
                },
            )
        };
        ProbeConfig {
            sources,
            sampler,
            paired,
            sampling_cap,
            watch_fine: fine,
            watch_coarse: coarse,
            quick,
            seed,
            pin: true,
            emulate_trap: false,
        }
    }
}

/// Measures every configured source and returns the profile.
pub fn run(cfg: &ProbeConfig) -> Profile {
    let started = Instant::now();
    let mut machine = machine::gather();
    let mut warnings = Vec::new();
    let original_affinity = sys::cpu::allowed_cpus().ok();
    if cfg.pin {
        pin_here(&mut machine, &mut warnings);
    }
    #[cfg(target_arch = "x86_64")]
    let cal_start = machine::calibration_point();

    let overhead_ns = measure::timer_overhead_ns(if cfg.quick { 200 } else { 2000 });
    let timer = Timer {
        name: "std::time::Instant (CLOCK_MONOTONIC via the vDSO)".into(),
        overhead_ns,
    };
    let ctx = readers::Context::new(&cfg.sources, &machine);
    let cpu_before = sys::cpu::thread_cpu_s().ok();
    let switches_before = sys::cpu::context_switches().map(|s| s.1);
    let sampling_started = Instant::now();
    let (measurements, extra_rounds, core_clock) =
        sampling::sample_all(cfg, &ctx, overhead_ns, sampling_started);
    // Derived only when both of its sources were asked for (a `--source` subset derives
    // nothing), and paired right after them, while the caches are as warm.
    let both = [Clock::Realtime, Clock::RealtimeCoarse]
        .iter()
        .all(|&c| cfg.sources.contains(&Source::Syscall(c)));
    let precise = both
        .then(|| readers::precise_read(&ctx, &cfg.paired))
        .flatten();
    // After the pairing, which wants the caches as the sampling left them.
    let placements = place_all(cfg, overhead_ns, &measurements);
    let sampling_wall = sampling_started.elapsed().as_secs_f64();
    let cpu_share = match (cpu_before, sys::cpu::thread_cpu_s().ok()) {
        (Some(a), Some(b)) if sampling_wall > 0.0 => Some(((b - a) / sampling_wall).min(1.0)),
        _ => None,
    };
    let (involuntary_switches, unknown) =
        switches_between(switches_before, sys::cpu::context_switches().map(|s| s.1));
    warnings.extend(unknown);
    let mut results = describe_all(
        cfg,
        &ctx,
        &measurements,
        &extra_rounds,
        placements,
        &mut warnings,
    );

    #[cfg(target_arch = "x86_64")]
    if let (Some(a), Some(b)) = (cal_start, machine::calibration_point()) {
        if let Some((hz, span)) = machine::calibrate(a, b) {
            machine.tsc.calibrated_hz = Some(hz);
            machine.tsc.calibration_span_s = Some(span);
        }
    }
    // Give the caller back the CPUs it had: pinning is for the measurement only.
    if let (true, Some(cpus)) = (machine.pinned_cpu.is_some(), &original_affinity) {
        let _ = sys::cpu::set_affinity(cpus);
    }
    let hz = machine.tsc.hz();
    for r in &mut results {
        r.finish(hz);
    }
    let derived = derive(cfg, &measurements, precise.as_ref(), hz, &mut warnings);

    warnings.extend(advice::about_machine(&machine));
    if let Some(share) = cpu_share.filter(|&s| s < CPU_SHARE_WARN) {
        warnings.push(Warning::CpuShared {
            share,
            switches: involuntary_switches,
        });
    }
    for r in &results {
        warnings.extend(advice::about_source(r));
    }
    warnings.extend(core_shared(&results));
    let created_unix_s = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    Profile {
        schema_version: PROFILE_SCHEMA_VERSION,
        tool: format!("tscope {}", env!("CARGO_PKG_VERSION")),
        created_unix_s,
        seed: cfg.seed,
        quick: cfg.quick,
        emulate_trap: cfg.emulate_trap,
        confidence_level: cfg.sampler.level,
        wall_s: started.elapsed().as_secs_f64(),
        cpu_share,
        involuntary_switches,
        core_clock,
        timer,
        machine,
        sources: results,
        derived,
        filesystems: Vec::new(),
        between_runs: None,
        warnings: warnings.iter().map(Notice::from).collect(),
    }
}

/// Pins the measuring thread to the CPU it runs on, recording that CPU in `machine`, or in
/// `warnings` why it could not.
fn pin_here(machine: &mut machine::Machine, warnings: &mut Vec<Warning>) {
    match sys::cpu::current_cpu().and_then(|c| sys::cpu::pin_to_cpu(c).map(|()| c)) {
        Ok(cpu) => machine.pinned_cpu = Some(cpu),
        Err(e) => warnings.push(Warning::NotPinned {
            reason: e.to_string(),
        }),
    }
}

/// Each source's result: its measurement widened by its placement pass, then its watch for
/// resolution and backward steps; a source without a bootstrap interval is flagged noisy, with
/// a warning.
fn describe_all(
    cfg: &ProbeConfig,
    ctx: &readers::Context,
    measurements: &[Option<measure::Measurement>],
    extra_rounds: &[usize],
    mut placements: Vec<Option<placement::Placement>>,
    warnings: &mut Vec<Warning>,
) -> Vec<SourceResult> {
    let mut results = Vec::with_capacity(cfg.sources.len());
    for (i, &src) in cfg.sources.iter().enumerate() {
        // time() ticks once a second: a short watch shows that it is coarse, a long one would
        // not see its period either.
        let watch_cfg = if src.is_coarse() && src != Source::VdsoTime {
            cfg.watch_coarse
        } else {
            cfg.watch_fine
        };
        let m = measurements[i].as_ref();
        let mut r = readers::describe(src, ctx, m, &watch_cfg);
        r.extra_rounds = extra_rounds[i];
        r.cost_cycles = m.and_then(|m| m.cost_cycles);
        if let (Some(mut p), Some(c)) = (placements[i].take(), r.cost_ns) {
            let (c, cycles) = p.widen(c, r.cost_cycles);
            r.cost_ns = Some(c);
            r.cost_cycles = cycles;
            r.relative_ci_width = Some(c.relative_width());
            r.placement = Some(p);
        }
        // A bare point (no bootstrap interval) is not a confident figure: flag it.
        r.noisy = m.is_some_and(|m| is_noisy(m) || m.interval_failed);
        warnings.extend(no_interval(&r.id, m));
        results.push(r);
    }
    results
}

/// The derived figures: `precise_read_ns` from the pairing (a warning where it is not
/// positive), the syscall floor from `syscall:getppid`, and the TSC frequency `hz`.
fn derive(
    cfg: &ProbeConfig,
    measurements: &[Option<measure::Measurement>],
    precise: Option<&measure::PairedDifference>,
    hz: Option<f64>,
    warnings: &mut Vec<Warning>,
) -> Derived {
    let find = |id: Source| {
        cfg.sources
            .iter()
            .position(|&s| s == id)
            .and_then(|i| measurements[i].as_ref())
    };
    let precise_read_ns = precise.map(|p| p.diff_ns);
    // A precise read cheaper than a coarse one is a disturbed measurement: shown as measured,
    // with a warning, never clamped (`simulate` refuses to charge it unless --set gives one).
    warnings.extend(not_positive("precise_read_ns", precise_read_ns));
    Derived {
        precise_read_ns,
        precise_read_pairs: precise.map(|p| p.pairs),
        precise_read_contended_pairs: precise.and_then(|p| p.contended_pairs),
        syscall_floor_ns: find(Source::SyscallGetppid).map(|m| m.cost_ns),
        tsc_hz: hz,
    }
}

/// The placement pass of every measured counter read (see [`placement`]), after the sampling
/// and the pairing; none under `--emulate-trap`, where a read is a trap whose microseconds no
/// loop placement moves.
fn place_all(
    cfg: &ProbeConfig,
    overhead_ns: f64,
    measured: &[Option<measure::Measurement>],
) -> Vec<Option<placement::Placement>> {
    let (pass, step) = placement::pass_config(
        &SamplerConfig {
            overhead_ns,
            ..cfg.sampler
        },
        cfg.quick,
    );
    cfg.sources
        .iter()
        .zip(measured)
        .enumerate()
        .map(|(i, (&src, m))| {
            let wanted = m.is_some() && !cfg.emulate_trap && placement::applies(src);
            let seed = cfg.seed.wrapping_add(500 + i as u64);
            wanted
                .then(|| placement::measure(src, &SamplerConfig { seed, ..pass }, step))
                .flatten()
        })
        .collect()
}

/// Below this share of CPU time during sampling, the run shared its CPU: warn.
pub const CPU_SHARE_WARN: f64 = 0.8;

/// Noisy: the 95% interval is wider than 10% of the point, or the rounds' points spread over
/// more than 5% of their median — in either case by more than 0.5 ns, below which a figure is
/// as good as a loop can resolve.
pub fn is_noisy(m: &measure::Measurement) -> bool {
    let c = m.cost_ns;
    let wide = c.relative_width() > 0.10 && c.upper - c.lower > 0.5;
    let lo = m.round_points.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = m
        .round_points
        .iter()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
    let spread = m.round_points.len() > 1 && (hi - lo) > 0.05 * c.point.abs() && hi - lo > 0.5;
    wide || spread
}

/// Converts an estimate in nanoseconds to TSC ticks.
pub fn ns_to_ticks(e: Estimate, hz: f64) -> Estimate {
    e.scale(hz / 1e9)
}
