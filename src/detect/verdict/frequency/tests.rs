//! The rule on recorded inputs: the 16 CPUID dumps of `tests/data/cpuid/` and the kernel-log
//! excerpts of `tests/data/kernel-log/` (formats of Linux `arch/x86/kernel/tsc.c`; sources in
//! its README). A dump carries no measurement, so the measured rate is stated relative to the
//! dump's own figure: equal, across the 1% line, and at the 2.8× Bun reported on Cloud Run.

use super::*;
use crate::cpuid::CpuidDump;
use crate::detect::verdict::VerdictState;

fn data(dir: &str, name: &str) -> String {
    let path = format!("{}/tests/data/{dir}/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn log(name: &str) -> KernelTscLog {
    parse_kernel_log(&data("kernel-log", name))
}

/// Every recorded dump, by file stem.
fn dumps() -> Vec<(String, CpuidFacts)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/cpuid");
    let mut out: Vec<(String, CpuidFacts)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .map(|p| {
            let dump = CpuidDump::parse(&std::fs::read_to_string(&p).unwrap()).unwrap();
            let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
            (stem, CpuidFacts::decode(&dump))
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn measured(mut i: FrequencyInputs, hz: f64) -> FrequencyInputs {
    i.measured_hz = Some(hz);
    i.calibration_span_s = Some(0.8);
    i.clocksource = Some("kvm-clock".into());
    i
}

fn no_log() -> Result<KernelTscLog, String> {
    Err("/dev/kmsg: Operation not permitted (kernel.dmesg_restrict = 1)".into())
}

/// The figure a program would trust in each dump that offers one, in Hz.
fn trusted_hz(i: &FrequencyInputs) -> Option<(&'static str, f64)> {
    i.cpuid_15_hz
        .map(|h| ("CPUID 0x15", h))
        .or(i.cpuid_40000010_hz.map(|h| ("CPUID 0x40000010", h)))
        .or(i.xen_guest_hz.map(|h| ("Xen CPUID guest TSC", h)))
}

#[test]
fn calibration_lines_parse_in_every_format() {
    let kvm = log("kvm-guest-tsc-known-freq.txt");
    assert_eq!(kvm.processor_khz, Some(2_600_000));
    assert_eq!(kvm.tsc_khz().map(|t| t.0), Some(2_600_000));
    assert_eq!(
        kvm.lines,
        ["[    0.000062] tsc: Detected 2600.000 MHz processor"]
    );
    let refined = log("refined-calibration.txt");
    assert_eq!(refined.processor_khz, Some(1_996_800));
    assert_eq!(refined.tsc_khz().map(|t| t.0), Some(1_991_999));
    let differ = log("cpu-and-tsc-differ.txt");
    assert_eq!(
        (differ.processor_khz, differ.tsc_khz().map(|t| t.0)),
        (Some(2_800_000), Some(2_808_000))
    );
    let old = log("old-kernel-no-prefix.txt");
    assert_eq!(
        (old.processor_khz, old.refined_khz),
        (Some(2_095_117), Some(2_095_243))
    );
    let recal = log("recalibrate-known-freq.txt");
    assert_eq!(recal.tsc_khz().map(|t| t.0), Some(3_504_000));
    assert_eq!(recal.recalibrated, Some(("HPET".to_string(), 4_002)));
    // /dev/kmsg escapes the format's tab as "\x09".
    let escaped = data("kernel-log", "recalibrate-known-freq.txt").replace('\t', "\\x09");
    assert_eq!(parse_kernel_log(&escaped).recalibrated, recal.recalibrated);
    // A later boot replaces the earlier one's figures.
    let two = log("two-boots-journal.txt");
    assert_eq!(
        (two.processor_khz, two.refined_khz),
        (Some(2_400_000), None)
    );
    assert_eq!(log("wrapped-no-tsc-lines.txt"), KernelTscLog::default());
}

#[test]
fn malformed_figures_are_not_read() {
    for bad in [
        "tsc: Detected abc MHz processor",
        "tsc: Detected 12.3456 MHz processor",
        "tsc: Detected -1.000 MHz processor",
        "tsc: Detected 99999999999999999999.000 MHz processor",
        "tsc: Refined TSC clocksource calibration:  MHz",
    ] {
        assert_eq!(parse_kernel_log(bad), KernelTscLog::default(), "{bad}");
    }
    assert_eq!(mhz_text_to_khz("2600"), Some(2_600_000));
    assert_eq!(mhz_text_to_khz("2600.5"), Some(2_600_500));
}

/// This machine, recorded: no CPUID figure, the kernel's from its boot log, and the rate
/// `detect --json` measured on it. The clocksource is tsc, so the agreement is by
/// construction and the evidence says so.
#[test]
fn the_development_machine_agrees_with_its_kernel() {
    let mut i = FrequencyInputs::from_cpuid(
        &CpuidFacts::default(),
        Ok(log("kvm-guest-tsc-known-freq.txt")),
        Ok(None),
    );
    i.hypervisor = true;
    i.measured_hz = Some(2_600_000_160.895_202);
    i.calibration_span_s = Some(0.799_899_550_5);
    i.clocksource = Some("tsc".into());
    let v = tsc_frequency_mismatch(&i);
    assert_eq!(v.state, VerdictState::No, "{v:?}");
    assert!(v.summary.contains("by construction"), "{}", v.summary);
    let kernel = &v.evidence["sources"][4];
    assert_eq!(kernel["source"], "kernel_log");
    assert_eq!(kernel["khz"], 2_600_000.0);
    assert!(kernel["deviation_percent"].as_f64().unwrap().abs() < 1e-3);
    assert!(v.evidence["reference_note"].is_string());
}

#[test]
fn every_recorded_dump_decides_or_says_why_not() {
    let all = dumps();
    assert_eq!(all.len(), 16);
    let mut with_figure = Vec::new();
    for (name, facts) in &all {
        let i = FrequencyInputs::from_cpuid(facts, no_log(), Ok(None));
        let Some((label, hz)) = trusted_hz(&i) else {
            let v = tsc_frequency_mismatch(&measured(i, 2.6e9));
            assert_eq!(v.state, VerdictState::Inconclusive, "{name}: {v:?}");
            let why = v.inconclusive_reason.unwrap();
            assert!(why.starts_with("no source offers"), "{name}: {why}");
            assert!(why.contains("dmesg_restrict"), "{name}: {why}");
            continue;
        };
        with_figure.push(name.as_str());
        for (factor, state) in [
            (1.0, VerdictState::No),
            (1.005, VerdictState::No),
            (1.0 / 1.005, VerdictState::No),
            (1.02, VerdictState::Yes),
            (1.0 / 1.02, VerdictState::Yes),
            // The source says 2.8× the rate the TSC really runs at (Bun on Cloud Run).
            (1.0 / 2.8, VerdictState::Yes),
        ] {
            let v = tsc_frequency_mismatch(&measured(i.clone(), hz * factor));
            assert_eq!(v.state, state, "{name} at {factor}: {v:?}");
            if state == VerdictState::Yes {
                assert!(v.summary.starts_with(label), "{name}: {}", v.summary);
            }
            let listed = v.evidence["sources"].as_array().unwrap();
            assert!(listed.len() >= 6, "{name}");
            for s in listed {
                assert_eq!(s["khz"].is_null(), s["absent"].is_string(), "{name}: {s}");
            }
        }
    }
    assert_eq!(
        with_figure,
        [
            "hyperv-azure-tdx-intel-sapphire-rapids",
            "vmware-intel-i5-2520m",
            "vmware-intel-xeon-x5570",
            "xen-ec2-c3large-intel-xeon-e5-2680v2",
            "xen-ec2-t2micro-intel-xeon-e5-2676v3",
            "xen-intel-xeon-e5-2680v2-cpuidjl",
        ]
    );
}

/// Bun's case: CPUID 0x15 read inside a guest. The Azure TDX guest enumerates it (25 MHz ×
/// 84); a TSC running 2.8× slower than that makes the verdict hold and name the leaf.
#[test]
fn leaf_15_inside_a_guest_is_named() {
    let (_, tdx) = dumps()
        .into_iter()
        .find(|(n, _)| n == "hyperv-azure-tdx-intel-sapphire-rapids")
        .unwrap();
    let i = FrequencyInputs::from_cpuid(&tdx, no_log(), Ok(None));
    let v = tsc_frequency_mismatch(&measured(i, 2.1e9 / 2.8));
    assert!(v.holds);
    assert!(
        v.summary.contains("CPUID 0x15 says 2100.000 MHz"),
        "{}",
        v.summary
    );
    assert!(v.summary.contains("2.80×"), "{}", v.summary);
    let leaf = &v.evidence["sources"][0];
    assert!(leaf["note"].as_str().unwrap().contains("guest"));
    assert!((leaf["deviation_percent"].as_f64().unwrap() - 180.0).abs() < 1e-6);
}

/// CPUID 0x16 is nominal: the i7-6600U's base frequency (2800 MHz) is listed with its
/// deviation but never decides; the kernel's figure does.
#[test]
fn leaf_16_is_shown_but_never_decides() {
    let (_, skl) = dumps()
        .into_iter()
        .find(|(n, _)| n == "baremetal-intel-i7-6600u")
        .unwrap();
    let i = FrequencyInputs::from_cpuid(&skl, no_log(), Ok(None));
    let v = tsc_frequency_mismatch(&measured(i, 2.8e9 / 2.8));
    assert_eq!(v.state, VerdictState::Inconclusive);
    assert!(
        v.summary.contains("2800.000 MHz, is nominal"),
        "{}",
        v.summary
    );
    let base = &v.evidence["sources"][1];
    assert_eq!(
        (base["source"].as_str(), base["trusted"].as_bool()),
        (Some("cpuid_16_base"), Some(false))
    );
    assert!((base["deviation_percent"].as_f64().unwrap() - 180.0).abs() < 1e-6);
    let i = FrequencyInputs::from_cpuid(&skl, Ok(log("cpu-and-tsc-differ.txt")), Ok(None));
    let v = tsc_frequency_mismatch(&measured(i.clone(), 2.808e9));
    assert_eq!(v.state, VerdictState::No, "{v:?}");
    let v = tsc_frequency_mismatch(&measured(i, 2.808e9 * 1.03));
    assert!(
        v.holds && v.summary.starts_with("kernel tsc_khz"),
        "{}",
        v.summary
    );
}

#[test]
fn the_kernel_recalibration_is_listed_not_trusted() {
    let i = FrequencyInputs::from_cpuid(
        &CpuidFacts::default(),
        Ok(log("recalibrate-known-freq.txt")),
        Ok(None),
    );
    // The TSC measured at the HPET's figure: the kernel's tsc_khz is the one that is off.
    let v = tsc_frequency_mismatch(&measured(i, 4.002e6));
    assert!(v.holds, "{v:?}");
    let listed = v.evidence["sources"].as_array().unwrap();
    let recal = listed
        .iter()
        .find(|s| s["source"] == "kernel_recalibrated")
        .unwrap();
    assert_eq!(
        (recal["khz"].as_f64(), recal["trusted"].as_bool()),
        (Some(4002.0), Some(false))
    );
    assert!(v
        .summary
        .starts_with("kernel tsc_khz (boot log) says 3504.000 MHz"));
}

#[test]
fn without_a_measurement_or_a_source_it_is_inconclusive() {
    let none = FrequencyInputs::from_cpuid(&CpuidFacts::default(), no_log(), Ok(None));
    let v = tsc_frequency_mismatch(&none);
    assert_eq!(v.state, VerdictState::Inconclusive);
    assert!(v.summary.contains("not calibrated"));
    let mut short = measured(none.clone(), 2.6e9);
    short.calibration_span_s = Some(0.001);
    assert!(tsc_frequency_mismatch(&short).summary.contains("too short"));
    let wrapped = FrequencyInputs::from_cpuid(
        &CpuidFacts::default(),
        Ok(log("wrapped-no-tsc-lines.txt")),
        Err("/sys/devices/system/cpu/cpu0/tsc_freq_khz: Permission denied".into()),
    );
    let v = tsc_frequency_mismatch(&measured(wrapped, 2.6e9));
    let why = v.inconclusive_reason.unwrap();
    assert!(
        why.contains("may have wrapped") && why.contains("Permission denied"),
        "{why}"
    );
}
