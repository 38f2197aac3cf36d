//! `simulate --strace FILE`: one streaming pass over an strace log, every op fed to one
//! [`Replay`] per policy of every model, so memory stays flat in the log's length and the log
//! is parsed once. The log is parsed on a thread of its own, the import runs on the calling
//! thread, and the replays on two more, fed in batches; policies whose replays are the same
//! computation share one (docs/methodology.md, "Ingestion").
//!
//! Costs: the timestamp work is priced as for scenarios. The base cost of an op (the syscall
//! without timestamp work) is `--set base_ns`, else the median `-T` time of the log's calls — an
//! upper bound, as it includes ptrace's stops. The virtual clock follows the log's `-tt` times,
//! so ticks, coarse reads and multigrain floors see the real pacing of the traced program.

use std::path::Path;

use crate::error::Context;

use super::config::{Param, SimulateConfig, StraceLog};
use super::replay::{Costs, Replay, Stats};
use super::result::{ModelReport, Output, SIMULATE_SCHEMA_VERSION};
use super::{costs, estimate};
use crate::kernel::{Action, Policy, PolicyKind};
use crate::trace::strace::import::{ImportOptions, ImportSummary, StraceImport};
use crate::trace::Op;

/// Base cost per op used while replaying when none is given (only matters for a log without
/// `-tt` times, whose virtual clock advances by the cost).
const PROVISIONAL_BASE_NS: f64 = 1000.0;

/// Replays the strace log `log` under every model and policy `cfg` asks for.
pub fn simulate(cfg: &SimulateConfig, log: &StraceLog) -> crate::error::Result<Output> {
    let path: &Path = &log.path;
    // A regular file or a FIFO (`<(zcat log.gz)`); a device or a directory is refused.
    let file = crate::input::open_stream(path, "strace file")?;
    let (profile, note) = super::profile(cfg)?;
    let profile = profile.as_ref();
    let mut resolved = Vec::new();
    let (models, _) = super::resolve_models(cfg, profile);
    for m in models {
        resolved.push((m, m.table(), m.policies(), costs::resolve(m, profile, cfg)?));
    }
    let provisional = cfg.set(Param::BaseNs).unwrap_or(PROVISIONAL_BASE_NS);
    let (distinct, which) = distinct_replays(
        resolved
            .iter()
            .map(|(_, table, policies, (c, _))| (table.as_slice(), policies.as_slice(), *c)),
    );
    let mut replays: Vec<Replay> = distinct
        .iter()
        .map(|&(table, kind, c)| Replay::new(table, kind, c, provisional, 0))
        .collect();
    let origin = path.display().to_string();
    let import = StraceImport::new(file, &origin, ImportOptions::system(log.strict, log.fs));
    let summary = pipelined(import, &mut replays)?;
    crate::ensure!(
        summary.calls > 0,
        "no syscalls in strace file '{}' ({} lines, {} malformed): record one with \
         `tscope record -o FILE -- CMD` or `strace -f -tt -T -y -o FILE CMD`",
        path.display(),
        summary.lines,
        summary.malformed_lines
    );
    let (base, base_source) = match (cfg.set(Param::BaseNs), summary.median_duration_ns) {
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
    };
    let notes = notes(&summary);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| origin.clone());
    let distinct_stats: Vec<Stats> = replays.iter().map(|r| rebase(r.stats(), base)).collect();
    let mut stats = which.iter().map(|&i| distinct_stats[i].clone());
    let mut reports = Vec::new();
    for (model, _, policies, (costs, sources)) in &resolved {
        let all: Vec<Stats> = stats.by_ref().take(policies.len()).collect();
        let stock_ns = all[0].total_ns / all[0].units().max(1) as f64;
        reports.push(ModelReport {
            schema_version: SIMULATE_SCHEMA_VERSION,
            scenario: format!("strace:{name}"),
            model: model.name().into(),
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
            strace: Some(summary.clone()),
        });
    }
    Ok(Output::Models(reports))
}

/// Ops per batch handed from the importer to the replays.
const BATCH: usize = 8192;

/// Batches in flight to each replay thread (with the one filling and the ones replaying, a
/// handful exist: memory stays flat).
const IN_FLIGHT: usize = 2;

/// Threads the replays are split over.
const REPLAY_THREADS: usize = 2;

