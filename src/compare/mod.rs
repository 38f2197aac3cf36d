//! `tscope compare`: profiles side by side — host against guest, machine against machine —
//! with ratios against the first and verdict differences marked.
//!
//! Inputs are any JSON tscope writes that carries a profile: a `probe --json` profile, a
//! `detect --json` detection (its profile and verdicts), or a `report.json` (its `profile` and
//! `detect`).

mod input;
pub mod lkp;
pub mod noise;
pub mod path;
pub mod paths;
pub mod ratio;
pub mod unit;

pub use input::{Input, InputError};
pub use ratio::Change;
pub use unit::{Unit, UnitChoice};

use serde::{Deserialize, Serialize};

use crate::probe::Profile;
use crate::stats::Estimate;

/// One source across inputs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SourceRow {
    pub id: String,
    pub cost_ns: Vec<Option<Estimate>>,
    /// The cost in core cycles per input; absent when no input carries it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cost_cycles: Vec<Option<Estimate>>,
    /// `cost / cost of the first input` in the row's `judged_unit`, for inputs after the first.
    pub ratio_to_first: Vec<Option<f64>>,
    /// Per input after the first, the unit its ratio and word are in ([`mod@unit`]): `cycles`
    /// for a cycle-bound source when the core clock moved, else `ns`; `--unit` fixes it. Empty
    /// in files written before compare chose: every ratio is then in [`Comparison::unit`].
    #[serde(default)]
    pub judged_unit: Vec<Unit>,
    /// Per input after the first, where the row is judged in cycles: its ratio's within-run
    /// interval in ns, beside it (`None` elsewhere). Empty when no input is judged in cycles.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ns_ratio_interval: Vec<Option<Estimate>>,
    /// The ratio's larger side (`max(upper − ratio, ratio − lower)` of `ratio_interval`):
    /// `ratio ± this` holds the whole interval.
    pub ratio_plus_minus: Vec<Option<f64>>,
    /// Against the first input: `faster`, `slower`, or `no change` when `ratio_interval` holds
    /// 1 (or no interval can be bounded).
    pub change: Vec<Option<Change>>,
    /// The ratio's 95% within-run interval (see [`ratio`]). `None` where a cost is missing or
    /// an interval reaches 0.
    pub ratio_interval: Vec<Option<Estimate>>,
    /// The noise between two runs of this source the word is judged with, in percent
    /// ([`noise`]): measured, floored at the prior under five runs, or the prior alone.
    #[serde(default)]
    pub noise_pct: Vec<Option<f64>>,
    /// The noise between runs measured for this source (percent; `--noise` profiles or the
    /// inputs' `--repeat` runs, disturbed runs set aside) before the prior's floor; `None`
    /// where no runs were repeated.
    #[serde(default)]
    pub measured_noise_pct: Vec<Option<f64>>,
    /// The interval `change` comes from: `ratio_interval` divided by the machine's shift (when
    /// one is named) and widened by the noise.
    #[serde(default)]
    pub judged_interval: Vec<Option<Estimate>>,
    /// The within-run interval alone would call a change, but the source moved with the
    /// machine (the shift) or within the noise.
    #[serde(default)]
    pub with_machine: Vec<bool>,
    /// Per input after the first: the word is its path's ([`path`]), said once for the
    /// sources on that path.
    #[serde(default)]
    pub path_word: Vec<bool>,
    /// Under `--lkp`, per input after the first: the 0-day test robot's decision on the runs
    /// ([`lkp`]); `None` where a side does not price the source. Empty without `--lkp`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lkp: Vec<Option<lkp::LkpRow>>,
}

impl SourceRow {
    /// The unit of the row's ratio against column `col` (input `col + 1`): its `judged_unit`,
    /// else `default` (the comparison's, in files written before compare chose).
    pub fn unit_at(&self, col: usize, default: Unit) -> Unit {
        self.judged_unit.get(col).copied().unwrap_or(default)
    }
}

/// One verdict across inputs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct VerdictRow {
    pub name: String,
    pub holds: Vec<Option<bool>>,
    pub differs: bool,
}

