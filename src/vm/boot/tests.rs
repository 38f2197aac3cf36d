//! Unit tests of the boot room that need no qemu: accelerator choice, static-ELF check.

use super::accel::{choose_accel, RequestedAccel};
use super::binary::is_static_elf;
use super::qemu::Accel;
use crate::detect::host::KvmHost;

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
    // A 64-bit little-endian ELF header with one loadable segment and no interpreter.
    let mut elf = vec![0u8; 120];
    elf[..6].copy_from_slice(b"\x7fELF\x02\x01");
    elf[0x20] = 64; // e_phoff
    elf[0x36] = 56; // e_phentsize
    elf[0x38] = 1; // e_phnum
    elf[64] = 1; // PT_LOAD, offset 0, file size 0
    assert!(is_static_elf(&elf));
    assert!(!is_static_elf(b"#!/bin/sh\n"));
}
