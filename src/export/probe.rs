//! The printed forms of a probe [`Profile`]: the machine and calibration as a header, one row
//! per source, the warnings last.

use serde::Serialize;

use super::table::{Align, Table};
use super::{Block, Render, Style};
use crate::fmt::{csv_num, duration, estimate, mhz, ns, opt};
use crate::probe::Profile;

impl Render for Profile {
    fn kind(&self) -> Option<crate::input::Kind> {
        Some(crate::input::Kind::Probe)
    }

    fn json(&self) -> impl Serialize + '_ {
        self
    }

    fn blocks(&self, _: Style) -> Vec<Block> {
        let mut b = vec![
            Block::list("", header(self)),
            Block::Blank,
            Block::Table(sources(self)),
        ];
        if !self.filesystems.is_empty() {
            b.extend([
                Block::Blank,
                Block::Heading("inode timestamp update, per filesystem (--dir)".into()),
                Block::Table(super::pair::prices(&self.filesystems)),
                Block::list("", super::pair::reasons(&self.filesystems)),
            ]);
        }
        b.extend([
            Block::Blank,
            Block::list(
                "warning: ",
                self.warnings.iter().map(|w| w.message.clone()).collect(),
            ),
        ]);
        b
    }

    fn csv(&self) -> Table {
        let mut t = Table::plain(&[
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
            "placement_spread_ns",
            "cost_cycles",
        ]);
        for s in &self.sources {
            t.row(vec![
                s.id.clone(),
                s.supported.to_string(),
                csv_num(s.cost_ns.map(|e| e.point)),
                csv_num(s.cost_ns.map(|e| e.lower)),
                csv_num(s.cost_ns.map(|e| e.upper)),
                csv_num(s.cost_ticks.map(|e| e.point)),
                csv_num(s.resolution_ns),
                csv_num(s.getres_ns),
                csv_num(s.update_period_ns),
                s.monotonic_violations.to_string(),
                csv_num(s.placement.as_ref().map(|p| p.spread_ns)),
                csv_num(s.cost_cycles.map(|e| e.point)),
            ]);
        }
        t
    }

    fn openmetrics(&self) -> Option<String> {
        Some(super::openmetrics::profile(self))
    }
}

fn sources(p: &Profile) -> Table {
    // Core cycles only where the probe read the core clock (older profiles render as they did).
    let cycles = p.core_clock.is_some();
    let mut columns = vec![
        ("source", Align::Left),
        ("cost ns [95% CI]", Align::Right),
        ("ticks", Align::Right),
    ];
    if cycles {
        columns.push(("cycles", Align::Right));
    }
    columns.extend([
        ("resolution", Align::Right),
        ("getres", Align::Right),
        ("period (HZ)", Align::Right),
        ("backwards", Align::Right),
    ]);
    let mut t = Table::new(&columns);
    for s in &p.sources {
        if !s.supported {
            let why = s.reason.clone().unwrap_or_default();
            t.row(vec![s.id.clone(), format!("unsupported: {why}")]);
            continue;
        }
        let period = match (s.update_period_ns, s.implied_hz) {
            (Some(p), Some(hz)) => format!("{} ({hz:.0})", duration(p)),
            _ => "-".into(),
        };
        let mut row = vec![
            s.id.clone(),
            opt(s.cost_ns.as_ref(), estimate),
            opt(s.cost_ticks, |e| format!("{:.1}", e.point)),
        ];
        if cycles {
            row.push(opt(s.cost_cycles, |e| format!("{:.1}", e.point)));
        }
        row.extend([
            opt(s.resolution_ns, duration),
            opt(s.getres_ns, duration),
            period,
            s.monotonic_violations.to_string(),
        ]);
        t.row(row);
    }
    t
}

