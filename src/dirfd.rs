//! Creating, writing and removing files under a directory tscope does not own: the salvage
//! directory of `fleet check`, the fleet store's directory (the current one, by default), the
//! parents of scratch directories (`/tmp`, `--dir`).
//!
//! tscope often runs as root in directories others may write (`/tmp`, a shared mount). Anyone
//! who can write there can plant a symbolic link under a name tscope is about to use, and make
//! root write where they pointed. So every such write goes through a [`Dir`]: the directory is
//! opened once, and each name is resolved relative to that descriptor (`openat`, `mkdirat`,
//! `unlinkat`, `renameat2`), with the rules:
//!
//! - a new file is created with `O_CREAT | O_EXCL | O_NOFOLLOW`: a name that already exists
//!   (a file, a link, dangling or not) is an error, never written through;
//! - replacing a file is explicit ([`Dir::replace`]): a new file under a temporary name,
//!   renamed over the old name, so a link there is replaced, never followed;
//! - a directory is entered with `O_DIRECTORY | O_NOFOLLOW`;
//! - removing a tree ([`Dir::remove_tree`]) unlinks names (never what a link points at) and
//!   stays on the mount it started on: a mount point, bind mounts on the same device
//!   included, is left alone with everything under it;
//! - the directory itself may be reached through a symbolic link only when the link belongs
//!   to the user tscope runs as (the rule of the kernel's `fs.protected_symlinks`, kept where a
//!   host turned that off).
//!
//! All system calls are in [`crate::sys::dir`]; `export::file` (`-o`, `--out`) keeps its own
//! rules for the paths a user names as outputs.

use std::ffi::{CString, OsStr, OsString};
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use crate::sys::dir as sys;
pub use crate::sys::dir::Stat;

/// A directory held open by descriptor; names below it are resolved against it.
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
    path: PathBuf,
}

fn cstr(name: &OsStr) -> io::Result<CString> {
    CString::new(name.as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a name holding a NUL byte"))
}

/// One name directly in a directory: not empty, `.`, `..`, and without a slash.
fn entry_name(name: &OsStr) -> io::Result<CString> {
    let b = name.as_bytes();
    if b.is_empty() || b == b"." || b == b".." || b.contains(&b'/') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("'{}' is not a name in a directory", name.to_string_lossy()),
        ));
    }
    cstr(name)
}

/// Why the link at `path` may not be followed, if it may not: it belongs to another user.
/// `Ok(None)` for anything that is not such a link.
pub fn foreign_link(path: &Path) -> io::Result<Option<String>> {
    let c = cstr(path.as_os_str())?;
    let st = sys::statx(None, &c)?;
    if st.is_symlink() && st.uid != sys::euid() {
        return Ok(Some(format!(
            "it is a symbolic link owned by uid {} (not this user): tscope does not follow \
             another user's link; name the file or directory itself",
            st.uid
        )));
    }
    Ok(None)
}

impl Dir {
    /// Opens the directory at `path` (a link to it only where the link is this user's).
    pub fn open(path: &Path) -> io::Result<Dir> {
        if let Some(why) = foreign_link(path)? {
            return Err(io::Error::new(io::ErrorKind::PermissionDenied, why));
        }
        let c = cstr(path.as_os_str())?;
        let fd = sys::openat(None, &c, libc::O_RDONLY | libc::O_DIRECTORY, 0)?;
        Ok(Dir {
            fd,
            path: path.to_path_buf(),
        })
    }

