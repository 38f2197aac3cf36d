//! `tscope report`: measure everything the report needs on this machine — facts, a full probe,
//! the verdicts (computed from that same probe), cross-CPU sync — and hand the [`Report`] model
//! to the exporters in [`crate::report`]. This is the only module the report command measures
//! through; `report` itself never measures.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use serde::{Deserialize, Serialize};

use crate::detect::{self, cpuid::CpuidFacts, verdict::Verdict, Facts};
use crate::probe::{self, ProbeConfig, Profile};

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
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DetectSection {
    pub facts: Facts,
    #[serde(
        serialize_with = "detect::serialize_verdicts",
        deserialize_with = "detect::deserialize_verdicts"
    )]
    pub verdicts: Vec<(String, Verdict)>,
}

/// Everything a report shows.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    pub schema_version: u32,
    pub tool: String,
    pub command: String,
    pub profile: Profile,
    pub detect: DetectSection,
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
    let progress = Progress::new(3);
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
    progress.0.finish_and_clear();
    Report {
        schema_version: REPORT_SCHEMA_VERSION,
        tool: format!("tscope {}", env!("CARGO_PKG_VERSION")),
        command: cfg.command.clone(),
        profile,
        detect: DetectSection { facts, verdicts },
    }
}
