//! `strace -f -tt -T -y` output → trace [`Op`]s, streaming: one line at a time through
//! [`crate::trace::strace::Joiner`], one op per complete syscall, inode identity tracked through
//! paths and fds ([`state`]), the filesystem of each path from the mount table ([`mounts`]).
//!
//! What a trace cannot say is decided as documented in docs/validation.md ("strace import"):
//! an `O_CREAT` open creates the file only with `O_EXCL` or when the path was last seen absent
//! (a failed lookup, an unlink); paths are resolved lexically (no symlinks); memory stores
//! through shared mappings are invisible to strace.

mod calls;
mod kinds;
pub mod mounts;
pub mod state;
mod tally;

use std::collections::BTreeMap;
use std::io::Read;

use serde::Serialize;

use crate::trace::strace::chunks::{Chunker, Item, Parsed};
use crate::trace::strace::fxhash::FxHashSet;
use crate::trace::strace::parse::{Line, LineError};
use crate::trace::strace::{Event, Joiner};
use crate::trace::{FsKind, Op, Syscall, NO_INODE};
use mounts::{InodeClass, Mounts};
use state::{FdTables, Inodes};
use tally::{Clock, Histogram};

/// How many malformed lines are quoted in the summary.
const EXAMPLES: usize = 5;

/// A line `--strict` refuses, or a read error.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("cannot read strace file '{path}': {cause}")]
    Read { path: String, cause: std::io::Error },
    #[error("strace file '{path}' line {line}: {what} (without --strict such lines are counted and skipped)")]
    Malformed {
        path: String,
        line: u64,
        what: String,
    },
    #[error("cannot start the strace parsing thread: {0}")]
    Thread(std::io::Error),
}

/// What an import saw, for the output (`strace` in the simulate JSON).
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize, PartialEq)]
pub struct ImportSummary {
    pub file: String,
    pub bytes: u64,
    pub lines: u64,
    /// Complete syscalls (each is one op).
    pub calls: u64,
    /// Calls by model operation (`other`: no timestamp work).
    pub ops_by_syscall: BTreeMap<String, u64>,
    pub malformed_lines: u64,
    /// The first few, as `line N: why`.
    pub malformed_examples: Vec<String>,
    /// Syscalls the importer does not know, with counts (replayed as `other`).
    pub unknown_syscalls: BTreeMap<String, u64>,
    pub signals: u64,
    pub exits: u64,
    /// Calls left `<unfinished ...>` at the end (killed tasks, a cut trace).
    pub unfinished_at_end: u64,
    /// `<... resumed>` halves without a first half (the trace started mid-call).
    pub orphan_resumes: u64,
    pub tasks: u64,
    pub inodes: u64,
    /// Inodes by filesystem kind (`special`: sockets, ttys, proc…).
    pub inodes_by_fs: BTreeMap<String, u64>,
    /// From the first to the last call's start.
    pub span_ns: u64,
    /// Mean `-T` duration, when the trace has them (blocking calls such as `wait4` weigh in).
    pub mean_duration_ns: Option<f64>,
    /// Median `-T` duration (within 3%: a log-bucket histogram keeps memory flat).
    pub median_duration_ns: Option<f64>,
    /// Where filesystem kinds came from.
    pub fs_source: String,
}

/// Import settings.
#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    pub strict: bool,
    pub mounts: Mounts,
    /// How `mounts` was obtained, for the summary.
    pub fs_source: String,
}

impl ImportOptions {
    /// This machine's mount table, or every regular path on `force`.
    pub fn system(strict: bool, force: Option<FsKind>) -> Self {
        ImportOptions {
            strict,
            mounts: Mounts::from_system(force),
            fs_source: match force {
                Some(fs) => format!("--fs {fs} (pseudo filesystems and pipes excepted)"),
                None => "/proc/self/mountinfo of the importing machine".into(),
            },
        }
    }
}

/// A streaming importer: the log is read and parsed in chunks of whole lines on a second
/// thread ([`chunks`](super::chunks)) while this one joins, tracks fds and inodes and hands out
/// ops, in the log's order.
#[derive(Debug)]
pub struct StraceImport<R> {
    reader: R,
    st: State,
    parse_thread: bool,
}

/// The tasks seen.
#[derive(Debug, Default)]
struct Tasks {
    seen: FxHashSet<u32>,
    /// The task of the last line (consecutive lines are mostly one task's: a lookup saved).
    last: Option<u32>,
}

impl Tasks {
    /// Whether `pid` is seen for the first time.
    fn first(&mut self, pid: u32) -> bool {
        if self.last == Some(pid) {
            return false;
        }
        self.last = Some(pid);
        self.seen.insert(pid)
    }
}

