//! The kprobe plumbing of `vm count`, as pure text functions so that it is tested on recorded
//! kernel output: which symbols of `/proc/kallsyms` to probe for a function (the compiler's
//! `.part.0`, `.isra.0`, `.constprop.0` copies included), the `kprobe_events` line for each,
//! and the hit counts in `kprobe_profile` and in a `raw_syscalls:sys_enter` histogram.
//!
//! `kprobe_profile` lists one probe a line: event name, hits, missed hits (tracing's
//! `probes_profile_seq_show` in kernel/trace/trace_kprobe.c). A `hist:keys=id` trigger prints
//! `{ id:          1 } hitcount:       5` a key (kernel/trace/trace_events_hist.c).

use std::collections::BTreeMap;

use crate::error::Result;
use crate::fail as bail;

/// The timestamp functions the Linux models name. The clock-read leaves (`ktime_get_*`) judge a
/// model; the others are context (the compiler inlines some of them into their callers, e.g.
/// `current_time` on 6.12).
pub(crate) const FUNCTIONS: [&str; 11] = [
    "ktime_get_coarse_real_ts64",
    "ktime_get_coarse_real_ts64_mg",
    "ktime_get_real_ts64",
    "ktime_get_real_ts64_mg",
    "current_time",
    "inode_set_ctime_current",
    "file_update_time",
    "touch_atime",
    "inode_needs_update_time",
    "generic_update_time",
    "xfs_vn_update_time",
];

/// The functions each of whose calls is one inode timestamp update on the write path before
/// 6.13 (`file_update_time` → `->update_time`: xfs's own, else `generic_update_time`;
/// fs/inode.c, fs/xfs/xfs_iops.c). Their sum judges the model's `inode_updates_per_op` for the
/// write loops on tmpfs and ext4, and on xfs when its module's symbol was there to probe. From
/// 6.13 the kernel counts its ctime updates itself (and 7.x reaches `generic_update_time`
/// through an inlined call the probe does not see); btrfs writes store their time in
/// `btrfs_write_check`, no update function.
pub(crate) const UPDATE_FUNCTIONS: [&str; 2] = ["generic_update_time", "xfs_vn_update_time"];

/// Whether `function` is a clock read (a leaf that judges the model) rather than context.
pub(crate) fn is_clock_read(function: &str) -> bool {
    function.starts_with("ktime_get_")
}

/// One probe: the function it counts for and the symbol it sits on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Probe {
    pub function: String,
    pub symbol: String,
}

impl Probe {
    /// The event name: `tscope_` and the symbol with every non-alphanumeric byte as `_`
    /// (event names are C identifiers; `.part.0` is not).
    pub(crate) fn event(&self) -> String {
        let s: String = self
            .symbol
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        format!("tscope_{s}")
    }

    /// The line for `kprobe_events` (append it: opened without `O_APPEND`, each write would
    /// replace every probe defined before it).
    pub(crate) fn definition(&self) -> String {
        format!("p:kprobes/{} {}", self.event(), self.symbol)
    }
}

/// Whether `symbol` is `function` or a compiler copy of it (`function.part.0`,
/// `function.isra.0`, `function.constprop.0`); `.cold` parts are not entry points.
fn is_copy_of(symbol: &str, function: &str) -> bool {
    match symbol.strip_prefix(function) {
        Some("") => true,
        Some(rest) => {
            rest.starts_with('.')
                && !rest.contains(".cold")
                && rest[1..]
                    .split('.')
                    .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric()))
        }
        None => false,
    }
}

/// The probes for `functions` in `kallsyms` text (`ADDRESS TYPE NAME [module]`), text symbols
/// only, each symbol once; a function with no symbol has no probe (it is absent: inlined or
/// not in this kernel).
pub(crate) fn resolve(kallsyms: &str, functions: &[&str]) -> Vec<Probe> {
    let mut out: Vec<Probe> = Vec::new();
    for line in kallsyms.lines() {
        let mut f = line.split_whitespace();
        let (Some(_addr), Some(kind), Some(name)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        if !matches!(kind, "t" | "T") {
            continue;
        }
        for &func in functions {
            if is_copy_of(name, func) && !out.iter().any(|p| p.symbol == name) {
                out.push(Probe {
                    function: func.to_string(),
                    symbol: name.to_string(),
                });
            }
        }
    }
    out.sort_by(|a, b| (&a.function, &a.symbol).cmp(&(&b.function, &b.symbol)));
    out
}

/// Hits per event name from `kprobe_profile` text; a malformed line is an error naming it.
pub(crate) fn parse_profile(text: &str) -> Result<BTreeMap<String, u64>> {
    let mut hits = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let f: Vec<&str> = line.split_whitespace().collect();
        match f.as_slice() {
            [] => {}
            [name, h, _missed] => match h.parse::<u64>() {
                Ok(n) => {
                    hits.insert(name.to_string(), n);
                }
                Err(_) => bail!("kprobe_profile line {}: hits '{h}' is not a count", i + 1),
            },
            _ => bail!(
                "kprobe_profile line {}: expected 'event hits misses', got '{}'",
                i + 1,
                line.trim()
            ),
        }
    }
    Ok(hits)
}

/// Hits per function: the sum over each function's probes (a function and its copies).
pub(crate) fn hits_by_function(
    probes: &[Probe],
    hits: &BTreeMap<String, u64>,
) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for p in probes {
        *out.entry(p.function.clone()).or_insert(0) += hits.get(&p.event()).copied().unwrap_or(0);
    }
    out
}

/// Counts per syscall number from a `hist:keys=id` histogram of `raw_syscalls:sys_enter`.
pub(crate) fn parse_syscall_hist(text: &str) -> Result<BTreeMap<u64, u64>> {
    let mut out = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if !line.starts_with('{') {
            continue; // comments, totals, blank lines
        }
        let num_after = |key: &str| -> Option<u64> {
            let rest = &line[line.find(key)? + key.len()..];
            let digits: String = rest
                .trim_start()
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse().ok()
        };
        match (num_after("id:"), num_after("hitcount:")) {
            (Some(id), Some(n)) => {
                out.insert(id, n);
            }
            _ => bail!(
                "syscall histogram line {}: '{line}' has no id and hitcount",
                i + 1
            ),
        }
    }
    Ok(out)
}

/// x86_64 syscall numbers of the calls the workloads make (arch/x86/entry/syscalls/syscall_64.tbl).
pub(crate) const X86_64_SYSCALLS: [(u64, &str); 17] = [
    (0, "read"),
    (1, "write"),
    (2, "open"),
    (3, "close"),
    (4, "stat"),
    (5, "fstat"),
    (6, "lstat"),
    (8, "lseek"),
    (9, "mmap"),
    (11, "munmap"),
    (18, "pwrite64"),
    (22, "pipe"),
    (87, "unlink"),
    (257, "openat"),
    (262, "newfstatat"),
    (280, "utimensat"),
    (293, "pipe2"),
];

/// The name of an x86_64 syscall number (`syscall_N` for one no workload makes).
pub(crate) fn syscall_name(nr: u64) -> String {
    X86_64_SYSCALLS
        .iter()
        .find(|(n, _)| *n == nr)
        .map_or_else(|| format!("syscall_{nr}"), |(_, s)| s.to_string())
}

#[cfg(test)]
mod tests;
