//! The store's file: how it is created and opened, and what its header says of its length.
//!
//! - A new store is created by tscope itself, `O_CREAT | O_EXCL | O_NOFOLLOW` in its directory
//!   ([`crate::dirfd`]), before SQLite opens it; SQLite then opens it with
//!   `SQLITE_OPEN_NOFOLLOW` and never creates it. So a link planted under the store's name (the
//!   default `tscope-fleet.db` in a shared directory) is never followed, dangling or not. A
//!   link the user owns is followed, as the kernel's `fs.protected_symlinks` would; SQLite
//!   opens its `-wal` and `-shm` files with `O_NOFOLLOW` itself.
//! - Reads (`ls`, `report`, `export`, `check`) open with `SQLITE_OPEN_READONLY`: a store on a
//!   read-only file system is opened `immutable=1` (SQLite takes no lock and makes no `-shm`),
//!   and so is a store whose `-shm` this user cannot create (another user's store in a
//!   directory this user cannot write) when no write-ahead log holds pages yet to be copied in.
//! - The header's page count (`in-header database size`, valid when the change counter matches
//!   the version-valid-for number) times its page size is the file's length: a shorter file was
//!   truncated, which `PRAGMA integrity_check` does not notice when the lost bytes were inside
//!   the last page. Checked where the write-ahead log is empty or gone (a closed store): while
//!   it holds pages, the file may lack what a stopped checkpoint had yet to copy.

use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};

/// How the store at a path may be opened: `NOFOLLOW` unless it is this user's own link.
fn link_flags(path: &Path) -> crate::error::Result<OpenFlags> {
    let Ok(m) = std::fs::symlink_metadata(path) else {
        return Ok(OpenFlags::SQLITE_OPEN_NOFOLLOW);
    };
    if !m.file_type().is_symlink() {
        return Ok(OpenFlags::SQLITE_OPEN_NOFOLLOW);
    }
    crate::ensure!(
        m.uid() == crate::sys::dir::euid(),
        "fleet store '{}' is a symbolic link owned by uid {}, not this user: tscope does not \
         follow another user's link to a store; name the store file itself with --db",
        path.display(),
        m.uid()
    );
    crate::ensure!(
        std::fs::metadata(path).is_ok(),
        "fleet store '{}' is a symbolic link to '{}', which does not exist: tscope creates a \
         store only under a name that is free; name the store file itself with --db",
        path.display(),
        std::fs::read_link(path).unwrap_or_default().display()
    );
    Ok(OpenFlags::empty())
}

/// Opens the store for writing, creating it first (empty, `O_EXCL | O_NOFOLLOW`) when the
/// name is free.
pub fn open_write(
    path: &Path,
    sql: &dyn Fn(rusqlite::Error) -> crate::error::Error,
) -> crate::error::Result<Connection> {
    let follow = link_flags(path)?;
    if std::fs::symlink_metadata(path).is_err() {
        match crate::dirfd::create_new_file(path, 0o644) {
            Ok(_) => {}
            // Another add created it at the same moment: open what it made.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => crate::fail!(
                "cannot create the fleet store '{}': {e}; name a writable place with --db",
                path.display()
            ),
        }
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX | follow;
    Connection::open_with_flags(path, flags).map_err(sql)
}

/// Opens an existing store for reading only (see the module's comment for `immutable`).
pub fn open_read(
    path: &Path,
    sql: &dyn Fn(rusqlite::Error) -> crate::error::Error,
) -> crate::error::Result<Connection> {
    let follow = link_flags(path)?;
    let file = std::fs::File::open(path)
        .map_err(|e| crate::failure!("fleet store '{}': {e}", path.display()))?;
    let read_only_fs = crate::sys::dir::fstatfs(std::os::fd::AsFd::as_fd(&file))
        .is_ok_and(|(_, read_only)| read_only);
    drop(file);
    if read_only_fs {
        return open_immutable(path, sql);
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX | follow;
    let conn = Connection::open_with_flags(path, flags).map_err(sql)?;
    match conn.query_row("PRAGMA schema_version", [], |r| r.get::<_, i64>(0)) {
        Ok(_) => Ok(conn),
        Err(e) if shm_refused(&e) && !wal_holds_pages(path) => {
            drop(conn);
            open_immutable(path, sql)
        }
        Err(e) => Err(sql(e)),
    }
}

/// Whether SQLite could not open or set up the `-shm` file (this user cannot create it).
fn shm_refused(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::CannotOpen | rusqlite::ErrorCode::ReadOnly)
    )
}

