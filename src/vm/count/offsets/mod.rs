//! Where in each syscall the kernel reads its clocks: the traced pass of `vm count`'s guest.
//!
//! The replay takes an op's timestamps at some point of the op's time; which point decides,
//! under TCG where a vfsmix op is about as long as the 4 ms tick, whether the coarse clock moved
//! between two stamps (the multigrain fine read of vfsmix's O_TRUNC is taken iff it did not move
//! since the create's stamp). So after each workload's timing pass, outside the snapshots that
//! bracket the counted run, the guest runs the loop again ([`TRACED_ITERATIONS`] at most) with
//! `raw_syscalls:sys_enter` and `sys_exit` recording into the trace buffer beside the kprobe
//! events (enabled all along), reads `/sys/kernel/tracing/trace`, and puts every clock-read hit
//! (a `ktime_get_*` probe) of the guest's own task at its fraction of the syscall's enter→exit
//! span ([`parse_trace`], [`summarise`]). Each kernel timestamp begins with a coarse read (a
//! fine one follows it when taken), so an op's k-th coarse read places its k-th timestamp. A
//! trace that lost events reports nothing.
//!
//! The trace clock is `x86-tsc` where the kernel offers it (under TCG the host's TSC: printed
//! as a tick count, not rounded to µs like `local`), else the default; the guest has one vCPU
//! (`-smp 1`) and a syscall whose enter and exit are on different CPUs is left out anyway.

use crate::error::{Context, Result};
use crate::vm::boot::tracefs::{write, TRACING};
use crate::workload::WorkloadName;

/// Iterations of a traced pass at most.
pub(crate) const TRACED_ITERATIONS: u64 = 200;
/// Per-CPU trace buffer: a traced vfsmix iteration writes about 40 events.
const BUFFER_KB: &str = "8192";
const SYSCALL_EVENTS: [&str; 2] = ["sys_enter", "sys_exit"];

/// One syscall of one task in the trace: its number, the timestamps of its entry and exit (in
/// the trace clock's unit) and of every clock-read probe hit between them.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TracedSyscall {
    pub nr: u64,
    pub enter: f64,
    pub exit: f64,
    pub reads: Vec<f64>,
    /// The coarse reads among them (`ktime_get_coarse_real_ts64[_mg]`): one starts each
    /// timestamp the kernel takes (`current_time()`, `inode_set_ctime_current()`), a fine
    /// read, when taken, follows it.
    pub coarse: Vec<f64>,
}

/// The syscalls of task `pid` in `trace` text (the `trace` file's default format: `TASK-PID
/// [CPU] FLAGS TIMESTAMP: EVENT: BODY`), in order, with their clock reads. An error when the
/// header says the buffer dropped events (`entries-in-buffer/entries-written: A/B`, B > A) or
/// a line of the task cannot be read; syscalls cut off by the start or end of the trace, or
/// whose exit is on another CPU, are left out.
pub(crate) fn parse_trace(text: &str, pid: u32) -> Result<Vec<TracedSyscall>> {
    let mut out = Vec::new();
    // The syscall entered and not yet left, and its CPU (its `exit` is set on leaving).
    let mut open: Option<(u32, TracedSyscall)> = None;
    for (i, line) in text.lines().enumerate() {
        if let Some(rest) = line.split("entries-in-buffer/entries-written:").nth(1) {
            let counts = rest.split_whitespace().next().unwrap_or("");
            let (a, b) = counts.split_once('/').unwrap_or((counts, counts));
            let (a, b) = (a.parse::<u64>(), b.parse::<u64>());
            let (Ok(kept), Ok(written)) = (a, b) else {
                crate::fail!("trace line {}: unreadable entry counts '{counts}'", i + 1);
            };
            crate::ensure!(
                written == kept,
                "the trace buffer dropped {} of {written} events (buffer_size_kb too small)",
                written - kept
            );
            continue;
        }
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let Some(ev) = event_line(line) else {
            crate::fail!("trace line {}: unreadable: '{}'", i + 1, line.trim());
        };
        if ev.pid != pid {
            continue;
        }
        match ev.event {
            "sys_enter" => {
                let nr = syscall_nr(ev.body)
                    .with_context(|| format!("trace line {}: sys_enter without NR", i + 1))?;
                let s = TracedSyscall {
                    nr,
                    enter: ev.ts,
                    exit: ev.ts,
                    reads: Vec::new(),
                    coarse: Vec::new(),
                };
                open = Some((ev.cpu, s));
            }
            "sys_exit" => {
                let nr = syscall_nr(ev.body)
                    .with_context(|| format!("trace line {}: sys_exit without NR", i + 1))?;
                if let Some((cpu, s)) = open.take() {
                    if s.nr == nr && cpu == ev.cpu && ev.ts >= s.enter {
                        out.push(TracedSyscall { exit: ev.ts, ..s });
                    }
                }
            }
            e => {
                let function = e.strip_prefix("tscope_").unwrap_or("");
                if let (true, Some((_, s))) = (
                    crate::vm::count::kprobe::is_clock_read(function),
                    open.as_mut(),
                ) {
                    s.reads.push(ev.ts);
                    if function.starts_with("ktime_get_coarse_") {
                        s.coarse.push(ev.ts);
                    }
                }
            }
        }
    }
    Ok(out)
}

