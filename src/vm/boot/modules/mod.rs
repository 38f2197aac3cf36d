//! Kernel modules for `vm count --fs xfs,btrfs`: Debian's cloud kernels build ext4 in but xfs
//! and btrfs as modules (`CONFIG_XFS_FS=m`, `CONFIG_BTRFS_FS=m` on 6.1, 6.12 and 7.2), so the
//! guest must load them itself before it can mount.
//!
//! On the host, when a kernel package is unpacked ([`crate::vm::boot::kernel::fetch`]), the modules of
//! [`FS_MODULES`] and everything they depend on are copied out of the package's
//! `lib/modules/REL/kernel` tree (`.ko` on 6.1, `.ko.xz` from 6.12 on: decompressed with the
//! system's `xz`) into the kernel's cache entry ([`CACHE_DIR`]), with a file saying the load
//! order per file system. The packages carry no `modules.dep` (depmod runs at install), so the
//! dependencies come from each module's own `.modinfo` section (`depends=a,b`): the same
//! strings `modinfo -F depends` prints. Soft dependencies (`softdep=pre: crypto-crc32c`) name
//! crypto aliases, not modules, and are left out: on the kernels of the default matrix the
//! crc32c and sha256 algorithms btrfs asks for by default are built in (`CONFIG_CRYPTO_CRC32C=y`
//! on 6.1 and 6.12; 7.2's btrfs calls the crc32c library), and the others serve only
//! non-default checksum choices.
//!
//! The modules travel in a second newc archive appended to the initramfs (the kernel unpacks
//! concatenated archives in turn), under [`GUEST_DIR`], and the guest loads them in order with
//! `finit_module(2)` ([`load_in_guest`]).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::error::{Context, Result};
use crate::trace::FsKind;
use crate::vm::boot::cpio::Entry;

/// The module each disk file system needs (the root of its dependency closure).
pub(crate) const FS_MODULES: [(FsKind, &str); 2] = [(FsKind::Xfs, "xfs"), (FsKind::Btrfs, "btrfs")];

/// The cache entry's subdirectory with the extracted modules and their `order` file. Versioned:
/// an entry without it (written before modules were extracted) is fetched again.
pub(crate) const CACHE_DIR: &str = "modules.v1";

/// Where the guest finds the modules: `order` (one file name a line) and the `.ko` files.
pub(crate) const GUEST_DIR: &str = "lib/tscope-modules";

/// Whether `fs` needs modules on a Debian kernel (has an entry in [`FS_MODULES`]).
pub(crate) fn fs_module(fs: FsKind) -> Option<&'static str> {
    FS_MODULES.iter().find(|(f, _)| *f == fs).map(|(_, m)| *m)
}

/// What the `.modinfo` section of a module says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ModInfo {
    pub name: String,
    pub depends: Vec<String>,
}

/// The module's name as the kernel spells it: `-` and `_` are the same (`kmod`'s
/// `modname_normalize`), file names use either.
pub(crate) fn normalize(name: &str) -> String {
    name.replace('-', "_")
}

/// Parses a `.modinfo` section: NUL-separated `key=value` strings.
pub(crate) fn parse_modinfo(section: &[u8]) -> ModInfo {
    let mut info = ModInfo::default();
    for s in section.split(|&b| b == 0) {
        let s = String::from_utf8_lossy(s);
        if let Some(v) = s.strip_prefix("name=") {
            info.name = normalize(v);
        } else if let Some(v) = s.strip_prefix("depends=") {
            info.depends
                .extend(v.split(',').filter(|d| !d.is_empty()).map(normalize));
        }
    }
    info
}

