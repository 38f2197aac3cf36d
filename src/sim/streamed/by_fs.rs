//! `simulate --strace`'s per-filesystem rows: what Linux multigrain timestamps cost one pass
//! of the recorded program on each filesystem kind the profile priced. What a user asks of the
//! knob is what it costs their program on the filesystem it will run on; the profile's
//! `filesystems[]` price the ones this machine has, while the import's mount table puts each
//! of the program's files on the one filesystem it happened to be recorded on.
//!
//! Each row is the log replayed with every regular path on that filesystem (what `--fs` does)
//! under the profile's kernel's model, its stock policy (`linux:multigrain`) against
//! `linux:coarse`, in the same streaming pass as the report's own replays
//! ([`super::pipeline::Fed::on`]): no second read of the log, so a FIFO gets its rows too.

use std::collections::BTreeMap;

use crate::kernel::{Action, ClockFn, Family, LinuxMode, ModelId, ModelSpec, Policy, PolicyKind};
use crate::price::{Costs, Term};
use crate::probe::update::FsUpdate;
use crate::probe::Profile;
use crate::sim::config::{SimulateConfig, StraceLog};
use crate::sim::costs;
use crate::sim::replay::Stats;
use crate::sim::result::{FsCost, FsCounts};
use crate::trace::FsKind;

use super::pipeline::Group;

/// The per-filesystem replays of a pass: one model, two policies, one filesystem kind each.
#[derive(Debug)]
pub struct Plan<'p> {
    /// The profile's kernel's Linux model (a bare `--model linux` resolves to the same).
    pub model: ModelId,
    pub table: Vec<Action>,
    /// The model's stock policy (`linux:multigrain`), then `linux:coarse`.
    pub policies: Vec<Policy>,
    pub costs: Costs,
    /// Each priced kind, with the profile's first entry that priced its update (the one whose
    /// prices [`costs::resolve`] takes for that kind).
    pub kinds: Vec<(FsKind, &'p FsUpdate)>,
}

/// The per-filesystem replays a pass over `log` runs: `None` where the profile prices no
/// filesystem's update, and with a note where it does but the rows are left out (`--fs`, a
/// kernel without multigrain timestamps, `--model` leaving the kernel's model out).
pub fn plan<'p>(
    cfg: &SimulateConfig,
    log: &StraceLog,
    profile: Option<&'p Profile>,
    models: &[ModelId],
) -> crate::error::Result<(Option<Plan<'p>>, Option<String>)> {
    let Some(p) = profile else {
        return Ok((None, None));
    };
    let mut kinds: Vec<(FsKind, &FsUpdate)> = Vec::new();
    for f in &p.filesystems {
        let kind = f.fs_kind();
        if f.prices.get(Term::Update).is_some() && kinds.iter().all(|(k, _)| *k != kind) {
            kinds.push((kind, f));
        }
    }
    if kinds.is_empty() {
        return Ok((None, None));
    }
    const WHAT: &str = "per-filesystem multigrain costs";
    if let Some(fs) = log.fs {
        let note = format!(
            "{WHAT}: left out under --fs {} (every path is on it already); without --fs, one \
             row per filesystem the profile priced",
            fs.name()
        );
        return Ok((None, Some(note)));
    }
    let running = ModelSpec {
        family: Family::Linux,
        version: None,
        alias: false,
    };
    let (model, _) = running.resolve(p.machine.kernel_release.as_deref());
    if !model.multigrain() {
        let note = format!(
            "{WHAT}: none, the profile's kernel ({model}) predates multigrain timestamps \
             (Linux {})",
            crate::kernel::model::LINUX_MULTIGRAIN
        );
        return Ok((None, Some(note)));
    }
    if !models.contains(&model) {
        let note = format!(
            "{WHAT}: priced under the profile's kernel, {model}; add --model linux for them"
        );
        return Ok((None, Some(note)));
    }
    let all = model.policies();
    let coarse = all
        .iter()
        .find(|p| matches!(p.kind, PolicyKind::Linux { mode, .. } if mode == LinuxMode::Coarse))
        .cloned()
        .ok_or_else(|| crate::failure!("{model} has no coarse policy"))?;
    let (costs, _) = costs::resolve(model, profile, cfg)?;
    Ok((
        Some(Plan {
            model,
            table: model.table(),
            policies: vec![all[0].clone(), coarse],
            costs,
            kinds,
        }),
        None,
    ))
}

impl Plan<'_> {
    /// The plan's replays: its model and policies with every regular path on each kind.
    pub fn groups(&self) -> impl Iterator<Item = Group<'_>> {
        let (table, policies) = (self.table.as_slice(), self.policies.as_slice());
        self.kinds
            .iter()
            .map(move |&(fs, _)| (table, policies, self.costs, Some(fs)))
    }

    /// The rows from the totals of the plan's replays, in order: for each kind, the stock
    /// policy's and `linux:coarse`'s, both at the same base cost.
    pub fn rows(&self, stats: &[&Stats]) -> Vec<FsCost> {
        self.kinds
            .iter()
            .zip(stats.chunks(self.policies.len()))
            .map(|(&(fs, entry), s)| row(fs, entry, s[0], s[1], &self.costs))
            .collect()
    }
}

/// The row of `kind` (profile entry `entry`) from the pass's totals under the stock policy
/// and `linux:coarse`.
fn row(kind: FsKind, entry: &FsUpdate, stock: &Stats, coarse: &Stats, costs: &Costs) -> FsCost {
    let less = |a: u64, b: u64| a as i64 - b as i64;
    let fine = ClockFn::LinuxFineMg as usize;
    let cost = stock.timestamp_ns - coarse.timestamp_ns;
    let mut prices = BTreeMap::new();
    prices.insert("precise_read_ns".to_string(), costs.precise_read_ns);
    prices.insert("coarse_read_ns".to_string(), costs.coarse_read_ns);
    for t in Term::LISTED {
        prices.insert(t.field().to_string(), costs.on(t, kind));
    }
    FsCost {
        fs: kind.name().to_string(),
        dir: entry.dir.clone(),
        mount_options: entry.mount_options.clone(),
        multigrain_ns_per_pass: cost,
        pass_ns: stock.total_ns,
        share_of_pass: if stock.total_ns > 0.0 {
            cost / stock.total_ns
        } else {
            0.0
        },
        counts: FsCounts {
            fine_stamps: less(stock.reads[fine], coarse.reads[fine]),
            fine_reads: less(stock.counter_reads(), coarse.counter_reads()),
            coarse_reads: less(stock.coarse_reads(), coarse.coarse_reads()),
            floored_reads: less(stock.floored_reads, coarse.floored_reads),
            queries: less(stock.queries, coarse.queries),
            updates: less(stock.updates, coarse.updates),
            atime_updates: less(stock.atime_updates, coarse.atime_updates),
            first_updates: less(stock.first_updates, coarse.first_updates),
            sync_commits: less(stock.sync_commits, coarse.sync_commits),
        },
        prices_ns: prices,
    }
}
