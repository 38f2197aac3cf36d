//! The one way a room boots a guest. A room says what it wants from a boot ([`Room`]): its
//! plan, the file systems its guests mount (their disks), its `clocksource=` and words of its
//! own on the kernel command line, and what to read from the console. [`Pipeline`], which
//! holds the run's [`Session`], does the rest: the kernel's initramfs with the modules the
//! disks need, a fresh disk image for each boot, the plan's archive, the one kernel command
//! line ([`cmdline`]), the one qemu spec ([`qemu_spec`]), the boot itself (PVH first, bounded
//! by `--timeout`: [`launch`]), the console, and the kernel's `CONFIG_HZ` and where it comes
//! from ([`Prepared::hz`]).
//!
//! Every room's entry opens one pipeline (`vm guest`, `vm count`, `vm bench`); `vm bench
//! --count` boots count's room through its own pipeline, in the same session.

use std::path::{Path, PathBuf};

use super::accel::AccelChoice;
use super::clock::Clocksource;
use super::kconfig::{self, HzSource};
use super::kernel::Kernel;
use super::plan::Plan;
use super::qemu::{Accel, QemuOutcome, QemuSpec};
use super::session::{BootConfig, Session};
use super::{disk, launch};
use crate::error::Result;
use crate::progress::Progress;
use crate::trace::FsKind;

/// What a room wants from its boots; the [`Pipeline`] does the rest.
pub(crate) trait Room {
    /// What the room reads from one boot's console.
    type Reading;

    /// The file systems its guests mount: each one on a disk gets a fresh image for every boot,
    /// and the modules it needs go into the kernel's initramfs (their mkfs tools are checked
    /// when the pipeline opens).
    fn filesystems(&self) -> &[FsKind];

    /// The guest's plan of boot `boot` of a kernel (0-based).
    fn plan(&self, boot: u32) -> Plan;

    /// `clocksource=` of boot `boot`; `None`: the kernel's choice.
    fn clocksource(&self, boot: u32) -> Option<Clocksource>;

    /// Kernel parameters of the room's own, before what `--append` adds.
    fn words(&self) -> &'static [&'static str] {
        &[]
    }

    /// Virtual CPUs of each guest.
    fn smp(&self) -> u32 {
        1
    }

    /// What boot `boot` gave, read from what qemu returned (a guest killed at the timeout, a
    /// console cut short or silent included).
    fn read(&self, boot: u32, out: &QemuOutcome) -> Self::Reading;

    /// The guest's coarse-clock resolution in a reading, where it said: the second source of
    /// the kernel's `CONFIG_HZ`.
    fn coarse_res_ns(&self, _reading: &Self::Reading) -> Option<u64> {
        None
    }
}

/// The guest kernel command line of boot `boot` of `room`: the serial console, quiet, no
/// reboot after a panic, `clocksource=` when the room asks one, the room's own words, then what
/// `--append` adds. Only the kernel's own parameters: the guest's work comes in its plan.
pub(crate) fn cmdline<R: Room + ?Sized>(boot: &BootConfig, room: &R, index: u32) -> String {
    let mut s = String::from("console=ttyS0 quiet panic=-1");
    if let Some(c) = room.clocksource(index) {
        s += &format!(" clocksource={c}");
    }
    for w in room.words().iter().copied().chain(boot.append.as_deref()) {
        s.push(' ');
        s += w;
    }
    s
}

/// One guest of `kernel` with `initrd`, the command line `append`, `smp` CPUs and `disks`, as
/// `boot` sets qemu, memory and the time limit, under `accel`.
pub(crate) fn qemu_spec(
    boot: &BootConfig,
    accel: Accel,
    kernel: &Path,
    initrd: PathBuf,
    append: String,
    smp: u32,
    disks: Vec<PathBuf>,
) -> QemuSpec {
    QemuSpec {
        binary: boot.qemu.clone(),
        accel,
        kernel: kernel.to_path_buf(),
        initrd,
        append,
        memory_mb: boot.memory_mb,
        smp,
        timeout: boot.timeout,
        disks,
    }
}

/// A kernel prepared for a room's boots: its initramfs (with the modules its disk file systems
/// need), its disk images of the last boot, whether the next boot tries the ELF first, and its
/// `CONFIG_HZ` as far as known.
#[derive(Debug)]
pub(crate) struct Prepared {
    pub kernel: Kernel,
    /// Whether the next boot tries the ELF vmlinux (PVH) first; every boot does unless the
    /// room turns it off ([`Booted::pvh`] says what the last one booted).
    pub pvh: bool,
    initrd: PathBuf,
    /// Names this kernel's files in the session's scratch, beside another room's.
    tag: String,
    disks: Vec<PathBuf>,
    hz: (u32, HzSource),
}

impl Prepared {
    /// The kernel's `CONFIG_HZ` and where it comes from: its configuration's, else the
    /// coarse-clock resolution a guest of it reported, else [`kconfig::ASSUMED_HZ`]. Decided
    /// here alone, for every room.
    pub(crate) fn hz(&self) -> (u32, HzSource) {
        self.hz
    }

