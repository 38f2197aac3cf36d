//! The `simulate` result models: what a run of the simulator produces, and the JSON contract in
//! docs/schema.md. Only the model lives here (the validation rows too, so that [`super::validate`]
//! and [`Output`] both import this file and neither imports the other); the table, Markdown and
//! CSV forms are in `crate::export`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::costs::CostSources;
use super::estimate::PolicyEstimate;
use crate::probe::Profile;
use crate::trace::strace::import::ImportSummary;

/// Version of the `simulate` JSON.
pub const SIMULATE_SCHEMA_VERSION: u32 = 1;

/// Which profile the costs come from.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
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
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CostsOut {
    pub precise_read_ns: f64,
    pub coarse_read_ns: f64,
    /// Each term's price on a filesystem without one of its own (`<term>_ns`, named by
    /// [`crate::price::Term::field`]), and the filesystems of the loop with one of their own
    /// (`<term>_ns_by_fs`, left out where none has).
    #[serde(flatten)]
    pub terms: crate::price::fields::TermCosts,
    pub tick_ns: f64,
    /// Cost of one iteration without timestamp work.
    pub base_ns_per_op: f64,
    pub sources: CostSources,
    pub base_source: String,
}

/// Estimates of one scenario under one model.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ModelReport {
    pub schema_version: u32,
    pub scenario: String,
    pub model: String,
    pub stock_policy: String,
    pub tasks: u32,
    pub iterations: u64,
    pub profile: ProfileNote,
    pub costs: CostsOut,
    pub estimates: Vec<PolicyEstimate>,
    pub notes: Vec<String>,
    /// What only `simulate --strace` reports, its fields beside the others (`strace`,
    /// `by_filesystem`); `None` for a scenario or a run record.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub strace: Option<StraceReport>,
}

/// The parts of a [`ModelReport`] that only a replayed strace log has. One optional group
/// rather than a field each, so that a report of a scenario is built without naming them.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StraceReport {
    /// What the import saw.
    pub strace: ImportSummary,
    /// What Linux multigrain timestamps cost one pass of the program on each filesystem kind
    /// the profile priced; absent where not computed (no priced filesystem, `--fs`, another
    /// model's report).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by_filesystem: Option<Vec<FsCost>>,
}

/// The multigrain cost of one pass of a recorded program (the whole strace log) with every
/// regular path on one filesystem kind the profile priced: the model's stock policy
/// (`linux:multigrain`) less `linux:coarse`, the same log, the same base cost. What a user
/// weighing the knob on that filesystem wants: the ns it adds, its share of the pass, and the
/// counts and prices that make it up, so that the figure can be checked by hand.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FsCost {
    /// The filesystem kind (`tmpfs`, `ext4`, `xfs`, `btrfs`, `other`).
    pub fs: String,
    /// The directory the profile priced it on, and that mount's options.
    pub dir: String,
    pub mount_options: Vec<String>,
    /// Stock − coarse ns for the whole log (negative where multigrain saves work).
    pub multigrain_ns_per_pass: f64,
    /// The stock policy's pass: every call's base cost and its timestamp work.
    pub pass_ns: f64,
    /// `multigrain_ns_per_pass / pass_ns` (0 for an empty pass).
    pub share_of_pass: f64,
    /// Stock − coarse events in the pass.
    pub counts: FsCounts,
    /// The prices on this filesystem, by the `costs` field names (`precise_read_ns`,
    /// `coarse_read_ns`, `update_ns`, `query_ns`, `floor_read_ns`, `fine_excess_ns`).
    pub prices_ns: BTreeMap<String, f64>,
}

