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

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::chain::{self, Chain};
use super::stopping::{Plan, Stop};
use super::{scenario_on, Row, ValidationReport, GOAL_PCT};
use crate::fmt::duration_short;
use crate::probe::Profile;
use crate::sim::config::Counter;
use crate::sim::config::{SimulateConfig, Validation};
use crate::sim::costs;
use crate::sim::estimate::replay;
use crate::sim::replay::Costs;
use crate::trace::{CompiledScenario, FsKind};
use crate::workload::inject::ReadSource;

fn counter_source(c: Counter) -> ReadSource {
    match c {
        Counter::Rdtscp => ReadSource::Rdtscp,
        Counter::LfenceRdtsc => ReadSource::LfenceRdtsc,
        Counter::Rdtsc => ReadSource::Rdtsc,
    }
}

/// One distinct injection: the source and micro-reads per iteration of counter and coarse.
type InjectionKey = (ReadSource, u64, u64);

/// One policy's prediction, before the runs.
struct Planned {
    policy: String,
    key: usize,
    counter: ReadSource,
    counter_ns: f64,
    /// Timestamp ns per op the model adds at the probe's costs.
    ts_ns: f64,
    nc: f64,
    nk: f64,
}

/// The coarse read every injection adds beside its counter reads.
const COARSE: ReadSource = ReadSource::VdsoRealtimeCoarse;

/// The quick probe's cost of the source `id`, in ns.
fn probe_cost(profile: &Profile, id: &str) -> crate::error::Result<f64> {
    profile
        .cost_ns(id)
        .map(|e| e.point)
        .ok_or_else(|| crate::failure!("the quick probe has no cost for {id}"))
}

/// The distinct injections the policies need, and each policy's prediction.
struct Injections {
    keys: Vec<InjectionKey>,
    /// `reads[j]`: injection j's sources and reads per iteration.
    reads: Vec<Vec<(ReadSource, f64)>>,
    planned: Vec<Planned>,
}

impl Injections {
    /// Each injection's timestamp cost (one per key: the policies sharing a key share its
    /// reads and so its cost).
    fn ts_ns(&self) -> Vec<f64> {
        (0..self.keys.len())
            .map(|j| {
                self.planned
                    .iter()
                    .find(|p| p.key == j)
                    .map_or(0.0, |p| p.ts_ns)
            })
            .collect()
    }
}

/// Replays `scenario` under every policy of every model at the probe's costs, with `t0` ns as
/// the uninjected iteration, and groups the policies by the reads they inject.
fn plan(
    cfg: &SimulateConfig,
    profile: &Profile,
    scenario: &CompiledScenario,
    t0: f64,
    coarse_ns: f64,
) -> crate::error::Result<Injections> {
    let mut keys: Vec<InjectionKey> = Vec::new();
    let mut injections: Vec<Vec<(ReadSource, f64)>> = Vec::new();
    let mut planned = Vec::new();
    let (models, _) = crate::sim::resolve_models(cfg, Some(profile));
    for model in models {
        let counter = if model.is_linux() {
            ReadSource::SyscallRealtime
        } else {
            counter_source(cfg.counter)
        };
        let (resolved, _) = costs::resolve(model, Some(profile), cfg)?;
        let c = Costs::reads(
            probe_cost(profile, counter.probe_id())?,
            coarse_ns,
            resolved.tick_ns,
        );
        let table = model.table();
        for p in model.policies() {
            let st = replay(&table, &p, c, scenario, t0, scenario.iterations);
            let units = st.units().max(1) as f64;
            let (nc, nk) = (
                st.counter_reads() as f64 / units,
                st.coarse_reads() as f64 / units,
            );
            let key = (
                counter,
                (nc * 1e6).round() as u64,
                (nk * 1e6).round() as u64,
            );
            let j = keys.iter().position(|k| *k == key).unwrap_or_else(|| {
                keys.push(key);
                injections.push(vec![(counter, nc), (COARSE, nk)]);
                keys.len() - 1
            });
            planned.push(Planned {
                policy: p.name(),
                key: j,
                counter,
                counter_ns: c.precise_read_ns,
                ts_ns: st.timestamp_ns / units,
                nc,
                nk,
            });
        }
    }
    Ok(Injections {
        keys,
        reads: injections,
        planned,
    })
}

