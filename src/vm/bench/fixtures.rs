//! What the bench's tests share: a report around given kernels, and the recorded consoles of
//! one 6.1 and one 7.2 boot read into kernels.

use super::*;
use crate::vm::boot::accel::AccelChoice;
use crate::vm::boot::qemu;

pub(crate) fn report(
    kernels: Vec<BenchKernel>,
    clocksources: &[Clocksource],
    workloads: &[WorkloadName],
) -> BenchReport {
    BenchReport {
        schema_version: VM_BENCH_SCHEMA_VERSION,
        tool: "tscope test".into(),
        created_unix_s: 0,
        accel: AccelChoice {
            requested: "tcg".into(),
            used: qemu::Accel::Tcg,
            emulation: true,
            kvm_module: None,
            note: None,
        },
        seed: 1,
        boots: 2,
        rounds: 2,
        slot_ms: 100,
        clocksources: clocksources.to_vec(),
        filesystems: vec![FsKind::Tmpfs],
        workloads: workloads.to_vec(),
        kernels,
        runs: Vec::new(),
        comparisons: Vec::new(),
        refused: Vec::new(),
        kernel_control: rows::KERNEL_CONTROL.into(),
        counted: Vec::new(),
        count_errors: Vec::new(),
        disturbed: Vec::new(),
        knob: Vec::new(),
        host_cpu: None,
        host_kernel: None,
        stopped: false,
    }
}

pub(crate) const CONSOLE_6_1: &str = include_str!("../../../tests/data/vm-bench/6.1-boot1.console");
pub(crate) const CONSOLE_7_2: &str = include_str!("../../../tests/data/vm-bench/7.2-boot1.console");

pub(crate) fn recorded(console: &str) -> BenchKernel {
    let c = parse_console(console).unwrap();
    let h = c.header.clone().unwrap();
    BenchKernel {
        kernel_package: "recorded".into(),
        kernel_release: Some(h.release.clone()),
        hz: 250,
        hz_source: HzSource::Config,
        boots: vec![BenchBoot {
            header: c.header,
            slots: c.slots,
            reads: c.reads,
            pairs: c.pairs,
            // The guest's own word for what it booted on (`tsc-early` is the TSC).
            ..BenchBoot::new(0, h.boot_clocksource.running().unwrap())
        }],
    }
}
