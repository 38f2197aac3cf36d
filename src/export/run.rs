//! The printed forms of a [`RunReport`]: the machine and workload as a header, then one row
//! per run (mem in sv_mem's own line format, pagezero per variant), then the notes.

use serde::Serialize;

use super::table::{Align, Table};
use super::{Block, Render, Style};
use crate::fmt::{bytes, csv_num, opt, rate};
use crate::workload::result::{MemReport, PagezeroReport, RunReport, RunResult};
use crate::workload::Placement;

impl Render for RunReport {
    fn kind(&self) -> Option<crate::input::Kind> {
        Some(crate::input::Kind::Run)
    }

    fn json(&self) -> impl Serialize + '_ {
        self
    }

    fn blocks(&self, style: Style) -> Vec<Block> {
        let mut b = vec![Block::list("", header(self)), Block::Blank];
        if let Some(m) = &self.mem {
            b.extend(mem(m, style));
        } else if let Some(z) = &self.pagezero {
            b.extend(pagezero(z));
        } else {
            b.push(Block::Table(runs(self)));
        }
        if let Some(p) = &self.pair {
            b.extend([Block::Blank, Block::Heading("the live knob pair".into())]);
            b.push(Block::Table(super::pair::table(std::slice::from_ref(p))));
            b.push(Block::list("", super::pair::lines(p)));
        }
        let notes = notes(self);
        if !notes.is_empty() {
            b.extend([Block::Blank, Block::list("", notes)]);
        }
        b
    }

    fn csv(&self) -> Table {
        if let Some(m) = &self.mem {
            mem_csv(self, m)
        } else if let Some(z) = &self.pagezero {
            pagezero_csv(self, z)
        } else {
            runs_csv(self)
        }
    }
}

fn placement(r: &RunResult) -> String {
    match r.placement {
        Some(Placement::SameCpu) => "same CPU".into(),
        Some(Placement::DifferentCpus) => "different CPUs".into(),
        None => "-".into(),
    }
}

/// The machine, and for a syscall workload its iteration and sampling.
fn header(r: &RunReport) -> Vec<String> {
    let m = &r.machine;
    let mut lines = vec![format!(
        "machine: {}, kernel {}, {} CPUs (allowed {:?}), clocksource {}{}{}",
        m.cpu_model.as_deref().unwrap_or("unknown CPU"),
        m.kernel_release.as_deref().unwrap_or("?"),
        m.cpus_online,
        m.allowed_cpus,
        m.clocksource.current.as_deref().unwrap_or("?"),
        if m.hypervisor_bit { ", hypervisor" } else { "" },
        m.load_average
            .map(|l| format!(", load average {:.2}", l[0]))
            .unwrap_or_default()
    )];
    if !r.iteration.is_empty() {
        let ops: Vec<String> = r
            .iteration
            .iter()
            .map(|o| match &o.inode {
                Some(i) => format!("{}({i})", o.syscall),
                None => o.syscall.clone(),
            })
            .collect();
        lines.push(format!(
            "workload: {} — {} syscalls per iteration: {}",
            r.workload.as_str(),
            r.syscalls_per_iteration,
            ops.join(", ")
        ));
        lines.push(format!(
            "{}sampling: {} s after {} s warm-up, one sample per {} s; tasks {}",
            match (&r.dir, &r.fs_type) {
                (Some(d), Some(f)) => format!("files in {d} ({f}); "),
                (None, Some(f)) => format!("fs {f}; "),
                _ => String::new(),
            },
            r.duration_s,
            r.warmup_s,
            r.interval_s,
            if r.pinned { "pinned" } else { "not pinned" }
        ));
    }
    lines
}

