//! The rows of each workload run of a guest's count, by what they hold the kernel's count to:
//! the model (clock leaves and their callers, inode updates), the fine leaves (the
//! clocksource's read callback), the kprobes (the kernel's multigrain counters), and the
//! workload's definition (syscalls).

use super::{
    judge, model_for, model_per_op, named, ns_by_syscall, run_estimate, CountRow, RowKind,
    SyscallTime, FINE_LEAVES,
};
use crate::error::Result;
use crate::sim::estimate::PolicyEstimate;
use crate::vm::boot::clock::{Clocksource, ClocksourceName};
use crate::vm::count::guest::{GuestCount, WorkloadCount};
use crate::vm::count::{kernel_counts, kprobe, updates};
use crate::workload::{def, WorkloadName};

/// The rows of one guest's count.
pub(crate) fn rows(package: &str, hz: u32, g: &GuestCount) -> Result<Vec<CountRow>> {
    let mut out = Vec::new();
    for run in &g.runs {
        let timing = ns_by_syscall(run);
        let (workload, _) = named(run)?;
        let est = run_estimate(g, hz, run, &timing)?;
        let r = RunRows {
            package,
            g,
            run,
            timing,
        };
        out.extend(r.model_rows(&est));
        out.extend(r.update_row(workload, &est));
        out.extend(r.clocksource_row());
        out.extend(r.multigrain_rows());
        if g.syscall_hist {
            out.extend(r.syscall_rows(workload));
        }
    }
    Ok(out)
}

/// One workload run of a guest, and what each of its rows repeats.
struct RunRows<'a> {
    package: &'a str,
    g: &'a GuestCount,
    run: &'a WorkloadCount,
    timing: Vec<SyscallTime>,
}

