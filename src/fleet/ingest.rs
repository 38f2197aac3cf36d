//! What `fleet add` reads: files (a JSON document, or several, one per line), directories
//! (their `*.json` and `*.ndjson` files, recursively, in name order) and NDJSON on stdin (one
//! document per line). Files are read through [`crate::input`] (regular files only, bounded);
//! the documents are parsed and packed on every CPU, then stored one file (or one batch of
//! stdin lines) per transaction, in order.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::Serialize;

use super::store::{prepare, prepare_value, Prepared, Store};

/// One unit of work: a file or a stdin line, and what it holds or why it is refused.
#[derive(Debug)]
pub struct Unit {
    pub source: String,
    pub docs: Result<Vec<Prepared>, String>,
}

/// What `fleet add` did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct AddSummary {
    pub store: String,
    /// Files and stdin lines read.
    pub units: usize,
    /// Documents stored now.
    pub added: usize,
    /// Documents already in the store (same content hash).
    pub present: usize,
    /// Each file or line refused, and why.
    pub failed: Vec<Failure>,
}

/// A file or stdin line refused.
#[derive(Debug, Clone, Serialize)]
pub struct Failure {
    pub source: String,
    pub error: String,
}

/// The files `path` names: itself, or a directory's `*.json`/`*.ndjson` files, recursively
/// (symbolic links to directories are not followed), in name order. A path that cannot be
/// read is a failure of its own.
pub fn expand(path: &Path, files: &mut Vec<PathBuf>, failed: &mut Vec<Failure>) {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) => {
            failed.push(Failure {
                source: path.display().to_string(),
                error: format!("cannot read it: {}", crate::input::why_unreadable(path, &e)),
            });
            return;
        }
    };
    if !meta.is_dir() {
        files.push(path.to_path_buf());
        return;
    }
    let entries = match std::fs::read_dir(path) {
        Ok(d) => d,
        Err(e) => {
            failed.push(Failure {
                source: path.display().to_string(),
                error: format!("cannot list the directory: {e}"),
            });
            return;
        }
    };
    let mut names: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    names.sort();
    for p in names {
        let is_dir = std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_dir());
        let json = p.extension().is_some_and(|x| x == "json" || x == "ndjson");
        if is_dir {
            expand(&p, files, failed);
        } else if json {
            files.push(p);
        }
    }
}

/// Every JSON value in `text` (one document, or several separated by white space: NDJSON).
pub fn documents(text: &[u8]) -> Result<Vec<Prepared>, String> {
    let mut out = Vec::new();
    for (i, v) in serde_json::Deserializer::from_slice(text)
        .into_iter::<serde_json::Value>()
        .enumerate()
    {
        let v = v.map_err(|e| {
            format!(
                "is not JSON (line {}, column {}): {e}",
                e.line(),
                e.column()
            )
        })?;
        let p = prepare_value(&v).map_err(|e| {
            if i == 0 {
                e
            } else {
                format!("document {}: {e}", i + 1)
            }
        })?;
        out.push(p);
    }
    if out.is_empty() {
        return Err("holds no JSON document".into());
    }
    Ok(out)
}

/// `f` over `items` on every CPU, results in order.
pub fn parallel<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = items.len().div_ceil(threads).max(1);
    let f = &f;
    std::thread::scope(|s| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|part| s.spawn(move || part.iter().map(f).collect::<Vec<R>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    })
}

/// Reads and prepares `files` on every CPU.
pub fn prepare_files(files: &[PathBuf]) -> Vec<Unit> {
    parallel(files, |p| Unit {
        source: p.display().to_string(),
        docs: crate::input::read_document(p, "document")
            .map_err(|e| format!("{e:#}"))
            .and_then(|text| documents(&text)),
    })
}

/// Documents this process committed to a store, for the line an interruption prints.
static COMMITTED: AtomicUsize = AtomicUsize::new(0);