/// The machine, its clocksource and TSC, and how the probe ran.
fn header(p: &Profile) -> Vec<String> {
    let m = &p.machine;
    let cpu = m.cpu_model.as_deref().unwrap_or("unknown CPU");
    let hv = if m.hypervisor_bit {
        format!("yes ({})", m.hypervisor_signature.as_deref().unwrap_or("?"))
    } else {
        "no".into()
    };
    let mut lines = vec![
        format!(
            "machine: {cpu}, kernel {}, {} CPUs, pinned to CPU {}",
            m.kernel_release.as_deref().unwrap_or("?"),
            m.cpus_online,
            opt(m.pinned_cpu, |c| c.to_string())
        ),
        format!(
            "clocksource: {} (available: {})",
            m.clocksource.current.as_deref().unwrap_or("?"),
            m.clocksource.available.join(" ")
        ),
        format!("hypervisor bit: {hv}"),
        format!(
            "TSC: calibrated {} over {}; CPUID 0x15 {}, 0x16 base {}, 0x40000010 {}; invariant {}",
            opt(m.tsc.calibrated_hz, mhz),
            opt(m.tsc.calibration_span_s, |s| format!("{s:.2} s")),
            opt(m.tsc.cpuid_15_hz, mhz),
            opt(m.tsc.cpuid_16_base_hz, mhz),
            opt(m.tsc.cpuid_40000010_hz, mhz),
            m.tsc.invariant
        ),
        format!(
            "precise_read_ns (syscall:realtime − syscall:realtime_coarse): {}",
            opt(p.derived.precise_read_ns.as_ref(), estimate)
        ),
        format!(
            "timer overhead {} ns per sample (removed by regression); seed {}, {}{}, {:.2} s",
            ns(p.timer.overhead_ns),
            p.seed,
            if p.quick { "quick" } else { "full" },
            if p.emulate_trap {
                ", TSC reads trapped (--emulate-trap)"
            } else {
                ""
            },
            p.wall_s
        ),
    ];
    lines.extend(p.core_clock.as_ref().map(|c| {
        format!(
            "core clock {:.2} GHz ({:.2}–{:.2} over {} timings between batches); cycles = each \
             batch's ns × the clock beside it",
            c.ghz, c.ghz_min, c.ghz_max, c.timings
        )
    }));
    lines.extend(share_line(p));
    lines.extend(placement_line(p));
    lines
}

/// How much of the core the probe had: the lanes' share, and the batches left out where
/// another hardware thread shared it.
fn share_line(p: &Profile) -> Option<String> {
    let sh = p.core_clock.as_ref()?.share.as_ref()?;
    let (mut excluded, mut kept) = (0, 0);
    for s in p
        .sources
        .iter()
        .filter(|s| s.contended_batches.is_some_and(|c| c > 0))
    {
        if s.contended_excluded {
            excluded += 1;
        } else {
            kept += 1;
        }
    }
    let left = match (excluded, kept) {
        (0, 0) => String::new(),
        (e, 0) => format!("; left out of {e} sources' costs"),
        (0, k) => format!("; kept in {k} sources' costs (too few others)"),
        (e, k) => format!("; left out of {e} sources' costs, kept in {k} (too few others)"),
    };
    Some(format!(
        "core share {:.2} median, {:.2} lowest (independent adds against their fastest, \
         {:.3} cycles per add); {} of {} batches shared the core{left}",
        sh.median, sh.lowest, sh.best_cycles_per_add, sh.contended_batches, sh.batches
    ))
}

/// The counter reads' cost at each loop placement, lowest to highest, and whether placement
/// moves it (then the interval above holds every placement's point).
fn placement_line(p: &Profile) -> Option<String> {
    let parts: Vec<String> = p
        .sources
        .iter()
        .filter_map(|s| {
            let pl = s.placement.as_ref()?;
            let (lo, hi) = pl.range_ns();
            let verdict = match (pl.moves_cost, pl.widened) {
                (true, true) => "moves it: interval widened to hold them",
                (true, false) => "moves it, within the interval",
                _ => "does not move it",
            };
            let cycles = pl
                .range_cycles()
                .map(|(lo, hi)| format!("{lo:.1}–{hi:.1} cycles, "))
                .unwrap_or_default();
            Some(format!(
                "{} {cycles}{}–{} ns ({verdict})",
                s.id,
                ns(lo),
                ns(hi)
            ))
        })
        .collect();
    let n = p
        .sources
        .iter()
        .find_map(|s| s.placement.as_ref())?
        .offsets
        .len();
    Some(format!(
        "code placement, the loop head at {n} offsets in a 64-byte line: {}",
        parts.join("; ")
    ))
}

/// `probe --list`: every source id, one a line.
pub fn source_list(sources: &[crate::probe::Source]) -> String {
    let ids: Vec<String> = sources.iter().map(|s| s.to_string()).collect();
    format!("{}\n", ids.join("\n"))
}
