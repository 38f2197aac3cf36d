//! The printed forms of a [`Detection`]: the facts, the verdicts, the timings they used.

use serde::Serialize;

use super::table::{Align, Table};
use super::{Block, Render, Style};
use crate::cpuid::CpuidFacts;
use crate::detect::forensics::Forensics;
use crate::detect::host::KvmHost;
use crate::detect::{Detection, HypervisorSummary};
use crate::fmt::{ns, opt};

fn mhz(hz: Option<f64>) -> String {
    opt(hz, crate::fmt::mhz)
}

impl Render for Detection {
    fn kind(&self) -> Option<crate::input::Kind> {
        Some(crate::input::Kind::Detect)
    }

    fn json(&self) -> impl Serialize + '_ {
        self
    }

    fn blocks(&self, _: Style) -> Vec<Block> {
        let mut b = vec![
            Block::Table(facts(self)),
            Block::Blank,
            Block::Table(verdicts(self)),
            Block::Blank,
        ];
        if let Some(m) = offset_matrix(self) {
            b.extend([Block::Table(m), Block::Blank]);
        }
        b.push(Block::Text(timings(self)));
        b
    }

    fn csv(&self) -> Table {
        let mut t = Table::plain(&["verdict", "holds", "summary"]);
        for (name, v) in &self.verdicts {
            t.row(vec![name.clone(), v.holds.to_string(), v.summary.clone()]);
        }
        t
    }

    fn openmetrics(&self) -> Option<String> {
        Some(super::openmetrics::detection(self))
    }
}

/// The facts table: the CPU, the hypervisor, the TSC, the clocksource, the host and the kernel,
/// one row each.
fn facts(d: &Detection) -> Table {
    let f = &d.facts;
    let c = &f.cpu;
    let mut t = Table::new(&[("fact", Align::Left), ("value", Align::Left)]);
    let mut row = |k: &str, v: String| t.row(vec![k.to_string(), v]);
    row(
        "cpu",
        format!(
            "{} {} (family {:#x}, model {:#x})",
            c.vendor.as_deref().unwrap_or("?"),
            c.brand.as_deref().unwrap_or(""),
            c.family.unwrap_or(0),
            c.model.unwrap_or(0)
        ),
    );
    for (k, v) in hypervisor_rows(&f.hypervisor, c) {
        row(k, v);
    }
    for (k, v) in tsc_rows(d) {
        row(k, v);
    }
    row(
        "clocksource",
        format!(
            "{} (available: {})",
            f.clocksource.current.as_deref().unwrap_or("?"),
            f.clocksource.available.join(" ")
        ),
    );
    let dmi = &f.host.dmi;
    row(
        "dmi",
        format!(
            "{} / {}",
            dmi.sys_vendor.as_deref().unwrap_or("?"),
            dmi.product_name.as_deref().unwrap_or("?")
        ),
    );
    row("/dev/kvm", dev_kvm(&f.host.kvm));
    row("kernel", f.kernel_release.clone().unwrap_or_default());
    if let Some(fx) = &f.forensics {
        for (k, v) in forensics_rows(fx) {
            row(k, v);
        }
    }
    if d.emulate_trap {
        row(
            "emulate-trap",
            "TSC reads of this process trap (PR_TSC_SIGSEGV)".into(),
        );
    }
    t
}

/// The hypervisor: its vendor and signatures (or none), its note, and the feature leaves of
/// KVM, Hyper-V and Xen where CPUID has them.
fn hypervisor_rows(hv: &HypervisorSummary, c: &CpuidFacts) -> Vec<(&'static str, String)> {
    let mut rows = vec![(
        "hypervisor",
        if hv.present {
            format!(
                "{} [{}]",
                hv.vendor.as_deref().unwrap_or("unknown"),
                hv.signatures.join(", ")
            )
        } else {
            "none (CPUID.1:ECX[31] clear)".into()
        },
    )];
    if let Some(note) = &hv.note {
        rows.push(("hypervisor note", note.clone()));
    }
    if let Some(k) = &c.hypervisor.kvm {
        rows.push((
            "kvm features",
            format!(
                "eax {:#010x}: clocksource2 {}, stable bit {}, steal time {}",
                k.eax, k.clocksource2, k.clocksource_stable_bit, k.steal_time
            ),
        ));
    }
    if let Some(h) = &c.hypervisor.hyperv {
        rows.push((
            "hyper-v features",
            format!(
                "eax {:#010x}: reference tsc {}, frequency msrs {}, tsc invariant {}",
                h.eax, h.reference_tsc, h.frequency_msrs, h.tsc_invariant
            ),
        ));
    }
    if let Some(x) = &c.hypervisor.xen {
        rows.push((
            "xen tsc",
            format!(
                "mode {} ({}), emulated {}",
                x.tsc_mode, x.tsc_mode_name, x.emulated
            ),
        ));
    }
    rows
}

