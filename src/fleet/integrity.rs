//! A store that knows when it is damaged. Every open runs SQLite's `PRAGMA quick_check` (the
//! pages, the records and their order, without the index cross-checks; a few ms per MB); a
//! store that fails it is read with a warning and never written. `fleet check` runs the full
//! `PRAGMA integrity_check` and compares the file's length with its header, and `--salvage
//! DIR` writes every document that can still be read to DIR as JSON (a new or empty DIR,
//! each file created never through a link, see [`crate::dirfd`]), from which `fleet add DIR`
//! builds a new store. Before a migration changes the schema, the store is copied whole
//! (`VACUUM INTO`, consistent under WAL, into a file created empty never through a link) to
//! `STORE.vN.bak`.

use std::path::{Path, PathBuf};

use rusqlite::Connection;

/// The problems `pragma` reports (`quick_check` or `integrity_check`), at most `max`; empty
/// when it says `ok`. A store too damaged to run it is one problem.
pub fn problems(conn: &Connection, pragma: &str, max: usize) -> Vec<String> {
    let run = || -> rusqlite::Result<Vec<String>> {
        let mut stmt = conn.prepare(&format!("PRAGMA {pragma}({max})"))?;
        let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
        rows.collect()
    };
    match run() {
        Ok(rows) if rows.len() == 1 && rows[0] == "ok" => Vec::new(),
        Ok(rows) => rows
            .iter()
            .flat_map(|r| r.lines())
            .filter(|l| !l.starts_with("*** in database"))
            .map(str::to_string)
            .collect(),
        Err(e) => vec![format!("the check could not run: {e}")],
    }
}

/// Why the store at `path` may not be written: the first problems, and the way out.
pub fn refusal(path: &Path, problems: &[String]) -> String {
    let p = path.display();
    format!(
        "fleet store '{p}' is damaged ({}): tscope does not write to a damaged store. \
         `tscope fleet --db {p} check --salvage DIR` writes every document it can still read to \
         DIR; `tscope fleet --db NEW.db add DIR` builds a new store from them",
        problems
            .iter()
            .take(3)
            .cloned()
            .collect::<Vec<_>>()
            .join("; ")
    )
}

/// Why a store whose header or schema is damaged cannot be read at all, and the way out: the
/// copy a migration took, where there is one, else the documents it was built from.
pub fn unreadable(path: &Path, why: &str) -> String {
    let p = path.display();
    let backups: Vec<String> = (1..=super::schema::VERSION)
        .map(|v| backup_path(path, v))
        .filter(|b| b.is_file())
        .map(|b| format!("'{}'", b.display()))
        .collect();
    let way = if backups.is_empty() {
        format!(
            "Rebuild it from the documents it was built from: `tscope fleet --db NEW.db add \
             FILE|DIR…` (no copy of '{p}' taken before a migration is beside it)"
        )
    } else {
        format!(
            "The copy taken before its last migration is {}: copy it to a new name and open that \
             (documents added since are not in it), or rebuild from the documents with `tscope \
             fleet --db NEW.db add FILE|DIR…`",
            backups.join(", ")
        )
    };
    format!(
        "fleet store '{p}' cannot be read: its header or schema is damaged (SQLite: {}); tscope \
         does not write to it. {way}",
        crate::fmt::safe::cell(why)
    )
}

/// The path of the copy taken before migrating from schema version `from`.
pub fn backup_path(path: &Path, from: u32) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".v{from}.bak"));
    PathBuf::from(name)
}

/// Copies the store whole to [`backup_path`] (replacing an older copy of the same version).
pub fn backup(conn: &Connection, path: &Path, from: u32) -> crate::error::Result<PathBuf> {
    let to = backup_path(path, from);
    if let Ok(m) = std::fs::symlink_metadata(&to) {
        crate::ensure!(
            m.is_file(),
            "the migration's backup '{}' exists and is not a regular file: move it away",
            to.display()
        );
        std::fs::remove_file(&to)
            .map_err(|e| crate::failure!("replacing the backup '{}': {e}", to.display()))?;
    }
    crate::dirfd::create_new_file(&to, 0o644).map_err(|e| {
        crate::failure!(
            "creating the backup '{}' before migrating: {e}",
            to.display()
        )
    })?;
    let target = to
        .to_str()
        .ok_or_else(|| crate::failure!("the backup path '{}' is not UTF-8", to.display()))?;
    conn.execute("VACUUM INTO ?1", [target]).map_err(|e| {
        crate::failure!(
            "backing the store up to '{}' before migrating: {e}",
            to.display()
        )
    })?;
    Ok(to)
}

