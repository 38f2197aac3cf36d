//! `vm bench --count`: each kernel's timestamp calls per op, counted by `vm count`'s kprobe
//! pass (count's room, [`crate::vm::count::count_kernel`]: one extra boot per kernel on the
//! first requested clocksource, through the bench's own pipeline and session), put beside the
//! timed rows, so that "2 precise reads per op more" and "+9.8%" stand in one row.
//!
//! The counts are `vm count`'s clock-read leaves: precise (clocksource) reads are
//! `ktime_get_real_ts64` and `ktime_get_real_ts64_mg`, coarse (tick) reads
//! `ktime_get_coarse_real_ts64` and `ktime_get_coarse_real_ts64_mg`, each per op less the
//! zero-iteration baseline.

use serde::{Deserialize, Serialize};

use super::{BenchConfig, BenchReport};
use crate::error::Result;
use crate::progress::Progress;
use crate::trace::FsKind;
use crate::vm::boot::clock::Clocksource;
use crate::vm::boot::pipeline::Pipeline;
use crate::vm::count::rows::CountRow;
use crate::vm::count::{self, CountConfig};
use crate::workload::WorkloadName;

/// The clock-read leaves that read the clocksource.
pub(crate) const PRECISE_LEAVES: [&str; 2] = ["ktime_get_real_ts64", "ktime_get_real_ts64_mg"];
/// The clock-read leaves that copy the tick's time.
pub(crate) const COARSE_LEAVES: [&str; 2] = [
    "ktime_get_coarse_real_ts64",
    "ktime_get_coarse_real_ts64_mg",
];

/// Iterations of each workload in the counting boot (`vm count`'s zero-iteration baseline is
/// subtracted).
pub(crate) const COUNT_ITERATIONS: u64 = 2_000;

/// Timestamp calls per op of one workload, counted by kprobes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Counted {
    pub precise_per_op: f64,
    pub coarse_per_op: f64,
}

/// One kernel × file system × workload's counts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CountedRow {
    pub kernel_release: String,
    /// The clocksource the counting boot ran on (`clocksource=`).
    pub clocksource: Clocksource,
    pub fs: FsKind,
    pub workload: WorkloadName,
    #[serde(flatten)]
    pub counted: Counted,
}

/// The `vm count` configuration of `cfg`'s `--count` pass: the same kernels, file systems,
/// workloads and boot options, booted on the first requested clocksource.
pub(crate) fn count_config(cfg: &BenchConfig, iterations: u64) -> CountConfig {
    CountConfig {
        kernels: cfg.kernels.clone(),
        workloads: cfg.workloads.clone(),
        filesystems: cfg.filesystems.clone(),
        iterations,
        boot: cfg.boot.clone(),
        clocksource: Some(super::boot_clocksource(cfg, 0)),
    }
}

/// The precise and coarse calls per op of every kernel × file system × workload that `vm
/// count` counted (rows of a kernel that lacks a leaf count 0 for it; a kernel × workload
/// with no clock row at all gives none).
pub(crate) fn from_rows(rows: &[CountRow], clocksource: Clocksource) -> Vec<CountedRow> {
    let mut out: Vec<CountedRow> = Vec::new();
    for r in rows
        .iter()
        .filter(|r| r.kind == crate::vm::count::rows::RowKind::Clock)
    {
        let n = r.kernel_per_op.unwrap_or(0.0);
        let (p, c) = if PRECISE_LEAVES.contains(&r.function.as_str()) {
            (n, 0.0)
        } else if COARSE_LEAVES.contains(&r.function.as_str()) {
            (0.0, n)
        } else {
            continue;
        };
        let i = match out.iter().position(|x| {
            x.kernel_release == r.kernel_release && x.fs == r.fs && x.workload == r.workload
        }) {
            Some(i) => i,
            None => {
                out.push(CountedRow {
                    kernel_release: r.kernel_release.clone(),
                    clocksource,
                    fs: r.fs,
                    workload: r.workload,
                    counted: Counted {
                        precise_per_op: 0.0,
                        coarse_per_op: 0.0,
                    },
                });
                out.len() - 1
            }
        };
        out[i].counted.precise_per_op += p;
        out[i].counted.coarse_per_op += c;
    }
    out
}

/// `--count`: count's room on every kernel (one boot each, on the first clocksource) through
/// the bench's `pipe`, its calls per op kept in `report.counted`, a kernel whose boot failed
/// in `report.count_errors`.
pub(crate) fn pass(
    cfg: &BenchConfig,
    pipe: &Pipeline,
    report: &mut BenchReport,
    progress: &dyn Progress,
) -> Result<()> {
    let ccfg = count_config(cfg, cfg.count);
    let cs = super::boot_clocksource(cfg, 0);
    progress.note(&format!(
        "counting timestamp calls per op with kprobes ({} iterations, on {cs})",
        cfg.count
    ));
    let mut rows = Vec::new();
    let result = (|| -> Result<()> {
        for (n, source) in ccfg.kernels.iter().enumerate() {
            let k = count::count_kernel(&ccfg, source, n, pipe, progress)?;
            rows.extend(k.rows);
            if let Some(e) = &k.run.error {
                report
                    .count_errors
                    .push(format!("{}: {e}", k.run.kernel_package));
            }
        }
        Ok(())
    })();
    report.stopped |= crate::error::unless_stopped(result)?.is_none();
    report.counted = from_rows(&rows, cs);
    Ok(())
}

/// The counts of one kernel × file system × workload, if counted.
pub(crate) fn lookup(
    counted: &[CountedRow],
    release: &str,
    fs: FsKind,
    workload: WorkloadName,
) -> Option<Counted> {
    counted
        .iter()
        .find(|c| c.kernel_release == release && c.fs == fs && c.workload == workload)
        .map(|c| c.counted)
}
