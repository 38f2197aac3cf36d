//! `vdso_fallback:<clock>` from two kinds of evidence: what the running clocksource lets the
//! vDSO do (a fact of the kernel, [`clocksource_vdso`]) and what the vDSO and the syscall cost
//! in the same run (the timing). Where the clocksource has no vDSO clock mode the vDSO cannot
//! serve any clock that reads it, so the fact decides and the timing only confirms or
//! contradicts it; everywhere else the timing decides.

use serde::Serialize;
use serde_json::json;

use super::{Verdict, VerdictState};
use crate::stats::Estimate;

/// The vDSO path costs about what the syscall path costs: between these ratios it is a
/// fallback (the glibc wrapper adds a few ns to the syscall); above it, it is slower than the
/// syscall, which a fallback cannot be (the vDSO's own counter reads trap instead).
pub const FALLBACK_RATIO: (f64, f64) = (0.5, 2.0);

/// Clocksources with a vDSO clock mode on x86 (`vdso_clock_mode` other than NONE).
pub const VDSO_CAPABLE: [&str; 3] = ["tsc", "kvm-clock", "hyperv_clocksource_tsc_page"];

/// The clocks whose vDSO read goes through the clocksource (`do_hres` in
/// `lib/vdso/gettimeofday.c`). The coarse clocks (`do_coarse`) copy the last tick's time and
/// never read it, so the vDSO serves them whatever the clocksource; the CPU-time clocks are never
/// served by the vDSO and are not checked at all.
pub const READS_CLOCKSOURCE: [&str; 6] = [
    "realtime",
    "monotonic",
    "monotonic_raw",
    "boottime",
    "tai",
    "gettimeofday",
];

/// Whether the vDSO can read a clocksource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum VdsoCapability {
    /// A vDSO clock mode, always set.
    Yes,
    /// A vDSO clock mode only under a condition the name does not tell (a stable bit, a valid
    /// page, no timer erratum): the timing decides.
    Possible,
    /// `VDSO_CLOCKMODE_NONE`: every read of a precise clock is a syscall.
    None,
    /// A name outside the table: the timing decides.
    Unknown,
}

/// One clocksource's vDSO clock mode, with the kernel source that sets it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClocksourceVdso {
    pub name: &'static str,
    pub capability: VdsoCapability,
    /// `VDSO_CLOCKMODE_*` as Linux 5.7 and later name it (`archdata.vclock_mode`, `VCLOCK_*`,
    /// before).
    pub mode: &'static str,
    /// The file that sets (or leaves unset) `vdso_clock_mode`, and the condition.
    pub kernel: &'static str,
}

