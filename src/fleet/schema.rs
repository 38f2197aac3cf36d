//! The store's schema, versioned by `PRAGMA user_version` and migrated forward one step at a
//! time, each step in the same transaction as its version bump, so a store is always at one
//! version, never between two. A store this build does not know (a newer version) is refused
//! rather than written.
//!
//! Version 1: `profile` (one row per document: where it came from, its normalised facts) and
//! `document` (the document itself, packed by [`super::codec`]). Version 2 adds the facts the
//! grouped replay prices reads with (`in_vm`, `counter_ns`, `tick_ns`) and an index on
//! `label`, and fills the new columns from the stored documents. Version 3 adds `host_id` (the
//! document's `machine.host_id`, its 16 bytes), filled likewise.

use rusqlite::Connection;

/// The version this build writes.
pub const VERSION: u32 = 3;

/// One step: SQL, and whether the facts are refilled from the documents afterwards.
struct Step {
    sql: &'static str,
    refill: bool,
}

/// Step `i` takes a store from version `i` to `i + 1`.
const STEPS: [Step; VERSION as usize] = [
    Step {
        sql: "CREATE TABLE profile (
                id INTEGER PRIMARY KEY,
                hash BLOB NOT NULL UNIQUE,
                kind TEXT NOT NULL,
                schema_version INTEGER NOT NULL,
                label TEXT,
                source TEXT NOT NULL,
                added_unix_s INTEGER NOT NULL,
                created_unix_s INTEGER,
                cpu_vendor TEXT,
                cpu_model TEXT,
                cpu_family INTEGER,
                cpu_model_number INTEGER,
                cpu_stepping INTEGER,
                microcode TEXT,
                hypervisor TEXT,
                dmi_product TEXT,
                kernel TEXT,
                clocksource TEXT,
                clocksources_available TEXT,
                hz REAL,
                tsc_invariant INTEGER,
                tsc_flags TEXT,
                emulate_trap INTEGER NOT NULL DEFAULT 0,
                precise_read_ns REAL,
                vdso_ns REAL,
                syscall_ns REAL,
                rdtsc_ns REAL,
                coarse_read_ns REAL,
                verdicts TEXT
              );
              CREATE TABLE document (
                id INTEGER PRIMARY KEY REFERENCES profile(id) ON DELETE CASCADE,
                encoding TEXT NOT NULL,
                body BLOB NOT NULL
              );",
        refill: false,
    },
    Step {
        sql: "ALTER TABLE profile ADD COLUMN in_vm INTEGER;
              ALTER TABLE profile ADD COLUMN counter_ns REAL;
              ALTER TABLE profile ADD COLUMN tick_ns REAL;
              CREATE INDEX profile_label ON profile(label);",
        refill: true,
    },
    Step {
        sql: "ALTER TABLE profile ADD COLUMN host_id BLOB;",
        refill: true,
    },
];

/// The store's version.
pub fn version(conn: &Connection) -> rusqlite::Result<u32> {
    conn.query_row("PRAGMA user_version", [], |r| r.get(0))
}

/// Brings the store to version `target` (≤ [`VERSION`]) in one immediate transaction that
/// re-reads the version first, so two processes opening one new store migrate it once, and a
/// killed migration leaves the store at its old version. When a step asks for it and the
/// target is [`VERSION`], `refill` re-derives every row's facts from its document, last.
pub fn migrate_to(
    conn: &mut Connection,
    target: u32,
    refill: impl Fn(&rusqlite::Transaction) -> crate::error::Result<()>,
) -> crate::error::Result<()> {
    let sql = |e: rusqlite::Error| crate::failure!("migrating the fleet store: {e}");
    let tx = conn
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(sql)?;
    let at = version(&tx).map_err(sql)?;
    crate::ensure!(
        at <= VERSION,
        "the fleet store is at schema version {at}, newer than this tscope writes \
         ({VERSION}): use a newer tscope"
    );
    if at >= target {
        return Ok(());
    }
    let steps = &STEPS[at as usize..target.min(VERSION) as usize];
    for step in steps {
        tx.execute_batch(step.sql).map_err(sql)?;
    }
    tx.pragma_update(None, "user_version", target)
        .map_err(sql)?;
    if target == VERSION && steps.iter().any(|s| s.refill) {
        refill(&tx)?;
    }
    tx.commit().map_err(sql)
}