/// Whether the store's `-wal` holds anything (pages not yet copied into the file).
fn wal_holds_pages(path: &Path) -> bool {
    std::fs::metadata(sibling(path, "-wal")).is_ok_and(|m| m.len() > 0)
}

fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// `file:PATH?immutable=1`, read-only: no lock, no `-shm`, no `-wal`.
fn open_immutable(
    path: &Path,
    sql: &dyn Fn(rusqlite::Error) -> crate::error::Error,
) -> crate::error::Result<Connection> {
    let abs = std::fs::canonicalize(path)
        .map_err(|e| crate::failure!("fleet store '{}': {e}", path.display()))?;
    let uri = format!("file:{}?immutable=1", uri_path(&abs));
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    Connection::open_with_flags(uri, flags).map_err(sql)
}

/// An absolute path as a URI path: every byte but unreserved ones and `/` percent-encoded.
fn uri_path(p: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut out = String::new();
    for &b in p.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// What the header says is wrong with the file's length: empty for a file as long as its
/// header says (or longer), an empty file (a store not yet written), or a store whose
/// write-ahead log holds pages (a checkpoint may have stopped part-way, a full disk, and the
/// log still holds what the file lacks: SQLite reads it from there).
pub fn header_problems(path: &Path) -> Vec<String> {
    if wal_holds_pages(path) {
        return Vec::new();
    }
    let Ok(mut f) = std::fs::File::open(path) else {
        return Vec::new();
    };
    let len = f.metadata().map_or(0, |m| m.len());
    if len == 0 {
        return Vec::new();
    }
    let mut h = [0u8; 100];
    if f.read_exact(&mut h).is_err() {
        return vec![format!(
            "the file is {len} bytes, shorter than SQLite's 100-byte header (truncated)"
        )];
    }
    length_problem(&h, len).into_iter().collect()
}

/// [`header_problems`] of a header `h` and a file length (pure; unit-tested).
pub fn length_problem(h: &[u8; 100], len: u64) -> Option<String> {
    let be32 = |at: usize| u32::from_be_bytes([h[at], h[at + 1], h[at + 2], h[at + 3]]);
    let page = match u16::from_be_bytes([h[16], h[17]]) {
        1 => 65536,
        n => u64::from(n),
    };
    if !page.is_power_of_two() || !(512..=65536).contains(&page) {
        return None; // not a header SQLite would read; SQLite's own error says so
    }
    let pages = u64::from(be32(28));
    if pages == 0 || be32(24) != be32(92) {
        return None; // the in-header size is not valid: SQLite goes by the file's length
    }
    let want = pages * page;
    (len < want).then(|| {
        format!(
            "truncated: its header counts {pages} pages of {page} bytes ({want} bytes), the \
             file holds {len} bytes"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_shorter_than_its_header_says_is_truncated() {
        let mut h = [0u8; 100];
        h[16..18].copy_from_slice(&32768u16.to_be_bytes());
        h[28..32].copy_from_slice(&5u32.to_be_bytes());
        h[24..28].copy_from_slice(&7u32.to_be_bytes());
        h[92..96].copy_from_slice(&7u32.to_be_bytes());
        assert_eq!(length_problem(&h, 5 * 32768), None);
        assert_eq!(length_problem(&h, 6 * 32768), None);
        let short = length_problem(&h, 5 * 32768 - 1000).unwrap();
        assert!(
            short.contains("truncated") && short.contains("163840"),
            "{short}"
        );
        // A size that is not valid (the counters differ) says nothing.
        h[92..96].copy_from_slice(&8u32.to_be_bytes());
        assert_eq!(length_problem(&h, 10), None);
        h[92..96].copy_from_slice(&7u32.to_be_bytes());
        h[16..18].copy_from_slice(&1u16.to_be_bytes());
        assert!(
            length_problem(&h, 5 * 32768).is_some(),
            "page size 1 is 65536"
        );
    }

    #[test]
    fn uri_paths_escape_what_a_uri_reads() {
        assert_eq!(
            uri_path(Path::new("/a b/c?d#%.db")),
            "/a%20b/c%3Fd%23%25.db"
        );
    }
}