fn runs(report: &RunReport) -> Table {
    let pingpong = report.runs.iter().any(|r| r.placement.is_some());
    let mtimes = report.runs.iter().any(|r| r.mtimes.is_some());
    let mut cols = vec![("tasks", Align::Right), ("mode", Align::Left)];
    if pingpong {
        cols.push(("placement", Align::Left));
    }
    cols.extend([
        ("ops/s median", Align::Right),
        ("min", Align::Right),
        ("max", Align::Right),
        ("per-task min", Align::Right),
        ("per-task max", Align::Right),
        ("ns/iteration", Align::Right),
    ]);
    if mtimes {
        cols.push(("equal mtimes", Align::Right));
    }
    let mut t = Table::new(&cols);
    for r in &report.runs {
        let mut row = vec![r.tasks.to_string(), r.mode.as_str().to_string()];
        if pingpong {
            row.push(placement(r));
        }
        let (lo, hi) = per_task_range(r);
        row.extend([
            opt(r.ops_per_sec, |s| rate(s.median)),
            opt(r.ops_per_sec, |s| rate(s.min)),
            opt(r.ops_per_sec, |s| rate(s.max)),
            opt(lo, rate),
            opt(hi, rate),
            opt(r.ns_per_iteration, |v| format!("{v:.1}")),
        ]);
        if let Some(m) = &r.mtimes {
            row.push(format!(
                "{} of {} ({:.1}%)",
                m.equal,
                m.pairs,
                m.equal_share * 100.0
            ));
        }
        if r.stopped {
            row[0] += " (partial)";
        }
        t.row(row);
    }
    t
}

/// The slowest task's lowest and the fastest task's highest ops/s (each `None` when no task
/// sampled).
fn per_task_range(r: &RunResult) -> (Option<f64>, Option<f64>) {
    let lo = r.per_task_min.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = r
        .per_task_max
        .iter()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
    (
        Some(lo).filter(|v| v.is_finite()),
        Some(hi).filter(|v| v.is_finite()),
    )
}

/// How mtimes were read, the sched_yield checks, a partial run, the warnings.
fn notes(report: &RunReport) -> Vec<String> {
    let mut out = Vec::new();
    for r in &report.runs {
        if let Some(m) = &r.mtimes {
            let how = if m.source == "fstat" {
                "read by the workload's own fstat".to_string()
            } else if m.source == "statx" {
                "read by the workload's own statx, which asks for the size only (no query: a \
                 coarse mtime stays equal within the tick)"
                    .to_string()
            } else {
                format!(
                    "inferred from CLOCK_REALTIME_COARSE (a stat would change them); {} of {} checks against fstat differed{}",
                    m.inference_mismatches.unwrap_or(0),
                    m.inference_checks.unwrap_or(0),
                    if m.inference_checked == Some(true) {
                        ""
                    } else {
                        " (the multigrain floor moved: other processes took fine-grained timestamps, so the real equal share is lower)"
                    }
                )
            };
            out.push(format!(
                "{} tasks, {}: mtimes {how}",
                r.tasks,
                r.mode.as_str()
            ));
        }
        if let Some(s) = &r.sched_yield {
            out.push(format!(
                "{} tasks, {}: {}",
                r.tasks,
                r.mode.as_str(),
                s.summary
            ));
        }
    }
    if report.stopped {
        out.push("PARTIAL: stopped by a signal before everything ran".into());
    }
    out.extend(report.warnings.iter().map(|w| format!("warning: {w}")));
    out
}

/// sv_mem's own format in text; a table per thread count in Markdown.
fn mem(m: &MemReport, style: Style) -> Vec<Block> {
    let op = serde_json::to_value(m.op)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let mut b = vec![Block::Text(format!(
        "mem: -mode={op} -size={} -block={}; transparent hugepages: {}{}\n",
        bytes(m.size_bytes),
        bytes(m.block_bytes),
        m.transparent_hugepage.as_deref().unwrap_or("?"),
        if m.free_page_reporting == Some(true) {
            "; virtio-balloon free page reporting on: pre-fault may include host faults for pages the guest handed back"
        } else {
            ""
        }
    ))];
    for run in &m.runs {
        b.extend([
            Block::Blank,
            Block::Text(format!("threads={}\n", run.threads)),
        ]);
        if style.is_markdown() {
            let mut t = Table::new(&[
                ("thread", Align::Right),
                ("cpu", Align::Right),
                ("preflt ms", Align::Right),
                ("memcpy MiB/s", Align::Right),
            ]);
            for l in &run.per_thread {
                t.row(vec![
                    l.thread.to_string(),
                    l.cpu.map_or("-".into(), |c| c.to_string()),
                    format!("{:.2}", l.prefault_ms),
                    format!("{:.2}", l.copy_mib_per_sec),
                ]);
            }
            b.extend([Block::Blank, Block::Table(t), Block::Blank]);
        } else {
            let lines: String = run
                .per_thread
                .iter()
                .map(|l| {
                    format!(
                        "{:<12} preflt={:.2} msec, memcpy={:.2} MiB/sec\n",
                        format!("Thread {}", l.thread),
                        l.prefault_ms,
                        l.copy_mib_per_sec
                    )
                })
                .collect();
            b.push(Block::Text(lines));
        }
        b.push(Block::Text(format!(
            "Total transfer rate: {:.2} MiB/sec (sum of threads {:.2})\n",
            run.total_mib_per_sec, run.sum_mib_per_sec
        )));
    }
    b
}

