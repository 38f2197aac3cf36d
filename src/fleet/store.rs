//! The fleet store: one SQLite file (WAL journal, a busy timeout, so two `fleet add` at once
//! both finish), one row per document with its normalised facts, and the document itself.
//! Everything a file brings is written in one transaction: a killed add leaves the store as
//! it was before that file.

use std::path::{Path, PathBuf};

use rusqlite::types::Value as Sql;
use rusqlite::{params, Connection, OptionalExtension, Transaction};
use sha2::{Digest, Sha256};

use super::codec;
use super::columns::{columns, fact_values, facts_from, host_bytes, FACT_COLUMNS, ORIGIN_COLUMNS};
use super::normalise::{normalise, Facts, Kind};
use super::schema;

/// How long a writer waits for another one before giving up.
const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// Waits for another writer's lock: 10 ms per call, saying so once on stderr after a second,
/// giving up after [`BUSY_TIMEOUT`] (SQLite then answers "database is locked").
fn wait_for_lock(calls: i32) -> bool {
    const STEP: std::time::Duration = std::time::Duration::from_millis(10);
    if calls >= 100 {
        say_waiting();
    }
    std::thread::sleep(STEP);
    STEP * (calls.max(0) as u32) < BUSY_TIMEOUT
}

/// Says once per process that the store is locked and tscope is waiting.
fn say_waiting() {
    static SAID: std::sync::Once = std::sync::Once::new();
    SAID.call_once(|| {
        eprintln!(
            "tscope: the fleet store is locked by another writer; waiting (up to {} s)",
            BUSY_TIMEOUT.as_secs()
        );
    });
}

/// A document ready to store: parsed, recognised, hashed and packed (the costly part, done
/// before the write transaction, on any thread).
#[derive(Debug, Clone)]
pub struct Prepared {
    pub hash: [u8; 32],
    pub kind: Kind,
    pub schema_version: u64,
    pub facts: Facts,
    pub body: Vec<u8>,
}

/// Parses, recognises and packs one JSON document; the error says why it is not one `fleet
/// add` takes.
pub fn prepare(text: &[u8]) -> Result<Prepared, String> {
    let v: serde_json::Value = serde_json::from_slice(text).map_err(|e| {
        format!(
            "is not JSON (line {}, column {}): {e}",
            e.line(),
            e.column()
        )
    })?;
    prepare_value(&v)
}

/// [`prepare`] of a parsed document.
pub fn prepare_value(v: &serde_json::Value) -> Result<Prepared, String> {
    let n = normalise(v)?;
    let json = codec::canonical(v).map_err(|e| e.to_string())?;
    let hash: [u8; 32] = Sha256::digest(&json).into();
    let body = codec::pack(v).map_err(|e| e.to_string())?;
    Ok(Prepared {
        hash,
        kind: n.kind,
        schema_version: n.schema_version,
        facts: n.facts,
        body,
    })
}

/// One stored row: where it came from and its facts.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Row {
    pub id: i64,
    /// The SHA-256 of the document's canonical JSON, hex.
    pub hash: String,
    #[serde(serialize_with = "kind_word")]
    pub kind: Kind,
    pub schema_version: u64,
    pub label: Option<String>,
    pub source: String,
    pub added_unix_s: i64,
    #[serde(flatten)]
    pub facts: Facts,
}

/// What adding one file did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Added {
    pub new: usize,
    /// Documents already stored (same hash): left as they were.
    pub present: usize,
}

/// Which rows `fleet rm` removes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selector {
    Id(i64),
    /// A hash prefix (hex, at least 6 digits).
    Hash(String),
    Label(String),
}

/// An open store.
#[derive(Debug)]
pub struct Store {
    conn: Connection,
    pub path: PathBuf,
    /// What the open's `quick_check` found wrong; empty for a sound store. A damaged store is
    /// read, never written ([`super::integrity`]).
    pub damaged: Vec<String>,
}

