//! The prior: how far two single runs of an unchanged machine may differ, per source, when no
//! run was repeated.
//!
//! A profile's intervals are within-run intervals, far narrower than the spread between runs.
//! Two plain probes carry nothing of that spread, so compare takes a documented prior for it:
//! the 95% half-width of the ratio of two runs, [`PRIOR_PCT`] for a source in general,
//! [`CPUTIME_PRIOR_PCT`] for the cputime clocks (their cost follows the task's CPU-time
//! accounting, which the scheduler moves between runs) and [`CPUID_PRIOR_PCT`] for `cpuid` (a
//! VM exit under a hypervisor, priced by the host). On a quiet 2-vCPU KVM guest, 99 of 100
//! pairs of consecutive runs of the other sources differ by less than 3.2%
//! (docs/methodology.md, "The prior"). Measured noise takes its place from
//! [`super::MEASURED_RUNS`] runs on, and is floored at it below that.

/// The prior half-width (percent) of the ratio of two runs of a source.
pub const PRIOR_PCT: f64 = 3.0;

/// The prior for `vdso:*_cputime` and `syscall:*_cputime`.
pub const CPUTIME_PRIOR_PCT: f64 = 10.0;

/// The prior for `cpuid`.
pub const CPUID_PRIOR_PCT: f64 = 5.0;

/// The prior half-width (percent) of the ratio of two runs of source `id`.
pub fn prior_pct(id: &str) -> f64 {
    if id.ends_with("_cputime") {
        CPUTIME_PRIOR_PCT
    } else if id == "cpuid" {
        CPUID_PRIOR_PCT
    } else {
        PRIOR_PCT
    }
}

/// The prior in words, for the `Noise:` line.
pub fn words() -> String {
    format!(
        "a prior of {PRIOR_PCT}% between two runs per source ({CPUTIME_PRIOR_PCT}% for the \
         cputime clocks, {CPUID_PRIOR_PCT}% for cpuid), added to the within-run intervals"
    )
}

/// The noise a source is judged with (percent): the measured noise from `runs` runs where it
/// is known, floored at the prior under [`super::MEASURED_RUNS`] runs; the prior where none
/// is measured.
pub fn effective(measured: Option<(f64, usize)>, prior: f64) -> f64 {
    match measured {
        Some((m, n)) if n >= super::MEASURED_RUNS => m,
        Some((m, _)) => m.max(prior),
        None => prior,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prior_is_a_floor_until_enough_runs_are_measured() {
        assert_eq!(prior_pct("vdso:realtime"), PRIOR_PCT);
        assert_eq!(prior_pct("syscall:process_cputime"), CPUTIME_PRIOR_PCT);
        assert_eq!(prior_pct("cpuid"), CPUID_PRIOR_PCT);
        assert_eq!(effective(None, 3.0), 3.0);
        assert_eq!(effective(Some((1.0, 3)), 3.0), 3.0);
        assert_eq!(effective(Some((8.0, 3)), 3.0), 8.0);
        assert_eq!(effective(Some((1.0, 5)), 3.0), 1.0);
        assert!(effective(Some((f64::NAN, 2)), 3.0).is_finite());
    }
}
