//! Turns the per-interval rates the runner sampled into a [`RunResult`] (pure; unit-tested).

use super::plan::RunPlan;
use super::result::{RunResult, Summary, TaskResult};

/// Builds the result from the sampled rates (pure; unit-tested).
pub fn assemble(
    plan: &RunPlan,
    per: usize,
    totals: Vec<f64>,
    per_task_rates: Vec<Vec<f64>>,
    stopped: bool,
) -> RunResult {
    let samples = totals.len();
    let column = |f: fn(f64, f64) -> f64, init: f64| -> Vec<f64> {
        (0..samples)
            .map(|s| per_task_rates.iter().map(|r| r[s]).fold(init, f))
            .collect()
    };
    let per_task_min = column(f64::min, f64::INFINITY);
    let per_task_max = column(f64::max, f64::NEG_INFINITY);
    let ops = Summary::of(&totals);
    let ns = ops
        .filter(|o| o.median > 0.0)
        .map(|o| plan.tasks as f64 * 1e9 / o.median);
    let per_task = (0..plan.tasks)
        .map(|t| TaskResult {
            task: t,
            cpu: plan.cpu(t, 0, per),
            peer_cpu: if per > 1 { plan.cpu(t, 1, per) } else { None },
            ops_per_sec: Summary::of(per_task_rates.get(t).map_or(&[][..], |v| v)),
            iterations: 0,
            mtime_pairs: None,
            equal_successive_mtimes: None,
            voluntary_switches: None,
            involuntary_switches: None,
        })
        .collect();
    RunResult {
        tasks: plan.tasks,
        mode: plan.mode,
        placement: plan.placement,
        stopped: stopped || samples < plan.samples,
        ops_per_sec: ops,
        samples: totals,
        per_task_min,
        per_task_max,
        ns_per_iteration: ns,
        per_task,
        mtimes: None,
        sched_yield: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assemble_gives_will_it_scale_min_max_and_totals() {
        let p = RunPlan::for_test(2, vec![0, 1], None);
        let r = assemble(
            &p,
            1,
            vec![30.0, 50.0, 40.0],
            vec![vec![10.0, 20.0, 15.0], vec![20.0, 30.0, 25.0]],
            false,
        );
        assert_eq!(r.per_task_min, vec![10.0, 20.0, 15.0]);
        assert_eq!(r.per_task_max, vec![20.0, 30.0, 25.0]);
        assert_eq!(
            r.ops_per_sec,
            Some(Summary {
                median: 40.0,
                min: 30.0,
                max: 50.0
            })
        );
        assert_eq!(r.per_task[1].ops_per_sec.unwrap().max, 30.0);
        assert!((r.ns_per_iteration.unwrap() - 2e9 / 40.0).abs() < 1e-6);
        assert!(!r.stopped);
    }

    #[test]
    fn missing_samples_make_a_partial_run() {
        let p = RunPlan::for_test(1, vec![], None);
        let r = assemble(&p, 1, vec![5.0], vec![vec![5.0]], false);
        assert!(r.stopped);
        let empty = assemble(&p, 1, vec![], vec![vec![]], true);
        // No sample: no rate (JSON null), not 0 ops/s.
        assert_eq!(empty.ops_per_sec, None);
        assert_eq!(empty.ns_per_iteration, None);
        assert_eq!(empty.per_task[0].ops_per_sec, None);
        let v = serde_json::to_value(&empty).unwrap();
        assert!(
            v["ops_per_sec"].is_null() && v["ns_per_iteration"].is_null(),
            "{v}"
        );
        let back: RunResult = serde_json::from_value(v).unwrap();
        assert_eq!(back.ops_per_sec, None);
    }
}
