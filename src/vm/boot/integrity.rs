//! The cache checks itself: every artefact is written whole or not at all (a temporary file,
//! removed on any error, then a rename), and its SHA-256 is recorded when it is written and
//! verified each time it is used. A cached kernel entry carries a `SHA256SUMS` manifest (the
//! `sha256sum` format, so `sha256sum -c SHA256SUMS` checks it by hand too), written last: it is
//! also the mark that the entry is complete. A single file (an extracted vmlinux) carries
//! `NAME.sha256`. An entry that fails is removed and made again by the caller.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::{Context, Result};

/// The manifest of a cache entry directory.
pub(crate) const MANIFEST: &str = "SHA256SUMS";

/// The lowercase hex SHA-256 of `bytes`.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// The SHA-256 of a file, read in pieces.
fn file_sha256(path: &Path) -> std::io::Result<String> {
    let mut f = fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        match f.read(&mut buf)? {
            0 => return Ok(hex(&h.finalize())),
            n => h.update(&buf[..n]),
        }
    }
}

/// Writes `bytes` to `path` whole or not at all; the temporary file (`NAME.tmpPID`) is removed
/// when writing fails (a full disk), not left for the next run to sweep.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().context("cache path has no parent")?;
    fs::create_dir_all(dir).with_context(|| format!("creating '{}'", dir.display()))?;
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let result = fs::write(&tmp, bytes)
        .with_context(|| format!("writing '{}'", tmp.display()))
        .and_then(|()| {
            fs::rename(&tmp, path).with_context(|| format!("renaming to '{}'", path.display()))
        });
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

fn sidecar(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".sha256");
    path.with_file_name(name)
}

/// Writes a single cached file with its checksum beside it (`NAME.sha256`, written second).
pub(crate) fn write_checked(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic(path, bytes)?;
    write_atomic(
        &sidecar(path),
        format!("{}\n", sha256_hex(bytes)).as_bytes(),
    )
}

/// Whether a single cached file matches its recorded checksum; `Err` says why not (missing,
/// no checksum recorded, different content).
pub(crate) fn verify_file(path: &Path) -> std::result::Result<(), String> {
    let want = fs::read_to_string(sidecar(path))
        .map_err(|_| format!("no checksum recorded for '{}'", path.display()))?;
    let got = file_sha256(path).map_err(|e| format!("reading '{}': {e}", path.display()))?;
    if want.trim() != got {
        return Err(format!(
            "'{}' does not match its recorded checksum",
            path.display()
        ));
    }
    Ok(())
}

/// Every regular file under `dir` (relative paths, sorted), the manifest excluded.
fn files_under(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, d: &Path, out: &mut Vec<String>) {
        for e in fs::read_dir(d).into_iter().flatten().flatten() {
            let p = e.path();
            match e.file_type() {
                Ok(t) if t.is_dir() => walk(root, &p, out),
                Ok(t) if t.is_file() => {
                    if let Ok(rel) = p.strip_prefix(root) {
                        out.push(rel.to_string_lossy().into_owned());
                    }
                }
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.retain(|f| f != MANIFEST);
    out.sort();
    out
}

/// Records the checksum of every file under `dir` in its manifest (written last).
pub(crate) fn write_manifest(dir: &Path) -> Result<()> {
    let mut text = String::new();
    for rel in files_under(dir) {
        let sum = file_sha256(&dir.join(&rel))
            .with_context(|| format!("reading '{}'", dir.join(&rel).display()))?;
        text.push_str(&format!("{sum}  {rel}\n"));
    }
    write_atomic(&dir.join(MANIFEST), text.as_bytes())
}

/// Whether every file under `dir` is listed in its manifest with a matching checksum, and
/// every listed file is there; `Err` names the first that is not.
pub(crate) fn verify_manifest(dir: &Path) -> std::result::Result<(), String> {
    let text = fs::read_to_string(dir.join(MANIFEST))
        .map_err(|_| format!("no {MANIFEST} in '{}'", dir.display()))?;
    let mut listed = Vec::new();
    for line in text.lines() {
        let Some((sum, rel)) = line.split_once("  ") else {
            return Err(format!("{MANIFEST} in '{}' is malformed", dir.display()));
        };
        let got = file_sha256(&dir.join(rel))
            .map_err(|e| format!("'{}': {e}", dir.join(rel).display()))?;
        if got != sum {
            return Err(format!(
                "'{}' does not match its recorded checksum",
                dir.join(rel).display()
            ));
        }
        listed.push(rel.to_string());
    }
    listed.sort();
    if let Some(extra) = files_under(dir).into_iter().find(|f| !listed.contains(f)) {
        return Err(format!(
            "'{}' is not in {MANIFEST}",
            dir.join(extra).display()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manifest_catches_truncation_corruption_and_strays() {
        let d = tempfile::tempdir().unwrap();
        let e = d.path().join("entry");
        write_atomic(&e.join("vmlinuz"), b"kernel bytes").unwrap();
        write_atomic(&e.join("modules/order"), b"xfs\n").unwrap();
        assert!(verify_manifest(&e).unwrap_err().contains("no SHA256SUMS"));
        write_manifest(&e).unwrap();
        verify_manifest(&e).unwrap();
        // The manifest is what sha256sum -c reads.
        let text = fs::read_to_string(e.join(MANIFEST)).unwrap();
        assert!(text.contains(&format!("{}  vmlinuz\n", sha256_hex(b"kernel bytes"))));
        fs::write(e.join("vmlinuz"), b"kernel byt").unwrap();
        assert!(verify_manifest(&e).unwrap_err().contains("vmlinuz"));
        fs::write(e.join("vmlinuz"), b"kernel bytes").unwrap();
        fs::write(e.join("modules/order"), b"xfz\n").unwrap();
        assert!(verify_manifest(&e).unwrap_err().contains("order"));
        fs::write(e.join("modules/order"), b"xfs\n").unwrap();
        fs::write(e.join("stray"), b"?").unwrap();
        assert!(verify_manifest(&e).unwrap_err().contains("stray"));
    }

    #[test]
    fn a_checked_file_catches_a_changed_byte_and_leaves_no_temporary() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("vmlinux").join("k.elf");
        assert!(verify_file(&f).is_err());
        write_checked(&f, b"\x7fELF....").unwrap();
        verify_file(&f).unwrap();
        fs::write(&f, b"\x7fELF..x.").unwrap();
        assert!(verify_file(&f).unwrap_err().contains("checksum"));
        let names: Vec<_> = fs::read_dir(d.path().join("vmlinux"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert!(names.iter().all(|n| !n.contains(".tmp")), "{names:?}");
        // A write that fails after its temporary was written (the rename onto a non-empty
        // directory fails, as a full disk fails the write) removes the temporary.
        let occupied = d.path().join("occupied");
        fs::create_dir(&occupied).unwrap();
        fs::write(occupied.join("x"), b"x").unwrap();
        assert!(write_atomic(&occupied, b"data").is_err());
        let left: Vec<_> = fs::read_dir(d.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".tmp"))
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }
}
