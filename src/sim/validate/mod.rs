//! `simulate --validate`: how close the simulator comes to what really happens, on this
//! machine. Three checks, each printing predicted against measured and the error:
//!
//! - [`emulate`] (`pipe1`, `vfsmix`): runs the workload for real and, per policy, adds the
//!   policy's timestamp reads with real sources; measured ops/s against the model's ops/s.
//! - [`accuracy`] (`accuracy`, `write-only`, `write-stat`): runs the workloads on tmpfs and the
//!   root filesystem and compares the multigrain model's share of equal successive mtimes with
//!   the kernel's.
//! - [`seed`] (`seed`, `netbsd-seed`, `netbsd-seed-vfsmix`): the back-solved costs put back
//!   into the models against the published NetBSD figures.
//!
//! Nothing is asserted here: the error is a measurement, written into docs/validation.md.

pub mod accuracy;
pub mod emulate;
pub mod seed;

use serde::Serialize;

use super::config::SimulateConfig;
use super::output::human_ns;
use crate::export::table::{Align, Table};
use crate::export::Format;

/// Version of the validation JSON.
pub const VALIDATION_SCHEMA_VERSION: u32 = 1;

/// The error a validation aims for, in percent.
pub const GOAL_PCT: f64 = 5.0;

/// One prediction against one measurement.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Row {
    /// What was compared: a policy, a workload on a filesystem, a seed pair.
    pub case: String,
    /// `ops_per_sec`, `equal_successive_share`, `speedup`.
    pub metric: String,
    pub predicted: f64,
    pub measured: f64,
    /// `(predicted − measured) / measured` in percent; `null` when measured is 0.
    pub error_pct: Option<f64>,
    /// `predicted − measured` (for shares: in share units, 0.01 = one percentage point).
    pub abs_error: f64,
    /// Relative error within the goal, or for shares within 0.05 absolute.
    pub within_goal: bool,
    /// How the prediction was made (costs, counts).
    pub detail: String,
}

impl Row {
    pub fn new(case: String, metric: &str, predicted: f64, measured: f64, detail: String) -> Row {
        let error_pct = (measured != 0.0 && measured.is_finite())
            .then(|| (predicted - measured) / measured * 100.0);
        let abs_error = predicted - measured;
        let within_goal = if metric == "equal_successive_share" {
            abs_error.abs() <= GOAL_PCT / 100.0
        } else {
            error_pct.is_some_and(|e| e.abs() <= GOAL_PCT)
        };
        Row {
            case,
            metric: metric.to_string(),
            predicted,
            measured,
            error_pct,
            abs_error,
            within_goal,
            detail,
        }
    }
}

/// A validation's result.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ValidationReport {
    pub schema_version: u32,
    /// `emulation`, `accuracy` or `seed`.
    pub validation: String,
    pub scenario: String,
    pub goal_pct: f64,
    pub rows: Vec<Row>,
    /// Every row within the goal.
    pub all_within_goal: bool,
    pub notes: Vec<String>,
}

impl ValidationReport {
    pub fn new(validation: &str, scenario: &str, rows: Vec<Row>, notes: Vec<String>) -> Self {
        ValidationReport {
            schema_version: VALIDATION_SCHEMA_VERSION,
            validation: validation.into(),
            scenario: scenario.into(),
            goal_pct: GOAL_PCT,
            all_within_goal: rows.iter().all(|r| r.within_goal),
            rows,
            notes,
        }
    }

