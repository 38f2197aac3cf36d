//! Unit tests of the host side of `vm guest` that need no qemu: the kernel command line, reading
//! a console transcript into a result. The matrix's printed forms are tested in `crate::export`.

use std::time::Duration;

use super::harvest;
use super::GuestConfig;
use crate::vm::boot::accel::RequestedAccel;
use crate::vm::boot::binary::{initramfs, GuestBinary};
use crate::vm::boot::qemu::QemuOutcome;
use crate::vm::boot::session::BootConfig;
use crate::vm::boot::{cpio, serial};
use crate::vm::matrix::result::GuestStatus;

fn config() -> GuestConfig {
    GuestConfig {
        clocksources: vec![crate::vm::boot::clock::Clocksource::AcpiPm],
        boot: BootConfig {
            accel: RequestedAccel::Tcg,
            append: Some("loglevel=3".into()),
            ..BootConfig::new(5)
        },
        kernel: None,
        kernel_package: "linux-image-cloud-amd64".into(),
        smp: 1,
        tsc_reliable: true,
        all_sources: false,
        pvh: true,
        measure_host: false,
        emulate_trap: false,
    }
}

#[test]
fn cmdline_and_initramfs() {
    let cfg = GuestConfig {
        clocksources: vec![crate::vm::boot::clock::Clocksource::Hpet],
        ..config()
    };
    assert_eq!(
        crate::vm::boot::pipeline::cmdline(&cfg.boot, &cfg, 0),
        "console=ttyS0 quiet panic=-1 clocksource=hpet tsc=reliable loglevel=3"
    );
    // A static program goes in alone, a dynamic one with its interpreter and libraries.
    let mut bin = GuestBinary {
        path: "tscope".into(),
        program: b"\x7fELF".to_vec(),
        runtime: Vec::new(),
    };
    let entries = cpio::parse(&initramfs(&bin).unwrap()).unwrap();
    let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["dev", "dev/console", "proc", "sys", "init"]);
    assert_eq!(entries[1].rdev, (5, 1));
    assert_eq!(entries[4].mode, 0o100_755);
    bin.runtime = vec![
        ("lib64/ld-linux-x86-64.so.2".into(), b"ld".to_vec()),
        ("lib/x86_64-linux-gnu/libc.so.6".into(), b"libc".to_vec()),
    ];
    let entries = cpio::parse(&initramfs(&bin).unwrap()).unwrap();
    let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "dev",
            "dev/console",
            "proc",
            "sys",
            "lib",
            "lib/x86_64-linux-gnu",
            "lib64",
            "lib64/ld-linux-x86-64.so.2",
            "lib/x86_64-linux-gnu/libc.so.6",
            "init"
        ]
    );
}

fn outcome(console: &str, timed_out: bool) -> QemuOutcome {
    QemuOutcome {
        console: console.into(),
        stderr: "qemu: could not load kernel".into(),
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
