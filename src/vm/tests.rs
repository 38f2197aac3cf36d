//! Unit tests of the host side of `vm guest` that need no qemu: accelerator choice, static-ELF
//! check, reading a console transcript into a result. The matrix's printed forms are tested in
//! `crate::export`.

use std::time::Duration;

use super::guest::{choose_accel, cmdline, harvest, initramfs, is_static_elf, GuestConfig};
use super::matrix::GuestStatus;
use super::qemu::{Accel, QemuOutcome};
use super::{cpio, serial};
use crate::detect::host::KvmHost;
use crate::vm::guest::RequestedAccel;

fn kvm(module: Option<&str>) -> KvmHost {
    KvmHost {
        dev_kvm: module.is_some(),
        module: module.map(str::to_string),
        hardware_virtualisation: matches!(module, Some("kvm_intel" | "kvm_amd")),
    }
}

#[test]
fn kvm_pvm_falls_back_to_tcg_with_a_message() {
    let a = choose_accel(RequestedAccel::Auto, &kvm(Some("kvm_pvm"))).unwrap();
    assert_eq!(a.used, Accel::Tcg);
    assert!(a.emulation);
    assert!(a.note.unwrap().contains("kvm_pvm"));
    let e = choose_accel(RequestedAccel::Kvm, &kvm(Some("kvm_pvm"))).unwrap_err();
    assert!(e.to_string().contains("use --accel tcg"), "{e}");
    let a = choose_accel(RequestedAccel::Auto, &kvm(Some("kvm_amd"))).unwrap();
    assert_eq!((a.used, a.emulation), (Accel::Kvm, false));
    let a = choose_accel(RequestedAccel::Auto, &kvm(None)).unwrap();
    assert_eq!(a.used, Accel::Tcg);
    assert!(choose_accel(RequestedAccel::Kvm, &kvm(None)).is_err());
}

#[test]
fn tells_static_from_dynamic_elf() {
    // This test binary is dynamically linked (it has PT_INTERP).
    let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
    assert!(!is_static_elf(&me));
    // A 64-bit little-endian ELF header with no program headers has no interpreter.
    let mut elf = vec![0u8; 64];
    elf[..6].copy_from_slice(b"\x7fELF\x02\x01");
    assert!(is_static_elf(&elf));
    assert!(!is_static_elf(b"#!/bin/sh\n"));
}

fn config() -> GuestConfig {
    GuestConfig {
        clocksources: vec!["acpi_pm".into()],
        accel: RequestedAccel::Tcg,
        timeout: Duration::from_secs(5),
        kernel: None,
        kernel_package: "linux-image-cloud-amd64".into(),
        guest_bin: None,
        smp: 1,
        memory_mb: 256,
        tsc_reliable: true,
        all_sources: false,
        append: Some("loglevel=3".into()),
        pvh: true,
        qemu: "qemu-system-x86_64".into(),
        measure_host: false,
        emulate_trap: false,
    }
}

#[test]
fn cmdline_and_initramfs() {
    assert_eq!(
        cmdline(&config(), "hpet"),
        "console=ttyS0 clocksource=hpet quiet panic=-1 tsc=reliable loglevel=3"
    );
    let entries = cpio::parse(&initramfs(b"\x7fELF").unwrap()).unwrap();
    let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["dev", "dev/console", "proc", "sys", "init"]);
    assert_eq!(entries[1].rdev, (5, 1));
    assert_eq!(entries[4].mode, 0o100_755);
}

fn outcome(console: &str, timed_out: bool) -> QemuOutcome {
    QemuOutcome {
        console: console.into(),
        stderr: "qemu: could not load kernel".into(),
        status: None,
        timed_out,
        wall: Duration::from_secs(5),
    }
}

#[test]
fn harvest_reports_timeouts_truncation_and_silence() {
    let (st, err, col, _) = harvest("tsc", &outcome("", true));
    assert_eq!(st, GuestStatus::Timeout);
    assert!(err.unwrap().contains("--timeout"));
    assert_eq!(col.label, "guest:tsc");

    let truncated = format!("{}\n{{\"schema", serial::begin("probe"));
    let (st, err, _, _) = harvest("tsc", &outcome(&truncated, false));
    assert_eq!(st, GuestStatus::Failed);
    assert!(err.unwrap().contains("truncated inside section 'probe'"));

    let (st, err, _, _) = harvest("tsc", &outcome("", false));
    assert_eq!(st, GuestStatus::Failed);
    assert!(err.unwrap().contains("could not load kernel"));

    // The clocksource and the guest's own error come back even when measuring failed.
    let console = format!(
        "{}\nhpet\ntsc hpet acpi_pm\n{}\n{}\nmount /dev: EBUSY\n{}\n",
        serial::begin("clocksource"),
        serial::end("clocksource"),
        serial::begin("error"),
        serial::end("error")
    );
    let (st, err, col, _) = harvest("tsc", &outcome(&console, false));
    assert_eq!(st, GuestStatus::Failed);
    assert!(err.unwrap().contains("EBUSY"));
    assert_eq!(col.clocksource.current.as_deref(), Some("hpet"));
    assert_eq!(col.clocksource.available, ["tsc", "hpet", "acpi_pm"]);
}