/// A short description of each input's machine.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MachineSummary {
    pub label: String,
    pub path: String,
    pub cpu: Option<String>,
    pub kernel: Option<String>,
    pub clocksource: Option<String>,
    pub hypervisor: Option<String>,
    pub emulate_trap: bool,
    pub precise_read_ns: Option<Estimate>,
    /// The median core clock while probing, in GHz (`core_clock.ghz`); absent where the
    /// profile does not carry it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_ghz: Option<f64>,
}

/// One machine fact that differs between inputs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MachineDifference {
    /// `cpu`, `kernel`, `hypervisor` or `clocksource` (the [`MachineSummary`] field).
    pub field: String,
    /// The fact per input, in column order.
    pub values: Vec<Option<String>>,
}

/// The comparison.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Comparison {
    pub schema_version: u32,
    /// The unit of the costs shown, and of every ratio and word but those a row's
    /// `judged_unit` puts in cycles: `ns`, or the unit `--unit` fixed.
    pub unit: Unit,
    /// `auto`: compare chose each row's unit ([`mod@unit`]); `fixed`: `--unit` gave one for all
    /// (and files written before compare chose).
    #[serde(default)]
    pub unit_choice: UnitChoice,
    pub columns: Vec<MachineSummary>,
    pub sources: Vec<SourceRow>,
    pub verdicts: Vec<VerdictRow>,
    /// The machine facts that differ between inputs; empty when all agree. When not empty the
    /// ratios compare machines, not a change on one machine.
    pub machine_differences: Vec<MachineDifference>,
    /// Where the noise between runs came from (absent in files written before it existed:
    /// within-run intervals only).
    #[serde(default)]
    pub noise: noise::NoiseSource,
    /// Per input after the first, when most sources moved together: that shift, named once.
    #[serde(default)]
    pub shifts: Vec<noise::Shift>,
    /// Runs set aside as disturbed as a whole (another job shared the machine), by input.
    #[serde(default)]
    pub disturbed: Vec<noise::Disturbed>,
    /// Per input after the first, each path whose sources moved together, with its one word.
    #[serde(default)]
    pub paths: Vec<path::PathWord>,
}

impl Comparison {
    /// Every `source (label)` decided slower than the first input.
    pub fn slower(&self) -> Vec<String> {
        let mut out = Vec::new();
        for r in &self.sources {
            for (k, c) in r.change.iter().enumerate() {
                if *c == Some(Change::Slower) {
                    let label = self.columns.get(k + 1).map_or("", |c| c.label.as_str());
                    out.push(format!("{} ({label})", r.id));
                }
            }
        }
        out
    }
}

/// The machine facts (CPU model, kernel release, hypervisor, clocksource) known in at least
/// two inputs that disagree. A fact one input does not carry is not a difference.
pub fn machine_differences(columns: &[MachineSummary]) -> Vec<MachineDifference> {
    type Fact = fn(&MachineSummary) -> Option<String>;
    let facts: [(&str, Fact); 4] = [
        ("cpu", |c| c.cpu.clone()),
        ("kernel", |c| c.kernel.clone()),
        ("hypervisor", |c| c.hypervisor.clone()),
        ("clocksource", |c| c.clocksource.clone()),
    ];
    facts
        .iter()
        .filter_map(|(field, get)| {
            let values: Vec<Option<String>> = columns.iter().map(get).collect();
            let known: Vec<&String> = values.iter().flatten().collect();
            known
                .windows(2)
                .any(|w| w[0] != w[1])
                .then(|| MachineDifference {
                    field: (*field).into(),
                    values,
                })
        })
        .collect()
}

/// The inputs that carry no core clock, so cannot be compared in cycles (by path).
pub fn without_cycles(inputs: &[Input]) -> Vec<String> {
    inputs
        .iter()
        .filter(|i| i.profile.core_clock.is_none())
        .map(|i| i.path.display().to_string())
        .collect()
}

/// How far apart two core clocks may be (relative) before the ns ratios are said to carry
/// the clock.
pub const CLOCK_AGREEMENT: f64 = 0.02;

impl Comparison {
    /// The inputs differ in their clocksource alone (same CPU, kernel and hypervisor): one
    /// machine, its clocksource switched.
    pub fn clocksource_only(&self) -> bool {
        !self.machine_differences.is_empty()
            && self
                .machine_differences
                .iter()
                .all(|d| d.field == "clocksource")
    }

