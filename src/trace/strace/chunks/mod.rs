//! The stateless half of ingestion, on its own thread: read the log in chunks of whole lines,
//! check each chunk's UTF-8 once, and parse every line ([`parse::parse_line`]) into a
//! [`Parsed`] that names its parts by byte offsets into the chunk's text. The stateful half
//! (joining halves, fd tables, inodes: [`super::import`]) then runs over the parsed lines in
//! order on the calling thread, so the two overlap on two cores.
//!
//! Memory stays flat: a chunk holds about [`CHUNK_BYTES`] of whole lines (one line longer than
//! that is gathered up to [`MAX_LINE_BYTES`]; a longer one is never held: it is counted as
//! a cut line and skipped), and only a few chunks are in flight.

use std::io::Read;

use super::parse::{self, Call, Line, LineError, Ret, MAX_LINE_BYTES};

/// Bytes of whole lines per chunk (a chunk ends at the last newline once this much is read).
pub const CHUNK_BYTES: usize = 256 << 10;

/// A part of a chunk's text, by byte offsets.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Span {
    start: u32,
    end: u32,
}

impl Span {
    /// Where `part` lies in `base`; `None` when it is not a slice of `base`.
    fn of(base: &str, part: &str) -> Option<Span> {
        let start = (part.as_ptr() as usize).checked_sub(base.as_ptr() as usize)?;
        let end = start + part.len();
        (end <= base.len()).then_some(Span {
            start: u32::try_from(start).ok()?,
            end: u32::try_from(end).ok()?,
        })
    }

    #[inline]
    fn get(self, base: &str) -> &str {
        &base[self.start as usize..self.end as usize]
    }
}

/// A [`Call`] by offsets.
#[derive(Debug, Clone, Copy, PartialEq)]
struct CallAt {
    pid: Option<u32>,
    time_s: Option<f64>,
    name: Span,
    args: Span,
    value: Option<i64>,
    path: Option<Span>,
    errno: Option<Span>,
    duration_s: Option<f64>,
}

impl CallAt {
    fn of(base: &str, c: &Call) -> Option<CallAt> {
        let opt = |s: Option<&str>| match s {
            Some(s) => Span::of(base, s).map(Some),
            None => Some(None),
        };
        Some(CallAt {
            pid: c.pid,
            time_s: c.time_s,
            name: Span::of(base, c.name)?,
            args: Span::of(base, c.args)?,
            value: c.ret.value,
            path: opt(c.ret.path)?,
            errno: opt(c.ret.errno)?,
            duration_s: c.duration_s,
        })
    }

    #[inline]
    fn get(self, base: &str) -> Call<'_> {
        Call {
            pid: self.pid,
            time_s: self.time_s,
            name: self.name.get(base),
            args: self.args.get(base),
            ret: Ret {
                value: self.value,
                path: self.path.map(|s| s.get(base)),
                errno: self.errno.map(|s| s.get(base)),
            },
            duration_s: self.duration_s,
        }
    }
}

/// A [`Line`] by offsets.
#[derive(Debug, Clone, Copy, PartialEq)]
enum LineAt {
    Call(CallAt),
    Unfinished {
        pid: Option<u32>,
        time_s: Option<f64>,
        name: Span,
        args: Span,
    },
    Resumed(CallAt),
    Signal {
        pid: Option<u32>,
        time_s: Option<f64>,
        text: Span,
    },
    Exit {
        pid: Option<u32>,
        time_s: Option<f64>,
        text: Span,
    },
}

impl LineAt {
    /// `None` when a part of `line` does not lie in `base` (then the line is parsed again
    /// where it is used: [`LineKind::Raw`]).
    fn of(base: &str, line: &Line) -> Option<LineAt> {
        Some(match line {
            Line::Call(c) => LineAt::Call(CallAt::of(base, c)?),
            Line::Resumed(c) => LineAt::Resumed(CallAt::of(base, c)?),
            Line::Unfinished {
                pid,
                time_s,
                name,
                args,
            } => LineAt::Unfinished {
                pid: *pid,
                time_s: *time_s,
                name: Span::of(base, name)?,
                args: Span::of(base, args)?,
            },
            Line::Signal { pid, time_s, text } => LineAt::Signal {
                pid: *pid,
                time_s: *time_s,
                text: Span::of(base, text)?,
            },
            Line::Exit { pid, time_s, text } => LineAt::Exit {
                pid: *pid,
                time_s: *time_s,
                text: Span::of(base, text)?,
            },
        })
    }

