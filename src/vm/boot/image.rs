//! A kernel image checked before qemu sees it (`--kernel FILE`): a bzImage (the x86 boot
//! protocol's setup header: `0x55AA` at 0x1FE, `HdrS` at 0x202, protocol 2.00 or later, and a
//! file long enough for its setup sectors and the `syssize` it declares), or an ELF64 x86-64
//! `vmlinux` with the PVH entry note (`XEN_ELFNOTE_PHYS32_ENTRY`, type 18, name "Xen"), which
//! qemu's `-kernel` needs to boot an ELF. Anything else is refused with the reason, so a text
//! file or a truncated image never reaches a boot. Layout: Documentation/arch/x86/boot.rst
//! ("The real-mode kernel header"); arch/x86/platform/pvh/head.S for the note.

use std::io::Read;
use std::path::Path;

/// The most bytes read of an ELF image (a debug vmlinux is a few hundred MiB).
const MAX_ELF: u64 = 1 << 30;
/// `XEN_ELFNOTE_PHYS32_ENTRY` (include/xen/interface/elfnote.h).
const PVH_NOTE: u32 = 18;

fn u16_at(b: &[u8], o: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(o..o + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], o: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(o..o + 4)?.try_into().ok()?))
}

/// Why `head` (the file's first bytes) of a file of `len` bytes is not a bootable bzImage;
/// `Ok` when it is.
pub(crate) fn check_bzimage(head: &[u8], len: u64) -> Result<(), String> {
    if head.get(0x202..0x206) != Some(b"HdrS") {
        return Err("no bzImage setup header (`HdrS` at 0x202) and not an ELF file".into());
    }
    if head.get(0x1FE..0x200) != Some(&[0x55, 0xAA]) {
        return Err("a setup header without the boot-sector signature 0x55AA at 0x1FE".into());
    }
    let version = u16_at(head, 0x206).unwrap_or(0);
    if version < 0x0200 {
        return Err(format!(
            "boot protocol {}.{:02}: qemu loads 2.00 and later",
            version >> 8,
            version & 0xff
        ));
    }
    let setup_sects = match head.get(0x1F1).copied().unwrap_or(0) {
        0 => 4,
        n => u64::from(n),
    };
    let syssize = u64::from(u32_at(head, 0x1F4).unwrap_or(0));
    let need = (setup_sects + 1) * 512 + syssize * 16;
    if len < need {
        return Err(format!(
            "truncated: the setup header declares {need} bytes ({setup_sects} setup sectors and \
             {} bytes of kernel), the file has {len}",
            syssize * 16
        ));
    }
    Ok(())
}

/// Why an ELF image is not bootable by qemu's `-kernel`; `Ok` when it is.
pub(crate) fn check_elf(bytes: &[u8]) -> Result<(), String> {
    if u16_at(bytes, 0x12) != Some(62) {
        return Err("an ELF file, but not for x86-64 (e_machine is not 62)".into());
    }
    let elf = super::elf::Elf::parse(bytes).map_err(|e| format!("{e}"))?;
    if !elf
        .notes()
        .iter()
        .any(|(name, kind)| name == "Xen" && *kind == PVH_NOTE)
    {
        return Err(
            "an x86-64 ELF without the PVH entry note (XEN_ELFNOTE_PHYS32_ENTRY): \
                    qemu boots an ELF kernel only through it (CONFIG_PVH); give the bzImage"
                .into(),
        );
    }
    Ok(())
}

/// Checks the kernel image at `path`: `Err` with the reason, naming the file.
pub(crate) fn check_kernel_image(path: &Path) -> Result<(), String> {
    let name = path.display();
    let mut f = std::fs::File::open(path).map_err(|e| format!("'{name}': {e}"))?;
    let len = f.metadata().map_err(|e| format!("'{name}': {e}"))?.len();
    let mut head = Vec::new();
    (&mut f)
        .take(4096)
        .read_to_end(&mut head)
        .map_err(|e| format!("'{name}': {e}"))?;
    if head.starts_with(b"\x7fELF") {
        if len > MAX_ELF {
            return Err(format!(
                "'{name}': an ELF file of {len} bytes, over the 1 GiB read"
            ));
        }
        let mut bytes = head;
        (&mut f)
            .take(MAX_ELF)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("'{name}': {e}"))?;
        return check_elf(&bytes).map_err(|e| format!("'{name}' is not a bootable kernel: {e}"));
    }
    check_bzimage(&head, len).map_err(|e| format!("'{name}' is not a bootable kernel: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bzimage(setup_sects: u8, syssize: u32) -> Vec<u8> {
        let mut b = vec![0u8; 4096];
        b[0x1F1] = setup_sects;
        b[0x1F4..0x1F8].copy_from_slice(&syssize.to_le_bytes());
        b[0x1FE] = 0x55;
        b[0x1FF] = 0xAA;
        b[0x202..0x206].copy_from_slice(b"HdrS");
        b[0x206..0x208].copy_from_slice(&0x020fu16.to_le_bytes());
        b
    }

    #[test]
    fn a_bzimage_is_checked_to_its_declared_length() {
        let b = bzimage(27, 1000);
        let need = 28 * 512 + 16_000;
        assert!(check_bzimage(&b, need).is_ok());
        let e = check_bzimage(&b, need - 1).unwrap_err();
        assert!(e.starts_with("truncated"), "{e}");
        assert!(check_bzimage(b"hello, kernel\n", 14)
            .unwrap_err()
            .contains("HdrS"));
        let mut old = bzimage(4, 1);
        old[0x206..0x208].copy_from_slice(&0x0104u16.to_le_bytes());
        assert!(check_bzimage(&old, 1 << 20)
            .unwrap_err()
            .contains("protocol 1.04"));
    }

    #[test]
    fn an_elf_needs_x86_64_and_the_pvh_note() {
        assert!(check_elf(b"\x7fELF\x02\x01\x01").is_err());
        let mut e = vec![0u8; 64];
        e[..6].copy_from_slice(b"\x7fELF\x02\x01");
        e[0x12] = 183; // aarch64
        assert!(check_elf(&e).unwrap_err().contains("x86-64"));
    }
}