/// What `fleet check --salvage` recovered.
#[derive(Debug, Default, serde::Serialize)]
pub struct Salvage {
    pub written: usize,
    /// Documents whose row or body could not be read.
    pub lost: usize,
}

/// Opens (creating it where the name is free) the directory `fleet check --salvage` writes
/// into, before anything is read: a directory that holds anything is refused unless
/// `overwrite`, and a symbolic link to a directory only where the link is this user's.
pub fn salvage_dir(dir: &Path, overwrite: bool) -> crate::error::Result<crate::dirfd::Dir> {
    let fail = |e: &dyn std::fmt::Display| crate::failure!("--salvage '{}': {e}", dir.display());
    if std::fs::symlink_metadata(dir).is_err() {
        if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| fail(&e))?;
        }
        let (parent, name) = crate::dirfd::Dir::parent_of(dir).map_err(|e| fail(&e))?;
        match parent.mkdir(&name, 0o755) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(fail(&e)),
        }
    }
    let d = crate::dirfd::Dir::open(dir).map_err(|e| fail(&e))?;
    if !overwrite {
        let names = d.entries().map_err(|e| fail(&e))?;
        if let Some(first) = names.first() {
            return Err(fail(&format!(
                "the directory already holds {} entr{} ('{}'…); tscope writes a salvage only \
                 into a new or empty directory: name another one, or add --overwrite to \
                 replace the ID.json files in it",
                names.len(),
                if names.len() == 1 { "y" } else { "ies" },
                crate::fmt::safe::cell(&first.to_string_lossy())
            )));
        }
    }
    Ok(d)
}

/// Writes every readable document into `dir` as `ID.json`, each a new file (`O_EXCL |
/// O_NOFOLLOW` in the open directory: a name someone made meanwhile, a link included, is an
/// error, never written through); with `overwrite`, a file already there is replaced by a
/// rename (a link is replaced, never followed).
pub fn salvage(
    conn: &Connection,
    dir: &crate::dirfd::Dir,
    overwrite: bool,
) -> crate::error::Result<Salvage> {
    let ids: Vec<i64> = {
        let mut stmt = conn
            .prepare("SELECT id FROM profile ORDER BY id")
            .map_err(|e| crate::failure!("--salvage: the store's index cannot be read: {e}"))?;
        let rows = stmt
            .query_map([], |r| r.get::<_, i64>(0))
            .map_err(|e| crate::failure!("--salvage: the store's index cannot be read: {e}"))?;
        rows.filter_map(Result::ok).collect()
    };
    let mut out = Salvage::default();
    for id in ids {
        let read = conn.query_row(
            "SELECT d.encoding, d.body, p.host_id FROM document d JOIN profile p ON p.id = d.id \
             WHERE d.id = ?1",
            [id],
            |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, Vec<u8>>(1)?,
                    r.get::<_, Option<Vec<u8>>>(2)?,
                ))
            },
        );
        let text = read.ok().and_then(|(enc, body, host)| {
            let host: Option<[u8; 16]> = host.and_then(|h| h.try_into().ok());
            super::codec::unpack(&enc, &body, host.as_ref()).ok()
        });
        match text {
            Some(t) => {
                let name = std::ffi::OsString::from(format!("{id}.json"));
                let written = if overwrite {
                    dir.replace(&name, &t, 0o666)
                } else {
                    dir.write_new(&name, &t, 0o666)
                };
                written.map_err(|e| {
                    let why = if e.kind() == std::io::ErrorKind::AlreadyExists {
                        "something else has this name (made while the salvage ran; a link is \
                         never written through)"
                            .to_string()
                    } else {
                        e.to_string()
                    };
                    crate::failure!("--salvage: writing '{}': {why}", dir.join(&name).display())
                })?;
                out.written += 1;
            }
            None => out.lost += 1,
        }
    }
    Ok(out)
}
