//! `tscope report`: measure everything the report needs on this machine — facts, a full probe,
//! the verdicts (computed from that same probe), cross-CPU sync — and hand the [`Report`] model
//! to the exporters in [`crate::report`]. This is the only module the report command measures
//! through; `report` itself never measures.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

use crate::detect::{self, cpuid::CpuidFacts, verdict::Verdict, Facts};
use crate::probe::{self, ProbeConfig, Profile};
use crate::sim::output::{ModelReport, Output, SweepReport};
use crate::sim::{self, SimulateConfig};

/// The bundled scenarios a report simulates, and the one it sweeps.
pub const REPORT_SCENARIOS: [&str; 3] = ["pipe1", "vfsmix", "write-stat"];
pub const SWEEP_SCENARIO: &str = "vfsmix";

/// The version of report.json this build writes.
pub const REPORT_SCHEMA_VERSION: u32 = 1;

/// A validated report configuration.
#[derive(Debug, Clone)]
pub struct ReportConfig {
    pub quick: bool,
    pub seed: u64,
    pub sync_budget: Duration,
    pub emulate_trap: bool,
    /// The command line that reproduces the report, for the document.
    pub command: String,
}

/// The detect part of a report: facts and verdicts (the timings are the report's profile).
#[derive(Debug, Clone, Serialize)]
pub struct DetectSection {
    pub facts: Facts,
    #[serde(serialize_with = "detect::serialize_verdicts")]
    pub verdicts: Vec<(String, Verdict)>,
}

/// Everything a report shows.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub schema_version: u32,
    pub tool: String,
    pub command: String,
    pub profile: Profile,
    pub detect: DetectSection,
    /// Every model on each of [`REPORT_SCENARIOS`], priced from `profile`.
    pub simulation: Vec<ModelReport>,
    /// `precise_read_ns` swept over [`SWEEP_SCENARIO`], one report per model.
    pub sweep: Vec<SweepReport>,
    /// Parts that could not be produced, and why.
    pub skipped: Vec<String>,
}

/// Progress on stderr, drawn only when stderr is a terminal.
struct Progress(ProgressBar);

impl Progress {
    fn new(steps: u64) -> Self {
        let bar = if std::io::stderr().is_terminal() {
            let b = ProgressBar::new(steps);
            if let Ok(style) = ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}") {
                b.set_style(style);
            }
            b
        } else {
            ProgressBar::hidden()
        };
        Progress(bar)
    }

    fn step(&self, msg: &'static str) {
        self.0.set_message(msg);
        self.0.inc(1);
    }
}

/// Measures this machine and returns the report model.
pub fn run(cfg: &ReportConfig) -> Report {
    let progress = Progress::new(4);
    progress.step("probing every timestamp source");
    let cpu = CpuidFacts::decode(&detect::cpuid::LiveCpuid);
    let host = detect::host::gather();
    let mut pcfg = ProbeConfig::new(Vec::new(), cfg.quick, cfg.seed);
    pcfg.emulate_trap = cfg.emulate_trap;
    let profile = probe::run(&pcfg);
    progress.step("checking TSC sync across CPUs");
    let sync = detect::sync::check(cfg.sync_budget);
    progress.step("deciding verdicts");
    let verdicts = detect::verdicts(&profile, &sync);
    let facts = detect::facts(cpu, host, &profile);
    progress.step("simulating the vfs_timestamp knob");
    let mut skipped = Vec::new();
    let mut simulation = Vec::new();
    for name in REPORT_SCENARIOS {
        match sim::simulate(&SimulateConfig::for_report(name, profile.clone(), false)) {
            Ok(Output::Models(m)) => simulation.extend(m),
            Ok(_) => {}
            Err(e) => skipped.push(format!("simulate {name}: {e:#}")),
        }
    }
    let sweep = match sim::simulate(&SimulateConfig::for_report(
        SWEEP_SCENARIO,
        profile.clone(),
        true,
    )) {
        Ok(Output::Sweeps(s)) => s,
        Ok(_) => Vec::new(),
        Err(e) => {
            skipped.push(format!("sweep {SWEEP_SCENARIO}: {e:#}"));
            Vec::new()
        }
    };
    progress.0.finish_and_clear();
    Report {
        schema_version: REPORT_SCHEMA_VERSION,
        tool: format!("tscope {}", env!("CARGO_PKG_VERSION")),
        command: cfg.command.clone(),
        profile,
        detect: DetectSection { facts, verdicts },
        simulation,
        sweep,
        skipped,
    }
}