/// The bytes of section `wanted` of a little-endian ELF64 relocatable (a `.ko`).
pub(crate) fn elf_section<'a>(elf: &'a [u8], wanted: &str) -> Result<&'a [u8]> {
    crate::ensure!(
        elf.len() >= 64 && elf.starts_with(b"\x7fELF\x02\x01"),
        "not a little-endian ELF64 file"
    );
    let u16_at = |o: usize| elf.get(o..o + 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
    let u32_at = |o: usize| {
        elf.get(o..o + 4)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
    };
    let u64_at = |o: usize| {
        elf.get(o..o + 8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap()) as usize)
    };
    let bad = || crate::failure!("ELF section headers point past the end of the file");
    let shoff = u64_at(0x28).ok_or_else(bad)?;
    let shentsize = usize::from(u16_at(0x3a).ok_or_else(bad)?);
    let shnum = usize::from(u16_at(0x3c).ok_or_else(bad)?);
    let shstrndx = usize::from(u16_at(0x3e).ok_or_else(bad)?);
    let header = |i: usize| -> Result<(usize, &'a [u8])> {
        let h = shoff + i * shentsize;
        let name = u32_at(h).ok_or_else(bad)? as usize;
        let (off, size) = (
            u64_at(h + 0x18).ok_or_else(bad)?,
            u64_at(h + 0x20).ok_or_else(bad)?,
        );
        let data = elf
            .get(off..off.checked_add(size).ok_or_else(bad)?)
            .ok_or_else(bad)?;
        Ok((name, data))
    };
    let (_, names) = header(shstrndx)?;
    for i in 0..shnum {
        let (name, data) = header(i)?;
        let n = names.get(name..).unwrap_or_default();
        let n = &n[..n.iter().position(|&b| b == 0).unwrap_or(n.len())];
        if n == wanted.as_bytes() {
            return Ok(data);
        }
    }
    crate::fail!("no {wanted} section")
}

/// The load order for `root`: its dependencies first (depth first, each once), `root` last.
/// `info` gives a module's `.modinfo`, or `None` when the package has no such module (built
/// in): a missing root yields an empty order, a missing dependency is an error.
pub(crate) fn load_order(
    root: &str,
    info: &mut dyn FnMut(&str) -> Result<Option<ModInfo>>,
) -> Result<Vec<String>> {
    fn visit(
        m: &str,
        info: &mut dyn FnMut(&str) -> Result<Option<ModInfo>>,
        stack: &mut Vec<String>,
        out: &mut Vec<String>,
    ) -> Result<bool> {
        if out.iter().any(|o| o == m) {
            return Ok(true);
        }
        crate::ensure!(
            !stack.iter().any(|s| s == m),
            "module dependency cycle: {} -> {m}",
            stack.join(" -> ")
        );
        let Some(mi) = info(m)? else {
            return Ok(false);
        };
        stack.push(m.to_string());
        for d in &mi.depends {
            if !visit(d, info, stack, out)? {
                crate::fail!("module {m} depends on {d}, which the package does not hold");
            }
        }
        stack.pop();
        out.push(m.to_string());
        Ok(true)
    }
    let mut out = Vec::new();
    visit(&normalize(root), info, &mut Vec::new(), &mut out)?;
    Ok(out)
}

/// Every `.ko`/`.ko.xz` under `tree`'s `lib/modules/*/kernel` and `usr/lib/modules/*/kernel`,
/// by normalized name.
fn index(tree: &Path) -> BTreeMap<String, PathBuf> {
    fn walk(d: &Path, out: &mut BTreeMap<String, PathBuf>) {
        for e in fs::read_dir(d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if let Some(n) = p.file_name().and_then(|n| n.to_str()) {
                if let Some(stem) = n.strip_suffix(".ko").or_else(|| n.strip_suffix(".ko.xz")) {
                    out.insert(normalize(stem), p.clone());
                }
            }
        }
    }
    let mut out = BTreeMap::new();
    for base in ["lib/modules", "usr/lib/modules"] {
        for rel in fs::read_dir(tree.join(base))
            .into_iter()
            .flatten()
            .flatten()
        {
            walk(&rel.path().join("kernel"), &mut out);
        }
    }
    out
}

/// Whether `tree` (an unpacked package) holds any kernel module.
pub(crate) fn has_modules(tree: &Path) -> bool {
    !index(tree).is_empty()
}

/// A module file's ELF: as is (`.ko`), or through `xz -dc` (`.ko.xz`).
fn read_module(path: &Path) -> Result<Vec<u8>> {
    if path.extension().is_some_and(|e| e == "xz") {
        let mut cmd = Command::new("xz");
        crate::sys::child::kill_with_parent(&mut cmd);
        let out = cmd
            .args(["-dc", "--"])
            .arg(path)
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("running xz -dc '{}' (install xz-utils)", path.display()))?;
        crate::ensure!(
            out.status.success(),
            "xz -dc '{}' failed ({}): {}",
            path.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
        return Ok(out.stdout);
    }
    fs::read(path).with_context(|| format!("reading '{}'", path.display()))
}