/// Runs the emulation validation of `name` (pipe1 or vfsmix).
pub fn run(cfg: &SimulateConfig, v: &Validation) -> crate::error::Result<ValidationReport> {
    let started = Instant::now();
    let (name, secs) = (v.check.as_str(), v.secs);
    let dir: Option<PathBuf> = match (v.dirs.first(), name) {
        (Some(d), _) => Some(d.clone()),
        (None, "vfsmix") => Some(PathBuf::from("/dev/shm")),
        _ => None,
    };
    let profile = costs::quick_profile(cfg.counter.source_id(), cfg.emulate_trap)?;
    let coarse_ns = probe_cost(&profile, COARSE.probe_id())?;
    let first = super::run_workload(name, secs, dir.as_deref())?;
    let t0 = first.runs[0]
        .ns_per_iteration
        .ok_or_else(|| crate::failure!("{name} took no sample: no measured rate"))?;
    let fs = super::fs_kind(first.fs_type.as_deref());
    let scenario = scenario_on(name, (fs != FsKind::Pipefs).then_some(fs))?;
    let injections = plan(cfg, &profile, &scenario, t0, coarse_ns)?;
    let ts_ns = injections.ts_ns();
    let chain = chain::run(
        name,
        secs,
        dir.as_deref(),
        &injections.reads,
        &ts_ns,
        started,
        v.budget_s,
    )?;
    let rows = rows(&injections.planned, &chain, &ts_ns, coarse_ns);
    let n_rounds = chain.rounds.first().map_or(0, Vec::len);
    let elapsed = started.elapsed().as_secs_f64();
    let workload = Workload {
        name,
        secs,
        dir: dir.as_deref(),
        fs,
        t0,
    };
    let notes = vec![
        outcome(&chain.stop, &rows, n_rounds, elapsed, v.budget_s),
        chain_note(&workload, injections.keys.len(), &chain, n_rounds),
        error_note(&chain.plan),
        format!(
            "costs from a quick probe taken now{}",
            if cfg.emulate_trap {
                " with TSC reads trapped (--emulate-trap)"
            } else {
                ""
            }
        ),
        "every policy's reads are added on top of this kernel's own (Linux multigrain) work: \
         the check is of the cost arithmetic, not of the kernel's read counts"
            .into(),
    ];
    let mut report = ValidationReport::new("emulation", name, rows, notes);
    report.rounds = Some(n_rounds);
    report.stopped = Some(chain.stop.name().into());
    report.budget_s = Some(v.budget_s);
    report.look_confidence = Some(chain.plan.confidence());
    Ok(report)
}

/// One row per policy: its predicted ops/s (the mean uninjected runs around its injection
/// plus the model's timestamp cost) against the injected runs' measured ops/s.
fn rows(planned: &[Planned], chain: &Chain, ts_ns: &[f64], coarse_ns: f64) -> Vec<Row> {
    let rounds = &chain.rounds;
    let errors = chain::errors(rounds, ts_ns);
    let intervals = chain::estimates(rounds, ts_ns, chain.plan.confidence());
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let mut rows = Vec::new();
    for p in planned {
        let r = &rounds[p.key];
        let base = mean(&r.iter().map(|x| (x.0 + x.2) / 2.0).collect::<Vec<_>>());
        let m = mean(&r.iter().map(|x| x.1).collect::<Vec<_>>());
        let predicted_ns = base + p.ts_ns;
        let round_mean = mean(&errors[p.key]);
        let half = intervals[p.key].1.unwrap_or(f64::INFINITY);
        // The point is the error of the means (the row's own columns); the rounds' errors give
        // its interval.
        let error = (m / predicted_ns - 1.0) * 100.0;
        let spread: Vec<String> = errors[p.key].iter().map(|e| format!("{e:+.1}%")).collect();
        let row = Row::new(
            p.policy.clone(),
            "ops_per_sec",
            1e9 / predicted_ns,
            1e9 / m,
            format!(
                "{} (uninjected, mean of the runs around) + {:.3} x {} ({}) + {:.3} x {} ({}) \
                 per op = {} predicted, {} measured: {error:+.1}%; error by round {} (mean \
                 {round_mean:+.1}%; 95% interval over all looks ±{half:.1}%)",
                duration_short(base),
                p.nc,
                p.counter.probe_id(),
                duration_short(p.counter_ns),
                p.nk,
                COARSE.probe_id(),
                duration_short(coarse_ns),
                duration_short(predicted_ns),
                duration_short(m),
                spread.join(" ")
            ),
        );
        rows.push(row.with_noise(error, half));
    }
    rows
}

