//! Cost, by emulation: the workload runs for real; for each policy, the reads the model says
//! the kernel takes per iteration are added in the worker loop with real sources (a Linux
//! precise read as `syscall(clock_gettime, CLOCK_REALTIME)`, a BSD counter read as the
//! `--counter` instruction, trapped under `--emulate-trap`, a coarse read as the vDSO's
//! `CLOCK_REALTIME_COARSE`). Predicted: the model's ns per op with the measured uninjected
//! iteration as base and the quick probe's cost of each injected source. Measured: the
//! injected run's ops/s.
//!
//! What it checks: that read counts times probe costs add up to what those reads cost inside
//! the real loop (pipelines, caches, the syscall path next to the workload's). What it cannot
//! check: that the kernel takes those reads (that is docs/kernel-models.md's job).

use std::path::PathBuf;

use super::{ns, scenario_on, Row, ValidationReport};
use crate::cli::simulate::Counter;
use crate::sim::config::SimulateConfig;
use crate::sim::costs;
use crate::sim::estimate::replay;
use crate::sim::replay::Costs;
use crate::trace::FsKind;
use crate::workload::inject::{self, Inject, ReadSource};

fn counter_source(c: Counter) -> ReadSource {
    match c {
        Counter::Rdtscp => ReadSource::Rdtscp,
        Counter::LfenceRdtsc => ReadSource::LfenceRdtsc,
        Counter::Rdtsc => ReadSource::Rdtsc,
    }
}

/// Measured ns per iteration of `name` with `reads` injected.
fn measure(
    name: &str,
    secs: f64,
    dir: Option<&std::path::Path>,
    reads: Vec<(ReadSource, f64)>,
) -> anyhow::Result<f64> {
    let reads: Vec<(ReadSource, f64)> = reads.into_iter().filter(|r| r.1 > 0.0).collect();
    inject::set((!reads.is_empty()).then(|| Inject::new(reads)));
    let r = super::run_workload(name, secs, dir);
    inject::set(None);
    Ok(r?.runs[0].ns_per_iteration)
}

/// Runs the emulation validation of `name` (pipe1 or vfsmix).
pub fn run(cfg: &SimulateConfig, name: &str) -> anyhow::Result<ValidationReport> {
    let secs = cfg.validate_secs;
    let dir: Option<PathBuf> = match (cfg.validate_dirs.first(), name) {
        (Some(d), _) => Some(d.clone()),
        (None, "vfsmix") => Some(PathBuf::from("/dev/shm")),
        _ => None,
    };
    let profile = costs::quick_profile(cfg.counter.source_id(), cfg.emulate_trap)?;
    let cost = |id: &str| {
        profile
            .cost_ns(id)
            .map(|e| e.point)
            .ok_or_else(|| anyhow::anyhow!("the quick probe has no cost for {id}"))
    };
    let coarse = ReadSource::VdsoRealtimeCoarse;
    let coarse_ns = cost(coarse.probe_id())?;
    let first = super::run_workload(name, secs, dir.as_deref())?;
    let t0 = first.runs[0].ns_per_iteration;
    let fs = super::fs_kind(first.fs_type.as_deref());
    let scenario = scenario_on(name, (fs != FsKind::Pipefs).then_some(fs))?;
    let mut measured: Vec<((ReadSource, u64, u64), f64)> = Vec::new();
    let mut rows = Vec::new();
    for &model in &cfg.models {
        let counter = if model.is_linux() {
            ReadSource::SyscallRealtime
        } else {
            counter_source(cfg.counter)
        };
        let (resolved, _) = costs::resolve(model, Some(&profile), cfg)?;
        let c = Costs {
            precise_read_ns: cost(counter.probe_id())?,
            coarse_read_ns: coarse_ns,
            update_ns: 0.0,
            tick_ns: resolved.tick_ns,
        };
        let table = model.table();
        for p in model.policies() {
            let st = replay(&table, &p, c, &scenario, t0, scenario.iterations);
            let units = st.units().max(1) as f64;
            let predicted_ns = st.total_ns / units;
            let (nc, nk) = (
                st.counter_reads() as f64 / units,
                st.coarse_reads() as f64 / units,
            );
            let key = (
                counter,
                (nc * 1e6).round() as u64,
                (nk * 1e6).round() as u64,
            );
            let m = match measured.iter().find(|(k, _)| *k == key) {
                Some((_, m)) => *m,
                None => {
                    let m = measure(
                        name,
                        secs,
                        dir.as_deref(),
                        vec![(counter, nc), (coarse, nk)],
                    )?;
                    measured.push((key, m));
                    m
                }
            };
            rows.push(Row::new(
                p.name(),
                "ops_per_sec",
                1e9 / predicted_ns,
                1e9 / m,
                format!(
                    "{} + {nc:.3} x {} ({}) + {nk:.3} x {} ({}) per op = {} predicted, {} measured",
                    ns(t0),
                    counter.probe_id(),
                    ns(c.precise_read_ns),
                    coarse.probe_id(),
                    ns(coarse_ns),
                    ns(predicted_ns),
                    ns(m)
                ),
            ));
        }
    }
    let last = super::run_workload(name, secs, dir.as_deref())?;
    let t1 = last.runs[0].ns_per_iteration;
    let notes = vec![
        format!(
            "uninjected {name}{}: {} per iteration before the policies, {} after ({:+.1}% drift: \
             the noise floor of every row)",
            dir.as_ref()
                .map(|d| format!(" in {} ({fs})", d.display()))
                .unwrap_or_default(),
            ns(t0),
            ns(t1),
            (t1 - t0) / t0 * 100.0
        ),
        format!(
            "costs from a quick probe taken now{}; {} distinct injections, {secs} s each, one \
             pinned task",
            if cfg.emulate_trap {
                " with TSC reads trapped (--emulate-trap)"
            } else {
                ""
            },
            measured.len()
        ),
        "every policy's reads are added on top of this kernel's own (Linux multigrain) work: \
         the check is of the cost arithmetic, not of the kernel's read counts"
            .into(),
    ];
    Ok(ValidationReport::new("emulation", name, rows, notes))
}
