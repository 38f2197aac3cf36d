//! Reading `strace -f -tt -T -y` output: [`parse`] parses one line without allocating;
//! [`Joiner`] pairs each `<unfinished ...>` with its `<... resumed>` per task, so that what
//! comes out is one complete [`Call`] per syscall, in completion order. [`Call`] is the one call
//! type from parsing through joining to [`import`]: it borrows from the line (or, for a joined
//! call, from the joiner), so a line costs no allocation. Memory is bounded by the number of
//! tasks with a call in flight, not by the length of the trace.
//!
//! Not to be confused with [`record`], which runs a command under strace to write such a log.

pub mod chunks;
mod fxhash;
pub mod import;
pub mod parse;
pub mod record;

use fxhash::FxHashMap;

pub use parse::{Call, Ret};
use parse::{Line, LineError};

/// What one line contributed.
#[derive(Debug, Clone, PartialEq)]
pub enum Event<'a> {
    /// A call is complete.
    Call(Call<'a>),
    /// The first half of `name` was stored; nothing to emit yet.
    Pending { pid: Option<u32>, name: &'a str },
    /// A signal was delivered to `pid`.
    Signal { pid: Option<u32> },
    /// `pid` exited or was killed.
    Exit { pid: Option<u32> },
}

/// A line that could not be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("line {line}: {what}")]
pub struct JoinError {
    pub line: u64,
    pub what: String,
}

/// Pairs unfinished and resumed halves, per task.
///
/// The first half of a call is kept as its line's text and parsed again when its task resumes
/// it: no owned copy of a call exists, and the text buffers are reused, so joining allocates
/// only while the number of calls in flight grows.
#[derive(Debug, Default)]
pub struct Joiner {
    /// The `<unfinished ...>` line of each task with a call in flight.
    pending: FxHashMap<Option<u32>, String>,
    /// Line buffers no longer pending, for the next unfinished line.
    spare: Vec<String>,
    /// The joined arguments of the last resumed call ([`Joiner::feed`] lends them).
    joined: String,
    line: u64,
    /// Calls resumed without a matching unfinished half (the trace started mid-call).
    pub orphan_resumes: u64,
}

impl Joiner {
    pub fn new() -> Self {
        Self::default()
    }

    /// The number of the line fed last (from 1).
    pub fn line(&self) -> u64 {
        self.line
    }

    /// Counts a line the caller skipped without feeding it (line numbers stay the file's).
    pub fn skip_line(&mut self) {
        self.line += 1;
    }

    /// Feeds the next line (numbered from 1 in order of feeding). A complete call borrows from
    /// `text`, or for a resumed call from the joiner: the common case allocates nothing.
    pub fn feed<'a>(&'a mut self, text: &'a str) -> Result<Event<'a>, JoinError> {
        self.feed_parsed(text, parse::parse_line(text))
    }

    /// [`Joiner::feed`] with the line already parsed (`parsed` is `parse_line(text)`, done
    /// elsewhere: on the parsing thread of [`chunks`]).
    pub fn feed_parsed<'a>(
        &'a mut self,
        text: &'a str,
        parsed: Result<Line<'a>, LineError>,
    ) -> Result<Event<'a>, JoinError> {
        self.line += 1;
        let line = self.line;
        let err = |e: LineError| JoinError {
            line,
            what: e.0.to_string(),
        };
        match parsed.map_err(err)? {
            Line::Call(c) => Ok(Event::Call(c)),
            Line::Unfinished { pid, name, .. } => {
                let mut kept = self.spare.pop().unwrap_or_default();
                kept.clear();
                kept.push_str(text);
                if let Some(replaced) = self.pending.insert(pid, kept) {
                    self.spare.push(replaced);
                }
                Ok(Event::Pending { pid, name })
            }
            Line::Resumed(mut call) => {
                let second = call.args.trim();
                let second = second
                    .strip_prefix(',')
                    .map_or(second, |s| s.trim_start_matches(',').trim());
                self.joined.clear();
                let first = self.pending.remove(&call.pid);
                match first.as_deref().map(parse::parse_line) {
                    Some(Ok(Line::Unfinished {
                        time_s, name, args, ..
                    })) if name == call.name => {
                        call.time_s = time_s;
                        self.joined.push_str(args);
                    }
                    _ => self.orphan_resumes += 1,
                }
                if !self.joined.is_empty() && !second.is_empty() {
                    self.joined.push_str(", ");
                }
                self.joined.push_str(second);
                self.spare.extend(first);
                call.args = &self.joined;
                Ok(Event::Call(call))
            }
            Line::Signal { pid, .. } => Ok(Event::Signal { pid }),
            Line::Exit { pid, .. } => {
                if let Some(gone) = self.pending.remove(&pid) {
                    self.spare.push(gone);
                }
                Ok(Event::Exit { pid })
            }
        }
    }

    /// Calls still unfinished (their task never resumed them: killed, or the trace was cut).
    pub fn unfinished(&self) -> usize {
        self.pending.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins_interleaved_halves_per_task() {
        let mut j = Joiner::new();
        let lines = [
            "8345  14:12:33.739258 read(3</tmp/a>,  <unfinished ...>",
            "8346  14:12:33.739277 set_robust_list(0x7f, 24 <unfinished ...>",
            r#"8345  14:12:33.739283 <... read resumed>"abc", 4096) = 3 <0.000018>"#,
            "8346  14:12:33.739668 <... set_robust_list resumed>) = 0 <0.000386>",
            "8346  14:12:33.739700 +++ exited with 0 +++",
        ];
        assert_eq!(
            j.feed(lines[0]).unwrap(),
            Event::Pending {
                pid: Some(8345),
                name: "read"
            }
        );
        assert!(matches!(j.feed(lines[1]).unwrap(), Event::Pending { .. }));
        let Event::Call(read) = j.feed(lines[2]).unwrap() else {
            panic!()
        };
        assert_eq!(read.name, "read");
        assert_eq!(read.args, r#"3</tmp/a>, "abc", 4096"#);
        assert_eq!(read.ret.value, Some(3));
        assert_eq!(read.time_s, Some(51153.739258));
        let Event::Call(srl) = j.feed(lines[3]).unwrap() else {
            panic!()
        };
        assert_eq!(srl.args, "0x7f, 24");
        assert_eq!(j.feed(lines[4]).unwrap(), Event::Exit { pid: Some(8346) });
        assert_eq!((j.unfinished(), j.orphan_resumes), (0, 0));
    }

    #[test]
    fn orphan_resume_and_bad_line_numbers() {
        let mut j = Joiner::new();
        assert!(matches!(
            j.feed("1 <... close resumed>) = 0").unwrap(),
            Event::Call(_)
        ));
        assert_eq!(j.orphan_resumes, 1);
        let e = j.feed("1 nonsense").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.to_string().starts_with("line 2: "), "{e}");
    }
}
