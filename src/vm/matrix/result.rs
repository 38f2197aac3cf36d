//! The `vm guest` result: host against each guest. One serde model (the JSON contract in
//! `docs/schema.md`); `crate::export` prints it with the sources as rows and the machines as
//! columns.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::detect::Detection;
use crate::probe::machine::Clocksource;
use crate::probe::Profile;
pub(crate) use crate::vm::boot::accel::AccelChoice;
use crate::vm::boot::clock::ClocksourceName;

/// The version of the `vm guest` JSON this build writes.
pub(crate) const VM_GUEST_SCHEMA_VERSION: u32 = 1;

/// The sources the matrix shows, in order.
pub(crate) const MATRIX_SOURCES: [&str; 7] = [
    "rdtsc",
    "rdtscp",
    "vdso:monotonic",
    "syscall:monotonic",
    "vdso:realtime_coarse",
    "cpuid",
    "syscall:getppid",
];

/// The verdicts the matrix shows, in order.
pub const MATRIX_VERDICTS: [&str; 10] = [
    "rdtsc_trapped",
    "rdtscp_trapped",
    "vdso_fallback:monotonic",
    "vdso_fallback:realtime",
    "tsc_unsynchronized",
    "clock_warps",
    "tsc_marked_unstable",
    "clocksource_switched",
    "vdso_inconsistent",
    "tsc_frequency_mismatch",
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
    pub(crate) fn new(label: String, probe: Option<Profile>, detect: Option<Detection>) -> Self {
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
    /// The `clocksource=` on the kernel command line: one of
    /// [`crate::vm::boot::clock::Clocksource`], or, in a document of a build that booted any
    /// name it was given, that name.
    pub requested_clocksource: ClocksourceName,
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
