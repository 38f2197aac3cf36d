//! Writing an output file (`-o`, `--record`) without harming what the path already names.
//!
//! A new path or a plain regular file is written whole or not at all: a temporary file in the
//! same directory (a short name, so a 255-byte file name still fits), given the old file's mode
//! and owner, then renamed over it. Anything else is never replaced: a character device
//! (`/dev/null`, a terminal) or a FIFO with a reader is written in place; a symbolic link or a
//! regular file with other hard links is truncated and written in place, so the link and the
//! other names keep pointing at the new contents; a block device, socket, directory, dangling
//! link, another user's link ([`crate::dirfd`]) or a FIFO nobody reads is refused unwritten.
//!
//! A stop signal that ends the process (the watchers of `commands::signals`) first calls
//! [`abandon_temporaries`]: every temporary this process made and has not yet renamed into
//! place is removed, and no rename sequence is cut in half (they run under the same lock).

use std::fs::{File, Metadata, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use crate::error::FileError;

/// Temporaries made and not yet renamed into place or removed. The lock is held across every
/// rename sequence, so an exit through [`abandon_temporaries`] lands before it or after it.
static IN_FLIGHT: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn in_flight() -> MutexGuard<'static, Vec<PathBuf>> {
    // A panic elsewhere while holding the list leaves it usable: it is a plain list of paths.
    IN_FLIGHT.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `f` (the renames that put a temporary in place, or its removal) under the lock, then
/// forgets `done`: they are in place or gone.
fn settle<T>(done: &[&Path], f: impl FnOnce() -> T) -> T {
    let mut list = in_flight();
    let out = f();
    list.retain(|p| !done.contains(&p.as_path()));
    out
}

/// Removes every temporary this process has in flight and holds the lock until the process
/// ends, so that no rename starts after it: for a stop signal's exit, right before
/// `std::process::exit`.
pub fn abandon_temporaries() {
    let mut list = in_flight();
    remove_all(&mut list);
    std::mem::forget(list);
}

fn remove_all(list: &mut Vec<PathBuf>) {
    for p in list.drain(..) {
        let _ = match std::fs::symlink_metadata(&p) {
            Ok(m) if m.is_dir() => std::fs::remove_dir_all(&p),
            Ok(_) => std::fs::remove_file(&p),
            Err(_) => Ok(()),
        };
    }
}

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
    if let Ok(Some(why)) = crate::dirfd::foreign_link(path) {
        return Err(why);
    }
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
        Ok(())
    })();
    settle(&[&tmp], || {
        let result = result.and_then(|()| std::fs::rename(&tmp, path));
        if result.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        result
    })
}

/// A new file `.tscope-<pid>-<n>.tmp` in `dir` (short, whatever the target's name length).
fn temporary(dir: &Path) -> std::io::Result<(PathBuf, File)> {
    temporary_in(dir, "tmp", |p| {
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o666)
            .open(p)
    })
}

/// Whether a directory's entry is one a report writes (so a directory holding only these, or
/// nothing, may be replaced by a new report).
fn is_report_file(name: &str) -> bool {
    matches!(name, "report.md" | "report.json" | "commit-message.txt") || name.ends_with(".svg")
}

