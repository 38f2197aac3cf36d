//! Exporters for a probe [`Profile`].

use super::table::{Align, Table};
use super::{Exporter, Format};
use crate::probe::Profile;
use crate::stats::Estimate;

/// A profile, ready to print.
#[derive(Debug)]
pub struct ProbeReport<'a>(pub &'a Profile);

/// A number of nanoseconds with sensible precision.
pub fn ns(v: f64) -> String {
    if v.abs() < 10.0 {
        format!("{v:.2}")
    } else if v.abs() < 1000.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}

/// A duration in ns rendered in the unit that suits it.
pub fn duration(v: f64) -> String {
    if v >= 1e9 {
        format!("{:.3} s", v / 1e9)
    } else if v >= 1e6 {
        format!("{:.3} ms", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.2} µs", v / 1e3)
    } else {
        format!("{} ns", ns(v))
    }
}

/// `point [lower, upper]`.
pub fn estimate(e: &Estimate) -> String {
    format!("{} [{}, {}]", ns(e.point), ns(e.lower), ns(e.upper))
}

fn opt<T>(v: Option<T>, f: impl Fn(T) -> String) -> String {
    v.map(f).unwrap_or_else(|| "-".into())
}

impl ProbeReport<'_> {
    fn table(&self) -> Table {
        let mut t = Table::new(&[
            ("source", Align::Left),
            ("cost ns [95% CI]", Align::Right),
            ("ticks", Align::Right),
            ("resolution", Align::Right),
            ("getres", Align::Right),
            ("period (HZ)", Align::Right),
            ("backwards", Align::Right),
        ]);
        for s in &self.0.sources {
            if !s.supported {
                let why = s.reason.clone().unwrap_or_default();
                t.row(vec![s.id.clone(), format!("unsupported: {why}")]);
                continue;
            }
            let period = match (s.update_period_ns, s.implied_hz) {
                (Some(p), Some(hz)) => format!("{} ({hz:.0})", duration(p)),
                _ => "-".into(),
            };
            t.row(vec![
                s.id.clone(),
                opt(s.cost_ns.as_ref(), estimate),
                opt(s.cost_ticks, |e| format!("{:.1}", e.point)),
                opt(s.resolution_ns, duration),
                opt(s.getres_ns, duration),
                period,
                s.monotonic_violations.to_string(),
            ]);
        }
        t
    }

    fn header(&self, md: bool) -> String {
        let p = self.0;
        let m = &p.machine;
        let bullet = if md { "- " } else { "" };
        let mut out = String::new();
        let cpu = m.cpu_model.as_deref().unwrap_or("unknown CPU");
        out += &format!(
            "{bullet}machine: {cpu}, kernel {}, {} CPUs, pinned to CPU {}\n",
            m.kernel_release.as_deref().unwrap_or("?"),
            m.cpus_online,
            opt(m.pinned_cpu, |c| c.to_string())
        );
        out += &format!(
            "{bullet}clocksource: {} (available: {})\n",
            m.clocksource.current.as_deref().unwrap_or("?"),
            m.clocksource.available.join(" ")
        );
        let hv = if m.hypervisor_bit {
            format!("yes ({})", m.hypervisor_signature.as_deref().unwrap_or("?"))
        } else {
            "no".into()
        };
        out += &format!("{bullet}hypervisor bit: {hv}\n");
        let mhz = |hz: f64| format!("{:.3} MHz", hz / 1e6);
        out += &format!(
            "{bullet}TSC: calibrated {} over {}; CPUID 0x15 {}, 0x16 base {}, 0x40000010 {}; invariant {}\n",
            opt(m.tsc.calibrated_hz, mhz),
            opt(m.tsc.calibration_span_s, |s| format!("{s:.2} s")),
            opt(m.tsc.cpuid_15_hz, mhz),
            opt(m.tsc.cpuid_16_base_hz, mhz),
            opt(m.tsc.cpuid_40000010_hz, mhz),
            m.tsc.invariant
        );
        out += &format!(
            "{bullet}precise_read_ns (syscall:realtime − syscall:realtime_coarse): {}\n",
            opt(p.derived.precise_read_ns.as_ref(), estimate)
        );
        out += &format!(
            "{bullet}timer overhead {} ns per sample (removed by regression); seed {}, {}{}, {:.2} s\n",
            ns(p.timer.overhead_ns),
            p.seed,
            if p.quick { "quick" } else { "full" },
            if p.emulate_trap { ", TSC reads trapped (--emulate-trap)" } else { "" },
            p.wall_s
        );
        out
    }

    fn footer(&self, md: bool) -> String {
        let bullet = if md { "- " } else { "warning: " };
        self.0
            .warnings
            .iter()
            .map(|w| format!("{bullet}{}\n", w.message))
            .collect()
    }
}

impl ProbeReport<'_> {
    fn csv(&self) -> String {
        let f = |v: Option<f64>| v.map_or(String::new(), |x| format!("{x}"));
        let mut out = super::csv_line(&[
            "id",
            "supported",
            "cost_ns",
            "lower_ns",
            "upper_ns",
            "cost_ticks",
            "resolution_ns",
            "getres_ns",
            "update_period_ns",
            "monotonic_violations",
        ]);
        for s in &self.0.sources {
            out += &super::csv_line(&[
                s.id.clone(),
                s.supported.to_string(),
                f(s.cost_ns.map(|e| e.point)),
                f(s.cost_ns.map(|e| e.lower)),
                f(s.cost_ns.map(|e| e.upper)),
                f(s.cost_ticks.map(|e| e.point)),
                f(s.resolution_ns),
                f(s.getres_ns),
                f(s.update_period_ns),
                s.monotonic_violations.to_string(),
            ]);
        }
        out
    }
}

impl Exporter for ProbeReport<'_> {
    fn export(&self, format: Format) -> anyhow::Result<Vec<u8>> {
        let out = match format {
            Format::Json => return super::json(self.0),
            Format::Csv => return Ok(self.csv().into_bytes()),
            Format::Table => {
                format!(
                    "{}\n{}\n{}",
                    self.header(false),
                    self.table().text(),
                    self.footer(false)
                )
            }
            Format::Markdown => format!(
                "{}\n{}\n{}",
                self.header(true),
                self.table().markdown(),
                self.footer(true)
            ),
        };
        Ok(out
            .trim_end()
            .to_string()
            .into_bytes()
            .into_iter()
            .chain(*b"\n")
            .collect())
    }
}
