//! Every clocksource read per op, counted in the guest: a kprobe on each clocksource's read
//! callback (`read_tsc`, `read_hpet`, `acpi_pm_read`, `kvm_clock_get_cycles`) counts every read
//! whoever asks for it — the `ktime_get_*real*` leaves `vm count` probes, and also what they
//! do not cover (`ktime_get()`, a vDSO call falling back to a syscall). A separate pass after
//! the timed rounds (kprobes slow every hit down, so no timed loop runs with them), in the
//! first boot of each kernel only (counts do not depend on speed).
//!
//! Per op = (hits of N iterations − hits of 0 iterations) / N, so a loop's set-up and
//! teardown cancel. The timer tick reads the clocksource too (once per tick): those reads land
//! in the count in proportion to the op's time (op ns × HZ / 1e9 per op).

use std::path::Path;

use serde::{Deserialize, Serialize};

pub(crate) use super::clocksource::has_symbol;
use super::clocksource::switch;
use super::loops;
use super::Planned;
use crate::error::{Context, Result};
use crate::trace::FsKind;
use crate::vm::boot::clock::Clocksource;
use crate::vm::boot::tracefs::{append, TRACING};
use crate::workload::WorkloadName;

/// One workload's clocksource reads on one clocksource.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ReadCount {
    pub clocksource: Clocksource,
    /// The probed callback ([`Clocksource::read_callback`]).
    pub symbol: String,
    pub fs: FsKind,
    pub workload: WorkloadName,
    pub iterations: u64,
    /// Hits of the zero-iteration run (set-up and teardown) and of the N-iteration run.
    pub baseline_hits: u64,
    pub hits: u64,
    /// (hits − baseline_hits) / iterations.
    pub reads_per_op: f64,
}

/// The `reads` section the guest prints after its rounds (JSON).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct GuestReads {
    pub counts: Vec<ReadCount>,
    pub errors: Vec<String>,
    /// Each read's cost where the op takes it ([`super::readtime`]).
    #[serde(default)]
    pub times: Vec<super::readtime::ReadTime>,
}

/// The hits of event `event` in `kprobe_profile` text (`event hits misses` a line).
pub(crate) fn hits(profile: &str, event: &str) -> Option<u64> {
    profile.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        match f.as_slice() {
            [name, h, _] if *name == event => h.parse().ok(),
            _ => None,
        }
    })
}

fn event(symbol: &str) -> String {
    format!("tscope_cs_{symbol}")
}

fn profile_hits(event: &str) -> Result<u64> {
    let text = std::fs::read_to_string(format!("{TRACING}/kprobe_profile"))
        .context("reading kprobe_profile")?;
    hits(&text, event).with_context(|| format!("no {event} in kprobe_profile"))
}

/// Counts each clocksource's reads per op of every planned loop (`iterations` each), switching
/// to each clocksource in turn. Returns the counts and what failed.
pub(crate) fn count(
    clocksources: &[Clocksource],
    plan: &[(Planned, String)],
    iterations: u64,
) -> (Vec<ReadCount>, Vec<String>) {
    let mut errors = Vec::new();
    let mut out = Vec::new();
    if let Err(e) = crate::sys::guest::mount("tracefs", TRACING, "tracefs") {
        // Already mounted is fine; anything else shows up as a failed probe below.
        errors.push(format!("mount tracefs: {e}"));
    }
    let kallsyms = std::fs::read_to_string("/proc/kallsyms").unwrap_or_default();
    for &cs in clocksources {
        let symbol = cs.read_callback();
        if !has_symbol(&kallsyms, symbol) {
            errors.push(format!("{cs}: {symbol} is not in /proc/kallsyms"));
            continue;
        }
        let (_, refused) = switch(cs);
        if let Some(e) = refused {
            errors.push(e);
            continue;
        }
        let ev = event(symbol);
        let set_up = append(
            &format!("{TRACING}/kprobe_events"),
            &format!("p:kprobes/{ev} {symbol}"),
        )
        .and_then(|()| {
            std::fs::write(format!("{TRACING}/events/kprobes/{ev}/enable"), "1")
                .with_context(|| format!("enabling {ev}"))
        });
        if let Err(e) = set_up {
            errors.push(format!("{cs}: {e:#}"));
            continue;
        }
        for (p, dir) in plan {
            let n = iterations.max(1);
            let counted = (|| -> Result<ReadCount> {
                let h0 = profile_hits(&ev)?;
                loops::run_loop(p.workload, Path::new(dir), 0)?;
                let h1 = profile_hits(&ev)?;
                loops::run_loop(p.workload, Path::new(dir), n)?;
                let h2 = profile_hits(&ev)?;
                let (base, all) = (h1.saturating_sub(h0), h2.saturating_sub(h1));
                Ok(ReadCount {
                    clocksource: cs,
                    symbol: symbol.to_string(),
                    fs: p.fs,
                    workload: p.workload,
                    iterations: n,
                    baseline_hits: base,
                    hits: all,
                    reads_per_op: (all as f64 - base as f64) / n as f64,
                })
            })();
            match counted {
                Ok(c) => out.push(c),
                Err(e) => errors.push(format!("{cs} {}/{}: {e:#}", p.fs, p.workload)),
            }
        }
        let _ = std::fs::write(format!("{TRACING}/events/kprobes/{ev}/enable"), "0");
    }
    (out, errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_callbacks_and_hits() {
        let kallsyms = "ffffffff81035a80 t read_hpet\nffffffff81041220 t read_tsc\n\
                        ffffffff81041230 T read_tsc_extra\n";
        assert!(has_symbol(kallsyms, "read_hpet"));
        assert!(has_symbol(kallsyms, "read_tsc"));
        assert!(!has_symbol(kallsyms, "acpi_pm_read"));
        let profile =
            "  tscope_cs_read_hpet                                   12345               0\n\
                       tscope_cs_read_tsc 7 0\n";
        assert_eq!(hits(profile, "tscope_cs_read_hpet"), Some(12345));
        assert_eq!(hits(profile, &event("read_tsc")), Some(7));
        assert_eq!(hits(profile, "tscope_cs_acpi_pm_read"), None);
    }
}