    /// The core clocks of the inputs (first, then the one furthest from it), when they differ
    /// by more than [`CLOCK_AGREEMENT`]: the ns ratios then carry the clock's change.
    pub fn clock_apart(&self) -> Option<(f64, f64)> {
        let clocks: Vec<f64> = self.columns.iter().filter_map(|c| c.core_ghz).collect();
        let first = *clocks.first()?;
        let far = clocks
            .iter()
            .copied()
            .max_by(|a, b| (a - first).abs().total_cmp(&(b - first).abs()))?;
        ((far - first).abs() > CLOCK_AGREEMENT * first).then_some((first, far))
    }
}

/// Compares inputs with the noise between runs from `noise` profiles (three or more; else the
/// inputs' own `--repeat` runs, else the prior), a machine-wide shift named
/// ([`noise::apply`]) and one word per path ([`path::apply`]); `unit` fixes the unit of every
/// ratio (`--unit`), `None` lets compare choose it per source ([`mod@unit`]). An input whose
/// own point is a run set aside as disturbed is judged on the median of its other runs.
pub fn compare_with_noise(inputs: &[Input], unit: Option<Unit>, noise: &[Profile]) -> Comparison {
    let runs: Vec<Option<noise::Runs>> = inputs
        .iter()
        .map(|i| noise::Runs::of_profile(&i.profile))
        .collect();
    let inputs: Vec<Input> = inputs
        .iter()
        .zip(&runs)
        .map(|(i, r)| {
            r.as_ref()
                .map_or_else(|| i.clone(), |r| noise::runs::recentre(i, r))
        })
        .collect();
    let mut c = compare(&inputs, unit);
    noise::apply(&mut c, &inputs, &runs, noise);
    path::apply(&mut c);
    c
}

/// One source's ratio against the first input in `unit`: the ratio, its within-run interval
/// and the word that interval decides (`None` where a cost is missing).
fn ratio_of(base: Option<Estimate>, cost: Option<Estimate>) -> RatioOf {
    let ratio = match (cost, base) {
        (Some(c), Some(b)) if b.point > 0.0 => Some(c.point / b.point),
        _ => None,
    };
    let interval = cost
        .zip(base)
        .and_then(|(c, b)| ratio::ratio_interval(&b, &c));
    let change = cost.zip(base).map(|_| {
        interval
            .as_ref()
            .map_or(Change::NoChange, Change::of_interval)
    });
    (ratio, interval, change)
}

type RatioOf = (Option<f64>, Option<Estimate>, Option<Change>);

/// Compares inputs on their within-run intervals alone; the first is the baseline of the
/// ratios, each taken in `unit` (`--unit`) or, for `None`, in the unit compare chooses per
/// source ([`unit::judged_unit`]). Sources and verdicts appear in the order of their first
/// appearance.
pub fn compare(inputs: &[Input], unit: Option<Unit>) -> Comparison {
    let (ids, names) = first_appearances(inputs);
    let ghz: Vec<Option<f64>> = inputs
        .iter()
        .map(|i| i.profile.core_clock.as_ref().map(|c| c.ghz))
        .collect();
    let sources = ids
        .into_iter()
        .map(|id| source_row(inputs, unit, &ghz, id))
        .collect();
    let verdicts = names
        .into_iter()
        .map(|name| verdict_row(inputs, name))
        .collect();
    let columns: Vec<MachineSummary> = inputs.iter().map(MachineSummary::of).collect();
    Comparison {
        schema_version: 1,
        unit: unit.unwrap_or(Unit::Ns),
        unit_choice: if unit.is_some() {
            UnitChoice::Fixed
        } else {
            UnitChoice::Auto
        },
        machine_differences: machine_differences(&columns),
        columns,
        sources,
        verdicts,
        noise: noise::NoiseSource::default(),
        shifts: Vec::new(),
        disturbed: Vec::new(),
        paths: Vec::new(),
    }
}