/// Everything the importer keeps between lines.
#[derive(Debug)]
struct State {
    joiner: Joiner,
    inodes: Inodes,
    fds: FdTables,
    /// Tasks with a fork-like call in flight, latest last.
    forking: Vec<u32>,
    /// Every task seen (for the count).
    seen: Tasks,
    strict: bool,
    clock: Clock,
    duration_sum_s: f64,
    durations: u64,
    histogram: Histogram,
    by_syscall: [u64; Syscall::ALL.len()],
    summary: ImportSummary,
}

impl<R: Read + Send> StraceImport<R> {
    /// `origin` names the file in errors and the summary.
    pub fn new(reader: R, origin: &str, options: ImportOptions) -> Self {
        StraceImport {
            reader,
            parse_thread: true,
            st: State {
                joiner: Joiner::new(),
                inodes: Inodes::new(options.mounts),
                fds: FdTables::default(),
                forking: Vec::new(),
                seen: Tasks::default(),
                strict: options.strict,
                clock: Clock::default(),
                duration_sum_s: 0.0,
                durations: 0,
                histogram: Histogram::default(),
                by_syscall: [0; Syscall::ALL.len()],
                summary: ImportSummary {
                    file: origin.to_string(),
                    fs_source: options.fs_source,
                    ..Default::default()
                },
            },
        }
    }

    /// Parses on the calling thread as well: everything on one core (the single-core rate
    /// of `benches/strace.rs`; the ops and the summary are the same).
    pub fn on_one_thread(mut self) -> Self {
        self.parse_thread = false;
        self
    }

    /// Reads the whole trace, calling `f` on each op in the log's order; returns the summary.
    pub fn for_each(self, mut f: impl FnMut(Op)) -> Result<ImportSummary, ImportError> {
        let StraceImport {
            reader,
            mut st,
            parse_thread,
        } = self;
        let mut chunker = Chunker::new(reader);
        if !parse_thread {
            let mut spare = None;
            while let Some(p) = chunker
                .next_chunk(spare.take())
                .map_err(|e| st.read_error(e))?
            {
                st.chunk(&p, &mut f)?;
                spare = Some(p);
            }
            st.finish();
            return Ok(st.summary);
        }
        std::thread::scope(|scope| {
            use std::sync::mpsc::{channel, sync_channel};
            let (full_tx, full_rx) = sync_channel::<std::io::Result<Parsed>>(IN_FLIGHT);
            let (empty_tx, empty_rx) = channel::<Parsed>();
            std::thread::Builder::new()
                .name("tscope-parse".into())
                .spawn_scoped(scope, move || loop {
                    let sent = match chunker.next_chunk(empty_rx.try_recv().ok()) {
                        Ok(Some(p)) => full_tx.send(Ok(p)).is_ok(),
                        Ok(None) => false,
                        Err(e) => {
                            // The error ends the log: the importer reports it.
                            let _ = full_tx.send(Err(e));
                            false
                        }
                    };
                    if !sent {
                        break;
                    }
                })
                .map_err(ImportError::Thread)?;
            // Ends when the parser is done (it drops its sender); on an error here the
            // receiver goes, and the parser stops at its next send.
            for parsed in full_rx {
                let p = parsed.map_err(|e| st.read_error(e))?;
                st.chunk(&p, &mut f)?;
                // The parser may be done: then the chunk is simply dropped.
                let _ = empty_tx.send(p);
            }
            st.finish();
            Ok(st.summary)
        })
    }
}

/// Parsed chunks in flight from the parsing thread (with the one being parsed and the one
/// being imported, at most four exist: memory stays flat).
const IN_FLIGHT: usize = 2;

impl State {
    fn read_error(&self, cause: std::io::Error) -> ImportError {
        ImportError::Read {
            path: self.summary.file.clone(),
            cause,
        }
    }

    /// Handles every line of a parsed chunk, handing out the ops.
    fn chunk(&mut self, p: &Parsed, f: &mut impl FnMut(Op)) -> Result<(), ImportError> {
        for (bytes, item) in p.items() {
            self.take(bytes, item, f)?;
        }
        Ok(())
    }

    /// Counts a line of `n` bytes and handles it, handing its op to `f`. (Ops go to `f`
    /// rather than back to the caller: an `Op` returned through memory was read back before
    /// its stores had landed, a stall on every line.)
    #[inline]
    fn take(&mut self, n: u64, item: Item<'_>, f: &mut impl FnMut(Op)) -> Result<(), ImportError> {
        self.summary.bytes += n;
        self.summary.lines += 1;
        match item {
            Item::Skip => {
                // Blank lines, and strace's own notes when stderr was captured with the trace.
                self.joiner_skip();
                Ok(())
            }
            Item::Cut(n) => {
                let line = self.summary.lines;
                self.joiner_skip();
                self.malformed(line, format!("a line of {n} bytes, over the 1 MiB limit"))
            }
            Item::Line(text, parsed) => self.line(text, parsed, f),
        }
    }

