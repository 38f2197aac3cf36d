//! The `simulate` result models (the JSON contract in docs/schema.md) and their table and
//! Markdown forms.

use std::collections::BTreeMap;

use serde::Serialize;

use super::costs::CostSources;
use super::estimate::Estimate;
use crate::export::table::{Align, Table};
use crate::export::{self, Exporter, Format};
use crate::probe::Profile;
use crate::trace::strace::import::ImportSummary;

/// Version of the `simulate` JSON.
pub const SIMULATE_SCHEMA_VERSION: u32 = 1;

/// Which profile the costs come from.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ProfileNote {
    /// The file as given, or `quick probe taken now`.
    pub origin: String,
    pub created_unix_s: Option<u64>,
    pub cpu_model: Option<String>,
    pub kernel_release: Option<String>,
    pub clocksource: Option<String>,
    pub hypervisor: Option<String>,
}

impl ProfileNote {
    pub fn new(origin: String, p: Option<&Profile>) -> Self {
        ProfileNote {
            origin,
            created_unix_s: p.map(|p| p.created_unix_s),
            cpu_model: p.and_then(|p| p.machine.cpu_model.clone()),
            kernel_release: p.and_then(|p| p.machine.kernel_release.clone()),
            clocksource: p.and_then(|p| p.machine.clocksource.current.clone()),
            hypervisor: p.and_then(|p| p.machine.hypervisor_signature.clone()),
        }
    }
}

/// The costs one model was simulated with.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CostsOut {
    pub precise_read_ns: f64,
    pub coarse_read_ns: f64,
    pub update_ns: f64,
    pub tick_ns: f64,
    /// Cost of one iteration without timestamp work.
    pub base_ns_per_op: f64,
    pub sources: CostSources,
    pub base_source: String,
}

/// Estimates of one scenario under one model.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ModelReport {
    pub schema_version: u32,
    pub scenario: String,
    pub model: String,
    pub stock_policy: String,
    pub tasks: u32,
    pub iterations: u64,
    pub profile: ProfileNote,
    pub costs: CostsOut,
    pub estimates: Vec<Estimate>,
    pub notes: Vec<String>,
    /// What the strace import saw (`simulate --strace` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strace: Option<ImportSummary>,
}

/// One policy at one swept value.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SweepEstimate {
    pub policy: String,
    pub ns_per_op: f64,
    pub speedup: f64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SweepPoint {
    pub value: f64,
    pub estimates: Vec<SweepEstimate>,
}

/// The swept value at which a policy's speedup reaches `break_even_speedup` (log-linear
/// interpolation between points; `null` when it never does within the range).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct BreakEven {
    pub policy: String,
    pub value: Option<f64>,
}

/// Speedup against one swept setting.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SweepReport {
    pub schema_version: u32,
    pub scenario: String,
    pub model: String,
    pub stock_policy: String,
    pub parameter: String,
    pub break_even_speedup: f64,
    pub profile: ProfileNote,
    pub costs: CostsOut,
    pub points: Vec<SweepPoint>,
    pub break_even: Vec<BreakEven>,
}

/// The per-read cost a published stock/patched pair implies.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ImpliedReport {
    pub schema_version: u32,
    pub scenario: String,
    pub model: String,
    pub stock_policy: String,
    pub patched_policy: String,
    pub stock_ops_per_sec: f64,
    pub patched_ops_per_sec: f64,
    pub published_speedup: f64,
    pub stock_reads_per_op: BTreeMap<String, f64>,
    pub patched_reads_per_op: BTreeMap<String, f64>,
    /// The implied cost of one counter read; `null` when the two policies take the same
    /// number of counter reads (the pair says nothing about it).
    pub precise_read_ns: Option<f64>,
    pub base_ns_per_op: Option<f64>,
    pub verdict: String,
    pub reasoning: Vec<String>,
    pub profile: ProfileNote,
    pub costs: CostsOut,
}

/// Everything `simulate` prints.
#[derive(Debug, Clone)]
pub enum Output {
    Models(Vec<ModelReport>),
    Sweeps(Vec<SweepReport>),
    Implied(Vec<ImpliedReport>),
    Validation(super::validate::ValidationReport),
}

