//! Reading a file the user named, bounded: only a regular file is read (a FIFO, a character
//! device or a directory is refused before it is opened for reading, so nothing blocks on a
//! writer that never comes or reads `/dev/zero` forever), and never more than a stated limit.
//! The open is non-blocking and the type is checked again on the open descriptor, so a file
//! swapped for a FIFO between the two checks is refused too.
//!
//! Every JSON document a command reads (a profile, a detection, a run record, a scenario,
//! `report.json`, whatever `show` renders) is read with [`read_document`], under
//! [`MAX_DOCUMENT`]; an strace log is streamed ([`open_stream`]), so it has no size limit, and
//! may be a FIFO (`<(zcat log.gz)`), but not a device.

mod kind;
mod shape;
mod version;
pub use kind::{expect as expect_kind, Kind};

pub use shape::Shape;
pub use version::{schema_version, VersionError};

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use crate::error::{Context, Result};
use crate::fail as bail;

/// The largest JSON document a command reads: far above anything tscope writes (a probe
/// profile is about 35 KB, a `simulate` sweep or a `report.json` well under 10 MB), so a file
/// over it is not tscope's output, and refusing it keeps a mistaken or hostile input from
/// taking memory without bound. No flag lifts it: no document tscope writes comes near.
pub const MAX_DOCUMENT: u64 = 256 << 20;

/// Sizes in MiB for messages.
fn mib(n: u64) -> String {
    format!("{} MiB", n.div_ceil(1 << 20))
}

fn refuse_special(path: &Path, what: &str, meta: &std::fs::Metadata) -> Result<()> {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    let kind = if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        return Ok(());
    };
    bail!("{what} '{}' is {kind}, not a regular file", path.display())
}

/// Why `path` cannot be read, in words: a symbolic link to nothing or one that loops says so
/// (the system's "No such file or directory" would name a file that is there).
pub fn why_unreadable(path: &Path, e: &std::io::Error) -> String {
    let link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    match (link, e.raw_os_error()) {
        (true, Some(libc::ELOOP)) => "a symbolic link that loops (each link leads back)".into(),
        (true, Some(libc::ENOENT)) => format!(
            "a symbolic link to '{}', which does not exist",
            std::fs::read_link(path).map_or_else(|_| "?".into(), |t| t.display().to_string())
        ),
        _ => e.to_string(),
    }
}

/// Opens `path` for reading if it is a regular file of at most `max` bytes; `what` names it in
/// errors ("guest binary", "profile"), `flag` is the option that lifts the limit, if any.
pub fn open_regular(path: &Path, what: &str, max: u64, flag: Option<&str>) -> Result<(File, u64)> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) => bail!(
            "cannot read {what} '{}': {}",
            path.display(),
            why_unreadable(path, &e)
        ),
    };
    refuse_special(path, what, &meta)?;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .with_context(|| format!("cannot open {what} '{}'", path.display()))?;
    let meta = file
        .metadata()
        .with_context(|| format!("cannot read {what} '{}'", path.display()))?;
    refuse_special(path, what, &meta)?;
    if meta.len() > max {
        let lift = flag.map_or(String::new(), |f| format!(" ({f} raises it)"));
        bail!(
            "{what} '{}' is {}, over the limit of {}{lift}",
            path.display(),
            mib(meta.len()),
            mib(max)
        );
    }
    Ok((file, meta.len()))
}

/// Reads a whole regular file of at most `max` bytes ([`open_regular`]); a file that grows
/// while it is read is cut at the limit and refused.
pub fn read_regular(path: &Path, what: &str, max: u64, flag: Option<&str>) -> Result<Vec<u8>> {
    let (file, len) = open_regular(path, what, max, flag)?;
    let mut out = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(max.saturating_add(1))
        .read_to_end(&mut out)
        .with_context(|| format!("cannot read {what} '{}'", path.display()))?;
    if out.len() as u64 > max {
        bail!(
            "{what} '{}' grew past {} while it was read",
            path.display(),
            mib(max)
        );
    }
    Ok(out)
}

/// Reads a JSON document tscope wrote (`what` names it in errors): a regular file of at most
/// [`MAX_DOCUMENT`] bytes, read into one buffer of its size ([`read_regular`]).
pub fn read_document(path: &Path, what: &str) -> Result<Vec<u8>> {
    read_regular(path, what, MAX_DOCUMENT, None)
}

/// Opens a log to stream (an strace log): a regular file or a FIFO, of any length; a
/// directory, a device or a socket is refused before it is opened. A FIFO's open waits for a
/// writer, as `cat` does; a stop signal ends the wait (the command exits 130).
pub fn open_stream(path: &Path, what: &str) -> Result<File> {
    use std::os::unix::fs::FileTypeExt;
    let check = |meta: &std::fs::Metadata| -> Result<()> {
        if meta.file_type().is_fifo() {
            Ok(())
        } else {
            refuse_special(path, what, meta)
        }
    };
    let meta = std::fs::metadata(path)
        .with_context(|| format!("cannot read {what} '{}'", path.display()))?;
    check(&meta)?;
    let file =
        File::open(path).with_context(|| format!("cannot open {what} '{}'", path.display()))?;
    let meta = file
        .metadata()
        .with_context(|| format!("cannot read {what} '{}'", path.display()))?;
    check(&meta)?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_what_is_not_a_regular_file_and_what_is_too_big() {
        let dir = tempfile::tempdir().unwrap();
        let e = read_regular(dir.path(), "profile", 10, None).unwrap_err();
        assert!(e.to_string().contains("is a directory"), "{e}");
        let fifo = dir.path().join("fifo");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        // Refused at once: nothing writes this FIFO, and the read must not wait for a writer.
        let e = read_regular(&fifo, "guest binary", 10, None).unwrap_err();
        assert!(e.to_string().contains("is a FIFO"), "{e}");
        // A copy of /dev/zero made here (never /dev itself): refused before a single read.
        let zero = dir.path().join("zero");
        let made = std::process::Command::new("mknod")
            .arg(&zero)
            .args(["c", "1", "5"])
            .status();
        if made.is_ok_and(|s| s.success()) {
            let e = read_regular(&zero, "guest binary", 10, None).unwrap_err();
            assert!(e.to_string().contains("is a character device"), "{e}");
        }
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'x'; 100]).unwrap();
        let e = read_regular(&big, "profile", 10, Some("--max-input-mib")).unwrap_err();
        assert!(
            e.to_string()
                .contains("over the limit of 1 MiB (--max-input-mib raises it)"),
            "{e}"
        );
        assert_eq!(read_regular(&big, "profile", 100, None).unwrap().len(), 100);
        let e = read_regular(&dir.path().join("none"), "profile", 10, None).unwrap_err();
        assert!(format!("{e:#}").contains("none"), "{e:#}");
    }
}
