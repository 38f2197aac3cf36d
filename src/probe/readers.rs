//! How each source is called: one closure per source for the sampler (so the call is inlined
//! into the measurement loop) and one reader returning its value for the resolution watch.

use std::hint::black_box;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use super::machine::Machine;
use super::profile::SourceResult;
use super::resolution::{self, WatchConfig};
use super::source::{Clock, Source};
use crate::measure::{self, Measurement, PairedConfig, PairedDifference, SamplerConfig};
use crate::sys::clock;

/// State shared by all sources of a run.
pub(crate) struct Context {
    quanta: Option<quanta::Clock>,
    base: Instant,
    rdtscp: bool,
    rdpid: bool,
    tsc_hz_hint: Option<f64>,
}

impl Context {
    pub(crate) fn new(sources: &[Source], machine: &Machine) -> Self {
        let wants_quanta = sources
            .iter()
            .any(|s| matches!(s, Source::QuantaNow | Source::QuantaRaw));
        Context {
            // quanta calibrates its TSC source on creation (a few ms); only pay for it if asked.
            quanta: wants_quanta.then(quanta::Clock::new),
            base: Instant::now(),
            rdtscp: machine.tsc.rdtscp,
            rdpid: machine.tsc.rdpid,
            tsc_hz_hint: machine.tsc.cpuid_15_hz.or(machine.tsc.cpuid_40000010_hz),
        }
    }
}

/// Why a source cannot be measured here, or `None` if it can.
fn unsupported_reason(src: Source, ctx: &Context) -> Option<String> {
    if !cfg!(target_arch = "x86_64")
        && (matches!(src.kind(), super::SourceKind::Counter) || src == Source::Cpuid)
    {
        return Some("x86_64 only".into());
    }
    match src {
        Source::Rdtscp if !ctx.rdtscp => Some("CPUID.80000001H:EDX[27] (RDTSCP) is clear".into()),
        Source::Rdpid if !ctx.rdpid => Some("CPUID.(7,0):ECX[22] (RDPID) is clear".into()),
        Source::Vdso(c) => clock::vdso_clock_gettime(c.id())
            .err()
            .map(|e| format!("clock_gettime: {e}")),
        Source::Syscall(c) => clock::syscall_clock_gettime(c.id())
            .err()
            .map(|e| format!("syscall clock_gettime: {e}")),
        Source::VdsoGettimeofday => clock::vdso_gettimeofday().err().map(|e| e.to_string()),
        Source::SyscallGettimeofday => clock::syscall_gettimeofday().err().map(|e| e.to_string()),
        Source::VdsoTime => clock::vdso_time().err().map(|e| e.to_string()),
        _ => None,
    }
}

/// One step of the sampler on one source: its warm-up, or one batch.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Step {
    /// Warm the source up and return its batch unit.
    Warmup,
    /// One batch of `k` calls.
    Batch { k: u64 },
}

/// What a [`Step`] returned.
pub(crate) enum Stepped {
    Unit(u64),
    Elapsed(f64),
}

/// Runs `step` on the closure `f` (generic, so the call is inlined into the batch loop).
fn step_with<R, F: FnMut() -> R>(cfg: &SamplerConfig, step: Step, mut f: F) -> Stepped {
    match step {
        Step::Warmup => Stepped::Unit(measure::warm_up(cfg, &mut f)),
        Step::Batch { k } => Stepped::Elapsed(measure::time_batch(&mut f, k)),
    }
}

