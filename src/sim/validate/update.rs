//! The update price held to patterns it was not calibrated on, on the live kernel
//! (`simulate update --validate [--validate-dir DIR]…`).
//!
//! On each directory the live pairs of chmod-stat and write-stat price the query and the
//! update ([`crate::sim::update_price::measure_and_price`]); then the pair runs loops the price was not taken
//! from: two and four writes per query, a create → write → statx → close → unlink loop
//! (a new inode each iteration, where the query changes only the unlink's stamp), and
//! write-stat run by as many tasks at once as the machine has CPUs, each on its own file and
//! CPU (the model replays the tasks in turn, sharing one multigrain floor as the kernel's tasks
//! share `mg_floor`; a shared journal or log that makes an update dearer under concurrency
//! shows here). For each, the
//! model's Δ is its queried − control reads (priced as every estimate prices them) plus its
//! queried − control updates and queries at the calibrated prices, both sides replayed at their measured
//! speed. A row is within its goal when the prediction is within max(10%, the live Δ's 95%
//! interval) of the live Δ; one that is within only through a wide interval is `undecided`.

use std::path::PathBuf;

use super::{Row, ValidationReport};
use crate::price::{Costs, Counts, Term};
use crate::sim::config::{LoopSource, SimulateConfig, Validation};
use crate::sim::costs;
use crate::sim::update_price;
use crate::sim::update_price::{counts_at, model_of};
use crate::trace::FsKind;
use crate::workload::pair::{self, PairConfig, PairResult, Pattern};
use crate::workload::replayed::{self, LiveLoop, ReplayConfig};

/// The relative goal of a row (the live Δ's own interval widens it).
pub const GOAL_FRACTION: f64 = 0.10;

/// The loops held to the price, after the calibration's (write-read-stat only where it is not
/// the calibration, which it is wherever the directory's pairs priced the atime update).
pub const PATTERNS: [Pattern; 4] = [
    Pattern::Write { writes: 2 },
    Pattern::Write { writes: 4 },
    Pattern::Create,
    Pattern::WriteRead,
];

/// Tasks for the several-tasks row: one per allowed CPU, at most 4; `None` on one CPU.
fn concurrent_tasks() -> Option<u32> {
    let cpus = crate::sys::cpu::allowed_cpus().ok()?.len();
    (cpus >= 2).then(|| cpus.min(4) as u32)
}

/// The model's queried − control counts per iteration for `p`'s pattern at its measured
/// speeds; `None` for a recorded loop (its counts come from its own scenario:
/// [`recorded_counts`]).
pub fn delta_counts(p: &PairResult, costs: Costs) -> Option<Counts> {
    update_price::pair_delta(model_of(p), costs, p)
}

/// The model's counts for a recorded loop replayed live on `p`'s filesystem.
pub fn recorded_counts(p: &PairResult, costs: Costs, live: &LiveLoop) -> Counts {
    let model = model_of(p);
    let fs = p.fs_kind();
    let q = counts_at(model, costs, &live.scenario(fs, true), p.queried_ns.point);
    let c = counts_at(model, costs, &live.scenario(fs, false), p.control_ns.point);
    q - c
}

/// The calibrated prices a row's prediction uses, and where they come from (in words).
#[derive(Debug, Clone)]
pub struct Prices {
    /// The reads, and every term on `fs` as the filesystem's pairs priced it (a read term
    /// the pairs did not price at `costs`' own, the query or update at 0).
    pub costs: Costs,
    pub fs: FsKind,
    pub from: String,
}

impl Prices {
    /// The prices of a priced filesystem over `costs`' reads (0 where one is missing, said
    /// so).
    pub fn of(priced: &update_price::FsUpdate, on: &str, costs: Costs) -> Prices {
        let fs = priced.fs_kind();
        let mut c = costs;
        let mut words = Vec::new();
        for t in Term::ALL {
            let stand_in = t.stand_in().and_then(|s| Some((s, priced.price(s)?)));
            match (priced.price(t), stand_in) {
                (Some(e), _) => {
                    c = c.with_on(t, fs, e.point);
                    words.push(format!("{} {:.1} ns", t.what(), e.point));
                }
                (None, _) if t.is_read() => {}
                (None, Some((s, e))) => {
                    c = c.with_on(t, fs, e.point);
                    words.push(format!("{} at the {} price", t.what(), s.what()));
                }
                (None, None) => {
                    c = c.with_on(t, fs, 0.0);
                    words.push(format!("no {} price: taken as 0", t.what()));
                }
            }
        }
        Prices {
            costs: c,
            fs,
            from: format!("calibrated on {on}: {}", words.join(", ")),
        }
    }
}