    #[inline]
    fn get(self, base: &str) -> Line<'_> {
        match self {
            LineAt::Call(c) => Line::Call(c.get(base)),
            LineAt::Resumed(c) => Line::Resumed(c.get(base)),
            LineAt::Unfinished {
                pid,
                time_s,
                name,
                args,
            } => Line::Unfinished {
                pid,
                time_s,
                name: name.get(base),
                args: args.get(base),
            },
            LineAt::Signal { pid, time_s, text } => Line::Signal {
                pid,
                time_s,
                text: text.get(base),
            },
            LineAt::Exit { pid, time_s, text } => Line::Exit {
                pid,
                time_s,
                text: text.get(base),
            },
        }
    }
}

/// What one line of the log is.
#[derive(Debug, Clone, Copy, PartialEq)]
enum LineKind {
    /// Blank, or one of strace's own notes (`strace: …`).
    Skip,
    /// Longer than [`MAX_LINE_BYTES`]: never held, never parsed.
    Cut,
    /// Did not parse, and why.
    Bad(&'static str),
    Parsed(LineAt),
    /// Parsed where it is used (a parse whose parts could not be named by offsets).
    Raw,
}

/// One line: its bytes in the file (newline included), its text without the trailing
/// whitespace, and what it is.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Pre {
    bytes: u64,
    text: Span,
    kind: LineKind,
}

/// A line handed to the importer.
#[derive(Debug)]
pub enum Item<'a> {
    Skip,
    /// A line over the cap, of this many bytes.
    Cut(u64),
    /// The trimmed text and its parse.
    Line(&'a str, Result<Line<'a>, LineError>),
}

/// Whole lines of the log, parsed.
#[derive(Debug, Default)]
pub struct Parsed {
    text: String,
    lines: Vec<Pre>,
}

impl Parsed {
    /// The lines in order, each with its bytes in the file.
    pub fn items(&self) -> impl Iterator<Item = (u64, Item<'_>)> {
        self.lines.iter().map(|p| {
            let item = match p.kind {
                LineKind::Skip => Item::Skip,
                LineKind::Cut => Item::Cut(p.bytes),
                LineKind::Bad(why) => Item::Line(p.text.get(&self.text), Err(LineError(why))),
                LineKind::Parsed(at) => Item::Line(p.text.get(&self.text), Ok(at.get(&self.text))),
                LineKind::Raw => {
                    let text = p.text.get(&self.text);
                    Item::Line(text, parse::parse_line(text))
                }
            };
            (p.bytes, item)
        })
    }
}

/// Reads and parses a log chunk by chunk.
#[derive(Debug)]
pub struct Chunker<R> {
    reader: R,
    /// Bytes read after the last whole line of the previous chunk.
    carry: Vec<u8>,
    eof: bool,
}

impl<R: Read> Chunker<R> {
    pub fn new(reader: R) -> Self {
        Chunker {
            reader,
            carry: Vec::new(),
            eof: false,
        }
    }

    /// Reads until `buf` holds `want` bytes or the log ends.
    fn fill(&mut self, buf: &mut Vec<u8>, want: usize) -> std::io::Result<()> {
        while !self.eof && buf.len() < want {
            let need = (want - buf.len()) as u64;
            if (&mut self.reader).take(need).read_to_end(buf)? == 0 {
                self.eof = true;
            }
        }
        Ok(())
    }