/// Checks a report directory before anything is measured; returns the directory to replace
/// (`dir`, or a symbolic link's target directory). A new path needs its nearest existing
/// ancestor to be a directory tscope may create entries in; an existing directory must be
/// empty or hold only report files (tscope never deletes anything else); a symbolic link to
/// anything but such a directory, another user's link, or a path that is not a directory, is
/// refused.
pub fn check_dir(dir: &Path) -> Result<PathBuf, String> {
    if let Ok(Some(why)) = crate::dirfd::foreign_link(dir) {
        return Err(why);
    }
    let resolved = match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => dir.to_path_buf(),
        Err(e) => return Err(format!("cannot inspect it: {e}")),
        Ok(m) if m.file_type().is_symlink() => match std::fs::metadata(dir) {
            Ok(t) if t.is_dir() => std::fs::canonicalize(dir)
                .map_err(|e| format!("cannot resolve the symbolic link: {e}"))?,
            _ => return Err("it is a symbolic link to something that is not a directory".into()),
        },
        Ok(m) if m.is_dir() => {
            std::fs::canonicalize(dir).map_err(|e| format!("cannot resolve the directory: {e}"))?
        }
        Ok(_) => return Err("it exists and is not a directory".into()),
    };
    if resolved.is_dir() {
        // Replacing it would leave whoever sits in it (the user's shell) in a removed one.
        if std::env::current_dir()
            .and_then(std::fs::canonicalize)
            .is_ok_and(|cwd| cwd == resolved)
        {
            return Err("it is the current directory; name it from its parent".into());
        }
        for e in std::fs::read_dir(&resolved).map_err(|e| format!("cannot list it: {e}"))? {
            let e = e.map_err(|e| format!("cannot list it: {e}"))?;
            let plain = e.file_type().is_ok_and(|t| t.is_file());
            let name = e.file_name();
            if !plain || !is_report_file(&name.to_string_lossy()) {
                return Err(format!(
                    "it is a directory holding '{}', which is not a report file; tscope \
                     replaces only an empty directory or an earlier report: name another one",
                    name.to_string_lossy()
                ));
            }
        }
    }
    // The directory that will hold the temporary sibling: the nearest one that exists.
    let mut parent = parent_of(&resolved).to_path_buf();
    while !parent.exists() {
        match parent.parent().filter(|p| !p.as_os_str().is_empty()) {
            Some(p) => parent = p.to_path_buf(),
            None => parent = PathBuf::from("."),
        }
    }
    if !parent.is_dir() {
        return Err(format!("'{}' is not a directory", parent.display()));
    }
    let (probe, _) = temporary_in(&parent, "probe", |p| std::fs::create_dir(p))
        .map_err(|e| format!("cannot create entries in '{}': {e}", parent.display()))?;
    settle(&[&probe], || std::fs::remove_dir(&probe)).ok();
    Ok(resolved)
}

/// Writes a whole directory of `files` at `dir` (checked by [`check_dir`] first): into a
/// temporary sibling, then renamed into place; an earlier directory there is renamed aside
/// and removed only once the new one is in place. On any failure the temporary sibling is
/// removed and what was at `dir` stays as it was; files of an earlier report that the new
/// one lacks do not survive.
pub fn write_dir(dir: &Path, files: &[(String, Vec<u8>)]) -> crate::error::Result<PathBuf> {
    let fail = |source: std::io::Error| FileError::Write {
        path: dir.to_path_buf(),
        source,
    };
    let dir = check_dir(dir).map_err(|why| fail(std::io::Error::other(why)))?;
    let parent = parent_of(&dir);
    std::fs::create_dir_all(parent).map_err(fail)?;
    let (tmp, ()) = temporary_in(parent, "new", |p| std::fs::create_dir(p)).map_err(fail)?;
    let written = (|| -> std::io::Result<()> {
        for (name, bytes) in files {
            let path = tmp.join(name);
            let mut f = OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)?;
            f.write_all(bytes)?;
            f.flush()?;
        }
        Ok(())
    })();
    // The swap runs whole under the lock: a stop signal never finds the earlier report set
    // aside and the new one not yet in place.
    let result = settle(&[&tmp], || {
        let result = written.and_then(|()| {
            let Some(m) = std::fs::metadata(&dir).ok().filter(|m| m.is_dir()) else {
                return std::fs::rename(&tmp, &dir);
            };
            // The earlier directory's mode and (best effort: only root may) owner carry over.
            let _ = std::os::unix::fs::chown(&tmp, Some(m.uid()), Some(m.gid()));
            std::fs::set_permissions(&tmp, m.permissions())?;
            // rename(2) would replace an empty directory of that name: take only a free one.
            let (old, ()) = temporary_named(parent, "old", |p| {
                if std::fs::symlink_metadata(p).is_ok() {
                    return Err(std::io::ErrorKind::AlreadyExists.into());
                }
                std::fs::rename(&dir, p)
            })?;
            if let Err(e) = std::fs::rename(&tmp, &dir) {
                let _ = std::fs::rename(&old, &dir);
                return Err(e);
            }
            let _ = std::fs::remove_dir_all(old);
            Ok(())
        });
        if result.is_err() {
            let _ = std::fs::remove_dir_all(&tmp);
        }
        result
    });
    result.map_err(fail)?;
    Ok(dir)
}