/// The source ids and the verdict names of all inputs, each once, in the order of their first
/// appearance.
fn first_appearances(inputs: &[Input]) -> (Vec<String>, Vec<String>) {
    let mut ids: Vec<String> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for i in inputs {
        for s in &i.profile.sources {
            if !ids.contains(&s.id) {
                ids.push(s.id.clone());
            }
        }
        for (n, _) in &i.verdicts {
            if !names.contains(n) {
                names.push(n.clone());
            }
        }
    }
    (ids, names)
}

/// Source `id` across inputs: its costs, and per input after the first its ratio against the
/// first in the unit judged for it (`ghz`: each input's core clock), with that ratio's interval
/// in ns beside it where compare chose cycles. The noise and path columns start empty.
fn source_row(inputs: &[Input], unit: Option<Unit>, ghz: &[Option<f64>], id: String) -> SourceRow {
    let cost_ns: Vec<Option<Estimate>> = inputs.iter().map(|i| i.profile.cost_ns(&id)).collect();
    let cycles: Vec<Option<Estimate>> = inputs
        .iter()
        .map(|i| i.profile.source(&id).and_then(|s| s.cost_cycles))
        .collect();
    let pick = |u: Unit, k: usize| match u {
        Unit::Ns => cost_ns[k],
        Unit::Cycles => cycles[k],
    };
    let judged_unit: Vec<Unit> = (1..inputs.len())
        .map(|k| {
            let has = cycles[0].is_some() && cycles[k].is_some();
            unit::judged_unit(unit, &id, ghz[0], ghz[k], has)
        })
        .collect();
    let mut ratio_to_first = Vec::new();
    let mut ratio_interval = Vec::new();
    let mut change = Vec::new();
    let mut ns_ratio_interval = Vec::new();
    for (k, u) in (1..inputs.len()).zip(&judged_unit) {
        let (r, i, c) = ratio_of(pick(*u, 0), pick(*u, k));
        ratio_to_first.push(r);
        ratio_interval.push(i);
        change.push(c);
        let beside = (unit.is_none() && *u == Unit::Cycles)
            .then(|| ratio_of(cost_ns[0], cost_ns[k]).1)
            .flatten();
        ns_ratio_interval.push(beside);
    }
    if ns_ratio_interval.iter().all(Option::is_none) {
        ns_ratio_interval.clear();
    }
    let ratio_plus_minus = ratio_interval
        .iter()
        .map(|r| r.as_ref().map(ratio::plus_minus))
        .collect();
    let cost_cycles = if cycles.iter().any(Option::is_some) {
        cycles.clone()
    } else {
        Vec::new()
    };
    SourceRow {
        id,
        cost_ns,
        cost_cycles,
        ratio_to_first,
        judged_unit,
        ns_ratio_interval,
        ratio_plus_minus,
        change,
        ratio_interval,
        noise_pct: Vec::new(),
        measured_noise_pct: Vec::new(),
        path_word: Vec::new(),
        judged_interval: Vec::new(),
        with_machine: Vec::new(),
        lkp: Vec::new(),
    }
}

/// Verdict `name` across inputs, and whether the inputs that decide it disagree.
fn verdict_row(inputs: &[Input], name: String) -> VerdictRow {
    let holds: Vec<Option<bool>> = inputs
        .iter()
        .map(|i| i.verdicts.iter().find(|(n, _)| *n == name).map(|(_, h)| *h))
        .collect();
    let known: Vec<bool> = holds.iter().flatten().copied().collect();
    let differs = known.windows(2).any(|w| w[0] != w[1]);
    VerdictRow {
        name,
        holds,
        differs,
    }
}

impl MachineSummary {
    /// The summary of input `i`'s machine.
    fn of(i: &Input) -> MachineSummary {
        let m = &i.profile.machine;
        MachineSummary {
            label: i.label.clone(),
            path: i.path.display().to_string(),
            cpu: m.cpu_model.clone(),
            kernel: m.kernel_release.clone(),
            clocksource: m.clocksource.current.clone(),
            hypervisor: m.hypervisor_signature.clone(),
            emulate_trap: i.profile.emulate_trap,
            precise_read_ns: i.profile.derived.precise_read_ns,
            core_ghz: i.profile.core_clock.as_ref().map(|c| c.ghz),
        }
    }
}

#[cfg(test)]
mod tests;
