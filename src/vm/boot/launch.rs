//! Booting a kernel the same way in every room: the ELF vmlinux (PVH, no self-decompression:
//! seconds saved under TCG) when there is one, else the bzImage; and when qemu refuses the ELF
//! (it exits at once with nothing from the guest on the console), the bzImage at once, with a
//! note, for this boot and every later one of the run.

use super::kernel::Kernel;
use super::qemu::{self, QemuOutcome, QemuSpec};
use super::serial;
use crate::error::Result;
use crate::progress::Progress;

/// Boots `kernel` with `spec` (its `kernel` field is set here). `pvh` says whether to try the
/// ELF first; it turns false, for the caller's later boots, when qemu refuses it.
pub fn boot(
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
