//! Writing an output file (`-o`, `--record`) without harming what the path already names.
//!
//! A new path or a plain regular file is written whole or not at all: a temporary file in the
//! same directory (a short name, so a 255-byte file name still fits), given the old file's mode
//! and owner, then renamed over it. Anything else is never replaced: a character device
//! (`/dev/null`, a terminal) or a FIFO with a reader is written in place; a symbolic link or a
//! regular file with other hard links is truncated and written in place, so the link and the
//! other names keep pointing at the new contents; a block device, socket, directory, dangling
//! link or a FIFO nobody reads is refused before anything is written.

use std::fs::{File, Metadata, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::error::FileError;

/// How an output path will be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// Nothing there yet: a temporary file, then a rename.
    New,
    /// A regular file with one name: a temporary file with its mode, then a rename.
    Replace,
    /// A symbolic link to a regular file, or a regular file with other hard links: truncated
    /// and written in place.
    Truncate,
    /// A character device or a FIFO: written in place, never truncated or replaced.
    Stream,
}

/// What `path` names and how it would be written; `Err` says why it must not be.
pub fn target(path: &Path) -> Result<Target, String> {
    let link = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Target::New),
        Err(e) => return Err(format!("cannot inspect it: {e}")),
    };
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(_) => return Err("it is a dangling symbolic link".into()),
    };
    let ft = meta.file_type();
    if ft.is_dir() {
        Err("it is a directory; name a file".into())
    } else if ft.is_file() {
        Ok(if link.file_type().is_symlink() || meta.nlink() > 1 {
            Target::Truncate
        } else {
            Target::Replace
        })
    } else if ft.is_char_device() || ft.is_fifo() {
        Ok(Target::Stream)
    } else if ft.is_block_device() {
        Err("it is a block device; tscope never writes to one".into())
    } else {
        Err("it is a socket or other special file; name a regular file".into())
    }
}

/// Writes `bytes` to `path` as [`target`] says.
pub fn write(path: &Path, bytes: &[u8]) -> crate::error::Result<()> {
    let fail = |source: std::io::Error| FileError::Write {
        path: path.to_path_buf(),
        source,
    };
    let how = target(path).map_err(|why| fail(std::io::Error::other(why)))?;
    match how {
        Target::New => replace(path, bytes, None).map_err(fail)?,
        Target::Replace => {
            let meta = std::fs::metadata(path).map_err(fail)?;
            replace(path, bytes, Some(&meta)).map_err(fail)?
        }
        Target::Truncate => {
            let mut f = OpenOptions::new()
                .write(true)
                .truncate(true)
                .open(path)
                .map_err(fail)?;
            f.write_all(bytes).and_then(|()| f.flush()).map_err(fail)?
        }
        Target::Stream => {
            let mut f = open_stream(path).map_err(fail)?;
            f.write_all(bytes).and_then(|()| f.flush()).map_err(fail)?
        }
    }
    Ok(())
}

/// Opens a character device or FIFO for writing without blocking on a FIFO nobody reads.
fn open_stream(path: &Path) -> std::io::Result<File> {
    let probe = OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path);
    match probe {
        Err(e) if e.raw_os_error() == Some(libc::ENXIO) => Err(std::io::Error::other(
            "it is a FIFO that no process is reading; start the reader first",
        )),
        Err(e) => Err(e),
        // A reader exists (or it is a device): open again blocking, so writes wait for the
        // reader instead of failing with EAGAIN; the first descriptor keeps the FIFO open.
        Ok(_held) => OpenOptions::new().write(true).open(path),
    }
}

/// A temporary file beside `path`, given `old`'s mode and owner, renamed over `path`.
fn replace(path: &Path, bytes: &[u8], old: Option<&Metadata>) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let (tmp, mut f) = temporary(dir)?;
    let result = (|| {
        f.write_all(bytes)?;
        if let Some(m) = old {
            // Best effort for the owner (only root may give a file away); the mode must hold.
            let _ = std::os::unix::fs::fchown(&f, Some(m.uid()), Some(m.gid()));
            f.set_permissions(std::fs::Permissions::from_mode(m.mode() & 0o7777))?;
        }
        f.flush()?;
        drop(f);
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// A new file `.tscope-<pid>-<n>.tmp` in `dir` (short, whatever the target's name length).
fn temporary(dir: &Path) -> std::io::Result<(PathBuf, File)> {
    let pid = std::process::id();
    let mut last = None;
    for n in 0..100u32 {
        let tmp = dir.join(format!(".tscope-{pid}-{n}.tmp"));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o666)
            .open(&tmp)
        {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no free temporary name")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn replacing_keeps_mode_and_hard_links() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("a");
        std::fs::write(&a, "old").unwrap();
        std::fs::set_permissions(&a, std::fs::Permissions::from_mode(0o640)).unwrap();
        write(&a, b"new").unwrap();
        let m = std::fs::metadata(&a).unwrap();
        assert_eq!(m.mode() & 0o777, 0o640);
        assert_eq!(std::fs::read(&a).unwrap(), b"new");
        let b = d.path().join("b");
        std::fs::hard_link(&a, &b).unwrap();
        write(&a, b"newer").unwrap();
        assert_eq!(std::fs::read(&b).unwrap(), b"newer");
        let l = d.path().join("l");
        symlink(&a, &l).unwrap();
        write(&l, b"via link").unwrap();
        assert!(std::fs::symlink_metadata(&l)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(&b).unwrap(), b"via link");
        let names: Vec<_> = std::fs::read_dir(d.path()).unwrap().collect();
        assert_eq!(names.len(), 3, "no temporary file left");
    }

    #[test]
    fn long_names_and_refusals() {
        let d = tempfile::tempdir().unwrap();
        let long = d.path().join("x".repeat(250));
        write(&long, b"1").unwrap();
        write(&long, b"2").unwrap();
        assert_eq!(std::fs::read(&long).unwrap(), b"2");
        assert!(target(d.path()).is_err());
        let dangling = d.path().join("dangling");
        symlink(d.path().join("nowhere"), &dangling).unwrap();
        assert!(write(&dangling, b"x").is_err());
        assert!(!d.path().join("nowhere").exists());
    }
}