    /// The table (or Markdown) form.
    pub fn text(&self, format: Format) -> String {
        let md = format == Format::Markdown;
        let mut s = if md {
            format!("### {} validation: {}\n\n", self.validation, self.scenario)
        } else {
            format!("{} validation: {}\n", self.validation, self.scenario)
        };
        let mut t = Table::new(&[
            ("case", Align::Left),
            ("metric", Align::Left),
            ("predicted", Align::Right),
            ("measured", Align::Right),
            ("error", Align::Right),
            ("goal", Align::Left),
        ]);
        for r in &self.rows {
            let share = r.metric == "equal_successive_share";
            let v = |x: f64| {
                if share {
                    format!("{:.4}%", x * 100.0)
                } else if r.metric == "speedup" {
                    format!("{x:.3}x")
                } else {
                    format!("{x:.0}")
                }
            };
            t.row(vec![
                r.case.clone(),
                r.metric.clone(),
                v(r.predicted),
                v(r.measured),
                if share {
                    format!("{:+.4} pp", r.abs_error * 100.0)
                } else {
                    r.error_pct
                        .map(|e| format!("{e:+.1}%"))
                        .unwrap_or_else(|| "n/a".into())
                },
                if r.within_goal { "ok" } else { "MISS" }.into(),
            ]);
        }
        s += &if md { t.markdown() } else { t.text() };
        let bullet = if md { "- " } else { "  " };
        if md {
            s += "\n";
        }
        for r in &self.rows {
            s += &format!("{bullet}{}: {}\n", r.case, r.detail);
        }
        for n in &self.notes {
            s += &format!("{bullet}note: {n}\n");
        }
        s
    }
}

/// Which validation a `--validate` name asks for.
pub fn run(cfg: &SimulateConfig, name: &str) -> anyhow::Result<ValidationReport> {
    match name {
        "seed" | "netbsd-seed" | "netbsd-seed-vfsmix" => seed::run(cfg),
        "accuracy" | "write-only" | "write-stat" => accuracy::run(cfg, name),
        "pipe1" | "vfsmix" => emulate::run(cfg, name),
        other => anyhow::bail!(
            "--validate '{other}': validations exist for pipe1 and vfsmix (cost, by emulation), \
             accuracy, write-only and write-stat (multigrain mtimes on the live kernel), and seed \
             (the NetBSD figures)"
        ),
    }
}

/// `1.5 us` for a detail line.
pub(crate) fn ns(v: f64) -> String {
    human_ns(v)
}

/// One live run of a `tscope run` workload with one task, pinned, for `secs` seconds.
pub(crate) fn run_workload(
    name: &str,
    secs: f64,
    dir: Option<&std::path::Path>,
) -> anyhow::Result<crate::workload::RunReport> {
    use crate::workload::{RunConfig, WorkloadName};
    use std::time::Duration;
    let workload = WorkloadName::parse(name)
        .ok_or_else(|| anyhow::anyhow!("running {name}: no workload of that name"))?;
    let interval = Duration::from_millis(((secs * 1000.0 / 4.0).round() as u64).clamp(50, 1000));
    let mut cfg = RunConfig {
        tasks: vec![1],
        ..RunConfig::new(workload).timed(Duration::from_secs_f64(secs), interval, interval)
    };
    if let Some(d) = dir {
        anyhow::ensure!(
            d.is_dir(),
            "running {name}: '{}' is not an existing directory; create it or pick another",
            d.display()
        );
        cfg.dir = d.to_path_buf();
    }
    let report = crate::workload::execute(&cfg)?;
    anyhow::ensure!(
        !report.partial && !report.runs.is_empty(),
        "{name} stopped early (a signal?): no validation figure"
    );
    Ok(report)
}

/// The simulator's filesystem kind for a run's `fs_type`.
pub(crate) fn fs_kind(fs_type: Option<&str>) -> crate::trace::FsKind {
    fs_type
        .and_then(crate::trace::FsKind::parse)
        .unwrap_or(crate::trace::FsKind::Other)
}

/// A bundled scenario with every non-pipe op moved to `fs`.
pub(crate) fn scenario_on(
    name: &str,
    fs: Option<crate::trace::FsKind>,
) -> anyhow::Result<crate::trace::CompiledScenario> {
    use crate::trace::{bundled, FsKind, Scenario};
    let text = bundled::get(name)
        .ok_or_else(|| anyhow::anyhow!("bundled scenario '{name}' is missing from this build"))?;
    let mut c = Scenario::from_json(text, &format!("bundled:{name}"))?.compile();
    if let Some(fs) = fs {
        for op in c.ops.iter_mut().filter(|o| o.fs != FsKind::Pipefs) {
            op.fs = fs;
        }
    }
    Ok(c)
}