/// The first note: why the rounds stopped, and how many rows decided.
fn outcome(stop: &Stop, rows: &[Row], n_rounds: usize, elapsed: f64, budget_s: f64) -> String {
    let undecided = rows.iter().filter(|r| r.undecided).count();
    match stop {
        Stop::Decided => format!(
            "all {} rows decided after {n_rounds} rounds ({elapsed:.0} s of a {:.0} s budget)",
            rows.len(),
            budget_s
        ),
        Stop::Budget => format!(
            "time budget reached after {n_rounds} rounds ({elapsed:.0} s of {:.0} s, \
             --validate-budget): {undecided} of {} rows undecided",
            budget_s,
            rows.len()
        ),
    }
}

/// The workload the chain runs: its name, run length and directory, and the first
/// uninjected run's ns per iteration that paced the model's clock.
struct Workload<'a> {
    name: &'a str,
    secs: f64,
    dir: Option<&'a Path>,
    fs: FsKind,
    t0: f64,
}

/// The note on the chain: the workload, the injections and runs, and how far the uninjected
/// runs moved.
fn chain_note(w: &Workload, n_keys: usize, chain: &Chain, n_rounds: usize) -> String {
    let baselines: Vec<f64> = chain
        .rounds
        .iter()
        .flatten()
        .flat_map(|x| [x.0, x.2])
        .collect();
    let drift = chain
        .rounds
        .iter()
        .flatten()
        .map(|x| ((x.2 - x.0) / ((x.0 + x.2) / 2.0)).abs())
        .fold(0.0, f64::max);
    format!(
        "{}{}: {} distinct injections, each run {n_rounds} times in one chain A K1 A K2 \
         … A ({} runs of {} s, one pinned task; uninjected runs {}..{}, the largest \
         change between the two around an injected run {:.1}%); the first uninjected run, \
         {}, paced the model's clock",
        w.name,
        w.dir
            .map(|d| format!(" in {} ({})", d.display(), w.fs))
            .unwrap_or_default(),
        n_keys,
        chain.runs,
        w.secs,
        duration_short(baselines.iter().copied().fold(f64::INFINITY, f64::min)),
        duration_short(baselines.iter().copied().fold(0.0, f64::max)),
        drift * 100.0,
        duration_short(w.t0)
    )
}

/// The note on how the error and its interval are computed, and when the rounds stop.
fn error_note(plan: &Plan) -> String {
    format!(
        "error: predicted against measured ops/s over the rounds (predicted: the mean of the \
         uninjected runs around each injected one plus the model's timestamp cost); its \
         interval from the spread of the rounds' own errors, pooled over the injections \
         (Student t). Rounds are added until every row decides with the same verdict at two \
         looks in a row, or the budget ends; up to {} looks were planned, each at {:.2}% \
         (Bonferroni), so the interval where the rounds stopped is a 95% one. A row whose \
         interval is wider than ±{GOAL_PCT}% is undecided: the machine was too noisy to \
         tell (load average now {})",
        plan.looks(),
        plan.confidence() * 100.0,
        crate::probe::machine::load_average()
            .map(|l| format!("{:.2} {:.2} {:.2}", l[0], l[1], l[2]))
            .unwrap_or_else(|| "unknown".into())
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_noisy_row_is_undecided_with_a_null_error() {
        let r = Row::new("p".into(), "ops_per_sec", 110.0, 100.0, String::new());
        let undecided = r.clone().with_noise(10.0, 7.5);
        assert!(undecided.undecided && !undecided.within_goal);
        assert_eq!(undecided.error_pct, None);
        assert_eq!(
            (undecided.point_error_pct, undecided.noise_pct),
            (Some(10.0), Some(7.5))
        );
        let miss = r.clone().with_noise(10.0, 2.0);
        assert!(!miss.undecided && !miss.within_goal && miss.error_pct == Some(10.0));
        let ok = r.with_noise(-4.0, 5.0);
        assert!(!ok.undecided && ok.within_goal);
        let json = serde_json::to_value(&undecided).unwrap();
        assert!(
            json["error_pct"].is_null() && json["noise_pct"] == 7.5,
            "{json}"
        );
    }
}
