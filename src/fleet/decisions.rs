//! `fleet report`: the stored machines in groups (by hypervisor, clocksource, CPU, kernel or
//! label), and per group the spread of what a timestamp costs, the share of machines where
//! each verdict holds, and each knob setting's speedup over stock replayed with each
//! machine's own costs: the table a default is chosen from.
//!
//! A machine is a distinct `host_id`; a document without one is a machine of its own. Of a
//! machine's documents, its costs come from the newest probe or report (a detect's profile when
//! it has neither), its verdicts from the newest detect or report, and its group (hypervisor,
//! clocksource, CPU, kernel, label) from its newest document of any kind; newest by the
//! document's `created_unix_s`, then by the order the store received them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::normalise::{Facts, Kind};
use super::replay::{self, Speedups};
use super::store::Row;

/// The version of `fleet report --json`.
/// (2: `machines` counts hosts, `documents` the documents they were made from).
pub const FLEET_REPORT_SCHEMA_VERSION: u32 = 2;

/// What rows are grouped by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GroupBy {
    Hypervisor,
    Clocksource,
    Cpu,
    Kernel,
    Label,
}

impl GroupBy {
    pub fn name(self) -> &'static str {
        match self {
            GroupBy::Hypervisor => "hypervisor",
            GroupBy::Clocksource => "clocksource",
            GroupBy::Cpu => "cpu",
            GroupBy::Kernel => "kernel",
            GroupBy::Label => "label",
        }
    }

    fn value(self, m: &Machine) -> String {
        let r = m.newest;
        let v = match self {
            GroupBy::Hypervisor => r.facts.hypervisor.clone(),
            GroupBy::Clocksource => r.facts.clocksource.clone(),
            GroupBy::Cpu => r.facts.cpu_model.clone(),
            GroupBy::Kernel => r.facts.kernel.clone(),
            GroupBy::Label => r.label.clone(),
        };
        v.unwrap_or_else(|| "unknown".into())
    }
}

/// One machine: its documents, and which of them speaks for it.
#[derive(Debug, Clone, Copy)]
pub struct Machine<'a> {
    /// Its newest document (its group).
    pub newest: &'a Row,
    /// Its newest probe or report, else its newest detect (its costs).
    pub costs: &'a Row,
    /// Its newest detect or report (its verdicts).
    pub verdicts: Option<&'a Row>,
    pub documents: usize,
}

/// The machines `rows` come from, in the order of each one's first document.
pub fn machines(rows: &[Row]) -> Vec<Machine<'_>> {
    fn pick<'a>(slot: &mut Option<&'a Row>, r: &'a Row) {
        let age = |x: &Row| (x.facts.created_unix_s, x.id);
        if slot.is_none_or(|s| age(r) > age(s)) {
            *slot = Some(r);
        }
    }
    /// One machine's newest document of each sort, and how many it has.
    #[derive(Default)]
    struct Seen<'a> {
        any: Option<&'a Row>,
        probe_or_report: Option<&'a Row>,
        detect: Option<&'a Row>,
        detect_or_report: Option<&'a Row>,
        documents: usize,
    }
    let mut index: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let mut seen: Vec<Seen> = Vec::new();
    for r in rows {
        let at = match r.facts.host_id.as_deref() {
            Some(h) => *index.entry(h).or_insert_with(|| {
                seen.push(Seen::default());
                seen.len() - 1
            }),
            None => {
                seen.push(Seen::default());
                seen.len() - 1
            }
        };
        let m = &mut seen[at];
        pick(&mut m.any, r);
        match r.kind {
            Kind::Detect => {
                pick(&mut m.detect, r);
                pick(&mut m.detect_or_report, r);
            }
            Kind::Report => {
                pick(&mut m.probe_or_report, r);
                pick(&mut m.detect_or_report, r);
            }
            // A probe: the store holds probes, detections and reports only.
            _ => pick(&mut m.probe_or_report, r),
        }
        m.documents += 1;
    }
    seen.into_iter()
        .filter_map(|m| {
            let newest = m.any?;
            Some(Machine {
                newest,
                costs: m.probe_or_report.or(m.detect).unwrap_or(newest),
                verdicts: m.detect_or_report,
                documents: m.documents,
            })
        })
        .collect()
}

/// What `fleet report` is asked.
#[derive(Debug, Clone)]
pub struct ReportConfig {
    pub by: Vec<GroupBy>,
    /// Bundled scenario names to replay.
    pub scenarios: Vec<String>,
}

/// p10, median and p90 of one figure over a group's machines that have it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Spread {
    /// Machines with a value.
    pub machines: usize,
    pub p10: Option<f64>,
    pub median: Option<f64>,
    pub p90: Option<f64>,
}

impl Spread {
    fn of(mut xs: Vec<f64>) -> Spread {
        xs.retain(|x| x.is_finite());
        xs.sort_by(f64::total_cmp);
        let q = |p| crate::stats::quantile_sorted(&xs, p);
        Spread {
            machines: xs.len(),
            p10: q(0.1),
            median: q(0.5),
            p90: q(0.9),
        }
    }
}

/// One cost's spread.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CostSpread {
    /// `precise_read_ns`, `vdso_clock_gettime_ns`, `syscall_clock_gettime_ns`, `rdtsc_ns`.
    pub name: String,
    #[serde(flatten)]
    pub spread: Spread,
}

/// How many machines of a group carry a verdict, and how many say yes, no or cannot tell.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct VerdictShare {
    pub name: String,
    pub machines: usize,
    pub yes: usize,
    pub no: usize,
    pub inconclusive: usize,
    /// `yes / machines`.
    pub holds_share: f64,
}

