//! The `vm guest` result: host against each guest. One serde model (the JSON contract in
//! `docs/schema.md`), printed as a table or Markdown with the sources as rows and the machines
//! as columns.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::qemu::Accel;
use crate::detect::Detection;
use crate::export::table::{Align, Table};
use crate::export::{Exporter, Format};
use crate::probe::machine::Clocksource;
use crate::probe::Profile;

/// The version of the `vm guest` JSON this build writes.
pub const VM_GUEST_SCHEMA_VERSION: u32 = 1;

/// The sources the matrix shows, in order.
pub const MATRIX_SOURCES: [&str; 7] = [
    "rdtsc",
    "rdtscp",
    "vdso:monotonic",
    "syscall:monotonic",
    "vdso:realtime_coarse",
    "cpuid",
    "syscall:getppid",
];

/// The verdicts the matrix shows, in order.
pub const MATRIX_VERDICTS: [&str; 6] = [
    "rdtsc_trapped",
    "rdtscp_trapped",
    "vdso_fallback:monotonic",
    "vdso_fallback:realtime",
    "tsc_unsynchronized",
    "clock_warps",
];

/// Everything `vm guest` found.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GuestMatrix {
    pub schema_version: u32,
    pub tool: String,
    pub created_unix_s: u64,
    pub accel: AccelChoice,
    pub kernel: KernelInfo,
    /// The static tscope put in the initramfs as /init.
    pub guest_bin: String,
    /// The machine running qemu; `null` with `--no-host`.
    pub host: Option<Column>,
    pub guests: Vec<GuestRun>,
}

/// Which accelerator ran the guests, and why.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AccelChoice {
    /// `auto`, `kvm` or `tcg`, as asked.
    pub requested: String,
    pub used: Accel,
    /// True under TCG: every guest instruction was emulated, so guest figures are emulation
    /// costs, not virtualisation costs.
    pub emulation: bool,
    /// The module behind /dev/kvm, if any (`kvm_intel`, `kvm_amd`, `kvm_pvm`).
    pub kvm_module: Option<String>,
    pub note: Option<String>,
}

/// The kernel the guests booted.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KernelInfo {
    pub origin: String,
    pub image: String,
    /// The extracted ELF booted PVH-style, when there is one.
    pub vmlinux: Option<String>,
    pub extract_note: Option<String>,
}

/// One machine's figures: the host, or one guest.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Column {
    pub label: String,
    /// What the kernel actually used (`current`) and offered (`available`).
    pub clocksource: Clocksource,
    /// Point cost of each matrix source, ns (`null`: not measured or unsupported).
    pub costs_ns: BTreeMap<String, Option<f64>>,
    /// Whether each matrix verdict holds (`null`: no detect result).
    pub verdicts: BTreeMap<String, Option<bool>>,
    /// The full `probe --quick --json` profile.
    pub probe: Option<Profile>,
    /// The full `detect --json` result.
    pub detect: Option<Detection>,
}

impl Column {
    /// Fills the summary maps from the full results.
    pub fn new(label: String, probe: Option<Profile>, detect: Option<Detection>) -> Self {
        let cost = |id: &str| {
            probe
                .as_ref()
                .and_then(|p| p.cost_ns(id))
                .or_else(|| detect.as_ref().and_then(|d| d.profile.cost_ns(id)))
                .map(|e| e.point)
        };
        let costs_ns = MATRIX_SOURCES
            .iter()
            .map(|id| (id.to_string(), cost(id)))
            .collect();
        let verdicts = MATRIX_VERDICTS
            .iter()
            .map(|n| {
                let v = detect.as_ref().and_then(|d| d.verdict(n)).map(|v| v.holds);
                (n.to_string(), v)
            })
            .collect();
        let clocksource = probe
            .as_ref()
            .map(|p| p.machine.clocksource.clone())
            .unwrap_or_default();
        Column {
            label,
            clocksource,
            costs_ns,
            verdicts,
            probe,
            detect,
        }
    }
}

/// How one guest run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GuestStatus {
    /// Results came back and the guest powered off.
    Ok,
    /// Killed after `--timeout` seconds.
    Timeout,
    /// qemu failed, or the guest's output was missing, truncated or not valid JSON.
    Failed,
}

/// One guest boot.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GuestRun {
    /// The `clocksource=` on the kernel command line.
    pub requested_clocksource: String,
    /// Whether the kernel used what was asked (`clocksource.current == requested`).
    pub clocksource_honoured: Option<bool>,
    pub status: GuestStatus,
    pub error: Option<String>,
    /// `pvh` (ELF vmlinux) or `bzimage`.
    pub boot: String,
    pub wall_s: f64,
    /// The guest's `/proc/cmdline`.
    pub cmdline: Option<String>,
    pub qemu_args: Vec<String>,
    /// The last console lines, when the run failed.
    pub console_tail: Option<String>,
    #[serde(flatten)]
    pub column: Column,
}