/// What an interrupted `fleet add` kept: the documents committed before the signal.
pub fn committed_note() -> String {
    let n = COMMITTED.load(Ordering::Relaxed);
    if n == 0 {
        "nothing stored".into()
    } else {
        format!(
            "{n} document(s) were committed before it; the same `fleet add` again stores the \
             rest (documents already stored are recognised by their content)"
        )
    }
}

/// Stores `units` in order, each in one transaction, into `summary`.
pub fn store_units(
    store: &mut Store,
    units: Vec<Unit>,
    label: Option<&str>,
    summary: &mut AddSummary,
) -> crate::error::Result<()> {
    for u in units {
        summary.units += 1;
        match u.docs {
            Ok(docs) => {
                let a = store.add(&docs, label, &u.source)?;
                summary.added += a.new;
                COMMITTED.fetch_add(a.new, Ordering::Relaxed);
                summary.present += a.present;
            }
            Err(error) => summary.failed.push(Failure {
                source: u.source,
                error,
            }),
        }
    }
    Ok(())
}

/// Stores a batch of stdin lines: the good ones in one transaction, the bad ones reported.
fn store_lines(
    store: &mut Store,
    units: Vec<Unit>,
    label: Option<&str>,
    summary: &mut AddSummary,
) -> crate::error::Result<()> {
    let mut good: Vec<(String, Vec<Prepared>)> = Vec::new();
    for u in units {
        summary.units += 1;
        match u.docs {
            Ok(docs) => good.push((u.source, docs)),
            Err(error) => summary.failed.push(Failure {
                source: u.source,
                error,
            }),
        }
    }
    let items: Vec<(&str, &[Prepared])> = good
        .iter()
        .map(|(s, d)| (s.as_str(), d.as_slice()))
        .collect();
    let a = store.add_many(&items, label)?;
    summary.added += a.new;
    COMMITTED.fetch_add(a.new, Ordering::Relaxed);
    summary.present += a.present;
    Ok(())
}

/// Lines per batch of stdin prepared at once.
const STDIN_BATCH: usize = 512;

/// The longest stdin line read (a profile is well under 1 MiB; a report a few MiB).
pub const MAX_LINE: u64 = 16 << 20;

/// Reads NDJSON from `input` (one document per line, each at most [`MAX_LINE`] bytes; blank
/// lines skipped), storing the good lines of each
/// batch of 512 in one transaction (a bad line is reported and stored in none).
pub fn add_stream(
    store: &mut Store,
    input: impl BufRead,
    label: Option<&str>,
    summary: &mut AddSummary,
) -> crate::error::Result<()> {
    let mut input = input.take(u64::MAX);
    let mut batch: Vec<(usize, Vec<u8>)> = Vec::new();
    let mut line_no = 0usize;
    let flush = |batch: &mut Vec<(usize, Vec<u8>)>,
                 store: &mut Store,
                 summary: &mut AddSummary|
     -> crate::error::Result<()> {
        let units = parallel(batch, |(n, text)| Unit {
            source: format!("stdin:{n}"),
            docs: prepare(text).map(|p| vec![p]),
        });
        batch.clear();
        store_lines(store, units, label, summary)
    };
    loop {
        let mut line = Vec::new();
        input.set_limit(MAX_LINE + 1);
        let n = input
            .read_until(b'\n', &mut line)
            .map_err(|e| crate::failure!("reading stdin: {e}"))?;
        if n == 0 {
            break;
        }
        line_no += 1;
        if line.len() as u64 > MAX_LINE {
            flush(&mut batch, store, summary)?;
            crate::fail!(
                "stdin line {line_no} is over {} MiB: not a document tscope wrote (stopped \
                 there)",
                MAX_LINE >> 20
            );
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        batch.push((line_no, line));
        if batch.len() >= STDIN_BATCH {
            flush(&mut batch, store, summary)?;
        }
    }
    flush(&mut batch, store, summary)
}
