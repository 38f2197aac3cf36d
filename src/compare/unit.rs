//! The unit each source is judged in: nanoseconds, or core cycles where the source is bound to
//! the core's clock and that clock moved between the two profiles.
//!
//! A counter read (`rdtsc`, `rdtscp`, `lfence_rdtsc`, `rdpid`, and `quanta:raw`/`quanta:now`,
//! which are `rdtsc` and register arithmetic) is a few instructions on the core and nothing
//! else: no memory beyond its own cache, no kernel. Its cost is a fixed number of core cycles,
//! so its nanoseconds follow the core clock, which a host moves with its own load. When the
//! two profiles' core clocks (`core_clock.ghz`, the median over the batches) lie more than
//! [`super::CLOCK_AGREEMENT`] apart, such a source is judged on its cost in core cycles
//! (`cost_cycles`), and its ratio in ns is kept beside it. Every other source, and every source
//! while the clock stood still, is judged in ns: a vDSO clock read or a syscall touches memory
//! and the kernel, whose cost does not scale with the core clock alone. `compare --unit`
//! fixes one unit for every source instead.

use serde::{Deserialize, Serialize};

/// The unit a ratio is taken in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Nanoseconds, as measured (`cost_ns`).
    #[default]
    Ns,
    /// Core cycles (`cost_cycles`): each batch's nanoseconds times the core clock beside it.
    Cycles,
}

impl Unit {
    pub fn as_str(self) -> &'static str {
        match self {
            Unit::Ns => "ns",
            Unit::Cycles => "cycles",
        }
    }
}

/// Who picks the unit of each source's ratio.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnitChoice {
    /// compare, per source and input ([`judged_unit`]): cycles for a cycle-bound source when
    /// the core clock moved, ns otherwise.
    Auto,
    /// One unit for every source (`--unit`; and every file written before compare chose).
    #[default]
    Fixed,
}

/// The sources whose cost is a fixed number of core cycles (module documentation).
pub const CYCLE_BOUND: &[&str] = &[
    "rdtsc",
    "lfence_rdtsc",
    "rdtscp",
    "rdpid",
    "quanta:raw",
    "quanta:now",
];

/// Whether source `id` is cycle-bound.
pub fn cycle_bound(id: &str) -> bool {
    CYCLE_BOUND.contains(&id)
}

/// Whether two core clocks (GHz) lie more than [`super::CLOCK_AGREEMENT`] apart.
pub fn clock_moved(first_ghz: Option<f64>, other_ghz: Option<f64>) -> bool {
    match (first_ghz, other_ghz) {
        (Some(a), Some(b)) if a > 0.0 && b > 0.0 => (b - a).abs() > super::CLOCK_AGREEMENT * a,
        _ => false,
    }
}

/// The unit source `id` is judged in against one later input: `fixed` when `--unit` gave
/// one; else cycles when the source is cycle-bound, both sides carry its cost in cycles
/// (`has_cycles`) and the core clock moved between them; else ns.
pub fn judged_unit(
    fixed: Option<Unit>,
    id: &str,
    first_ghz: Option<f64>,
    other_ghz: Option<f64>,
    has_cycles: bool,
) -> Unit {
    match fixed {
        Some(u) => u,
        None if has_cycles && cycle_bound(id) && clock_moved(first_ghz, other_ghz) => Unit::Cycles,
        None => Unit::Ns,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_go_to_cycles_only_when_the_clock_moved() {
        let moved = (Some(3.25), Some(3.60));
        let still = (Some(3.25), Some(3.26));
        assert_eq!(
            judged_unit(None, "rdtsc", moved.0, moved.1, true),
            Unit::Cycles
        );
        assert_eq!(judged_unit(None, "rdtsc", still.0, still.1, true), Unit::Ns);
        // Not cycle-bound: a vDSO read stays in ns whatever the clock did.
        assert_eq!(
            judged_unit(None, "vdso:realtime", moved.0, moved.1, true),
            Unit::Ns
        );
        // No cycles on a side, or no clock: ns.
        assert_eq!(
            judged_unit(None, "rdtsc", moved.0, moved.1, false),
            Unit::Ns
        );
        assert_eq!(judged_unit(None, "rdtsc", None, moved.1, true), Unit::Ns);
        assert_eq!(
            judged_unit(None, "rdtsc", Some(f64::NAN), Some(3.0), true),
            Unit::Ns
        );
        // `--unit` decides alone.
        assert_eq!(
            judged_unit(Some(Unit::Ns), "rdtsc", moved.0, moved.1, true),
            Unit::Ns
        );
        assert_eq!(
            judged_unit(
                Some(Unit::Cycles),
                "syscall:getppid",
                still.0,
                still.1,
                true
            ),
            Unit::Cycles
        );
    }

    #[test]
    fn two_percent_is_the_edge() {
        assert!(!clock_moved(Some(3.0), Some(3.05)));
        assert!(clock_moved(Some(3.0), Some(3.07)));
        assert!(clock_moved(Some(3.0), Some(2.9)));
    }
}