    /// Opens the directory holding `path` and returns it with `path`'s last name.
    pub fn parent_of(path: &Path) -> io::Result<(Dir, OsString)> {
        let name = path.file_name().ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("'{}' does not end in a file name", path.display()),
            )
        })?;
        let parent = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        Ok((Dir::open(parent)?, name.to_os_string()))
    }

    /// The path this directory was opened by (for messages).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `name`'s path, for messages.
    pub fn join(&self, name: &OsStr) -> PathBuf {
        self.path.join(name)
    }

    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// The directory itself.
    pub fn stat_self(&self) -> io::Result<Stat> {
        sys::statx(Some(self.fd()), c"")
    }

    /// An entry, never through a link (a link is described as a link).
    pub fn stat(&self, name: &OsStr) -> io::Result<Stat> {
        sys::statx(Some(self.fd()), &entry_name(name)?)
    }

    /// The file system's magic number (`statfs`) and whether it is mounted read-only.
    pub fn fs_magic(&self) -> io::Result<(i64, bool)> {
        sys::fstatfs(self.fd())
    }

    /// Takes this open directory's `flock` without waiting: `false` when another holds it.
    pub fn try_lock(&self) -> io::Result<bool> {
        sys::try_lock(self.fd())
    }

    /// A new file: `O_CREAT | O_EXCL | O_NOFOLLOW`, so an existing name, a link among them, is
    /// `AlreadyExists` and nothing is written.
    pub fn create_new(&self, name: &OsStr, mode: libc::mode_t) -> io::Result<File> {
        let fd = sys::openat(
            Some(self.fd()),
            &entry_name(name)?,
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW,
            mode,
        )?;
        Ok(File::from(fd))
    }

    /// Writes `bytes` to the new file `name` ([`Dir::create_new`]).
    pub fn write_new(&self, name: &OsStr, bytes: &[u8], mode: libc::mode_t) -> io::Result<()> {
        let mut f = self.create_new(name, mode)?;
        let written = f.write_all(bytes).and_then(|()| f.flush());
        if written.is_err() {
            let _ = self.unlink(name);
        }
        written
    }

    /// Writes `bytes` as `name`, replacing what is there unless it is a directory: a new file
    /// under a temporary name, renamed over `name` (a link at `name` is replaced, never
    /// followed).
    pub fn replace(&self, name: &OsStr, bytes: &[u8], mode: libc::mode_t) -> io::Result<()> {
        let target = entry_name(name)?;
        if self.stat(name).is_ok_and(|s| s.is_dir()) {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                "it is a directory; tscope replaces only files",
            ));
        }
        let pid = std::process::id();
        for n in 0..100u32 {
            let tmp = OsString::from(format!(".tscope-{pid}-{n}.tmp"));
            match self.write_new(&tmp, bytes, mode) {
                Ok(()) => {
                    let renamed = sys::renameat(self.fd(), &cstr(&tmp)?, &target, true);
                    if renamed.is_err() {
                        let _ = self.unlink(&tmp);
                    }
                    return renamed;
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::other("no free temporary name"))
    }

    /// A new directory `name` (`mkdirat`; an existing name is `AlreadyExists`).
    pub fn mkdir(&self, name: &OsStr, mode: libc::mode_t) -> io::Result<()> {
        sys::mkdirat(self.fd(), &entry_name(name)?, mode)
    }

    /// Enters the directory `name`, never through a link.
    pub fn open_dir(&self, name: &OsStr) -> io::Result<Dir> {
        let fd = sys::openat(
            Some(self.fd()),
            &entry_name(name)?,
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW,
            0,
        )?;
        Ok(Dir {
            fd,
            path: self.join(name),
        })
    }

    /// Renames `from` to `to` in this directory, failing when `to` exists.
    pub fn rename_new(&self, from: &OsStr, to: &OsStr) -> io::Result<()> {
        sys::renameat(self.fd(), &entry_name(from)?, &entry_name(to)?, false)
    }

    /// Removes the name `name` (a file, a link, a FIFO; never what a link points at).
    pub fn unlink(&self, name: &OsStr) -> io::Result<()> {
        sys::unlinkat(self.fd(), &entry_name(name)?, false)
    }

    /// The names in this directory, without `.` and `..`.
    pub fn entries(&self) -> io::Result<Vec<OsString>> {
        // A descriptor of its own, so the listing starts at the beginning every time.
        let fd = sys::openat(Some(self.fd()), c".", libc::O_RDONLY | libc::O_DIRECTORY, 0)?;
        let mut names = Vec::new();
        let mut buf = vec![0u8; 32 * 1024];
        loop {
            let n = crate::sys::fs::getdents64(fd.as_fd(), &mut buf)?;
            if n == 0 {
                return Ok(names);
            }
            parse_dirents(&buf[..n], &mut names);
        }
    }

    /// Removes `name` and everything below it, within this directory's mount: names are
    /// unlinked, never followed; a directory on another mount (a mount point, a bind mount on
    /// the same device) is left with everything under it, and the first such is the error.
    pub fn remove_tree(&self, name: &OsStr) -> io::Result<()> {
        let here = self.stat_self()?;
        self.remove_within(name, &here)
    }

    fn remove_within(&self, name: &OsStr, mount: &Stat) -> io::Result<()> {
        let st = self.stat(name)?;
        if !st.is_dir() {
            return self.unlink(name);
        }
        let other_mount = |s: &Stat| s.dev != mount.dev || s.mnt_id != mount.mnt_id;
        let mount_point = || {
            io::Error::other(format!(
                "'{}' is on another mount; tscope never removes across a mount",
                self.join(name).display()
            ))
        };
        if other_mount(&st) {
            return Err(mount_point());
        }
        let sub = self.open_dir(name)?;
        // The name may have been swapped for a mount point between the stat and the open.
        if other_mount(&sub.stat_self()?) {
            return Err(mount_point());
        }
        let mut first = None;
        for e in sub.entries()? {
            if let Err(err) = sub.remove_within(&e, mount) {
                first.get_or_insert(err);
            }
        }
        if let Some(err) = first {
            return Err(err);
        }
        sys::unlinkat(self.fd(), &entry_name(name)?, true)
    }
}