/// Copies the modules of every [`FS_MODULES`] file system and their dependencies out of the
/// unpacked package `tree` into `dest` (decompressed, as `NAME.ko`; `dest` on the same file
/// system as `tree`'s parent, where it is assembled), and writes `dest/order`:
/// `fs: mod mod …` a line, dependencies first (an empty list: the package has no such module,
/// the file system is built in or not configured).
pub(crate) fn extract(tree: &Path, dest: &Path) -> Result<()> {
    let files = index(tree);
    let mut elves: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    let mut order = String::new();
    for (fs_name, root) in FS_MODULES {
        let mut info = |m: &str| -> Result<Option<ModInfo>> {
            let Some(path) = files.get(m) else {
                return Ok(None);
            };
            if !elves.contains_key(m) {
                elves.insert(m.to_string(), read_module(path)?);
            }
            let section = elf_section(&elves[m], ".modinfo")
                .with_context(|| format!("module '{}'", path.display()))?;
            Ok(Some(parse_modinfo(section)))
        };
        let mods = load_order(root, &mut info)?;
        order += &format!("{fs_name}: {}\n", mods.join(" "));
    }
    // Written beside `tree` (in the fetch's scratch directory, swept if a run is killed), then
    // renamed into place whole.
    let tmp = tree.with_file_name("modules-out");
    let _ = fs::remove_dir_all(&tmp);
    fs::create_dir_all(&tmp).with_context(|| format!("creating '{}'", tmp.display()))?;
    for (name, elf) in &elves {
        let p = tmp.join(format!("{name}.ko"));
        fs::write(&p, elf).with_context(|| format!("writing '{}'", p.display()))?;
    }
    fs::write(tmp.join("order"), order)?;
    let _ = fs::remove_dir_all(dest);
    fs::rename(&tmp, dest).with_context(|| format!("renaming to '{}'", dest.display()))?;
    Ok(())
}

/// The modules `filesystems` need from the cache directory `dir` (written by [`extract`]), in
/// load order, each once.
pub(crate) fn for_filesystems(dir: &Path, filesystems: &[FsKind]) -> Result<Vec<String>> {
    let path = dir.join("order");
    let text =
        fs::read_to_string(&path).with_context(|| format!("reading '{}'", path.display()))?;
    let mut out: Vec<String> = Vec::new();
    for fs_name in filesystems.iter().filter(|&&f| fs_module(f).is_some()) {
        let line = text
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{fs_name}:")))
            .with_context(|| format!("'{}' names no modules for {fs_name}", path.display()))?;
        for m in line.split_whitespace() {
            if !out.iter().any(|o| o == m) {
                out.push(m.to_string());
            }
        }
    }
    Ok(out)
}

/// The initramfs entries carrying `modules` (names, in load order) from the cache `dir`:
/// [`GUEST_DIR`]`/NAME.ko` and its `order` file. Append [`crate::vm::boot::cpio::write`] of them to the
/// base archive.
pub(crate) fn initramfs_entries(dir: &Path, modules: &[String]) -> Result<Vec<Entry>> {
    let mut entries = vec![Entry::dir("lib"), Entry::dir(GUEST_DIR)];
    for m in modules {
        let p = dir.join(format!("{m}.ko"));
        let data = fs::read(&p).with_context(|| format!("reading '{}'", p.display()))?;
        entries.push(Entry::file(&format!("{GUEST_DIR}/{m}.ko"), 0o644, data));
    }
    let order: String = modules.iter().map(|m| format!("{m}.ko\n")).collect();
    entries.push(Entry::file(
        &format!("{GUEST_DIR}/order"),
        0o644,
        order.into_bytes(),
    ));
    Ok(entries)
}

/// In the guest: loads every module `/`[`GUEST_DIR`]`/order` names, in order, with
/// `finit_module(2)`; one already loaded (`EEXIST`) is fine. Returns the names loaded; no
/// `order` file (no disk file system needs modules) loads nothing.
pub(crate) fn load_in_guest() -> Result<Vec<String>> {
    let dir = Path::new("/").join(GUEST_DIR);
    let Ok(order) = fs::read_to_string(dir.join("order")) else {
        return Ok(Vec::new());
    };
    let mut loaded = Vec::new();
    for name in order.lines().filter(|l| !l.is_empty()) {
        let path = dir.join(name);
        let f = fs::File::open(&path).with_context(|| format!("opening '{}'", path.display()))?;
        match crate::sys::guest::finit_module(&f) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::EEXIST) => {}
            Err(e) => crate::fail!("loading module {name} (finit_module): {e}"),
        }
        loaded.push(name.trim_end_matches(".ko").to_string());
    }
    Ok(loaded)
}

#[cfg(test)]
mod tests;
