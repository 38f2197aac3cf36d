//! The printed forms of a [`Detection`]: the facts, the verdicts, the timings they used.

use serde::Serialize;

use super::table::{Align, Table};
use super::{Block, Render, Style};
use crate::detect::Detection;
use crate::fmt::{ns, opt};

fn mhz(hz: Option<f64>) -> String {
    opt(hz, crate::fmt::mhz)
}

impl Render for Detection {
    fn json(&self) -> impl Serialize + '_ {
        self
    }

    fn blocks(&self, _: Style) -> Vec<Block> {
        vec![
            Block::Table(facts(self)),
            Block::Blank,
            Block::Table(verdicts(self)),
            Block::Blank,
            Block::Text(timings(self)),
        ]
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
    let hv = &f.hypervisor;
    row(
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
    );
    if let Some(note) = &hv.note {
        row("hypervisor note", note.clone());
    }
    if let Some(k) = &c.hypervisor.kvm {
        row(
            "kvm features",
            format!(
                "eax {:#010x}: clocksource2 {}, stable bit {}, steal time {}",
                k.eax, k.clocksource2, k.clocksource_stable_bit, k.steal_time
            ),
        );
    }
    if let Some(h) = &c.hypervisor.hyperv {
        row(
            "hyper-v features",
            format!(
                "eax {:#010x}: reference tsc {}, frequency msrs {}, tsc invariant {}",
                h.eax, h.reference_tsc, h.frequency_msrs, h.tsc_invariant
            ),
        );
    }
    if let Some(x) = &c.hypervisor.xen {
        row(
            "xen tsc",
            format!(
                "mode {} ({}), emulated {}",
                x.tsc_mode, x.tsc_mode_name, x.emulated
            ),
        );
    }
    row(
        "tsc",
        format!(
            "invariant {}, rdtscp {}, rdpid {}; cpuinfo: {}",
            c.invariant_tsc,
            c.rdtscp,
            c.rdpid,
            f.host.cpuinfo_tsc_flags.join(" ")
        ),
    );
    row(
        "tsc frequency",
        format!(
            "calibrated {}; cpuid 0x15 {}, 0x16 base {}, 0x40000010 {}",
            mhz(f.tsc_hz.calibrated),
            mhz(f.tsc_hz.cpuid_15),
            mhz(f.tsc_hz.cpuid_16_base),
            mhz(f.tsc_hz.cpuid_40000010)
        ),
    );
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
    let kvm = &f.host.kvm;
    row(
        "/dev/kvm",
        match (&kvm.module, kvm.dev_kvm) {
            (Some(m), true) if m == "kvm_pvm" => {
                "kvm_pvm (software hypervisor: runs PVM guest kernels only)".into()
            }
            (Some(m), true) => m.clone(),
            (_, true) => "present, module unknown".into(),
            (_, false) => "absent".into(),
        },
    );
    row("kernel", f.kernel_release.clone().unwrap_or_default());
    if d.emulate_trap {
        row(
            "emulate-trap",
            "TSC reads of this process trap (PR_TSC_SIGSEGV)".into(),
        );
    }
    t
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
