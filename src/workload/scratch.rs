//! The private scratch directory file workloads work in, removed on every exit path (drop),
//! and the name of the file system it is on.

use std::path::{Path, PathBuf};

use crate::error::Context;

/// `<parent>/tscope-run.<pid>.<n>`, mode 0700, removed with everything in it on drop.
#[derive(Debug)]
pub struct ScratchDir {
    path: PathBuf,
}

impl ScratchDir {
    pub fn create(parent: &Path) -> crate::error::Result<ScratchDir> {
        use std::os::unix::fs::DirBuilderExt;
        let pid = std::process::id();
        sweep_stale(parent);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        for n in 0..100u32 {
            let path = parent.join(format!("tscope-run.{pid}.{}", nanos.wrapping_add(n)));
            match std::fs::DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => return Ok(ScratchDir { path }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    let hint = if parent == std::env::temp_dir() {
                        format!(
                            "it is the default, {}: set TMPDIR to a writable directory or \
                             pass --dir",
                            super::config::default_dir_origin(parent)
                        )
                    } else {
                        "pick a writable --dir".to_string()
                    };
                    return Err(e).with_context(|| {
                        format!(
                            "creating a scratch directory in '{}'; {hint}",
                            parent.display()
                        )
                    });
                }
            }
        }
        crate::fail!("no free scratch directory name in '{}'", parent.display())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Removes the scratch directories a killed tscope (SIGKILL, a crash) left in `parent`:
/// `tscope-run.<pid>.<n>` whose process is gone and that belong to this user.
pub fn sweep_stale(parent: &Path) {
    use std::os::unix::fs::MetadataExt;
    let Ok(me) = std::fs::metadata("/proc/self").map(|m| m.uid()) else {
        return;
    };
    let Ok(dir) = std::fs::read_dir(parent) else {
        return;
    };
    for e in dir.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("tscope-run."))
            .and_then(|rest| rest.split_once('.'))
            .and_then(|(pid, n)| n.parse::<u32>().ok().and(pid.parse::<u32>().ok()))
        else {
            continue;
        };
        let ours = e
            .metadata()
            .is_ok_and(|m| m.is_dir() && m.uid() == me && !e.path().is_symlink());
        if ours && pid != std::process::id() && !crate::sys::signal::alive(pid) {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Name of a file system from its `statfs` magic number (`include/uapi/linux/magic.h`).
pub fn fs_name_from_magic(magic: i64) -> Option<&'static str> {
    Some(match magic as u64 & 0xffff_ffff {
        0xEF53 => "ext4",
        0x0102_1994 => "tmpfs",
        0x5846_5342 => "xfs",
        0x9123_683E => "btrfs",
        0x6969 => "nfs",
        0x794C_7630 => "overlay",
        0x2FC1_2FC1 => "zfs",
        0xF2F5_2010 => "f2fs",
        0x5346_544E => "ntfs",
        0x4d44 => "vfat",
        _ => return None,
    })
}

/// The file system a path is on: its type and mount options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FsInfo {
    pub fs_type: String,
    /// Per-mount and super-block options from `/proc/self/mountinfo` (`rw,relatime,discard`).
    pub options: Vec<String>,
}

/// The mount's file system type for `path` from `/proc/self/mountinfo` (longest matching
/// mount point), else from the `statfs` magic, else `unknown`.
pub fn fs_info(path: &Path) -> FsInfo {
    let canon = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    if let Ok(text) = std::fs::read_to_string("/proc/self/mountinfo") {
        if let Some(t) = fs_from_mountinfo(&text, &canon) {
            return t;
        }
    }
    let c = std::ffi::CString::new(canon.as_os_str().as_encoded_bytes()).ok();
    let name = c
        .and_then(|c| crate::sys::fs::statfs_magic(&c).ok())
        .and_then(fs_name_from_magic)
        .unwrap_or("unknown");
    FsInfo {
        fs_type: name.to_string(),
        options: Vec::new(),
    }
}

/// The mount containing `path` in mountinfo text (pure; unit-tested).
pub fn fs_from_mountinfo(text: &str, path: &Path) -> Option<FsInfo> {
    let mut best: Option<(usize, FsInfo)> = None;
    for line in text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let Some(dash) = fields.iter().position(|f| *f == "-") else {
            continue;
        };
        let (Some(mnt), Some(fstype)) = (fields.get(4), fields.get(dash + 1)) else {
            continue;
        };
        let mnt = mnt.replace("\\040", " ");
        if path.starts_with(&mnt) && best.as_ref().is_none_or(|(l, _)| mnt.len() >= *l) {
            let mut options: Vec<String> = Vec::new();
            for o in [fields.get(5), fields.get(dash + 3)].into_iter().flatten() {
                for x in o.split(',') {
                    if !options.iter().any(|y| y == x) {
                        options.push(x.to_string());
                    }
                }
            }
            let info = FsInfo {
                fs_type: fstype.to_string(),
                options,
            };
            best = Some((mnt.len(), info));
        }
    }
    best.map(|(_, t)| t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_mount_point_wins() {
        let text = "22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n\
                    30 22 0:26 / /dev/shm rw shared:2 - tmpfs tmpfs rw\n\
                    31 22 0:27 / /dev rw shared:3 - devtmpfs udev rw\n";
        let t = |p: &str| fs_from_mountinfo(text, Path::new(p)).map(|i| i.fs_type);
        assert_eq!(t("/dev/shm/x").as_deref(), Some("tmpfs"));
        assert_eq!(t("/var/tmp").as_deref(), Some("ext4"));
        assert_eq!(t("/dev/null").as_deref(), Some("devtmpfs"));
        assert_eq!(t("/dev/shmx").as_deref(), Some("devtmpfs"));
        let root = fs_from_mountinfo(text, Path::new("/var/tmp")).unwrap();
        assert_eq!(root.options, ["rw", "relatime"]);
        let disc = "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard,resv_strict\n";
        let o = fs_from_mountinfo(disc, Path::new("/x")).unwrap().options;
        assert_eq!(o, ["rw", "relatime", "discard", "resv_strict"]);
    }

    #[test]
    fn magic_numbers() {
        assert_eq!(fs_name_from_magic(0xEF53), Some("ext4"));
        assert_eq!(fs_name_from_magic(0x0102_1994), Some("tmpfs"));
        assert_eq!(fs_name_from_magic(1), None);
    }

    #[test]
    fn stale_scratch_of_a_dead_pid_is_swept() {
        let parent = tempfile::tempdir().unwrap();
        // PID 2^22 + 1 is above the kernel's pid_max limit (4194304): never a live process.
        let stale = parent.path().join("tscope-run.4194305.7");
        std::fs::create_dir(&stale).unwrap();
        std::fs::write(stale.join("f"), b"x").unwrap();
        let live = parent
            .path()
            .join(format!("tscope-run.{}.1", std::process::id()));
        std::fs::create_dir(&live).unwrap();
        let other = parent.path().join("tscope-run.4194305.notanumber");
        std::fs::create_dir(&other).unwrap();
        let d = ScratchDir::create(parent.path()).unwrap();
        assert!(!stale.exists());
        assert!(live.exists() && other.exists());
        drop(d);
    }

    #[test]
    fn scratch_dir_is_removed_on_drop() {
        let parent = std::env::temp_dir();
        let d = ScratchDir::create(&parent).unwrap();
        let p = d.path().to_path_buf();
        std::fs::write(p.join("f"), b"x").unwrap();
        drop(d);
        assert!(!p.exists());
    }
}
