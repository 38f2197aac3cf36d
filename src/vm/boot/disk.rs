//! Disk file systems for `vm count`: an image made on the host (`mkfs.FS` on a sparse file in
//! the run's scratch directory, removed with it), attached as an NVMe disk and mounted by the
//! guest.
//!
//! NVMe rather than virtio-blk or a loop device: Debian's cloud kernels build
//! `CONFIG_BLK_DEV_NVME=y` (6.1, 6.12 and 7.2 alike) but `CONFIG_VIRTIO_BLK=m` and
//! `CONFIG_BLK_DEV_LOOP=m` (and, on 6.1, the virtio core as modules too), and they build
//! `CONFIG_EXT4_FS=y`, so an ext4 disk needs no kernel module in the guest at all. xfs and
//! btrfs are modules there (`=m`): the guest loads them first ([`crate::vm::boot::modules`]).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::error::{Context, Result};
use crate::trace::FsKind;
use crate::vm::boot::child;

/// The file systems a guest can run on: tmpfs (no disk) and those a disk image is made for.
/// The command line's `--fs` values convert into these, and its
/// test holds it to [`FILESYSTEMS`].
#[cfg(test)]
pub(crate) const KINDS: [FsKind; 4] = [FsKind::Tmpfs, FsKind::Ext4, FsKind::Xfs, FsKind::Btrfs];

/// [`KINDS`] by name.
#[cfg(test)]
pub(crate) const FILESYSTEMS: [&str; 4] = ["tmpfs", "ext4", "xfs", "btrfs"];

/// Size of each image: room for the workloads' files (at most a page each, one at a time) and
/// the journal; xfs needs 300 MiB (`mkfs.xfs` since xfsprogs 5.19 refuses less: "Filesystem
/// must be larger than 300MB"). The files are sparse: ext4 and btrfs write under 5 MiB, xfs
/// its 64 MiB log.
pub(crate) fn image_bytes(fs: FsKind) -> u64 {
    if fs == FsKind::Xfs {
        300 << 20
    } else {
        128 << 20
    }
}

/// The Debian package with `mkfs.FS`, for the error that says what to install.
pub(crate) fn mkfs_package(fs: FsKind) -> &'static str {
    match fs {
        FsKind::Xfs => "xfsprogs",
        FsKind::Btrfs => "btrfs-progs",
        _ => "e2fsprogs",
    }
}

/// The arguments of `mkfs.FS` for an image file: quiet, and forced (a regular file, not a block
/// device: `-F` for mke2fs; `-f` overwrites for mkfs.xfs and mkfs.btrfs); the defaults
/// otherwise (Debian's mke2fs.conf; xfsprogs' and btrfs-progs' built-in defaults).
pub(crate) fn mkfs_args(fs: FsKind) -> &'static [&'static str] {
    match fs {
        FsKind::Ext4 => &["-q", "-F"],
        _ => &["-q", "-f"],
    }
}

/// Checks that `mkfs.FS` runs for every disk file system of `filesystems`; the error names the
/// package to install. Called before any guest boots.
pub(crate) fn check_tools(filesystems: &[FsKind]) -> Result<()> {
    for fs in disk_filesystems(filesystems) {
        let mkfs = format!("mkfs.{fs}");
        let found = Command::new(&mkfs)
            .arg("-V")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok();
        crate::ensure!(
            found,
            "--fs {fs} needs {mkfs}, which is not installed: install {} (apt-get install {})",
            mkfs_package(fs),
            mkfs_package(fs)
        );
    }
    Ok(())
}

/// Whether `fs` needs a disk image (every supported file system but tmpfs).
pub(crate) fn needs_disk(fs: FsKind) -> bool {
    fs != FsKind::Tmpfs
}

/// The guest's device for the `index`-th disk ([`crate::vm::boot::qemu::QemuSpec::disks`] order) when
/// the controllers are probed in order. They need not be: the NVMe driver probes
/// asynchronously, so with two disks `nvme0n1` may be the second. The guest therefore finds
/// each file system's disk by its superblock ([`has_magic`]).
pub(crate) fn guest_device(index: usize) -> String {
    format!("/dev/nvme{index}n1")
}