fn sql(path: &Path) -> impl Fn(rusqlite::Error) -> crate::error::Error + '_ {
    move |e| match e.sqlite_error_code() {
        // Damage the open's quick_check never reaches: the header or the schema itself.
        Some(rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase) => {
            crate::failure!("{}", super::integrity::unreadable(path, &e.to_string()))
        }
        _ => crate::failure!("fleet store '{}': {e}", path.display()),
    }
}

/// Re-derives every row's facts from its stored document (a migration that added facts).
fn refill(tx: &Transaction) -> crate::error::Result<()> {
    let err = |e: rusqlite::Error| crate::failure!("refilling the fleet store's facts: {e}");
    let mut read = tx
        .prepare(
            "SELECT p.id, d.encoding, d.body, p.label, p.host_id FROM profile p \
             JOIN document d ON d.id = p.id",
        )
        .map_err(err)?;
    type Stored = (i64, String, Vec<u8>, Option<String>, Option<Vec<u8>>);
    let rows: Vec<Stored> = read
        .query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .map_err(err)?
        .collect::<rusqlite::Result<_>>()
        .map_err(err)?;
    let set: Vec<String> = FACT_COLUMNS
        .iter()
        .chain(&ORIGIN_COLUMNS)
        .map(|c| format!("{c} = ?"))
        .collect();
    let mut write = tx
        .prepare(&format!(
            "UPDATE profile SET {} WHERE id = ?",
            set.join(", ")
        ))
        .map_err(err)?;
    for (id, encoding, body, label, host) in rows {
        let text = codec::unpack(&encoding, &body, host_bytes(host).as_ref())?;
        let v: serde_json::Value = serde_json::from_slice(&text)
            .map_err(|e| crate::failure!("stored document {id} is not JSON: {e}"))?;
        let n = normalise(&v).map_err(|e| crate::failure!("stored document {id} {e}"))?;
        let mut values = fact_values(n.kind, n.schema_version, &n.facts, label.as_deref());
        values.push(Sql::Integer(id));
        write
            .execute(rusqlite::params_from_iter(values))
            .map_err(err)?;
    }
    Ok(())
}

impl Store {
    /// Opens (or creates) the store at `path` and brings its schema to this build's version.
    /// A path that exists and is not a regular file (a directory, FIFO, device, socket) is
    /// refused, never replaced.
    pub fn open(path: &Path) -> crate::error::Result<Store> {
        Store::open_at(path, schema::VERSION)
    }