/// One policy's speedup over stock across a group's machines.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SpeedupSpread {
    pub scenario: String,
    pub model: String,
    pub policy: String,
    pub stock: bool,
    #[serde(flatten)]
    pub spread: Spread,
}

/// One group.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Group {
    /// Grouping field → value (`unknown` where a document does not say).
    pub key: BTreeMap<String, String>,
    /// The key as one line: `hypervisor=KVM clocksource=tsc`, or `all` when ungrouped.
    pub name: String,
    pub machines: usize,
    pub costs: Vec<CostSpread>,
    pub verdicts: Vec<VerdictShare>,
    pub speedups: Vec<SpeedupSpread>,
}

/// The decision table.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FleetReport {
    pub schema_version: u32,
    pub by: Vec<GroupBy>,
    /// Distinct hosts (a document without a `host_id` counts as one).
    pub machines: usize,
    /// The documents they were made from.
    pub documents: usize,
    pub scenarios: Vec<String>,
    pub models: Vec<String>,
    /// How the replays were priced and bounded.
    pub replay_note: String,
    /// Distinct (rounded) cost sets replayed.
    pub replays: usize,
    pub groups: Vec<Group>,
}

/// How one cost is read from a machine's facts.
type Get = fn(&Facts) -> Option<f64>;

/// The costs a group's spread is taken of, by name.
const COSTS: [(&str, Get); 4] = [
    ("precise_read_ns", |f| f.precise_read_ns),
    ("vdso_clock_gettime_ns", |f| f.vdso_ns),
    ("syscall_clock_gettime_ns", |f| f.syscall_ns),
    ("rdtsc_ns", |f| f.rdtsc_ns),
];

fn verdicts(machines: &[&Machine]) -> Vec<VerdictShare> {
    let mut by: BTreeMap<&str, [usize; 3]> = BTreeMap::new();
    for m in machines {
        let Some(r) = m.verdicts else { continue };
        for (name, state) in r.facts.verdicts.iter().flatten() {
            let c = by.entry(name).or_default();
            match state.as_str() {
                "yes" => c[0] += 1,
                "no" => c[1] += 1,
                _ => c[2] += 1,
            }
        }
    }
    by.into_iter()
        .map(|(name, [yes, no, inconclusive])| {
            let machines = yes + no + inconclusive;
            VerdictShare {
                name: name.to_string(),
                machines,
                yes,
                no,
                inconclusive,
                holds_share: yes as f64 / machines.max(1) as f64,
            }
        })
        .collect()
}

fn speedups(machines: &[&Machine], s: &Speedups) -> Vec<SpeedupSpread> {
    let mut out = Vec::new();
    for (si, l) in s.loops.iter().enumerate() {
        for (mi, m) in s.models.iter().enumerate() {
            let policies = m.policies();
            let mut per: Vec<Vec<f64>> = vec![Vec::with_capacity(machines.len()); policies.len()];
            for m in machines {
                if let Some(xs) = s.of(&m.costs.facts, si, mi) {
                    for (v, x) in per.iter_mut().zip(xs) {
                        v.push(*x);
                    }
                }
            }
            for (p, xs) in policies.iter().zip(per) {
                out.push(SpeedupSpread {
                    scenario: l.name.clone(),
                    model: m.label(),
                    policy: p.name(),
                    stock: p.stock,
                    spread: Spread::of(xs),
                });
            }
        }
    }
    out
}

/// Groups `rows` and fills each group's table.
pub fn report(rows: &[Row], cfg: &ReportConfig) -> crate::error::Result<FleetReport> {
    let loops = cfg
        .scenarios
        .iter()
        .map(|s| replay::scenario(s))
        .collect::<crate::error::Result<Vec<_>>>()?;
    let all = machines(rows);
    let facts: Vec<&Facts> = all.iter().map(|m| &m.costs.facts).collect();
    let speedups_all = Speedups::new(loops, &facts);
    let mut groups: BTreeMap<Vec<String>, Vec<&Machine>> = BTreeMap::new();
    for m in &all {
        let key = cfg.by.iter().map(|b| b.value(m)).collect();
        groups.entry(key).or_default().push(m);
    }
    let groups = groups
        .into_iter()
        .map(|(key, members)| {
            let name = if cfg.by.is_empty() {
                "all".to_string()
            } else {
                cfg.by
                    .iter()
                    .zip(&key)
                    .map(|(b, v)| format!("{}={v}", b.name()))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            Group {
                key: cfg
                    .by
                    .iter()
                    .zip(key)
                    .map(|(b, v)| (b.name().to_string(), v))
                    .collect(),
                name,
                machines: members.len(),
                costs: COSTS
                    .iter()
                    .map(|(n, get)| CostSpread {
                        name: (*n).into(),
                        spread: Spread::of(
                            members.iter().filter_map(|m| get(&m.costs.facts)).collect(),
                        ),
                    })
                    .collect(),
                verdicts: verdicts(&members),
                speedups: speedups(&members, &speedups_all),
            }
        })
        .collect();
    Ok(FleetReport {
        schema_version: FLEET_REPORT_SCHEMA_VERSION,
        by: cfg.by.clone(),
        machines: all.len(),
        documents: rows.len(),
        scenarios: cfg.scenarios.clone(),
        models: speedups_all.models.iter().map(|m| m.label()).collect(),
        replay_note: "each machine's costs (as `simulate --profile` prices them) rounded to two \
                      significant figures; each distinct set replayed once; a machine without \
                      a cost a model needs is left out of that model's spread"
            .into(),
        replays: speedups_all.replays(),
        groups,
    })
}
