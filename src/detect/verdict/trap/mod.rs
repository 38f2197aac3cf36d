//! `rdtsc_trapped`, `rdtscp_trapped`: the distribution of one read's cost against the native
//! chain (core cycles) and the trap floor (`cpuid` where it exits, the null syscall always),
//! all from one run ([`crate::detect::trap`]). `docs/verdicts.md` gives the rule's reasoning
//! and the figures that set its thresholds.

use serde_json::{json, Value};

use super::Verdict;
use crate::detect::trap::{Distribution, Percentiles, TrapSamples};
use crate::stats::Estimate;

/// No native `rdtsc`/`rdtscp` costs more than this many core cycles at its median: Agner Fog's
/// instruction tables give 18–42 cycles for RDTSC and 30–70 for RDTSCP across Intel since
/// Nehalem and AMD since K10; the margin covers a batch's share of the timer noise.
pub const NATIVE_MAX_CYCLES: f64 = 250.0;

/// A trap is a round trip into the hypervisor or the kernel, so it costs at least the
/// cheapest such round trip measured in the same run (the floor); half of it leaves room for
/// an exit path faster than `cpuid`'s or a kernel entry faster than `getppid`'s.
pub const TRAP_FLOOR_FRACTION: f64 = 0.5;

/// `cpuid` counts as a VM exit (the hypervisor's floor) only in a guest of a hardware
/// hypervisor and when even its 10th percentile costs this many core cycles: bare-metal
/// `cpuid` leaf 0 takes ~100–250 (Agner Fog), a VM exit and entry ~1000 or more.
pub const EXIT_MIN_CYCLES: f64 = 500.0;

/// With no floor at all (no null syscall measured, `cpuid` no exit), a read traps from this
/// many core cycles at its 10th percentile: the cheapest VM exit on current hardware.
pub const NO_FLOOR_CYCLES: f64 = 1000.0;

/// What a trap verdict needs besides the run's [`TrapSamples`].
#[derive(Debug, Clone, Copy, Default)]
pub struct TrapInputs {
    /// The read's own distribution (`None`: not measured here).
    pub read: Option<Distribution>,
    /// The probe's regression estimate of the same read, shown beside the distribution.
    pub probe_cost_ns: Option<Estimate>,
}

/// The trap floor: the cheaper of a `cpuid` exit and a null syscall, each at its 10th
/// percentile, and where it came from.
fn floor(s: &TrapSamples, ns_per_cycle: f64) -> (Option<f64>, &'static str, bool) {
    let exits = cpuid_exits(s, ns_per_cycle);
    let exit = s.cpuid.filter(|_| exits).map(|d| d.cost_ns.p10);
    let kernel = s.null_syscall.map(|d| d.cost_ns.p10);
    match (exit, kernel) {
        (Some(e), Some(k)) if e < k => (Some(e), "cpuid", exits),
        (_, Some(k)) => (Some(k), "null_syscall", exits),
        (Some(e), None) => (Some(e), "cpuid", exits),
        (None, None) => (None, "none", exits),
    }
}

/// Whether `cpuid` is a VM exit here: a hypervisor that is not an emulator (QEMU TCG runs
/// `cpuid` as a helper call) and a 10th percentile over [`EXIT_MIN_CYCLES`].
fn cpuid_exits(s: &TrapSamples, ns_per_cycle: f64) -> bool {
    s.hypervisor
        && s.hypervisor_vendor.as_deref() != Some("QEMU TCG")
        && s.cpuid
            .is_some_and(|d| d.cost_ns.p10 >= EXIT_MIN_CYCLES * ns_per_cycle)
}

fn cycles(p: Percentiles, ns_per_cycle: f64) -> Percentiles {
    p.scale(1.0 / ns_per_cycle)
}

