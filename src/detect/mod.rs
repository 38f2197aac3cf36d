//! `tscope detect`: which hypervisor, whether it traps RDTSC/RDTSCP, whether the vDSO fell back
//! to syscalls, whether the TSC is in step across CPUs, whether any clock warps — each a
//! verdict with the numbers that decided it.
//!
//! Facts come from CPUID ([`crate::cpuid`]) and sysfs/procfs ([`host`]); timings from
//! a quick [`crate::probe`] run of the sources the rules need, so that every comparison is
//! between figures measured in the same run; cross-CPU sync from [`sync`]; the kernel log,
//! read once by [`kmsg`], feeds both the TSC frequency sources and [`forensics`]. The rules
//! are pure functions in [`verdict`].

pub mod forensics;
pub mod host;
pub mod interleave;
pub mod kmsg;
pub mod sync;
pub mod trap;
pub mod verdict;

use std::time::Duration;

use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};

use crate::cpuid::{CpuidFacts, LiveCpuid};
use crate::probe::{self, Clock, ProbeConfig, Profile, Source};
use host::HostFacts;
use verdict::{ClockWatch, FrequencyInputs, TrapInputs, Verdict};

/// The version of the detect JSON this build writes.
pub const DETECT_SCHEMA_VERSION: u32 = 1;

/// Clocks the vDSO is meant to serve (the CPU-time clocks never are: glibc always makes the
/// syscall for them, so a "fallback" there is by design and not reported).
pub fn vdso_clocks() -> impl Iterator<Item = Clock> {
    Clock::ALL.into_iter().filter(|c| c.vdso_served())
}

/// The names `--fail-on` accepts besides the full `vdso_fallback:<clock>` names.
pub const VERDICT_NAMES: [&str; 9] = [
    "rdtsc_trapped",
    "rdtscp_trapped",
    "vdso_fallback",
    "tsc_unsynchronized",
    "clock_warps",
    "tsc_marked_unstable",
    "clocksource_switched",
    "vdso_inconsistent",
    "tsc_frequency_mismatch",
];

/// A validated detect configuration.
#[derive(Debug, Clone)]
pub struct DetectConfig {
    pub seed: u64,
    /// Longer sampling (a full probe's sampler instead of the quick one).
    pub thorough: bool,
    /// Time for the cross-CPU check, over all pairs.
    pub sync_budget: Duration,
    pub emulate_trap: bool,
    /// Verdict names that make the process exit 1 when they hold.
    pub fail_on: Vec<String>,
}

/// Everything `detect` found.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Detection {
    pub schema_version: u32,
    pub tool: String,
    pub emulate_trap: bool,
    pub facts: Facts,
    #[serde(
        serialize_with = "serialize_verdicts",
        deserialize_with = "deserialize_verdicts"
    )]
    pub verdicts: Vec<(String, Verdict)>,
    /// The timings the verdicts used (a quick probe of the sources they need).
    pub profile: Profile,
}

impl Detection {
    pub fn verdict(&self, name: &str) -> Option<&Verdict> {
        self.verdicts
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
    }

    /// Names of held verdicts that `fail_on` selects (`vdso_fallback` selects every
    /// `vdso_fallback:<clock>`), and of inconclusive ones too when `inconclusive` is set
    /// (`--fail-on-inconclusive`).
    pub fn failing(&self, fail_on: &[String], inconclusive: bool) -> Vec<String> {
        self.verdicts
            .iter()
            .filter(|(n, v)| {
                (v.holds || (inconclusive && v.state == verdict::VerdictState::Inconclusive))
                    && fail_on
                        .iter()
                        .any(|f| f == n || n.split(':').next() == Some(f.as_str()))
            })
            .map(|(n, _)| n.clone())
            .collect()
    }
}

/// Verdicts as a JSON object in rule order.
pub fn serialize_verdicts<S: Serializer>(v: &[(String, Verdict)], s: S) -> Result<S::Ok, S::Error> {
    let mut m = s.serialize_map(Some(v.len()))?;
    for (k, val) in v {
        m.serialize_entry(k, val)?;
    }
    m.end()
}

/// The inverse of [`serialize_verdicts`], in the file's order.
pub fn deserialize_verdicts<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Vec<(String, Verdict)>, D::Error> {
    /// Keeps the verdicts in the file's order (a map type would sort them).
    struct InOrder;
    impl<'de> serde::de::Visitor<'de> for InOrder {
        type Value = Vec<(String, Verdict)>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an object of verdicts")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(
            self,
            mut m: A,
        ) -> Result<Self::Value, A::Error> {
            let mut v = Vec::new();
            while let Some(entry) = m.next_entry()? {
                v.push(entry);
            }
            Ok(v)
        }
    }
    d.deserialize_map(InOrder)
}

/// The facts part of the output.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Facts {
    pub cpu: CpuidFacts,
    pub hypervisor: HypervisorSummary,
    pub clocksource: probe::machine::Clocksource,
    pub host: HostFacts,
    pub kernel_release: Option<String>,
    pub tsc_hz: TscHz,
    /// The kernel log's clocksource lines, the boot options and the TSC-watchdog exemption
    /// (absent in files written before they were read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forensics: Option<forensics::Forensics>,
}