fn one_or_many<T: Serialize>(v: &[T]) -> anyhow::Result<Vec<u8>> {
    if v.len() == 1 {
        export::json(&v[0])
    } else {
        export::json(&v)
    }
}

impl Exporter for Output {
    fn export(&self, format: Format) -> anyhow::Result<Vec<u8>> {
        if format == Format::Json {
            return match self {
                Output::Models(v) => one_or_many(v),
                Output::Sweeps(v) => one_or_many(v),
                Output::Implied(v) => one_or_many(v),
                Output::Validation(v) => export::json(v),
            };
        }
        let md = format == Format::Markdown;
        let render = |t: &Table| if md { t.markdown() } else { t.text() };
        let mut out = String::new();
        let blocks: Vec<String> = match self {
            Output::Models(v) => v.iter().map(|r| model_text(r, md, &render)).collect(),
            Output::Sweeps(v) => v.iter().map(|r| sweep_text(r, md, &render)).collect(),
            Output::Implied(v) => v.iter().map(|r| implied_text(r, md)).collect(),
            Output::Validation(v) => vec![v.text(format)],
        };
        out += &blocks.join("\n");
        Ok(out.into_bytes())
    }
}

/// `1.5 us`, `4 ms`, `1 s`.
pub fn human_ns(ns: f64) -> String {
    if !ns.is_finite() {
        return "n/a".into();
    }
    let (v, unit) = if ns >= 1e9 {
        (ns / 1e9, "s")
    } else if ns >= 1e6 {
        (ns / 1e6, "ms")
    } else if ns >= 1e3 {
        (ns / 1e3, "us")
    } else {
        (ns, "ns")
    };
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s} {unit}")
}

fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

fn heading(title: &str, md: bool) -> String {
    if md {
        format!("### {title}\n\n")
    } else {
        format!("{title}\n")
    }
}

fn costs_lines(c: &CostsOut, p: &ProfileNote, md: bool) -> String {
    let bullet = if md { "- " } else { "  " };
    let mut s = String::new();
    s += &format!(
        "{bullet}precise read {} ({}); coarse read {} ({})\n",
        human_ns(c.precise_read_ns),
        c.sources.precise_read,
        human_ns(c.coarse_read_ns),
        c.sources.coarse_read
    );
    s += &format!(
        "{bullet}tick {} ({}); inode update {} ({})\n",
        human_ns(c.tick_ns),
        c.sources.tick,
        human_ns(c.update_ns),
        c.sources.update
    );
    s += &format!(
        "{bullet}base {} per op ({})\n",
        human_ns(c.base_ns_per_op),
        c.base_source
    );
    let machine: Vec<String> = [&p.cpu_model, &p.kernel_release, &p.clocksource]
        .into_iter()
        .flatten()
        .cloned()
        .collect();
    s += &format!(
        "{bullet}profile: {}{}\n",
        p.origin,
        if machine.is_empty() {
            String::new()
        } else {
            format!(" ({})", machine.join(", "))
        }
    );
    if md {
        s += "\n";
    }
    s
}

fn model_text(r: &ModelReport, md: bool, render: &dyn Fn(&Table) -> String) -> String {
    let mut s = heading(
        &format!(
            "{} under {} (stock {}), {} task(s), {} iterations",
            r.scenario, r.model, r.stock_policy, r.tasks, r.iterations
        ),
        md,
    );
    s += &costs_lines(&r.costs, &r.profile, md);
    let mut t = Table::new(&[
        ("policy", Align::Left),
        ("ns/op", Align::Right),
        ("ops/s", Align::Right),
        ("speedup", Align::Right),
        ("ts share", Align::Right),
        ("coarse/op", Align::Right),
        ("counter/op", Align::Right),
        ("updates/op", Align::Right),
        ("resolution", Align::Right),
        ("equal succ", Align::Right),
        ("cross equal", Align::Right),
        ("cross inv", Align::Right),
        ("max stale", Align::Right),
    ]);
    for e in &r.estimates {
        let a = &e.accuracy;
        t.row(vec![
            e.policy.clone(),
            format!("{:.1}", e.ns_per_op),
            format!("{:.0}", e.ops_per_sec),
            format!("{:.3}x", e.speedup),
            pct(e.timestamp_share),
            format!("{:.3}", e.reads_per_op["coarse"]),
            format!("{:.3}", e.reads_per_op["counter"]),
            format!("{:.3}", e.inode_updates_per_op),
            human_ns(a.resolution_ns),
            pct(a.equal_successive_share),
            pct(a.cross_inode_equal_share),
            pct(a.cross_inode_inverted_share),
            human_ns(a.max_staleness_ns),
        ]);
    }
    s += &render(&t);
    for n in &r.notes {
        s += &format!("{}note: {n}\n", if md { "\n" } else { "" });
    }
    s
}

