//! `--openmetrics`: the results that describe a machine's clock health — a probe profile, a
//! detection, a report — as Prometheus metrics, so node_exporter's textfile collector serves
//! them and a fleet's Prometheus can graph and alert on them (docs/fleet.md). The metric names
//! and labels are a contract, listed in docs/schema.md; [`FAMILIES`] is every one.
//!
//! # Choices
//!
//! - **One text for both parsers** (`openmetrics/text.rs`): the Prometheus text format kept to what
//!   OpenMetrics also accepts, ending in `# EOF`.
//! - **Every series carries `command`** (`probe`, `detect`, `report`): node_exporter merges
//!   every `*.prom` file of its directory into one exposition and refuses a series two files
//!   both define, so `tscope detect` and `tscope report` output can sit side by side.
//! - **An estimate is three gauges** (`…_seconds`, `…_lower_seconds`, `…_upper_seconds`), not
//!   one gauge with a `bound` label: an aggregation over every label of one gauge (`avg by
//!   (source)` across a fleet) must stay meaningful, and an average of a point with its bounds
//!   is not.
//! - **A verdict is one-hot over its three states** (`tscope_verdict{state="yes"|"no"|
//!   "inconclusive"}`, exactly one 1), Prometheus's enum pattern (node_exporter's systemd
//!   unit states): the set of series never changes, so `== 1` on `state="yes"` is the 0/1
//!   verdict, and a change of state is a change of value, not a new series.
//! - **A fact not published is a label left out**, never a guess: Prometheus reads an empty
//!   label as an absent one.

mod text;

use crate::cpuid::hypervisor::vendor_of;
use crate::detect::verdict::{Verdict, VerdictState};
use crate::detect::Detection;
use crate::probe::Profile;
use crate::report::Report;
use crate::stats::Estimate;
pub use text::{escape, Exposition, Family};

/// Which tscope wrote the metrics, and whether a what-if was in force.
pub const RUN_INFO: Family = Family {
    name: "tscope_run_info",
    help: "The tscope that measured (version), and whether RDTSC was trapped by tscope \
           itself (emulate_trap, a what-if: its verdicts are not the machine's). Always 1.",
};
/// When the measurement was taken.
pub const RUN_TIMESTAMP: Family = Family {
    name: "tscope_run_timestamp_seconds",
    help: "Unix time at which the measurement started.",
};
/// The machine facts, as labels.
pub const MACHINE_INFO: Family = Family {
    name: "tscope_machine_info",
    help: "The machine as labels: CPU vendor, brand, family, model, stepping and microcode, \
           hypervisor (none on bare metal), kernel release, current and available \
           clocksources, HZ as the coarse clocks imply it, tscope's host ID. A fact not \
           published is left out. Always 1.",
};
/// Whether a source could be measured.
pub const SOURCE_SUPPORTED: Family = Family {
    name: "tscope_source_supported",
    help: "1 when this machine could measure the timestamp source, 0 when it could not.",
};
/// A source's cost, point estimate.
pub const SOURCE_COST: Family = Family {
    name: "tscope_source_cost_seconds",
    help: "Cost of one read of the timestamp source: the point estimate (regression slope).",
};
/// The lower bound of a source's cost.
pub const SOURCE_COST_LOWER: Family = Family {
    name: "tscope_source_cost_lower_seconds",
    help: "Lower bound of the 95 percent interval of tscope_source_cost_seconds.",
};
/// The upper bound of a source's cost.
pub const SOURCE_COST_UPPER: Family = Family {
    name: "tscope_source_cost_upper_seconds",
    help: "Upper bound of the 95 percent interval of tscope_source_cost_seconds.",
};
/// The kernel-side cost of a precise timestamp.
pub const PRECISE_READ: Family = Family {
    name: "tscope_precise_read_seconds",
    help: "Kernel-side cost of one precise clocksource read: syscall realtime minus syscall \
           realtime_coarse, point estimate. What a precise file timestamp costs.",
};
/// Its lower bound.
pub const PRECISE_READ_LOWER: Family = Family {
    name: "tscope_precise_read_lower_seconds",
    help: "Lower bound of the 95 percent interval of tscope_precise_read_seconds.",
};
/// Its upper bound.
pub const PRECISE_READ_UPPER: Family = Family {
    name: "tscope_precise_read_upper_seconds",
    help: "Upper bound of the 95 percent interval of tscope_precise_read_seconds.",
};
/// Each verdict, one-hot over its states.
pub const VERDICT: Family = Family {
    name: "tscope_verdict",
    help: "Each verdict, one-hot over its states: 1 on the state it is in (yes, no or \
           inconclusive), 0 on the other two. vdso_fallback has one verdict per clock.",
};
/// The knob's best speedup over stock.
pub const KNOB_BEST_SPEEDUP: Family = Family {
    name: "tscope_knob_best_speedup_ratio",
    help: "Ops per second of the fastest timestamp policy over the stock one, per scenario \
           and kernel model, replayed with this machine's costs (1 when stock is fastest or \
           nothing beats it by more than 0.1 percent).",
};

