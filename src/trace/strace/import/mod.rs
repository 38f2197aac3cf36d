//! `strace -f -tt -T -y` output → trace [`Op`]s, streaming: one line at a time through
//! [`crate::trace::strace::Joiner`], one op per complete syscall, inode identity tracked through
//! paths and fds ([`state`]), the filesystem of each path from the mount table ([`mounts`]).
//!
//! What a trace cannot say is decided as documented in docs/validation.md ("strace import"):
//! an `O_CREAT` open creates the file only with `O_EXCL` or when the path was last seen absent
//! (a failed lookup, an unlink); paths are resolved lexically (no symlinks); memory stores
//! through shared mappings are invisible to strace.

mod calls;
pub mod mounts;
pub mod state;

use std::collections::BTreeMap;
use std::io::BufRead;

use serde::Serialize;

use crate::trace::strace::fxhash::FxHashSet;
use crate::trace::strace::{Event, Joiner};
use crate::trace::{FsKind, Op, Syscall, NO_INODE};
use mounts::{Kind, Mounts};
use state::{FdTables, Inodes};

/// How many malformed lines are quoted in the summary.
const EXAMPLES: usize = 5;

/// Calls that create a task (their child may print before they return).
const FORKS: [&str; 4] = ["clone", "clone3", "fork", "vfork"];

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

/// Trace time: seconds of `-tt` (since midnight, wrapping) or `-ttt` → ns since the first call,
/// never going backwards (calls are emitted in completion order, stamped with their start).
#[derive(Debug, Default)]
struct Clock {
    first: Option<f64>,
    day_offset: f64,
    last_ns: u64,
}

impl Clock {
    fn ns(&mut self, t: f64) -> u64 {
        let first = *self.first.get_or_insert(t);
        let mut rel = t - first + self.day_offset;
        if t < 86_400.0 && rel * 1e9 < self.last_ns as f64 - 43_200e9 {
            self.day_offset += 86_400.0;
            rel += 86_400.0;
        }
        self.last_ns = self.last_ns.max((rel * 1e9).round().max(0.0) as u64);
        self.last_ns
    }
}

/// Durations in log-spaced buckets (16 per factor of two, 1 ns .. 2^40 ns): a median within
/// about 2%, in constant memory.
#[derive(Debug)]
struct Histogram {
    counts: Vec<u64>,
    n: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            counts: vec![0; Self::BUCKETS],
            n: 0,
        }
    }
}

impl Histogram {
    const PER_OCTAVE: f64 = 16.0;
    const BUCKETS: usize = 40 * 16;

    fn add(&mut self, ns: f64) {
        let b = (ns.max(1.0).log2() * Self::PER_OCTAVE) as usize;
        self.counts[b.min(Self::BUCKETS - 1)] += 1;
        self.n += 1;
    }

    fn median(&self) -> Option<f64> {
        let half = self.n.div_ceil(2);
        let mut seen = 0;
        for (b, &c) in self.counts.iter().enumerate() {
            seen += c;
            if c > 0 && seen >= half {
                return Some(((b as f64 + 0.5) / Self::PER_OCTAVE).exp2());
            }
        }
        None
    }
}

/// A streaming importer over a buffered reader.
///
/// A line that lies whole in the reader's buffer is parsed where it lies (no copy); only a line
/// running past the end of the buffer is gathered into `buf`, capped at
/// [`MAX_LINE_BYTES`](super::parse::MAX_LINE_BYTES).
#[derive(Debug)]
pub struct StraceImport<R> {
    reader: R,
    buf: Vec<u8>,
    st: State,
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
    seen: FxHashSet<u32>,
    strict: bool,
    clock: Clock,
    duration_sum_s: f64,
    durations: u64,
    histogram: Histogram,
    by_syscall: [u64; Syscall::ALL.len()],
    summary: ImportSummary,
}

