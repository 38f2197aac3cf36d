//! Unit tests of [`crate::vm::boot::modules`].

use crate::trace::FsKind;
use crate::vm::boot::modules::*;
use std::fs;

/// The `.modinfo` `name=`/`depends=` strings of the xfs and btrfs closures, as read from
/// Debian's packages (2026-12-01): linux-image-6.1.0-48-cloud-amd64 6.1.172-1,
/// linux-image-6.12.117+deb13-cloud-amd64 6.12.117-1, linux-modules-7.2.13+deb14-cloud-amd64
/// 7.2.13-1.
const RECORDED: [(&str, &[(&str, &str)]); 3] = [
    (
        "6.1",
        &[
            ("xfs", "libcrc32c"),
            ("btrfs", "zstd_compress,raid6_pq,xor,libcrc32c"),
            ("libcrc32c", ""),
            ("zstd_compress", ""),
            ("raid6_pq", ""),
            ("xor", ""),
        ],
    ),
    (
        "6.12",
        &[
            ("xfs", "libcrc32c"),
            ("btrfs", "xor,raid6_pq,libcrc32c"),
            ("libcrc32c", ""),
            ("raid6_pq", ""),
            ("xor", ""),
        ],
    ),
    (
        "7.2",
        &[
            ("xfs", ""),
            ("btrfs", "xor,libblake2b,raid6_pq"),
            ("xor", ""),
            ("libblake2b", ""),
            ("raid6_pq", ""),
        ],
    ),
];

fn modinfo_bytes(name: &str, depends: &str) -> Vec<u8> {
    format!(
        "license=GPL\0softdep=pre: crypto-crc32c\0depends={depends}\0retpoline=Y\0name={name}\0"
    )
    .into_bytes()
}

fn order(kernel: &str, root: &str) -> Vec<String> {
    let (_, mods) = RECORDED.iter().find(|(k, _)| *k == kernel).unwrap();
    load_order(root, &mut |m| {
        Ok(mods
            .iter()
            .find(|(n, _)| *n == m)
            .map(|(n, d)| parse_modinfo(&modinfo_bytes(n, d))))
    })
    .unwrap()
}

#[test]
fn dependencies_load_first_in_the_order_modinfo_names_them() {
    assert_eq!(order("6.1", "xfs"), ["libcrc32c", "xfs"]);
    assert_eq!(
        order("6.1", "btrfs"),
        ["zstd_compress", "raid6_pq", "xor", "libcrc32c", "btrfs"]
    );
    assert_eq!(
        order("6.12", "btrfs"),
        ["xor", "raid6_pq", "libcrc32c", "btrfs"]
    );
    assert_eq!(order("7.2", "xfs"), ["xfs"]);
    assert_eq!(
        order("7.2", "btrfs"),
        ["xor", "libblake2b", "raid6_pq", "btrfs"]
    );
}

#[test]
fn a_built_in_root_loads_nothing_and_a_missing_dependency_is_an_error() {
    let none = load_order("ext4", &mut |_| Ok(None)).unwrap();
    assert!(none.is_empty());
    let err = load_order("xfs", &mut |m| {
        Ok((m == "xfs").then(|| parse_modinfo(&modinfo_bytes("xfs", "libcrc32c"))))
    })
    .unwrap_err();
    assert!(
        format!("{err:#}").contains("depends on libcrc32c"),
        "{err:#}"
    );
    let cycle = load_order("a", &mut |m| {
        Ok(Some(ModInfo {
            name: m.into(),
            depends: vec![if m == "a" { "b" } else { "a" }.into()],
        }))
    });
    assert!(format!("{:#}", cycle.unwrap_err()).contains("cycle"));
}

#[test]
fn modinfo_names_are_normalized() {
    let mi = parse_modinfo(b"name=raid6-pq\0depends=zstd-compress,,xor\0");
    assert_eq!(mi.name, "raid6_pq");
    assert_eq!(mi.depends, ["zstd_compress", "xor"]);
    assert_eq!(fs_module(FsKind::Xfs), Some("xfs"));
    assert_eq!(fs_module(FsKind::Ext4), None);
}