/// Every metric family tscope writes, in the order a report writes them.
pub const FAMILIES: [Family; 12] = [
    RUN_INFO,
    RUN_TIMESTAMP,
    MACHINE_INFO,
    SOURCE_SUPPORTED,
    SOURCE_COST,
    SOURCE_COST_LOWER,
    SOURCE_COST_UPPER,
    PRECISE_READ,
    PRECISE_READ_LOWER,
    PRECISE_READ_UPPER,
    VERDICT,
    KNOB_BEST_SPEEDUP,
];

/// The machine facts [`MACHINE_INFO`] carries, from whichever result has them.
#[derive(Debug, Default)]
struct MachineLabels<'a> {
    cpu_vendor: Option<&'a str>,
    cpu: Option<&'a str>,
    cpu_family: Option<u32>,
    cpu_model: Option<u32>,
    cpu_stepping: Option<u32>,
    microcode: Option<&'a str>,
    hypervisor: String,
    kernel: Option<&'a str>,
    clocksource: Option<&'a str>,
    clocksources_available: String,
    hz: Option<u32>,
    /// `machine.host_id`: the ID `fleet` counts a machine by, to join the two.
    host_id: Option<&'a str>,
}

impl MachineLabels<'_> {
    fn write(&self, x: &mut Exposition) {
        let n = |v: Option<u32>| v.map(|v| v.to_string()).unwrap_or_default();
        let (family, model, stepping, hz) = (
            n(self.cpu_family),
            n(self.cpu_model),
            n(self.cpu_stepping),
            n(self.hz),
        );
        let s = |v: Option<&str>| v.unwrap_or("").to_string();
        x.sample(
            MACHINE_INFO,
            &[
                ("cpu_vendor", &s(self.cpu_vendor)),
                ("cpu", &s(self.cpu)),
                ("cpu_family", &family),
                ("cpu_model", &model),
                ("cpu_stepping", &stepping),
                ("microcode", &s(self.microcode)),
                ("hypervisor", &self.hypervisor),
                ("kernel", &s(self.kernel)),
                ("clocksource", &s(self.clocksource)),
                ("clocksources_available", &self.clocksources_available),
                ("hz", &hz),
                ("host_id", &s(self.host_id)),
            ],
            1.0,
        );
    }
}

/// `tscope probe --openmetrics`.
pub fn profile(p: &Profile) -> String {
    let mut x = Exposition::new("probe");
    run(
        &mut x,
        tool_version(&p.tool),
        p.emulate_trap,
        p.created_unix_s,
    );
    let m = &p.machine;
    MachineLabels {
        cpu_vendor: m.cpu_vendor.as_deref(),
        cpu: m.cpu_model.as_deref(),
        cpu_family: m.cpu_family,
        cpu_model: m.cpu_model_number,
        cpu_stepping: None,
        microcode: m.microcode.as_deref(),
        hypervisor: match (&m.hypervisor_signature, m.hypervisor_bit) {
            (_, false) => "none".into(),
            (Some(sig), true) => vendor_of(sig),
            (None, true) => "unknown".into(),
        },
        kernel: m.kernel_release.as_deref(),
        clocksource: m.clocksource.current.as_deref(),
        clocksources_available: m.clocksource.available.join(" "),
        hz: p.implied_hz(),
        host_id: m.host_id.as_deref(),
    }
    .write(&mut x);
    sources(&mut x, p);
    x.text()
}

/// `tscope detect --openmetrics`: the verdicts, and the timings they used.
pub fn detection(d: &Detection) -> String {
    let mut x = Exposition::new("detect");
    let p = &d.profile;
    run(
        &mut x,
        tool_version(&d.tool),
        d.emulate_trap,
        p.created_unix_s,
    );
    let (f, cpu) = (&d.facts, &d.facts.cpu);
    MachineLabels {
        cpu_vendor: cpu.vendor.as_deref(),
        cpu: cpu.brand.as_deref().or(p.machine.cpu_model.as_deref()),
        cpu_family: cpu.family,
        cpu_model: cpu.model,
        cpu_stepping: cpu.stepping,
        microcode: p.machine.microcode.as_deref(),
        hypervisor: match (&f.hypervisor.vendor, f.hypervisor.present) {
            (_, false) => "none".into(),
            (Some(v), true) => v.clone(),
            (None, true) => "unknown".into(),
        },
        kernel: f.kernel_release.as_deref(),
        clocksource: f.clocksource.current.as_deref(),
        clocksources_available: f.clocksource.available.join(" "),
        hz: p.implied_hz(),
        host_id: p.machine.host_id.as_deref(),
    }
    .write(&mut x);
    sources(&mut x, p);
    verdicts(&mut x, &d.verdicts);
    x.text()
}

