//! Gathering for `tscope report`: measure everything the report needs on this machine — facts,
//! a full probe, the verdicts (computed from that same probe), cross-CPU sync, short workload
//! runs, the knob simulated from those figures, optionally the guest matrix — into one
//! [`Report`] model. `commands::report` exports it with [`crate::export`]; the exporters never
//! measure, and this module never prints (its steps go to a [`Progress`]).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::cpuid::{CpuidFacts, LiveCpuid};
use crate::detect::{self, verdict::Verdict, Facts};
use crate::probe::{self, ProbeConfig, Profile};
use crate::progress::Progress;
pub use environment::{Environment, EMULATED_TRAP};

pub mod baseline;
pub mod environment;
use crate::sim::result::{ModelReport, Output, SweepReport};
use crate::sim::{self, SimulateConfig};
use crate::workload::{self, RunReport};

/// The bundled scenarios a report simulates, and the one it sweeps.
pub const REPORT_SCENARIOS: [&str; 3] = ["pipe1", "vfsmix", "write-stat"];
pub const SWEEP_SCENARIO: &str = "vfsmix";

/// Iterations the sweep replays (the recorded run's are 200 000). The sweep shows only ns per
/// op, speedups and break-even costs, which are per-iteration averages: replaying 10 000
/// instead of 200 000 changed none of them by more than 0.01% on vfsmix (measured with
/// `simulate vfsmix --sweep precise_read_ns=10..100000 --iterations N`, docs/methodology.md),
/// in a twentieth of the time. The scenario simulations keep the full replay: their
/// `max_staleness_ns` grows with the simulated span.
pub const SWEEP_ITERATIONS: u64 = 10_000;

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
    /// The static tscope for the guest (`--guest-bin`); `None`: as `vm guest` finds or builds
    /// one.
    pub guest_bin: Option<std::path::PathBuf>,
    /// Directories whose filesystem's inode update is priced (the live pair), one per
    /// filesystem: /dev/shm and the report's own directory.
    pub update_dirs: Vec<std::path::PathBuf>,
    /// Programs recorded with `tscope record` (`--strace`): what multigrain costs each on
    /// every filesystem the report priced.
    pub straces: Vec<std::path::PathBuf>,
    /// `--baseline FILE`, loaded: an earlier report.json (or profile) to compare against.
    pub baseline: Option<crate::compare::Input>,
}

/// What multigrain timestamps cost one pass of a recorded program on each filesystem the
/// report priced (`simulate --strace FILE --profile`'s `by_filesystem`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProgramCost {
    /// The recording, as given.
    pub strace: String,
    /// Calls in one pass.
    pub calls: u64,
    /// One row per filesystem kind priced.
    pub by_filesystem: Vec<crate::sim::result::FsCost>,
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
    /// When, with which build, on which kernel and CPU, under which what-ifs.
    pub environment: Environment,
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
    pub vm: Option<crate::vm::matrix::result::GuestMatrix>,
    /// Clock cost against throughput (`--vm`): `tscope vm bench`'s clocksource comparison in
    /// one guest ([`crate::vm::bench::BenchConfig::for_report`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vm_bench: Option<crate::vm::bench::BenchReport>,
    /// Recorded programs (`--strace`) on each filesystem the report priced.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub programs: Vec<ProgramCost>,
    /// `--baseline FILE`: what changed since an earlier report (or profile), as `compare`
    /// judges it; absent without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since_baseline: Option<baseline::SinceBaseline>,
    /// Parts that could not be produced, and why.
    pub skipped: Vec<String>,
}