    /// What a boot's guest said of its coarse clock; a boot that said nothing keeps what an
    /// earlier one found.
    fn learn_hz(&mut self, coarse_res_ns: Option<u64>) {
        let (hz, source) = kconfig::kernel_hz(self.kernel.hz, coarse_res_ns);
        if source.known() {
            self.hz = (hz, source);
        }
    }
}

/// One finished boot.
#[derive(Debug)]
pub(crate) struct Booted<T> {
    /// What the room read from it.
    pub reading: T,
    /// What qemu returned: the console, its own messages, the time, whether it was killed.
    pub out: QemuOutcome,
    /// Whether it booted the ELF vmlinux (PVH) rather than the bzImage.
    pub pvh: bool,
    /// The qemu command line it ran with.
    pub qemu_args: Vec<String>,
}

/// The run's session and the boot options it was opened with: every guest of a run boots here.
#[derive(Debug)]
pub(crate) struct Pipeline {
    boot: BootConfig,
    session: Session,
}

impl Pipeline {
    /// Opens the run's session for `room`'s guests (accelerator, cache, mkfs tools, guest
    /// binary, base initramfs, scratch; all gone when the pipeline is dropped).
    pub(crate) fn open<R: Room + ?Sized>(
        boot: &BootConfig,
        room: &R,
        progress: &dyn Progress,
    ) -> Result<Self> {
        Ok(Pipeline {
            boot: boot.clone(),
            session: Session::open(boot, room.filesystems(), progress)?,
        })
    }

    /// The accelerator the session chose.
    pub(crate) fn accel(&self) -> &AccelChoice {
        &self.session.accel
    }

    /// The binary that runs as the guests' `/init`.
    pub(crate) fn guest_bin(&self) -> &Path {
        &self.session.bin.path
    }

    /// Kernel `k` prepared for `room`'s boots; `tag` names its files in the scratch.
    pub(crate) fn prepare<R: Room + ?Sized>(
        &self,
        room: &R,
        k: Kernel,
        tag: &str,
        progress: &dyn Progress,
    ) -> Result<Prepared> {
        let base = self.session.initramfs();
        let initrd = launch::initramfs_with_modules(&k, room.filesystems(), base, tag, progress)?;
        let hz = kconfig::kernel_hz(k.hz, None);
        Ok(Prepared {
            kernel: k,
            pvh: true,
            initrd,
            tag: tag.to_string(),
            disks: Vec::new(),
            hz,
        })
    }

    /// Boot `index` of `p` as `room` asks (`label` names it in the notes): fresh disk images,
    /// the plan, the command line, qemu; then what the room reads, and the HZ it learns.
    pub(crate) fn boot<R: Room + ?Sized>(
        &self,
        room: &R,
        p: &mut Prepared,
        index: u32,
        label: &str,
        progress: &dyn Progress,
    ) -> Result<Booted<R::Reading>> {
        // A fresh image per boot: what the last boot wrote must not change this one.
        for d in p.disks.drain(..) {
            let _ = std::fs::remove_file(d);
        }
        p.disks = disk::disk_filesystems(room.filesystems())
            .into_iter()
            .map(|fs| disk::make_image(self.session.work(), fs, &p.tag))
            .collect::<Result<Vec<_>>>()?;
        let initrd = room.plan(index).initramfs(&p.initrd, &p.tag)?;
        let mut spec = qemu_spec(
            &self.boot,
            self.session.accel.used,
            &p.kernel.image,
            initrd,
            cmdline(&self.boot, room, index),
            room.smp(),
            p.disks.clone(),
        );
        let mut pvh = p.pvh;
        let out = launch::boot(&mut spec, &p.kernel, &mut pvh, label, progress)?;
        let reading = room.read(index, &out);
        p.learn_hz(room.coarse_res_ns(&reading));
        Ok(Booted {
            reading,
            out,
            pvh,
            qemu_args: spec.args(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prepared(config_hz: Option<u32>) -> Prepared {
        let kernel = Kernel {
            image: "/k".into(),
            vmlinux: None,
            origin: "/k".into(),
            extract_note: None,
            package: None,
            release: None,
            hz: config_hz,
            modules: None,
        };
        let hz = kconfig::kernel_hz(kernel.hz, None);
        Prepared {
            kernel,
            pvh: true,
            initrd: "/i".into(),
            tag: "t".into(),
            disks: Vec::new(),
            hz,
        }
    }

    #[test]
    fn the_hz_comes_from_the_config_then_a_guest_and_a_silent_boot_keeps_it() {
        let mut p = prepared(None);
        assert_eq!(p.hz(), (kconfig::ASSUMED_HZ, HzSource::Assumed));
        p.learn_hz(None);
        assert_eq!(p.hz(), (kconfig::ASSUMED_HZ, HzSource::Assumed));
        p.learn_hz(Some(1_000_000));
        assert_eq!(p.hz(), (1000, HzSource::GuestCoarseRes));
        // A later boot that did not say, or said nonsense, keeps what an earlier one found.
        p.learn_hz(None);
        p.learn_hz(Some(0));
        assert_eq!(p.hz(), (1000, HzSource::GuestCoarseRes));
        // The kernel's configuration wins over any guest.
        let mut p = prepared(Some(100));
        p.learn_hz(Some(4_000_000));
        assert_eq!(p.hz(), (100, HzSource::Config));
    }
}