    /// [`Store::open`] at schema version `version` (the migration tests make old stores).
    pub fn open_at(path: &Path, version: u32) -> crate::error::Result<Store> {
        regular_file(path)?;
        let e = sql(path);
        let mut conn = super::file::open_write(path, &e)?;
        conn.busy_handler(Some(wait_for_lock)).map_err(&e)?;
        // Two adds opening one new store at once: the switch to WAL needs the file to itself,
        // and SQLite answers SQLITE_BUSY there without calling the busy handler; wait and
        // retry, within the same timeout.
        let started = std::time::Instant::now();
        let mode: String = loop {
            match set_wal(&conn) {
                Err(rusqlite::Error::SqliteFailure(f, _))
                    if f.code == rusqlite::ErrorCode::DatabaseBusy
                        && started.elapsed() < BUSY_TIMEOUT =>
                {
                    if started.elapsed() >= std::time::Duration::from_secs(1) {
                        say_waiting();
                    }
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                r => break r.map_err(&e)?,
            }
        };
        crate::ensure!(
            mode.eq_ignore_ascii_case("wal"),
            "fleet store '{}': cannot switch to the WAL journal (got '{mode}')",
            path.display()
        );
        conn.execute_batch("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;")
            .map_err(&e)?;
        let mut damaged = super::integrity::problems(&conn, "quick_check", 10);
        damaged.extend(super::file::header_problems(path));
        if damaged.is_empty() {
            let at = schema::version(&conn).map_err(&e)?;
            if at > 0 && at < version {
                super::integrity::backup(&conn, path, at)?;
            }
            schema::migrate_to(&mut conn, version, refill)
                .map_err(|x| crate::failure!("fleet store '{}': {x}", path.display()))?;
        }
        Ok(Store {
            conn,
            path: path.to_path_buf(),
            damaged,
        })
    }

    /// Opens an existing store for reading only (`SQLITE_OPEN_READONLY`; `immutable` where
    /// the file system is read-only or this user cannot make its `-shm`): no migration, no
    /// write. The caller opens it with [`Store::open`] when [`Store::version`] is not this
    /// build's.
    pub fn open_read(path: &Path) -> crate::error::Result<Store> {
        regular_file(path)?;
        let e = sql(path);
        let conn = super::file::open_read(path, &e)?;
        let mut damaged = super::integrity::problems(&conn, "quick_check", 10);
        damaged.extend(super::file::header_problems(path));
        Ok(Store {
            conn,
            path: path.to_path_buf(),
            damaged,
        })
    }

    /// `Err` with the way out when the store is damaged.
    pub fn writable(&self) -> crate::error::Result<()> {
        crate::ensure!(
            self.damaged.is_empty(),
            "{}",
            super::integrity::refusal(&self.path, &self.damaged)
        );
        Ok(())
    }

    /// The full `PRAGMA integrity_check` (at most 100 problems; empty: sound)
    /// and the file's length against its header.
    pub fn check(&self) -> Vec<String> {
        let mut found = super::integrity::problems(&self.conn, "integrity_check", 100);
        found.extend(super::file::header_problems(&self.path));
        found
    }

    /// Writes every readable document into `dir` ([`super::integrity::salvage`]).
    pub fn salvage(
        &self,
        dir: &crate::dirfd::Dir,
        overwrite: bool,
    ) -> crate::error::Result<super::integrity::Salvage> {
        super::integrity::salvage(&self.conn, dir, overwrite)
    }

    /// The store's schema version.
    pub fn version(&self) -> crate::error::Result<u32> {
        schema::version(&self.conn).map_err(sql(&self.path))
    }

    /// Stores one file's documents in one transaction; a document already stored (same hash)
    /// is left as it was.
    pub fn add(
        &mut self,
        docs: &[Prepared],
        label: Option<&str>,
        source: &str,
    ) -> crate::error::Result<Added> {
        self.add_many(&[(source, docs)], label)
    }

    /// Stores several sources' documents in one transaction ([`Store::add`] of each).
    pub fn add_many(
        &mut self,
        items: &[(&str, &[Prepared])],
        label: Option<&str>,
    ) -> crate::error::Result<Added> {
        self.writable()?;
        let e = sql(&self.path);
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(&e)?;
        let mut added = Added::default();
        {
            let cols = columns();
            let marks = vec!["?"; FACT_COLUMNS.len() + ORIGIN_COLUMNS.len() + 3].join(", ");
            let mut insert = tx
                .prepare_cached(&format!(
                    "INSERT INTO profile (hash, source, added_unix_s, {cols}) VALUES ({marks}) \
                     ON CONFLICT(hash) DO NOTHING"
                ))
                .map_err(&e)?;
            let mut body = tx
                .prepare_cached("INSERT INTO document (id, encoding, body) VALUES (?, ?, ?)")
                .map_err(&e)?;
            for (source, docs) in items {
                for d in docs.iter() {
                    let mut values = vec![
                        Sql::Blob(d.hash.to_vec()),
                        Sql::Text((*source).into()),
                        Sql::Integer(now),
                    ];
                    values.extend(fact_values(d.kind, d.schema_version, &d.facts, label));
                    if insert
                        .execute(rusqlite::params_from_iter(values))
                        .map_err(&e)?
                        == 0
                    {
                        added.present += 1;
                        continue;
                    }
                    let id = tx.last_insert_rowid();
                    body.execute(params![id, codec::ENCODING, d.body])
                        .map_err(&e)?;
                    added.new += 1;
                }
            }
        }
        tx.commit().map_err(&e)?;
        Ok(added)
    }

    /// Every row, oldest first.
    pub fn rows(&self) -> crate::error::Result<Vec<Row>> {
        let e = sql(&self.path);
        let mut q = self
            .conn
            .prepare(&format!(
                "SELECT id, hash, source, added_unix_s, {} FROM profile ORDER BY id",
                columns()
            ))
            .map_err(&e)?;
        let rows = q
            .query_map([], |r| {
                let hash: Vec<u8> = r.get(1)?;
                let origin = 4 + FACT_COLUMNS.len();
                let kind: String = r.get(origin)?;
                Ok(Row {
                    id: r.get(0)?,
                    hash: hash.iter().map(|b| format!("{b:02x}")).collect(),
                    kind: Kind::from_short(&kind).unwrap_or(Kind::Probe),
                    schema_version: r.get::<_, i64>(origin + 1)?.max(0) as u64,
                    label: r.get(origin + 2)?,
                    source: r.get(2)?,
                    added_unix_s: r.get(3)?,
                    facts: facts_from(r, 4)?,
                })
            })
            .map_err(&e)?
            .collect::<rusqlite::Result<Vec<Row>>>()
            .map_err(&e)?;
        Ok(rows)
    }

    /// The document stored as row `id`, as its canonical JSON.
    pub fn document(&self, id: i64) -> crate::error::Result<Option<Vec<u8>>> {
        let found: Option<(String, Vec<u8>, Option<Vec<u8>>)> = self
            .conn
            .query_row(
                "SELECT d.encoding, d.body, p.host_id FROM document d \
                 JOIN profile p ON p.id = d.id WHERE d.id = ?",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()
            .map_err(sql(&self.path))?;
        found
            .map(|(enc, body, host)| codec::unpack(&enc, &body, host_bytes(host).as_ref()))
            .transpose()
    }

    /// Removes the rows `selectors` name (and their documents) in one transaction; returns how
    /// many each removed, in order.
    pub fn remove(&mut self, selectors: &[Selector]) -> crate::error::Result<Vec<usize>> {
        self.writable()?;
        let e = sql(&self.path);
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(&e)?;
        let mut counts = Vec::new();
        for s in selectors {
            let n = match s {
                Selector::Id(id) => tx.execute("DELETE FROM profile WHERE id = ?", [id]),
                Selector::Hash(prefix) => tx.execute(
                    "DELETE FROM profile WHERE substr(lower(hex(hash)), 1, length(?1)) = lower(?1)",
                    [prefix],
                ),
                Selector::Label(l) => tx.execute("DELETE FROM profile WHERE label = ?", [l]),
            }
            .map_err(&e)?;
            counts.push(n);
        }
        tx.commit().map_err(&e)?;
        Ok(counts)
    }

    /// The store file's size in bytes with its WAL (what the store takes on disk now).
    pub fn bytes(&self) -> u64 {
        let size = |p: &Path| std::fs::metadata(p).map_or(0, |m| m.len());
        let mut wal = self.path.as_os_str().to_owned();
        wal.push("-wal");
        size(&self.path) + size(Path::new(&wal))
    }

    /// Moves the WAL's pages into the main file (what a checkpoint at close does).
    pub fn checkpoint(&self) -> crate::error::Result<()> {
        self.conn
            .execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
            .map_err(sql(&self.path))
    }
}

/// A store path that exists must be a regular file (or a link to one), never replaced.
fn regular_file(path: &Path) -> crate::error::Result<()> {
    if let Ok(meta) = std::fs::metadata(path) {
        crate::ensure!(
            meta.is_file(),
            "fleet store '{}' exists and is not a regular file (a directory, FIFO, device or \
             socket): give --db a file path",
            path.display()
        );
    }
    Ok(())
}

/// Documents of 2 to 4 KB pack ten to a 32 KiB page (a 4 KiB page holds one and wastes the
/// rest; the size takes effect on a new store only, before the WAL is on); then the WAL
/// journal. Returns the journal mode SQLite reports.
fn set_wal(conn: &Connection) -> rusqlite::Result<String> {
    conn.execute_batch("PRAGMA page_size = 32768")?;
    conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
}

/// A row's kind as the store keeps it: its [`Kind::short`] word (`probe`, `detect`, `report`).
fn kind_word<S: serde::Serializer>(k: &Kind, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(k.short())
}