/// The known clocksources. The kernel exposes only the clocksource's name
/// (`/sys/devices/system/clocksource/clocksource0/current_clocksource`), not its vDSO mode, so
/// the mode comes from this table, read from the kernel sources:
/// - `arch/x86/include/asm/vdso/clocksource.h`: x86's whole list of modes is TSC, PVCLOCK and
///   HVCLOCK; `include/vdso/clocksource.h`: NONE is the enum's zero, the value of a
///   clocksource that sets no `vdso_clock_mode`, and `vdso_clocksource_ok()` in
///   `lib/vdso/gettimeofday.c` sends NONE to the syscall.
/// - `arch/x86/kernel/hpet.c`: no mode since Linux 4.7 (commit 1ed95e52d902, "x86/vdso: Remove
///   direct HPET access through the vDSO"; backported to 4.4.190).
/// - `drivers/clocksource/acpi_pm.c`: never had one (an I/O port read needs the kernel).
pub const CLOCKSOURCE_VDSO: [ClocksourceVdso; 11] = [
    ClocksourceVdso {
        name: "tsc",
        capability: VdsoCapability::Yes,
        mode: "VDSO_CLOCKMODE_TSC",
        kernel: "arch/x86/kernel/tsc.c: clocksource_tsc",
    },
    ClocksourceVdso {
        name: "tsc-early",
        capability: VdsoCapability::Yes,
        mode: "VDSO_CLOCKMODE_TSC",
        kernel: "arch/x86/kernel/tsc.c: clocksource_tsc_early",
    },
    ClocksourceVdso {
        name: "kvm-clock",
        capability: VdsoCapability::Possible,
        mode: "VDSO_CLOCKMODE_PVCLOCK",
        kernel: "arch/x86/kernel/kvmclock.c: kvm_setup_vsyscall_timeinfo() sets it only when \
                 the pvclock shows PVCLOCK_TSC_STABLE_BIT (CPUID \
                 KVM_FEATURE_CLOCKSOURCE_STABLE_BIT)",
    },
    ClocksourceVdso {
        name: "xen",
        capability: VdsoCapability::Possible,
        mode: "VDSO_CLOCKMODE_PVCLOCK",
        kernel: "arch/x86/xen/time.c: xen_setup_vsyscall_time_info() sets it only when the \
                 pvclock shows PVCLOCK_TSC_STABLE_BIT",
    },
    ClocksourceVdso {
        name: "hyperv_clocksource_tsc_page",
        capability: VdsoCapability::Possible,
        mode: "VDSO_CLOCKMODE_HVCLOCK",
        kernel: "drivers/clocksource/hyperv_timer.c: on x86 (HAVE_VDSO_CLOCKMODE_HVCLOCK); a \
                 read falls back while the TSC page is invalid",
    },
    ClocksourceVdso {
        name: "hyperv_clocksource_msr",
        capability: VdsoCapability::None,
        mode: "VDSO_CLOCKMODE_NONE",
        kernel: "drivers/clocksource/hyperv_timer.c: hyperv_cs_msr sets no mode (an MSR read \
                 needs the kernel)",
    },
    ClocksourceVdso {
        name: "arch_sys_counter",
        capability: VdsoCapability::Possible,
        mode: "VDSO_CLOCKMODE_ARCHTIMER",
        kernel: "drivers/clocksource/arm_arch_timer.c: unless a timer erratum workaround \
                 clears it",
    },
    ClocksourceVdso {
        name: "hpet",
        capability: VdsoCapability::None,
        mode: "VDSO_CLOCKMODE_NONE",
        kernel: "arch/x86/kernel/hpet.c: no mode since Linux 4.7 (commit 1ed95e52d902 removed \
                 the HPET vDSO read)",
    },
    ClocksourceVdso {
        name: "acpi_pm",
        capability: VdsoCapability::None,
        mode: "VDSO_CLOCKMODE_NONE",
        kernel: "drivers/clocksource/acpi_pm.c: clocksource_acpi_pm sets no mode (an I/O port \
                 read needs the kernel)",
    },
    ClocksourceVdso {
        name: "jiffies",
        capability: VdsoCapability::None,
        mode: "VDSO_CLOCKMODE_NONE",
        kernel: "kernel/time/jiffies.c: clocksource_jiffies sets no mode",
    },
    ClocksourceVdso {
        name: "refined-jiffies",
        capability: VdsoCapability::None,
        mode: "VDSO_CLOCKMODE_NONE",
        kernel: "kernel/time/jiffies.c: refined_jiffies sets no mode",
    },
];

/// The table's row for a clocksource name, if known.
pub fn clocksource_vdso(name: &str) -> Option<&'static ClocksourceVdso> {
    CLOCKSOURCE_VDSO.iter().find(|c| c.name == name)
}

/// The vDSO capability of a clocksource (unknown for a name outside the table or none).
pub fn vdso_capability(clocksource: Option<&str>) -> VdsoCapability {
    clocksource
        .and_then(clocksource_vdso)
        .map_or(VdsoCapability::Unknown, |c| c.capability)
}

/// The vDSO capability of a clocksource, given what CPUID says of kvm-clock's stable bit
/// (`KVM_FEATURE_CLOCKSOURCE_STABLE_BIT`, leaf 0x40000001 EAX bit 24; `None` when there is no
/// KVM leaf). Linux `arch/x86/kernel/kvmclock.c`: `kvmclock_init()` calls
/// `pvclock_set_flags(PVCLOCK_TSC_STABLE_BIT)` only when the guest has that CPUID feature, and
/// `kvm_setup_vsyscall_timeinfo()` sets `kvm_clock.vdso_clock_mode = VDSO_CLOCKMODE_PVCLOCK`
/// only when `pvclock_read_flags()` shows the bit — which `arch/x86/kernel/pvclock.c` masks
/// with those valid flags. Without the feature kvm-clock keeps `VDSO_CLOCKMODE_NONE`.
pub fn vdso_capability_given(
    clocksource: Option<&str>,
    kvm_stable_bit: Option<bool>,
) -> VdsoCapability {
    match (clocksource, kvm_stable_bit) {
        (Some("kvm-clock"), Some(false)) => VdsoCapability::None,
        _ => vdso_capability(clocksource),
    }
}