/// Measures this machine and returns the report model.
pub fn run(cfg: &ReportConfig, progress: &dyn Progress) -> Report {
    progress.step("probing every timestamp source");
    let cpu = CpuidFacts::decode(&LiveCpuid);
    let host = detect::host::gather();
    let mut pcfg = ProbeConfig::new(Vec::new(), cfg.quick, cfg.seed);
    pcfg.emulate_trap = cfg.emulate_trap;
    let mut profile = probe::run(&pcfg);
    progress.step("checking TSC sync across CPUs");
    let sync = detect::sync::check(cfg.sync_budget);
    progress.step("deciding verdicts");
    let (verdicts, facts) = detect::decide(cpu, host, &profile, &sync, !cfg.quick);
    let hypervisor = match (&facts.hypervisor.vendor, facts.hypervisor.present) {
        (Some(v), true) => v.clone(),
        (None, true) => "unknown".to_string(),
        _ => "none".to_string(),
    };
    let environment = Environment::gather(&profile, &facts.cpu, &hypervisor);
    progress.step("running pipe1, vfsmix and the live knob pair");
    let mut skipped = Vec::new();
    let workloads = if cfg.workloads {
        let (fs, errors) = sim::update_price::measure_all(&profile, &cfg.update_dirs, cfg.quick);
        profile.filesystems = fs;
        skipped.extend(errors);
        run_workloads(cfg.quick, &mut skipped)
    } else {
        skipped.push("workloads and the live knob pair: --no-workloads".into());
        Vec::new()
    };
    progress.step("simulating the vfs_timestamp knob");
    let sweep_input = match workloads
        .iter()
        .find(|w| w.workload.as_str() == SWEEP_SCENARIO)
        .map(record_of)
    {
        Some(Ok(rec)) => sim::LoopSource::Record(Box::new(rec)),
        _ => sim::LoopSource::Scenario(SWEEP_SCENARIO.to_string()),
    };
    let sweep_cfg = SimulateConfig::for_report(sweep_input, profile.clone(), true)
        .with_iterations(SWEEP_ITERATIONS);
    // Nothing is measured from here on: the sweep (pure computation) runs on a second thread
    // beside the simulations instead of after them.
    let (simulation, sweep) = std::thread::scope(|s| {
        let sweep = s.spawn(|| sim::simulate(&sweep_cfg));
        let simulation = simulate_scenarios(&workloads, &profile, &mut skipped);
        let sweep = sweep
            .join()
            .unwrap_or_else(|_| Err(crate::failure!("the sweep's thread panicked")));
        (simulation, sweep)
    });
    let sweep = match sweep {
        Ok(Output::Sweeps(s)) => s,
        Ok(_) => Vec::new(),
        Err(e) => {
            skipped.push(format!("sweep {SWEEP_SCENARIO}: {e:#}"));
            Vec::new()
        }
    };
    let programs = cfg
        .straces
        .iter()
        .filter_map(|path| match program_cost(path, &profile) {
            Ok(p) => Some(p),
            Err(e) => {
                skipped.push(format!("--strace {}: {e:#}", path.display()));
                None
            }
        })
        .collect();
    let vm = if cfg.vm {
        progress.step("booting a guest per clocksource");
        match guest_matrix(cfg.guest_bin.clone(), progress) {
            Ok(m) => Some(m),
            Err(e) => {
                skipped.push(format!("vm guest: {e:#}"));
                None
            }
        }
    } else {
        None
    };
    let vm_bench = if cfg.vm {
        progress.step("timing workloads on tsc against hpet in a guest");
        vm_bench(cfg.guest_bin.clone(), progress, &mut skipped)
    } else {
        None
    };
    let since_baseline = cfg.baseline.as_ref().map(|b| baseline::since(b, &profile));
    Report {
        schema_version: REPORT_SCHEMA_VERSION,
        tool: format!("tscope {}", env!("CARGO_PKG_VERSION")),
        command: cfg.command.clone(),
        environment,
        profile,
        detect: DetectSection { facts, verdicts },
        simulation,
        sweep,
        workloads,
        vm,
        vm_bench,
        programs,
        since_baseline,
        skipped,
    }
}

/// `simulate --strace PATH` under this kernel's Linux model, priced from `profile`: its
/// per-filesystem rows.
fn program_cost(path: &std::path::Path, profile: &Profile) -> crate::error::Result<ProgramCost> {
    crate::ensure!(
        profile.filesystems.iter().any(|f| f.pair.is_some()),
        "no filesystem was priced (the live pairs run with the workloads: drop --no-workloads)"
    );
    let mut cfg = SimulateConfig::of(sim::config::Mode::Strace(sim::config::StraceLog {
        path: path.to_path_buf(),
        strict: false,
        fs: None,
    }));
    cfg.profile_data = Some(profile.clone());
    cfg.models = vec![crate::kernel::ModelSpec {
        family: crate::kernel::Family::Linux,
        version: None,
        alias: false,
    }];
    let Output::Models(reports) = sim::simulate(&cfg)? else {
        crate::fail!("simulate --strace gave no model report");
    };
    let (calls, rows) = reports
        .iter()
        .find_map(|m| {
            let s = m.strace.as_ref()?;
            Some((s.strace.calls, s.by_filesystem.clone()?))
        })
        .ok_or_else(|| {
            crate::failure!(
                "no per-filesystem rows: {}",
                reports
                    .iter()
                    .flat_map(|m| m.notes.iter().cloned())
                    .collect::<Vec<_>>()
                    .join("; ")
            )
        })?;
    Ok(ProgramCost {
        strace: path.display().to_string(),
        calls,
        by_filesystem: rows,
    })
}

/// `tscope vm bench` as [`crate::vm::bench::BenchConfig::for_report`] sets it; what failed
/// goes to `skipped`.
fn vm_bench(
    guest_bin: Option<std::path::PathBuf>,
    progress: &dyn Progress,
    skipped: &mut Vec<String>,
) -> Option<crate::vm::bench::BenchReport> {
    let cfg = crate::vm::bench::BenchConfig::for_report(guest_bin);
    match crate::vm::bench::run(&cfg, progress) {
        Ok(b) => {
            if b.failed() {
                skipped.push(format!("{}: a boot failed", cfg.command()));
            }
            Some(b)
        }
        Err(e) => {
            skipped.push(format!("{}: {e:#}", cfg.command()));
            None
        }
    }
}