    /// The next chunk (`recycled` is an old one whose memory is reused); `None` at the end.
    pub fn next_chunk(&mut self, recycled: Option<Parsed>) -> std::io::Result<Option<Parsed>> {
        let mut out = recycled.unwrap_or_default();
        out.lines.clear();
        let mut buf = std::mem::take(&mut out.text).into_bytes();
        buf.clear();
        buf.append(&mut self.carry);
        self.fill(&mut buf, CHUNK_BYTES)?;
        // Whole lines up to the last newline; a line running past the chunk is gathered up
        // to the cap, and past the cap skipped without being held.
        let end = loop {
            if let Some(i) = memchr::memrchr(b'\n', &buf) {
                break i + 1;
            }
            if self.eof {
                break buf.len();
            }
            if buf.len() > MAX_LINE_BYTES {
                let bytes = self.skip_line(buf.len() as u64, &mut buf)?;
                out.lines.push(Pre {
                    bytes,
                    text: Span::default(),
                    kind: LineKind::Cut,
                });
                buf.clear();
                out.text = String::from_utf8(buf).unwrap_or_default();
                return Ok(Some(out));
            }
            let want = buf.len() + CHUNK_BYTES;
            self.fill(&mut buf, want.min(MAX_LINE_BYTES + 1))?;
        };
        if end == 0 {
            return Ok(None);
        }
        self.carry.extend_from_slice(&buf[end..]);
        buf.truncate(end);
        // Checked once; where invalid bytes are replaced, each line keeps the file's byte count.
        let (text, lengths) = match String::from_utf8(buf) {
            Ok(s) => (s, None),
            Err(e) => (
                String::from_utf8_lossy(e.as_bytes()).into_owned(),
                Some(line_lengths(e.as_bytes())),
            ),
        };
        out.text = text;
        split(&out.text, lengths.as_deref(), &mut out.lines);
        Ok(Some(out))
    }

    /// Reads past the rest of a line over the cap (`so_far` bytes of it already read and
    /// dropped); returns its length. What follows its newline is left in `carry`.
    fn skip_line(&mut self, mut so_far: u64, buf: &mut Vec<u8>) -> std::io::Result<u64> {
        loop {
            buf.clear();
            self.fill(buf, CHUNK_BYTES)?;
            if let Some(i) = memchr::memchr(b'\n', buf) {
                self.carry.extend_from_slice(&buf[i + 1..]);
                return Ok(so_far + i as u64 + 1);
            }
            so_far += buf.len() as u64;
            if self.eof {
                return Ok(so_far);
            }
        }
    }
}

/// Each line's length in `bytes`, newline included.
fn line_lengths(bytes: &[u8]) -> Vec<u64> {
    let mut out = Vec::new();
    let mut start = 0;
    for i in memchr::memchr_iter(b'\n', bytes) {
        out.push((i + 1 - start) as u64);
        start = i + 1;
    }
    if start < bytes.len() {
        out.push((bytes.len() - start) as u64);
    }
    out
}

/// Splits `text` into lines and parses each; `lengths` are the file's byte counts when
/// `text` had invalid bytes replaced.
fn split(text: &str, lengths: Option<&[u64]>, out: &mut Vec<Pre>) {
    let mut start = 0;
    let mut k = 0;
    while start < text.len() {
        let end =
            memchr::memchr(b'\n', &text.as_bytes()[start..]).map_or(text.len(), |i| start + i + 1);
        let line = &text[start..end];
        let bytes = lengths.map_or(line.len() as u64, |l| l.get(k).copied().unwrap_or(0));
        out.push(pre(text, line, bytes));
        start = end;
        k += 1;
    }
}

/// One line of `base`, parsed.
fn pre(base: &str, line: &str, bytes: u64) -> Pre {
    let trimmed = parse::trim_end(line);
    let text = Span::of(base, trimmed).unwrap_or_default();
    let kind = if bytes > MAX_LINE_BYTES as u64 {
        LineKind::Cut
    } else if trimmed.is_empty() || trimmed.starts_with("strace: ") {
        LineKind::Skip
    } else {
        match parse::parse_line(trimmed) {
            Ok(l) => LineAt::of(base, &l).map_or(LineKind::Raw, LineKind::Parsed),
            Err(e) => LineKind::Bad(e.0),
        }
    };
    Pre { bytes, text, kind }
}

#[cfg(test)]
mod tests;