impl RunRows<'_> {
    /// Per op: `n` counted in the run less `b` in its baseline.
    fn per(&self, n: u64, b: u64) -> f64 {
        (n as f64 - b as f64) / self.run.iterations.max(1) as f64
    }

    /// `function`'s probe hits per op.
    fn per_hit(&self, function: &str) -> f64 {
        self.per(
            hit(self.run, function, false),
            hit(self.run, function, true),
        )
    }

    /// Whether the guest registered a probe on `function`.
    fn probed(&self, function: &str) -> bool {
        self.g.probes.iter().any(|(f, _)| f == function)
    }

    /// A row of the kernel's count `k` against `model` (its name and its count), judged.
    fn row(
        &self,
        function: String,
        kind: RowKind,
        k: Option<f64>,
        model: Option<(String, f64)>,
    ) -> CountRow {
        let (g, run) = (self.g, self.run);
        let (difference, tolerance, agrees) = judge(k, model.as_ref().map(|m| m.1));
        let symbols = g
            .probes
            .iter()
            .filter(|(f, _)| *f == function)
            .map(|(_, s)| s.clone())
            .collect();
        CountRow {
            kernel_release: g.release.clone(),
            kernel_package: self.package.to_string(),
            fs: run.fs,
            workload: run.workload,
            function,
            kind,
            kernel_per_op: k,
            model: model
                .as_ref()
                .map_or_else(|| model_for(&g.release).name().to_string(), |m| m.0.clone()),
            model_per_op: model.map(|m| m.1),
            guest_ns_per_op: run.ns_per_op,
            guest_ns_by_syscall: self.timing.clone(),
            difference,
            tolerance,
            agrees,
            symbols,
        }
    }

    /// Every timestamp function: the clock-read leaves judged against the model's reads per
    /// op, their callers shown.
    fn model_rows(&self, est: &(String, PolicyEstimate)) -> Vec<CountRow> {
        kprobe::FUNCTIONS
            .iter()
            .map(|f| {
                let k = self.probed(f).then(|| self.per_hit(f));
                let kind = if kprobe::is_clock_read(f) {
                    RowKind::Clock
                } else {
                    RowKind::Context
                };
                self.row(f.to_string(), kind, k, model_per_op(Some(est), f))
            })
            .collect()
    }

    /// Inode timestamp updates against the model's inode_updates_per_op, judged for the
    /// write loops: from 6.13 the kernel's own count of ctime updates (debugfs
    /// multigrain_timestamps `ctime_updates`: every inode_set_ctime_current() that stored a
    /// new time, on every filesystem); before, the write path's update functions
    /// (generic_update_time; xfs's own when its module's symbol was probed).
    fn update_row(
        &self,
        workload: WorkloadName,
        est: &(String, PolicyEstimate),
    ) -> Option<CountRow> {
        let (name, k, covers) = updates::count(self.g, self.run)?;
        let m = Some((est.0.clone(), est.1.inode_updates_per_op));
        let mut r = self.row(name.into(), RowKind::Update, Some(k), m);
        let write_loop = matches!(workload, WorkloadName::WriteOnly | WorkloadName::WriteStat);
        if !(write_loop && covers) {
            r.agrees = None;
        }
        r.symbols = updates::symbols(self.g, name);
        Some(r)
    }

    /// The clocksource's read callback beside the fine leaves (shown, not judged: the tick
    /// and hrtimers read the clock too).
    fn clocksource_row(&self) -> Option<CountRow> {
        let cb = self
            .g
            .clocksource
            .as_ref()
            .and_then(ClocksourceName::running)
            .map(Clocksource::read_callback)
            .filter(|cb| self.probed(cb))?;
        let leaves = FINE_LEAVES
            .iter()
            .filter(|f| self.probed(f))
            .map(|f| self.per_hit(f))
            .sum();
        let mut r = self.row(
            cb.into(),
            RowKind::Clocksource,
            Some(self.per_hit(cb)),
            Some((FINE_LEAVES.join("+"), leaves)),
        );
        r.agrees = None;
        Some(r)
    }

    /// The kernel's multigrain counters: fine_stamps judged against the kprobe count of
    /// ktime_get_real_ts64_mg, ctime_updates shown beside inode_set_ctime_current's.
    fn multigrain_rows(&self) -> Vec<CountRow> {
        let run = self.run;
        if run.multigrain.is_empty() {
            return Vec::new();
        }
        let mut out = Vec::new();
        for c in kernel_counts::MULTIGRAIN_COUNTERS {
            let n = run.multigrain.get(c).copied().unwrap_or(0);
            let b = run.baseline_multigrain.get(c).copied().unwrap_or(0);
            let probe = match c {
                "fine_stamps" => Some("ktime_get_real_ts64_mg"),
                "ctime_updates" => Some("inode_set_ctime_current"),
                _ => None,
            };
            let m = probe
                .filter(|f| self.probed(f))
                .map(|f| (format!("kprobe:{f}"), self.per_hit(f)));
            let mut r = self.row(
                format!("multigrain:{c}"),
                RowKind::KernelCounter,
                Some(self.per(n, b)),
                m,
            );
            if c != "fine_stamps" {
                r.agrees = None;
            }
            if r.model_per_op.is_none() {
                r.model = "-".into();
            }
            out.push(r);
        }
        out
    }

    /// The syscalls per op against the workload's definition: every one it names, and any
    /// other the loop issued at least once every two ops.
    fn syscall_rows(&self, workload: WorkloadName) -> Vec<CountRow> {
        let run = self.run;
        let expected = def::syscalls_per_iteration(workload);
        let mut names: Vec<&str> = expected.iter().map(|(s, _)| s.as_str()).collect();
        for (s, &n) in &run.syscalls {
            let extra = self.per(n, run.baseline_syscalls.get(s).copied().unwrap_or(0));
            if extra >= 0.5 && !names.contains(&s.as_str()) {
                names.push(s);
            }
        }
        names
            .into_iter()
            .map(|s| {
                let n = run.syscalls.get(s).copied().unwrap_or(0);
                let b = run.baseline_syscalls.get(s).copied().unwrap_or(0);
                let want = expected.iter().find(|(e, _)| *e == s).map_or(0.0, |e| e.1);
                let m = Some(("workload".to_string(), want));
                self.row(
                    format!("syscall:{s}"),
                    RowKind::Syscall,
                    Some(self.per(n, b)),
                    m,
                )
            })
            .collect()
    }
}

fn hit(run: &WorkloadCount, function: &str, baseline: bool) -> u64 {
    let m = if baseline {
        &run.baseline_hits
    } else {
        &run.hits
    };
    m.get(function).copied().unwrap_or(0)
}
