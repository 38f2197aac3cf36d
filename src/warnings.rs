//! Warnings: each variant's `Display` says what is wrong and what to do about it.
//!
//! One type for every command, so a warning is written once and reads the same wherever it
//! shows. This is the ground floor: it imports no feature module; deciding when a warning
//! applies belongs to the feature that knows (`probe::advice`, `workload`).

use std::fmt;

use serde::{Deserialize, Deserializer, Serializer};

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
    /// The measuring thread got only part of its CPU while sampling (switches: null when the
    /// counters could not be read).
    CpuShared { share: f64, switches: Option<u64> },
    /// Sources kept batches that shared their core with another hardware thread, too few of
    /// theirs having run alone (`probe::coreclock::CoreShare`).
    CoreShared {
        ids: Vec<String>,
        sensed: usize,
        contended: usize,
        batches: usize,
    },
    /// CPUID's TSC frequency disagrees with the calibrated one.
    CpuidTscFrequencyDiffers { cpuid_hz: f64, calibrated_hz: f64 },
    /// `tscope run --no-pin`: workload tasks may migrate.
    TasksNotPinned,
    /// A workload's wake-ups cross vCPUs under a hypervisor.
    VcpuWakeups,
    /// More pinned workers than CPUs.
    CpusOversubscribed { workers: usize, cpus: usize },
    /// vfsmix's scratch directory is on a file system mounted with `discard`.
    DiscardMount { dir: String },
    /// Guest figures come from QEMU's TCG emulator, not hardware virtualisation.
    TcgEmulation,
    /// A warning read back from JSON that kept only its text.
    Recorded { message: String },
    /// The bootstrap gave no interval for a source: its figure is a bare point.
    NoInterval { id: String },
    /// A derived cost came out at or below zero: the measurements it subtracts were disturbed.
    NotPositiveDerived { name: String, point_ns: f64 },
    /// The context-switch counters could not be read: switch counts are unknown, not 0.
    SwitchesUnknown { reason: String },
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
            Warning::CpuidTscFrequencyDiffers { .. } => "cpuid_tsc_frequency_differs",
            Warning::CpuShared { .. } => "cpu_shared",
            Warning::CoreShared { .. } => "core_shared",
            Warning::TasksNotPinned => "tasks_not_pinned",
            Warning::VcpuWakeups => "vcpu_wakeups",
            Warning::CpusOversubscribed { .. } => "cpus_oversubscribed",
            Warning::DiscardMount { .. } => "discard_mount",
            Warning::TcgEmulation => "tcg_emulation",
            Warning::Recorded { .. } => "recorded",
            Warning::NoInterval { .. } => "no_interval",
            Warning::NotPositiveDerived { .. } => "not_positive_derived",
            Warning::SwitchesUnknown { .. } => "switches_unknown",
        }
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
                "the measuring thread ran only {:.0}% of the sampling time ({} involuntary \
                 context switches): another task shares this CPU; the robust fit and extra rounds \
                 discount it, but rerun on an idle CPU (`taskset -c N` away from the load) for \
                 figures to quote",
                share * 100.0,
                switches.map_or("an unknown number of".to_string(), |n| n.to_string())
            ),
            Warning::CoreShared {
                ids,
                sensed,
                contended,
                batches,
            } => write!(
                f,
                "another hardware thread shared this core during {contended} of {batches} \
                 batches (independent adds ran slow beside them), and {} kept such batches, too \
                 few of theirs having run alone; their costs include the sibling's share \
                 (syscalls read 10–20% higher beside a busy sibling); rerun when the host is \
                 quieter, or on a core of your own",
                if ids.len() == *sensed && ids.len() > 1 {
                    format!("every one of the {sensed} sources")
                } else {
                    ids.join(", ")
                }
            ),
            Warning::CpuidTscFrequencyDiffers {
                cpuid_hz,
                calibrated_hz,
            } => write!(
                f,
                "CPUID says the TSC runs at {:.3} MHz but it measured {:.3} MHz against \
                 CLOCK_MONOTONIC_RAW: tick figures use the measured one",
                cpuid_hz / 1e6,
                calibrated_hz / 1e6
            ),
            Warning::TasksNotPinned => write!(
                f,
                "tasks are not pinned (--no-pin): the scheduler may move them between CPUs \
                 mid-sample"
            ),
            Warning::VcpuWakeups => write!(
                f,
                "hypervisor detected: a wake-up on another vCPU can cost tens of µs (an IPI is a \
                 VM exit)"
            ),
            Warning::CpusOversubscribed { workers, cpus } => write!(
                f,
                "{workers} workers on {cpus} CPUs: some share a CPU, so per-task rates are not \
                 independent"
            ),
            Warning::DiscardMount { dir } => write!(
                f,
                "{dir} is mounted with 'discard': every unlink frees a block with a synchronous \
                 discard and waits for writeback, so vfsmix here measures the disk more than the \
                 VFS (use a tmpfs --dir such as /dev/shm to compare)"
            ),
            Warning::TcgEmulation => {
                write!(
                    f,
                    "guest figures under TCG are emulation, not virtualisation"
                )
            }
            Warning::Recorded { message } => f.write_str(message),
            Warning::NoInterval { id } => write!(
                f,
                "{id}: the bootstrap gave no interval (no usable replicates), so the figure is a \
                 bare point whose noise is unknown and it is flagged noisy; rerun without --quick"
            ),
            Warning::NotPositiveDerived { name, point_ns } => write!(
                f,
                "derived {name} is {point_ns:.2} ns, not above 0: the two costs it subtracts were \
                 disturbed (a busy machine); the simulator cannot charge it as measured: rerun on \
                 an idle machine, or give --set {name}=… for a what-if"
            ),
            Warning::SwitchesUnknown { reason } => write!(
                f,
                "could not read the context-switch counters ({reason}): switch counts are unknown \
                 (null), not 0, and preemption cannot be checked"
            ),
        }
    }
}

/// Serde for warnings kept as their advice text (`tscope run`'s `"warnings": ["..."]`):
/// `#[serde(with = "crate::warnings::as_text")]` on a `Vec<Warning>`. Reading back gives
/// [`Warning::Recorded`], since the text is all the JSON keeps.
pub mod as_text {
    use super::*;

    pub fn serialize<S: Serializer>(warnings: &[Warning], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(warnings.iter().map(ToString::to_string))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Warning>, D::Error> {
        let texts = Vec::<String>::deserialize(d)?;
        Ok(texts
            .into_iter()
            .map(|message| Warning::Recorded { message })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::Warning;

    #[derive(serde::Serialize, serde::Deserialize)]
    struct Holder {
        #[serde(with = "super::as_text")]
        warnings: Vec<Warning>,
    }

    #[test]
    fn as_text_writes_the_advice_and_reads_it_back() {
        let h = Holder {
            warnings: vec![
                Warning::TasksNotPinned,
                Warning::CpusOversubscribed {
                    workers: 4,
                    cpus: 2,
                },
            ],
        };
        let json = serde_json::to_string(&h).unwrap();
        assert_eq!(
            json,
            "{\"warnings\":[\"tasks are not pinned (--no-pin): the scheduler may move them \
             between CPUs mid-sample\",\"4 workers on 2 CPUs: some share a CPU, so per-task \
             rates are not independent\"]}"
        );
        let back: Holder = serde_json::from_str(&json).unwrap();
        assert_eq!(back.warnings[1].to_string(), h.warnings[1].to_string());
        assert_eq!(back.warnings[1].code(), "recorded");
    }
}
