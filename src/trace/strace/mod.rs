//! Reading `strace -f -tt -T -y` output: [`parse`] parses one line without allocating;
//! [`Joiner`] pairs each `<unfinished ...>` with its `<... resumed>` per task, so that what
//! comes out is one complete call per syscall, in completion order. Memory is bounded by the
//! number of tasks with a call in flight, not by the length of the trace.

pub mod import;
pub mod parse;
pub mod record;

use std::collections::HashMap;

use parse::{Line, LineError};

/// One complete syscall, owned (its halves may come from two lines).
#[derive(Debug, Clone, PartialEq)]
pub struct Syscall {
    pub pid: Option<u32>,
    /// Start time, seconds (since midnight with `-tt`, since the epoch with `-ttt`).
    pub time_s: Option<f64>,
    pub name: String,
    pub args: String,
    pub ret: Option<i64>,
    /// The `-y` annotation of a returned fd.
    pub ret_path: Option<String>,
    pub errno: Option<String>,
    pub duration_s: Option<f64>,
}

/// What one line contributed.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A call is complete.
    Call(Syscall),
    /// The first half of a call was stored; nothing to emit yet.
    Pending,
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

/// A complete call borrowed from the line, or (for a resumed call) from the joiner.
#[derive(Debug, Clone, PartialEq)]
pub struct CallRef<'a> {
    pub pid: Option<u32>,
    /// Start time, seconds.
    pub time_s: Option<f64>,
    pub name: &'a str,
    /// The raw argument list (both halves joined for a resumed call).
    pub args: &'a str,
    pub ret: parse::Ret<'a>,
    pub duration_s: Option<f64>,
}

/// What one line contributed, borrowed (see [`Joiner::feed_ref`]).
#[derive(Debug, Clone, PartialEq)]
pub enum EventRef<'a> {
    Call(CallRef<'a>),
    /// The first half of `name` was stored.
    Pending {
        pid: Option<u32>,
        name: &'a str,
    },
    Signal {
        pid: Option<u32>,
    },
    Exit {
        pid: Option<u32>,
    },
}

/// The first half of a call, stored until its task resumes it.
#[derive(Debug)]
struct PendingCall {
    time_s: Option<f64>,
    name: String,
    args: String,
}

/// Pairs unfinished and resumed halves, per task.
#[derive(Debug, Default)]
pub struct Joiner {
    pending: HashMap<Option<u32>, PendingCall>,
    /// The joined arguments of the last resumed call ([`Joiner::feed_ref`] lends them).
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

    /// Feeds the next line (numbered from 1 in order of feeding), returning owned data.
    pub fn feed(&mut self, text: &str) -> Result<Event, JoinError> {
        Ok(match self.feed_ref(text)? {
            EventRef::Call(c) => Event::Call(Syscall {
                pid: c.pid,
                time_s: c.time_s,
                name: c.name.to_string(),
                args: c.args.to_string(),
                ret: c.ret.value,
                ret_path: c.ret.path.map(str::to_string),
                errno: c.ret.errno.map(str::to_string),
                duration_s: c.duration_s,
            }),
            EventRef::Pending { .. } => Event::Pending,
            EventRef::Signal { pid } => Event::Signal { pid },
            EventRef::Exit { pid } => Event::Exit { pid },
        })
    }

    /// Feeds the next line without copying a complete call: the common case allocates nothing.
    pub fn feed_ref<'a>(&'a mut self, text: &'a str) -> Result<EventRef<'a>, JoinError> {
        self.line += 1;
        let line = self.line;
        let err = |e: LineError| JoinError {
            line,
            what: e.0.to_string(),
        };
        match parse::parse_line(text).map_err(err)? {
            Line::Call(c) => Ok(EventRef::Call(CallRef {
                pid: c.pid,
                time_s: c.time_s,
                name: c.name,
                args: c.args,
                ret: c.ret,
                duration_s: c.duration_s,
            })),
            Line::Unfinished {
                pid,
                time_s,
                name,
                args,
            } => {
                self.pending.insert(
                    pid,
                    PendingCall {
                        time_s,
                        name: name.to_string(),
                        args: args.to_string(),
                    },
                );
                Ok(EventRef::Pending { pid, name })
            }
            Line::Resumed {
                pid,
                time_s,
                name,
                args,
                ret,
                duration_s,
            } => {
                let (start, first) = match self.pending.remove(&pid) {
                    Some(p) if p.name == name => (p.time_s, p.args),
                    _ => {
                        self.orphan_resumes += 1;
                        (time_s, String::new())
                    }
                };
                let second = args.trim().trim_start_matches(',').trim();
                self.joined.clear();
                self.joined.push_str(&first);
                if !first.is_empty() && !second.is_empty() {
                    self.joined.push_str(", ");
                }
                self.joined.push_str(second);
                Ok(EventRef::Call(CallRef {
                    pid,
                    time_s: start,
                    name,
                    args: &self.joined,
                    ret,
                    duration_s,
                }))
            }
            Line::Signal { pid, .. } => Ok(EventRef::Signal { pid }),
            Line::Exit { pid, .. } => {
                self.pending.remove(&pid);
                Ok(EventRef::Exit { pid })
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
        let events: Vec<Event> = lines.iter().map(|l| j.feed(l).unwrap()).collect();
        let Event::Call(read) = &events[2] else {
            panic!("{events:?}")
        };
        assert_eq!(read.name, "read");
        assert_eq!(read.args, r#"3</tmp/a>, "abc", 4096"#);
        assert_eq!(read.ret, Some(3));
        assert_eq!(read.time_s, Some(51153.739258));
        let Event::Call(srl) = &events[3] else {
            panic!()
        };
        assert_eq!(srl.args, "0x7f, 24");
        assert_eq!(events[4], Event::Exit { pid: Some(8346) });
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
