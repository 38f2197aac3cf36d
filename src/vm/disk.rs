//! Disk file systems for `vm count`: an image made on the host (`mkfs.ext4` on a sparse file in
//! the run's scratch directory, removed with it), attached as an NVMe disk and mounted by the
//! guest.
//!
//! NVMe rather than virtio-blk or a loop device: Debian's cloud kernels build
//! `CONFIG_BLK_DEV_NVME=y` (6.1, 6.12 and 7.2 alike) but `CONFIG_VIRTIO_BLK=m` and
//! `CONFIG_BLK_DEV_LOOP=m` (and, on 6.1, the virtio core as modules too), and they build
//! `CONFIG_EXT4_FS=y`, so an ext4 disk needs no kernel module in the guest at all.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::child;
use crate::error::{Context, Result};

/// The file systems `vm count --fs` can run on: tmpfs (no disk) and those a disk image is made
/// for.
pub const FILESYSTEMS: [&str; 2] = ["tmpfs", "ext4"];

/// Size of each image: room for the workloads' files (at most a page each, one at a time) and
/// ext4's journal.
pub const IMAGE_BYTES: u64 = 128 << 20;

/// Whether `fs` needs a disk image (every supported file system but tmpfs).
pub fn needs_disk(fs: &str) -> bool {
    fs != "tmpfs"
}

/// The guest's device for the `index`-th disk ([`super::qemu::QemuSpec::disks`] order).
pub fn guest_device(index: usize) -> String {
    format!("/dev/nvme{index}n1")
}

/// The disk file systems of `filesystems`, in order: the i-th is the guest's
/// [`guest_device`]`(i)`.
pub fn disk_filesystems(filesystems: &[String]) -> Vec<&str> {
    filesystems
        .iter()
        .map(String::as_str)
        .filter(|f| needs_disk(f))
        .collect()
}

/// Makes a fresh `fs` image named after `tag` in `dir` (a sparse file, then `mkfs.FS -q`).
pub fn make_image(dir: &Path, fs: &str, tag: &str) -> Result<PathBuf> {
    let path = dir.join(format!("{fs}-{tag}.img"));
    let f = std::fs::File::create(&path)
        .with_context(|| format!("creating image '{}'", path.display()))?;
    f.set_len(IMAGE_BYTES)
        .with_context(|| format!("sizing image '{}'", path.display()))?;
    drop(f);
    let mkfs = format!("mkfs.{fs}");
    let mut cmd = Command::new(&mkfs);
    // -F: a regular file, not a block device; the defaults otherwise (Debian's mke2fs.conf).
    cmd.args(["-q", "-F"])
        .arg(&path)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let st = child::status(&mut cmd, &mkfs)
        .with_context(|| format!("{mkfs} (install e2fsprogs for ext4)"))?;
    crate::ensure!(st.success(), "{mkfs} '{}' failed ({st})", path.display());
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disks_follow_the_fs_order_without_tmpfs() {
        let fs: Vec<String> = ["tmpfs", "ext4"].map(String::from).to_vec();
        assert_eq!(disk_filesystems(&fs), vec!["ext4"]);
        assert_eq!(guest_device(0), "/dev/nvme0n1");
        assert!(!needs_disk("tmpfs"));
    }

    #[test]
    fn makes_an_ext4_image() {
        if crate::skip::without("mkfs.ext4") {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let img = make_image(dir.path(), "ext4", "t").unwrap();
        let bytes = std::fs::read(&img).unwrap();
        // The ext4 superblock at 1024: s_magic 0xEF53 at offset 0x38.
        assert_eq!(&bytes[1024 + 0x38..1024 + 0x3a], &[0x53, 0xef]);
    }
}

#[cfg(test)]
mod qemu_args {
    use crate::vm::qemu::{Accel, QemuSpec};
    use std::time::Duration;

    #[test]
    fn each_disk_is_an_nvme_controller_in_order() {
        let spec = QemuSpec {
            binary: "qemu-system-x86_64".into(),
            accel: Accel::Tcg,
            kernel: "/k".into(),
            initrd: "/i".into(),
            append: String::new(),
            memory_mb: 256,
            smp: 1,
            timeout: Duration::from_secs(1),
            disks: vec!["/s/ext4-0.img".into(), "/s/a,b.img".into()],
        };
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
