//! `report --baseline OLD`: this report's probe against an earlier one, as `compare` judges it
//! (noise, shift, one word per path), kept short: the shift, the paths that moved and the
//! sources that changed.

use serde::{Deserialize, Serialize};

use crate::compare::{self, Change, Input, Unit};
use crate::probe::Profile;

/// One source that changed since the baseline.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ChangedSource {
    pub id: String,
    /// The baseline's cost and this report's, in ns.
    pub before_ns: f64,
    pub after_ns: f64,
    /// `after / before`, net of any shift named: the interval the word comes from.
    pub ratio: crate::stats::Estimate,
    pub change: Change,
    /// The unit `ratio` and `change` are in: `cycles` for a counter read when the core clock
    /// moved since the baseline, else `ns` (as `compare` chooses).
    #[serde(default)]
    pub unit: Unit,
    /// The word is its path's (said once in `paths`).
    pub path_word: bool,
}

/// What changed since the baseline.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SinceBaseline {
    /// The baseline file, as given.
    pub path: String,
    /// Where the noise between runs came from (`compare`'s `Noise:` line).
    pub noise: String,
    /// The machine facts that differ (`field a vs b`); empty when none do.
    pub machine_differences: Vec<String>,
    /// Each shift named, each path's one word and each run set aside, as `compare` prints them.
    pub shifts: Vec<String>,
    pub paths: Vec<String>,
    pub disturbed: Vec<String>,
    /// The sources decided faster or slower; the others are not listed.
    pub changed: Vec<ChangedSource>,
    /// Sources compared.
    pub of: usize,
}

/// This report's `profile` against `baseline`, judged as `compare baseline report.json` would.
pub fn since(baseline: &Input, profile: &Profile) -> SinceBaseline {
    let now = Input {
        label: "this report".into(),
        path: "report.json".into(),
        profile: profile.clone(),
        verdicts: Vec::new(),
    };
    let cmp = compare::compare_with_noise(&[baseline.clone(), now], None, &[]);
    let mut changed = Vec::new();
    let mut of = 0;
    for r in &cmp.sources {
        let (Some(Some(b)), Some(Some(a))) = (r.cost_ns.first(), r.cost_ns.get(1)) else {
            continue;
        };
        of += 1;
        let change = r.change.first().copied().flatten();
        let Some(change) = change.filter(|c| *c != Change::NoChange) else {
            continue;
        };
        let path_word = r.path_word.first().copied().unwrap_or(false);
        let ratio = cmp
            .paths
            .iter()
            .find(|p| path_word && p.members.contains(&r.id))
            .map(|p| p.interval)
            .or(r.judged_interval.first().copied().flatten());
        let Some(ratio) = ratio else {
            continue;
        };
        changed.push(ChangedSource {
            id: r.id.clone(),
            before_ns: b.point,
            after_ns: a.point,
            ratio,
            change,
            unit: r.unit_at(0, cmp.unit),
            path_word,
        });
    }
    SinceBaseline {
        path: baseline.path.display().to_string(),
        noise: cmp.noise.detail.clone(),
        machine_differences: cmp
            .machine_differences
            .iter()
            .map(|d| {
                let v: Vec<&str> = d
                    .values
                    .iter()
                    .map(|v| v.as_deref().unwrap_or("?"))
                    .collect();
                format!("{} {}", d.field, v.join(" vs "))
            })
            .collect(),
        shifts: cmp.shifts.iter().map(|s| s.summary.clone()).collect(),
        paths: cmp.paths.iter().map(|p| p.summary.clone()).collect(),
        disturbed: cmp
            .disturbed
            .iter()
            .map(|d| format!("{} run {} moved {:+.1}%", d.label, d.run, d.percent))
            .collect(),
        changed,
        of,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorded(name: &str, text: &str) -> Input {
        Input::parse(text, std::path::Path::new(name)).unwrap()
    }

    #[test]
    fn a_clocksource_switch_since_the_baseline_lists_the_reads_it_moved() {
        let before = recorded(
            "tsc.json",
            include_str!("../../tests/data/compare/clocksource/tsc-plain-1.json"),
        );
        let after = recorded(
            "kvm-clock.json",
            include_str!("../../tests/data/compare/clocksource/kvm-clock-plain-1.json"),
        );
        let s = since(&before, &after.profile);
        let ids: Vec<&str> = s.changed.iter().map(|c| c.id.as_str()).collect();
        for id in ["vdso:realtime", "vdso:gettimeofday", "std:instant"] {
            assert!(ids.contains(&id), "{ids:?}");
        }
        for id in ["rdtsc", "rdtscp", "syscall:getppid"] {
            assert!(!ids.contains(&id), "{ids:?}");
        }
        assert!(s.changed.iter().all(|c| c.change == Change::Slower));
        assert_eq!(s.machine_differences, vec!["clocksource tsc vs kvm-clock"]);
        assert!(s.paths.iter().any(|p| p.contains("vdso:realtime")));
        // Against itself: nothing changed.
        let same = since(&before, &before.profile);
        assert!(same.changed.is_empty() && same.shifts.is_empty());
    }
}
