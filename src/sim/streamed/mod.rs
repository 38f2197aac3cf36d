//! `simulate --strace FILE`: one streaming pass over an strace log, every op fed to one
//! [`Replay`] per policy of every model, so memory stays flat in the log's length and the log
//! is parsed once. The log is parsed on a thread of its own, the import runs on the calling
//! thread, and the replays on two more, fed in batches ([`pipeline`]); policies whose replays
//! are the same computation share one (docs/methodology.md, "Ingestion").
//!
//! Where the profile priced filesystems, the same pass also replays the log with every regular
//! path on each of them under the profile's kernel ([`by_fs`]): what the knob costs the
//! program per pass on each.
//!
//! Costs: the timestamp work is priced as for scenarios. The base cost of an op (the syscall
//! without timestamp work) is `--set base_ns`, else the median `-T` time of the log's calls — an
//! upper bound, as it includes ptrace's stops. The virtual clock follows the log's `-tt` times,
//! so ticks, coarse reads and multigrain floors see the real pacing of the traced program.

mod by_fs;
mod pipeline;

use std::path::Path;

use super::config::{Param, SimulateConfig, StraceLog};
use super::replay::{Replay, Stats};
use super::result::{ModelReport, Output, StraceReport, SIMULATE_SCHEMA_VERSION};
use super::{costs, estimate};
use crate::trace::strace::import::{ImportOptions, ImportSummary, StraceImport};
use pipeline::{distinct_replays, pipelined, Fed};

/// Base cost per op used while replaying when none is given (only matters for a log without
/// `-tt` times, whose virtual clock advances by the cost).
const PROVISIONAL_BASE_NS: f64 = 1000.0;

/// Replays the strace log `log` under every model and policy `cfg` asks for, and where the
/// profile priced filesystems, under the profile's kernel on each of them.
pub fn simulate(cfg: &SimulateConfig, log: &StraceLog) -> crate::error::Result<Output> {
    let path: &Path = &log.path;
    // A regular file or a FIFO (`<(zcat log.gz)`); a device or a directory is refused.
    let file = crate::input::open_stream(path, "strace file")?;
    let (profile, note) = super::profile(cfg)?;
    let profile = profile.as_ref();
    let mut resolved = Vec::new();
    let (models, _) = super::resolve_models(cfg, profile);
    for &m in &models {
        resolved.push((m, m.table(), m.policies(), costs::resolve(m, profile, cfg)?));
    }
    let (plan, plan_note) = by_fs::plan(cfg, log, profile, &models)?;
    let provisional = cfg.set(Param::BaseNs).unwrap_or(PROVISIONAL_BASE_NS);
    let (distinct, which) = distinct_replays(
        resolved
            .iter()
            .map(|(_, table, policies, (c, _))| (table.as_slice(), policies.as_slice(), *c, None))
            .chain(plan.iter().flat_map(by_fs::Plan::groups)),
    );
    let mut feds: Vec<Fed> = distinct
        .iter()
        .map(|&(table, kind, c, on)| Fed {
            replay: Replay::new(table, kind, c, provisional, 0),
            on,
        })
        .collect();
    let origin = path.display().to_string();
    let import = StraceImport::new(file, &origin, ImportOptions::system(log.strict, log.fs));
    let summary = pipelined(import, &mut feds)?;
    crate::ensure!(
        summary.calls > 0,
        "no syscalls in strace file '{}' ({} lines, {} malformed): record one with \
         `tscope record -o FILE -- CMD` or `strace -f -tt -T -y -o FILE CMD`",
        path.display(),
        summary.lines,
        summary.malformed_lines
    );
    let (base, base_source) = base_cost(cfg, &summary);
    let mut notes = notes(&summary);
    notes.extend(plan_note);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| origin.clone());
    let distinct_stats: Vec<Stats> = feds
        .iter()
        .map(|f| rebase(f.replay.stats(), base))
        .collect();
    let mut stats = which.iter().map(|&i| &distinct_stats[i]);
    let mut reports = Vec::new();
    for (model, _, policies, (costs, sources)) in &resolved {
        let all: Vec<&Stats> = stats.by_ref().take(policies.len()).collect();
        let stock_ns = all[0].total_ns / all[0].units().max(1) as f64;
        reports.push(ModelReport {
            schema_version: SIMULATE_SCHEMA_VERSION,
            scenario: format!("strace:{name}"),
            model: model.label(),
            stock_policy: policies[0].name(),
            tasks: 1,
            iterations: summary.calls,
            profile: note.clone(),
            costs: super::costs_out(*costs, sources.clone(), base, &base_source),
            estimates: policies
                .iter()
                .zip(&all)
                .map(|(p, s)| estimate::estimate(p, s, stock_ns, 1, costs))
                .collect(),
            notes: notes.clone(),
            strace: Some(StraceReport {
                strace: summary.clone(),
                by_filesystem: None,
            }),
        });
    }
    if let Some(p) = &plan {
        // The plan's replays come last, stock and coarse for each kind in turn.
        let rows = p.rows(&stats.collect::<Vec<_>>());
        // A plan is only made where its model is among the reports.
        let at = resolved.iter().position(|(m, ..)| *m == p.model);
        if let Some(s) = at.and_then(|i| reports[i].strace.as_mut()) {
            s.by_filesystem = Some(rows);
        }
    }
    Ok(Output::Models(reports))
}

/// The cost of an op without timestamp work, and where it comes from.
fn base_cost(cfg: &SimulateConfig, summary: &ImportSummary) -> (f64, String) {
    match (cfg.set(Param::BaseNs), summary.median_duration_ns) {
        (Some(b), _) => (b, "--set base_ns".to_string()),
        (None, Some(d)) => (
            d,
            "median -T time of the traced calls (includes ptrace stops: an upper bound; \
             --set base_ns=… for the untraced cost)"
                .to_string(),
        ),
        (None, None) => (
            PROVISIONAL_BASE_NS,
            "assumed 1 us per call: the log has no -T times; --set base_ns=…".to_string(),
        ),
    }
}

/// The totals with every op's base cost set to `base`.
fn rebase(s: &Stats, base: f64) -> Stats {
    let mut s = s.clone();
    s.total_ns = s.timestamp_ns + base * s.ops as f64;
    s
}

/// One-line notes on what the import saw.
fn notes(s: &ImportSummary) -> Vec<String> {
    let mut n = vec![format!(
        "strace: {} calls from {} lines, {} task(s), {} inodes ({}); fs from {}",
        s.calls,
        s.lines,
        s.tasks,
        s.inodes,
        s.inodes_by_fs
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect::<Vec<_>>()
            .join(", "),
        s.fs_source
    )];
    if s.malformed_lines > 0 {
        n.push(format!(
            "strace: {} malformed line(s) skipped (--strict refuses them), first: {}",
            s.malformed_lines,
            s.malformed_examples.join("; ")
        ));
    }
    if !s.unknown_syscalls.is_empty() {
        let mut u: Vec<(&String, &u64)> = s.unknown_syscalls.iter().collect();
        u.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let list: Vec<String> = u.iter().map(|(k, v)| format!("{k} x{v}")).collect();
        n.push(format!(
            "strace: {} syscall(s) the importer does not know, replayed without timestamp work: {}",
            u.len(),
            list.join(", ")
        ));
    }
    if s.unfinished_at_end > 0 || s.orphan_resumes > 0 {
        n.push(format!(
            "strace: {} call(s) never resumed, {} resumed without a start (a cut or killed trace)",
            s.unfinished_at_end, s.orphan_resumes
        ));
    }
    n
}
