//! Warnings: each variant's `Display` says what is wrong and what to do about it.

use std::fmt;

use crate::probe::machine::Machine;
use crate::probe::SourceResult;

/// Something that makes a figure less trustworthy than it looks.
#[derive(Debug, Clone, PartialEq)]
pub enum Warning {
    /// `CPUID.1:ECX[31]` is set.
    Hypervisor { signature: Option<String> },
    /// The clocksource is not the TSC: vDSO reads may be slower or fall back to syscalls.
    ClocksourceNotTsc { current: String },
    /// A CPU frequency governor other than `performance` is active.
    Governor { governor: String },
    /// The measuring thread could not be pinned.
    NotPinned { reason: String },
    /// A source's interval is wide relative to its point.
    Noisy { id: String, relative_width: f64 },
    /// The thread was switched out while sampling a source.
    Preempted { id: String, switches: u64 },
    /// The measuring thread got only part of its CPU while sampling.
    CpuShared { share: f64, switches: u64 },
    /// CPUID's TSC frequency disagrees with the calibrated one.
    TscFrequencyMismatch { cpuid_hz: f64, calibrated_hz: f64 },
}

impl Warning {
    /// A stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            Warning::Hypervisor { .. } => "hypervisor",
            Warning::ClocksourceNotTsc { .. } => "clocksource_not_tsc",
            Warning::Governor { .. } => "governor",
            Warning::NotPinned { .. } => "not_pinned",
            Warning::Noisy { .. } => "noisy",
            Warning::Preempted { .. } => "preempted",
            Warning::TscFrequencyMismatch { .. } => "tsc_frequency_mismatch",
            Warning::CpuShared { .. } => "cpu_shared",
        }
    }

    /// Warnings about the machine as a whole.
    pub fn about_machine(m: &Machine) -> Vec<Warning> {
        let mut w = Vec::new();
        if m.hypervisor_bit {
            w.push(Warning::Hypervisor {
                signature: m.hypervisor_signature.clone(),
            });
        }
        if let Some(cur) = &m.clocksource.current {
            if cur != "tsc" {
                w.push(Warning::ClocksourceNotTsc {
                    current: cur.clone(),
                });
            }
        }
        let gov = std::fs::read_to_string("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
        if let Ok(g) = gov {
            let g = g.trim();
            if g != "performance" {
                w.push(Warning::Governor {
                    governor: g.to_string(),
                });
            }
        }
        let cpuid = m.tsc.cpuid_15_hz.or(m.tsc.cpuid_40000010_hz);
        if let (Some(c), Some(k)) = (cpuid, m.tsc.calibrated_hz) {
            if ((c - k) / k).abs() > 0.001 {
                w.push(Warning::TscFrequencyMismatch {
                    cpuid_hz: c,
                    calibrated_hz: k,
                });
            }
        }
        w
    }

    /// Warnings about one source's figures.
    pub fn about_source(r: &SourceResult) -> Vec<Warning> {
        let mut w = Vec::new();
        if r.noisy {
            w.push(Warning::Noisy {
                id: r.id.clone(),
                relative_width: r.relative_ci_width.unwrap_or(f64::NAN),
            });
        }
        // Switches alone are common on a shared machine and the robust fit absorbs a few; they
        // matter when the interval shows it.
        let wide = r.relative_ci_width.is_some_and(|w| w > 0.05);
        if r.involuntary_switches > 2 && wide {
            w.push(Warning::Preempted {
                id: r.id.clone(),
                switches: r.involuntary_switches,
            });
        }
        w
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::Hypervisor { signature } => write!(
                f,
                "hypervisor detected ({}): rdtsc may be trapped and costs include virtualisation; \
                 run `tscope detect` for verdicts",
                signature.as_deref().unwrap_or("unknown signature")
            ),
            Warning::ClocksourceNotTsc { current } => write!(
                f,
                "clocksource is '{current}', not tsc: vDSO clock reads may fall back to syscalls; \
                 see /sys/devices/system/clocksource/clocksource0/available_clocksource"
            ),
            Warning::Governor { governor } => write!(
                f,
                "frequency governor is '{governor}', not performance: costs in ns vary with the \
                 clock speed; set it with `cpupower frequency-set -g performance`"
            ),
            Warning::NotPinned { reason } => write!(
                f,
                "could not pin the measuring thread ({reason}): migrations add noise; run with \
                 `taskset -c N`"
            ),
            Warning::Noisy { id, relative_width } => write!(
                f,
                "{id}: still noisy after extra rounds (95% interval {:.0}% of the point, or rounds \
                 disagreeing): the machine was busy; rerun on an idle machine or without --quick",
                relative_width * 100.0
            ),
            Warning::Preempted { id, switches } => write!(
                f,
                "{id}: {switches} involuntary context switches while sampling: another task \
                 shares this CPU; the robust fit discounts them, but check the interval"
            ),
            Warning::CpuShared { share, switches } => write!(
                f,
                "the measuring thread ran only {:.0}% of the sampling time ({switches} involuntary \
                 context switches): another task shares this CPU; the robust fit and extra rounds \
                 discount it, but rerun on an idle CPU (`taskset -c N` away from the load) for \
                 figures to quote",
                share * 100.0
            ),
            Warning::TscFrequencyMismatch {
                cpuid_hz,
                calibrated_hz,
            } => write!(
                f,
                "CPUID says the TSC runs at {:.3} MHz but it measured {:.3} MHz against \
                 CLOCK_MONOTONIC_RAW: tick figures use the measured one",
                cpuid_hz / 1e6,
                calibrated_hz / 1e6
            ),
        }
    }
}
