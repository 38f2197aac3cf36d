//! Verdict rules as pure functions over measured figures, so that each rule is tested on
//! recorded native, trapped, fallback and unsynchronised cases. `docs/verdicts.md` explains
//! every threshold and compares it with the anchors' heuristics.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

mod consistency;
mod fallback;
mod frequency;
mod kernel_log;
mod trap;
mod unsynchronized;
pub use consistency::*;
pub use fallback::*;
pub use frequency::*;
pub use kernel_log::*;
pub use trap::*;
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