/// `rdtsc_trapped` / `rdtscp_trapped`.
///
/// With `c` the core cycle from the native chain, `line` = [`TRAP_FLOOR_FRACTION`] × the trap
/// floor (or [`NO_FLOOR_CYCLES`] × `c` without one) and `ceiling` = [`NATIVE_MAX_CYCLES`] × `c`:
/// no when the read's p50 ≤ `ceiling` (a native read); yes when its p10 ≥ `line` and
/// `ceiling` (even the fast reads cost a trap); no when its p50 < `line` (slower than a native
/// read, cheaper than any trap: an emulated CPU); else inconclusive.
pub fn trapped(instr: &str, s: &TrapSamples, t: &TrapInputs) -> Verdict {
    let skipped = |why: String| {
        Verdict::decided(
            false,
            json!({ "skipped": why }),
            format!("{instr}: not measured ({why})"),
        )
    };
    if let Some(why) = &s.skipped {
        return skipped(why.clone());
    }
    let Some(read) = t.read else {
        return skipped("unsupported on this CPU".into());
    };
    let Some(native) = s.native.filter(|n| n.cost_ns.p50 > 0.0) else {
        return Verdict::inconclusive(
            "the native chain has no positive cost, so a read's cycles are unknown".into(),
            json!({ "read": read }),
        );
    };
    let c = native.cost_ns.p50 / f64::from(s.chain_adds.max(1));
    let (floor_ns, floor_from, exits) = floor(s, c);
    let line = floor_ns.map_or(NO_FLOOR_CYCLES * c, |f| TRAP_FLOOR_FRACTION * f);
    let ceiling = NATIVE_MAX_CYCLES * c;
    let r = read.cost_ns;
    let evidence = evidence(s, &read, t.probe_cost_ns, c, (floor_ns, floor_from, exits));
    let (p10, p50) = (r.p10, r.p50);
    let fmt_c = |ns: f64| format!("{:.0} cycles", ns / c);
    if p50 <= ceiling {
        return Verdict::decided(
            false,
            evidence,
            format!(
                "{instr} costs {p50:.1} ns at the median ({}; p99 {:.0} ns): a native read (a \
                 trap would cost over {NATIVE_MAX_CYCLES} cycles and at least {line:.0} ns)",
                fmt_c(p50),
                r.p99
            ),
        );
    }
    if p10 >= line.max(ceiling) {
        return Verdict::decided(
            true,
            evidence,
            format!(
                "{instr} costs {p10:.0} ns even at p10 ({}), {:.1}× the trap floor ({floor_from} \
                 {:.0} ns): every read traps (a VM exit or a fault per read)",
                fmt_c(p10),
                p10 / floor_ns.unwrap_or(line),
                floor_ns.unwrap_or(line)
            ),
        );
    }
    if p50 < line {
        return Verdict::decided(
            false,
            evidence,
            format!(
                "{instr} costs {p50:.0} ns at the median ({}): slower than a native read but \
                 under half the cheapest trap ({floor_from} {:.0} ns), so not an exit (an \
                 emulated CPU reads its counter like this)",
                fmt_c(p50),
                floor_ns.unwrap_or(line)
            ),
        );
    }
    Verdict::inconclusive(
        format!(
            "{instr}'s median {p50:.0} ns ({}) is at a trap's cost, but its p10 {p10:.0} ns is \
             under {:.0} ns: some reads are native-fast, or the run was too disturbed to tell",
            fmt_c(p50),
            line.max(ceiling)
        ),
        evidence,
    )
}

fn evidence(
    s: &TrapSamples,
    read: &Distribution,
    probe_cost_ns: Option<Estimate>,
    c: f64,
    (floor_ns, floor_from, exits): (Option<f64>, &str, bool),
) -> Value {
    json!({
        "read": read,
        "read_cycles": cycles(read.cost_ns, c),
        "native": s.native,
        "chain_adds": s.chain_adds,
        "ns_per_cycle": c,
        "cpuid": s.cpuid,
        "cpuid_cycles": s.cpuid.map(|d| cycles(d.cost_ns, c)),
        "cpuid_exits": exits,
        "null_syscall": s.null_syscall,
        "floor_ns": floor_ns,
        "floor_from": floor_from,
        "ratio_p10_to_floor": floor_ns.filter(|&f| f > 0.0).map(|f| read.cost_ns.p10 / f),
        "ratio_p50_to_cpuid": s.cpuid.map(|d| d.cost_ns.p50).filter(|&v| v > 0.0).map(|v| read.cost_ns.p50 / v),
        "probe_cost_ns": probe_cost_ns,
        "timer": s.timer,
        "timer_overhead_ns": s.timer_overhead_ns,
        "hypervisor": s.hypervisor,
        "hypervisor_vendor": s.hypervisor_vendor,
        "rule": format!(
            "no when p50 <= {NATIVE_MAX_CYCLES} core cycles (native chain); yes when p10 >= \
             {TRAP_FLOOR_FRACTION} x floor and >= {NATIVE_MAX_CYCLES} cycles, floor = min(cpuid \
             p10 where it exits, null syscall p10) ({NO_FLOOR_CYCLES} cycles without either); no \
             when p50 < {TRAP_FLOOR_FRACTION} x floor; else inconclusive"
        ),
        "native_max_cycles": NATIVE_MAX_CYCLES,
        "trap_floor_fraction": TRAP_FLOOR_FRACTION,
        "exit_min_cycles": EXIT_MIN_CYCLES,
        "no_floor_cycles": NO_FLOOR_CYCLES,
    })
}

#[cfg(test)]
mod tests;