/// A matrix, ready to print.
#[derive(Debug)]
pub struct MatrixReport<'a>(pub &'a GuestMatrix);

fn ns(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(x) if x >= 100.0 => format!("{x:.0}"),
        Some(x) => format!("{x:.1}"),
    }
}

impl MatrixReport<'_> {
    fn columns(&self) -> Vec<&Column> {
        let m = self.0;
        m.host
            .iter()
            .chain(m.guests.iter().map(|g| &g.column))
            .collect()
    }

    fn table(&self) -> Table {
        let cols = self.columns();
        let mut headers: Vec<(&str, Align)> = vec![("", Align::Left)];
        headers.extend(cols.iter().map(|c| (c.label.as_str(), Align::Right)));
        let mut t = Table::new(&headers);
        let host_cells = usize::from(self.0.host.is_some());
        let mut row = |name: &str, host: Vec<String>, guests: Vec<String>| {
            let mut r = vec![name.to_string()];
            r.extend(host.into_iter().take(host_cells));
            r.extend(guests);
            t.row(r);
        };
        let m = self.0;
        let host_cs = || {
            m.host
                .iter()
                .map(|h| h.clocksource.current.clone().unwrap_or("?".into()))
                .collect()
        };
        row(
            "requested clocksource",
            vec!["-".into()],
            m.guests
                .iter()
                .map(|g| g.requested_clocksource.clone())
                .collect(),
        );
        row(
            "actual clocksource",
            host_cs(),
            m.guests
                .iter()
                .map(|g| {
                    let cur = g.column.clocksource.current.clone().unwrap_or("?".into());
                    if g.clocksource_honoured == Some(false) {
                        format!("{cur} (!)")
                    } else {
                        cur
                    }
                })
                .collect(),
        );
        row(
            "status",
            vec!["measured".into()],
            m.guests
                .iter()
                .map(|g| {
                    format!(
                        "{} {:.1}s",
                        serde_json::to_value(g.status)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_string))
                            .unwrap_or_default(),
                        g.wall_s
                    )
                })
                .collect(),
        );
        for id in MATRIX_SOURCES {
            let cells: Vec<String> = cols
                .iter()
                .map(|c| ns(c.costs_ns.get(id).copied().flatten()))
                .collect();
            let (h, g) = cells.split_at(host_cells);
            row(&format!("{id} ns"), h.to_vec(), g.to_vec());
        }
        for name in MATRIX_VERDICTS {
            let cells: Vec<String> = cols
                .iter()
                .map(|c| match c.verdicts.get(name).copied().flatten() {
                    Some(true) => "YES".into(),
                    Some(false) => "no".into(),
                    None => "-".into(),
                })
                .collect();
            let (h, g) = cells.split_at(host_cells);
            row(name, h.to_vec(), g.to_vec());
        }
        t
    }

    fn notes(&self) -> String {
        let m = self.0;
        let mut out = format!(
            "accel: {}{}\nkernel: {}{}\n",
            m.accel.used.name(),
            if m.accel.emulation {
                " — TCG figures are emulation (qemu's binary translator), not virtualisation"
            } else {
                " (hardware virtualisation)"
            },
            m.kernel.origin,
            m.kernel
                .vmlinux
                .as_ref()
                .map(|_| ", vmlinux extracted for PVH boot")
                .unwrap_or(""),
        );
        if let Some(n) = &m.accel.note {
            out += &format!("note: {n}\n");
        }
        for g in &m.guests {
            if g.clocksource_honoured == Some(false) {
                out += &format!(
                    "{}: the kernel ignored clocksource={} and used {} (available: {})\n",
                    g.column.label,
                    g.requested_clocksource,
                    g.column.clocksource.current.as_deref().unwrap_or("?"),
                    g.column.clocksource.available.join(" ")
                );
            }
            if let Some(e) = &g.error {
                out += &format!("{}: {e}\n", g.column.label);
            }
        }
        out
    }
}

impl Exporter for MatrixReport<'_> {
    fn export(&self, format: Format) -> anyhow::Result<Vec<u8>> {
        let out = match format {
            Format::Json => return crate::export::json(self.0),
            Format::Table => format!("{}\n{}", self.table().text(), self.notes()),
            Format::Csv => self.table().csv(),
            Format::Markdown => {
                let notes: String = self.notes().lines().map(|l| format!("- {l}\n")).collect();
                format!("{}\n{notes}", self.table().markdown())
            }
        };
        Ok(out.into_bytes())
    }
}
