//! Every printed form of every result: the aligned table, Markdown, CSV and JSON, the report
//! document and its SVG charts. Nothing here measures, and no domain module renders: the
//! domain hands its serde result model to a command, the command hands it to [`export`].
//!
//! # One trait, one export
//!
//! Each result model implements [`Render`], in this module's files (`probe.rs` for
//! [`crate::probe::Profile`], `run.rs` for [`crate::workload::RunReport`], …), by answering
//! three questions:
//!
//! - [`Render::json`]: the serde model `--json` writes, the contract in docs/schema.md;
//! - [`Render::blocks`]: the human form, top to bottom, as [`Block`]s (headings, tables, lists
//!   of notes, and preformatted text where a layout is its own, like sv_mem's lines), for one
//!   [`Style`]: aligned text or Markdown;
//! - [`Render::csv`]: one [`Table`] of plain numbers (full precision, no units), the header
//!   its first record.
//!
//! [`export`] is the one `match` over [`Format`]: every command goes through it, so none can
//! forget a format, and each format is laid out the same way for every result (blocks in
//! order, the text ending in exactly one newline; RFC 4180 CSV; pretty JSON with a trailing
//! newline). A command does
//!
//! ```ignore
//! let bytes = export::export(&result, format)?;
//! export::emit(&bytes, out)?;
//! ```
//!
//! Numbers are formatted by [`crate::fmt`] only. The report document ([`ReportDocument`]) is several
//! files, not one format, so it has its own writer; it embeds other results through [`export`].

mod bars;
mod baseline;
pub mod commit;
mod compare;
mod detect;
mod document;
mod explain;
pub mod file;
pub mod fleet;
mod histogram;
mod knob;
pub mod lkp;
pub mod openmetrics;
mod pair;
mod palette;
mod probe;
mod programs;
mod record;
mod run;
pub use crate::fmt::safe;
mod saved;
mod simulate;
pub mod svg;
pub mod table;
mod vm;
pub mod vm_bench;
mod vm_count;

use std::io::Write;
use std::path::Path;

use crate::error::Context;
use serde::Serialize;

pub use document::{written, ReportDocument};
pub use probe::source_list;
pub use record::recording;
pub use saved::Saved;
pub use table::{Align, Table};

/// An output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Table,
    Markdown,
    Json,
    Csv,
    /// The Prometheus text format, valid OpenMetrics too ([`openmetrics`]); only the results
    /// that describe a machine's clock health have it ([`Render::openmetrics`]).
    OpenMetrics,
}

/// The two human forms a [`Block`] is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Aligned plain text for a terminal.
    Text,
    /// GitHub-flavoured Markdown.
    Markdown,
}

impl Style {
    pub fn is_markdown(self) -> bool {
        self == Style::Markdown
    }
}

/// One piece of a human form. Blocks are written in order with nothing between them: a layout
/// that wants an empty line says so with [`Block::Blank`].
#[derive(Debug, Clone)]
pub enum Block {
    /// A title: `### title` and an empty line in Markdown, the bare line in text.
    Heading(String),
    /// Aligned columns in text, a Markdown table in Markdown.
    Table(Table),
    /// One line per item: after `- ` in Markdown, after `text_bullet` in text (`""`, `"  "`,
    /// `"warning: "`).
    List {
        text_bullet: &'static str,
        items: Vec<String>,
    },
    /// Written as is in both styles (already newline-terminated).
    Text(String),
    /// An empty line.
    Blank,
}

impl Block {
    /// A [`Block::List`].
    pub fn list(text_bullet: &'static str, items: Vec<String>) -> Block {
        Block::List { text_bullet, items }
    }

    /// Writes the block; each line escaped ([`safe`]) and cut past
    /// [`table::MAX_LINE_CHARS`] with a marker, so no string from a file makes a line that
    /// cannot be read.
    fn write(&self, style: Style, out: &mut String) {
        let md = style.is_markdown();
        let line = |s: &str| table::cut_to(&safe::cell(s), table::MAX_LINE_CHARS);
        match self {
            Block::Heading(t) if md => *out += &format!("### {}\n\n", line(t)),
            Block::Heading(t) => *out += &format!("{}\n", line(t)),
            Block::Table(t) if md => *out += &t.markdown(),
            Block::Table(t) => *out += &t.text(),
            Block::List { text_bullet, items } => {
                let bullet = if md { "- " } else { text_bullet };
                for i in items {
                    *out += &format!("{bullet}{}\n", line(i));
                }
            }
            Block::Text(s) => {
                let text = safe::text(s);
                for l in text.split_inclusive('\n') {
                    let (body, end) = l.strip_suffix('\n').map_or((l, ""), |b| (b, "\n"));
                    *out += &table::cut_to(body, table::MAX_LINE_CHARS);
                    *out += end;
                }
            }
            Block::Blank => out.push('\n'),
        }
    }
}

/// A document as `--json` writes it: its `kind` tag first, then its own fields (among them
/// `schema_version`).
#[derive(Debug, Serialize)]
pub struct Tagged<T> {
    pub kind: &'static str,
    #[serde(flatten)]
    pub inner: T,
}

impl<T> Tagged<T> {
    pub fn new(kind: crate::input::Kind, inner: T) -> Self {
        Tagged {
            kind: kind.tag(),
            inner,
        }
    }
}

/// A result that prints: the three answers [`export`] needs (see the module doc).
pub trait Render {
    /// The serde model `--json` writes.
    fn json(&self) -> impl Serialize + '_;
    /// The kind `--json` tags an object document with (`None`: the result tags its own, or is
    /// not a document: an array of rows, an explanation, a histogram).
    fn kind(&self) -> Option<crate::input::Kind> {
        None
    }
    /// The table or Markdown form, top to bottom.
    fn blocks(&self, style: Style) -> Vec<Block>;
    /// The `--csv` form: one table of plain numbers.
    fn csv(&self) -> Table;
    /// The `--openmetrics` form ([`openmetrics`]), for the results that have one.
    fn openmetrics(&self) -> Option<String> {
        None
    }
}

