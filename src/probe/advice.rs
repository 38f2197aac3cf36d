//! Which [`Warning`]s a probe's figures call for. The warnings themselves are the ground floor
//! (`crate::warnings`, shared by every command); deciding when one applies needs the probe's
//! types, so it lives here, and the ground floor imports no feature module.

use super::machine::{self, Machine};
use super::profile::SourceResult;
use crate::warnings::Warning;

/// Relative TSC frequency disagreement (CPUID vs calibrated) past which a warning is given.
const TSC_MISMATCH: f64 = 0.001;

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
    if let Some(g) = machine::scaling_governor() {
        if g != "performance" {
            w.push(Warning::Governor { governor: g });
        }
    }
    let cpuid = m.tsc.cpuid_15_hz.or(m.tsc.cpuid_40000010_hz);
    if let (Some(c), Some(k)) = (cpuid, m.tsc.calibrated_hz) {
        if ((c - k) / k).abs() > TSC_MISMATCH {
            w.push(Warning::CpuidTscFrequencyDiffers {
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
    if let Some(switches) = r.involuntary_switches.filter(|&n| n > 2 && wide) {
        w.push(Warning::Preempted {
            id: r.id.clone(),
            switches,
        });
    }
    w
}