/// The contract's `facts.hypervisor`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HypervisorSummary {
    pub present: bool,
    pub vendor: Option<String>,
    pub signatures: Vec<String>,
    /// Set when the hypervisor bit is set but no known signature was found, or vice versa.
    pub note: Option<String>,
}

/// Every TSC frequency this machine offers, in Hz.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TscHz {
    pub cpuid_15: Option<f64>,
    pub cpuid_16_base: Option<f64>,
    pub cpuid_40000010: Option<f64>,
    pub xen_guest: Option<f64>,
    pub calibrated: Option<f64>,
}

/// Summarises the hypervisor part of the CPUID facts.
pub fn hypervisor_summary(c: &CpuidFacts) -> HypervisorSummary {
    let vendor = c.hypervisor.vendor().map(str::to_string);
    let note = match (c.hypervisor_bit, vendor.is_some()) {
        (true, false) => {
            Some("hypervisor bit set but no signature in 0x40000000..0x4000ff00".into())
        }
        (false, true) => Some("signature found although the hypervisor bit is clear".into()),
        _ => c
            .confidential_guest
            .as_ref()
            .map(|g| format!("confidential guest: {g}")),
    };
    HypervisorSummary {
        present: c.hypervisor_bit,
        vendor,
        signatures: c
            .hypervisor
            .leaves
            .iter()
            .map(|l| format!("{:#x}: {}", l.base, l.signature))
            .collect(),
        note,
    }
}

/// The sources the verdicts need.
fn needed_sources() -> Vec<Source> {
    let mut v = vec![
        Source::Rdtsc,
        Source::LfenceRdtsc,
        Source::Rdtscp,
        Source::Cpuid,
        Source::SyscallGetppid,
    ];
    for c in vdso_clocks() {
        v.push(Source::Vdso(c));
        v.push(Source::Syscall(c));
    }
    v.extend([
        Source::VdsoGettimeofday,
        Source::SyscallGettimeofday,
        Source::StdInstant,
    ]);
    v
}

fn trap_inputs(p: &Profile, read: Option<trap::Distribution>, id: &str) -> TrapInputs {
    TrapInputs {
        read,
        probe_cost_ns: p.cost_ns(id),
    }
}

/// The TSC frequencies CPUID and the kernel offer: CPUID, the kernel log's calibration lines
/// (`log` as [`kmsg::read_kernel_log`] returned it) and sysfs; [`verdicts`] adds the measured
/// rate from the profile.
pub fn frequency_sources(
    cpu: &CpuidFacts,
    log: &Result<kmsg::KernelLog, String>,
) -> FrequencyInputs {
    let log = log
        .as_ref()
        .map(|l| verdict::parse_kernel_log(&l.text()))
        .map_err(Clone::clone);
    FrequencyInputs::from_cpuid(cpu, log, host::sysfs_tsc_khz())
}

/// All verdicts from a profile, a sync result, the trap distributions, the frequency sources
/// and CPUID's kvm-clock stable bit (`None` without a KVM leaf; pure: what the tests call).
pub fn verdicts(
    p: &Profile,
    sync: &sync::SyncResult,
    traps: &trap::TrapSamples,
    frequency: &FrequencyInputs,
    kvm_stable_bit: Option<bool>,
) -> Vec<(String, Verdict)> {
    let mut out = vec![
        (
            "rdtsc_trapped".to_string(),
            verdict::trapped("rdtsc", traps, &trap_inputs(p, traps.rdtsc, "rdtsc")),
        ),
        (
            "rdtscp_trapped".to_string(),
            verdict::trapped("rdtscp", traps, &trap_inputs(p, traps.rdtscp, "rdtscp")),
        ),
    ];
    let cs = p.machine.clocksource.current.as_deref();
    for c in vdso_clocks() {
        let name = c.name();
        let v = verdict::vdso_fallback_given(
            name,
            p.cost_ns(&format!("vdso:{name}")),
            p.cost_ns(&format!("syscall:{name}")),
            cs,
            kvm_stable_bit,
        );
        out.push((format!("vdso_fallback:{name}"), v));
    }
    let v = verdict::vdso_fallback_given(
        "gettimeofday",
        p.cost_ns("vdso:gettimeofday"),
        p.cost_ns("syscall:gettimeofday"),
        cs,
        kvm_stable_bit,
    );
    out.push(("vdso_fallback:gettimeofday".to_string(), v));
    out.push((
        "tsc_unsynchronized".to_string(),
        verdict::tsc_unsynchronized(sync, p.derived.tsc_hz),
    ));
    let watches: Vec<ClockWatch> = p
        .sources
        .iter()
        .filter(|s| s.supported && s.reads_watched > 0)
        .map(|s| ClockWatch {
            id: s.id.clone(),
            backwards: s.monotonic_violations,
            max_backwards_ns: s.max_backwards_ns,
            // A coarse clock steps by a whole tick (1–10 ms) by design.
            forward_jumps: if s.update_period_ns.is_some() {
                0
            } else {
                s.forward_jumps_over_1ms
            },
        })
        .collect();
    out.push(("clock_warps".to_string(), verdict::clock_warps(&watches)));
    let frequency = FrequencyInputs {
        measured_hz: p.machine.tsc.calibrated_hz,
        calibration_span_s: p.machine.tsc.calibration_span_s,
        clocksource: p.machine.clocksource.current.clone(),
        ..frequency.clone()
    };
    out.push((
        "tsc_frequency_mismatch".to_string(),
        verdict::tsc_frequency_mismatch(&frequency),
    ));
    out
}