/// Why the vDSO may fall back, from the current clocksource.
pub fn fallback_cause(clocksource: Option<&str>) -> String {
    match clocksource {
        Some("kvm-clock") => "kvm-clock is vDSO-capable only while the host sets \
            PVCLOCK_TSC_STABLE_BIT (KVM_FEATURE_CLOCKSOURCE_STABLE_BIT); without it every read \
            is a syscall"
            .into(),
        Some(cs) if vdso_capability(Some(cs)) == VdsoCapability::None => format!(
            "clocksource '{cs}' has no vDSO clock mode (VDSO_CLOCKMODE_NONE): every \
             clock_gettime becomes a syscall; switch to tsc or kvm-clock if available"
        ),
        Some(cs) if vdso_capability(Some(cs)) == VdsoCapability::Possible => format!(
            "clocksource '{cs}' has a vDSO clock mode only under a condition ({}): without it \
             every read is a syscall",
            clocksource_vdso(cs).map_or("", |r| r.kernel)
        ),
        Some(cs) if vdso_capability(Some(cs)) == VdsoCapability::Yes => format!(
            "clocksource '{cs}' is vDSO-capable; a fallback here means the kernel marked it \
             unusable for the vDSO (e.g. an unstable TSC or a seqcount retry storm)"
        ),
        Some(cs) => format!(
            "clocksource '{cs}' is not in tscope's table of vDSO clock modes; if it has none \
             (VDSO_CLOCKMODE_NONE), every clock_gettime becomes a syscall"
        ),
        None => "the clocksource could not be read".into(),
    }
}

/// What the timing alone says: its state, summary, and the reason when inconclusive.
struct Timing {
    state: VerdictState,
    summary: String,
    reason: Option<String>,
}

/// The timing rule: `0.5 <= vdso_ns / syscall_ns <= 2`, inconclusive when the ratio's interval
/// crosses a boundary of the band. The two estimates are independent, so their relative
/// half-widths add in quadrature (as `compare` does), not worst case against worst case, which
/// would call most guest measurements undecided.
fn timing(clock: &str, ve: Estimate, se: Estimate) -> Timing {
    let (v, s) = (ve.point, se.point);
    let ratio = v / s;
    let inside = |r: f64| (FALLBACK_RATIO.0..=FALLBACK_RATIO.1).contains(&r);
    let holds = inside(ratio);
    let summary = if holds {
        format!(
            "{clock}: the vDSO costs {v:.0} ns against {s:.0} ns for the syscall: it falls back"
        )
    } else if ratio > FALLBACK_RATIO.1 {
        format!(
            "{clock}: the vDSO ({v:.0} ns) is {ratio:.1}× slower than the syscall ({s:.0} ns): not a \
             fallback but a trapped counter read inside the vDSO"
        )
    } else if clock.ends_with("_coarse") {
        format!("{clock}: served by the vDSO ({v:.1} ns against {s:.0} ns), no clocksource read")
    } else {
        format!("{clock}: served by the vDSO ({v:.1} ns against {s:.0} ns for the syscall)")
    };
    let rel = |e: &Estimate| (e.upper - e.lower) / 2.0 / e.point;
    let half = ratio * (rel(&ve).powi(2) + rel(&se).powi(2)).sqrt();
    let (lo, hi) = (ratio - half, ratio + half);
    if lo.is_finite() && hi.is_finite() && (inside(lo) != holds || inside(hi) != holds) {
        let reason = format!(
            "{clock}: vdso_ns / syscall_ns lies in [{lo:.2}, {hi:.2}], across the fallback band \
             {}..{}: too noisy to tell",
            FALLBACK_RATIO.0, FALLBACK_RATIO.1
        );
        return Timing {
            state: VerdictState::Inconclusive,
            summary,
            reason: Some(reason),
        };
    }
    Timing {
        state: if holds {
            VerdictState::Yes
        } else {
            VerdictState::No
        },
        summary,
        reason: None,
    }
}

