//! `tsc_frequency_mismatch`: every TSC frequency this machine offers, side by side with the
//! rate tscope measured against `CLOCK_MONOTONIC_RAW`.
//!
//! Sources a program would trust to convert ticks to time: CPUID leaf 0x15 (crystal × ratio),
//! the hypervisor timing leaf 0x40000010, Xen's guest TSC leaf, and the kernel's own `tsc_khz`
//! (the boot log's calibration lines, sysfs's `tsc_freq_khz` where a kernel has it). CPUID
//! 0x16's base frequency is shown but never decides: it is the processor's nominal frequency
//! (Linux reads it into `cpu_khz`, not `tsc_khz`), so a difference there says nothing about
//! the TSC. docs/verdicts.md gives the rule and why.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::Verdict;
use crate::cpuid::CpuidFacts;

/// A trusted source further than this from the measured rate (a fraction) makes the verdict
/// hold. Linux itself refines its calibration only within 1% (`tsc_refine_calibration_work`);
/// a wrong source is off by far more (Bun's Cloud Run report: 2.8×).
pub const FREQUENCY_TOLERANCE: f64 = 0.01;

/// A calibration over less than this many seconds is not used (the probe's spans ~1 s).
pub const MIN_CALIBRATION_SPAN_S: f64 = 0.05;

/// What the kernel log says about the TSC frequency: the lines `arch/x86/kernel/tsc.c` prints
/// (`pr_fmt` "tsc: ", older kernels without the prefix), all in kHz.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelTscLog {
    /// `Detected %lu.%03lu MHz processor`: `cpu_khz`.
    pub processor_khz: Option<u64>,
    /// `Detected %lu.%03lu MHz TSC`: `tsc_khz`, printed only when it differs from `cpu_khz`.
    pub tsc_detected_khz: Option<u64>,
    /// `Refined TSC clocksource calibration: %lu.%03lu MHz`: `tsc_khz` after refinement.
    pub refined_khz: Option<u64>,
    /// `TSC freq recalibrated by [%s]: %lu.%03lu MHz`: the kernel's measurement against HPET
    /// or the PM timer (`tsc=recalibrate`) when `tsc_khz` came from CPUID or an MSR; it leaves
    /// `tsc_khz` as it was. The timer's name and the kHz.
    pub recalibrated: Option<(String, u64)>,
    /// The lines the figures came from, trimmed.
    pub lines: Vec<String>,
}

impl KernelTscLog {
    /// `tsc_khz` as the kernel ended up with it, and the line that says so.
    pub fn tsc_khz(&self) -> Option<(u64, &'static str)> {
        self.refined_khz
            .map(|k| (k, "Refined TSC clocksource calibration"))
            .or(self.tsc_detected_khz.map(|k| (k, "Detected … MHz TSC")))
            .or(self.processor_khz.map(|k| {
                (
                    k,
                    "Detected … MHz processor (no TSC line: tsc_khz = cpu_khz)",
                )
            }))
    }
}

/// `%lu.%03lu` MHz as kHz.
fn mhz_text_to_khz(s: &str) -> Option<u64> {
    let s = s.trim();
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    if !digits(int) || !(frac.is_empty() || (frac.len() <= 3 && digits(frac))) {
        return None;
    }
    let frac_khz = if frac.is_empty() {
        0
    } else {
        format!("{frac:0<3}").parse::<u64>().ok()?
    };
    int.parse::<u64>()
        .ok()?
        .checked_mul(1000)?
        .checked_add(frac_khz)
}

/// The number between the last `prefix` before `suffix` and `suffix`, in kHz.
fn between(line: &str, prefix: &str, suffix: &str) -> Option<u64> {
    let end = line.find(suffix)?;
    let start = line[..end].rfind(prefix)? + prefix.len();
    mhz_text_to_khz(&line[start..end])
}