/// Imports on this thread and replays on a second one, in batches of [`BATCH`] ops, so that
/// parsing and the per-policy replays overlap on two cores. Each replay sees every op in trace
/// order (but for the effectless ones, counted in bulk), as in a single loop: the totals are the
/// same to the bit.
fn pipelined<R: std::io::Read + Send>(
    import: StraceImport<R>,
    replays: &mut [Replay],
) -> crate::error::Result<ImportSummary> {
    use std::sync::mpsc::sync_channel;
    use std::sync::Arc;
    let slots = crate::trace::Syscall::ALL.len() * crate::trace::FsKind::ALL.len();
    let effectless: Vec<bool> = (0..slots)
        .map(|i| replays.iter().all(|r| r.effectless_at(i)))
        .collect();
    std::thread::scope(|scope| {
        // The replays on two threads (each replay on one, seeing every op in order), so that
        // the scheduler can pair each half with the parsing or the importing thread on two
        // cores: three unequal threads on two cores left one core idle part of the time.
        let per = replays.len().div_ceil(REPLAY_THREADS).max(1);
        let mut senders = Vec::new();
        let mut workers = Vec::new();
        for part in replays.chunks_mut(per) {
            let (tx, rx) = sync_channel::<Arc<Vec<Op>>>(IN_FLIGHT);
            senders.push(tx);
            workers.push(
                std::thread::Builder::new()
                    .name("tscope-replay".into())
                    .spawn_scoped(scope, move || {
                        for batch in rx {
                            // Replay by replay: each one's state stays in cache across the batch.
                            for r in part.iter_mut() {
                                for &op in batch.iter() {
                                    r.step(op);
                                }
                            }
                        }
                        part
                    })
                    .context("starting the replay threads")?,
            );
        }
        let mut batch = Vec::with_capacity(BATCH);
        let mut sent_all = true;
        let mut push = |op: Op| {
            if !sent_all {
                return;
            }
            batch.push(op);
            if batch.len() == BATCH {
                let full = Arc::new(std::mem::replace(&mut batch, Vec::with_capacity(BATCH)));
                // Only fails if a worker is gone (it panicked): reported at the join.
                sent_all = senders.iter().all(|tx| tx.send(Arc::clone(&full)).is_ok());
            }
        };
        // Ops that no policy stamps, with a time of their own, are counted instead of sent
        // (most of a log): stepping one only counts it and sets the clock to its time, which
        // the next op with a time sets again. The last one is held back, and sent after all
        // when the op after it has no time.
        let (mut held, mut skipped) = (None::<Op>, 0u64);
        let imported = import.for_each(|op| {
            if op.time_ns.is_some() && !op.ends_iteration && effectless[index(&op)] {
                skipped += u64::from(held.replace(op).is_some());
                return;
            }
            if let Some(h) = held.take() {
                if op.time_ns.is_none() {
                    push(h);
                } else {
                    skipped += 1;
                }
            }
            push(op);
        });
        skipped += u64::from(held.is_some());
        if sent_all && !batch.is_empty() {
            let last = Arc::new(batch);
            for tx in &senders {
                let _ = tx.send(Arc::clone(&last));
            }
        }
        drop(senders);
        for w in workers {
            let part = w
                .join()
                .map_err(|_| crate::failure!("a replay thread panicked"))?;
            for r in part {
                r.count_skipped(skipped);
            }
        }
        imported.map_err(|e| crate::error::Error::Other(Box::new(e)))
    })
}

/// A replay's inputs: its model's table, the policy's kind and the model's costs.
type ReplayKey<'t> = (&'t [Action], PolicyKind, Costs);

/// The distinct replays among every policy of `models` (each a table, its policies and its
/// costs), and for each policy in order the index of its replay. Policies whose replays are
/// the same computation (the same table, policy kind and costs: dragonfly:3, :4 and :5 all
/// stamp with `nanotime()`) give the same totals to the bit, so each distinct replay runs once
/// and its totals serve every policy that shares it.
fn distinct_replays<'t>(
    models: impl Iterator<Item = (&'t [Action], &'t [Policy], Costs)>,
) -> (Vec<ReplayKey<'t>>, Vec<usize>) {
    let mut distinct: Vec<ReplayKey<'t>> = Vec::new();
    let mut which = Vec::new();
    for (table, policies, costs) in models {
        for p in policies {
            let key = (table, p.kind, costs);
            which.push(match distinct.iter().position(|k| *k == key) {
                Some(i) => i,
                None => {
                    distinct.push(key);
                    distinct.len() - 1
                }
            });
        }
    }
    (distinct, which)
}

/// `kernel::table_index` of an op.
fn index(op: &Op) -> usize {
    crate::kernel::table_index(op.syscall, op.fs)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::ModelId;

    #[test]
    fn identical_replays_run_once_and_distinct_ones_apart() {
        let costs = Costs::reads(100.0, 10.0, 4e6);
        let models: Vec<(ModelId, Vec<Action>, Vec<Policy>)> =
            ["linux", "freebsd", "dragonfly", "netbsd", "netbsd-knob"]
                .iter()
                .map(|n| {
                    let m = ModelId::parse(n).unwrap();
                    (m, m.table(), m.policies())
                })
                .collect();
        let (distinct, which) = distinct_replays(
            models
                .iter()
                .map(|(_, t, p)| (t.as_slice(), p.as_slice(), costs)),
        );
        let names: Vec<String> = models
            .iter()
            .flat_map(|(_, _, p)| p.iter().map(Policy::name))
            .collect();
        assert_eq!(which.len(), names.len());
        assert!(distinct.len() < names.len(), "{names:?}");
        let at = |n: &str| which[names.iter().position(|x| x == n).unwrap()];
        // nanotime() three times over.
        assert_eq!(at("dragonfly:3"), at("dragonfly:4"));
        assert_eq!(at("dragonfly:3"), at("dragonfly:5"));
        // Different clocks, different models: apart.
        assert_ne!(at("dragonfly:0"), at("dragonfly:3"));
        assert_ne!(at("linux:coarse"), at("linux:precise"));
        assert_ne!(at("linux:coarse"), at("freebsd:1"));
        // Other costs make another replay.
        let dearer = Costs {
            precise_read_ns: 200.0,
            ..costs
        };
        let (d2, _) = distinct_replays(
            [(models[1].1.as_slice(), models[1].2.as_slice(), costs)]
                .into_iter()
                .chain([(models[1].1.as_slice(), models[1].2.as_slice(), dearer)]),
        );
        assert_eq!(d2.len(), 2 * models[1].2.len());
    }
}