/// A minimal ELF64 with a null section, `.modinfo` and `.shstrtab`.
fn tiny_elf(modinfo: &[u8]) -> Vec<u8> {
    let shstr = b"\0.modinfo\0.shstrtab\0";
    let mut elf = vec![0u8; 64];
    elf[..6].copy_from_slice(b"\x7fELF\x02\x01");
    let modinfo_off = elf.len();
    elf.extend_from_slice(modinfo);
    let shstr_off = elf.len();
    elf.extend_from_slice(shstr);
    let shoff = elf.len();
    let sh = |name: u32, off: usize, size: usize| {
        let mut h = vec![0u8; 64];
        h[..4].copy_from_slice(&name.to_le_bytes());
        h[0x18..0x20].copy_from_slice(&(off as u64).to_le_bytes());
        h[0x20..0x28].copy_from_slice(&(size as u64).to_le_bytes());
        h
    };
    elf.extend(sh(0, 0, 0));
    elf.extend(sh(1, modinfo_off, modinfo.len()));
    elf.extend(sh(10, shstr_off, shstr.len()));
    elf[0x28..0x30].copy_from_slice(&(shoff as u64).to_le_bytes());
    elf[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
    elf[0x3c..0x3e].copy_from_slice(&3u16.to_le_bytes());
    elf[0x3e..0x40].copy_from_slice(&2u16.to_le_bytes());
    elf
}

#[test]
fn reads_the_modinfo_section_of_an_elf() {
    let mi = modinfo_bytes("xfs", "libcrc32c");
    let elf = tiny_elf(&mi);
    assert_eq!(elf_section(&elf, ".modinfo").unwrap(), &mi[..]);
    assert!(elf_section(&elf, ".text").is_err());
    assert!(elf_section(&elf[..100], ".modinfo").is_err());
    assert!(elf_section(b"not an elf", ".modinfo").is_err());
}

#[test]
fn extracts_a_package_tree_and_lists_the_initramfs_entries() {
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("x");
    let k = tree.join("lib/modules/6.1.0-48-cloud-amd64/kernel");
    for (sub, name, deps) in [
        ("fs/xfs", "xfs", "libcrc32c"),
        ("lib", "libcrc32c", ""),
        ("fs/btrfs", "btrfs", "raid6_pq,libcrc32c"),
        ("lib/raid6", "raid6_pq", ""),
        ("drivers/other", "unrelated", ""),
    ] {
        fs::create_dir_all(k.join(sub)).unwrap();
        let p = k.join(sub).join(format!("{name}.ko"));
        fs::write(p, tiny_elf(&modinfo_bytes(name, deps))).unwrap();
    }
    assert!(has_modules(&tree));
    let dest = dir.path().join(CACHE_DIR);
    extract(&tree, &dest).unwrap();
    let text = fs::read_to_string(dest.join("order")).unwrap();
    assert_eq!(
        text,
        "xfs: libcrc32c xfs\nbtrfs: raid6_pq libcrc32c btrfs\n"
    );
    assert!(!dest.join("unrelated.ko").exists());
    let mods = for_filesystems(&dest, &crate::vm::boot::disk::FILESYSTEMS).unwrap();
    assert_eq!(mods, ["libcrc32c", "xfs", "raid6_pq", "btrfs"]);
    let entries = initramfs_entries(&dest, &mods).unwrap();
    let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        names[..3],
        ["lib", GUEST_DIR, "lib/tscope-modules/libcrc32c.ko"]
    );
    let last = entries.last().unwrap();
    assert_eq!(last.name, "lib/tscope-modules/order");
    assert_eq!(last.data, b"libcrc32c.ko\nxfs.ko\nraid6_pq.ko\nbtrfs.ko\n");
    // The appended archive parses on its own, as the kernel unpacks it after the first.
    let bytes = crate::vm::boot::cpio::write(&entries).unwrap();
    assert_eq!(crate::vm::boot::cpio::parse(&bytes).unwrap(), entries);
}
