//! One boot session, shared by every room that boots guests (`vm guest`, `vm count`, `vm
//! bench`): the accelerator chosen, the cache checked (an unusable one fails before any
//! build), the mkfs tools of the filesystems asked for, the guest binary found, what killed
//! runs left swept, and a scratch directory holding the base initramfs (the guest binary as
//! `/init`), removed when the session is dropped, however the run ends. It is opened in one
//! place, by the [`super::pipeline::Pipeline`] that boots every guest of the run.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::accel::{self, AccelChoice, RequestedAccel};
use super::binary::{self, GuestBinary};
use super::{disk, kernel, scratch};
use crate::error::{Context, Result};
use crate::progress::Progress;
use crate::trace::FsKind;

/// What every boot command takes: how guests are booted, whatever they run.
#[derive(Debug, Clone)]
pub struct BootConfig {
    pub accel: RequestedAccel,
    /// Wall-clock limit of each guest.
    pub timeout: Duration,
    /// The binary that runs as the guest's `/init` (`None`: this tscope).
    pub guest_bin: Option<PathBuf>,
    pub qemu: String,
    pub memory_mb: u32,
    /// Extra words for the guest kernel command line (`--append`).
    pub append: Option<String>,
}

impl BootConfig {
    /// KVM if usable else TCG, `timeout_s` per guest, this tscope as `/init`, 256 MiB.
    pub(crate) fn new(timeout_s: u64) -> Self {
        BootConfig {
            accel: RequestedAccel::Auto,
            timeout: Duration::from_secs(timeout_s),
            guest_bin: None,
            qemu: "qemu-system-x86_64".into(),
            memory_mb: 256,
            append: None,
        }
    }
}

/// An open boot session; its scratch directory goes when it is dropped.
#[derive(Debug)]
pub(crate) struct Session {
    pub accel: AccelChoice,
    pub bin: GuestBinary,
    work: PathBuf,
    initramfs: PathBuf,
}

impl Session {
    /// Opens a session for guests that mount `filesystems` (their mkfs tools are checked).
    pub(crate) fn open(
        boot: &BootConfig,
        filesystems: &[FsKind],
        progress: &dyn Progress,
    ) -> Result<Self> {
        let host = crate::detect::host::gather();
        let accel = accel::choose_accel(boot.accel, &host.kvm)?;
        if let Some(n) = &accel.note {
            progress.note(n);
        }
        if accel.emulation {
            progress.note(&crate::warnings::Warning::TcgEmulation.to_string());
        }
        // The cache first: an unusable one (HOME empty, read-only) fails before any build.
        let cache = kernel::cache_dir()?;
        disk::check_tools(filesystems)?;
        let bin = binary::guest_binary(boot.guest_bin.as_deref())?;
        scratch::sweep_stale(&cache);
        let work = scratch::work_dir(&cache)?;
        let session = Session {
            accel,
            bin,
            initramfs: work.join("initramfs.cpio"),
            work,
        };
        std::fs::write(&session.initramfs, binary::initramfs(&session.bin)?)
            .with_context(|| format!("writing '{}'", session.initramfs.display()))?;
        Ok(session)
    }

    /// The scratch directory (disk images, each boot's initramfs).
    pub(crate) fn work(&self) -> &Path {
        &self.work
    }

    /// The base initramfs: the guest binary as `/init`, before modules and a plan are added.
    pub(crate) fn initramfs(&self) -> &Path {
        &self.initramfs
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.work);
    }
}