/// Runs one sampler step on one source.
fn sample(src: Source, ctx: &Context, cfg: &SamplerConfig, step: Step) -> Option<Stepped> {
    #[cfg(target_arch = "x86_64")]
    use crate::sys::tsc;
    let s = match src {
        #[cfg(target_arch = "x86_64")]
        Source::Rdtsc => step_with(cfg, step, tsc::rdtsc),
        #[cfg(target_arch = "x86_64")]
        Source::LfenceRdtsc => step_with(cfg, step, tsc::lfence_rdtsc),
        #[cfg(target_arch = "x86_64")]
        Source::Rdtscp => step_with(cfg, step, tsc::rdtscp),
        #[cfg(target_arch = "x86_64")]
        Source::Rdpid => step_with(cfg, step, tsc::rdpid),
        #[cfg(target_arch = "x86_64")]
        Source::Cpuid => step_with(cfg, step, || tsc::cpuid(black_box(0))),
        Source::Vdso(c) => {
            let id = c.id();
            step_with(cfg, step, || clock::vdso_clock_gettime(black_box(id)))
        }
        Source::Syscall(c) => {
            let id = c.id();
            step_with(cfg, step, || clock::syscall_clock_gettime(black_box(id)))
        }
        Source::VdsoGettimeofday => step_with(cfg, step, clock::vdso_gettimeofday),
        Source::SyscallGettimeofday => step_with(cfg, step, clock::syscall_gettimeofday),
        Source::VdsoTime => step_with(cfg, step, clock::vdso_time),
        Source::StdInstant => step_with(cfg, step, Instant::now),
        Source::StdSystemTime => step_with(cfg, step, SystemTime::now),
        Source::QuantaNow => {
            let q = ctx.quanta.as_ref()?;
            step_with(cfg, step, || q.now())
        }
        Source::QuantaRaw => {
            let q = ctx.quanta.as_ref()?;
            step_with(cfg, step, || q.raw())
        }
        Source::SyscallGetppid => step_with(cfg, step, clock::syscall_getppid),
        #[cfg(not(target_arch = "x86_64"))]
        _ => return None,
    };
    Some(s)
}

/// `precise_read_ns`: `syscall:realtime` paired against `syscall:realtime_coarse` (see
/// [`measure::paired_difference`]), or `None` if either cannot be measured here.
pub(crate) fn precise_read(ctx: &Context, cfg: &PairedConfig) -> Option<PairedDifference> {
    let (a, b) = (
        Source::Syscall(Clock::Realtime),
        Source::Syscall(Clock::RealtimeCoarse),
    );
    if unsupported_reason(a, ctx).is_some() || unsupported_reason(b, ctx).is_some() {
        return None;
    }
    let (ida, idb) = (Clock::Realtime.id(), Clock::RealtimeCoarse.id());
    // The core's share between pairs: a short chain and the lanes (`coreclock`), 2.5 µs of
    // chain beside 40 µs pairs.
    let n = super::coreclock::chain_iterations(2_500.0, 0.0);
    measure::paired_difference_sensed(
        cfg,
        || clock::syscall_clock_gettime(black_box(ida)),
        || clock::syscall_clock_gettime(black_box(idb)),
        &mut || super::coreclock::lanes_cycles(n?),
    )
}

/// Watches one source's values (native unit: ticks for counters, ns for everything else).
fn watch(src: Source, ctx: &Context, cfg: &WatchConfig) -> Option<resolution::Watch> {
    #[cfg(target_arch = "x86_64")]
    use crate::sys::tsc;
    // One millisecond in the native unit, for counting forward jumps.
    let ms_ticks = ctx.tsc_hz_hint.map_or(u64::MAX, |hz| (hz / 1e3) as u64);
    let ms = 1_000_000;
    let w = match src {
        #[cfg(target_arch = "x86_64")]
        Source::Rdtsc => resolution::watch(cfg, ms_ticks, || Some(tsc::rdtsc())),
        #[cfg(target_arch = "x86_64")]
        Source::LfenceRdtsc => resolution::watch(cfg, ms_ticks, || Some(tsc::lfence_rdtsc())),
        #[cfg(target_arch = "x86_64")]
        Source::Rdtscp => resolution::watch(cfg, ms_ticks, || Some(tsc::rdtscp().0)),
        Source::Vdso(c) => {
            let id = c.id();
            resolution::watch(cfg, ms, || clock::vdso_clock_gettime(id).ok())
        }
        Source::Syscall(c) => {
            let id = c.id();
            resolution::watch(cfg, ms, || clock::syscall_clock_gettime(id).ok())
        }
        Source::VdsoGettimeofday => resolution::watch(cfg, ms, || clock::vdso_gettimeofday().ok()),
        Source::SyscallGettimeofday => {
            resolution::watch(cfg, ms, || clock::syscall_gettimeofday().ok())
        }
        Source::VdsoTime => resolution::watch(cfg, ms, || clock::vdso_time().ok()),
        Source::StdInstant => {
            resolution::watch(cfg, ms, || Some(ctx.base.elapsed().as_nanos() as u64))
        }
        Source::StdSystemTime => resolution::watch(cfg, ms, || {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .ok()
                .map(|d| d.as_nanos() as u64)
        }),
        Source::QuantaNow => {
            let q = ctx.quanta.as_ref()?;
            let base = q.now();
            resolution::watch(cfg, ms, || {
                Some(q.now().duration_since(base).as_nanos() as u64)
            })
        }
        Source::QuantaRaw => {
            let q = ctx.quanta.as_ref()?;
            let base = q.raw();
            resolution::watch(cfg, ms, || Some(q.delta_as_nanos(base, q.raw())))
        }
        _ => return None,
    };
    Some(w)
}