/// The TSC calibration lines of a kernel log (dmesg, `/dev/kmsg` messages or syslog lines):
/// a pure function over the text. A `Detected … MHz processor` line starts a new boot, so
/// a log of several boots gives the last one's figures.
pub fn parse_kernel_log(text: &str) -> KernelTscLog {
    let mut k = KernelTscLog::default();
    for line in text.lines() {
        let keep = line.trim().to_string();
        if let Some(khz) = between(line, "Detected ", " MHz processor") {
            k = KernelTscLog {
                processor_khz: Some(khz),
                lines: vec![keep],
                ..KernelTscLog::default()
            };
        } else if let Some(khz) = between(line, "Detected ", " MHz TSC") {
            k.tsc_detected_khz = Some(khz);
            k.lines.push(keep);
        } else if let Some(khz) = between(line, "Refined TSC clocksource calibration: ", " MHz") {
            k.refined_khz = Some(khz);
            k.lines.push(keep);
        } else if let Some(rest) = line
            .find("TSC freq recalibrated by [")
            .map(|i| &line[i + "TSC freq recalibrated by [".len()..])
        {
            // The format has a tab after the colon; /dev/kmsg escapes it as "\x09".
            let Some((timer, tail)) = rest.split_once("]:") else {
                continue;
            };
            let tail = tail.replace("\\x09", " ");
            if let Some(khz) = tail
                .split_once(" MHz")
                .and_then(|(n, _)| mhz_text_to_khz(n))
            {
                k.recalibrated = Some((timer.to_string(), khz));
                k.lines.push(keep);
            }
        }
    }
    k
}

/// Everything the rule compares, gathered (by `detect`) or recorded (by the tests).
#[derive(Debug, Clone)]
pub struct FrequencyInputs {
    pub cpuid_15_hz: Option<f64>,
    pub cpuid_16_base_hz: Option<f64>,
    pub cpuid_40000010_hz: Option<f64>,
    pub xen_guest_hz: Option<f64>,
    /// `CPUID.1:ECX[31]`.
    pub hypervisor: bool,
    /// A Xen interface was found (its leaf gives no frequency when this is true and
    /// `xen_guest_hz` is `None`).
    pub xen: bool,
    /// The kernel log's figures, or why the log could not be read.
    pub kernel_log: Result<KernelTscLog, String>,
    /// sysfs `tsc_freq_khz`: `Ok(None)` when the kernel has no such file.
    pub sysfs_tsc_khz: Result<Option<u64>, String>,
    /// The TSC's rate against `CLOCK_MONOTONIC_RAW`, and over how long.
    pub measured_hz: Option<f64>,
    pub calibration_span_s: Option<f64>,
    /// The clocksource `CLOCK_MONOTONIC_RAW` ran on.
    pub clocksource: Option<String>,
}

impl FrequencyInputs {
    /// The CPUID figures of `c` with the kernel's, nothing measured yet.
    pub fn from_cpuid(
        c: &CpuidFacts,
        kernel_log: Result<KernelTscLog, String>,
        sysfs_tsc_khz: Result<Option<u64>, String>,
    ) -> FrequencyInputs {
        let xen = c.hypervisor.xen.as_ref();
        FrequencyInputs {
            cpuid_15_hz: c.leaf_15_tsc_hz,
            cpuid_16_base_hz: c.leaf_16_base_mhz.map(|m| f64::from(m) * 1e6),
            cpuid_40000010_hz: c.hypervisor.tsc_khz_40000010.map(|k| f64::from(k) * 1e3),
            xen_guest_hz: xen
                .and_then(|x| x.guest_tsc_khz)
                .map(|k| f64::from(k) * 1e3),
            hypervisor: c.hypervisor_bit,
            xen: xen.is_some(),
            kernel_log,
            sysfs_tsc_khz,
            measured_hz: None,
            calibration_span_s: None,
            clocksource: None,
        }
    }
}

/// One source as the evidence lists it.
struct Offered {
    key: &'static str,
    label: &'static str,
    khz: Option<f64>,
    /// A program would convert ticks with it: it decides the verdict.
    trusted: bool,
    absent: Option<String>,
    note: Option<String>,
}

