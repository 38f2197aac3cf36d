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
use crate::sim::config::Counter;
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

/// One distinct injection: the source and micro-reads per iteration of counter and coarse.
type InjectionKey = (ReadSource, u64, u64);

/// Baseline ns (mean of the runs around), injected ns, relative drift of the baseline.
type Measured = (f64, f64, f64);

/// Measured ns per iteration of `name` with `reads` injected.
fn measure(
    name: &str,
    secs: f64,
    dir: Option<&std::path::Path>,
    reads: Vec<(ReadSource, f64)>,
) -> crate::error::Result<f64> {
    let reads: Vec<(ReadSource, f64)> = reads.into_iter().filter(|r| r.1 > 0.0).collect();
    inject::set((!reads.is_empty()).then(|| Inject::new(reads)));
    let r = super::run_workload(name, secs, dir);
    inject::set(None);
    r?.runs[0]
        .ns_per_iteration
        .ok_or_else(|| crate::failure!("{name} took no sample: no measured rate"))
}

/// Runs the emulation validation of `name` (pipe1 or vfsmix).
pub fn run(cfg: &SimulateConfig, name: &str) -> crate::error::Result<ValidationReport> {
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
            .ok_or_else(|| crate::failure!("the quick probe has no cost for {id}"))
    };
    let coarse = ReadSource::VdsoRealtimeCoarse;
    let coarse_ns = cost(coarse.probe_id())?;
    let first = super::run_workload(name, secs, dir.as_deref())?;
    let t0 = first.runs[0]
        .ns_per_iteration
        .ok_or_else(|| crate::failure!("{name} took no sample: no measured rate"))?;
    let fs = super::fs_kind(first.fs_type.as_deref());
    let scenario = scenario_on(name, (fs != FsKind::Pipefs).then_some(fs))?;
    // Per distinct injection: (baseline ns, injected ns, baseline drift).
    let mut measured: Vec<(InjectionKey, Measured)> = Vec::new();
    let mut rows = Vec::new();
    let mut worst_drift: f64 = 0.0;
    let (models, _) = crate::sim::resolve_models(cfg, Some(&profile));
    for model in models {
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
            let ts_ns = st.timestamp_ns / units;
            let (nc, nk) = (
                st.counter_reads() as f64 / units,
                st.coarse_reads() as f64 / units,
            );
            let key = (
                counter,
                (nc * 1e6).round() as u64,
                (nk * 1e6).round() as u64,
            );
            let (base, m, drift) = match measured.iter().find(|(k, _)| *k == key) {
                Some((_, v)) => *v,
                None => {
                    // Uninjected, injected, uninjected again: the mean of the two baselines is
                    // the base, so that slow drift (other load on the machine) cancels.
                    let a = measure(name, secs, dir.as_deref(), vec![])?;
                    let m = measure(
                        name,
                        secs,
                        dir.as_deref(),
                        vec![(counter, nc), (coarse, nk)],
                    )?;
                    let b = measure(name, secs, dir.as_deref(), vec![])?;
                    let v = ((a + b) / 2.0, m, (b - a) / ((a + b) / 2.0));
                    measured.push((key, v));
                    v
                }
            };
            worst_drift = worst_drift.max(drift.abs());
            let predicted_ns = base + ts_ns;
            rows.push(Row::new(
                p.name(),
                "ops_per_sec",
                1e9 / predicted_ns,
                1e9 / m,
                format!(
                    "{} (uninjected, {:+.1}% between the runs around it) + {nc:.3} x {} ({}) + \
                     {nk:.3} x {} ({}) per op = {} predicted, {} measured",
                    ns(base),
                    drift * 100.0,
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
    let notes = vec![
        format!(
            "{name}{}: each distinct injection ran between two uninjected runs, whose mean is its \
             base; the largest change between such a pair was {:.1}% (the noise floor of the \
             rows); the first uninjected run, {}, paced the model's clock",
            dir.as_ref()
                .map(|d| format!(" in {} ({fs})", d.display()))
                .unwrap_or_default(),
            worst_drift * 100.0,
            ns(t0)
        ),
        format!(
            "costs from a quick probe taken now{}; {} distinct injections, 3 runs of {secs} s \
             each, one pinned task",
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
