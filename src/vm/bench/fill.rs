//! Fills a report's runs, comparisons and refusals from its boots: the clocksource rows
//! ([`super::rows`]) and the kernel rows (`ab.rs`), each from the same observations; and the
//! live-knob rows ([`super::knob`]), whose update price the kernel rows use.

use std::collections::BTreeSet;

use super::compare;
use super::rows::*;
use super::BenchReport;

/// Fills `runs`, `comparisons` and `refused` from the kernels' boots.
pub(crate) fn fill(r: &mut BenchReport) {
    let mut n = 0usize;
    let mut next_seed = || {
        n += 1;
        row_seed(r.seed, n)
    };
    let (mut runs, mut comparisons, mut refused) = (Vec::new(), Vec::new(), BTreeSet::new());
    let mut disturbed = Vec::new();
    for k in &r.kernels {
        for &cs in &r.clocksources {
            if let Some((used, why)) = refusal(k, cs) {
                refused.insert(format!(
                    "{}: clocksource {cs}: {why} (used {used})",
                    release(k)
                ));
            }
            for &fs in &r.filesystems {
                for &w in &r.workloads {
                    let obs = observations(k, cs, fs, w);
                    disturbed.extend(super::disturbed::find(k, &release(k), cs, fs, w, &obs));
                    let ns = by_boot(&obs, |o| Some(o.ns_per_op));
                    let boots: BTreeSet<u32> = obs.iter().map(|o| o.boot).collect();
                    let refused = if obs.is_empty() { refusal(k, cs) } else { None };
                    runs.push(BenchRun {
                        kernel_release: release(k),
                        kernel_package: k.kernel_package.clone(),
                        clocksource_requested: cs,
                        clocksource_used: refused
                            .as_ref()
                            .map_or_else(|| cs.into(), |(used, _)| used.clone()),
                        fs,
                        workload: w,
                        ns_per_op: compare::median_interval(&ns, next_seed()),
                        interval_method: (!obs.is_empty())
                            .then(|| compare::IntervalMethod::of(&ns)),
                        samples: obs.len(),
                        boots: boots.len(),
                        costs: costs(&obs),
                        refused: refused.map(|(_, why)| why),
                    });
                }
            }
        }
    }
    for k in &r.kernels {
        let Some((from, rest)) = r.clocksources.split_first() else {
            break;
        };
        for &to in rest {
            for &fs in &r.filesystems {
                for &w in &r.workloads {
                    if let Some(c) = clocksource_row(k, *from, to, fs, w, &mut next_seed) {
                        comparisons.push(c);
                    }
                }
            }
        }
    }
    let knob = super::knob::rows(r);
    if let Some((base, others)) = r.kernels.split_first() {
        for k in others {
            for &fs in &r.filesystems {
                for &w in &r.workloads {
                    for &cs in &r.clocksources {
                        let row = super::ab::kernel_row(base, k, cs, fs, w, &knob, &mut next_seed);
                        if let Some(c) = row {
                            comparisons.push(c);
                        }
                    }
                }
            }
        }
    }
    for c in &mut comparisons {
        let get = |rel: &str| super::counted::lookup(&r.counted, rel, c.fs, c.workload);
        match (&c.kernel_release, &c.kernels) {
            (Some(k), _) => c.counted_from = get(k),
            (None, Some(ks)) if ks.len() == 2 => {
                c.counted_from = get(&ks[0]);
                c.counted_to = get(&ks[1]);
            }
            _ => {}
        }
    }
    r.runs = runs;
    r.comparisons = comparisons;
    r.refused = refused.into_iter().collect();
    r.disturbed = disturbed;
    r.knob = knob;
    super::lkp::apply(r);
}