    fn malformed(&mut self, line: u64, what: String) -> Result<(), ImportError> {
        if self.strict {
            return Err(ImportError::Malformed {
                path: self.summary.file.clone(),
                line,
                what,
            });
        }
        self.summary.malformed_lines += 1;
        if self.summary.malformed_examples.len() < EXAMPLES {
            self.summary
                .malformed_examples
                .push(format!("line {line}: {what}"));
        }
        Ok(())
    }

    fn finish(&mut self) {
        let s = &mut self.summary;
        s.unfinished_at_end = self.joiner.unfinished() as u64;
        s.orphan_resumes = self.joiner.orphan_resumes;
        s.inodes = self.inodes.len() as u64;
        s.span_ns = self.clock.last_ns;
        s.mean_duration_ns =
            (self.durations > 0).then(|| self.duration_sum_s / self.durations as f64 * 1e9);
        s.median_duration_ns = self.histogram.median();
        s.ops_by_syscall = Syscall::ALL
            .iter()
            .zip(self.by_syscall)
            .filter(|(_, n)| *n > 0)
            .map(|(s, n)| (s.name().to_string(), n))
            .collect();
        let mut by_fs = BTreeMap::new();
        for id in 0..self.inodes.len() {
            let name = match self.inodes.info(id as u32).kind {
                InodeClass::File(fs) => fs.name(),
                InodeClass::Pipe => FsKind::Pipefs.name(),
                InodeClass::Special => "special",
            };
            *by_fs.entry(name.to_string()).or_insert(0) += 1;
        }
        s.inodes_by_fs = by_fs;
    }

    /// Handles one line (its trimmed text and its parse).
    fn line<'l>(
        &mut self,
        text: &'l str,
        parsed: Result<Line<'l>, LineError>,
        f: &mut impl FnMut(Op),
    ) -> Result<(), ImportError> {
        let event = match self.joiner.feed_parsed(text, parsed) {
            Ok(e) => e,
            Err(e) => {
                let (line, what) = (e.line, e.what);
                return self.malformed(line, what);
            }
        };
        let call = match event {
            Event::Call(c) => c,
            Event::Pending { pid, name } => {
                let pid = pid.unwrap_or(0);
                if self.seen.first(pid) {
                    self.summary.tasks += 1;
                }
                if !self.fds.known(pid) {
                    if let Some(&parent) = self.forking.last() {
                        self.fds.fork(parent, pid, false);
                    }
                }
                if calls::handler(name) == calls::Handler::Fork {
                    self.forking.push(pid);
                }
                return Ok(());
            }
            Event::Signal { .. } => {
                self.summary.signals += 1;
                return Ok(());
            }
            Event::Exit { pid } => {
                self.summary.exits += 1;
                let pid = pid.unwrap_or(0);
                self.fds.exit(pid);
                self.forking.retain(|&p| p != pid);
                return Ok(());
            }
        };
        let pid = call.pid.unwrap_or(0);
        if self.seen.first(pid) {
            self.summary.tasks += 1;
        }
        if !self.fds.known(pid) {
            if let Some(&parent) = self.forking.last().filter(|&&p| p != pid) {
                self.fds.fork(parent, pid, false);
            }
        }
        let kind = calls::handler(call.name);
        if kind == calls::Handler::Fork {
            if let Some(i) = self.forking.iter().rposition(|&p| p == pid) {
                self.forking.remove(i);
            }
        }
        let time_ns = call.time_s.map(|t| self.clock.ns(t));
        if let Some(d) = call.duration_s {
            self.duration_sum_s += d;
            self.durations += 1;
            self.histogram.add(d * 1e9);
        }
        self.summary.calls += 1;
        let mut ctx = calls::Ctx {
            inodes: &mut self.inodes,
            fds: &mut self.fds,
            unknown: &mut self.summary.unknown_syscalls,
        };
        let (mut syscall, inode, dir) = calls::handle(&mut ctx, pid, &call, kind);
        let fs = if inode == NO_INODE {
            FsKind::Other
        } else {
            match self.inodes.info(inode).kind {
                InodeClass::File(fs) => fs,
                InodeClass::Pipe => FsKind::Pipefs,
                InodeClass::Special => {
                    syscall = Syscall::Other;
                    FsKind::Other
                }
            }
        };
        let (inode, dir) = if syscall == Syscall::Other {
            (NO_INODE, NO_INODE)
        } else {
            (inode, dir)
        };
        self.by_syscall[syscall as usize] += 1;
        f(Op {
            syscall,
            fs,
            inode,
            dir,
            task: pid,
            time_ns,
            ends_iteration: false,
        });
        Ok(())
    }

    /// Keeps the joiner's line numbers equal to the file's for lines it never sees.
    fn joiner_skip(&mut self) {
        self.joiner.skip_line();
    }
}

#[cfg(test)]
mod tests;