struct EventLine<'a> {
    pid: u32,
    cpu: u32,
    ts: f64,
    event: &'a str,
    body: &'a str,
}

/// One event line: the task's `-PID` ends the word before `[CPU]` (a task name may hold
/// spaces), the timestamp (`SECS.USECS` or a raw clock count) is the first word after it that
/// ends in `:`, the event name the next.
fn event_line(line: &str) -> Option<EventLine<'_>> {
    let open = line.find(" [")?;
    let close = open + line[open..].find(']')?;
    let task = line[..open].trim_end();
    let pid = task.rsplit_once('-')?.1.parse().ok()?;
    let cpu = line[open + 2..close].parse().ok()?;
    let rest = &line[close + 1..];
    let (before, after) = rest.split_once(": ")?;
    let ts = before.split_whitespace().last()?.parse().ok()?;
    let (event, body) = after.split_once(':').unwrap_or((after, ""));
    Some(EventLine {
        pid,
        cpu,
        ts,
        event: event.trim(),
        body: body.trim(),
    })
}

/// `NR 257 (…)` or `NR 257 = 3`: 257.
fn syscall_nr(body: &str) -> Option<u64> {
    body.strip_prefix("NR ")?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Where the clock reads fall in each position's syscall, over the iterations of a traced
/// pass: fractions of the syscall's enter→exit span, 0 at its entry, 1 at its exit.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct StampOffsets {
    /// Per position: the mean over iterations of the first read's fraction; `None` for a
    /// position that is no syscall or had no read (or only zero-length spans).
    pub first: Vec<Option<f64>>,
    /// Per position: where its k-th timestamp is taken — the mean fraction of the syscall's
    /// k-th coarse read, over the iterations that have one (a stamp the kernel takes only
    /// sometimes, e.g. the reread when the tick moved, averages over those); empty for a
    /// position without coarse reads.
    pub stamps: Vec<Vec<f64>>,
    /// Per position: the mean number of reads per iteration inside the syscall.
    pub reads: Vec<Option<f64>>,
    /// Iterations found in the trace (the loop's syscalls in order).
    pub iterations: u64,
}

/// Running sums of one position.
#[derive(Debug, Clone, Default)]
struct Sums {
    first: (f64, u64),
    /// Per coarse read k: (sum of fractions, count).
    stamps: Vec<(f64, u64)>,
    reads: u64,
}