/// Every model on each of [`REPORT_SCENARIOS`], priced from `profile`; a workload measured just
/// now is the better base cost, so its record is simulated instead of the bundled scenario.
fn simulate_scenarios(
    workloads: &[RunReport],
    profile: &Profile,
    skipped: &mut Vec<String>,
) -> Vec<ModelReport> {
    let mut simulation = Vec::new();
    for name in REPORT_SCENARIOS {
        let measured = workloads.iter().find(|w| w.workload.as_str() == name);
        let input = match measured.map(record_of) {
            Some(Ok(rec)) => sim::LoopSource::Record(Box::new(rec)),
            Some(Err(e)) => {
                skipped.push(format!("{name}: the run could not become a record ({e:#}); simulated the bundled scenario"));
                sim::LoopSource::Scenario(name.to_string())
            }
            None => sim::LoopSource::Scenario(name.to_string()),
        };
        match sim::simulate(&SimulateConfig::for_report(input, profile.clone(), false)) {
            Ok(Output::Models(m)) => simulation.extend(m),
            Ok(_) => {}
            Err(e) => skipped.push(format!("simulate {name}: {e:#}")),
        }
    }
    // write-stat on each filesystem whose update the live pair priced, on this kernel's model.
    for f in profile.filesystems.iter().filter(|f| f.pair.is_some()) {
        let s = sim::update_price::write_stat_on(f);
        let name = s.name.clone();
        let input = sim::LoopSource::Inline(Box::new(s));
        let mut c = SimulateConfig::for_report(input, profile.clone(), false);
        c.models = vec![crate::kernel::ModelSpec {
            family: crate::kernel::Family::Linux,
            version: None,
            alias: false,
        }];
        match sim::simulate(&c) {
            Ok(Output::Models(m)) => simulation.extend(m),
            Ok(_) => {}
            Err(e) => skipped.push(format!("simulate {name}: {e:#}")),
        }
    }
    simulation
}

/// `tscope vm guest --no-host` with its defaults (every clocksource; KVM if usable, else TCG).
fn guest_matrix(
    guest_bin: Option<std::path::PathBuf>,
    progress: &dyn Progress,
) -> crate::error::Result<crate::vm::matrix::result::GuestMatrix> {
    let mut cfg = crate::vm::matrix::GuestConfig {
        measure_host: false,
        ..Default::default()
    };
    cfg.boot.guest_bin = guest_bin;
    crate::vm::matrix::run(&cfg, progress)
}

/// The report's workload runs: pipe1 as processes (1 task and one per CPU) and vfsmix with one
/// task on tmpfs, sampled briefly. Each is shown as the `tscope run` line that repeats it.
fn workload_configs(quick: bool) -> Vec<(String, workload::RunConfig)> {
    use std::time::Duration;
    use workload::WorkloadName;
    // Short runs, sampled often enough for an interval (8 samples full, 4 quick).
    let (secs, warmup, interval_ms) = if quick {
        (0.5, 0.2, 125)
    } else {
        (2.0, 0.5, 250)
    };
    let timing = |c: workload::RunConfig| {
        c.timed(
            Duration::from_secs_f64(secs),
            Duration::from_secs_f64(warmup),
            Duration::from_millis(interval_ms),
        )
    };
    let tmp = if std::path::Path::new("/dev/shm").is_dir() {
        "/dev/shm"
    } else {
        "/tmp"
    };
    let shown = |args: &str| {
        format!("run {args} --duration {secs} --warmup {warmup} --interval-ms {interval_ms}")
    };
    let pipe1 = timing(workload::RunConfig::new(WorkloadName::Pipe1));
    let vfsmix = workload::RunConfig {
        tasks: vec![1],
        dir: tmp.into(),
        ..timing(workload::RunConfig::new(WorkloadName::Vfsmix))
    };
    vec![
        (shown("pipe1 --mode processes"), pipe1),
        (shown(&format!("vfsmix --tasks 1 --dir {tmp}")), vfsmix),
    ]
}

/// The simulator's view of a workload run (the same record `tscope run --record` writes),
/// validated as `simulate --run` validates a file.
fn record_of(r: &RunReport) -> crate::error::Result<workload::run_record::RunRecord> {
    let record = workload::run_record::RunRecord::of(r);
    record.validate(&format!("this report's {} run", r.workload.as_str()))?;
    Ok(record)
}

fn run_workloads(quick: bool, skipped: &mut Vec<String>) -> Vec<RunReport> {
    let mut out = Vec::new();
    for (shown, cfg) in workload_configs(quick) {
        match workload::execute(&cfg) {
            Ok(r) => out.push(r),
            Err(e) => skipped.push(format!("{shown}: {e:#}")),
        }
    }
    out
}
