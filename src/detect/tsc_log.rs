//! The kernel's own TSC frequency, read where the kernel shows it: the kernel log (the lines
//! `arch/x86/kernel/tsc.c` prints at boot) and, on kernels that have it, sysfs's
//! `tsc_freq_khz`. Reading only; the lines are parsed by
//! [`parse_kernel_log`](super::verdict::parse_kernel_log), a pure function.
//!
//! `/dev/kmsg` hands out one record per `read` and blocks at the end of the buffer, so it is
//! opened `O_NONBLOCK` and read until `EAGAIN`, within a byte and record bound. Reading it
//! needs `CAP_SYSLOG` when `kernel.dmesg_restrict` is 1: the error says so.

use std::fs::OpenOptions;
use std::io::{ErrorKind, Read};
use std::os::unix::fs::OpenOptionsExt;

/// The log device.
pub const KMSG: &str = "/dev/kmsg";
/// Where some kernels expose `tsc_khz` (not upstream Linux).
pub const SYSFS_TSC_KHZ: &str = "/sys/devices/system/cpu/cpu0/tsc_freq_khz";
/// At most this many bytes of log text are kept.
const MAX_BYTES: usize = 4 << 20;
/// At most this many records are read.
const MAX_RECORDS: usize = 200_000;

/// The message of one `/dev/kmsg` record: the text after the first `;`, up to the first
/// newline (continuation lines that follow carry the record's dictionary, not its text).
pub fn kmsg_message(record: &str) -> &str {
    let text = record.split_once(';').map_or(record, |(_, m)| m);
    text.split('\n').next().unwrap_or("")
}

/// The kernel log's messages, one per line, or why they cannot be read.
pub fn read_kernel_log() -> Result<String, String> {
    let mut f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(KMSG)
        .map_err(|e| open_error(&e))?;
    let mut out = String::new();
    // A record is at most about 1 KiB of text plus its dictionary; a short buffer is EINVAL.
    let mut buf = vec![0u8; 16 * 1024];
    for _ in 0..MAX_RECORDS {
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                let record = String::from_utf8_lossy(&buf[..n]);
                out.push_str(kmsg_message(&record));
                out.push('\n');
                if out.len() >= MAX_BYTES {
                    break;
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
            // EPIPE: the record was overwritten before it was read; the next read goes on.
            Err(e) if e.kind() == ErrorKind::BrokenPipe => continue,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => {
                if out.is_empty() {
                    return Err(format!("reading {KMSG}: {e}"));
                }
                break;
            }
        }
    }
    Ok(out)
}

fn open_error(e: &std::io::Error) -> String {
    let restrict = std::fs::read_to_string("/proc/sys/kernel/dmesg_restrict")
        .ok()
        .map(|s| s.trim().to_string());
    match (e.kind(), restrict.as_deref()) {
        (ErrorKind::PermissionDenied, Some("1")) => format!(
            "{KMSG}: {e} (kernel.dmesg_restrict = 1: reading the kernel log needs CAP_SYSLOG; \
             run as root or with `sudo sysctl kernel.dmesg_restrict=0`)"
        ),
        (ErrorKind::PermissionDenied, _) => format!("{KMSG}: {e} (the kernel log needs root)"),
        (ErrorKind::NotFound, _) => format!("{KMSG}: {e} (no kernel log device here)"),
        _ => format!("{KMSG}: {e}"),
    }
}

/// `tsc_freq_khz` from sysfs, `Ok(None)` when this kernel has no such file.
pub fn sysfs_tsc_khz() -> Result<Option<u64>, String> {
    match std::fs::read_to_string(SYSFS_TSC_KHZ) {
        Ok(s) => s
            .trim()
            .parse::<u64>()
            .map(Some)
            .map_err(|e| format!("{SYSFS_TSC_KHZ}: {:?} is not a number: {e}", s.trim())),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("{SYSFS_TSC_KHZ}: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The record layout of Documentation/ABI/testing/dev-kmsg: `prio,seq,usec,flags;text`,
    /// then dictionary lines that start with a space.
    #[test]
    fn kmsg_records_give_their_message() {
        assert_eq!(
            kmsg_message("6,2,62,-;tsc: Detected 2600.000 MHz processor\n"),
            "tsc: Detected 2600.000 MHz processor"
        );
        assert_eq!(
            kmsg_message("6,9,1,-,caller=T1;a;b\n SUBSYSTEM=cpu\n"),
            "a;b"
        );
        assert_eq!(kmsg_message("no prefix"), "no prefix");
    }

    /// Never a panic, whoever runs it: the text or a reason.
    #[test]
    fn reading_the_log_returns_text_or_a_reason() {
        match read_kernel_log() {
            Ok(text) => assert!(text.len() <= MAX_BYTES + 64 * 1024),
            Err(why) => assert!(why.contains(KMSG), "{why}"),
        }
        let _ = sysfs_tsc_khz();
    }
}
