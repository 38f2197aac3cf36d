//! Exporters for a [`RunReport`]: an aligned table (runs; mem in sv_mem's own line format;
//! pagezero), Markdown, and JSON (the contract in `docs/schema.md`).

use crate::export::table::{Align, Table};
use crate::export::{Exporter, Format};

use super::result::{MemReport, PagezeroReport, RunReport, RunResult};

/// A run report, ready to print.
#[derive(Debug)]
pub struct RunView<'a>(pub &'a RunReport);

/// A rate with thousands separators (`2,413,901`).
pub fn rate(v: f64) -> String {
    let n = v.round() as u64;
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn placement(r: &RunResult) -> String {
    match r.placement {
        Some(super::Placement::SameCpu) => "same CPU".into(),
        Some(super::Placement::DifferentCpus) => "different CPUs".into(),
        None => "-".into(),
    }
}

impl RunView<'_> {
    fn header(&self, md: bool) -> String {
        let r = self.0;
        let b = if md { "- " } else { "" };
        let m = &r.machine;
        let mut out = format!(
            "{b}machine: {}, kernel {}, {} CPUs (allowed {:?}), clocksource {}{}{}\n",
            m.cpu_model.as_deref().unwrap_or("unknown CPU"),
            m.kernel_release.as_deref().unwrap_or("?"),
            m.cpus_online,
            m.allowed_cpus,
            m.clocksource.current.as_deref().unwrap_or("?"),
            if m.hypervisor_bit { ", hypervisor" } else { "" },
            m.load_average
                .map(|l| format!(", load average {:.2}", l[0]))
                .unwrap_or_default()
        );
        if !r.iteration.is_empty() {
            let ops: Vec<String> = r
                .iteration
                .iter()
                .map(|o| match &o.inode {
                    Some(i) => format!("{}({i})", o.syscall),
                    None => o.syscall.clone(),
                })
                .collect();
            out += &format!(
                "{b}workload: {} — {} syscalls per iteration: {}\n",
                r.workload.as_str(),
                r.syscalls_per_iteration,
                ops.join(", ")
            );
            out += &format!(
                "{b}{}sampling: {} s after {} s warm-up, one sample per {} s; tasks {}\n",
                match (&r.dir, &r.fs_type) {
                    (Some(d), Some(f)) => format!("files in {d} ({f}); "),
                    (None, Some(f)) => format!("fs {f}; "),
                    _ => String::new(),
                },
                r.duration_s,
                r.warmup_s,
                r.interval_s,
                if r.pinned { "pinned" } else { "not pinned" }
            );
        }
        out
    }

    fn runs_table(&self) -> Table {
        let pingpong = self.0.runs.iter().any(|r| r.placement.is_some());
        let mtimes = self.0.runs.iter().any(|r| r.mtimes.is_some());
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
        for r in &self.0.runs {
            let mut row = vec![r.tasks.to_string(), r.mode.as_str().to_string()];
            if pingpong {
                row.push(placement(r));
            }
            let lo = r.per_task_min.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = r.per_task_max.iter().copied().fold(0.0, f64::max);
            row.extend([
                rate(r.ops_per_sec.median),
                rate(r.ops_per_sec.min),
                rate(r.ops_per_sec.max),
                if lo.is_finite() { rate(lo) } else { "-".into() },
                rate(hi),
                format!("{:.1}", r.ns_per_iteration),
            ]);
            if let Some(m) = &r.mtimes {
                row.push(format!(
                    "{} of {} ({:.1}%)",
                    m.equal,
                    m.pairs,
                    m.equal_share * 100.0
                ));
            }
            if r.partial {
                row[0] += " (partial)";
            }
            t.row(row);
        }
        t
    }

    fn notes(&self, md: bool) -> String {
        let b = if md { "- " } else { "" };
        let mut out = String::new();
        for r in &self.0.runs {
            if let Some(m) = &r.mtimes {
                let how = if m.source == "fstat" {
                    "read by the workload's own fstat".to_string()
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
                out += &format!("{b}{} tasks, {}: mtimes {how}\n", r.tasks, r.mode.as_str());
            }
            if let Some(s) = &r.sched_yield {
                out += &format!("{b}{} tasks, {}: {}\n", r.tasks, r.mode.as_str(), s.summary);
            }
        }
        if self.0.partial {
            out += &format!("{b}PARTIAL: stopped by a signal before everything ran\n");
        }
        for w in &self.0.warnings {
            out += &format!("{b}warning: {w}\n");
        }
        out
    }

    fn render(&self, md: bool) -> String {
        let r = self.0;
        let mut out = self.header(md);
        out.push('\n');
        if let Some(m) = &r.mem {
            out += &mem_text(m, md);
        } else if let Some(z) = &r.pagezero {
            out += &pagezero_text(z, md);
        } else {
            let t = self.runs_table();
            out += &if md { t.markdown() } else { t.text() };
        }
        let notes = self.notes(md);
        if !notes.is_empty() {
            out.push('\n');
            out += &notes;
        }
        out
    }
}

fn mib(bytes: u64) -> String {
    if bytes >= 1 << 30 && bytes % (1 << 30) == 0 {
        format!("{} GiB", bytes >> 30)
    } else if bytes >= 1 << 20 && bytes % (1 << 20) == 0 {
        format!("{} MiB", bytes >> 20)
    } else if bytes >= 1 << 10 && bytes % (1 << 10) == 0 {
        format!("{} KiB", bytes >> 10)
    } else {
        format!("{bytes} B")
    }
}

/// sv_mem's own format in text; a table per thread count in Markdown.
fn mem_text(m: &MemReport, md: bool) -> String {
    let op = serde_json::to_value(m.op)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let mut out = format!(
        "mem: -mode={op} -size={} -block={}; transparent hugepages: {}{}\n",
        mib(m.size_bytes),
        mib(m.block_bytes),
        m.transparent_hugepage.as_deref().unwrap_or("?"),
        if m.free_page_reporting == Some(true) {
            "; virtio-balloon free page reporting on: pre-fault may include host faults for pages the guest handed back"
        } else {
            ""
        }
    );
    for run in &m.runs {
        out += &format!("\nthreads={}\n", run.threads);
        if md {
            out.push('\n');
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
            out += &t.markdown();
            out.push('\n');
        } else {
            for l in &run.per_thread {
                out += &format!(
                    "{:<12} preflt={:.2} msec, memcpy={:.2} MiB/sec\n",
                    format!("Thread {}", l.thread),
                    l.prefault_ms,
                    l.copy_mib_per_sec
                );
            }
        }
        out += &format!(
            "Total transfer rate: {:.2} MiB/sec (sum of threads {:.2})\n",
            run.total_mib_per_sec, run.sum_mib_per_sec
        );
    }
    out
}

fn pagezero_text(z: &PagezeroReport, md: bool) -> String {
    let mut out = format!(
        "pagezero: 4 KiB pages; ERMS {}, FSRM {}; cold buffer {}\n\n",
        if z.erms { "yes" } else { "no" },
        if z.fsrm { "yes" } else { "no" },
        mib(z.cold_buffer_bytes)
    );
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
    out += &if md { t.markdown() } else { t.text() };
    out
}

impl RunView<'_> {
    /// Plain numbers, one row per run (mem: per thread; pagezero: per variant and cache).
    fn csv(&self) -> String {
        use crate::export::csv_line;
        let r = self.0;
        let w = r.workload.as_str();
        if let Some(m) = &r.mem {
            let op = format!("{:?}", m.op).to_lowercase();
            let mut out = csv_line(&[
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
                    out += &csv_line(&[
                        w.to_string(),
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
            return out;
        }
        if let Some(z) = &r.pagezero {
            let mut out = csv_line(&[
                "workload",
                "variant",
                "cache",
                "ns_per_page",
                "ns_per_page_lower",
                "ns_per_page_upper",
                "gib_per_sec",
            ]);
            for x in &z.results {
                out += &csv_line(&[
                    w.to_string(),
                    x.variant.clone(),
                    x.cache.clone(),
                    x.ns_per_page.to_string(),
                    x.ns_per_page_lower.to_string(),
                    x.ns_per_page_upper.to_string(),
                    x.gib_per_sec.to_string(),
                ]);
            }
            return out;
        }
        let mut out = csv_line(&[
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
            let lo = x.per_task_min.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = x.per_task_max.iter().copied().fold(0.0, f64::max);
            out += &csv_line(&[
                w.to_string(),
                x.tasks.to_string(),
                x.mode.as_str().to_string(),
                match x.placement {
                    Some(super::Placement::SameCpu) => "same_cpu".into(),
                    Some(super::Placement::DifferentCpus) => "different_cpus".into(),
                    None => String::new(),
                },
                x.ops_per_sec.median.to_string(),
                x.ops_per_sec.min.to_string(),
                x.ops_per_sec.max.to_string(),
                if lo.is_finite() {
                    lo.to_string()
                } else {
                    String::new()
                },
                hi.to_string(),
                x.ns_per_iteration.to_string(),
                x.partial.to_string(),
                x.mtimes
                    .as_ref()
                    .map_or(String::new(), |m| m.equal.to_string()),
                x.mtimes
                    .as_ref()
                    .map_or(String::new(), |m| m.pairs.to_string()),
            ]);
        }
        out
    }
}

impl Exporter for RunView<'_> {
    fn export(&self, format: Format) -> anyhow::Result<Vec<u8>> {
        let text = match format {
            Format::Json => return crate::export::json(self.0),
            Format::Csv => return Ok(self.csv().into_bytes()),
            Format::Table => self.render(false),
            Format::Markdown => self.render(true),
        };
        Ok((text.trim_end().to_string() + "\n").into_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_get_thousands_separators() {
        assert_eq!(rate(2_413_901.2), "2,413,901");
        assert_eq!(rate(999.0), "999");
        assert_eq!(rate(1000.0), "1,000");
        assert_eq!(rate(0.0), "0");
    }

    #[test]
    fn sizes_print_in_binary_units() {
        assert_eq!(mib(16 << 30), "16 GiB");
        assert_eq!(mib(1024), "1 KiB");
        assert_eq!(mib(1000), "1000 B");
    }
}
