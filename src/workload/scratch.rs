//! The private scratch directory file workloads work in, removed on every exit path (drop),
//! and the name of the file system it is on.
//!
//! A scratch directory is made in a parent tscope does not own (`/tmp`, `--dir`), through
//! [`crate::dirfd`]: made under a hidden name, locked (`flock` on the open directory, held for
//! the run's life), and only then renamed to `tscope-run.<pid>.<n>`. A killed run's directory
//! is swept by the next one in the same parent, and only when that proves it dead: its lock is
//! free (a live run's is held, whatever PID namespace or host it runs in), its PID is no live
//! process here (a run of a tscope without the lock), it is this user's, and it is on the
//! parent's mount. The sweep unlinks names, never follows a link, and never crosses a mount.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use crate::dirfd::Dir;
use crate::error::Context;

/// `<parent>/tscope-run.<pid>.<n>`, mode 0700, locked while it lives, removed with everything
/// in it on drop.
#[derive(Debug)]
pub struct ScratchDir {
    path: PathBuf,
    parent: Dir,
    name: OsString,
    /// The directory itself, open, its `flock` held: what tells a sweep it is alive.
    lock: Dir,
}

impl ScratchDir {
    pub fn create(parent: &Path) -> crate::error::Result<ScratchDir> {
        let hint = || {
            if parent == std::env::temp_dir() {
                format!(
                    "it is the default, {}: set TMPDIR to a writable directory or pass --dir",
                    super::config::default_dir_origin(parent)
                )
            } else {
                "pick a writable --dir".to_string()
            }
        };
        if parent == std::env::temp_dir() {
            super::config::default_dir()?;
        }
        let dir = Dir::open(parent).with_context(|| {
            format!(
                "opening '{}' for a scratch directory; {}",
                parent.display(),
                hint()
            )
        })?;
        refuse_kernel_fs(&dir).map_err(|why| crate::failure!("{why}"))?;
        sweep_stale_in(&dir);
        let pid = std::process::id();
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let creating = |e: std::io::Error| {
            crate::error::Error::context(
                format!(
                    "creating a scratch directory in '{}'; {}",
                    parent.display(),
                    hint()
                ),
                e,
            )
        };
        // Made and locked under a name the sweep never looks at, so no sweep ever sees it
        // unlocked.
        let mut hidden = None;
        for n in 0..100u32 {
            let name = OsString::from(format!(".tscope-new.{pid}.{}", nanos.wrapping_add(n)));
            match dir.mkdir(&name, 0o700) {
                Ok(()) => {
                    hidden = Some(name);
                    break;
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(creating(e)),
            }
        }
        let Some(hidden) = hidden else {
            crate::fail!("no free scratch directory name in '{}'", parent.display())
        };
        let locked = dir.open_dir(&hidden).and_then(|d| match d.try_lock()? {
            true => Ok(d),
            false => Err(std::io::Error::other("its lock is held by another process")),
        });
        let lock = match locked {
            Ok(d) => d,
            Err(e) => {
                let _ = dir.remove_tree(&hidden);
                return Err(creating(e));
            }
        };
        for n in 0..100u32 {
            let name = OsString::from(format!("tscope-run.{pid}.{}", nanos.wrapping_add(n)));
            match dir.rename_new(&hidden, &name) {
                Ok(()) => {
                    return Ok(ScratchDir {
                        path: parent.join(&name),
                        parent: dir,
                        name,
                        lock,
                    })
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    let _ = dir.remove_tree(&hidden);
                    return Err(creating(e));
                }
            }
        }
        let _ = dir.remove_tree(&hidden);
        crate::fail!("no free scratch directory name in '{}'", parent.display())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// `tscope-run.<pid>.<n>`'s PID.
fn scratch_pid(name: &OsStr) -> Option<u32> {
    name.to_str()
        .and_then(|n| n.strip_prefix("tscope-run."))
        .and_then(|rest| rest.split_once('.'))
        .and_then(|(pid, n)| n.parse::<u32>().ok().and(pid.parse::<u32>().ok()))
}

/// Removes the scratch directories a killed tscope (SIGKILL, a crash) left in `parent`.
pub fn sweep_stale(parent: &Path) {
    if let Ok(dir) = Dir::open(parent) {
        sweep_stale_in(&dir);
    }
}

/// [`sweep_stale`] in an open parent: only a `tscope-run.<pid>.<n>` directory of this user,
/// on the parent's mount, whose PID is no live process here and whose lock is free.
fn sweep_stale_in(parent: &Dir) {
    let (Ok(here), Ok(names)) = (parent.stat_self(), parent.entries()) else {
        return;
    };
    let me = crate::sys::dir::euid();
    for name in names {
        let Some(pid) = scratch_pid(&name) else {
            continue;
        };
        let Ok(st) = parent.stat(&name) else {
            continue;
        };
        let ours = st.is_dir() && st.uid == me;
        let same_mount = st.dev == here.dev && st.mnt_id == here.mnt_id;
        if !ours || !same_mount || pid == std::process::id() || crate::sys::signal::alive(pid) {
            continue;
        }
        let Ok(d) = parent.open_dir(&name) else {
            continue;
        };
        // Held while the tree goes, so two sweeps never remove the same one at once.
        if d.try_lock().unwrap_or(false) {
            let _ = parent.remove_tree(&name);
        }
    }
}

/// The kernel's interface file systems (`include/uapi/linux/magic.h`): not storage, and a
/// `mkdir` there may make a cgroup, a trace instance or nothing tscope can remove.
pub fn kernel_fs_from_magic(magic: i64) -> Option<&'static str> {
    Some(match magic as u64 & 0xffff_ffff {
        0x9fa0 => "proc",
        0x6265_6572 => "sysfs",
        0x0027_e0eb => "cgroup",
        0x6367_7270 => "cgroup2",
        0x6462_6720 => "debugfs",
        0x7472_6163 => "tracefs",
        0x7363_6673 => "securityfs",
        0xcafe_4a11 => "bpf",
        0x6265_6570 => "configfs",
        0x6165_676c => "pstore",
        0xde5e_81e4 => "efivarfs",
        0x1cd1 => "devpts",
        0xf97c_ff8c => "selinuxfs",
        0x6573_5543 => "fusectl",
        0x4249_4e4d => "binfmt_misc",
        0x6e73_6673 => "nsfs",
        _ => return None,
    })
}

/// `Err` naming the file system when `dir` is on a kernel interface file system.
fn refuse_kernel_fs(dir: &Dir) -> Result<(), String> {
    let (magic, _) = dir
        .fs_magic()
        .map_err(|e| format!("'{}': statfs: {e}", dir.path().display()))?;
    match kernel_fs_from_magic(magic) {
        Some(name) => Err(format!(
            "'{}' is on {name} (statfs magic {magic:#x}), a kernel interface, not storage: \
             tscope makes no scratch there; name a directory on a disk or tmpfs",
            dir.path().display()
        )),
        None => Ok(()),
    }
}

/// Checks a scratch parent before anything runs: an existing directory (a link to one only
/// where the link is this user's), on storage, not a kernel interface file system.
pub fn check_parent(dir: &Path) -> Result<(), String> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(format!("'{}' is not a directory", dir.display())),
        Err(e) => return Err(format!("'{}': {e}", dir.display())),
    }
    let d = Dir::open(dir).map_err(|e| format!("'{}': {e}", dir.display()))?;
    refuse_kernel_fs(&d)
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        // Removed while still locked; the lock goes with `self.lock` after this.
        let _ = self.parent.remove_tree(&self.name);
        let _ = &self.lock;
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
    fn kernel_interfaces_are_known_by_their_magic() {
        assert_eq!(kernel_fs_from_magic(0x6367_7270), Some("cgroup2"));
        assert_eq!(kernel_fs_from_magic(0x9fa0), Some("proc"));
        assert_eq!(kernel_fs_from_magic(0x0102_1994), None, "tmpfs is storage");
        let proc = Dir::open(Path::new("/proc")).unwrap();
        assert!(refuse_kernel_fs(&proc).unwrap_err().contains("is on proc"));
        assert!(check_parent(&std::env::temp_dir()).is_ok());
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