/// The pairs a directory's prices were taken from, in words.
fn calibrated_on(priced: &update_price::FsUpdate) -> String {
    Term::ALL
        .iter()
        .filter_map(|&t| Some(format!("{} ({})", priced.priced_by(t)?, t.what())))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One row: `p`'s live Δ against the model's at `prices` (a pattern's pair; a recorded loop's
/// goes through [`row_at`] with [`recorded_counts`]). `calibration`: the row is one the
/// prices were taken from.
pub fn row(p: &PairResult, costs: Costs, prices: &Prices, calibration: bool) -> Row {
    let counts = delta_counts(p, costs).unwrap_or_default();
    row_at(p, counts, prices, calibration)
}

/// One row from the model's counts per iteration.
pub fn row_at(p: &PairResult, d: Counts, prices: &Prices, calibration: bool) -> Row {
    let predicted = d.priced_ns(&prices.costs, prices.fs);
    let terms: String = Term::ALL
        .iter()
        .rev()
        .filter(|&&t| d[t] != 0.0)
        .map(|&t| {
            format!(
                " + {:.3} {} × {:.1} ns",
                d[t],
                t.units(),
                prices.costs.on(t, prices.fs)
            )
        })
        .collect();
    let priced_from = if calibration {
        "the calibration itself"
    } else {
        &prices.from
    };
    let measured = p.delta_ns.point;
    let half = (p.delta_ns.upper - p.delta_ns.lower) / 2.0;
    let allowed = (GOAL_FRACTION * measured.abs()).max(half);
    let stopped = match p.stopped.as_deref() {
        Some("decided") => ", stopped when the interval was within ±10% of Δ",
        Some("budget") => ", stopped by its time budget before the interval was within ±10% of Δ",
        _ => "",
    };
    let mut r = Row::new(
        format!("{} on {} ({})", p.pattern_name, p.fs_type, p.dir),
        "delta_ns",
        predicted,
        measured,
        format!(
            "live Δ {:.1} [{:.1}, {:.1}] ns per iteration ({} × ABBA{stopped}); model {}: \
             {:.1} ns of reads{terms} ({priced_from})",
            measured,
            p.delta_ns.lower,
            p.delta_ns.upper,
            p.repetitions,
            model_of(p),
            d.reads_ns
        ),
    );
    r.within_goal = (predicted - measured).abs() <= allowed;
    r.noise_pct = (measured != 0.0).then(|| 100.0 * half / measured.abs());
    // Within only because the live Δ's interval is wide: the machine was too noisy to tell.
    let goal = GOAL_FRACTION * measured.abs();
    if (predicted - measured).abs() <= allowed && (predicted - measured).abs() > goal && half > goal
    {
        r.undecided = true;
        r.within_goal = false;
        r.point_error_pct = r.error_pct;
        r.error_pct = None;
    }
    r
}

/// The share of the model's count by which the kernel's may differ.
pub const COUNT_SLACK_FRACTION: f64 = 0.02;

/// Events per pass by which the kernel's count of a recorded program may differ from the
/// model's, whatever the share: a program's pass is hundreds of calls, and a pass in a
/// thousand that takes a path the replay does not (a retry, a lookup that misses) adds a few.
pub const PROGRAM_SLACK: f64 = 0.5;

/// Events per iteration by which the kernel's count of a pattern's loop (a handful of calls)
/// may differ from the model's.
pub const PATTERN_SLACK: f64 = 0.05;

/// How far the kernel's count of `p` may be from the model's `model` per iteration:
/// max([`COUNT_SLACK_FRACTION`] of it, [`PROGRAM_SLACK`] for a recorded program or
/// [`PATTERN_SLACK`] for a pattern's loop).
pub fn count_slack(p: &PairResult, model: f64) -> f64 {
    (COUNT_SLACK_FRACTION * model.abs()).max(slack_floor(p))
}

/// The events per iteration a count of `p` may differ by whatever the share.
fn slack_floor(p: &PairResult) -> f64 {
    match p.pattern {
        Pattern::Recorded { .. } => PROGRAM_SLACK,
        _ => PATTERN_SLACK,
    }
}

/// The kernel's own counts of `p` (queried − control, per iteration, less the machine's
/// background) against the model's: fine stamps (`fine_stamps_delta`), ctimes moved
/// (`ctime_moves_delta`) and, where tracefs counts them, journal commits
/// (`journal_commits_delta`); none where the counters could not be read.
pub fn kernel_rows(p: &PairResult, d: Counts) -> Vec<Row> {
    let Some(k) = p.kernel_counts.as_ref() else {
        return Vec::new();
    };
    let background = if k.background_per_s.is_empty() {
        "no background measured".to_string()
    } else {
        let r: Vec<String> = k
            .background_per_s
            .iter()
            .map(|(c, v)| format!("{c} {v:.1}/s"))
            .collect();
        format!(
            "less the machine's background ({}) over the sides' difference in time",
            r.join(", ")
        )
    };
    let per = match p.pattern {
        Pattern::Recorded { .. } => "pass",
        _ => "iteration",
    };
    [
        (
            "fine_stamps_delta",
            "fine_stamps",
            d.fine_stamps,
            "fine stamps, against the model's ktime_get_real_ts64_mg reads",
        ),
        (
            "ctime_moves_delta",
            "ctime_swaps",
            d.ctime_moves,
            "ctimes moved, against the model's inode_set_ctime_current() calls that store a \
             new ctime (every kind: the write path, setattr, a parent directory, eviction)",
        ),
        (
            "journal_commits_delta",
            crate::probe::journal::COUNTER,
            d[crate::price::Term::SyncCommit],
            "journal commits (jbd2_start_commit, xlog_iclog_write), against the model's full \
             fsyncs that find the file's last timestamp store uncommitted",
        ),
    ]
    .into_iter()
    .filter_map(|(metric, counter, model, what)| {
        let measured = k.delta(counter)?;
        // No commit on either side: a filesystem without a journal (ext4 `^has_journal`
        // writes the inode itself at fsync), or no tracepoint of its kind; nothing to judge.
        let quiet = |side: &std::collections::BTreeMap<String, f64>| {
            side.get(counter).is_none_or(|v| v.abs() < 0.01)
        };
        if counter == crate::probe::journal::COUNTER && quiet(&k.queried) && quiet(&k.control) {
            return None;
        }
        let slack = count_slack(p, model);
        let mut r = Row::new(
            format!("{} on {} ({})", p.pattern_name, p.fs_type, p.dir),
            metric,
            model,
            measured,
            format!(
                "the kernel's own count ({}, {counter}, {background}): queried − control {what}, \
                 per {per}; within when the two differ by at most {slack:.2} (max({:.0}% of the \
                 model's, {:.2}))",
                k.source,
                COUNT_SLACK_FRACTION * 100.0,
                slack_floor(p),
            ),
        );
        r.within_goal = (model - measured).abs() <= slack;
        Some(r)
    })
    .collect()
}

/// `p`'s Δ row, and its kernel-count row where the counters were read.
fn rows_of(p: &PairResult, d: Counts, prices: &Prices, calibration: bool) -> Vec<Row> {
    let mut v = vec![row_at(p, d, prices, calibration)];
    v.extend(kernel_rows(p, d));
    v
}

/// Runs the validation on `v.dirs` (default /dev/shm and /var/tmp).
pub fn run(cfg: &SimulateConfig, v: &Validation) -> crate::error::Result<ValidationReport> {
    let dirs: Vec<PathBuf> = if v.dirs.is_empty() {
        vec!["/dev/shm".into(), "/var/tmp".into()]
    } else {
        v.dirs.clone()
    };
    let (profile, note) = crate::sim::profile(cfg)?;
    let profile = profile.ok_or_else(|| crate::failure!("the update price needs a profile"))?;
    let sim = SimulateConfig::new(LoopSource::Scenario("write-stat".into()));
    // Read every recording first: a bad file fails before any pair runs.
    let recorded = v
        .straces
        .iter()
        .map(|p| LiveLoop::import(p))
        .collect::<crate::error::Result<Vec<_>>>()?;
    let mut rows = Vec::new();
    let mut notes = vec![format!(
        "reads priced from {}; each directory's query priced from its own chmod-stat pair \
         (from write-stat where the question adds no update to the write), its update from its \
         own write-stat pair, and its atime update from its own write-read-stat pair",
        note.origin
    )];
    for live in &recorded {
        notes.push(format!(
            "{}: {} file calls per pass ({} stats) replayed live, {} of them appended so that \
             the loop repeats; left out: {}",
            live.source,
            live.len(),
            live.stats(),
            live.appended,
            if live.left_out.is_empty() {
                "nothing".to_string()
            } else {
                live.left_out
                    .iter()
                    .map(|(k, n)| format!("{n} {k}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        ));
    }
    for dir in &dirs {
        pair::check_dir(dir).map_err(|e| crate::failure!("--validate-dir {e}"))?;
        let priced = update_price::measure_and_price(
            &PairConfig::new(dir.clone(), Pattern::Write { writes: 1 }),
            &profile,
        )?;
        let calibration = priced.pair.clone().expect("a priced entry keeps its pair");
        let model = model_of(&calibration);
        let (c, _) = costs::resolve_as_measured(model, Some(&profile), &sim)?;
        if priced.price(Term::Update).is_none() || priced.price(Term::Query).is_none() {
            notes.push(format!("{}: {}", priced.label(), priced.reason));
        }
        let prices = Prices::of(&priced, &calibrated_on(&priced), c);
        let counts = |p: &PairResult| delta_counts(p, c).unwrap_or_default();
        rows.extend(rows_of(&calibration, counts(&calibration), &prices, true));
        // chmod-stat is the query's calibration only where it priced the query; where
        // write-stat did (btrfs), chmod-stat holds that price to a chmod's fine stamp.
        let chmod_calibrates = priced.query_pattern.as_deref() != Some(&calibration.pattern_name);
        for (q, calibrates) in [
            (&priced.query_pair, chmod_calibrates),
            (&priced.floor_pair, true),
            (&priced.floor_apart_pair, true),
            // Only their difference prices the excess: each alone holds its one atime update
            // to the atime update's price.
            (&priced.fine_pair, false),
            (&priced.fine_base_pair, false),
            (&priced.swap_pair, true),
            (&priced.swap_apart_pair, true),
            (&priced.first_pair, true),
            (&priced.read_pair, true),
            (&priced.sync_pair, true),
        ] {
            if let Some(q) = q {
                rows.extend(rows_of(q, counts(q), &prices, calibrates));
            }
        }
        for pattern in PATTERNS {
            if pattern == Pattern::WriteRead && priced.read_pair.is_some() {
                continue;
            }
            let p = pair::measure(&PairConfig::new(dir.clone(), pattern))?;
            rows.extend(rows_of(&p, counts(&p), &prices, false));
        }
        match concurrent_tasks() {
            Some(tasks) => {
                let mut cfg = PairConfig::new(dir.clone(), Pattern::Write { writes: 1 });
                cfg.tasks = tasks;
                let p = pair::measure(&cfg)?;
                rows.extend(rows_of(&p, counts(&p), &prices, false));
            }
            None => notes.push(format!(
                "{}: no several-tasks row: this process may run on one CPU only, and tasks \
                 sharing a CPU do not run side by side as the model's tasks do",
                dir.display()
            )),
        }
        for live in &recorded {
            let p = replayed::measure(&ReplayConfig::new(dir.clone()), live)?;
            let d = recorded_counts(&p, c, live);
            rows.extend(rows_of(&p, d, &prices, false));
            notes.extend(super::by_call::kind_note(&p, c, &prices.costs, live));
            notes.extend(super::by_call::note(&p, c, live, dir));
        }
    }
    notes.push(format!(
        "a row is within its goal when the model's Δ is within max({:.0}%, the live Δ's 95% \
         interval) of the live Δ; the first three rows of each directory (write-stat, \
         chmod-stat, chmod-stat-read16) and write-read-stat (the atime update) are the \
         calibration, so they agree by construction, except chmod-stat where write-stat \
         prices the query (there chmod-stat is a prediction); chmod-stat-read16-same and \
         chmod-stat-read1-same price the in-path excess by their difference, and each alone \
         is a prediction that holds its one atime update to the atime update's price",
        GOAL_FRACTION * 100.0
    ));
    Ok(ValidationReport::new("update", "update", rows, notes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::multigrain::PairCounts;
    use crate::probe::Profile;

    fn recorded() -> (Profile, Vec<PairResult>) {
        let profile: Profile =
            serde_json::from_str(include_str!("../../../tests/data/profile-kvm-amd.json")).unwrap();
        let v: serde_json::Value =
            serde_json::from_str(include_str!("../../../tests/data/update-pairs-amd.json"))
                .unwrap();
        (profile, serde_json::from_value(v["pairs"].clone()).unwrap())
    }

    fn counted(queried: f64, control: f64) -> PairCounts {
        let side = |f: f64| {
            [
                ("fine_stamps".to_string(), f),
                ("ctime_swaps".to_string(), f),
            ]
        };
        PairCounts {
            source: crate::probe::multigrain::FILE.into(),
            queried: side(queried).into_iter().collect(),
            control: side(control).into_iter().collect(),
            background_per_s: Default::default(),
            queried_s_per_iteration: 0.0,
            control_s_per_iteration: 0.0,
            journal_absent: None,
        }
    }

    #[test]
    fn the_kernel_judges_the_models_fine_stamps_on_every_filesystem() {
        let (profile, pairs) = recorded();
        let sim = SimulateConfig::new(LoopSource::Scenario("write-stat".into()));
        for mut p in pairs {
            let (c, _) = costs::resolve_as_measured(model_of(&p), Some(&profile), &sim).unwrap();
            let d = delta_counts(&p, c).unwrap();
            // linux@6.18: one queried write-stat iteration takes one ctime fine stamp
            // (inode_set_ctime_current), btrfs included; the control none.
            assert!(
                (d.fine_stamps - 1.0).abs() < 0.01,
                "{}: {}",
                p.fs_type,
                d.fine_stamps
            );
            // The queried write moves the ctime (a fine stamp, then the cmpxchg); the control's
            // write finds the ctime equal to the tick's time and stores nothing but once a
            // tick.
            assert!(
                (d.ctime_moves - 1.0).abs() < 0.01,
                "{}: {}",
                p.fs_type,
                d.ctime_moves
            );
            assert!(kernel_rows(&p, d).is_empty(), "no counters, no row");
            p.kernel_counts = Some(counted(1.0, 0.001));
            let rows = kernel_rows(&p, d);
            let metrics: Vec<&str> = rows.iter().map(|r| r.metric.as_str()).collect();
            assert_eq!(metrics, ["fine_stamps_delta", "ctime_moves_delta"]);
            assert!(rows.iter().all(|r| r.within_goal), "{rows:?}");
            // A kernel that stamped twice per iteration is a miss.
            p.kernel_counts = Some(counted(2.0, 0.0));
            assert!(kernel_rows(&p, d).iter().all(|r| !r.within_goal));
            // A recorded program's pass may differ by half an event, or 2% of many.
            assert_eq!(count_slack(&p, 1.0), PATTERN_SLACK);
            let mut program = p.clone();
            program.pattern = Pattern::Recorded { ops: 900 };
            assert_eq!(count_slack(&program, 1.0), PROGRAM_SLACK);
            assert_eq!(count_slack(&program, 151.0), 0.02 * 151.0);
        }
    }
}
