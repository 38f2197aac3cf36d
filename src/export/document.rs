//! The report document: `report.md`, `report.json` and the SVG charts, written into a directory.

use std::path::Path;

use crate::error::Context;

use super::table::{Align, Table};
use crate::fmt::{duration, estimate, ns};
use crate::probe::Clock;
use crate::report::Report;

/// A report, ready to write.
#[derive(Debug)]
pub struct ReportDocument<'a>(pub &'a Report);

fn opt_est(p: &crate::probe::Profile, id: &str) -> String {
    p.cost_ns(id).as_ref().map_or("-".into(), estimate)
}

/// What `report` prints once its files are written: the path of each.
pub fn written(dir: &Path, files: &[(String, Vec<u8>)]) -> String {
    let names: Vec<String> = files
        .iter()
        .map(|(name, _)| dir.join(name).display().to_string())
        .collect();
    format!("wrote {}\n", names.join(", "))
}

impl ReportDocument<'_> {
    fn environment(&self) -> String {
        let e = &self.0.environment;
        let f = &self.0.detect.facts;
        let m = &self.0.profile.machine;
        let or = |v: &Option<String>| v.clone().unwrap_or_else(|| "not published".into());
        let num = |v: Option<u32>| v.map_or("?".into(), |n| n.to_string());
        let mut t = Table::new(&[("fact", Align::Left), ("value", Align::Left)]);
        let mut row = |k: &str, v: String| t.row(vec![k.to_string(), v]);
        if !e.what_ifs.is_empty() {
            row("**what-if**", format!("**{}**", e.what_ifs.join("; ")));
        }
        row("date (UTC)", e.date_utc.clone());
        row(
            "tscope",
            format!("{} (git {})", e.tscope_version, e.git_revision),
        );
        row("command", format!("`{}`", self.0.command));
        row("kernel", or(&e.kernel_release));
        row(
            "kernel command line",
            format!("`{}`", or(&e.kernel_cmdline)),
        );
        row("mitigations", e.mitigations());
        row(
            "CPU",
            format!(
                "{} {} (family {}, model {}, stepping {}), microcode {}",
                e.cpu_vendor.as_deref().unwrap_or(""),
                e.cpu_brand.as_deref().unwrap_or("?"),
                num(e.cpu_family),
                num(e.cpu_model),
                num(e.cpu_stepping),
                or(&e.microcode)
            ),
        );
        row("CPUs", m.cpus_online.to_string());
        row(
            "frequency",
            format!(
                "driver {}, governor {}, boost {}, pstate {}",
                or(&e.cpufreq_driver),
                or(&e.governor),
                or(&e.boost),
                or(&e.pstate_status)
            ),
        );
        if let Some(c) = &self.0.profile.core_clock {
            row(
                "core clock",
                format!(
                    "{:.2} GHz while probing ({:.2}–{:.2} over {} add-chain timings)",
                    c.ghz, c.ghz_min, c.ghz_max, c.timings
                ),
            );
        }
        row("hypervisor", e.hypervisor.clone());
        row(
            "clocksource",
            format!(
                "{} (available: {})",
                f.clocksource.current.as_deref().unwrap_or("?"),
                f.clocksource.available.join(" ")
            ),
        );
        row("HZ", e.hz.map_or("?".into(), |h| h.to_string()));
        row(
            "TSC",
            format!(
                "{} MHz calibrated; invariant {}; flags: {}",
                m.tsc
                    .calibrated_hz
                    .map_or("?".into(), |h| format!("{:.3}", h / 1e6)),
                f.cpu.invariant_tsc,
                f.host.cpuinfo_tsc_flags.join(" ")
            ),
        );
        t.markdown()
    }

    fn clock_table(&self) -> String {
        let p = &self.0.profile;
        let mut t = Table::new(&[
            ("clock", Align::Left),
            ("vDSO ns [95% CI]", Align::Right),
            ("syscall ns [95% CI]", Align::Right),
            ("syscall − vDSO", Align::Right),
            ("resolution", Align::Right),
        ]);
        let names: Vec<&str> = Clock::ALL
            .iter()
            .map(|c| c.name())
            .chain(["gettimeofday"])
            .collect();
        for name in names {
            let v = p.cost_ns(&format!("vdso:{name}"));
            let s = p.cost_ns(&format!("syscall:{name}"));
            let res = p
                .source(&format!("vdso:{name}"))
                .and_then(|r| r.resolution_ns)
                .map_or("-".into(), duration);
            t.row(vec![
                name.to_string(),
                opt_est(p, &format!("vdso:{name}")),
                opt_est(p, &format!("syscall:{name}")),
                match (v, s) {
                    (Some(v), Some(s)) => ns(s.point - v.point),
                    _ => "-".into(),
                },
                res,
            ]);
        }
        t.markdown()
    }

    fn other_table(&self) -> String {
        let p = &self.0.profile;
        let mut t = Table::new(&[
            ("source", Align::Left),
            ("ns [95% CI]", Align::Right),
            ("ticks", Align::Right),
        ]);
        for s in &p.sources {
            if s.id.starts_with("vdso:")
                || s.id.starts_with("syscall:") && s.id != "syscall:getppid"
            {
                continue;
            }
            let cost = s.cost_ns.as_ref().map_or_else(
                || format!("unsupported: {}", s.reason.clone().unwrap_or_default()),
                estimate,
            );
            t.row(vec![
                s.id.clone(),
                cost,
                s.cost_ticks
                    .map_or("-".into(), |e| format!("{:.1}", e.point)),
            ]);
        }
        t.markdown()
    }

    fn verdicts(&self) -> String {
        let mut t = Table::new(&[
            ("verdict", Align::Left),
            ("holds", Align::Left),
            ("evidence", Align::Left),
        ]);
        for (name, v) in &self.0.detect.verdicts {
            t.row(vec![
                format!("`{name}`"),
                match v.state {
                    crate::detect::verdict::VerdictState::Yes => "**yes**",
                    crate::detect::verdict::VerdictState::No => "no",
                    crate::detect::verdict::VerdictState::Inconclusive => "inconclusive",
                }
                .into(),
                v.summary.clone(),
            ]);
        }
        t.markdown()
    }

    fn workloads(&self) -> String {
        let mut out = String::new();
        for r in &self.0.workloads {
            let name = r.workload.as_str();
            out += &format!("\n### {name}\n\n");
            if let (Some(dir), Some(fs)) = (&r.dir, &r.fs_type) {
                out += &format!("In `{dir}` ({fs}). ");
            }
            out += &format!(
                "{} syscalls per iteration: {}.\n\n",
                r.syscalls_per_iteration,
                r.iteration
                    .iter()
                    .map(|o| o.syscall.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            let mut t = Table::new(&[
                ("tasks", Align::Right),
                ("mode", Align::Left),
                ("ops/s median", Align::Right),
                ("min", Align::Right),
                ("max", Align::Right),
                ("ns/iteration", Align::Right),
            ]);
            for run in &r.runs {
                t.row(vec![
                    run.tasks.to_string(),
                    run.mode.as_str().to_string(),
                    crate::fmt::opt(run.ops_per_sec, |s| format!("{:.0}", s.median)),
                    crate::fmt::opt(run.ops_per_sec, |s| format!("{:.0}", s.min)),
                    crate::fmt::opt(run.ops_per_sec, |s| format!("{:.0}", s.max)),
                    crate::fmt::opt(run.ns_per_iteration, ns),
                ]);
            }
            out += &t.markdown();
            out += &format!("\n![{name} ops/s per interval](workload-{name}.svg)\n");
            for w in &r.warnings {
                out += &format!("\n- {w}\n");
            }
        }
        out
    }

    /// `report.md`.
    pub fn markdown(&self) -> crate::error::Result<String> {
        let r = self.0;
        let title = if r.environment.what_ifs.is_empty() {
            "# tscope report".to_string()
        } else {
            format!(
                "# tscope report — what-if: {}",
                r.environment.what_ifs.join("; ")
            )
        };
        let mut out = format!("{title}\n\n{} — `{}`\n\n", r.tool, r.command);
        out += "## Environment\n\n";
        out += &self.environment();
        out += "\n## Timestamp costs: vDSO and syscall side by side\n\n";
        out += &self.clock_table();
        out += "\n![cost per source](costs.svg)\n\n## Counters, libraries and references\n\n";
        out += &self.other_table();
        out += "\n## Verdicts\n\n";
        out += &self.verdicts();
        out += &super::baseline::section(r);
        if !r.workloads.is_empty() {
            out += "\n## Workloads on this kernel\n\nwill-it-scale semantics (`tscope run`, \
                    docs/workloads.md): tasks pinned, one sample per interval after a warm-up.\n";
            out += &self.workloads();
        }
        if let Some(m) = &r.vm {
            out += "\n## Inside guests, one per clocksource\n\n`tscope vm guest` (docs/vm.md): \
                    the same probe and detect inside a Linux guest booted with each \
                    `clocksource=`; under TCG the guest figures are emulation costs.\n\n";
            let bytes = super::export(m, super::Format::Markdown)?;
            out += &String::from_utf8_lossy(&bytes);
        }
        if let Some(b) = &r.vm_bench {
            out += "\n## Clock cost against throughput, inside a guest\n\n";
            let command = crate::vm::bench::BenchConfig::for_report(None).command();
            out += &super::vm_bench::report_section(b, &command);
        }
        out += "\n## What a vfs_timestamp knob would buy here\n\nEach scenario replayed under \
                every kernel model, priced with this machine's measured costs (`tscope simulate`; \
                models and their sources in docs/kernel-models.md).\n";
        out += "\nThe answer first: per scenario and model, the stock setting against the fastest \
                one, what the fastest costs in accuracy, and the precise-read cost the replay \
                used.\n\n";
        out += &super::knob::summary(r);
        out += &super::knob::price_note(r);
        out += &super::knob::sections(r);
        out += &super::programs::section(r);
        out += "\n## For a commit message\n\nPlain text at 72 columns, also in \
                `commit-message.txt`:\n\n```text\n";
        out += &super::commit::message(r);
        out += "```\n\n## Warnings\n\n";
        for s in &r.skipped {
            out += &format!("- skipped: {s}\n");
        }
        if r.profile.warnings.is_empty() && r.skipped.is_empty() {
            out += "none\n";
        }
        for w in &r.profile.warnings {
            out += &format!("- {}\n", w.message);
        }
        // What the report quotes from the machine (its CPU model, …) drives no terminal.
        Ok(super::safe::text(&out).into_owned())
    }

    /// Every file of the report: (name, contents).
    pub fn files(&self) -> crate::error::Result<Vec<(String, Vec<u8>)>> {
        let mut files: Vec<(String, Vec<u8>)> = vec![
            ("report.md".into(), self.markdown()?.into_bytes()),
            (
                "report.json".into(),
                super::json(&super::Tagged::new(crate::input::Kind::Report, self.0))?,
            ),
            (
                "commit-message.txt".into(),
                super::commit::message(self.0).into_bytes(),
            ),
            (
                "costs.svg".into(),
                super::svg::costs(&self.0.profile)?.into_bytes(),
            ),
            (
                "sweep.svg".into(),
                super::svg::sweep(&self.0.sweep)?.into_bytes(),
            ),
        ];
        for r in &self.0.workloads {
            let name = format!("workload-{}.svg", r.workload.as_str());
            files.push((name, super::svg::workload(r)?.into_bytes()));
        }
        Ok(files)
    }

    /// Writes every file into `dir` (created if missing), each whole or not at all.
    pub fn write(&self, dir: &Path) -> crate::error::Result<Vec<std::path::PathBuf>> {
        std::fs::create_dir_all(dir).with_context(|| format!("creating '{}'", dir.display()))?;
        let mut written = Vec::new();
        for (name, bytes) in self.files()? {
            let path = dir.join(&name);
            super::emit(&bytes, Some(&path))?;
            written.push(path);
        }
        Ok(written)
    }
}
