//! Booting a kernel the same way in every room: the ELF vmlinux (PVH, no self-decompression:
//! seconds saved under TCG) when there is one, else the bzImage; and when qemu refuses the ELF
//! (it exits at once with nothing from the guest on the console), the bzImage at once, with a
//! note, for this boot and every later one of the run. Also the initramfs a kernel boots
//! with: the run's base archive, plus the modules its disk file systems need.

use std::path::{Path, PathBuf};

use super::kernel::Kernel;
use super::qemu::{self, QemuOutcome, QemuSpec};
use super::serial;
use super::{cpio, disk, modules};
use crate::error::{Context, Result};
use crate::progress::Progress;
use crate::trace::FsKind;

/// Boots `kernel` with `spec` (its `kernel` field is set here). `pvh` says whether to try the
/// ELF first; it turns false, for the caller's later boots, when qemu refuses it.
pub(crate) fn boot(
    spec: &mut QemuSpec,
    kernel: &Kernel,
    pvh: &mut bool,
    label: &str,
    progress: &dyn Progress,
) -> Result<QemuOutcome> {
    if let (true, Some(elf)) = (*pvh, &kernel.vmlinux) {
        spec.kernel = elf.clone();
        let o = qemu::run(spec)?;
        if o.timed_out || o.console.contains(serial::BEGIN) {
            return Ok(o);
        }
        progress.note(&format!(
            "{label}: PVH boot failed ({}), retrying with the bzImage",
            o.stderr.trim()
        ));
    }
    *pvh = false;
    spec.kernel = kernel.image.clone();
    qemu::run(spec)
}

/// The initramfs for `k` when the guest mounts `filesystems`: `base` itself when no disk file
/// system needs a module (or the kernel has none at hand: then they must be built in, and a
/// note says so), else `base` followed by the modules' archive, written beside it as
/// `initramfs-TAG.cpio` (the kernel unpacks concatenated archives in order).
pub(crate) fn initramfs_with_modules(
    k: &Kernel,
    filesystems: &[FsKind],
    base: &Path,
    tag: &str,
    progress: &dyn Progress,
) -> Result<PathBuf> {
    let disks = disk::disk_filesystems(filesystems);
    if !disks.iter().any(|&f| modules::fs_module(f).is_some()) {
        return Ok(base.to_path_buf());
    }
    let Some(dir) = &k.modules else {
        progress.note(&format!(
            "{}: no modules at hand (--kernel PATH, or a cache entry from before tscope \
             extracted them): {} must be built into the kernel",
            k.origin,
            disks
                .iter()
                .map(|f| f.name())
                .collect::<Vec<_>>()
                .join(", ")
        ));
        return Ok(base.to_path_buf());
    };
    let names = modules::for_filesystems(dir, &disks)?;
    let mut bytes = std::fs::read(base).with_context(|| format!("reading '{}'", base.display()))?;
    bytes.extend(cpio::write(&modules::initramfs_entries(dir, &names)?)?);
    let path = base.with_file_name(format!("initramfs-{tag}.cpio"));
    std::fs::write(&path, bytes).with_context(|| format!("writing '{}'", path.display()))?;
    Ok(path)
}