/// Assembles the facts from CPUID, the host and a profile's calibration.
pub fn facts(cpu: CpuidFacts, host: HostFacts, profile: &Profile) -> Facts {
    let m = &profile.machine;
    Facts {
        hypervisor: hypervisor_summary(&cpu),
        clocksource: host.clocksource.clone(),
        kernel_release: m.kernel_release.clone(),
        tsc_hz: TscHz {
            cpuid_15: cpu.leaf_15_tsc_hz,
            cpuid_16_base: cpu.leaf_16_base_mhz.map(|m| f64::from(m) * 1e6),
            cpuid_40000010: cpu.hypervisor.tsc_khz_40000010.map(|k| f64::from(k) * 1e3),
            xen_guest: cpu
                .hypervisor
                .xen
                .as_ref()
                .and_then(|x| x.guest_tsc_khz)
                .map(|k| f64::from(k) * 1e3),
            calibrated: m.tsc.calibrated_hz,
        },
        cpu,
        host,
        forensics: None,
    }
}

/// The verdicts read from the kernel (its log, its command line) and from the interleaved
/// vDSO/syscall check, beside those [`verdicts`] decides from a profile.
pub fn kernel_verdicts(
    f: &forensics::Forensics,
    interleaved: &interleave::InterleaveResult,
    clocksource: &probe::machine::Clocksource,
) -> Vec<(String, Verdict)> {
    let cs = clocksource.current.as_deref();
    let av = &clocksource.available;
    // Lines that look like clock messages but were not evidence are said in both summaries.
    let ignored = f.log.as_ref().map_or(0, |l| l.ignored.len());
    let say_ignored = |mut v: Verdict| {
        if ignored > 0 {
            v.summary += &format!(
                "; {ignored} line(s) that look like clock messages were ignored: a process \
                 wrote them, or they name no clocksource the kernel registers (evidence \
                 log.ignored)"
            );
        }
        v
    };
    vec![
        (
            "tsc_marked_unstable".into(),
            say_ignored(verdict::tsc_marked_unstable(f, cs, av)),
        ),
        (
            "clocksource_switched".into(),
            say_ignored(verdict::clocksource_switched(f, cs, av)),
        ),
        (
            "vdso_inconsistent".into(),
            verdict::vdso_inconsistent(interleaved),
        ),
    ]
}

/// Time the interleaved vDSO/syscall check may take, over all clocks.
pub const INTERLEAVE_BUDGET: Duration = Duration::from_millis(300);

/// Everything measured after the probe and the sync check, and every verdict: the trap
/// distributions, vDSO against syscall order, the kernel log, the TSC frequencies (`detect`
/// and `report` both decide through here).
pub fn decide(
    cpu: CpuidFacts,
    host: HostFacts,
    profile: &Profile,
    sync: &sync::SyncResult,
    thorough: bool,
) -> (Vec<(String, Verdict)>, Facts) {
    let traps = trap::measure(&cpu, &trap::TrapConfig::new(thorough));
    let interleaved = interleave::check(INTERLEAVE_BUDGET);
    let log = kmsg::read_kernel_log();
    let forensics = forensics::gather(&host.cpuinfo_tsc_flags, &log);
    let kvm_stable_bit = cpu
        .hypervisor
        .kvm
        .as_ref()
        .map(|k| k.clocksource_stable_bit);
    let mut verdicts = verdicts(
        profile,
        sync,
        &traps,
        &frequency_sources(&cpu, &log),
        kvm_stable_bit,
    );
    verdicts.extend(kernel_verdicts(&forensics, &interleaved, &host.clocksource));
    let mut facts = facts(cpu, host, profile);
    facts.forensics = Some(forensics);
    (verdicts, facts)
}

/// Runs the detection.
pub fn run(cfg: &DetectConfig) -> Detection {
    let cpu = CpuidFacts::decode(&LiveCpuid);
    let host = host::gather();
    let mut pcfg = ProbeConfig::new(needed_sources(), !cfg.thorough, cfg.seed);
    pcfg.emulate_trap = cfg.emulate_trap;
    let profile = probe::run(&pcfg);
    let sync = sync::check(cfg.sync_budget);
    let (verdicts, facts) = decide(cpu, host, &profile, &sync, cfg.thorough);
    Detection {
        schema_version: DETECT_SCHEMA_VERSION,
        tool: format!("tscope {}", env!("CARGO_PKG_VERSION")),
        emulate_trap: cfg.emulate_trap,
        facts,
        verdicts,
        profile,
    }
}

#[cfg(test)]
mod tests;
