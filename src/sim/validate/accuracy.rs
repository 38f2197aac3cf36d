//! Accuracy, on the live kernel: write-only and write-stat on tmpfs and the root filesystem,
//! the kernel's share of equal successive mtimes (write-stat: each `fstat`'s mtime; write-only:
//! the coarse clock after each write, checked against `fstat` every 65536 writes) against the
//! `linux-multigrain` model's share, replayed at the measured pace with this machine's tick.

use std::path::PathBuf;

use super::{scenario_on, Row, ValidationReport};
use crate::fmt::duration_short;
use crate::kernel::{ModelId, Policy};
use crate::sim::config::{SimulateConfig, Validation};
use crate::sim::costs;
use crate::sim::estimate::{base_from_measured, replay};

/// Replayed iterations at most (the share converges long before).
const MAX_ITERATIONS: u64 = 2_000_000;

/// Runs the accuracy validation (`name`: accuracy, write-only or write-stat).
pub fn run(cfg: &SimulateConfig, v: &Validation) -> crate::error::Result<ValidationReport> {
    let name = v.check.as_str();
    let workloads: &[&str] = match name {
        "write-only" => &["write-only"],
        "write-stat" => &["write-stat"],
        _ => &["write-only", "write-stat"],
    };
    let dirs: Vec<PathBuf> = if v.dirs.is_empty() {
        vec!["/dev/shm".into(), "/var/tmp".into()]
    } else {
        v.dirs.clone()
    };
    let (profile, note) = crate::sim::profile(cfg)?;
    let model = ModelId::newest(crate::kernel::Family::Linux);
    let (c, sources) = costs::resolve(model, profile.as_ref(), cfg)?;
    let policy =
        Policy::parse("linux:multigrain").ok_or_else(|| crate::failure!("no multigrain policy"))?;
    let table = model.table();
    let mut rows = Vec::new();
    let mut notes = vec![format!(
        "tick {} ({}); profile: {}",
        duration_short(c.tick_ns),
        sources.tick,
        note.origin
    )];
    for dir in &dirs {
        for &w in workloads {
            let report = super::run_workload(w, v.secs, Some(dir))?;
            let run = &report.runs[0];
            let Some(m) = &run.mtimes else {
                crate::fail!("{w} reported no mtimes");
            };
            let fs = super::fs_kind(report.fs_type.as_deref());
            let scenario = scenario_on(w, Some(fs))?;
            let Some(measured_ns) = run.ns_per_iteration else {
                crate::fail!("{w} took no sample: no measured rate");
            };
            let base = base_from_measured(model, &policy, c, &scenario, measured_ns, 20_000);
            let iterations = ((m.pairs + 1).clamp(1_000, MAX_ITERATIONS)).max(1);
            let st = replay(&table, &policy, c, &scenario, base, iterations);
            let predicted = if st.successive_pairs > 0 {
                st.successive_equal as f64 / st.successive_pairs as f64
            } else {
                0.0
            };
            let check = match (m.inference_checks, m.inference_mismatches) {
                (Some(n), Some(bad)) => {
                    format!(", coarse-clock inference checked by fstat {n} time(s), {bad} off")
                }
                _ => String::new(),
            };
            rows.push(Row::new(
                format!("{w} on {fs} ({})", dir.display()),
                "equal_successive_share",
                predicted,
                m.equal_share,
                format!(
                    "{} pairs measured (mtimes from {}{check}) at {} per iteration; model \
                     replayed {iterations} iterations",
                    m.pairs,
                    m.source,
                    duration_short(measured_ns)
                ),
            ));
        }
    }
    notes.push(
        "write-only's equal share is the share of writes within one tick of the previous one: it \
         tests the model's pacing and tick, and that an unqueried inode gets coarse times; \
         write-stat's tests that a stat makes the next change fine-grained"
            .into(),
    );
    Ok(ValidationReport::new("accuracy", name, rows, notes))
}