/// What the interface claims as its resolution, in ns.
fn claimed_resolution_ns(src: Source) -> Option<f64> {
    match src {
        Source::Vdso(c) | Source::Syscall(c) => clock::clock_getres(c.id()).ok().map(|r| r as f64),
        Source::VdsoGettimeofday | Source::SyscallGettimeofday => Some(1e3),
        Source::VdsoTime => Some(1e9),
        Source::StdInstant | Source::StdSystemTime => clock::clock_getres(Clock::Monotonic.id())
            .ok()
            .map(|r| r as f64),
        _ => None,
    }
}

/// Warms one source up and returns its batch unit, or `None` if the machine lacks it.
pub(crate) fn warm_up(src: Source, ctx: &Context, sampler: &SamplerConfig) -> Option<u64> {
    if unsupported_reason(src, ctx).is_some() {
        return None;
    }
    match sample(src, ctx, sampler, Step::Warmup)? {
        Stepped::Unit(d) => Some(d),
        _ => None,
    }
}

/// Times one batch of `k` calls of one supported source, in nanoseconds.
pub(crate) fn batch(src: Source, ctx: &Context, sampler: &SamplerConfig, k: u64) -> Option<f64> {
    match sample(src, ctx, sampler, Step::Batch { k })? {
        Stepped::Elapsed(t) => Some(t),
        _ => None,
    }
}

/// Builds one source's result from its combined measurement, watching its values.
pub(crate) fn describe(
    src: Source,
    ctx: &Context,
    m: Option<&Measurement>,
    watch_cfg: &WatchConfig,
) -> SourceResult {
    let id = src.to_string();
    let kind = serde_json::to_value(src.kind())
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    if let Some(reason) = unsupported_reason(src, ctx) {
        return SourceResult::unsupported(id, kind, reason);
    }
    let Some(m) = m else {
        let reason = "the sampler could not fit a cost (fewer than two samples)".to_string();
        return SourceResult::unsupported(id, kind, reason);
    };
    let mut r = SourceResult::unsupported(id, kind, String::new());
    r.supported = true;
    r.reason = None;
    r.cost_ns = Some(m.cost_ns);
    r.round_points_ns = m.round_points.clone();
    r.intercept_ns = Some(m.intercept_ns);
    r.relative_ci_width = Some(m.cost_ns.relative_width());
    r.getres_ns = claimed_resolution_ns(src);
    r.samples = m.samples;
    r.contended_batches = m.contended_batches;
    r.contended_excluded = m.contended_excluded;
    r.batch_unit = m.batch_unit;
    r.iterations = m.iterations;
    r.involuntary_switches = m.involuntary_switches;
    r.native_unit_ticks = matches!(src, Source::Rdtsc | Source::LfenceRdtsc | Source::Rdtscp);
    if src.reads_time() {
        let before = crate::sys::cpu::context_switches().map(|s| s.1).ok();
        r.watch = watch(src, ctx, watch_cfg);
        let after = crate::sys::cpu::context_switches().map(|s| s.1).ok();
        r.watch_involuntary_switches = after.zip(before).map(|(a, b)| a.saturating_sub(b));
        if src == Source::VdsoTime && r.watch.as_ref().is_some_and(|w| w.changes < 2) {
            r.reason = Some("time() ticks once a second: its update period is not watched".into());
        }
    }
    r
}
