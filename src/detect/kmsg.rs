//! The kernel log, read once and parsed into records: `/dev/kmsg` first (one record per
//! `read`, opened non-blocking so the read stops at the newest record instead of waiting for
//! the next), else `syslog(2)` (`SYSLOG_ACTION_READ_ALL`). `dmesg` reads the same two
//! interfaces, so running it adds nothing. Both are refused to a user without `CAP_SYSLOG`
//! under `kernel.dmesg_restrict = 1`; the error then says so.
//!
//! Parsing is a pure function over text ([`parse`]), so recorded logs in any of the three
//! shapes — `/dev/kmsg` records, `dmesg` output, `syslog(2)` lines — test the rules.

use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read};
use std::os::unix::fs::OpenOptionsExt;

use serde::{Deserialize, Serialize};

/// The most bytes read from the log (the kernel's buffer is 128 KiB to a few MiB).
pub const MAX_BYTES: usize = 16 << 20;
/// The most records read from `/dev/kmsg`.
pub const MAX_RECORDS: usize = 200_000;

/// One kernel log record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// The syslog level (0 emergency … 7 debug), where the format carries it.
    pub level: Option<u8>,
    /// The syslog facility (0 the kernel; 1 user, and up: written by a process through
    /// `/dev/kmsg` or syslog), where the format carries it (`/dev/kmsg` records and
    /// `<PRI>`-prefixed lines; plain `dmesg` output does not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub facility: Option<u8>,
    /// `/dev/kmsg`'s sequence number (0 is the first record since boot).
    pub seq: Option<u64>,
    /// Seconds since boot, where the format carries them.
    pub time_s: Option<f64>,
    /// The message, with its subsystem prefix (`tsc: `, `clocksource: `).
    pub text: String,
}

/// A whole kernel log as read.
#[derive(Debug, Clone, Default)]
pub struct KernelLog {
    /// `/dev/kmsg` or `syslog(2)`.
    pub source: String,
    pub records: Vec<Record>,
    /// Whether [`MAX_BYTES`] or [`MAX_RECORDS`] cut the read short.
    pub truncated: bool,
}

impl Record {
    /// Whether the kernel wrote it: facility 0, or a format that does not say (plain `dmesg`
    /// output, bare lines). A record of a user facility (1 and up) was written by a process.
    pub fn from_kernel(&self) -> bool {
        self.facility.is_none_or(|f| f == 0)
    }
}

impl KernelLog {
    /// Whether the log still starts at boot (the `Linux version` banner or sequence number 0 is
    /// there): a ring buffer that wrapped has lost the boot messages.
    pub fn from_boot(&self) -> bool {
        self.records
            .iter()
            .take(16)
            .any(|r| r.seq == Some(0) || r.text.starts_with("Linux version "))
    }

    /// The messages, one per line (what the TSC calibration parser reads).
    pub fn text(&self) -> String {
        let mut s = String::new();
        for r in &self.records {
            s.push_str(&r.text);
            s.push('\n');
        }
        s
    }
}

/// Reads the kernel log: `/dev/kmsg`, else `syslog(2)`; the error names both failures and,
/// when they were refused, `kernel.dmesg_restrict`.
pub fn read_kernel_log() -> Result<KernelLog, String> {
    let kmsg = match read_kmsg() {
        Ok(log) if !log.records.is_empty() => return Ok(log),
        Ok(_) => "no records".to_string(),
        Err(e) => e.to_string(),
    };
    let syslog = match crate::sys::klog::read_all(MAX_BYTES) {
        Ok(bytes) => {
            let records = parse(&String::from_utf8_lossy(&bytes));
            if !records.is_empty() {
                return Ok(KernelLog {
                    source: "syslog(2)".into(),
                    truncated: bytes.len() >= MAX_BYTES,
                    records,
                });
            }
            "no records".to_string()
        }
        Err(e) => e.to_string(),
    };
    let restrict = std::fs::read_to_string("/proc/sys/kernel/dmesg_restrict")
        .ok()
        .map(|s| s.trim().to_string());
    let refused = kmsg.contains("ermission denied")
        || syslog.contains("ermission denied")
        || kmsg.contains("not permitted")
        || syslog.contains("not permitted");
    let hint = match restrict.as_deref() {
        Some("1") => {
            "; kernel.dmesg_restrict = 1: reading the kernel log needs CAP_SYSLOG (run as root)"
        }
        _ if refused => "; reading the kernel log needs CAP_SYSLOG here (run as root)",
        _ => "",
    };
    Err(format!(
        "the kernel log cannot be read: /dev/kmsg: {kmsg}; syslog(SYSLOG_ACTION_READ_ALL): \
         {syslog}{hint}"
    ))
}

/// Reads `/dev/kmsg` from its oldest record until `EAGAIN` (the newest), skipping records
/// the kernel overwrote meanwhile (`EPIPE`), within [`MAX_BYTES`] and [`MAX_RECORDS`].
fn read_kmsg() -> std::io::Result<KernelLog> {
    let mut f: File = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open("/dev/kmsg")?;
    // A record is at most 8 KiB (CONSOLE_EXT_LOG_MAX); a shorter buffer fails with EINVAL.
    let mut buf = vec![0u8; 8192];
    let mut log = KernelLog {
        source: "/dev/kmsg".into(),
        ..KernelLog::default()
    };
    let mut bytes = 0usize;
    loop {
        if bytes >= MAX_BYTES || log.records.len() >= MAX_RECORDS {
            log.truncated = true;
            break;
        }
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                bytes += n;
                let text = String::from_utf8_lossy(&buf[..n]);
                log.records.extend(parse_kmsg_record(&text));
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == ErrorKind::BrokenPipe => continue,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) if log.records.is_empty() => return Err(e),
            Err(_) => break,
        }
    }
    Ok(log)
}

