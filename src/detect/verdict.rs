//! Verdict rules as pure functions over measured figures, so that each rule is tested on
//! recorded native, trapped, fallback and unsynchronised cases. `docs/verdicts.md` explains
//! every threshold and compares it with the anchors' heuristics.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::stats::Estimate;

mod fallback;
mod frequency;
mod unsynchronized;
pub use fallback::*;
pub use frequency::*;
pub use unsynchronized::*;

/// One verdict: whether it holds, the figures and rule that decided it, and a sentence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// `true` only when the state is [`VerdictState::Yes`].
    pub holds: bool,
    pub evidence: Value,
    pub summary: String,
    /// Yes, no, or inconclusive (absent in files written before it existed: read `holds`).
    #[serde(default)]
    pub state: VerdictState,
    /// Why the evidence was too thin to answer, when the state is inconclusive.
    #[serde(default)]
    pub inconclusive_reason: Option<String>,
}

/// The three answers a verdict gives.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VerdictState {
    Yes,
    #[default]
    No,
    /// The measurement cannot tell: too few handoffs, forward jumps only, an interval across
    /// the threshold, a thread that could not be pinned.
    Inconclusive,
}

impl VerdictState {
    /// `YES`, `no`, `inconclusive` as the tables print them.
    pub fn label(self) -> &'static str {
        match self {
            VerdictState::Yes => "YES",
            VerdictState::No => "no",
            VerdictState::Inconclusive => "inconclusive",
        }
    }
}

impl Verdict {
    /// A yes/no verdict.
    pub fn decided(holds: bool, evidence: Value, summary: String) -> Verdict {
        Verdict {
            holds,
            evidence,
            summary,
            state: if holds {
                VerdictState::Yes
            } else {
                VerdictState::No
            },
            inconclusive_reason: None,
        }
    }

    /// A verdict the evidence cannot decide; `holds` is false, the summary starts with
    /// "inconclusive:".
    pub fn inconclusive(reason: String, evidence: Value) -> Verdict {
        Verdict {
            holds: false,
            evidence,
            summary: format!("inconclusive: {reason}"),
            state: VerdictState::Inconclusive,
            inconclusive_reason: Some(reason),
        }
    }
}

/// No native `rdtsc`/`rdtscp` costs more than this many TSC ticks back to back: Agner Fog's
/// instruction tables give 18–42 cycles for RDTSC and 30–70 for RDTSCP across Intel since
/// Nehalem and AMD since K10. The margin covers TSC scaling (ticks ≠ core cycles).
pub const NATIVE_MAX_TICKS: f64 = 250.0;

/// A trapped read takes a kernel or hypervisor round trip, which costs more than the null
/// syscall measured in the same run (a VM exit plus entry is ≥ 1 µs on most hardware; a
/// SIGSEGV round trip several µs). Half a null syscall leaves room for very fast exits.
pub const SYSCALL_FRACTION: f64 = 0.5;

/// The figures a trap verdict needs, all from one run.
#[derive(Debug, Clone, Copy, Default)]
pub struct TrapInputs {
    pub cost_ns: Option<Estimate>,
    pub cost_ticks: Option<f64>,
    /// `cpuid` leaf 0: a VM exit under hardware virtualisation.
    pub cpuid_ns: Option<Estimate>,
    /// `syscall:getppid`.
    pub null_syscall_ns: Option<Estimate>,
}

fn point(e: Option<Estimate>) -> Option<f64> {
    e.map(|e| e.point)
}