/// Appends the names in a `getdents64` buffer (`struct linux_dirent64`: inode, offset,
/// record length, type, NUL-terminated name), skipping `.` and `..`.
fn parse_dirents(buf: &[u8], names: &mut Vec<OsString>) {
    let mut at = 0;
    while at + 19 <= buf.len() {
        let reclen = u16::from_ne_bytes([buf[at + 16], buf[at + 17]]) as usize;
        if reclen == 0 || at + reclen > buf.len() {
            return;
        }
        let raw = &buf[at + 19..at + reclen];
        let name = &raw[..raw.iter().position(|b| *b == 0).unwrap_or(raw.len())];
        if name != b"." && name != b".." {
            names.push(OsString::from_vec(name.to_vec()));
        }
        at += reclen;
    }
}

/// Creates the new, empty file at `path` (`O_EXCL | O_NOFOLLOW` in its directory, opened by
/// [`Dir::open`]); `AlreadyExists` when anything, a link included, has that name.
pub fn create_new_file(path: &Path, mode: libc::mode_t) -> io::Result<File> {
    let (dir, name) = Dir::parent_of(path)?;
    dir.create_new(&name, mode)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn a_new_file_never_goes_through_a_link_and_replacing_replaces_the_link() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("target");
        std::fs::write(&target, "keep").unwrap();
        symlink(&target, d.path().join("to-file")).unwrap();
        symlink(d.path().join("nowhere"), d.path().join("dangling")).unwrap();
        let dir = Dir::open(d.path()).unwrap();
        for name in ["to-file", "dangling", "target"] {
            let e = dir.write_new(OsStr::new(name), b"x", 0o600).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::AlreadyExists, "{name}");
        }
        assert!(!d.path().join("nowhere").exists());
        dir.replace(OsStr::new("to-file"), b"new", 0o600).unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");
        assert_eq!(std::fs::read(d.path().join("to-file")).unwrap(), b"new");
        assert!(dir.stat(OsStr::new("to-file")).unwrap().is_file());
        let mut names = dir.entries().unwrap();
        names.sort();
        assert_eq!(names, ["dangling", "target", "to-file"]);
        assert!(dir.write_new(OsStr::new("a/b"), b"x", 0o600).is_err());
        assert!(dir.write_new(OsStr::new(".."), b"x", 0o600).is_err());
    }

    #[test]
    fn removing_a_tree_unlinks_links_and_never_what_they_point_at() {
        let d = tempfile::tempdir().unwrap();
        let outside = d.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("f"), "keep").unwrap();
        let tree = d.path().join("tree");
        std::fs::create_dir_all(tree.join("a/b")).unwrap();
        std::fs::write(tree.join("a/b/f"), "x").unwrap();
        symlink(&outside, tree.join("a/link")).unwrap();
        Dir::open(d.path())
            .unwrap()
            .remove_tree(OsStr::new("tree"))
            .unwrap();
        assert!(!tree.exists());
        assert_eq!(std::fs::read(outside.join("f")).unwrap(), b"keep");
    }
}
