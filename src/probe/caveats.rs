//! The warnings a probe run raises about its own figures: the context switches it could not
//! count, a source whose bootstrap gave no interval, a derived cost at or below 0, and the
//! sources whose costs kept batches that shared their core. Each fallback is a warning in the
//! profile, never a silent value.

use super::SourceResult;
use crate::measure;
use crate::stats::Estimate;
use crate::warnings::Warning;

/// The sources whose costs kept batches that shared their core (too few ran alone), as one
/// warning; none where every source left them out or had none.
pub(super) fn core_shared(results: &[SourceResult]) -> Option<Warning> {
    let ids: Vec<String> = results
        .iter()
        .filter(|r| r.contended_batches.is_some_and(|c| c > 0) && !r.contended_excluded)
        .map(|r| r.id.clone())
        .collect();
    (!ids.is_empty()).then(|| Warning::CoreShared {
        ids,
        sensed: results
            .iter()
            .filter(|r| r.contended_batches.is_some())
            .count(),
        contended: results.iter().filter_map(|r| r.contended_batches).sum(),
        batches: results
            .iter()
            .filter(|r| r.contended_batches.is_some())
            .map(|r| r.samples)
            .sum(),
    })
}

/// Involuntary switches between two counter reads: unknown (`None`, with a warning) when
/// either read failed, never a made-up 0.
pub(super) fn switches_between(
    before: std::io::Result<u64>,
    after: std::io::Result<u64>,
) -> (Option<u64>, Option<Warning>) {
    match (before, after) {
        (Ok(a), Ok(b)) => (Some(b.saturating_sub(a)), None),
        (Err(e), _) | (_, Err(e)) => (
            None,
            Some(Warning::SwitchesUnknown {
                reason: e.to_string(),
            }),
        ),
    }
}

/// The warning for a source whose bootstrap gave no interval (its figure is a bare point).
pub(super) fn no_interval(id: &str, m: Option<&measure::Measurement>) -> Option<Warning> {
    m.filter(|m| m.interval_failed)
        .map(|_| Warning::NoInterval { id: id.into() })
}

/// The warning for a derived cost at or below 0 (or NaN): shown as measured, never clamped.
pub(super) fn not_positive(name: &str, e: Option<Estimate>) -> Option<Warning> {
    e.filter(|e| e.point <= 0.0 || e.point.is_nan())
        .map(|e| Warning::NotPositiveDerived {
            name: name.into(),
            point_ns: e.point,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bare(point: f64) -> measure::Measurement {
        measure::Measurement {
            cost_ns: Estimate::exact(point),
            intercept_ns: 0.0,
            batch_unit: 1,
            samples: 3,
            iterations: 6,
            involuntary_switches: Some(0),
            interval_failed: true,
            cost_cycles: None,
            contended_batches: None,
            contended_excluded: false,
            round_points: vec![point],
            replicates: Vec::new(),
        }
    }

    /// Each fallback of a failed measurement is a warning in the profile, never a silent value.
    /// One warning names the sources that kept batches which shared the core; sources that
    /// left them out, had none, or were not sensed are not named, and nothing is said when no
    /// source kept any.
    #[test]
    fn the_core_shared_warning_names_only_sources_that_kept_them() {
        let source = |id: &str, contended: Option<usize>, excluded: bool| {
            let mut r = SourceResult::unsupported(id.into(), "syscall".into(), String::new());
            r.samples = 100;
            r.contended_batches = contended;
            r.contended_excluded = excluded;
            r
        };
        let all = [
            source("a", Some(90), false),
            source("b", Some(40), true),
            source("c", Some(0), false),
            source("d", None, false),
        ];
        let w = core_shared(&all).expect("a core_shared warning");
        assert!(w.to_string().contains(", and a kept"), "{w}");
        let Warning::CoreShared {
            ids,
            sensed,
            contended,
            batches,
        } = w
        else {
            panic!("not core_shared");
        };
        assert_eq!(
            (ids, sensed, contended, batches),
            (vec!["a".to_string()], 3, 130, 300)
        );
        assert!(core_shared(&all[1..]).is_none());
        // Every sensed source kept them: the warning says so instead of listing them all.
        let both = [source("a", Some(90), false), source("e", Some(5), false)];
        let w = core_shared(&both)
            .expect("a core_shared warning")
            .to_string();
        assert!(w.contains("every one of the 2 sources"), "{w}");
    }

    #[test]
    fn failed_measurements_are_warnings() {
        let gone = || Err(std::io::Error::other("no /proc/thread-self/status"));
        let (n, w) = switches_between(gone(), Ok(9));
        assert_eq!(n, None, "unknown, not 0");
        assert_eq!(w.unwrap().code(), "switches_unknown");
        let (n, w) = switches_between(Ok(4), gone());
        assert_eq!((n, w.map(|w| w.code())), (None, Some("switches_unknown")));
        assert_eq!(switches_between(Ok(4), Ok(9)), (Some(5), None));

        let m = bare(12.0);
        let w = no_interval("rdtsc", Some(&m)).unwrap();
        assert_eq!(w, Warning::NoInterval { id: "rdtsc".into() });
        assert!(w.to_string().contains("flagged noisy"), "{w}");
        assert!(no_interval(
            "rdtsc",
            Some(&measure::Measurement {
                interval_failed: false,
                ..m
            })
        )
        .is_none());

        for p in [-3.5, 0.0, f64::NAN] {
            let w = not_positive("precise_read_ns", Some(Estimate::exact(p))).unwrap();
            assert_eq!(w.code(), "not_positive_derived");
            assert!(w.to_string().contains("--set precise_read_ns"), "{w}");
        }
        assert!(not_positive("precise_read_ns", Some(Estimate::exact(18.5))).is_none());
    }
}