fn sweep_text(r: &SweepReport, md: bool, render: &dyn Fn(&Table) -> String) -> String {
    let mut s = heading(
        &format!(
            "{} under {}: speedup against {} (stock {})",
            r.scenario, r.model, r.parameter, r.stock_policy
        ),
        md,
    );
    s += &costs_lines(&r.costs, &r.profile, md);
    let policies: Vec<&str> = r
        .points
        .first()
        .map(|p| p.estimates.iter().map(|e| e.policy.as_str()).collect())
        .unwrap_or_default();
    let mut headers = vec![(r.parameter.as_str(), Align::Right)];
    headers.extend(policies.iter().map(|p| (*p, Align::Right)));
    let mut t = Table::new(&headers);
    for p in &r.points {
        let mut row = vec![format!("{}", p.value)];
        row.extend(p.estimates.iter().map(|e| format!("{:.3}x", e.speedup)));
        t.row(row);
    }
    s += &render(&t);
    for b in &r.break_even {
        s += &format!(
            "{}break-even ({:.2}x) for {}: {}\n",
            if md { "\n" } else { "" },
            r.break_even_speedup,
            b.policy,
            match b.value {
                Some(v) => format!("{} = {}", r.parameter, human_ns(v)),
                None => "not reached in the swept range".into(),
            }
        );
    }
    s
}

fn implied_text(r: &ImpliedReport, md: bool) -> String {
    let mut s = heading(
        &format!(
            "{} under {}: {} -> {} ops/s ({:.3}x), {} -> {}",
            r.scenario,
            r.model,
            r.stock_ops_per_sec,
            r.patched_ops_per_sec,
            r.published_speedup,
            r.stock_policy,
            r.patched_policy
        ),
        md,
    );
    let bullet = if md { "- " } else { "  " };
    s += &format!(
        "{bullet}solving for the counter read; known: coarse read {} ({}), tick {} ({}), \
         timestamp store {}\n",
        human_ns(r.costs.coarse_read_ns),
        r.costs.sources.coarse_read,
        human_ns(r.costs.tick_ns),
        r.costs.sources.tick,
        human_ns(r.costs.update_ns),
    );
    s += &format!("{bullet}profile: {}\n", r.profile.origin);
    let fmt_reads = |m: &BTreeMap<String, f64>| {
        m.iter()
            .map(|(k, v)| format!("{k} {v:.3}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    s += &format!(
        "{bullet}reads per op: stock {}; patched {}\n",
        fmt_reads(&r.stock_reads_per_op),
        fmt_reads(&r.patched_reads_per_op)
    );
    s += &format!(
        "{bullet}implied precise read: {}; implied base: {}\n",
        r.precise_read_ns
            .map(human_ns)
            .unwrap_or_else(|| "not identifiable".into()),
        r.base_ns_per_op
            .map(human_ns)
            .unwrap_or_else(|| "not identifiable".into())
    );
    s += &format!("{bullet}verdict: {}\n", r.verdict);
    for line in &r.reasoning {
        s += &format!("{bullet}{line}\n");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_units() {
        assert_eq!(human_ns(4e6), "4 ms");
        assert_eq!(human_ns(16.37), "16.37 ns");
        assert_eq!(human_ns(1500.0), "1.5 us");
        assert_eq!(human_ns(1e9), "1 s");
    }
}
