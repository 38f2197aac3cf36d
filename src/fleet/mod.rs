//! Many machines: the documents tscope wrote on each (`probe --json`, `detect --json`,
//! `report.json`) in one SQLite file, and the grouped table a default is chosen from.
//!
//! - [`ingest`]: what `fleet add` reads (files, directories, NDJSON on stdin), prepared on
//!   every CPU and stored one file per transaction;
//! - [`normalise`]: a document of any version tscope wrote, reduced to its facts;
//! - [`codec`]: the stored document, canonical and deflated with a preset dictionary;
//! - [`columns`]: the store's fact columns and the facts they hold;
//! - [`schema`]: the store's versioned schema and its forward migrations;
//! - [`file`](mod@file): the store's file: created never through a link, read-only opens, its length
//!   against its header;
//! - [`store`]: the store itself (WAL, a busy timeout, transactions);
//! - [`replay`]: each machine's speedups through `sim`'s replay, memoised by rounded costs;
//! - [`decisions`]: the groups and their spreads ([`decisions::FleetReport`]).
//!
//! Nothing here prints; `commands::fleet` exports the results.

pub mod codec;
pub mod columns;
pub mod decisions;
pub mod file;
pub mod ingest;
pub mod integrity;
pub mod normalise;
pub mod replay;
pub mod schema;
pub mod store;

pub use decisions::{FleetReport, GroupBy, ReportConfig};
pub use ingest::AddSummary;
pub use store::{Row, Selector, Store};

/// The store `fleet` commands use without `--db`.
pub const DEFAULT_DB: &str = "tscope-fleet.db";

/// `fleet ls` and `fleet export`: the stored rows.
#[derive(Debug, Clone)]
pub struct Listing {
    pub rows: Vec<Row>,
}

#[cfg(test)]
mod tests;