/// How many bytes from the start of a disk [`has_magic`] needs (btrfs's magic ends there).
pub(crate) const MAGIC_BYTES: usize = 0x10048;

/// Whether `head` (a disk's first bytes) holds `fs`'s superblock magic: ext4 `s_magic` 0xEF53
/// at 1024 + 0x38 (little-endian), xfs `sb_magicnum` "XFSB" at 0, btrfs "_BHRfS_M" at
/// 64 KiB + 0x40.
pub(crate) fn has_magic(fs: FsKind, head: &[u8]) -> bool {
    let at = |o: usize, m: &[u8]| head.get(o..o + m.len()) == Some(m);
    match fs {
        FsKind::Ext4 => at(1024 + 0x38, &[0x53, 0xef]),
        FsKind::Xfs => at(0, b"XFSB"),
        FsKind::Btrfs => at(0x10040, b"_BHRfS_M"),
        _ => false,
    }
}

/// The disk file systems of `filesystems`, in order: the i-th is the guest's
/// [`guest_device`]`(i)`.
pub(crate) fn disk_filesystems(filesystems: &[FsKind]) -> Vec<FsKind> {
    filesystems
        .iter()
        .copied()
        .filter(|&f| needs_disk(f))
        .collect()
}

/// Makes a fresh `fs` image named after `tag` in `dir` (a sparse file, then `mkfs.FS -q`).
pub(crate) fn make_image(dir: &Path, fs: FsKind, tag: &str) -> Result<PathBuf> {
    let path = dir.join(format!("{fs}-{tag}.img"));
    let f = std::fs::File::create(&path)
        .with_context(|| format!("creating image '{}'", path.display()))?;
    f.set_len(image_bytes(fs))
        .with_context(|| format!("sizing image '{}'", path.display()))?;
    drop(f);
    let mkfs = format!("mkfs.{fs}");
    let log = dir.join(format!("{fs}-{tag}.mkfs.log"));
    let log_file =
        std::fs::File::create(&log).with_context(|| format!("creating '{}'", log.display()))?;
    let mut cmd = Command::new(&mkfs);
    cmd.args(mkfs_args(fs))
        .arg(&path)
        .stdout(Stdio::null())
        .stderr(log_file);
    let st = child::status(&mut cmd, &mkfs)
        .with_context(|| format!("{mkfs} (install {})", mkfs_package(fs)))?;
    let said = std::fs::read_to_string(&log).unwrap_or_default();
    let _ = std::fs::remove_file(&log);
    crate::ensure!(
        st.success(),
        "{mkfs} '{}' failed ({st}): {}",
        path.display(),
        said.trim()
    );
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disks_follow_the_fs_order_without_tmpfs() {
        assert_eq!(
            disk_filesystems(&KINDS),
            vec![FsKind::Ext4, FsKind::Xfs, FsKind::Btrfs]
        );
        assert_eq!(guest_device(0), "/dev/nvme0n1");
        assert!(!needs_disk(FsKind::Tmpfs));
        assert_eq!(KINDS.map(FsKind::name), FILESYSTEMS);
    }

    #[test]
    fn makes_an_ext4_image() {
        if crate::skip::without("mkfs.ext4") {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let img = make_image(dir.path(), FsKind::Ext4, "t").unwrap();
        let bytes = std::fs::read(&img).unwrap();
        // The ext4 superblock at 1024: s_magic 0xEF53 at offset 0x38.
        assert_eq!(&bytes[1024 + 0x38..1024 + 0x3a], &[0x53, 0xef]);
        assert!(has_magic(FsKind::Ext4, &bytes[..MAGIC_BYTES]));
        assert!(!has_magic(FsKind::Xfs, &bytes) && !has_magic(FsKind::Btrfs, &bytes));
    }

    #[test]
    fn makes_an_xfs_image() {
        if crate::skip::without("mkfs.xfs") {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let img = make_image(dir.path(), FsKind::Xfs, "t").unwrap();
        let bytes = std::fs::read(&img).unwrap();
        assert_eq!(bytes.len() as u64, 300 << 20);
        // The xfs superblock at 0: sb_magicnum "XFSB" (XFS_SB_MAGIC 0x58465342, big-endian).
        assert_eq!(&bytes[..4], b"XFSB");
        assert!(has_magic(FsKind::Xfs, &bytes[..MAGIC_BYTES]));
        assert!(!has_magic(FsKind::Ext4, &bytes) && !has_magic(FsKind::Btrfs, &bytes));
    }

    #[test]
    fn makes_a_btrfs_image() {
        if crate::skip::without("mkfs.btrfs") {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let img = make_image(dir.path(), FsKind::Btrfs, "t").unwrap();
        let bytes = std::fs::read(&img).unwrap();
        // The btrfs superblock at 64 KiB: magic "_BHRfS_M" at offset 0x40.
        assert_eq!(&bytes[0x10040..0x10048], b"_BHRfS_M");
        assert!(has_magic(FsKind::Btrfs, &bytes[..MAGIC_BYTES]));
        assert!(!has_magic(FsKind::Ext4, &bytes) && !has_magic(FsKind::Xfs, &bytes));
    }

    #[test]
    fn mkfs_arguments_and_packages() {
        assert_eq!(mkfs_args(FsKind::Ext4), ["-q", "-F"]);
        assert_eq!(mkfs_args(FsKind::Xfs), ["-q", "-f"]);
        assert_eq!(mkfs_args(FsKind::Btrfs), ["-q", "-f"]);
        assert_eq!(mkfs_package(FsKind::Xfs), "xfsprogs");
        assert_eq!(mkfs_package(FsKind::Btrfs), "btrfs-progs");
        assert_eq!(image_bytes(FsKind::Xfs), 300 << 20);
        assert_eq!(image_bytes(FsKind::Btrfs), 128 << 20);
        let none = [FsKind::Tmpfs];
        assert!(check_tools(&none).is_ok());
    }
}

#[cfg(test)]
mod qemu_args {
    use crate::vm::boot::pipeline::qemu_spec;
    use crate::vm::boot::qemu::Accel;
    use crate::vm::boot::session::BootConfig;

    #[test]
    fn each_disk_is_an_nvme_controller_in_order() {
        let spec = qemu_spec(
            &BootConfig::new(1),
            Accel::Tcg,
            "/k".as_ref(),
            "/i".into(),
            String::new(),
            1,
            vec!["/s/ext4-0.img".into(), "/s/a,b.img".into()],
        );
        let a = spec.args().join(" ");
        assert!(
            a.contains(
                "-drive file=/s/ext4-0.img,if=none,id=disk0,format=raw \
                 -device nvme,drive=disk0,serial=tscope0"
            ),
            "{a}"
        );
        assert!(a.contains("file=/s/a,,b.img,if=none,id=disk1"), "{a}");
    }
}

/// In the guest: the device holding `fs`'s image. Waits up to 20 s for all `disks` NVMe
/// namespaces (the driver probes controllers and scans namespaces asynchronously, so they
/// appear after `/init` starts, and not necessarily in `-device` order), then picks the one
/// whose superblock is `fs`'s ([`has_magic`]; each file system has one disk).
pub(crate) fn find_in_guest(fs: FsKind, disks: usize) -> Result<String> {
    let started = std::time::Instant::now();
    loop {
        let devices: Vec<String> = (0..disks.max(1) + 4)
            .map(guest_device)
            .filter(|d| Path::new(d).exists())
            .collect();
        if devices.len() >= disks || started.elapsed().as_secs() >= 20 {
            for d in &devices {
                let mut head = vec![0u8; MAGIC_BYTES];
                let read = std::fs::File::open(d)
                    .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head));
                if read.is_ok() && has_magic(fs, &head) {
                    return Ok(d.clone());
                }
            }
            crate::fail!(
                "no NVMe disk with a {fs} superblock within 20 s (found: {})",
                if devices.is_empty() {
                    "none".into()
                } else {
                    devices.join(", ")
                }
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}