/// `tscope report --export-openmetrics` and `tscope show report.json --openmetrics`: the
/// profile, the verdicts and the knob's best setting per scenario and model.
pub fn report(r: &Report) -> String {
    let mut x = Exposition::new("report");
    let (e, p) = (&r.environment, &r.profile);
    run(&mut x, &e.tscope_version, p.emulate_trap, p.created_unix_s);
    let cs = &r.detect.facts.clocksource;
    MachineLabels {
        cpu_vendor: e.cpu_vendor.as_deref(),
        cpu: e.cpu_brand.as_deref(),
        cpu_family: e.cpu_family,
        cpu_model: e.cpu_model,
        cpu_stepping: e.cpu_stepping,
        microcode: e.microcode.as_deref(),
        hypervisor: e.hypervisor.clone(),
        kernel: e.kernel_release.as_deref(),
        clocksource: e.clocksource.as_deref(),
        clocksources_available: cs.available.join(" "),
        hz: e.hz,
        host_id: p.machine.host_id.as_deref(),
    }
    .write(&mut x);
    sources(&mut x, p);
    verdicts(&mut x, &r.detect.verdicts);
    for m in &r.simulation {
        let Some((stock, best)) = super::knob::stock_and_best(m) else {
            continue;
        };
        if stock.speedup > 0.0 {
            x.sample(
                KNOB_BEST_SPEEDUP,
                &[
                    ("scenario", &m.scenario),
                    ("model", &m.model),
                    ("stock", &stock.policy),
                    ("policy", &best.policy),
                ],
                best.speedup / stock.speedup,
            );
        }
    }
    x.text()
}

/// `0.1.0` from `tscope 0.1.0`.
fn tool_version(tool: &str) -> &str {
    tool.strip_prefix("tscope ").unwrap_or(tool)
}

fn run(x: &mut Exposition, version: &str, emulate_trap: bool, created_unix_s: u64) {
    x.sample(
        RUN_INFO,
        &[
            ("version", version),
            ("emulate_trap", text::flag(emulate_trap)),
        ],
        1.0,
    );
    x.sample(RUN_TIMESTAMP, &[], created_unix_s as f64);
}

/// An estimate in nanoseconds as its three gauges in seconds.
fn estimate(x: &mut Exposition, families: [Family; 3], labels: &[(&str, &str)], ns: Estimate) {
    x.sample(families[0], labels, ns.point * 1e-9);
    x.sample(families[1], labels, ns.lower * 1e-9);
    x.sample(families[2], labels, ns.upper * 1e-9);
}

/// Each source's support and cost, then the precise read.
fn sources(x: &mut Exposition, p: &Profile) {
    for s in &p.sources {
        let labels = [("source", s.id.as_str())];
        x.sample(SOURCE_SUPPORTED, &labels, f64::from(u8::from(s.supported)));
    }
    for s in &p.sources {
        if let Some(c) = s.cost_ns {
            let families = [SOURCE_COST, SOURCE_COST_LOWER, SOURCE_COST_UPPER];
            estimate(x, families, &[("source", s.id.as_str())], c);
        }
    }
    if let Some(c) = p.derived.precise_read_ns {
        let families = [PRECISE_READ, PRECISE_READ_LOWER, PRECISE_READ_UPPER];
        estimate(x, families, &[], c);
    }
}

/// Each verdict one-hot over its three states; `vdso_fallback:<clock>` becomes
/// `verdict="vdso_fallback",clock="<clock>"`.
fn verdicts(x: &mut Exposition, verdicts: &[(String, Verdict)]) {
    for (name, v) in verdicts {
        let (verdict, clock) = name.split_once(':').unwrap_or((name, ""));
        // A file written before verdicts had a state says only `holds`.
        let current = if v.holds { VerdictState::Yes } else { v.state };
        for state in [
            VerdictState::Yes,
            VerdictState::No,
            VerdictState::Inconclusive,
        ] {
            let label = state.label().to_ascii_lowercase();
            let labels = [("verdict", verdict), ("clock", clock), ("state", &label)];
            x.sample(VERDICT, &labels, f64::from(u8::from(current == state)));
        }
    }
}

#[cfg(test)]
mod tests;