fn sources(i: &FrequencyInputs) -> Vec<Offered> {
    let khz = |hz: Option<f64>| hz.map(|h| h / 1e3);
    let not_enumerated = || Some("not enumerated (leaf absent, or its fields zero)".to_string());
    let mut v = vec![
        Offered {
            key: "cpuid_15",
            label: "CPUID 0x15",
            khz: khz(i.cpuid_15_hz),
            trusted: true,
            absent: not_enumerated(),
            note: i.hypervisor.then(|| {
                "inside a guest this leaf can describe the host's crystal, not the guest's \
                 scaled TSC"
                    .to_string()
            }),
        },
        Offered {
            key: "cpuid_16_base",
            label: "CPUID 0x16 base frequency",
            khz: khz(i.cpuid_16_base_hz),
            trusted: false,
            absent: not_enumerated(),
            note: Some(
                "the processor's nominal base frequency (Linux's cpu_khz, not tsc_khz): shown, \
                 never decides"
                    .into(),
            ),
        },
        Offered {
            key: "cpuid_40000010",
            label: "CPUID 0x40000010",
            khz: khz(i.cpuid_40000010_hz),
            trusted: true,
            absent: Some(if i.hypervisor {
                "the hypervisor offers no timing leaf 0x40000010 (its range ends below it, or \
                 EAX is 0)"
                    .into()
            } else {
                "no hypervisor (CPUID.1:ECX[31] clear)".into()
            }),
            note: None,
        },
        Offered {
            key: "xen_guest",
            label: "Xen CPUID guest TSC",
            khz: khz(i.xen_guest_hz),
            trusted: true,
            absent: Some(if i.xen {
                "the Xen TSC leaf gives 0 kHz".into()
            } else {
                "not a Xen guest".into()
            }),
            note: None,
        },
    ];
    let (log_khz, log_absent, log_note) = match &i.kernel_log {
        Err(why) => (None, Some(why.clone()), None),
        Ok(log) => match log.tsc_khz() {
            Some((k, line)) => (Some(k as f64), None, Some(format!("from the line {line}"))),
            None => (
                None,
                Some(
                    "no TSC calibration line in the kernel log (the log may have wrapped since \
                     boot)"
                        .into(),
                ),
                None,
            ),
        },
    };
    v.push(Offered {
        key: "kernel_log",
        label: "kernel tsc_khz (boot log)",
        khz: log_khz,
        trusted: true,
        absent: log_absent,
        note: log_note,
    });
    let (sys_khz, sys_absent) = match &i.sysfs_tsc_khz {
        Ok(Some(k)) => (Some(*k as f64), None),
        Ok(None) => (
            None,
            Some("this kernel has no tsc_freq_khz in sysfs".into()),
        ),
        Err(e) => (None, Some(e.clone())),
    };
    v.push(Offered {
        key: "sysfs_tsc_freq_khz",
        label: "kernel tsc_freq_khz (sysfs)",
        khz: sys_khz,
        trusted: true,
        absent: sys_absent,
        note: None,
    });
    if let Ok(Some((timer, k))) = i.kernel_log.as_ref().map(|l| l.recalibrated.as_ref()) {
        v.push(Offered {
            key: "kernel_recalibrated",
            label: "kernel recalibration (tsc=recalibrate)",
            khz: Some(*k as f64),
            trusted: false,
            absent: None,
            note: Some(format!(
                "the kernel's own measurement against {timer}; it leaves tsc_khz as it was"
            )),
        });
    }
    v
}

fn mhz(khz: f64) -> String {
    format!("{:.3} MHz", khz / 1e3)
}

/// A relative deviation as a percentage, or in ppm when under 0.01%.
fn deviation_text(d: f64) -> String {
    if d.abs() < 1e-4 {
        format!("{:+.2} ppm", d * 1e6)
    } else {
        format!("{:+.2}%", d * 100.0)
    }
}

/// A trusted source beside the measured rate: the source, its kHz, and its relative deviation.
type Compared<'a> = (&'a Offered, f64, f64);

/// `tsc_frequency_mismatch`: a source a program would trust is more than
/// [`FREQUENCY_TOLERANCE`] from the measured rate.
pub fn tsc_frequency_mismatch(i: &FrequencyInputs) -> Verdict {
    let offered = sources(i);
    let measured_khz = i.measured_hz.filter(|h| *h > 0.0).map(|h| h / 1e3);
    let on_tsc = i.clocksource.as_deref() == Some("tsc");
    let evidence = evidence(i, &offered, measured_khz, on_tsc);
    let Some(measured) = measured_khz else {
        return Verdict::inconclusive(
            "the TSC was not calibrated against CLOCK_MONOTONIC_RAW in this run (x86_64 \
             only; the clock reads failed)"
                .into(),
            evidence,
        );
    };
    if let Some(span) = i.calibration_span_s.filter(|&s| s < MIN_CALIBRATION_SPAN_S) {
        return Verdict::inconclusive(
            format!(
                "the calibration spans {span:.3} s, under {MIN_CALIBRATION_SPAN_S} s: too \
                 short to trust to 1%"
            ),
            evidence,
        );
    }
    let trusted: Vec<Compared> = offered
        .iter()
        .filter(|s| s.trusted)
        .filter_map(|s| s.khz.map(|k| (s, k, (k - measured) / measured)))
        .collect();
    if trusted.is_empty() {
        return Verdict::inconclusive(nothing_offered(&offered, measured), evidence);
    }
    let off: Vec<&Compared> = trusted
        .iter()
        .filter(|(_, _, d)| d.abs() > FREQUENCY_TOLERANCE)
        .collect();
    let summary = if off.is_empty() {
        all_agree(&trusted, measured, on_tsc)
    } else {
        some_disagree(&off, measured)
    };
    Verdict::decided(!off.is_empty(), evidence, summary)
}