fn parent_of(path: &Path) -> &Path {
    path.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// `.tscope-<pid>-<n>.<what>` in `dir`, made by `make` (which must fail with `AlreadyExists`
/// when the name is taken).
/// Registered in flight, so that a stop signal's exit removes it ([`abandon_temporaries`]).
fn temporary_in<T>(
    dir: &Path,
    what: &str,
    make: impl Fn(&Path) -> std::io::Result<T>,
) -> std::io::Result<(PathBuf, T)> {
    let mut list = in_flight();
    let (tmp, t) = temporary_named(dir, what, make)?;
    list.push(tmp.clone());
    Ok((tmp, t))
}

/// [`temporary_in`] without registering: for a name taken under the lock, in place at once.
fn temporary_named<T>(
    dir: &Path,
    what: &str,
    make: impl Fn(&Path) -> std::io::Result<T>,
) -> std::io::Result<(PathBuf, T)> {
    let pid = std::process::id();
    let mut last = None;
    for n in 0..100u32 {
        let tmp = dir.join(format!(".tscope-{pid}-{n}.{what}"));
        match make(&tmp) {
            Ok(t) => return Ok((tmp, t)),
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
    fn temporaries_in_flight_are_removed_and_settled_ones_forgotten() {
        let d = tempfile::tempdir().unwrap();
        let (file, f) = temporary(d.path()).unwrap();
        drop(f);
        let (dir, ()) = temporary_in(d.path(), "new", |p| std::fs::create_dir(p)).unwrap();
        std::fs::write(dir.join("report.md"), "x").unwrap();
        let (kept, f) = temporary(d.path()).unwrap();
        drop(f);
        settle(&[&kept], || std::fs::rename(&kept, d.path().join("out"))).unwrap();
        // What abandon_temporaries does, on this test's own entries only (the list is shared
        // by the tests running beside it).
        let mut mine: Vec<PathBuf> = {
            let mut list = in_flight();
            assert!(!list.contains(&kept), "a settled temporary is forgotten");
            let mine = list
                .iter()
                .filter(|p| p.starts_with(d.path()))
                .cloned()
                .collect();
            list.retain(|p| !p.starts_with(d.path()));
            mine
        };
        assert_eq!(mine.len(), 2);
        remove_all(&mut mine);
        assert!(!file.exists() && !dir.exists());
        let names: Vec<_> = std::fs::read_dir(d.path()).unwrap().flatten().collect();
        assert_eq!(names.len(), 1, "only the renamed output stays");
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

    fn files(names: &[&str]) -> Vec<(String, Vec<u8>)> {
        names
            .iter()
            .map(|n| (n.to_string(), n.as_bytes().to_vec()))
            .collect()
    }

    fn entries(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_report_directory_is_written_whole_and_replaces_an_earlier_one() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path().join("a/b/r");
        write_dir(&r, &files(&["report.md", "workload-pipe1.svg"])).unwrap();
        assert_eq!(entries(&r), ["report.md", "workload-pipe1.svg"]);
        // An earlier report is replaced (its mode kept); its stale file does not survive; no
        // sibling is left.
        std::fs::set_permissions(&r, std::fs::Permissions::from_mode(0o750)).unwrap();
        write_dir(&r, &files(&["report.md", "report.json"])).unwrap();
        assert_eq!(entries(&r), ["report.json", "report.md"]);
        assert_eq!(std::fs::metadata(&r).unwrap().mode() & 0o777, 0o750);
        assert_eq!(entries(&d.path().join("a/b")), ["r"]);
        // Through a symbolic link to it: the link stays, its target is replaced.
        let l = d.path().join("l");
        symlink(&r, &l).unwrap();
        write_dir(&l, &files(&["costs.svg"])).unwrap();
        assert!(std::fs::symlink_metadata(&l)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(entries(&r), ["costs.svg"]);
        // A failure half-way (a name that cannot be created) leaves the earlier report as it
        // was and no temporary sibling.
        assert!(write_dir(&r, &files(&["report.md", "no/such/dir"])).is_err());
        assert_eq!(entries(&r), ["costs.svg"]);
        assert_eq!(entries(&d.path().join("a/b")), ["r"]);
    }

    #[test]
    fn a_report_directory_never_replaces_what_is_not_a_report() {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("f");
        std::fs::write(&file, "keep").unwrap();
        let to_file = d.path().join("to-file");
        symlink(&file, &to_file).unwrap();
        let dangling = d.path().join("dangling");
        symlink(d.path().join("nowhere"), &dangling).unwrap();
        let home = d.path().join("home");
        std::fs::create_dir(&home).unwrap();
        std::fs::write(home.join("notes.txt"), "mine").unwrap();
        std::fs::create_dir(home.join("sub")).unwrap();
        for p in [&file, &to_file, &dangling, &home, &file.join("r")] {
            assert!(check_dir(p).is_err(), "{} accepted", p.display());
            assert!(write_dir(p, &files(&["report.md"])).is_err());
        }
        assert_eq!(std::fs::read(&file).unwrap(), b"keep");
        assert_eq!(entries(&home), ["notes.txt", "sub"]);
        assert_eq!(
            entries(d.path()),
            ["dangling", "f", "home", "to-file"],
            "nothing created beside them"
        );
    }
}