/// [`StampOffsets`] of `workload`'s loop from the syscalls of a traced pass: each run of
/// syscalls that is one iteration in order ([`crate::workload::def::position_syscalls`])
/// counts; anything else (setup, teardown) is skipped.
pub(crate) fn summarise(workload: WorkloadName, syscalls: &[TracedSyscall]) -> StampOffsets {
    let want = crate::workload::def::position_syscalls(workload);
    let calls: Vec<(usize, &str)> = want
        .iter()
        .enumerate()
        .filter_map(|(p, s)| Some((p, s.as_deref()?)))
        .collect();
    let n = want.len();
    let mut out = StampOffsets {
        first: vec![None; n],
        stamps: vec![Vec::new(); n],
        reads: vec![None; n],
        iterations: 0,
    };
    if calls.is_empty() {
        return out;
    }
    let mut acc = vec![Sums::default(); n];
    let mut i = 0;
    while i + calls.len() <= syscalls.len() {
        let window = &syscalls[i..i + calls.len()];
        let matches = window
            .iter()
            .zip(&calls)
            .all(|(s, (_, name))| crate::vm::count::kprobe::syscall_name(s.nr) == *name);
        if !matches {
            i += 1;
            continue;
        }
        out.iterations += 1;
        for (s, &(p, _)) in window.iter().zip(&calls) {
            let a = &mut acc[p];
            a.reads += s.reads.len() as u64;
            let span = s.exit - s.enter;
            if span <= 0.0 {
                continue;
            }
            let frac = |t: f64| ((t - s.enter) / span).clamp(0.0, 1.0);
            if let Some(&t) = s.reads.first() {
                a.first.0 += frac(t);
                a.first.1 += 1;
            }
            if a.stamps.len() < s.coarse.len() {
                a.stamps.resize(s.coarse.len(), (0.0, 0));
            }
            for (k, &t) in s.coarse.iter().enumerate() {
                a.stamps[k].0 += frac(t);
                a.stamps[k].1 += 1;
            }
        }
        i += calls.len();
    }
    if out.iterations == 0 {
        return out;
    }
    for (p, _) in &calls {
        let a = &acc[*p];
        out.first[*p] = (a.first.1 > 0).then(|| a.first.0 / a.first.1 as f64);
        out.stamps[*p] = a.stamps.iter().map(|(s, c)| s / *c as f64).collect();
        out.reads[*p] = Some(a.reads as f64 / out.iterations as f64);
    }
    out
}

/// Prepares the trace buffer for the traced passes: a larger buffer and the `x86-tsc` clock
/// where offered. Returns the trace clock in use.
pub(crate) fn setup() -> Result<String> {
    write("buffer_size_kb", BUFFER_KB)?;
    let clocks =
        std::fs::read_to_string(format!("{TRACING}/trace_clock")).context("reading trace_clock")?;
    if clocks
        .split_whitespace()
        .any(|c| c.trim_matches(['[', ']']) == "x86-tsc")
    {
        write("trace_clock", "x86-tsc")?;
    }
    let clocks =
        std::fs::read_to_string(format!("{TRACING}/trace_clock")).context("reading trace_clock")?;
    clocks
        .split_whitespace()
        .find_map(|c| c.strip_prefix('[')?.strip_suffix(']'))
        .map(str::to_string)
        .context("trace_clock names no clock in use")
}

/// One traced pass: clears the trace, records the syscall events while `run` runs the loop,
/// stops them, and summarises the guest's own syscalls. An error (nothing reported) when the
/// buffer dropped events.
pub(crate) fn traced_pass(
    workload: WorkloadName,
    run: impl FnOnce() -> Result<()>,
) -> Result<StampOffsets> {
    write("trace", "")?;
    let set = |v: &str| -> Result<()> {
        for e in SYSCALL_EVENTS {
            write(&format!("events/raw_syscalls/{e}/enable"), v)?;
        }
        Ok(())
    };
    let ran = set("1").and_then(|()| run());
    let stopped = set("0");
    ran?;
    stopped?;
    let text = std::fs::read_to_string(format!("{TRACING}/trace")).context("reading trace")?;
    let syscalls = parse_trace(&text, std::process::id())
        .with_context(|| format!("{}: the traced pass", workload.as_str()))?;
    Ok(summarise(workload, &syscalls))
}

/// Per-position values for the JSON: empty when nothing was traced.
pub(crate) fn by_position(values: &[Option<f64>], iterations: u64) -> Vec<Option<f64>> {
    if iterations == 0 {
        Vec::new()
    } else {
        values.to_vec()
    }
}

#[cfg(test)]
mod tests;