/// Parses a log in any of the three shapes, one record per line (`/dev/kmsg` continuation
/// lines, which start with a space, are dropped).
pub fn parse(text: &str) -> Vec<Record> {
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with(' '))
        .map(parse_line)
        .collect()
}

/// One `/dev/kmsg` record: `PRI,SEQ,USEC,FLAGS[,…];message`, then ` KEY=value` lines.
fn parse_kmsg_record(text: &str) -> Option<Record> {
    let first = text.lines().next()?;
    Some(parse_line(first))
}

/// One line in any shape: `PRI,SEQ,USEC,FLAGS;text` (`/dev/kmsg`), `<PRI>[ SEC.USEC] text`
/// (`syslog(2)`), `[ SEC.USEC] text` (`dmesg`), or bare text.
pub fn parse_line(line: &str) -> Record {
    let line = line.trim_end_matches(['\n', '\r']);
    if let Some(r) = kmsg_line(line) {
        return r;
    }
    let mut level = None;
    let mut facility = None;
    let mut rest = line;
    if let Some(after) = rest.strip_prefix('<') {
        if let Some((pri, tail)) = after.split_once('>') {
            if let Ok(p) = pri.parse::<u32>() {
                level = Some((p & 7) as u8);
                facility = u8::try_from(p >> 3).ok();
                rest = tail;
            }
        }
    }
    let mut time_s = None;
    if let Some(after) = rest.strip_prefix('[') {
        if let Some((t, tail)) = after.split_once(']') {
            if let Ok(s) = t.trim().parse::<f64>() {
                time_s = Some(s);
                rest = tail.strip_prefix(' ').unwrap_or(tail);
            }
        }
    }
    Record {
        level,
        facility,
        seq: None,
        time_s,
        text: rest.to_string(),
    }
}

fn kmsg_line(line: &str) -> Option<Record> {
    let (head, text) = line.split_once(';')?;
    let mut fields = head.split(',');
    let pri: u32 = fields.next()?.parse().ok()?;
    let seq: u64 = fields.next()?.parse().ok()?;
    let usec: u64 = fields.next()?.parse().ok()?;
    Some(Record {
        level: Some((pri & 7) as u8),
        facility: u8::try_from(pri >> 3).ok(),
        seq: Some(seq),
        time_s: Some(usec as f64 / 1e6),
        text: text.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_three_shapes() {
        let k = parse_line("6,255,365702,-;clocksource: Switched to clocksource tsc");
        assert_eq!(k.level, Some(6));
        assert!(k.from_kernel());
        // `echo … > /dev/kmsg` from a process: facility 1 (user), level 4 by default.
        let forged =
            parse_line("12,256,365800,-;tsc: Marking TSC unstable due to clocksource watchdog");
        assert_eq!((forged.facility, forged.level), (Some(1), Some(4)));
        assert!(!forged.from_kernel());
        assert!(
            !parse_line("<14>[    1.0] clocksource: Switched to clocksource hpet").from_kernel()
        );
        assert_eq!(k.seq, Some(255));
        assert_eq!(k.time_s, Some(0.365702));
        assert_eq!(k.text, "clocksource: Switched to clocksource tsc");
        let s = parse_line("<4>[    1.250000] clocksource: Long readout interval");
        assert_eq!((s.level, s.seq, s.time_s), (Some(4), None, Some(1.25)));
        assert_eq!(s.text, "clocksource: Long readout interval");
        let d = parse_line("[    0.000000] tsc: Marking TSC unstable due to boot parameter");
        assert_eq!((d.level, d.time_s), (None, Some(0.0)));
        assert_eq!(d.text, "tsc: Marking TSC unstable due to boot parameter");
        let bare = parse_line("Switched to clocksource hpet; then more");
        assert_eq!(bare.text, "Switched to clocksource hpet; then more");
        assert_eq!((bare.level, bare.time_s), (None, None));
    }

    #[test]
    fn drops_continuation_lines_and_knows_a_log_from_boot() {
        let text = "5,0,0,-;Linux version 6.1.0\n SUBSYSTEM=cpu\n6,1,10,-;Command line: x\n\n";
        let log = KernelLog {
            source: "test".into(),
            records: parse(text),
            truncated: false,
        };
        assert_eq!(log.records.len(), 2);
        assert!(log.from_boot());
        let wrapped = KernelLog {
            records: parse("6,9000,99000000,-;clocksource: Switched to clocksource hpet"),
            ..log
        };
        assert!(!wrapped.from_boot());
        assert!(parse("").is_empty());
    }

    #[test]
    fn reads_this_machines_log_or_says_why_not() {
        match read_kernel_log() {
            Ok(log) => assert!(!log.records.is_empty()),
            Err(e) => assert!(e.contains("/dev/kmsg"), "{e}"),
        }
    }
}