/// Events in one pass, the stock policy's less `linux:coarse`'s (which takes no fine stamp,
/// floored read or query: those are the stock's own).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct FsCounts {
    /// ctimes stamped with the fine clock (`ktime_get_real_ts64_mg()`): a change after a stat
    /// asked for the times, in the same tick.
    pub fine_stamps: i64,
    /// Fine clock reads of every kind (the fine stamps, and `current_time()`'s plain fine
    /// read of a queried inode).
    pub fine_reads: i64,
    pub coarse_reads: i64,
    /// Coarse reads that returned the multigrain floor, ahead of the tick.
    pub floored_reads: i64,
    /// Stats that marked a ctime queried.
    pub queries: i64,
    /// Timestamp stores of every kind (each a `mark_inode_dirty`).
    pub updates: i64,
    /// Of `updates`, atime stores (`touch_atime()`), priced at `atime_update_ns`.
    pub atime_updates: i64,
    /// Of `updates`, an inode's first write-path c/mtime store since it was made, priced at
    /// `first_update_ns` on top of `update_ns` (0 in documents written before it was counted).
    #[serde(default)]
    pub first_updates: i64,
    /// Syncs that committed the journal (ext4, xfs: a full fsync after a timestamp store, any
    /// sync of a file's first data), priced at `sync_commit_ns` (0 in documents written
    /// before it was counted).
    #[serde(default)]
    pub sync_commits: i64,
}

/// One policy at one swept value.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SweepEstimate {
    pub policy: String,
    pub ns_per_op: f64,
    pub speedup: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SweepPoint {
    pub value: f64,
    pub estimates: Vec<SweepEstimate>,
}

/// The swept value at which a policy's speedup reaches `break_even_speedup` (log-linear
/// interpolation between points; `null` when it never does within the range).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BreakEven {
    pub policy: String,
    pub value: Option<f64>,
}

/// Speedup against one swept setting.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
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
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
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
    Validation(ValidationReport),
}

/// Version of the validation JSON.
pub const VALIDATION_SCHEMA_VERSION: u32 = 1;

/// The error a validation aims for, in percent.
pub const GOAL_PCT: f64 = 5.0;

/// One prediction against one measurement.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
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
    /// Relative error within the goal, or for shares within 0.05 absolute; `false` when
    /// undecided.
    pub within_goal: bool,
    /// How the prediction was made (costs, counts).
    pub detail: String,
    /// Half-width, in percent, of the 95% interval of the error (repeated measurements only,
    /// such as the emulation's interleaved runs); `null` for a single figure.
    #[serde(default)]
    pub noise_pct: Option<f64>,
    /// The error's point estimate even when the row is undecided (then `error_pct` is null).
    #[serde(default)]
    pub point_error_pct: Option<f64>,
    /// The noise interval is wider than the goal: the machine was too noisy to tell whether
    /// the prediction is within it; `error_pct` is null.
    #[serde(default)]
    pub undecided: bool,
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
            noise_pct: None,
            point_error_pct: None,
            undecided: false,
        }
    }

    /// A relative-error row whose error was measured repeatedly: `error` is the point estimate
    /// and `noise` the half-width of its 95% interval, both in percent. When the noise is wider
    /// than the goal the row is undecided: `error_pct` is null and `within_goal` false.
    pub fn with_noise(mut self, error: f64, noise: f64) -> Row {
        self.point_error_pct = Some(error);
        self.noise_pct = Some(noise);
        // NaN noise is undecided too.
        self.undecided = noise.is_nan() || noise > GOAL_PCT;
        if self.undecided {
            self.error_pct = None;
            self.within_goal = false;
        } else {
            self.error_pct = Some(error);
            self.within_goal = error.abs() <= GOAL_PCT;
        }
        self
    }
}

/// A validation's result.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
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
    /// Emulation: the interleaved rounds run (null for the other validations).
    #[serde(default)]
    pub rounds: Option<usize>,
    /// Emulation: why the rounds stopped, `all_decided` or `budget`.
    #[serde(default)]
    pub stopped: Option<String>,
    /// Emulation: the time budget, seconds (`--validate-budget`).
    #[serde(default)]
    pub budget_s: Option<f64>,
    /// Emulation: the two-sided level of each look's intervals (`1 − 0.05/looks`), so that
    /// the interval printed where the rounds stopped is a 95% one.
    #[serde(default)]
    pub look_confidence: Option<f64>,
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
            rounds: None,
            stopped: None,
            budget_s: None,
            look_confidence: None,
        }
    }
}