/// The TSC's CPUID and cpuinfo flags, and every frequency offered for it.
fn tsc_rows(d: &Detection) -> [(&'static str, String); 2] {
    let f = &d.facts;
    let c = &f.cpu;
    // The kernel's figure is in the frequency verdict's evidence (read from its boot log).
    let kernel_khz = d
        .verdict("tsc_frequency_mismatch")
        .and_then(|v| v.evidence["sources"].as_array())
        .and_then(|s| s.iter().find(|s| s["source"] == "kernel_log"))
        .and_then(|s| s["khz"].as_f64());
    [
        (
            "tsc",
            format!(
                "invariant {}, rdtscp {}, rdpid {}; cpuinfo: {}",
                c.invariant_tsc,
                c.rdtscp,
                c.rdpid,
                f.host.cpuinfo_tsc_flags.join(" ")
            ),
        ),
        (
            "tsc frequency",
            format!(
                "calibrated {}; cpuid 0x15 {}, 0x16 base {}, 0x40000010 {}; kernel {}",
                mhz(f.tsc_hz.calibrated),
                mhz(f.tsc_hz.cpuid_15),
                mhz(f.tsc_hz.cpuid_16_base),
                mhz(f.tsc_hz.cpuid_40000010),
                mhz(kernel_khz.map(|k| k * 1e3))
            ),
        ),
    ]
}

/// `/dev/kvm`: the module behind it (`kvm_pvm` said for what it is), or that it is absent.
fn dev_kvm(kvm: &KvmHost) -> String {
    match (&kvm.module, kvm.dev_kvm) {
        (Some(m), true) if m == "kvm_pvm" => {
            "kvm_pvm (software hypervisor: runs PVM guest kernels only)".into()
        }
        (Some(m), true) => m.clone(),
        (_, true) => "present, module unknown".into(),
        (_, false) => "absent".into(),
    }
}

/// The kernel log read, the boot options that matter, the TSC-watchdog exemption.
fn forensics_rows(fx: &Forensics) -> Vec<(&'static str, String)> {
    let log = match (&fx.log, &fx.log_error) {
        (Some(l), _) => format!(
            "{}: {} records{}",
            l.source,
            l.records,
            if l.from_boot {
                ", from boot"
            } else {
                ", boot messages lost (ring buffer wrapped)"
            }
        ),
        (None, Some(e)) => e.clone(),
        (None, None) => "not read".into(),
    };
    let o = &fx.boot_options;
    let boot = if o.effects.is_empty() {
        "none of tsc=, notsc, clocksource= on the kernel command line".into()
    } else {
        o.effects.join("; ")
    };
    let e = &fx.watchdog_exemption;
    let missing: Vec<&str> = [
        ("constant_tsc", e.constant_tsc),
        ("nonstop_tsc", e.nonstop_tsc),
        ("tsc_adjust", e.tsc_adjust),
    ]
    .iter()
    .filter(|(_, has)| !has)
    .map(|(n, _)| *n)
    .collect();
    let packages = e.packages.map_or("?".into(), |p| p.to_string());
    let exempt = format!(
        "{} (constant_tsc, nonstop_tsc, tsc_adjust, ≤ 4 packages: {}; {packages} package(s)){}; \
         the watchdog {} the TSC",
        if e.meets { "exempt" } else { "not exempt" },
        if missing.is_empty() {
            "all flags present".to_string()
        } else {
            format!("missing {}", missing.join(", "))
        },
        if e.tsc_reliable_flag {
            ", tsc_reliable flag set"
        } else {
            ""
        },
        if e.watchdog_checks_tsc {
            "checks"
        } else {
            "does not check"
        }
    );
    vec![
        ("kernel log", log),
        ("boot options", boot),
        ("tsc watchdog", exempt),
    ]
}

fn verdicts(d: &Detection) -> Table {
    let mut t = Table::new(&[
        ("verdict", Align::Left),
        ("holds", Align::Left),
        ("why", Align::Left),
    ]);
    for (name, v) in &d.verdicts {
        t.row(vec![
            name.clone(),
            v.state.label().into(),
            v.summary.clone(),
        ]);
    }
    t
}

/// Matrices past this many CPUs are left to `--json`.
const MATRIX_MAX_CPUS: usize = 16;

/// `tsc_unsynchronized`'s offset matrix: row CPU i, column CPU j, the bounds on
/// `tsc(j) − tsc(i)` and the round trip they were measured over, in ns.
fn offset_matrix(d: &Detection) -> Option<Table> {
    let m = &d.verdict("tsc_unsynchronized")?.evidence["matrix"];
    let cpus: Vec<u64> = m["cpus"]
        .as_array()?
        .iter()
        .filter_map(|c| c.as_u64())
        .collect();
    if cpus.len() < 2 || cpus.len() > MATRIX_MAX_CPUS {
        return None;
    }
    let names: Vec<String> = cpus.iter().map(|c| format!("cpu {c}")).collect();
    let mut headers = vec![("tsc(col) − tsc(row), ns [round trip]", Align::Left)];
    headers.extend(names.iter().map(|n| (n.as_str(), Align::Right)));
    let mut t = Table::new(&headers);
    let num = |v: &serde_json::Value| v.as_f64().map_or("?".to_string(), |x| format!("{x:.0}"));
    for (i, name) in names.iter().enumerate() {
        let mut row = vec![name.clone()];
        for j in 0..cpus.len() {
            let b = &m["offset_bounds_ns"][i][j];
            row.push(if i == j {
                "-".into()
            } else if b.is_null() {
                "unbounded".into()
            } else {
                format!(
                    "{}..{} [{}]",
                    num(&b[0]),
                    num(&b[1]),
                    num(&m["round_trip_ns"][i][j])
                )
            });
        }
        t.row(row);
    }
    Some(t)
}

/// The costs the verdicts used, on one line.
fn timings(d: &Detection) -> String {
    let p = &d.profile;
    let get = |id: &str| p.cost_ns(id).map_or("-".into(), |e| ns(e.point));
    format!(
        "timings (ns): rdtsc {}, rdtscp {}, cpuid {}, getppid {}, vdso:monotonic {}, \
             syscall:monotonic {}\n",
        get("rdtsc"),
        get("rdtscp"),
        get("cpuid"),
        get("syscall:getppid"),
        get("vdso:monotonic"),
        get("syscall:monotonic")
    )
}