/// `rdtsc_trapped` / `rdtscp_trapped`: the read costs more ticks than any native read and more
/// than half a kernel round trip.
pub fn trapped(instr: &str, t: &TrapInputs) -> Verdict {
    let Some(cost) = point(t.cost_ns) else {
        return Verdict::decided(
            false,
            json!({ "skipped": format!("{instr} was not measured (unsupported here)") }),
            format!("{instr}: not measured on this CPU"),
        );
    };
    let syscall = point(t.null_syscall_ns);
    let over_ticks = t.cost_ticks.map(|k| k > NATIVE_MAX_TICKS);
    let over_syscall = syscall.map(|s| cost > SYSCALL_FRACTION * s);
    let holds = match (over_ticks, over_syscall) {
        (Some(a), Some(b)) => a && b,
        (Some(a), None) => a,
        (None, Some(b)) => b,
        (None, None) => false,
    };
    let ratio = |r: Option<f64>| r.filter(|&d| d > 0.0).map(|d| cost / d);
    let evidence = json!({
        "cost_ns": t.cost_ns,
        "cost_ticks": t.cost_ticks,
        "cpuid_ns": t.cpuid_ns,
        "null_syscall_ns": t.null_syscall_ns,
        "ratio_to_cpuid": ratio(point(t.cpuid_ns)),
        "ratio_to_null_syscall": ratio(syscall),
        "rule": format!(
            "holds when cost_ticks > {NATIVE_MAX_TICKS} and cost_ns > {SYSCALL_FRACTION} × null_syscall_ns"
        ),
        "native_max_ticks": NATIVE_MAX_TICKS,
        "syscall_fraction": SYSCALL_FRACTION,
    });
    let ticks = t
        .cost_ticks
        .map_or(String::new(), |k| format!(" ({k:.0} ticks)"));
    let summary = if holds {
        format!(
            "{instr} costs {cost:.0} ns{ticks}, {:.1}× a null syscall: every read traps (a VM exit \
             or a fault per read)",
            ratio(syscall).unwrap_or(f64::NAN)
        )
    } else {
        format!(
            "{instr} costs {cost:.1} ns{ticks}: a native read (a trap would cost more than {} ticks \
             and half a null syscall, {})",
            NATIVE_MAX_TICKS,
            syscall.map_or("unmeasured".into(), |s| format!("{s:.0} ns"))
        )
    };
    // Noise: the interval of the read's cost lies on both sides of half a null syscall.
    // Only when the tick count does not already say native.
    if let (Some(c), Some(s), true) = (t.cost_ns, syscall, over_ticks != Some(false)) {
        let line = SYSCALL_FRACTION * s;
        if c.lower <= line && c.upper > line {
            return Verdict::inconclusive(
                format!(
                    "{instr}'s cost interval [{:.0}, {:.0}] ns straddles half a null syscall \
                     ({line:.0} ns): too noisy to tell a trap from a slow native read",
                    c.lower, c.upper
                ),
                evidence,
            );
        }
    }
    Verdict::decided(holds, evidence, summary)
}

/// One clock's watch, as `clock_warps` needs it.
#[derive(Debug, Clone, Default)]
pub struct ClockWatch {
    pub id: String,
    pub backwards: u64,
    pub max_backwards_ns: Option<f64>,
    /// Forward steps over 1 ms between successive reads not explained by an involuntary
    /// context switch of the reading thread (coarse clocks excluded by the caller).
    pub forward_jumps: u64,
}

/// `clock_warps`: backwards steps, or forward jumps over 1 ms, seen on any clock.
pub fn clock_warps(watches: &[ClockWatch]) -> Verdict {
    let bad: Vec<&ClockWatch> = watches
        .iter()
        .filter(|w| w.backwards > 0 || w.forward_jumps > 0)
        .collect();
    let evidence = json!({
        "clocks_watched": watches.len(),
        "warps": bad.iter().map(|w| json!({
            "id": w.id,
            "backwards": w.backwards,
            "max_backwards_ns": w.max_backwards_ns,
            "forward_jumps_over_1ms": w.forward_jumps,
        })).collect::<Vec<_>>(),
        "rule": "holds when any clock stepped backwards between successive reads on one CPU, or \
                 jumped forward by more than 1 ms with no context switch of the reading thread to \
                 explain it (a vCPU preempted by the host still shows up this way)",
    });
    let summary = if bad.is_empty() {
        format!(
            "{} clocks read back to back: no backwards steps, no jumps over 1 ms",
            watches.len()
        )
    } else {
        let names: Vec<String> = bad
            .iter()
            .map(|w| format!("{} ({} back, {} jumps)", w.id, w.backwards, w.forward_jumps))
            .collect();
        let forward_only = bad.iter().all(|w| w.backwards == 0);
        format!(
            "warps on {}{}",
            names.join(", "),
            if forward_only {
                " (forward jumps only: a vCPU the host preempted for over 1 ms looks the same)"
            } else {
                ""
            }
        )
    };
    if !bad.is_empty() && bad.iter().all(|w| w.backwards == 0) {
        return Verdict::inconclusive(
            format!(
                "{}: forward jumps over 1 ms only, never a backwards step; a vCPU the host \
                 preempted looks the same",
                bad.iter()
                    .map(|w| format!("{} ({} jumps)", w.id, w.forward_jumps))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            evidence,
        );
    }
    Verdict::decided(!bad.is_empty(), evidence, summary)
}

#[cfg(test)]
mod tests;
