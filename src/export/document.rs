//! The report document: `report.md`, `report.json` and the SVG charts, written into a directory.

use std::path::Path;

use crate::error::Context;

use super::table::{Align, Table};
use crate::fmt::{duration, estimate, ns};
use crate::gather::Report;
use crate::probe::Clock;

/// A report, ready to write.
#[derive(Debug)]
pub struct ReportDocument<'a>(pub &'a Report);

fn opt_est(p: &crate::probe::Profile, id: &str) -> String {
    p.cost_ns(id).as_ref().map_or("-".into(), estimate)
}

impl ReportDocument<'_> {
    fn environment(&self) -> String {
        let f = &self.0.detect.facts;
        let m = &self.0.profile.machine;
        let hv = if f.hypervisor.present {
            f.hypervisor
                .vendor
                .clone()
                .unwrap_or_else(|| "unknown".into())
        } else {
            "none".into()
        };
        let mut t = Table::new(&[("fact", Align::Left), ("value", Align::Left)]);
        t.row(vec![
            "CPU".into(),
            format!(
                "{} {}",
                m.cpu_vendor.as_deref().unwrap_or(""),
                m.cpu_model.as_deref().unwrap_or("?")
            ),
        ]);
        t.row(vec![
            "kernel".into(),
            m.kernel_release.clone().unwrap_or_default(),
        ]);
        t.row(vec!["CPUs".into(), m.cpus_online.to_string()]);
        t.row(vec!["hypervisor".into(), hv]);
        t.row(vec![
            "clocksource".into(),
            format!(
                "{} (available: {})",
                f.clocksource.current.as_deref().unwrap_or("?"),
                f.clocksource.available.join(" ")
            ),
        ]);
        t.row(vec![
            "TSC".into(),
            format!(
                "{} MHz calibrated; invariant {}; flags: {}",
                m.tsc
                    .calibrated_hz
                    .map_or("?".into(), |h| format!("{:.3}", h / 1e6)),
                f.cpu.invariant_tsc,
                f.host.cpuinfo_tsc_flags.join(" ")
            ),
        ]);
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

    fn knob(&self) -> String {
        let mut out = String::new();
        let mut scenarios: Vec<&str> = Vec::new();
        for m in &self.0.simulation {
            if !scenarios.contains(&m.scenario.as_str()) {
                scenarios.push(&m.scenario);
            }
        }
        for sc in scenarios {
            out += &format!("\n### {sc}\n\n");
            let mut t = Table::new(&[
                ("policy", Align::Left),
                ("ns/op", Align::Right),
                ("ops/s", Align::Right),
                ("speedup", Align::Right),
                ("counter reads/op", Align::Right),
                ("coarse reads/op", Align::Right),
                ("equal successive mtimes", Align::Right),
                ("resolution", Align::Right),
            ]);
            for m in self.0.simulation.iter().filter(|m| m.scenario == sc) {
                for e in &m.estimates {
                    let r = |k: &str| {
                        e.reads_per_op
                            .get(k)
                            .map_or("-".into(), |v| format!("{v:.2}"))
                    };
                    t.row(vec![
                        if e.stock {
                            format!("{} (stock)", e.policy)
                        } else {
                            e.policy.clone()
                        },
                        ns(e.ns_per_op),
                        format!("{:.0}", e.ops_per_sec),
                        format!("{:.3}×", e.speedup),
                        r("counter"),
                        r("coarse"),
                        format!("{:.1}%", e.accuracy.equal_successive_share * 100.0),
                        duration(e.accuracy.resolution_ns),
                    ]);
                }
            }
            out += &t.markdown();
        }
        if !self.0.sweep.is_empty() {
            out += "\n![speedup against precise-read cost](sweep.svg)\n";
            let mut t = Table::new(&[
                ("model", Align::Left),
                ("policy", Align::Left),
                ("5% speedup from", Align::Right),
            ]);
            for s in &self.0.sweep {
                for b in &s.break_even {
                    t.row(vec![
                        s.model.clone(),
                        b.policy.clone(),
                        b.value.map_or("never in 10 ns – 100 µs".into(), |v| {
                            format!("{} per read", duration(v))
                        }),
                    ]);
                }
            }
            out += &format!(
                "\nBreak-even ({}): the precise-read cost at which each setting first buys 5%.\n\n",
                crate::gather::SWEEP_SCENARIO
            );
            out += &t.markdown();
        }
        out
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
                    format!("{:.0}", run.ops_per_sec.median),
                    format!("{:.0}", run.ops_per_sec.min),
                    format!("{:.0}", run.ops_per_sec.max),
                    ns(run.ns_per_iteration),
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

    /// One sentence on what the knob buys in the swept scenario, at this machine's costs.
    fn knob_sentence(&self) -> String {
        let sc = crate::gather::SWEEP_SCENARIO;
        let best = self
            .0
            .simulation
            .iter()
            .filter(|m| m.scenario == sc || m.scenario == format!("run:{sc}"))
            .flat_map(|m| m.estimates.iter())
            .max_by(|a, b| a.speedup.total_cmp(&b.speedup));
        let first_gain = self
            .0
            .sweep
            .iter()
            .flat_map(|s| s.break_even.iter())
            .filter_map(|b| b.value.map(|v| (v, &b.policy)))
            .min_by(|a, b| a.0.total_cmp(&b.0));
        match (best, first_gain) {
            (Some(e), Some((v, p))) => format!(
                " Replaying {sc}, the best knob setting at these costs buys {:.3}× ({}); a 5% gain \
                 needs a precise read of {} or more ({p}).",
                e.speedup,
                e.policy,
                duration(v)
            ),
            _ => String::new(),
        }
    }

    /// A paragraph to paste into a commit message or a mailing-list post.
    pub fn paragraph(&self) -> String {
        let r = self.0;
        let p = &r.profile;
        let m = &p.machine;
        let f = &r.detect.facts;
        let get = |id: &str| p.cost_ns(id).map_or("?".into(), |e| ns(e.point));
        let hv = match (&f.hypervisor.vendor, f.hypervisor.present) {
            (Some(v), true) => format!("a {v} guest"),
            (None, true) => "a guest of an unknown hypervisor".into(),
            _ => "bare metal".into(),
        };
        let trapped = r
            .detect
            .verdicts
            .iter()
            .any(|(n, v)| n == "rdtsc_trapped" && v.holds);
        let precise = p
            .derived
            .precise_read_ns
            .map_or("?".into(), |e| estimate(&e));
        let knob = self.knob_sentence();
        format!(
            "On {} ({hv}, Linux {}, clocksource {}), a precise kernel timestamp costs {precise} ns \
             (syscall:realtime − syscall:realtime_coarse), a coarse one {} ns \
             (vdso:realtime_coarse). clock_gettime(CLOCK_MONOTONIC) costs {} ns through the vDSO \
             and {} ns as a raw syscall; rdtsc costs {} ns and is {}trapped.{knob} Figures are \
             medians with 95% bootstrap intervals from `{}` ({}, seed {}).",
            m.cpu_model.as_deref().unwrap_or("this CPU"),
            m.kernel_release.as_deref().unwrap_or("?"),
            m.clocksource.current.as_deref().unwrap_or("?"),
            get("vdso:realtime_coarse"),
            get("vdso:monotonic"),
            get("syscall:monotonic"),
            get("rdtsc"),
            if trapped { "" } else { "not " },
            r.command,
            r.tool,
            p.seed
        )
    }

    /// `report.md`.
    pub fn markdown(&self) -> crate::error::Result<String> {
        let r = self.0;
        let mut out = format!("# tscope report\n\n{} — `{}`\n\n", r.tool, r.command);
        out += "## Environment\n\n";
        out += &self.environment();
        out += "\n## Timestamp costs: vDSO and syscall side by side\n\n";
        out += &self.clock_table();
        out += "\n![cost per source](costs.svg)\n\n## Counters, libraries and references\n\n";
        out += &self.other_table();
        out += "\n## Verdicts\n\n";
        out += &self.verdicts();
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
        out += "\n## What a vfs_timestamp knob would buy here\n\nEach scenario replayed under \
                every kernel model, priced with this machine's measured costs (`tscope simulate`; \
                models and their sources in docs/kernel-models.md).\n";
        out += &self.knob();
        out += "\n## For a commit message\n\n> ";
        out += &self.paragraph();
        out += "\n\n## Warnings\n\n";
        for s in &r.skipped {
            out += &format!("- skipped: {s}\n");
        }
        if r.profile.warnings.is_empty() && r.skipped.is_empty() {
            out += "none\n";
        }
        for w in &r.profile.warnings {
            out += &format!("- {}\n", w.message);
        }
        Ok(out)
    }

    /// Every file of the report: (name, contents).
    pub fn files(&self) -> crate::error::Result<Vec<(String, Vec<u8>)>> {
        let mut files: Vec<(String, Vec<u8>)> = vec![
            ("report.md".into(), self.markdown()?.into_bytes()),
            ("report.json".into(), super::json(self.0)?),
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