fn pagezero(z: &PagezeroReport) -> Vec<Block> {
    let mut t = Table::new(&[
        ("variant", Align::Left),
        ("cache", Align::Left),
        ("ns/page [range]", Align::Right),
        ("GiB/s", Align::Right),
    ]);
    for r in &z.results {
        t.row(vec![
            r.variant.clone(),
            r.cache.clone(),
            format!(
                "{:.1} [{:.1}, {:.1}]",
                r.ns_per_page, r.ns_per_page_lower, r.ns_per_page_upper
            ),
            format!("{:.2}", r.gib_per_sec),
        ]);
    }
    vec![
        Block::Text(format!(
            "pagezero: 4 KiB pages; ERMS {}, FSRM {}; cold buffer {}\n",
            if z.erms { "yes" } else { "no" },
            if z.fsrm { "yes" } else { "no" },
            bytes(z.cold_buffer_bytes)
        )),
        Block::Blank,
        Block::Table(t),
    ]
}

/// One row per thread of each thread count.
fn mem_csv(r: &RunReport, m: &MemReport) -> Table {
    let op = format!("{:?}", m.op).to_lowercase();
    let mut t = Table::plain(&[
        "workload",
        "op",
        "threads",
        "thread",
        "cpu",
        "bytes",
        "prefault_ms",
        "copy_mib_per_sec",
        "total_mib_per_sec",
    ]);
    for run in &m.runs {
        for l in &run.per_thread {
            t.row(vec![
                r.workload.as_str().to_string(),
                op.clone(),
                run.threads.to_string(),
                l.thread.to_string(),
                l.cpu.map_or(String::new(), |c| c.to_string()),
                l.bytes.to_string(),
                l.prefault_ms.to_string(),
                l.copy_mib_per_sec.to_string(),
                run.total_mib_per_sec.to_string(),
            ]);
        }
    }
    t
}

/// One row per variant and cache state.
fn pagezero_csv(r: &RunReport, z: &PagezeroReport) -> Table {
    let mut t = Table::plain(&[
        "workload",
        "variant",
        "cache",
        "ns_per_page",
        "ns_per_page_lower",
        "ns_per_page_upper",
        "gib_per_sec",
    ]);
    for x in &z.results {
        t.row(vec![
            r.workload.as_str().to_string(),
            x.variant.clone(),
            x.cache.clone(),
            x.ns_per_page.to_string(),
            x.ns_per_page_lower.to_string(),
            x.ns_per_page_upper.to_string(),
            x.gib_per_sec.to_string(),
        ]);
    }
    t
}

/// One row per run (task count and mode).
fn runs_csv(r: &RunReport) -> Table {
    let mut t = Table::plain(&[
        "workload",
        "tasks",
        "mode",
        "placement",
        "ops_per_sec_median",
        "ops_per_sec_min",
        "ops_per_sec_max",
        "per_task_min",
        "per_task_max",
        "ns_per_iteration",
        "partial",
        "equal_mtimes",
        "mtime_pairs",
    ]);
    for x in &r.runs {
        let (lo, hi) = per_task_range(x);
        t.row(vec![
            r.workload.as_str().to_string(),
            x.tasks.to_string(),
            x.mode.as_str().to_string(),
            match x.placement {
                Some(Placement::SameCpu) => "same_cpu".into(),
                Some(Placement::DifferentCpus) => "different_cpus".into(),
                None => String::new(),
            },
            csv_num(x.ops_per_sec.map(|s| s.median)),
            csv_num(x.ops_per_sec.map(|s| s.min)),
            csv_num(x.ops_per_sec.map(|s| s.max)),
            csv_num(lo),
            csv_num(hi),
            csv_num(x.ns_per_iteration),
            x.stopped.to_string(),
            x.mtimes
                .as_ref()
                .map_or(String::new(), |m| m.equal.to_string()),
            x.mtimes
                .as_ref()
                .map_or(String::new(), |m| m.pairs.to_string()),
        ]);
    }
    t
}