impl<R: BufRead> StraceImport<R> {
    /// `origin` names the file in errors and the summary.
    pub fn new(reader: R, origin: &str, options: ImportOptions) -> Self {
        StraceImport {
            reader,
            buf: Vec::with_capacity(512),
            st: State {
                joiner: Joiner::new(),
                inodes: Inodes::new(options.mounts),
                fds: FdTables::default(),
                forking: Vec::new(),
                seen: FxHashSet::default(),
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

    /// The summary so far (complete once [`StraceImport::next_op`] returned `None`).
    pub fn summary(&self) -> &ImportSummary {
        &self.st.summary
    }

    /// The next op, `None` at the end of the trace.
    pub fn next_op(&mut self) -> Result<Option<Op>, ImportError> {
        loop {
            let chunk = match self.reader.fill_buf() {
                Ok(c) => c,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.st.read_error(e)),
            };
            // A reader over memory hands out everything at once: a line over the cap still
            // goes through `read_line_capped` below, which cuts it.
            let whole = memchr::memchr(b'\n', chunk).filter(|&i| i < super::parse::MAX_LINE_BYTES);
            if let Some(i) = whole {
                // The whole line is in the buffer: parsed in place.
                let n = i + 1;
                let out = self.st.take(&chunk[..n], n, false);
                self.reader.consume(n);
                match out? {
                    Some(op) => return Ok(Some(op)),
                    None => continue,
                }
            }
            // The line runs past the buffer, or the file ends without a newline.
            self.buf.clear();
            let (n, cut) = super::parse::read_line_capped(
                &mut self.reader,
                &mut self.buf,
                super::parse::MAX_LINE_BYTES,
            )
            .map_err(|e| self.st.read_error(e))?;
            if n == 0 {
                self.st.finish();
                return Ok(None);
            }
            if let Some(op) = self.st.take(&self.buf, n, cut)? {
                return Ok(Some(op));
            }
        }
    }
}

impl State {
    fn read_error(&self, cause: std::io::Error) -> ImportError {
        ImportError::Read {
            path: self.summary.file.clone(),
            cause,
        }
    }

    /// Counts a line of `n` bytes (`bytes`, cut to the cap when `cut`) and handles it.
    fn take(&mut self, bytes: &[u8], n: usize, cut: bool) -> Result<Option<Op>, ImportError> {
        self.summary.bytes += n as u64;
        self.summary.lines += 1;
        if cut {
            let line = self.summary.lines;
            self.joiner_skip();
            self.malformed(line, format!("a line of {n} bytes, over the 1 MiB limit"))?;
            return Ok(None);
        }
        self.line(bytes)
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
                Kind::File(fs) => fs.name(),
                Kind::Pipe => FsKind::Pipefs.name(),
                Kind::Special => "special",
            };
            *by_fs.entry(name.to_string()).or_insert(0) += 1;
        }
        s.inodes_by_fs = by_fs;
    }

    /// Handles one line.
    fn line(&mut self, bytes: &[u8]) -> Result<Option<Op>, ImportError> {
        let lossy;
        let text = match std::str::from_utf8(bytes) {
            Ok(t) => t,
            Err(_) => {
                lossy = String::from_utf8_lossy(bytes).into_owned();
                &lossy
            }
        };
        let trimmed = super::parse::trim_end(text);
        if trimmed.is_empty() || trimmed.starts_with("strace: ") {
            // Blank lines, and strace's own notes when stderr was captured with the trace.
            self.joiner_skip();
            return Ok(None);
        }
        let event = match self.joiner.feed(trimmed) {
            Ok(e) => e,
            Err(e) => {
                let (line, what) = (e.line, e.what);
                self.malformed(line, what)?;
                return Ok(None);
            }
        };
        let call = match event {
            Event::Call(c) => c,
            Event::Pending { pid, name } => {
                let pid = pid.unwrap_or(0);
                if self.seen.insert(pid) {
                    self.summary.tasks += 1;
                }
                if !self.fds.known(pid) {
                    if let Some(&parent) = self.forking.last() {
                        self.fds.fork(parent, pid, false);
                    }
                }
                if FORKS.contains(&name) {
                    self.forking.push(pid);
                }
                return Ok(None);
            }
            Event::Signal { .. } => {
                self.summary.signals += 1;
                return Ok(None);
            }
            Event::Exit { pid } => {
                self.summary.exits += 1;
                let pid = pid.unwrap_or(0);
                self.fds.exit(pid);
                self.forking.retain(|&p| p != pid);
                return Ok(None);
            }
        };
        let pid = call.pid.unwrap_or(0);
        if self.seen.insert(pid) {
            self.summary.tasks += 1;
        }
        if !self.fds.known(pid) {
            if let Some(&parent) = self.forking.last().filter(|&&p| p != pid) {
                self.fds.fork(parent, pid, false);
            }
        }
        if FORKS.contains(&call.name) {
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
        let (mut syscall, inode, dir) = calls::handle(&mut ctx, pid, &call);
        let fs = if inode == NO_INODE {
            FsKind::Other
        } else {
            match self.inodes.info(inode).kind {
                Kind::File(fs) => fs,
                Kind::Pipe => FsKind::Pipefs,
                Kind::Special => {
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
        Ok(Some(Op {
            syscall,
            fs,
            inode,
            dir,
            task: pid,
            time_ns,
            ends_iteration: false,
        }))
    }

    /// Keeps the joiner's line numbers equal to the file's for lines it never sees.
    fn joiner_skip(&mut self) {
        self.joiner.skip_line();
    }
}

impl<R: BufRead> StraceImport<R> {
    /// Reads the whole trace, calling `f` on each op; returns the summary.
    pub fn for_each(mut self, mut f: impl FnMut(Op)) -> Result<ImportSummary, ImportError> {
        while let Some(op) = self.next_op()? {
            f(op);
        }
        Ok(self.st.summary)
    }
}

#[cfg(test)]
mod tests;