/// `vdso_fallback:<clock>`. For a clock that reads the clocksource ([`READS_CLOCKSOURCE`]) on a
/// clocksource with no vDSO clock mode ([`VdsoCapability::None`]), the verdict is decided
/// "holds" whatever the timing says, and the evidence says when the timing disagrees; otherwise
/// the timing decides. No CPUID facts: see [`vdso_fallback_given`].
pub fn vdso_fallback(
    clock: &str,
    vdso_ns: Option<Estimate>,
    syscall_ns: Option<Estimate>,
    clocksource: Option<&str>,
) -> Verdict {
    vdso_fallback_given(clock, vdso_ns, syscall_ns, clocksource, None)
}

/// [`vdso_fallback`] with CPUID's kvm-clock stable bit (`None`: no KVM leaf): kvm-clock
/// without it has no vDSO clock mode ([`vdso_capability_given`]), so the fact decides.
pub fn vdso_fallback_given(
    clock: &str,
    vdso_ns: Option<Estimate>,
    syscall_ns: Option<Estimate>,
    clocksource: Option<&str>,
    kvm_stable_bit: Option<bool>,
) -> Verdict {
    let (Some(ve), Some(se)) = (vdso_ns, syscall_ns) else {
        return Verdict::decided(
            false,
            json!({ "skipped": "vDSO or syscall path not measured" }),
            format!("{clock}: not measured"),
        );
    };
    let (v, s) = (ve.point, se.point);
    let ratio = v / s;
    let t = timing(clock, ve, se);
    let reads_clocksource = READS_CLOCKSOURCE.contains(&clock);
    let row = clocksource.and_then(clocksource_vdso);
    let capability = vdso_capability_given(clocksource, kvm_stable_bit);
    let no_stable_bit = clocksource == Some("kvm-clock") && kvm_stable_bit == Some(false);
    let by_fact = reads_clocksource && capability == VdsoCapability::None;
    let cs = clocksource.unwrap_or("?");
    let disagreement = match (by_fact, t.state) {
        (true, VerdictState::No) if ratio > FALLBACK_RATIO.1 => Some(format!(
            "timing says the vDSO is {ratio:.1}× slower than the syscall (a trapped counter \
             read), but clocksource {cs} has no vDSO mode: the vDSO reads no counter, it makes \
             the syscall"
        )),
        (true, VerdictState::No) => Some(format!(
            "timing says served by the vDSO (ratio {ratio:.2}), but clocksource {cs} has no \
             vDSO mode: the vDSO cannot serve {clock}"
        )),
        (true, VerdictState::Inconclusive) => Some(format!(
            "timing says inconclusive ({}), but clocksource {cs} has no vDSO mode: the vDSO \
             cannot serve {clock}",
            t.reason.as_deref().unwrap_or("")
        )),
        _ => None,
    };
    let holds = if by_fact {
        true
    } else {
        t.state == VerdictState::Yes
    };
    let evidence = json!({
        "vdso_ns": vdso_ns,
        "syscall_ns": syscall_ns,
        "ratio": ratio,
        "clocksource": clocksource,
        "rule": format!(
            "holds when the clock reads the clocksource and the clocksource has no vDSO clock \
             mode; otherwise when {} <= vdso_ns / syscall_ns <= {}",
            FALLBACK_RATIO.0, FALLBACK_RATIO.1
        ),
        "likely_cause": holds.then(|| fallback_cause(clocksource)),
        "reads_clocksource": reads_clocksource,
        "vdso_capability": capability,
        "vdso_clock_mode": if no_stable_bit {
            Some("VDSO_CLOCKMODE_NONE")
        } else {
            row.map(|r| r.mode)
        },
        "kvm_clocksource_stable_bit": kvm_stable_bit,
        "kernel_source": row.map(|r| r.kernel),
        "decided_by": if by_fact { "clocksource" } else { "timing" },
        "timing_state": t.state,
        "timing_inconclusive_reason": t.reason,
        "disagreement": disagreement,
    });
    if by_fact {
        let why = if no_stable_bit {
            " (CPUID lacks KVM_FEATURE_CLOCKSOURCE_STABLE_BIT)"
        } else {
            ""
        };
        let mut summary = format!(
            "{clock}: clocksource {cs} has no vDSO clock mode{why}: every read is a syscall \
             (vDSO {v:.0} ns against {s:.0} ns for the syscall)"
        );
        if let Some(d) = &disagreement {
            summary += &format!("; {d}");
        }
        return Verdict::decided(true, evidence, summary);
    }
    match t.reason {
        Some(reason) => Verdict::inconclusive(reason, evidence),
        None => Verdict::decided(holds, evidence, t.summary),
    }
}