/// The verdict's evidence: the measured rate and its reference clock, every source offered
/// with its deviation from the measured rate, the kernel log's lines, and the rule.
fn evidence(
    i: &FrequencyInputs,
    offered: &[Offered],
    measured_khz: Option<f64>,
    on_tsc: bool,
) -> Value {
    let deviation = |k: f64| measured_khz.map(|m| (k - m) / m);
    let listed: Vec<Value> = offered
        .iter()
        .map(|s| {
            json!({
                "source": s.key,
                "label": s.label,
                "khz": s.khz,
                "deviation_percent": s.khz.and_then(deviation).map(|d| d * 100.0),
                "trusted": s.trusted,
                "absent": if s.khz.is_none() { s.absent.clone() } else { None },
                "note": s.note,
            })
        })
        .collect();
    let kernel_lines = i.kernel_log.as_ref().map(|l| l.lines.clone()).ok();
    json!({
        "measured_khz": measured_khz,
        "calibration_span_s": i.calibration_span_s,
        "reference_clock": "CLOCK_MONOTONIC_RAW",
        "clocksource": i.clocksource,
        "reference_note": on_tsc.then_some(
            "CLOCK_MONOTONIC_RAW runs on the tsc clocksource: it counts this TSC at the \
             kernel's tsc_khz, so the kernel's figure agrees by construction and the check \
             shows whether TSC-derived time agrees with clock_gettime, not with an outside clock"
        ),
        "sources": listed,
        "kernel_log_lines": kernel_lines,
        "tolerance_percent": FREQUENCY_TOLERANCE * 100.0,
        "rule": "holds when a source a program would trust (CPUID 0x15, 0x40000010, Xen's \
                 guest TSC leaf, the kernel's tsc_khz) is more than 1% from the TSC's rate \
                 measured against CLOCK_MONOTONIC_RAW; CPUID 0x16 is nominal and never decides",
    })
}

/// Why no trusted source could be compared with the `measured` kHz: each one's reason, and
/// CPUID 0x16's nominal figure where it has one.
fn nothing_offered(offered: &[Offered], measured: f64) -> String {
    let why: Vec<String> = offered
        .iter()
        .filter(|s| s.trusted)
        .map(|s| {
            format!(
                "{}: {}",
                s.label,
                s.absent.as_deref().unwrap_or("not offered")
            )
        })
        .collect();
    let nominal = offered
        .iter()
        .find(|s| s.key == "cpuid_16_base")
        .and_then(|s| s.khz)
        .map_or(String::new(), |k| {
            format!("; CPUID 0x16's base frequency, {}, is nominal", mhz(k))
        });
    format!(
        "no source offers a TSC frequency to compare with the measured {} ({}{nominal})",
        mhz(measured),
        why.join("; ")
    )
}

/// The summary when every trusted source is within tolerance: the furthest one, and whether
/// the kernel's figure agrees by construction.
fn all_agree(trusted: &[Compared], measured: f64, on_tsc: bool) -> String {
    let worst = trusted
        .iter()
        .max_by(|a, b| a.2.abs().total_cmp(&b.2.abs()))
        .map(|(s, k, d)| format!("{} {} ({})", s.label, mhz(*k), deviation_text(*d)))
        .unwrap_or_default();
    format!(
        "{} within 1% of the measured {}: {worst}{}",
        if trusted.len() == 1 {
            "the one source offered is".to_string()
        } else {
            format!("all {} sources offered are", trusted.len())
        },
        mhz(measured),
        if on_tsc
            && trusted
                .iter()
                .any(|(s, _, _)| s.key.contains("kernel") || s.key.contains("sysfs"))
        {
            " (the kernel's figure agrees by construction on the tsc clocksource)"
        } else {
            ""
        }
    )
}

/// The summary when trusted sources are out of tolerance: each one's figure and its factor
/// from the measured rate.
fn some_disagree(off: &[&Compared], measured: f64) -> String {
    let named: Vec<String> = off
        .iter()
        .map(|(s, k, d)| {
            format!(
                "{} says {} ({:+.1}%, {:.2}×)",
                s.label,
                mhz(*k),
                d * 100.0,
                k / measured
            )
        })
        .collect();
    format!(
        "{} but the TSC runs at {} against CLOCK_MONOTONIC_RAW: a program that converts \
         ticks with it is off by that factor",
        named.join("; "),
        mhz(measured)
    )
}

#[cfg(test)]
mod tests;