/// A result in one format: the only way a command turns a result into bytes.
/// The human forms and CSV are written in ASCII when the locale is not UTF-8
/// ([`crate::fmt::for_locale`]); JSON and OpenMetrics are always UTF-8.
pub fn export<R: Render + ?Sized>(result: &R, format: Format) -> crate::error::Result<Vec<u8>> {
    let text = match format {
        Format::Json => {
            return match result.kind() {
                Some(k) => json(&Tagged::new(k, result.json())),
                None => json(&result.json()),
            }
        }
        Format::OpenMetrics => match result.openmetrics() {
            Some(text) => return Ok(text.into_bytes()),
            None => crate::fail!("{NO_OPENMETRICS}"),
        },
        Format::Csv => result.csv().csv(),
        Format::Table => layout(&result.blocks(Style::Text), Style::Text),
        Format::Markdown => layout(&result.blocks(Style::Markdown), Style::Markdown),
    };
    Ok(match crate::fmt::for_locale(&text) {
        std::borrow::Cow::Borrowed(_) => text.into_bytes(),
        std::borrow::Cow::Owned(ascii) => ascii.into_bytes(),
    })
}

/// Blocks written in order; a non-empty result ends in exactly one newline.
pub fn layout(blocks: &[Block], style: Style) -> String {
    let mut out = String::new();
    for b in blocks {
        b.write(style, &mut out);
    }
    if !out.is_empty() {
        out.truncate(out.trim_end().len());
        out.push('\n');
    }
    out
}

/// Pretty JSON with a trailing newline.
pub fn json<T: Serialize>(v: &T) -> crate::error::Result<Vec<u8>> {
    let text = serde_json::to_string_pretty(v).context("serialising JSON")?;
    let mut out = safe::json(&text).into_owned().into_bytes();
    out.push(b'\n');
    Ok(out)
}

/// Why `--openmetrics` is refused for a result without that form.
pub const NO_OPENMETRICS: &str = "only probe, detect and report results have an OpenMetrics \
    form (--openmetrics); use --json, --markdown or --csv";

/// Why output meant for a standard output closed at start (`>&-`) is refused (exit 2).
pub const STDOUT_CLOSED: &str = "standard output is closed (>&-), so the output would be \
    lost; redirect it (> FILE, or > /dev/null to discard it) or write to a file with -o";

/// Why output written to a pipe whose reader had gone before it took a byte (`… | true`) is
/// refused (exit 2).
pub const STDOUT_UNREAD: &str = "standard output is a pipe nobody reads (its reader exited \
    before taking a byte), so the output is lost; pipe into a command that reads it, or write \
    to a file with -o";

/// Writes `bytes` to `out` ([`file::write`]: whole or not at all for a regular file, in place
/// for a device or FIFO, never replacing what is not a plain file) or to stdout ([`stdout`]).
pub fn emit(bytes: &[u8], out: Option<&Path>) -> crate::error::Result<()> {
    match out {
        Some(path) => file::write(path, bytes),
        None => stdout(bytes),
    }
}

/// Writes `bytes` to stdout, unbuffered, so each failure is seen where it happens:
/// - a reader that goes away after taking some of the output (`tscope probe | head`) is not
///   an error: it took what it wanted;
/// - a pipe whose reader went away before taking a byte (`… | true`), a full device
///   (`> /dev/full`) and a stdout closed at start (`>&-`, which Rust's runtime hides behind
///   /dev/null; [`crate::sys::stdio`] sees it) are: the output is lost (exit 2).
pub fn stdout(bytes: &[u8]) -> crate::error::Result<()> {
    use std::os::fd::AsFd;
    if crate::sys::stdio::stdout_closed_at_start() {
        crate::fail!("{STDOUT_CLOSED}");
    }
    // Whatever the runtime buffered goes first; then the bytes go straight to descriptor 1 (a
    // duplicate of it), whose writes return what the pipe or device accepted.
    let mut buffered = std::io::stdout().lock();
    let mut fd = buffered
        .flush()
        .and_then(|()| buffered.as_fd().try_clone_to_owned())
        .map(std::fs::File::from)
        .context("writing to stdout")?;
    let mut written = 0;
    while written < bytes.len() {
        match fd.write(&bytes[written..]) {
            Ok(0) => crate::fail!("writing to stdout: it accepts no more bytes"),
            Ok(n) => written += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe && written == 0 => {
                crate::fail!("{STDOUT_UNREAD}")
            }
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(()),
            Err(e) => return Err(e).context("writing to stdout"),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_lay_out_in_both_styles() {
        let mut t = Table::new(&[("a", Align::Left), ("b", Align::Right)]);
        t.row(vec!["x".into(), "1".into()]);
        let blocks = [
            Block::Heading("title".into()),
            Block::list("  ", vec!["one".into(), "two".into()]),
            Block::Table(t),
            Block::Blank,
            Block::Text("as is\n\n\n".into()),
        ];
        assert_eq!(
            layout(&blocks, Style::Text),
            "title\n  one\n  two\na  b\n-  -\nx  1\n\nas is\n"
        );
        assert_eq!(
            layout(&blocks, Style::Markdown),
            "### title\n\n- one\n- two\n| a | b |\n| --- | ---: |\n| x | 1 |\n\nas is\n"
        );
        assert_eq!(layout(&[], Style::Text), "");
    }
}
