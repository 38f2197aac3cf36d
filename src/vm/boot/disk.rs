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

/// The file systems a guest runs its workloads on: tmpfs (no disk) and each of [`DISKS`]. The
/// command line's `--fs` values convert into these, and its test holds them to this list.
#[cfg(test)]
pub(crate) const FILESYSTEMS: [FsKind; 4] =
    [FsKind::Tmpfs, FsKind::Ext4, FsKind::Xfs, FsKind::Btrfs];

/// What a guest's disk of one file system takes: the image made on the host, and the
/// superblock the guest finds it by.
struct Disk {
    fs: FsKind,
    /// The Debian package with `mkfs.FS`, for the error that says what to install.
    mkfs_package: &'static str,
    /// The arguments of `mkfs.FS` for an image file: quiet, and forced (a regular file, not a
    /// block device: `-F` for mke2fs; `-f` overwrites for mkfs.xfs and mkfs.btrfs); the
    /// defaults otherwise (Debian's mke2fs.conf; xfsprogs' and btrfs-progs' built-in defaults).
    mkfs_args: &'static [&'static str],
    /// Size of the image: room for the workloads' files (at most a page each, one at a time)
    /// and the journal. The files are sparse: ext4 and btrfs write under 5 MiB, xfs its 64 MiB
    /// log.
    image_bytes: u64,
    /// The superblock's magic and its offset from the start of the disk.
    magic_at: usize,
    magic: &'static [u8],
}

/// Every file system a guest's disk can hold, one row each. xfs needs 300 MiB (`mkfs.xfs`
/// since xfsprogs 5.19 refuses less: "Filesystem must be larger than 300MB"). The magics:
/// ext4 `s_magic` 0xEF53 at 1024 + 0x38 (little-endian), xfs `sb_magicnum` "XFSB" at 0,
/// btrfs "_BHRfS_M" at 64 KiB + 0x40.
const DISKS: [Disk; 3] = [
    Disk {
        fs: FsKind::Ext4,
        mkfs_package: "e2fsprogs",
        mkfs_args: &["-q", "-F"],
        image_bytes: 128 << 20,
        magic_at: 1024 + 0x38,
        magic: &[0x53, 0xef],
    },
    Disk {
        fs: FsKind::Xfs,
        mkfs_package: "xfsprogs",
        mkfs_args: &["-q", "-f"],
        image_bytes: 300 << 20,
        magic_at: 0,
        magic: b"XFSB",
    },
    Disk {
        fs: FsKind::Btrfs,
        mkfs_package: "btrfs-progs",
        mkfs_args: &["-q", "-f"],
        image_bytes: 128 << 20,
        magic_at: 0x10040,
        magic: b"_BHRfS_M",
    },
];

/// The disk row of `fs`; `None` for a file system with no disk (tmpfs).
fn disk(fs: FsKind) -> Option<&'static Disk> {
    DISKS.iter().find(|d| d.fs == fs)
}

/// Checks that `mkfs.FS` runs for every disk file system of `filesystems`; the error names the
/// package to install. Called before any guest boots.
pub(crate) fn check_tools(filesystems: &[FsKind]) -> Result<()> {
    for d in filesystems.iter().filter_map(|&fs| disk(fs)) {
        let (fs, package) = (d.fs, d.mkfs_package);
        let mkfs = format!("mkfs.{fs}");
        let found = Command::new(&mkfs)
            .arg("-V")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok();
        crate::ensure!(
            found,
            "--fs {fs} needs {mkfs}, which is not installed: install {package} (apt-get install \
             {package})"
        );
    }
    Ok(())
}

/// Whether `fs` needs a disk image (every file system of [`DISKS`]).
pub(crate) fn needs_disk(fs: FsKind) -> bool {
    disk(fs).is_some()
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

/// Whether `head` (a disk's first bytes) holds `fs`'s superblock magic ([`Disk::magic`]).
pub(crate) fn has_magic(fs: FsKind, head: &[u8]) -> bool {
    disk(fs).is_some_and(|d| head.get(d.magic_at..d.magic_at + d.magic.len()) == Some(d.magic))
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
    let Some(d) = disk(fs) else {
        crate::fail!("{fs} lives on no disk: there is no image to make");
    };
    let path = dir.join(format!("{fs}-{tag}.img"));
    let f = std::fs::File::create(&path)
        .with_context(|| format!("creating image '{}'", path.display()))?;
    f.set_len(d.image_bytes)
        .with_context(|| format!("sizing image '{}'", path.display()))?;
    drop(f);
    let mkfs = format!("mkfs.{fs}");
    let log = dir.join(format!("{fs}-{tag}.mkfs.log"));
    let log_file =
        std::fs::File::create(&log).with_context(|| format!("creating '{}'", log.display()))?;
    let mut cmd = Command::new(&mkfs);
    cmd.args(d.mkfs_args)
        .arg(&path)
        .stdout(Stdio::null())
        .stderr(log_file);
    let st = child::status(&mut cmd, &mkfs)
        .with_context(|| format!("{mkfs} (install {})", d.mkfs_package))?;
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
            disk_filesystems(&FILESYSTEMS),
            vec![FsKind::Ext4, FsKind::Xfs, FsKind::Btrfs]
        );
        assert_eq!(guest_device(0), "/dev/nvme0n1");
        assert!(!needs_disk(FsKind::Tmpfs));
        assert_eq!(DISKS.map(|d| d.fs), FILESYSTEMS[1..]);
        for d in &DISKS {
            assert!(d.magic_at + d.magic.len() <= MAGIC_BYTES, "{}", d.fs);
        }
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
        let d = |fs| disk(fs).unwrap();
        assert_eq!(d(FsKind::Ext4).mkfs_args, ["-q", "-F"]);
        assert_eq!(d(FsKind::Xfs).mkfs_args, ["-q", "-f"]);
        assert_eq!(d(FsKind::Btrfs).mkfs_args, ["-q", "-f"]);
        assert_eq!(d(FsKind::Xfs).mkfs_package, "xfsprogs");
        assert_eq!(d(FsKind::Btrfs).mkfs_package, "btrfs-progs");
        assert_eq!(d(FsKind::Xfs).image_bytes, 300 << 20);
        assert_eq!(d(FsKind::Btrfs).image_bytes, 128 << 20);
        let none = [FsKind::Tmpfs];
        assert!(check_tools(&none).is_ok());
        assert!(make_image(Path::new("/nonexistent"), FsKind::Tmpfs, "t").is_err());
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
