//! `tscope report`: measure everything the report needs on this machine — facts, a full probe,
//! the verdicts (computed from that same probe), cross-CPU sync — and hand the [`Report`] model
//! to the exporters in [`crate::export`]. This is the only module the report command measures
//! through; `report` itself never measures.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

use crate::detect::{self, cpuid::CpuidFacts, verdict::Verdict, Facts};
use crate::probe::{self, ProbeConfig, Profile};
use crate::sim::output::{ModelReport, Output, SweepReport};
use crate::sim::{self, SimulateConfig};
use crate::workload::{self, RunReport};

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
    /// Run the short workloads (pipe1, vfsmix).
    pub workloads: bool,
    /// Boot the guest matrix too (`tscope vm guest --no-host`).
    pub vm: bool,
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
    /// Short workload runs: pipe1 (1 task and one per CPU) and vfsmix on tmpfs.
    pub workloads: Vec<RunReport>,
    /// The guest matrix (`--vm`): the same probe and detect inside a Linux guest per
    /// clocksource.
    pub vm: Option<crate::vm::matrix::GuestMatrix>,
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
    let progress = Progress::new(5);
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
    progress.step("running pipe1 and vfsmix");
    let mut skipped = Vec::new();
    let workloads = if cfg.workloads {
        run_workloads(cfg.quick, &mut skipped)
    } else {
        skipped.push("workloads: --no-workloads".into());
        Vec::new()
    };
    progress.step("simulating the vfs_timestamp knob");
    let mut simulation = Vec::new();
    for name in REPORT_SCENARIOS {
        // A workload measured just now is the better base cost: simulate its record.
        let measured = workloads.iter().find(|w| w.workload.as_str() == name);
        let input = match measured.map(record_of) {
            Some(Ok(rec)) => sim::Input::Record(Box::new(rec)),
            Some(Err(e)) => {
                skipped.push(format!("{name}: the run could not become a record ({e:#}); simulated the bundled scenario"));
                sim::Input::Scenario(name.to_string())
            }
            None => sim::Input::Scenario(name.to_string()),
        };
        match sim::simulate(&SimulateConfig::for_report_input(
            input,
            profile.clone(),
            false,
        )) {
            Ok(Output::Models(m)) => simulation.extend(m),
            Ok(_) => {}
            Err(e) => skipped.push(format!("simulate {name}: {e:#}")),
        }
    }
    let sweep_input = match workloads
        .iter()
        .find(|w| w.workload.as_str() == SWEEP_SCENARIO)
        .map(record_of)
    {
        Some(Ok(rec)) => sim::Input::Record(Box::new(rec)),
        _ => sim::Input::Scenario(SWEEP_SCENARIO.to_string()),
    };
    let sweep = match sim::simulate(&SimulateConfig::for_report_input(
        sweep_input,
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
    let vm = if cfg.vm {
        progress.0.set_message("booting a guest per clocksource");
        match guest_matrix() {
            Ok(m) => Some(m),
            Err(e) => {
                skipped.push(format!("vm guest: {e:#}"));
                None
            }
        }
    } else {
        None
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
        workloads,
        vm,
        skipped,
    }
}

/// `tscope vm guest --no-host` with its defaults (every clocksource; KVM if usable, else TCG).
fn guest_matrix() -> anyhow::Result<crate::vm::matrix::GuestMatrix> {
    use clap::Parser;
    let cli = crate::cli::Cli::try_parse_from(["tscope", "vm", "guest", "--no-host"])?;
    let crate::cli::Command::Vm(args) = cli.command else {
        anyhow::bail!("not a vm command");
    };
    let crate::cli::vm::VmCommand::Guest(g) = &args.command else {
        anyhow::bail!("not a vm guest command");
    };
    crate::vm::guest::run(&crate::vm::guest::GuestConfig::try_from(g)?)
}

/// The report's workload runs, as `tscope run` command lines (validated like the CLI's).
fn workload_lines(quick: bool) -> Vec<Vec<String>> {
    let secs = if quick { "1" } else { "3" };
    let interval = if quick { "250" } else { "500" };
    let tmp = if std::path::Path::new("/dev/shm").is_dir() {
        "/dev/shm"
    } else {
        "/tmp"
    };
    [
        vec!["pipe1", "--mode", "processes"],
        vec!["vfsmix", "--tasks", "1", "--dir", tmp],
    ]
    .into_iter()
    .map(|args| {
        let mut v: Vec<String> = ["tscope", "run"].iter().map(|s| s.to_string()).collect();
        v.extend(args.iter().map(|s| s.to_string()));
        v.extend(
            [
                "--duration",
                secs,
                "--warmup",
                "0.5",
                "--interval-ms",
                interval,
            ]
            .map(String::from),
        );
        v
    })
    .collect()
}

/// The simulator's view of a workload run (the same record `tscope run --record` writes),
/// validated as `simulate --run` validates a file.
fn record_of(r: &RunReport) -> anyhow::Result<workload::run_record::RunRecord> {
    let record = workload::run_record::RunRecord::of(r);
    record.validate(&format!("this report's {} run", r.workload.as_str()))?;
    Ok(record)
}

fn run_workloads(quick: bool, skipped: &mut Vec<String>) -> Vec<RunReport> {
    use clap::Parser;
    let mut out = Vec::new();
    for line in workload_lines(quick) {
        let shown = line[1..].join(" ");
        let result = crate::cli::Cli::try_parse_from(&line)
            .map_err(|e| anyhow::anyhow!("{e}"))
            .and_then(|cli| match cli.command {
                crate::cli::Command::Run(args) => Ok(workload::RunConfig::try_from(&args)?),
                _ => Err(anyhow::anyhow!("not a run command")),
            })
            .and_then(|cfg| workload::execute(&cfg));
        match result {
            Ok(r) => out.push(r),
            Err(e) => skipped.push(format!("{shown}: {e:#}")),
        }
    }
    out
}
